//! Host memory shared between processes on one node (issue 45, item 4): a POSIX shared
//! memory object (`shm_open`), mapped `MAP_SHARED` by the process that makes it and by
//! every process that opens its handle, so that both use the same pages in place. The
//! handle is the object's name, its length and the node, as text another process gets
//! any way it likes (an MPI message, a file, an environment variable), as CUDA's IPC
//! handles are.
//!
//! The maker unlinks the name when its memory is dropped: mappings made before stay
//! valid (the pages live while any process maps them), later opens fail, saying so.

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

/// The process that made the shared memory `name` (`/locus-PID-N`).
fn maker_pid(name: &str) -> Option<libc::pid_t> {
    name.strip_prefix("/locus-")?
        .split('-')
        .next()?
        .parse()
        .ok()
}

/// Makes `len` bytes of shared memory for `at` (host memory): its address.
pub(crate) fn create(at: Location, len: usize) -> Result<*mut u8> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = format!(
        "/locus-{}-{}",
        std::process::id(),
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
    // SAFETY: the descriptor just opened; the object is sized before it is mapped.
    if unsafe { libc::ftruncate(fd, len.max(1) as libc::off_t) } != 0 {
        let e = os_error(
            at,
            "ftruncate",
            &format!("sizing shared memory to {len} bytes"),
        );
        // SAFETY: the descriptor and name made above.
        unsafe {
            libc::close(fd);
            libc::shm_unlink(c.as_ptr());
        }
        return Err(e);
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
    if let Some(pid) = maker_pid(&handle.name) {
        // SAFETY: signal 0 only asks whether the process exists.
        let gone = unsafe { libc::kill(pid, 0) } != 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone {
            return Err(Error::Invalid(format!(
                "{at}: the shared memory {} was made by process {pid}, which has ended \
                 (without freeing it): its contents are what that process left; ask a live \
                 process for a new handle",
                handle.name
            )));
        }
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
