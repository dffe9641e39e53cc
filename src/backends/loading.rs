//! Loading vendor libraries at run time, with messages that say what was tried.

use libloading::Library;

use crate::core::discovery::Unavailable;

/// Renders a libloading error with its source: libloading's own text is only
/// "dlopen failed", the useful part (file not found, missing symbol) is the source.
pub fn dl_error(e: &libloading::Error) -> String {
    use std::error::Error as _;
    match e.source() {
        Some(source) => format!("{e}: {source}"),
        None => e.to_string(),
    }
}

/// Tries each library name in turn; returns the first that loads, or every failure.
#[allow(dead_code)] // used by the HIP backend (feature)
pub fn load_first(names: &[&str]) -> Result<(Library, String), Unavailable> {
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
    Err(failures.join("; ").into())
}
