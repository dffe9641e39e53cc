//! Host memory shared between processes on one node (issue 45, item 4): a POSIX shared
//! memory object (`shm_open`), mapped `MAP_SHARED` by the process that makes it and by
//! every process that opens its handle, so that both use the same pages in place. The
//! handle is the object's name, its length and the node, as text another process gets
//! any way it likes (an MPI message, a file, an environment variable), as CUDA's IPC
//! handles are.
//!
//! The maker unlinks the name when its memory is dropped, and at its normal exit for any
//! it did not drop: mappings made before stay valid (the pages live while any process
//! maps them), later opens fail, saying so.
//!
//! The object's pages are reserved when it is made (`posix_fallocate`): shared memory
//! past `/dev/shm`'s free space is an out-of-memory error then, never a SIGBUS at the
//! first write. Its name carries the maker's process ID and start time
//! (`/locus-PID-START-N`), so a process that reuses a dead one's ID never collides with
//! its leftovers; objects of makers that died without exiting (SIGKILL, a crash) are
//! found by that pair and removed the first time a process of the same user makes
//! shared memory ([`reclaim_stale`]).

use std::collections::BTreeMap;
use std::ffi::CString;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use crate::core::error::{Error, Result};
use crate::core::location::Location;

/// A handle to memory another process made shareable: where it lives, its name and
/// length, and the node that made it. `Display` and [`IpcHandle::parse`] turn it into
/// text and back (`locus-ipc host node=... name=/locus-123-1 len=4096`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IpcHandle {
    /// The location of the memory in the process that made it.
    pub location: Location,
    /// The node (host name) of that process: shared memory does not cross nodes.
    pub node: String,
    /// The shared memory object's name.
    pub name: String,
    /// Bytes.
    pub len: usize,
}

impl std::fmt::Display for IpcHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "locus-ipc {} node={} name={} len={}",
            self.location, self.node, self.name, self.len
        )
    }
}

impl IpcHandle {
    /// The name of the node this process runs on, as handles made here carry it.
    pub fn this_node() -> String {
        node()
    }

    /// The handle `text` (as `Display` writes it) names; an error saying what is wrong.
    pub fn parse(text: &str) -> Result<IpcHandle> {
        let bad = |why: &str| {
            Error::Invalid(format!(
                "{text:?} is not a locus IPC handle ({why}); pass the text of \
                 Memory::ipc_handle's handle unchanged"
            ))
        };
        let mut words = text.split_whitespace();
        if words.next() != Some("locus-ipc") {
            return Err(bad("it does not start with `locus-ipc`"));
        }
        let location: Location = words
            .next()
            .ok_or_else(|| bad("no location"))?
            .parse()
            .map_err(|_| bad("an unknown location"))?;
        let mut field = |key: &str| -> Result<String> {
            words
                .next()
                .and_then(|w| w.strip_prefix(key))
                .and_then(|w| w.strip_prefix('='))
                .map(str::to_string)
                .ok_or_else(|| bad(&format!("no {key}=")))
        };
        let node = field("node")?;
        let name = field("name")?;
        let len = field("len")?
            .parse()
            .map_err(|_| bad("len is not a number"))?;
        Ok(IpcHandle {
            location,
            node,
            name,
            len,
        })
    }
}

/// The shared objects this process made, by mapped address: name and length.
static MADE: Mutex<BTreeMap<usize, (String, usize)>> = Mutex::new(BTreeMap::new());

/// This node's name.
pub(crate) fn node() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most `buf.len()` bytes into `buf`.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    if rc != 0 || end == 0 {
        return "localhost".into();
    }
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

fn os_error(at: Location, call: &'static str, what: &str) -> Error {
    Error::Backend {
        location: at,
        call,
        message: format!("{what}: {}", std::io::Error::last_os_error()),
        hint: "shared memory lives in /dev/shm: check its free space and limits".into(),
    }
}

/// Maps `len` bytes of the open shared object `fd` (closed here).
fn map(at: Location, fd: libc::c_int, len: usize) -> Result<*mut u8> {
    // SAFETY: a fresh shared mapping of an open descriptor; the descriptor is not needed
    // once mapped.
    let ptr = unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            len.max(1),
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        );
        libc::close(fd);
        p
    };
    if ptr == libc::MAP_FAILED {
        return Err(os_error(at, "mmap", "mapping the shared memory"));
    }
    Ok(ptr.cast())
}

