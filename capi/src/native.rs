//! Memory kinds and native handles in C: allocate a location's memory of a given kind
//! (pinned host or managed memory of a GPU, SYCL USM, OpenCL host-visible or SVM, ...),
//! and hand the runtime's own handle of an allocation to a C program's kernels.

use std::ffi::{c_char, c_void};

use locus_rs::backends::openmp::OpenMpDevice;
use locus_rs::backends::sycl::SyclDevice;
use locus_rs::{GpuMemory, Memory, MemoryKind, Native, Technology, UsmKind};

use crate::handles::{LocusMemory, MEMORY};
use crate::text::{location_arg, out_arg};
use crate::{call, Fail, LocusStatus};

/// The kind of memory an allocation is (`locus_memory_new_kind`); each location offers
/// some (`locus info` lists them).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocusMemoryKind {
    /// The location's ordinary memory (what `locus_memory_new` gives).
    LocusKindDefault = 0,
    /// Page-locked host memory of a CUDA / HIP device.
    LocusKindPinnedHost = 1,
    /// Managed (unified) memory of a CUDA / HIP device.
    LocusKindManaged = 2,
    /// SYCL USM device memory.
    LocusKindUsmDevice = 3,
    /// SYCL USM shared memory.
    LocusKindUsmShared = 4,
    /// SYCL USM host memory.
    LocusKindUsmHost = 5,
    /// Device memory from the CUDA / HIP driver's stream-ordered pool.
    LocusKindStreamOrdered = 6,
    /// An OpenCL buffer in host-accessible memory (`CL_MEM_ALLOC_HOST_PTR`).
    LocusKindHostVisible = 7,
    /// OpenCL coarse-grained shared virtual memory.
    LocusKindSvmCoarse = 8,
    /// OpenCL fine-grained buffer SVM.
    LocusKindSvmFine = 9,
}

impl LocusMemoryKind {
    /// The C name of `kind`.
    pub(crate) fn of(kind: MemoryKind) -> LocusMemoryKind {
        MemoryKind::ALL
            .iter()
            .zip(KINDS)
            .find(|(k, _)| **k == kind)
            .map_or(LocusMemoryKind::LocusKindDefault, |(_, c)| c)
    }

    fn to_rust(self) -> MemoryKind {
        match self {
            LocusMemoryKind::LocusKindDefault => MemoryKind::Default,
            LocusMemoryKind::LocusKindPinnedHost => MemoryKind::PinnedHost,
            LocusMemoryKind::LocusKindManaged => MemoryKind::Managed,
            LocusMemoryKind::LocusKindUsmDevice => MemoryKind::UsmDevice,
            LocusMemoryKind::LocusKindUsmShared => MemoryKind::UsmShared,
            LocusMemoryKind::LocusKindUsmHost => MemoryKind::UsmHost,
            LocusMemoryKind::LocusKindStreamOrdered => MemoryKind::StreamOrdered,
            LocusMemoryKind::LocusKindHostVisible => MemoryKind::HostVisible,
            LocusMemoryKind::LocusKindSvmCoarse => MemoryKind::SvmCoarse,
            LocusMemoryKind::LocusKindSvmFine => MemoryKind::SvmFine,
        }
    }
}

/// Every kind, in the order of [`MemoryKind::ALL`].
const KINDS: [LocusMemoryKind; 10] = [
    LocusMemoryKind::LocusKindDefault,
    LocusMemoryKind::LocusKindPinnedHost,
    LocusMemoryKind::LocusKindManaged,
    LocusMemoryKind::LocusKindUsmDevice,
    LocusMemoryKind::LocusKindUsmShared,
    LocusMemoryKind::LocusKindUsmHost,
    LocusMemoryKind::LocusKindStreamOrdered,
    LocusMemoryKind::LocusKindHostVisible,
    LocusMemoryKind::LocusKindSvmCoarse,
    LocusMemoryKind::LocusKindSvmFine,
];

/// Which runtime a [`LocusNative`] handle belongs to.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocusNativeKind {
    /// Host memory: `pointer`.
    LocusNativeHost = 0,
    /// `omp_target_alloc` memory: `pointer` on OpenMP device `device`.
    LocusNativeOpenmp = 1,
    /// An OpenCL buffer: `object` is the `cl_mem`, the allocation starts `offset` bytes
    /// into it.
    LocusNativeOpencl = 2,
    /// CUDA memory: `pointer` is the `CUdeviceptr`.
    LocusNativeCuda = 3,
    /// HIP memory: `pointer` is the device address.
    LocusNativeHip = 4,
    /// SYCL USM: `pointer`.
    LocusNativeSycl = 5,
    /// A wgpu buffer, `offset` bytes in. wgpu's Rust buffer is no C object (no
    /// `WGPUBuffer`): C reaches it through locus's copies or a host mapping.
    LocusNativeWebgpu = 6,
}

