//! Which allocation an address lies in (`locus::lookup`), for C code holding a pointer:
//! its location, first address, length, the address's offset, its kind, and whether a
//! runtime registered it in place; the owning resource's description as text.

use std::ffi::{c_char, c_void};

use crate::native::LocusMemoryKind;
use crate::text::{out_arg, text_out};
use crate::{call, Fail, LocusStatus};

/// What `locus_lookup` knows of an address.
#[repr(C)]
pub struct LocusAddressInfo {
    /// Where the allocation lives (`"host"`, `"cuda:0"`, ...), NUL-terminated.
    pub location: [c_char; 32],
    /// The allocation's first address.
    pub base: *mut c_void,
    /// The allocation's length in bytes.
    pub bytes: usize,
    /// How far into the allocation the address lies.
    pub offset: usize,
    /// The kind of memory.
    pub kind: LocusMemoryKind,
    /// Non-zero when the memory is on loan from a memory resource (its description:
    /// `locus_lookup_resource`).
    pub from_resource: i32,
    /// How many runtimes registered the range in place (CUDA's `cuMemHostRegister`,
    /// HIP's `hipHostRegister`); 0 for memory that is not registered.
    pub registered_with: u32,
    /// Non-zero where locus made, adopted or registered the memory; 0 where a driver
    /// answered for memory another library allocated (`base` and `bytes` are then the
    /// driver's range, or the address and 0 where it gives none: SYCL USM).
    pub known_to_locus: i32,
}

fn info_of(address: *const c_void) -> Result<locus_rs::AddressInfo, Fail> {
    Ok(locus_rs::lookup(address as u64)?)
}

/// Which allocation `address` lies in, into `*info`: any address inside live memory
/// locus made, adopted or registered whose handle is an address (host, OpenMP, CUDA,
/// HIP, SYCL USM; OpenCL and WebGPU memory are objects), then any address the drivers
/// present allocated (a `cudaMalloc` of the application, CuPy's or PyTorch's memory,
/// SYCL USM: `known_to_locus` is 0). Another address is `LOCUS_ERROR_INVALID`, naming it
/// (`locus_last_error`), and `*info` is untouched.
///
/// # Safety
/// `info` is NULL or points to a `LocusAddressInfo`. `address` is only compared, never
/// read.
#[no_mangle]
pub unsafe extern "C" fn locus_lookup(
    address: *const c_void,
    info: *mut LocusAddressInfo,
) -> LocusStatus {
    call("locus_lookup", || {
        let out = out_arg(info, "info")?;
        let found = info_of(address)?;
        let mut location = [0 as c_char; 32];
        for (to, from) in location
            .iter_mut()
            .zip(found.location.to_string().bytes().take(31))
        {
            *to = from as c_char;
        }
        *out = LocusAddressInfo {
            location,
            base: found.base as *mut c_void,
            bytes: found.len,
            offset: found.offset,
            kind: LocusMemoryKind::of(found.kind),
            from_resource: i32::from(found.resource.is_some()),
            registered_with: found.registered_with.len() as u32,
            known_to_locus: i32::from(found.known_to_locus),
        };
        Ok(())
    })
}

/// The description of the memory resource the allocation holding `address` is on loan
/// from (`pool(upstream(cuda:0))`, ...), into `buf` (see `LOCUS_ERROR_BUFFER_TOO_SMALL`);
/// the empty string for memory allocated or adopted directly.
///
/// # Safety
/// `buf` is NULL or holds `capacity` bytes; `needed` is NULL or points to a `size_t`.
#[no_mangle]
pub unsafe extern "C" fn locus_lookup_resource(
    address: *const c_void,
    buf: *mut c_char,
    capacity: usize,
    needed: *mut usize,
) -> LocusStatus {
    call("locus_lookup_resource", || {
        let found = info_of(address)?;
        text_out(&found.resource.unwrap_or_default(), buf, capacity, needed)
    })
}
