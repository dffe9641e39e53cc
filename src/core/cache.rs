//! Where locus keeps what it learns about a machine between runs (compiled OpenMP
//! kernels, the transfer planner's calibration), and the checks that keep another user
//! from planting anything there.
//!
//! The cache holds code locus loads (OpenMP kernels built into shared objects), so a
//! directory another user can write to would let that user run code as this one. Every
//! directory locus writes or loads from is made `0700` and checked before use, as
//! OpenSSH checks `~/.ssh`: it must be a real directory (not a link), owned by this user
//! (or root), and not writable by group or others. Files are loaded only when they are
//! regular files (not links) owned by this user and writable by nobody else, and written
//! under a fresh name (`O_CREAT | O_EXCL`, which never follows a link) before being
//! renamed into place.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::error::{Error, Result};

/// The cache directory: `$LOCUS_CACHE_DIR`, else `$XDG_CACHE_HOME/locus`, else
/// `~/.cache/locus`, else `locus-<uid>` in the temporary directory (a service without
/// a home: the name is per user, and [`private_dir`] refuses it when another user made
/// it first).
pub fn cache_dir() -> PathBuf {
    let env = |v: &str| {
        std::env::var_os(v)
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
    };
    cache_dir_from(super::config::path("LOCUS_CACHE_DIR"), env)
}

/// [`cache_dir`] from `LOCUS_CACHE_DIR`'s value and the other variables `env` gives.
fn cache_dir_from(chosen: Option<PathBuf>, env: impl Fn(&str) -> Option<PathBuf>) -> PathBuf {
    chosen
        .or_else(|| env("XDG_CACHE_HOME").map(|d| d.join("locus")))
        .or_else(|| env("HOME").map(|d| d.join(".cache").join("locus")))
        .unwrap_or_else(|| std::env::temp_dir().join(format!("locus-{}", euid())))
}

/// `sub` under the cache directory (the cache directory itself when `sub` is empty),
/// made `0700` where missing and checked: both it and the cache directory are real
/// directories owned by this user (or root) that no group or other user can write to.
/// A directory of this user's that is group- or world-writable (made under a umask of
/// `002`) is narrowed to `0700` first; files already in it are judged one by one by
/// [`trusted_file`]. `what` names the caller's use in the error.
pub fn private_dir(sub: &str, what: &str) -> Result<PathBuf> {
    let root = cache_dir();
    let dir = if sub.is_empty() {
        root.clone()
    } else {
        root.join(sub)
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .map_err(|e| {
            Error::Invalid(format!(
                "{what}: cannot make the cache directory {}: {e}; set LOCUS_CACHE_DIR to a writable directory of your own",
                dir.display()
            ))
        })?;
    for d in [&root, &dir] {
        narrow_if_mine(d);
        check_dir(d, what)?;
    }
    Ok(dir)
}

/// Refuses `dir` unless it is a directory (not a link) owned by this user or root and
/// not writable by group or others.
pub fn check_dir(dir: &Path, what: &str) -> Result<()> {
    let meta = std::fs::symlink_metadata(dir).map_err(|e| {
        Error::Invalid(format!(
            "{what}: cannot inspect the cache directory {}: {e}",
            dir.display()
        ))
    })?;
    match problem_with(&meta, true) {
        None => Ok(()),
        Some(p) => Err(Error::Invalid(format!(
            "{what}: refusing the cache directory {}: it {p}, so another user could place code or data there; \
             remove it, or set LOCUS_CACHE_DIR to a directory of your own (mode 0700)",
            dir.display()
        ))),
    }
}

/// `Ok(true)` when `path` is a regular file (not a link) owned by this user (or root)
/// and writable by nobody else: safe to load. `Ok(false)` when nothing is there. An
/// error names whatever else is there.
pub fn trusted_file(path: &Path, what: &str) -> Result<bool> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => {
            return Err(Error::Invalid(format!(
                "{what}: cannot inspect {}: {e}",
                path.display()
            )))
        }
    };
    match problem_with(&meta, false) {
        None => Ok(true),
        Some(p) => Err(Error::Invalid(format!(
            "{what}: refusing {}: it {p}, so this user did not build it; delete it and run again",
            path.display()
        ))),
    }
}

/// Writes `bytes` to a new file `path` that must not exist (`O_CREAT | O_EXCL |
/// O_NOFOLLOW`, mode 0600): a link planted under the name fails the call instead of
/// redirecting the write.
pub fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file: File = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    file.write_all(bytes)
}