/// The runtime's own handle of an allocation.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct LocusNative {
    /// Which runtime, and so which fields mean something.
    pub kind: LocusNativeKind,
    /// The address (host, OpenMP, CUDA, HIP, SYCL USM); NULL for OpenCL and WebGPU.
    pub pointer: *mut c_void,
    /// The `cl_mem` (OpenCL); NULL otherwise.
    pub object: *mut c_void,
    /// Where the allocation starts inside `object` (OpenCL, WebGPU); 0 otherwise.
    pub offset: usize,
    /// The OpenMP device number (OpenMP), the device's ordinal otherwise.
    pub device: i32,
}

/// The C form of a native handle of `memory`'s location.
pub(crate) fn native_of(native: &Native, ordinal: u32) -> Option<LocusNative> {
    let device = i32::try_from(ordinal).unwrap_or(i32::MAX);
    let pointer = |kind, p: *mut u8| LocusNative {
        kind,
        pointer: p.cast(),
        object: std::ptr::null_mut(),
        offset: 0,
        device,
    };
    Some(match native {
        Native::Host { ptr } => pointer(LocusNativeKind::LocusNativeHost, *ptr),
        Native::OpenMp { ptr, device } => LocusNative {
            device: *device,
            ..pointer(LocusNativeKind::LocusNativeOpenmp, *ptr)
        },
        Native::OpenCl { mem, offset } => LocusNative {
            kind: LocusNativeKind::LocusNativeOpencl,
            pointer: std::ptr::null_mut(),
            object: (*mem).cast(),
            offset: *offset,
            device,
        },
        Native::Cuda { ptr, .. } => pointer(
            LocusNativeKind::LocusNativeCuda,
            std::ptr::without_provenance_mut(*ptr as usize),
        ),
        Native::Hip { ptr, .. } => pointer(
            LocusNativeKind::LocusNativeHip,
            std::ptr::without_provenance_mut(*ptr as usize),
        ),
        Native::Sycl { ptr, .. } => pointer(LocusNativeKind::LocusNativeSycl, *ptr),
        Native::WebGpu { offset, .. } => LocusNative {
            kind: LocusNativeKind::LocusNativeWebgpu,
            pointer: std::ptr::null_mut(),
            object: std::ptr::null_mut(),
            offset: usize::try_from(*offset).unwrap_or(usize::MAX),
            device,
        },
        // `Native` is non-exhaustive to other crates, so a wildcard is needed; the match
        // over `Technology` below is not, and fails to compile for a technology added to
        // locus until its arm is written here.
        _ => return None,
    })
}

/// Every technology [`native_of`] has an arm for, matched without a wildcard (checked
/// at compile time; nothing runs).
const _: fn(Technology) = |technology| match technology {
    Technology::Host
    | Technology::OpenMp
    | Technology::OpenCl
    | Technology::Cuda
    | Technology::Hip
    | Technology::Sycl
    | Technology::WebGpu => {}
};

/// Allocates `bytes` of memory of `kind` (a `LocusMemoryKind`) at `location` and stores the new handle in
/// `*out` (free it with `locus_memory_free`). A kind the location does not offer is
/// `LOCUS_ERROR_INVALID`, naming the kinds it offers.
///
/// # Safety
/// `location` is NULL or a NUL-terminated string; `out` is NULL or points to a
/// `LocusMemory *`.
#[no_mangle]
pub unsafe extern "C" fn locus_memory_new_kind(
    location: *const c_char,
    kind: i32,
    bytes: usize,
    out: *mut *mut LocusMemory,
) -> LocusStatus {
    call("locus_memory_new_kind", || {
        let location = location_arg(location, "location")?;
        let out = out_arg(out, "out")?;
        *out = MEMORY.insert(Memory::new_kind(location, kind_arg(kind)?, bytes)?);
        Ok(())
    })
}

/// The runtime's own handle of the memory, into `*native` (valid until the memory is
/// freed; locus still owns it: do not free it).
///
/// # Safety
/// `native` is NULL or points to a `LocusNative`.
#[no_mangle]
pub unsafe extern "C" fn locus_memory_native(
    memory: *const LocusMemory,
    native: *mut LocusNative,
) -> LocusStatus {
    call("locus_memory_native", || {
        let m = MEMORY.get(memory, "memory")?;
        let out = out_arg(native, "native")?;
        *out = native_of(m.native(), m.location().ordinal()).ok_or_else(|| {
            Fail::new(
                LocusStatus::LocusErrorInvalid,
                format!(
                    "{} memory has no C handle in this version of the C API",
                    m.location()
                ),
            )
        })?;
        Ok(())
    })
}

