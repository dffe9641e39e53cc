//! Where locus keeps what it learns about a machine between runs (compiled OpenMP
//! kernels, the transfer planner's calibration).

use std::path::PathBuf;

/// The cache directory: `$LOCUS_CACHE_DIR`, else `$XDG_CACHE_HOME/locus`, else
/// `~/.cache/locus`, else `locus` in the temporary directory.
pub fn cache_dir() -> PathBuf {
    let env = |v: &str| {
        std::env::var_os(v)
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
    };
    super::config::path("LOCUS_CACHE_DIR")
        .or_else(|| env("XDG_CACHE_HOME").map(|d| d.join("locus")))
        .or_else(|| env("HOME").map(|d| d.join(".cache").join("locus")))
        .unwrap_or_else(|| std::env::temp_dir().join("locus"))
}
