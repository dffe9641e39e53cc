//! HipApi's kernel compilation against a simulated runtime and hiprtc (issue 48, item 5):
//! the real call layer (`result.rs`) runs, only the libraries are stand-ins. The simulated
//! hiprtc keeps hiprtc's rules: without `--offload-arch` it cannot find the device's
//! architecture (it looks for the unversioned `libamdhip64.so`, which a runtime install
//! lacks) and the compile fails; a source that includes `<hip/hip_runtime.h>` fails (its
//! headers are built in).

use super::simulated::{SimHip, SimHiprtc as Compiler};
use super::*;
use crate::backends::cuda_hip::GpuApi;

const KERNEL: &str = "extern \"C\" __global__ void k(float* x) { x[0] = 1.0f; }";

#[test]
fn hiprtc_is_told_the_devices_architecture_and_compiles() {
    let compiler = Compiler::default();
    let api = HipApi::simulated(
        &SimHip::new(1 << 20),
        Box::new(compiler.clone()),
        vec![Some("gfx90a:sramecc+:xnack-".into())],
    );
    api.compile(KERNEL, "k")
        .expect("compiles for the device's architecture");
    let options = compiler.0.options.lock().unwrap().clone();
    assert!(
        options[0].contains(&"--offload-arch=gfx90a:sramecc+:xnack-".to_string()),
        "{options:?}"
    );
}

#[test]
fn without_an_architecture_or_with_the_runtime_header_the_compile_fails_naming_hiprtc() {
    let compiler = Compiler::default();
    let api = HipApi::simulated(
        &SimHip::new(1 << 20),
        Box::new(compiler.clone()),
        vec![None],
    );
    let e = api.compile(KERNEL, "k").unwrap_err().to_string();
    assert!(
        e.contains("hiprtcCompileProgram") && e.contains("--offload-arch"),
        "{e}"
    );
    let api = HipApi::simulated(
        &SimHip::new(1 << 20),
        Box::new(compiler),
        vec![Some("gfx1100".into())],
    );
    let with_header = format!("#include <hip/hip_runtime.h>\n{KERNEL}");
    let e = api.compile(&with_header, "k").unwrap_err().to_string();
    assert!(e.contains("hip_runtime.h"), "{e}");
}
