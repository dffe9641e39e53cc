//! umem's status API: a context's status type and message (umem's `umem_set_status`
//! appends to an earlier message and notes a change of type), the names of status and
//! device types, and where a NULL context's error goes: the calling thread's
//! `umem_get_status(NULL)` / `umem_get_message(NULL)`, since there is no context to hold
//! it.

use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};

use super::*;

thread_local! {
    /// The status of the calling thread's last call with a NULL context.
    static NULL_CONTEXT: RefCell<(UmemStatusType, CString)> =
        RefCell::new((UMEM_OK, CString::default()));
}

/// Sets `ctx`'s status to `kind` with `message` (umem's `umem_set_status`).
///
/// # Safety
/// `ctx` is a constructed context (or NULL).
pub(crate) unsafe fn set_status_text(ctx: Ctx, kind: UmemStatusType, message: &str) {
    let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
    // SAFETY: forwarded; `text` is a NUL-terminated string.
    unsafe { umem_set_status(ctx.cast(), kind, text.as_ptr()) }
}

/// Sets the status of `ctx` to `type` with `message`: a NULL message clears the message;
/// a message added to an earlier one is appended on a new line, after a line saying the
/// type changed when it did (umem's rule). A NULL `ctx` sets the calling thread's status.
///
/// # Safety
/// `ctx` is NULL or a constructed context; `message` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn umem_set_status(
    ctx: *mut c_void,
    kind: UmemStatusType,
    message: *const c_char,
) {
    let ctx: Ctx = ctx.cast();
    if ctx.is_null() {
        let text = if message.is_null() {
            CString::default()
        } else {
            // SAFETY: a NUL-terminated string (the caller's contract).
            unsafe { CStr::from_ptr(message) }.to_owned()
        };
        NULL_CONTEXT.with(|s| *s.borrow_mut() = (kind, text));
        return;
    }
    // SAFETY: `ctx` is a constructed context; its message is NULL or C's `malloc`ed
    // string, which only these functions change.
    unsafe {
        let status = &mut (*ctx).status;
        if message.is_null() {
            libc::free(status.message.cast());
            status.message = std::ptr::null_mut();
        } else if status.message.is_null() {
            status.message = libc::strdup(message);
        } else {
            let mut text = CStr::from_ptr(status.message).to_bytes().to_vec();
            if status.kind != kind {
                text.extend_from_slice(
                    format!(
                        "\nstatus {} changed to {}",
                        name_of_status(status.kind),
                        name_of_status(kind)
                    )
                    .as_bytes(),
                );
            }
            text.push(b'\n');
            text.extend_from_slice(CStr::from_ptr(message).to_bytes());
            bound_message(&mut text);
            let joined = libc::malloc(text.len() + 1).cast::<u8>();
            if !joined.is_null() {
                std::ptr::copy_nonoverlapping(text.as_ptr(), joined, text.len());
                *joined.add(text.len()) = 0;
                libc::free(status.message.cast());
                status.message = joined.cast();
            }
        }
        status.kind = kind;
    }
}

/// The longest message a context keeps: statuses set in a loop without a clear append
/// forever (umem's rule), so beyond this the first message stays, then a line saying
/// how much was dropped, then the newest messages; each append then costs at most this
/// much, not the whole history.
const MAX_MESSAGE: usize = 16 << 10;

/// Cuts `text` to at most about [`MAX_MESSAGE`] bytes at line boundaries: the first line
/// (the first failure, usually the cause) and the newest lines.
fn bound_message(text: &mut Vec<u8>) {
    if text.len() <= MAX_MESSAGE {
        return;
    }
    let first_end = text
        .iter()
        .position(|&b| b == b'\n')
        .unwrap_or(text.len())
        .min(MAX_MESSAGE / 4);
    let tail_from = text.len() - MAX_MESSAGE / 2;
    let tail_from = text[tail_from..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(tail_from, |i| tail_from + i + 1);
    let dropped = tail_from.saturating_sub(first_end);
    let mut bounded = text[..first_end].to_vec();
    bounded
        .extend_from_slice(format!("\n[{dropped} bytes of earlier messages dropped]\n").as_bytes());
    bounded.extend_from_slice(&text[tail_from..]);
    *text = bounded;
}

/// Clears the status of `ctx` (umem's `umem_clear_status`); NULL clears the calling
/// thread's.
///
/// # Safety
/// `ctx` is NULL or a constructed context.
#[no_mangle]
pub unsafe extern "C" fn umem_clear_status(ctx: *mut c_void) {
    let ctx: Ctx = ctx.cast();
    if ctx.is_null() {
        NULL_CONTEXT.with(|s| *s.borrow_mut() = (UMEM_OK, CString::default()));
        return;
    }
    // SAFETY: a constructed context (the caller's contract); its message is `malloc`ed.
    unsafe {
        libc::free((*ctx).status.message.cast());
        (*ctx).status.message = std::ptr::null_mut();
        (*ctx).status.kind = UMEM_OK;
    }
}

/// Records that `call` was given a NULL context: `umem_get_status(NULL)` is then
/// `umemValueError` and `umem_get_message(NULL)` says which call (umem.h's inline
/// functions call this instead of dereferencing NULL).
///
/// # Safety
/// `call` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn umem_null_context(call: *const c_char) {
    let call = if call.is_null() {
        "a umem call".into()
    } else {
        // SAFETY: a NUL-terminated string (the caller's contract).
        unsafe { CStr::from_ptr(call) }.to_string_lossy()
    };
    let text = format!("{call}: the context is NULL; pass the address of a constructed context");
    NULL_CONTEXT
        .with(|s| *s.borrow_mut() = (UMEM_VALUE_ERROR, CString::new(text).unwrap_or_default()));
}

