//! Probes for the technologies that have no backend in this build yet (CUDA, HIP, SYCL):
//! they load the vendor library at run time, if present, and say precisely why there is
//! no device, so `locus info` can tell the user what to install.

use libloading::Library;

/// Renders a libloading error with its source: libloading's own text is only
/// "dlopen failed", the useful part (file not found, missing symbol) is the source.
pub(crate) fn dl_error(e: &libloading::Error) -> String {
    use std::error::Error as _;
    match e.source() {
        Some(source) => format!("{e}: {source}"),
        None => e.to_string(),
    }
}

/// Tries each library name in turn; returns the first that loads, or every failure.
pub(crate) fn load_first(names: &[&str]) -> Result<(Library, String), String> {
    let mut failures = Vec::new();
    for name in names {
        // SAFETY: loading a vendor runtime runs its initialisers; these are the
        // documented entry libraries of each runtime and are loaded as the vendor
        // intends (no symbols are called here).
        match unsafe { Library::new(name) } {
            Ok(lib) => return Ok((lib, (*name).to_string())),
            Err(e) => {
                let text = dl_error(&e);
                failures.push(if text.contains(name) {
                    text
                } else {
                    format!("{name}: {text}")
                });
            }
        }
    }
    Err(failures.join("; "))
}

pub(crate) fn cuda() -> String {
    match load_first(&["libcuda.so.1", "libcuda.so"]) {
        Err(why) => format!(
            "the CUDA driver library could not be loaded ({why}); install the NVIDIA driver on a machine with an NVIDIA GPU"
        ),
        Ok((lib, name)) => {
            type CuInit = unsafe extern "C" fn(u32) -> i32;
            type CuCount = unsafe extern "C" fn(*mut i32) -> i32;
            // SAFETY: `cuInit` and `cuDeviceGetCount` have these C signatures in every
            // CUDA driver since 2.0.
            let count = unsafe {
                let init = lib.get::<CuInit>(b"cuInit\0");
                let get = lib.get::<CuCount>(b"cuDeviceGetCount\0");
                match (init, get) {
                    (Ok(init), Ok(get)) => {
                        let rc = init(0);
                        let mut n = 0;
                        if rc == 0 {
                            get(&mut n);
                        }
                        format!("cuInit returned {rc}, {n} device(s)")
                    }
                    _ => "symbols cuInit / cuDeviceGetCount missing".into(),
                }
            };
            format!("{name} loaded ({count}), but this build of locus has no CUDA backend yet")
        }
    }
}

pub(crate) fn hip() -> String {
    match load_first(&["libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"]) {
        Err(why) => format!(
            "the HIP runtime could not be loaded ({why}); install ROCm's HIP runtime (e.g. apt-get install libamdhip64-5) on a machine with an AMD GPU"
        ),
        Ok((lib, name)) => {
            type HipCount = unsafe extern "C" fn(*mut i32) -> i32;
            // SAFETY: `hipGetDeviceCount(int*)` has this signature in every HIP release.
            let detail = unsafe {
                match lib.get::<HipCount>(b"hipGetDeviceCount\0") {
                    Ok(get) => {
                        let mut n = 0;
                        let rc = get(&mut n);
                        match rc {
                            0 => format!("hipGetDeviceCount found {n} device(s)"),
                            100 => "hipGetDeviceCount returned 100 (hipErrorNoDevice): no AMD GPU".into(),
                            rc => format!("hipGetDeviceCount returned {rc}"),
                        }
                    }
                    Err(e) => format!("hipGetDeviceCount missing: {}", dl_error(&e)),
                }
            };
            format!("{name} loaded; {detail}; this build of locus has no HIP backend yet")
        }
    }
}
