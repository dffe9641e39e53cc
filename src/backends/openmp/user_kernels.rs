//! The user's own OpenMP kernels: C source compiled at run time with the system's C
//! compiler and `-fopenmp` into a shared object, cached on disk by the hash of the
//! source and the compiler command, and loaded like locus's own kernel library (what
//! NVRTC is for CUDA). The entry follows the codelet convention of
//! `shaders/vec_add_openmp.c`: `int locus_omp_k_<entry>(void **args, size_t gx, size_t gy,
//! int device)`.
//!
//! The compiler is `$LOCUS_OPENMP_CC`, else `$CC`, else `cc`; the cache directory is
//! `$LOCUS_CACHE_DIR/openmp`, else `$XDG_CACHE_HOME/locus/openmp`, else
//! `~/.cache/locus/openmp`, else the temporary directory.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use super::*;

/// Libraries loaded so far, by source hash (kept for the life of the process: their
/// functions may be running).
fn loaded() -> &'static Mutex<HashMap<u64, Arc<libloading::Library>>> {
    static LOADED: OnceLock<Mutex<HashMap<u64, Arc<libloading::Library>>>> = OnceLock::new();
    LOADED.get_or_init(Default::default)
}

fn compiler() -> String {
    let given = |v: Option<String>| v.filter(|s| !s.trim().is_empty());
    given(crate::core::config::text("LOCUS_OPENMP_CC"))
        .or_else(|| given(std::env::var("CC").ok()))
        .unwrap_or_else(|| "cc".into())
}

fn cache_dir() -> PathBuf {
    crate::core::cache::cache_dir().join("openmp")
}

const FLAGS: [&str; 5] = ["-shared", "-fPIC", "-O2", "-fopenmp", "-xc"];

/// Flags tried in turn when an offloading GCC's link fails for a kernel of the initial
/// device.
/// A GCC configured for nvptx and amdgcn offload may link a `target` region only with
/// `-fno-lto` ("could not run lto-wrapper"; `docs/design-measurements.md`).
const HOST_ONLY_RETRIES: [&[&str]; 2] = [&["-fno-lto"], &["-foffload=disable"]];

/// The entry `locus_omp_k_<entry>` of `source`, compiled (once per source and compiler)
/// and loaded. The compiler's diagnostics are the error when it fails. `host_only`: the
/// kernel runs on the initial device, where `target` regions run on the host whatever was
/// compiled for offload devices.
pub(super) fn entry_of(
    location: Location,
    source: &str,
    entry: &str,
    host_only: bool,
) -> Result<KernelEntry> {
    let cc = compiler();
    let key = crate::core::launch::cache_key(source, &format!("{cc} {}", FLAGS.join(" ")));
    let library = {
        let mut map = loaded().lock().unwrap_or_else(|e| e.into_inner());
        match map.get(&key) {
            Some(lib) => Arc::clone(lib),
            None => {
                let lib = Arc::new(build(location, &cc, key, source, host_only)?);
                map.insert(key, Arc::clone(&lib));
                lib
            }
        }
    };
    let symbol = format!("locus_omp_k_{entry}\0");
    // SAFETY: the user's source declares the entry with the documented convention; a
    // wrong signature there is the user's contract, as with any C kernel.
    unsafe { library.get::<KernelEntry>(symbol.as_bytes()).map(|f| *f) }.map_err(|e| {
        Error::Invalid(format!(
            "{location}: the OpenMP source compiled, but has no `int locus_omp_k_{entry}(void **args, size_t gx, size_t gy, int dev)`: {e}"
        ))
    })
}

/// True when a failed link is the offloading toolchain's (lto-wrapper, mkoffload), not
/// the source's.
fn offload_link_failed(stderr: &[u8]) -> bool {
    let text = String::from_utf8_lossy(stderr);
    text.contains("lto-wrapper") || text.contains("mkoffload")
}

fn build(
    location: Location,
    cc: &str,
    key: u64,
    source: &str,
    host_only: bool,
) -> Result<libloading::Library> {
    let dir = cache_dir();
    let object = dir.join(format!("{key:016x}.so"));
    if !object.exists() {
        std::fs::create_dir_all(&dir).map_err(|e| {
            Error::Invalid(format!(
                "{location}: cannot make the OpenMP kernel cache {}: {e}; set LOCUS_CACHE_DIR to a writable directory",
                dir.display()
            ))
        })?;
        // Built under a name of its own, then renamed: a concurrent build of the same
        // source never loads a half-written object.
        let partial = dir.join(format!("{key:016x}.{}.tmp.so", std::process::id()));
        let source_file = dir.join(format!("{key:016x}.c"));
        std::fs::write(&source_file, source).map_err(|e| {
            Error::Invalid(format!(
                "{location}: cannot write {}: {e}",
                source_file.display()
            ))
        })?;
        let compile = |extra: &[&str]| {
            std::process::Command::new(cc)
                .args(FLAGS)
                .args(extra)
                .arg(&source_file)
                .arg("-o")
                .arg(&partial)
                .output()
                .map_err(|e| Error::Backend {
                    location,
                    call: "the C compiler (-fopenmp)",
                    message: format!("cannot run `{cc}`: {e}"),
                    hint: "install a C compiler with OpenMP (gcc), or set LOCUS_OPENMP_CC".into(),
                })
        };
        let mut output = compile(&[])?;
        // A GCC built for offloading (nvptx, amdgcn) links `target` regions through
        // lto-wrapper and mkoffload; where that toolchain is broken (a CUDA image's
        // /opt/gcc: "could not run lto-wrapper") and the kernel is for the initial
        // device (its target regions run on the host): build it without LTO (which
        // carries the offload code), or without offload code.
        for extra in HOST_ONLY_RETRIES {
            if output.status.success() || !host_only || !offload_link_failed(&output.stderr) {
                break;
            }
            output = compile(extra)?;
        }
        if !output.status.success() {
            let _ = std::fs::remove_file(&partial);
            return Err(Error::Backend {
                location,
                call: "the C compiler (-fopenmp)",
                message: String::from_utf8_lossy(&output.stderr).trim().to_string(),
                hint: format!(
                    "fix the OpenMP C source (`{cc} {}` said the above)",
                    FLAGS.join(" ")
                ),
            });
        }
        std::fs::rename(&partial, &object).map_err(|e| {
            Error::Invalid(format!(
                "{location}: cannot place {}: {e}",
                object.display()
            ))
        })?;
    }
    // SAFETY: loading runs the object's initialisers; it is code the user asked us to
    // compile from their own source, as NVRTC output is loaded for CUDA.
    unsafe { libloading::Library::new(&object) }.map_err(|e| Error::Backend {
        location,
        call: "dlopen",
        message: format!("{}: {e}", object.display()),
        hint: "the object is in the kernel cache; delete it to rebuild".into(),
    })
}