/// A name beside `path` no other writer of this process or another uses: `<path>.<pid>.<n>.<ext>`.
pub fn fresh_sibling(path: &Path, ext: &str) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{}.{n}.{ext}", std::process::id()));
    path.with_file_name(name)
}

/// Takes group and other write permission off `dir` when it is a real directory of
/// this user's (best effort: [`check_dir`] decides afterwards).
fn narrow_if_mine(dir: &Path) {
    if let Ok(meta) = std::fs::symlink_metadata(dir) {
        if meta.is_dir() && meta.uid() == euid() && meta.permissions().mode() & 0o022 != 0 {
            let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
        }
    }
}

/// Why what `meta` describes is not to be trusted as a directory (`dir`) or a regular
/// file of this user's alone; `None` when it is.
fn problem_with(meta: &std::fs::Metadata, dir: bool) -> Option<String> {
    if meta.file_type().is_symlink() {
        Some("is a symbolic link".to_string())
    } else if dir && !meta.is_dir() {
        Some("is not a directory".to_string())
    } else if !dir && !meta.is_file() {
        Some("is not a regular file".to_string())
    } else {
        ownership_problem(meta)
    }
}

fn ownership_problem(meta: &std::fs::Metadata) -> Option<String> {
    let me = euid();
    if meta.uid() != me && meta.uid() != 0 {
        return Some(format!(
            "belongs to user {} (this is user {me})",
            meta.uid()
        ));
    }
    let mode = meta.permissions().mode() & 0o777;
    (mode & 0o022 != 0).then(|| format!("is writable by group or others (mode {mode:o})"))
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("locus-cache-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::DirBuilder::new().mode(0o700).create(&dir).unwrap();
        dir
    }

    #[test]
    fn the_fallback_without_a_home_is_per_user() {
        let d = cache_dir_from(None, |_| None);
        assert_eq!(d, std::env::temp_dir().join(format!("locus-{}", euid())));
        let home = cache_dir_from(None, |v| (v == "HOME").then(|| PathBuf::from("/h")));
        assert_eq!(home, PathBuf::from("/h/.cache/locus"));
    }

    #[test]
    fn directories_others_can_write_or_links_are_refused() {
        let base = scratch("dirs");
        check_dir(&base, "test").unwrap();
        let open = base.join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = check_dir(&open, "test").unwrap_err().to_string();
        assert!(
            e.contains("writable by group or others") && e.contains("LOCUS_CACHE_DIR"),
            "{e}"
        );
        let link = base.join("link");
        std::os::unix::fs::symlink(&base, &link).unwrap();
        let e = check_dir(&link, "test").unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_directory_of_mine_made_under_a_loose_umask_is_narrowed() {
        let base = scratch("narrow");
        let loose = base.join("loose");
        std::fs::create_dir(&loose).unwrap();
        std::fs::set_permissions(&loose, std::fs::Permissions::from_mode(0o775)).unwrap();
        narrow_if_mine(&loose);
        check_dir(&loose, "test").unwrap();
        let mode = std::fs::metadata(&loose).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn files_are_trusted_only_when_this_user_wrote_them_alone() {
        let base = scratch("files");
        let mine = base.join("mine.so");
        assert!(!trusted_file(&mine, "test").unwrap(), "absent");
        write_new(&mine, b"x").unwrap();
        assert!(trusted_file(&mine, "test").unwrap());
        // A second write of the same name fails instead of overwriting.
        assert!(write_new(&mine, b"y").is_err());
        let shared = base.join("shared.so");
        write_new(&shared, b"x").unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(trusted_file(&shared, "test").is_err());
        // A link planted under a name: neither loaded nor written through.
        let target = base.join("victim");
        std::fs::write(&target, b"precious").unwrap();
        let planted = base.join("planted.c");
        std::os::unix::fs::symlink(&target, &planted).unwrap();
        assert!(trusted_file(&planted, "test").is_err());
        assert!(write_new(&planted, b"overwritten").is_err());
        assert_eq!(std::fs::read(&target).unwrap(), b"precious");
        // Another user's file (only root can make one here).
        if euid() == 0 {
            let theirs = base.join("theirs.so");
            write_new(&theirs, b"x").unwrap();
            std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
            let e = trusted_file(&theirs, "test").unwrap_err().to_string();
            assert!(e.contains("belongs to user 65534"), "{e}");
        }
        std::fs::remove_dir_all(&base).unwrap();
    }
}
