//! MPI jobs for the MPI suites: a test starts its own binary under `mpirun` (loopback
//! only, Open MPI's shared-memory transport, every job bounded in time), and each rank
//! runs the test's body.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Inside an MPI job (the child runs), or the parent that starts one.
pub fn inside() -> bool {
    std::env::var_os("OMPI_COMM_WORLD_SIZE").is_some() || std::env::var_os("PMI_SIZE").is_some()
}

/// Runs this test's own binary under `mpirun -np ranks` (only the named test); its
/// output, and whether it succeeded, within a time limit.
pub fn launch(name: &str, ranks: usize, env: &[(&str, &str)]) -> (bool, String) {
    launch_with(name, ranks, env, &[])
}

/// [`launch`] with more `mpirun` options.
pub fn launch_with(
    name: &str,
    ranks: usize,
    env: &[(&str, &str)],
    options: &[&str],
) -> (bool, String) {
    let exe = std::env::current_exe().expect("the test binary");
    let mut cmd = Command::new("mpirun");
    cmd.args([
        "--allow-run-as-root",
        "--oversubscribe",
        "--mca",
        "btl",
        "self,vader",
    ])
    .args(options)
    .arg("-np")
    .arg(ranks.to_string())
    .arg(exe)
    .args(["--exact", name, "--nocapture", "--test-threads=1"])
    .env("LOCUS_MPI_TIMEOUT_S", "30")
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .spawn()
        .expect("mpirun (install Open MPI: apt-get install openmpi-bin libopenmpi-dev)");
    let start = Instant::now();
    loop {
        if let Some(_status) = child.try_wait().expect("wait for mpirun") {
            break;
        }
        if start.elapsed() > Duration::from_secs(180) {
            let _ = child.kill();
            let out = child.wait_with_output().expect("mpirun output");
            panic!(
                "mpirun ran past 180 s and was killed:\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("mpirun output");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// A test body run on every rank of an `n`-rank job: the test starts its own binary
/// under `mpirun`, and each rank runs `body` with the world communicator.
#[macro_export]
macro_rules! mpi_test {
    ($name:ident, $ranks:expr, $body:expr) => {
        $crate::mpi_test!($name, $ranks, &[], $body);
    };
    ($name:ident, $ranks:expr, $env:expr, $body:expr) => {
        #[test]
        fn $name() {
            if $crate::common::mpi_job::inside() {
                let mpi = locus::mpi::Mpi::init().expect("MPI");
                let world = mpi.world().expect("world");
                let body: fn(&locus::mpi::Comm) = $body;
                body(&world);
                return;
            }
            let (ok, out) = $crate::common::mpi_job::launch(stringify!($name), $ranks, $env);
            println!("{out}");
            assert!(ok, "the MPI job failed:\n{out}");
        }
    };
}