/// A `LocusMemoryKind` passed from C as a number: any `int` can arrive, so it is checked
/// before it becomes the enum.
pub(crate) fn kind_arg(kind: i32) -> Result<MemoryKind, Fail> {
    use LocusMemoryKind::*;
    let all = [
        LocusKindDefault,
        LocusKindPinnedHost,
        LocusKindManaged,
        LocusKindUsmDevice,
        LocusKindUsmShared,
        LocusKindUsmHost,
        LocusKindStreamOrdered,
        LocusKindHostVisible,
        LocusKindSvmCoarse,
        LocusKindSvmFine,
    ];
    all.into_iter()
        .find(|k| *k as i32 == kind)
        .map(LocusMemoryKind::to_rust)
        .ok_or_else(|| {
            Fail::new(
                LocusStatus::LocusErrorInvalid,
                format!("memory kind {kind} is not a LocusMemoryKind (0 ..= 9)"),
            )
        })
}

/// Wraps memory a C program allocated itself (`pointer`, `bytes` long, of `kind` at
/// `location`: host memory, an OpenMP device pointer, a CUDA / HIP device or pinned or
/// managed pointer, SYCL USM) as locus memory, into `*out`, without copying it. locus never
/// frees it: the caller keeps it alive until `locus_memory_free` of the handle returns. An
/// OpenCL or WebGPU location (whose memory is an object, not a pointer) is refused.
///
/// # Safety
/// `pointer` is a live allocation of at least `bytes` bytes of that kind at that location,
/// valid until the handle is freed; `location` is NULL or NUL-terminated; `out` is NULL or
/// points to a `LocusMemory *`.
#[no_mangle]
pub unsafe extern "C" fn locus_memory_adopt(
    location: *const c_char,
    kind: i32,
    pointer: *mut c_void,
    bytes: usize,
    out: *mut *mut LocusMemory,
) -> LocusStatus {
    call("locus_memory_adopt", || {
        let at = location_arg(location, "location")?;
        let kind = kind_arg(kind)?;
        let out = out_arg(out, "out")?;
        if pointer.is_null() && bytes > 0 {
            return Err(Fail::new(
                LocusStatus::LocusErrorNull,
                format!("pointer is NULL for {bytes} bytes"),
            ));
        }
        let p = pointer.cast::<u8>();
        let refuse = |what: &str| {
            Fail::new(
                LocusStatus::LocusErrorInvalid,
                format!("{at}: {what}; allocate there with locus_memory_new instead"),
            )
        };
        let native = match at.technology() {
            Technology::Host => Native::Host { ptr: p },
            Technology::OpenMp => Native::OpenMp {
                ptr: p,
                device: locus_rs::device_as::<OpenMpDevice>(at)?.device_number(),
            },
            Technology::Cuda | Technology::Hip => {
                let gpu = match kind {
                    MemoryKind::Default => GpuMemory::Device,
                    MemoryKind::PinnedHost => GpuMemory::Pinned,
                    MemoryKind::Managed => GpuMemory::Managed,
                    MemoryKind::StreamOrdered => GpuMemory::StreamOrdered,
                    _ => return Err(refuse("that kind is not a CUDA / HIP memory kind")),
                };
                let ptr = p as u64;
                if at.technology() == Technology::Cuda {
                    Native::Cuda { ptr, kind: gpu }
                } else {
                    Native::Hip { ptr, kind: gpu }
                }
            }
            Technology::Sycl => {
                let usm = match kind {
                    MemoryKind::Default | MemoryKind::UsmDevice => UsmKind::Device,
                    MemoryKind::UsmShared => UsmKind::Shared,
                    MemoryKind::UsmHost => UsmKind::Host,
                    _ => return Err(refuse("that kind is not a SYCL USM kind")),
                };
                // The runtime knows its USM: a pointer it does not know (plain host
                // memory, another context's USM) is refused, as Python's adoption does;
                // one it knows takes the kind it reports.
                let sycl = locus_rs::device_as::<SyclDevice>(at)?;
                let known = if bytes == 0 {
                    Some(usm)
                } else {
                    sycl.pointer_kind(p)
                };
                let Some(reported) = known else {
                    return Err(Fail::new(
                        LocusStatus::LocusErrorInvalid,
                        format!(
                            "{at}: {pointer:p} is not USM of {at}'s SYCL context (the runtime does not \
                             know it, asked for {}); adopt host memory at \"host\", or copy it in",
                            usm.name()
                        ),
                    ));
                };
                Native::Sycl {
                    ptr: p,
                    kind: reported,
                }
            }
            _ => {
                return Err(refuse(
                    "its memory is an object, not a pointer a program can hand over",
                ))
            }
        };
        // SAFETY: the caller's contract: a live allocation of `bytes` of this kind at
        // `at`, kept alive by the caller until the handle is freed; the deleter frees
        // nothing.
        let memory = unsafe { Memory::adopt(at, native, bytes, |_| {}) }?;
        *out = MEMORY.insert(memory);
        Ok(())
    })
}