/// The process that made the shared memory `name` (`/locus-PID-START-N`, or
/// `/locus-PID-N` as earlier versions named it): its ID, and its start time where the
/// name has one.
fn maker_of(name: &str) -> Option<(libc::pid_t, Option<u64>)> {
    let parts: Vec<&str> = name
        .trim_start_matches('/')
        .strip_prefix("locus-")?
        .split('-')
        .collect();
    let pid = parts.first()?.parse().ok()?;
    match parts.len() {
        2 => Some((pid, None)),
        3 => Some((pid, Some(parts[1].parse().ok()?))),
        _ => None,
    }
}

/// The start time of process `pid` (clock ticks after boot, `/proc/PID/stat`'s 22nd
/// field), or `None` when it does not exist (or cannot be read).
fn start_time(pid: libc::pid_t) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count from after it.
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(19)?.parse().ok()
}

/// Whether the process that made `name` has ended (its ID gone, or reused by a process
/// that started at another time).
fn maker_gone(name: &str) -> bool {
    let Some((pid, started)) = maker_of(name) else {
        return false;
    };
    match (start_time(pid), started) {
        (Some(now), Some(then)) => now != then,
        (Some(_), None) => false,
        (None, _) => {
            // No /proc entry to read: ask the kernel whether the ID lives.
            // SAFETY: signal 0 only asks whether the process exists.
            let rc = unsafe { libc::kill(pid, 0) };
            rc != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
        }
    }
}

/// Removes the shared memory objects of this user's whose makers have ended without
/// freeing them (killed, crashed): `/dev/shm/locus-*`. Run once per process before it
/// first makes shared memory; also public as [`crate::reclaim_stale_shared_memory`].
/// Answers the names removed.
pub fn reclaim_stale() -> Vec<String> {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir("/dev/shm") else {
        return Vec::new();
    };
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with("locus-") {
            continue;
        }
        let mine = entry.metadata().is_ok_and(|m| m.uid() == me);
        if !mine || !maker_gone(&name) {
            continue;
        }
        if let Ok(c) = CString::new(format!("/{name}")) {
            // SAFETY: a NUL-terminated name of an object of this user's.
            if unsafe { libc::shm_unlink(c.as_ptr()) } == 0 {
                removed.push(name);
            }
        }
    }
    removed
}

/// At a normal exit: unlinks every object this process made and did not free (the
/// mappings of other processes stay valid; a later open would be refused anyway, its
/// maker having ended).
extern "C" fn unlink_made_at_exit() {
    // A forked child inherits the list: the objects are its parent's.
    if crate::core::fork::is_forked_child() {
        return;
    }
    // Never blocks the exit: a thread stopped inside `create` or `close` holds the lock
    // for a moment only, and then its objects are left to the next reclaim.
    let made = match MADE.try_lock() {
        Ok(mut m) => std::mem::take(&mut *m),
        Err(std::sync::TryLockError::Poisoned(e)) => std::mem::take(&mut *e.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => return,
    };
    for (name, _) in made.into_values() {
        if let Ok(c) = CString::new(name) {
            // SAFETY: a NUL-terminated name this process made.
            unsafe { libc::shm_unlink(c.as_ptr()) };
        }
    }
}

/// Once per process: leftovers of dead makers removed, and the exit handler registered.
fn first_use() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        reclaim_stale();
        // SAFETY: a plain `extern "C" fn()` that never unwinds (it only unlinks names).
        unsafe { libc::atexit(unlink_made_at_exit) };
    });
}