/// The calling thread's status of calls with a NULL context (`umem_get_status(NULL)`).
#[no_mangle]
pub extern "C" fn umem_null_context_status() -> UmemStatusType {
    NULL_CONTEXT.with(|s| s.borrow().0)
}

/// The calling thread's message of calls with a NULL context (`umem_get_message(NULL)`),
/// valid until its next such call.
#[no_mangle]
pub extern "C" fn umem_null_context_message() -> *const c_char {
    NULL_CONTEXT.with(|s| s.borrow().1.as_ptr())
}

fn name_of_status(kind: UmemStatusType) -> &'static str {
    match kind {
        UMEM_OK => "OK",
        UMEM_MEMORY_ERROR => "MemoryError",
        UMEM_RUNTIME_ERROR => "RuntimeError",
        UMEM_IO_ERROR => "IOError",
        UMEM_VALUE_ERROR => "ValueError",
        UMEM_TYPE_ERROR => "TypeError",
        UMEM_INDEX_ERROR => "IndexError",
        UMEM_NOT_IMPLEMENTED_ERROR => "NotImplementedError",
        UMEM_NOT_SUPPORTED_ERROR => "NotSupportedError",
        UMEM_ASSERT_ERROR => "AssertError",
        _ => "UnknownStatus",
    }
}

/// The name of a status type (`"OK"`, `"MemoryError"`, ...), a static string; NULL for a
/// value umem does not define (umem's rule).
#[no_mangle]
pub extern "C" fn umem_get_status_name(kind: UmemStatusType) -> *const c_char {
    let name: &'static CStr = match kind {
        UMEM_OK => c"OK",
        UMEM_MEMORY_ERROR => c"MemoryError",
        UMEM_RUNTIME_ERROR => c"RuntimeError",
        UMEM_IO_ERROR => c"IOError",
        UMEM_VALUE_ERROR => c"ValueError",
        UMEM_TYPE_ERROR => c"TypeError",
        UMEM_INDEX_ERROR => c"IndexError",
        UMEM_NOT_IMPLEMENTED_ERROR => c"NotImplementedError",
        UMEM_NOT_SUPPORTED_ERROR => c"NotSupportedError",
        UMEM_ASSERT_ERROR => c"AssertError",
        _ => return std::ptr::null(),
    };
    name.as_ptr()
}

/// The name of a device type (`"Host"`, `"Cuda"`, `"Locus"`, ...), a static string; NULL
/// for a value umem does not define.
#[no_mangle]
pub extern "C" fn umem_get_device_name_from_type(kind: UmemDeviceType) -> *const c_char {
    let name: &'static CStr = match kind {
        UMEM_VIRTUAL_DEVICE => c"Virtual",
        UMEM_HOST_DEVICE => c"Host",
        UMEM_FILE_DEVICE => c"File",
        UMEM_CUDA_DEVICE => c"Cuda",
        UMEM_CUDA_HOST_DEVICE => c"CudaHost",
        UMEM_CUDA_MANAGED_DEVICE => c"CudaManaged",
        UMEM_MMAP_DEVICE => c"MMAP",
        UMEM_RMM_DEVICE => c"RMM",
        UMEM_LOCUS_DEVICE => c"Locus",
        _ => return std::ptr::null(),
    };
    name.as_ptr()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Statuses set in a loop without a clear: the message keeps the first failure and
    /// the newest, and stays bounded (the code before kept every message, copying the
    /// whole history at each append: quadratic time, unbounded memory).
    #[test]
    fn a_message_appended_in_a_loop_stays_bounded() {
        let mut host = std::mem::MaybeUninit::<UmemHost>::uninit();
        // SAFETY: constructs the host context in place; the statuses are set on it and
        // cleared before it is destroyed.
        unsafe {
            umemHost_ctor(host.as_mut_ptr());
            let ctx: Ctx = host.as_mut_ptr().cast();
            for i in 0..20_000 {
                let m = CString::new(format!("failure {i}")).unwrap();
                umem_set_status(ctx.cast(), UMEM_VALUE_ERROR, m.as_ptr());
            }
            let text = CStr::from_ptr((*ctx).status.message)
                .to_string_lossy()
                .into_owned();
            assert!(text.len() <= MAX_MESSAGE + 64, "{} bytes", text.len());
            assert!(text.starts_with("failure 0\n["), "{}", &text[..40]);
            assert!(text.contains("bytes of earlier messages dropped"));
            assert!(text.ends_with("\nfailure 19999"));
            umem_clear_status(ctx.cast());
            super::super::virtual_context::dispatch::dtor(ctx);
        }
    }
}
