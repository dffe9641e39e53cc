//! Finding dpctl's `libDPCTLSyclInterface.so`: `LOCUS_SYCL_LIBRARY`, then the dynamic
//! linker's search path, then a Python installation of dpctl (virtual environments
//! named by `VIRTUAL_ENV` / `LOCUS_SYCL_VENV`, locus's default venv, and the
//! site-packages of `python3`). The failure message lists everything tried.

use crate::core::discovery::Unavailable;
use std::path::PathBuf;

use super::sys::DpctlApi;
use crate::backends::loading::dl_error;

const LIBRARY: &str = "libDPCTLSyclInterface.so";

/// The default virtual environment `scripts/test.sh` installs dpctl into.
pub(crate) fn default_venv() -> Option<PathBuf> {
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/locus/sycl-venv"))
}

fn site_packages_of(venv: PathBuf) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(venv.join("lib")) else {
        return vec![];
    };
    entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
        .map(|e| e.path().join("site-packages"))
        .collect()
}

fn python_site_packages() -> Vec<PathBuf> {
    let script = "import site, sysconfig; p = sysconfig.get_paths(); \
                  print('\\n'.join([p['purelib'], p['platlib'], site.getusersitepackages()] + site.getsitepackages()))";
    match std::process::Command::new("python3")
        .args(["-c", script])
        .output()
    {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(PathBuf::from)
            .collect(),
        _ => vec![],
    }
}

/// The virtual environments named by `VIRTUAL_ENV` (the active one) and
/// `LOCUS_SYCL_VENV`.
fn venvs() -> Vec<PathBuf> {
    let active = std::env::var_os("VIRTUAL_ENV").map(PathBuf::from);
    active
        .into_iter()
        .chain(crate::core::config::path("LOCUS_SYCL_VENV"))
        .collect()
}

fn candidates() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for venv in venvs() {
        dirs.extend(site_packages_of(venv));
    }
    if let Some(v) = default_venv() {
        dirs.extend(site_packages_of(v));
    }
    dirs.extend(python_site_packages());
    let mut seen = std::collections::BTreeSet::new();
    dirs.into_iter()
        .map(|d| d.join("dpctl").join(LIBRARY))
        .filter(|p| seen.insert(p.clone()))
        .collect()
}

/// Loads the dpctl C API, or says what was tried.
pub(crate) fn load() -> Result<(DpctlApi, String), Unavailable> {
    let mut tried = Vec::new();
    let attempt = |path: &std::ffi::OsStr, tried: &mut Vec<String>| {
        // SAFETY: loading dpctl's C API library runs the SYCL runtime's initialisers, as
        // dpctl itself does; all symbols are checked to exist (bindgen's require-all).
        match unsafe { DpctlApi::new(path) } {
            Ok(api) => Some(api),
            Err(e) => {
                tried.push(format!("{}: {}", path.to_string_lossy(), dl_error(&e)));
                None
            }
        }
    };
    if let Some(path) = crate::core::config::path("LOCUS_SYCL_LIBRARY") {
        if let Some(api) = attempt(path.as_os_str(), &mut tried) {
            return Ok((api, path.to_string_lossy().into_owned()));
        }
    } else {
        tried.push("LOCUS_SYCL_LIBRARY: not set".into());
    }
    for venv in venvs().into_iter().chain(default_venv()) {
        if !venv.exists() {
            tried.push(format!("{}: no such virtual environment", venv.display()));
        }
    }
    if let Some(api) = attempt(LIBRARY.as_ref(), &mut tried) {
        return Ok((api, format!("{LIBRARY} (linker search path)")));
    }
    for path in candidates() {
        if path.exists() {
            if let Some(api) = attempt(path.as_os_str(), &mut tried) {
                return Ok((api, path.to_string_lossy().into_owned()));
            }
        } else {
            tried.push(format!("{}: no such file", path.display()));
        }
    }
    Err(format!(
        "dpctl's SYCL C API ({LIBRARY}) could not be loaded; tried: {}. Install it with \
         `python3 -m venv ~/.cache/locus/sycl-venv && ~/.cache/locus/sycl-venv/bin/pip install dpctl intel-opencl-rt` \
         (or set LOCUS_SYCL_LIBRARY to the library's path)",
        tried.join("; ")
    ).into())
}
