//! Builds the OpenMP kernel library (`shaders/*_openmp.c` plus the runtime shim) as a
//! shared object that the OpenMP backend embeds and loads at run time: the locus binary
//! itself never links libgomp, so it starts on machines without it.

use std::env;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if env::var_os("CARGO_FEATURE_OPENMP").is_some() {
        build_openmp();
    }
}

fn build_openmp() {
    let sources = [
        "src/backends/openmp/shim.c",
        "shaders/vec_add_openmp.c",
        "shaders/saxpy_openmp.c",
        "shaders/jacobi_openmp.c",
        "shaders/sgemm_openmp.c",
        "shaders/f64_openmp.c",
        "shaders/stream/stream_openmp.c",
    ];
    for s in sources {
        println!("cargo:rerun-if-changed={s}");
    }
    let out =
        PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("liblocus_openmp.so");
    let compiler = cc::Build::new().get_compiler();
    let result = compiler
        .to_command()
        .args(["-shared", "-fPIC", "-O2", "-fopenmp", "-o"])
        .arg(&out)
        .args(sources)
        .output();
    let error = match result {
        Ok(o) if o.status.success() => String::new(),
        Ok(o) => String::from_utf8_lossy(&o.stderr)
            .lines()
            .take(3)
            .collect::<Vec<_>>()
            .join(" | "),
        Err(e) => format!("could not run the C compiler: {e}"),
    };
    if !error.is_empty() {
        println!(
            "cargo:warning=OpenMP kernels not built ({error}); openmp will report unavailable"
        );
        std::fs::write(&out, b"").expect("OUT_DIR is writable");
    }
    println!(
        "cargo:rustc-env=LOCUS_OPENMP_BUILD_ERROR={}",
        error.replace('\n', " ")
    );
}
