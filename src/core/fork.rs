//! A process forked after locus was set up: the child has a copy of locus's memory but
//! none of its threads (the copy workers, the reaper), and any lock another thread held
//! at the fork stays held forever in the child; the runtimes underneath (CUDA, OpenCL,
//! SYCL, Vulkan) do not survive a fork either. So, as CUDA does, locus refuses to work in
//! such a child, with an error that says what to do, instead of hanging on a lock or on
//! a worker that does not exist. A `pthread_atfork` child handler, registered when locus
//! is set up, marks the child; nothing is marked in a child of a process that had not
//! used locus yet, which sets locus up for itself as usual.

use std::sync::atomic::{AtomicU32, Ordering};

use super::error::{Error, Result};

/// The process this one was forked from after locus was set up there; 0 when it was not.
static FORKED_FROM: AtomicU32 = AtomicU32::new(0);

/// True in a child forked after locus was set up in its parent.
pub fn is_forked_child() -> bool {
    FORKED_FROM.load(Ordering::Acquire) != 0
}

/// Refuses `what` in a child forked after locus was set up (see the module's docs): one
/// atomic load otherwise (`what` is formatted only for the error).
pub fn check(what: impl std::fmt::Display) -> Result<()> {
    let parent = FORKED_FROM.load(Ordering::Acquire);
    if parent == 0 {
        return Ok(());
    }
    Err(Error::Invalid(format!(
        "{what}: this process was forked from process {parent} after locus was set up there; \
         locus's threads, queues and device contexts do not exist in a forked child, so it \
         cannot be used here (nor can CUDA, OpenCL or SYCL). Use locus in the parent only, \
         or start children that use it with exec, Python's multiprocessing \"spawn\" or \
         \"forkserver\" start method, or fork before the parent first uses locus"
    )))
}

extern "C" fn in_child() {
    // SAFETY: getppid has no preconditions and cannot fail; only an atomic store follows
    // (async-signal-safe, as a fork handler must be).
    let parent = unsafe { libc::getppid() };
    FORKED_FROM.store(u32::try_from(parent).unwrap_or(1).max(1), Ordering::Release);
}

/// Registers the child handler, once (when locus is set up).
pub(crate) fn register_child_handler() {
    static REGISTERED: std::sync::Once = std::sync::Once::new();
    REGISTERED.call_once(|| {
        // SAFETY: a plain `extern "C" fn()` that never unwinds; no prepare or parent
        // handler.
        unsafe { libc::pthread_atfork(None, None, Some(in_child)) };
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A child forked after setup is refused at once (no lock taken, no hang) and says
    /// what to do; the parent is not.
    #[test]
    fn a_forked_child_is_refused_with_what_to_do() {
        register_child_handler();
        assert!(check("test").is_ok());
        // SAFETY: the child only reads an atomic, formats a message and calls `_exit`.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            let ok = check("Memory::new").is_err_and(|e| {
                let text = e.to_string();
                text.contains("forked") && text.contains("spawn")
            });
            // SAFETY: ends the child without running the parent's exit handlers.
            unsafe { libc::_exit(if ok { 0 } else { 1 }) };
        }
        let mut status = 0;
        // SAFETY: waits for the child just forked.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "status {status}"
        );
        assert!(check("test").is_ok(), "the parent is not a child");
    }
}
