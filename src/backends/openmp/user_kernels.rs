//! The user's own OpenMP kernels: C source compiled at run time with the system's C
//! compiler and `-fopenmp` into a shared object, cached on disk by the hash of the
//! source and the compiler command, and loaded like locus's own kernel library (what
//! NVRTC is for CUDA). The entry follows the codelet convention of
//! `shaders/vec_add_openmp.c`: `int locus_omp_k_<entry>(void **args, size_t gx, size_t gy,
//! int device)`.
//!
//! The compiler is `$LOCUS_OPENMP_CC`, else `$CC`, else `cc`; the cache directory is
//! `$LOCUS_CACHE_DIR/openmp`, else `$XDG_CACHE_HOME/locus/openmp`, else
//! `~/.cache/locus/openmp`, else `locus-<uid>/openmp` in the temporary directory; it is
//! made `0700` and checked, and an object is loaded only when this user built it
//! (`core::cache`).

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use super::*;
use crate::core::cache;

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

/// Runs `compile` (with the host-only retries where the offloading toolchain's link
/// fails) into `partial`, made readable and executable by this user alone.
fn build_object(
    location: Location,
    cc: &str,
    host_only: bool,
    compile: impl Fn(&[&str]) -> Result<std::process::Output>,
    partial: &Path,
) -> Result<()> {
    let mut output = compile(&[])?;
    // A GCC built for offloading (nvptx, amdgcn) links `target` regions through
    // lto-wrapper and mkoffload; where that toolchain is broken (a CUDA image's
    // /opt/gcc: "could not run lto-wrapper") and the kernel is for the initial device
    // (its target regions run on the host): build it without LTO (which carries the
    // offload code), or without offload code.
    for extra in HOST_ONLY_RETRIES {
        if output.status.success() || !host_only || !offload_link_failed(&output.stderr) {
            break;
        }
        output = compile(extra)?;
    }
    if !output.status.success() {
        let _ = std::fs::remove_file(partial);
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
    // The compiler made it under the process's umask (0775 under 002): this user's alone.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(partial, std::fs::Permissions::from_mode(0o700)).map_err(|e| {
        Error::Invalid(format!(
            "{location}: cannot set the mode of {}: {e}",
            partial.display()
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
    let what = format!("{location}: the OpenMP kernel cache");
    // Made 0700 and checked: only this user can place a file here (core::cache).
    let dir = cache::private_dir("openmp", &what)?;
    let object = dir.join(format!("{key:016x}.so"));
    let cached = match cache::trusted_file(&object, &what) {
        Ok(cached) => cached,
        // A link or a file this user did not build under the object's name: removed
        // (the directory is this user's) and built anew, never loaded.
        Err(refused) => {
            std::fs::remove_file(&object).map_err(|_| refused)?;
            false
        }
    };
    if !cached {
        // The source and the object are written under names of their own (never through
        // a link), then the object is renamed into place: a concurrent build of the same
        // source never loads a half-written object.
        let source_file = cache::fresh_sibling(&dir.join(format!("{key:016x}")), "c");
        let partial = cache::fresh_sibling(&object, "tmp.so");
        cache::write_new(&source_file, source.as_bytes()).map_err(|e| {
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
        let built = build_object(location, cc, host_only, compile, &partial);
        // The source is kept beside its object for reading (renamed: a link planted
        // under `<key>.c` is replaced, not written through).
        let _ = std::fs::rename(&source_file, dir.join(format!("{key:016x}.c")));
        built?;
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