/// Makes `len` bytes of shared memory for `at` (host memory): its address. The pages are
/// reserved here: too little room in `/dev/shm` is [`Error::OutOfMemory`].
pub(crate) fn create(at: Location, len: usize) -> Result<*mut u8> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    crate::core::fork::check("Memory::new_shared")?;
    first_use();
    // This process's ID and start time, read once (the start time does not change).
    static ME: std::sync::OnceLock<(u32, u64)> = std::sync::OnceLock::new();
    let (pid, started) = *ME.get_or_init(|| {
        let pid = std::process::id();
        (pid, start_time(pid as libc::pid_t).unwrap_or(0))
    });
    let name = format!(
        "/locus-{pid}-{started}-{}",
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let c = CString::new(name.clone()).map_err(|e| Error::Invalid(e.to_string()))?;
    // SAFETY: a NUL-terminated name; a new object (O_EXCL), readable and writable by
    // this user only.
    let fd = unsafe {
        libc::shm_open(
            c.as_ptr(),
            libc::O_CREAT | libc::O_EXCL | libc::O_RDWR,
            0o600,
        )
    };
    if fd < 0 {
        return Err(os_error(at, "shm_open", "making shared memory"));
    }
    let undo = |e: Error| {
        // SAFETY: the descriptor and name made above.
        unsafe {
            libc::close(fd);
            libc::shm_unlink(c.as_ptr());
        }
        Err(e)
    };
    let Ok(size) = libc::off_t::try_from(len.max(1)) else {
        return undo(Error::TooLarge {
            location: at,
            requested: len,
            max: libc::off_t::MAX as usize,
        });
    };
    // Reserved, not only sized: a sparse object would "succeed" at any size and kill the
    // process with SIGBUS at the first write past /dev/shm's free space.
    // SAFETY: the descriptor just opened.
    let rc = unsafe { libc::posix_fallocate(fd, 0, size) };
    if rc != 0 {
        let reason = std::io::Error::from_raw_os_error(rc);
        let e = if rc == libc::ENOSPC || rc == libc::ENOMEM || rc == libc::EFBIG {
            Error::OutOfMemory {
                location: at,
                requested: len,
                by: "posix_fallocate (/dev/shm)".into(),
                reason: format!("{reason}: /dev/shm has too little free space (`df -h /dev/shm`)"),
            }
        } else {
            Error::Backend {
                location: at,
                call: "posix_fallocate",
                message: format!("reserving {len} bytes of shared memory: {reason}"),
                hint: "shared memory lives in /dev/shm: check its free space and limits".into(),
            }
        };
        return undo(e);
    }
    let ptr = match map(at, fd, len) {
        Ok(p) => p,
        Err(e) => {
            // SAFETY: the name made above.
            unsafe { libc::shm_unlink(c.as_ptr()) };
            return Err(e);
        }
    };
    MADE.lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(ptr as usize, (name, len));
    Ok(ptr)
}

/// The handle of shared memory this process made at `ptr`, or `None`.
pub(crate) fn handle_of(at: Location, ptr: *const u8) -> Option<IpcHandle> {
    let made = MADE.lock().unwrap_or_else(|e| e.into_inner());
    let (name, len) = made.get(&(ptr as usize))?.clone();
    Some(IpcHandle {
        location: at,
        node: node(),
        name,
        len,
    })
}

/// `handle` was made on this node; else an error naming both nodes (`what` does not
/// cross them).
pub(crate) fn check_node(at: Location, handle: &IpcHandle, what: &str) -> Result<()> {
    let here = node();
    if handle.node == here {
        return Ok(());
    }
    Err(Error::Invalid(format!(
        "{at}: the IPC handle {} was made on node {}, this is {here}: {what} does not cross \
         nodes; send the data instead (MPI)",
        handle.name, handle.node
    )))
}

/// Maps the shared memory `handle` names (made by another process, or this one) at `at`.
pub(crate) fn open(at: Location, handle: &IpcHandle) -> Result<*mut u8> {
    check_node(at, handle, "shared memory")?;
    if maker_gone(&handle.name) {
        return Err(Error::Invalid(format!(
            "{at}: the shared memory {} was made by a process that has ended (without \
             freeing it): its contents are what that process left; ask a live process for \
             a new handle",
            handle.name
        )));
    }
    let c = CString::new(handle.name.clone()).map_err(|e| Error::Invalid(e.to_string()))?;
    // SAFETY: a NUL-terminated name.
    let fd = unsafe { libc::shm_open(c.as_ptr(), libc::O_RDWR, 0) };
    if fd < 0 {
        return Err(Error::Invalid(format!(
            "{at}: the shared memory {} cannot be opened ({}): the process that made it has \
             freed it or ended",
            handle.name,
            std::io::Error::last_os_error()
        )));
    }
    // SAFETY: an open descriptor; `stat` is written by fstat.
    let size = unsafe {
        let mut stat: libc::stat = std::mem::zeroed();
        (libc::fstat(fd, &mut stat) == 0).then_some(stat.st_size as usize)
    };
    if size.is_none_or(|s| s < handle.len.max(1)) {
        // SAFETY: the descriptor opened above.
        unsafe { libc::close(fd) };
        return Err(Error::Invalid(format!(
            "{at}: the shared memory {} holds {size:?} bytes, fewer than the handle's {}",
            handle.name, handle.len
        )));
    }
    map(at, fd, handle.len)
}

/// Unmaps `len` bytes at `ptr`; the maker also unlinks the name (later opens fail).
///
/// # Safety
/// `ptr` is a mapping of `len` bytes from [`create`] or [`open`], not used afterwards.
pub(crate) unsafe fn close(ptr: *mut u8, len: usize) {
    let made = MADE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&(ptr as usize));
    if let Some((name, _)) = made {
        if let Ok(c) = CString::new(name) {
            // SAFETY: a name this process made.
            unsafe { libc::shm_unlink(c.as_ptr()) };
        }
    }
    // SAFETY: per the caller's contract.
    unsafe { libc::munmap(ptr.cast(), len.max(1)) };
}
