//! Memory shared between processes on one node (issue 45, item 4), as two programs use
//! it: the first makes shared host memory and writes it, sends the handle's text to a
//! second process (this test binary started again), which opens it, checks the bytes in
//! place and writes its answer there; the first reads the answer without any copy
//! between them. Bad handles are errors naming what is wrong.

mod common;

use std::process::Command;

use locus::{IpcHandle, Location, Memory};

const N: usize = 1 << 20;

/// The second process: opens the handle in `LOCUS_IPC_HANDLE`, checks, answers.
fn child(text: &str) {
    let handle = IpcHandle::parse(text).expect("the handle's text parses");
    let shared = Memory::open_ipc(&handle).expect("the handle opens");
    assert_eq!(shared.len(), N);
    let mut got = vec![0u8; N];
    shared.read(0, &mut got).unwrap();
    assert!(
        got.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8),
        "the maker's bytes"
    );
    shared.fill(0..N, &[7]).unwrap();
    println!("child answered");
}

#[test]
fn a_second_process_uses_shared_host_memory_in_place() {
    if let Ok(text) = std::env::var("LOCUS_IPC_HANDLE") {
        child(&text);
        return;
    }
    // The host, OpenMP's initial device (its memory is the host's), a SYCL device whose
    // kernels use plain host memory (system USM; Intel's CPU device), OpenCL CPU
    // devices (a buffer over the shared pages), and CUDA and HIP devices (device memory
    // through the driver's IPC handles, where a GPU is present).
    for at in [
        "host", "openmp:0", "sycl:0", "opencl:0", "opencl:1", "opencl:2", "cuda:0", "hip:0",
    ]
    .into_iter()
    .filter_map(common::location)
    {
        let info = locus::registry().device(at).unwrap().info();
        if at.technology() == locus::Technology::OpenCl && info.kind != "cpu" {
            // A GPU's OpenCL buffers are its memory, not the host's pages.
            eprintln!(
                "SKIPPED: {at} ({}) shares no host memory in place",
                info.name
            );
            continue;
        }
        let shared = Memory::new_shared(at, N).unwrap();
        assert_eq!(shared.location(), at);
        let bytes: Vec<u8> = (0..N).map(|i| (i % 251) as u8).collect();
        shared.write(0, &bytes).unwrap();
        let text = shared.ipc_handle().unwrap().to_string();
        let out = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "a_second_process_uses_shared_host_memory_in_place",
                "--nocapture",
            ])
            .env("LOCUS_IPC_HANDLE", &text)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("child answered"),
            "{at}: the second process failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut got = vec![0u8; N];
        shared.read(0, &mut got).unwrap();
        assert!(
            got.iter().all(|&b| b == 7),
            "{at}: the second process's answer is not in place"
        );
    }
}

/// A process that makes shared memory, prints its handle and ends without freeing it.
#[test]
fn a_handle_of_a_process_that_ended_is_an_error_saying_so() {
    if std::env::var("LOCUS_IPC_MAKE_AND_EXIT").is_ok() {
        let shared = Memory::new_shared(Location::Host, 4096).unwrap();
        println!("handle: {}", shared.ipc_handle().unwrap());
        std::mem::forget(shared);
        std::process::exit(0); // no drop: the name stays, its process is gone
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_handle_of_a_process_that_ended_is_an_error_saying_so",
            "--nocapture",
        ])
        .env("LOCUS_IPC_MAKE_AND_EXIT", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let text = stdout
        .lines()
        .find_map(|l| l.strip_prefix("handle: "))
        .unwrap_or_else(|| panic!("no handle printed: {stdout}"));
    let handle = IpcHandle::parse(text).unwrap();
    let e = Memory::open_ipc(&handle).unwrap_err().to_string();
    assert!(e.contains("has ended") && e.contains(&handle.name), "{e}");
    // A normal exit takes its names with it (the code before left them in /dev/shm).
    let leftover = format!("/dev/shm{}", handle.name);
    let left = std::path::Path::new(&leftover).exists();
    let _ = std::fs::remove_file(&leftover);
    assert!(!left, "{leftover} outlived its maker's normal exit");
}

/// Starts this test binary again running `test` with `var` set; its output.
fn again(test: &str, var: &str) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture"])
        .env(var, "1")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// A maker killed (SIGKILL: no exit handler runs) leaves its object; the next process of
