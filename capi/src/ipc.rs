//! Memory shared between processes on one node: made with `locus_memory_new_shared`,
//! its handle's text (`locus_memory_ipc_handle`) sent to another process, opened there
//! with `locus_memory_open_ipc`: both use the same pages in place.

use std::ffi::c_char;

use locus_rs::{IpcHandle, Memory};

use crate::handles::{LocusMemory, MEMORY};
use crate::text::{location_arg, out_arg, text_arg, text_out};
use crate::{call, LocusStatus};

/// Allocates `bytes` at `location` that other processes on this node can open in place
/// (host memory: a POSIX shared memory object; at the host, an OpenMP device on the
/// host, a SYCL device with system USM, an OpenCL CPU device; another location is
/// `LOCUS_ERROR_INVALID`, naming it). Free it with `locus_memory_free`: the name goes,
/// processes that opened it keep their mapping.
///
/// # Safety
/// `location` is NULL or a NUL-terminated string; `out` is NULL or points to a
/// `LocusMemory *`.
#[no_mangle]
pub unsafe extern "C" fn locus_memory_new_shared(
    location: *const c_char,
    bytes: usize,
    out: *mut *mut LocusMemory,
) -> LocusStatus {
    call("locus_memory_new_shared", || {
        let location = location_arg(location, "location")?;
        let out = out_arg(out, "out")?;
        *out = MEMORY.insert(Memory::new_shared(location, bytes)?);
        Ok(())
    })
}

/// The text another process on this node opens `memory` with
/// (`locus_memory_open_ipc`), into `buf` (see `LOCUS_ERROR_BUFFER_TOO_SMALL`); memory
/// made by `locus_memory_new_shared` only.
///
/// # Safety
/// `buf` is NULL or holds `capacity` bytes; `needed` is NULL or points to a `size_t`.
#[no_mangle]
pub unsafe extern "C" fn locus_memory_ipc_handle(
    memory: *const LocusMemory,
    buf: *mut c_char,
    capacity: usize,
    needed: *mut usize,
) -> LocusStatus {
    call("locus_memory_ipc_handle", || {
        let m = MEMORY.get(memory, "memory")?;
        text_out(&m.ipc_handle()?.to_string(), buf, capacity, needed)
    })
}

/// Opens memory another process on this node shared, from its handle's text: the same
/// pages, in place. A handle of another node, of memory its maker freed, or text that is
/// no handle is `LOCUS_ERROR_INVALID`, naming what. Free it with `locus_memory_free`.
///
/// # Safety
/// `handle` is NULL or a NUL-terminated string; `out` is NULL or points to a
/// `LocusMemory *`.
#[no_mangle]
pub unsafe extern "C" fn locus_memory_open_ipc(
    handle: *const c_char,
    out: *mut *mut LocusMemory,
) -> LocusStatus {
    call("locus_memory_open_ipc", || {
        let handle = IpcHandle::parse(text_arg(handle, "handle")?)?;
        let out = out_arg(out, "out")?;
        *out = MEMORY.insert(Memory::open_ipc(&handle)?);
        Ok(())
    })
}