/// the same user that makes shared memory removes it (the code before kept every one:
/// 5 killed makers left 15 objects).
#[test]
fn objects_of_killed_makers_are_reclaimed() {
    use std::io::BufRead;
    const TEST: &str = "objects_of_killed_makers_are_reclaimed";
    if std::env::var("LOCUS_IPC_MAKE_AND_HANG").is_ok() {
        let shared: Vec<Memory> = (0..3)
            .map(|_| Memory::new_shared(Location::Host, 4096).unwrap())
            .collect();
        for s in &shared {
            println!("handle: {}", s.ipc_handle().unwrap());
        }
        println!("ready");
        std::thread::sleep(std::time::Duration::from_secs(600));
        return;
    }
    if std::env::var("LOCUS_IPC_MAKE_ONE").is_ok() {
        drop(Memory::new_shared(Location::Host, 4096).unwrap());
        return;
    }
    let mut maker = again(TEST, "LOCUS_IPC_MAKE_AND_HANG");
    let mut names = Vec::new();
    for line in std::io::BufReader::new(maker.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        if let Some(text) = line.strip_prefix("handle: ") {
            names.push(IpcHandle::parse(text).unwrap().name);
        }
        if line == "ready" {
            break;
        }
    }
    maker.kill().unwrap();
    maker.wait().unwrap();
    assert_eq!(names.len(), 3);
    let path = |n: &str| format!("/dev/shm{n}");
    assert!(
        names
            .iter()
            .all(|n| std::path::Path::new(&path(n)).exists()),
        "killed: left"
    );
    // Another program of this user makes shared memory: the leftovers go.
    let status = again(TEST, "LOCUS_IPC_MAKE_ONE").wait().unwrap();
    assert!(status.success());
    let left: Vec<&String> = names
        .iter()
        .filter(|n| std::path::Path::new(&path(n)).exists())
        .collect();
    for n in &left {
        let _ = std::fs::remove_file(path(n));
    }
    assert!(left.is_empty(), "not reclaimed: {left:?}");
}

/// Objects named as a process of the same ID would have named them (a reused PID's
/// leftovers) do not stop this process from making its own (the code before failed
/// with "File exists").
#[test]
fn leftovers_under_this_process_id_do_not_collide() {
    let pid = std::process::id();
    let planted: Vec<String> = (0..8)
        .map(|n| format!("/dev/shm/locus-{pid}-{n}"))
        .collect();
    for p in &planted {
        std::fs::write(p, b"left by an earlier process").unwrap();
    }
    let made: Vec<_> = (0..8)
        .map(|_| Memory::new_shared(Location::Host, 64))
        .collect();
    for p in &planted {
        let _ = std::fs::remove_file(p);
    }
    for m in made {
        m.unwrap();
    }
}

/// Shared memory beyond `/dev/shm`'s free space is an out-of-memory error when it is
/// made (the code before made a sparse object of any size, and the first write past the
/// free space killed the process with SIGBUS). In a private mount namespace with a 64 MiB
/// `/dev/shm` (Docker's default) where this user can make one; 16 TiB everywhere.
#[test]
fn shared_memory_past_dev_shm_is_refused_when_made() {
    const TEST: &str = "shared_memory_past_dev_shm_is_refused_when_made";
    let refused = |bytes: usize| {
        let e = Memory::new_shared(Location::Host, bytes).unwrap_err();
        assert!(
            e.is_out_of_memory() && e.to_string().contains("/dev/shm"),
            "{e}"
        );
    };
    if std::env::var("LOCUS_IPC_SMALL_SHM").is_ok() {
        refused(128 << 20);
        let fits = Memory::new_shared(Location::Host, 32 << 20).unwrap();
        fits.fill(0..32 << 20, &[1]).unwrap();
        println!("small /dev/shm: refused 128 MiB, wrote 32 MiB");
        return;
    }
    refused(16 << 40);
    let exe = std::env::current_exe().unwrap();
    let script = format!(
        "mount -t tmpfs -o size=64m tmpfs /dev/shm && exec '{}' --exact {TEST} --nocapture",
        exe.display()
    );
    let out = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c", &script])
        .env("LOCUS_IPC_SMALL_SHM", "1")
        .output();
    match out {
        Ok(out) if String::from_utf8_lossy(&out.stdout).contains("small /dev/shm") => {
            assert!(out.status.success());
        }
        Ok(out) if out.status.code().is_some() && !out.stdout.is_empty() => panic!(
            "in a 64 MiB /dev/shm: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
        Ok(out) => println!(
            "SKIPPED: a private 64 MiB /dev/shm (unshare --mount: {})",
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(e) => println!("SKIPPED: a private 64 MiB /dev/shm (no unshare: {e})"),
    }
}

#[test]
fn bad_handles_and_unshared_memory_are_clear_errors() {
    // Memory not made shareable.
    let plain = Memory::new(Location::Host, 64).unwrap();
    let e = plain.ipc_handle().unwrap_err().to_string();
    assert!(
        e.contains("host") && e.contains("Memory::new_shared"),
        "{e}"
    );
    // Text that is no handle.
    let e = IpcHandle::parse("hello").unwrap_err().to_string();
    assert!(e.contains("not a locus IPC handle"), "{e}");
    // A handle of another node.
    let shared = Memory::new_shared(Location::Host, 64).unwrap();
    let mut elsewhere = shared.ipc_handle().unwrap();
    elsewhere.node = "some-other-node".into();
    let e = Memory::open_ipc(&elsewhere).unwrap_err().to_string();
    assert!(
        e.contains("some-other-node") && e.contains("does not cross nodes"),
        "{e}"
    );
    // A handle of memory its maker freed.
    let handle = shared.ipc_handle().unwrap();
    assert_eq!(IpcHandle::parse(&handle.to_string()).unwrap(), handle);
    drop(shared);
    let e = Memory::open_ipc(&handle).unwrap_err().to_string();
    assert!(e.contains("freed it or ended"), "{e}");
    // A location whose memory is not host memory (WebGPU's buffers are the runtime's).
    if let Some(webgpu) = common::location("webgpu:0") {
        let e = Memory::new_shared(webgpu, 64).unwrap_err().to_string();
        assert!(
            e.contains("webgpu:0 does not") && e.contains("Memory::new_shared(Location::Host"),
            "{e}"
        );
    }
}
