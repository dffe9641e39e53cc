//! DLPack (<https://dmlc.github.io/dlpack/latest/>): the C structures (`dlpack.h`, 1.0)
//! and the Python capsule protocol, both directions.
//!
//! The structures are written out here rather than taken from a crate: the ABI is a
//! handful of plain `repr(C)` structs that the DLPack project keeps stable, and the
//! crates that wrap it pin their own PyO3 versions.

use std::ffi::{c_void, CStr};

use pyo3::exceptions::{PyBufferError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;

use locus::{Location, Native};

mod export;

pub use export::{capsule, Description, Export};

/// `kDLCPU`.
pub const DL_CPU: i32 = 1;
/// `kDLCUDA`.
pub const DL_CUDA: i32 = 2;
/// `kDLCUDAHost` (pinned host memory).
pub const DL_CUDA_HOST: i32 = 3;
/// `kDLOpenCL`.
pub const DL_OPENCL: i32 = 4;
/// `kDLVulkan`.
pub const DL_VULKAN: i32 = 7;
/// `kDLROCM`.
pub const DL_ROCM: i32 = 10;
/// `kDLROCMHost`.
pub const DL_ROCM_HOST: i32 = 11;
/// `kDLExtDev` (OpenMP offload memory: DLPack has no type of its own for it).
pub const DL_EXT_DEV: i32 = 12;
/// `kDLCUDAManaged`.
pub const DL_CUDA_MANAGED: i32 = 13;
/// `kDLOneAPI` (SYCL unified shared memory).
pub const DL_ONEAPI: i32 = 14;

/// `DLPACK_FLAG_BITMASK_READ_ONLY`.
pub const FLAG_READ_ONLY: u64 = 1;
/// `DLPACK_FLAG_BITMASK_IS_COPIED`.
pub const FLAG_IS_COPIED: u64 = 2;

/// Capsule names.
pub const LEGACY: &CStr = c"dltensor";
/// The versioned capsule name.
pub const VERSIONED: &CStr = c"dltensor_versioned";
/// A consumed legacy capsule.
pub const USED_LEGACY: &CStr = c"used_dltensor";
/// A consumed versioned capsule.
pub const USED_VERSIONED: &CStr = c"used_dltensor_versioned";

/// `DLDevice`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DLDevice {
    /// `DLDeviceType`.
    pub device_type: i32,
    /// The device ordinal.
    pub device_id: i32,
}

/// `DLDataType`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DLDataType {
    /// `DLDataTypeCode`.
    pub code: u8,
    /// Bits per lane.
    pub bits: u8,
    /// Lanes (1: scalars).
    pub lanes: u16,
}

/// `DLTensor`.
#[repr(C)]
pub struct DLTensor {
    /// The data: a pointer, or an opaque handle (a `cl_mem` for OpenCL).
    pub data: *mut c_void,
    /// Where it lives.
    pub device: DLDevice,
    /// Number of dimensions.
    pub ndim: i32,
    /// Element type.
    pub dtype: DLDataType,
    /// `ndim` extents.
    pub shape: *mut i64,
    /// `ndim` strides in elements, or null for compact row-major.
    pub strides: *mut i64,
    /// Bytes from `data` to the first element.
    pub byte_offset: u64,
}

/// `DLManagedTensor` (the legacy, unversioned capsule payload).
#[repr(C)]
pub struct DLManagedTensor {
    /// The tensor.
    pub dl_tensor: DLTensor,
    /// The producer's context.
    pub manager_ctx: *mut c_void,
    /// Frees it; null when there is nothing to free.
    pub deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

/// `DLPackVersion`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DLPackVersion {
    /// Major version (1).
    pub major: u32,
    /// Minor version.
    pub minor: u32,
}

/// `DLManagedTensorVersioned`.
#[repr(C)]
pub struct DLManagedTensorVersioned {
    /// Version of this structure.
    pub version: DLPackVersion,
    /// The producer's context.
    pub manager_ctx: *mut c_void,
    /// Frees it; null when there is nothing to free.
    pub deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
    /// `DLPACK_FLAG_*`.
    pub flags: u64,
    /// The tensor.
    pub dl_tensor: DLTensor,
}

/// Every technology this door handles (its DLPack device type below, its data handle in
/// `view.rs`), matched without a wildcard: a technology added to locus does not compile
/// here until it is handled (checked at compile time; nothing runs).
const _: fn(locus::Technology) = |technology| match technology {
    locus::Technology::Host
    | locus::Technology::OpenMp
    | locus::Technology::OpenCl
    | locus::Technology::Cuda
    | locus::Technology::Hip
    | locus::Technology::Sycl
    | locus::Technology::WebGpu => {}
};

/// The DLPack device of memory at `location` (its ordinal as the device id): every
/// location matched, so a technology added to locus is a compile error here.
pub fn device_of_location(location: Location, native: Option<&Native>) -> DLDevice {
    let ordinal = |n: u32| n as i32;
    let (device_type, device_id) = match location {
        Location::Host => (DL_CPU, 0),
        Location::OpenMp(n) => match native {
            Some(Native::OpenMp { .. }) | None if on_host(location) => (DL_CPU, 0),
            _ => (DL_EXT_DEV, ordinal(n)),
        },
        Location::OpenCl(n) => (DL_OPENCL, ordinal(n)),
        Location::Sycl(n) => (DL_ONEAPI, ordinal(n)),
        Location::WebGpu(n) => (DL_VULKAN, ordinal(n)),
        Location::Cuda(n) => match native {
            Some(Native::Cuda { kind, .. }) => (
                match kind {
                    locus::GpuMemory::Device | locus::GpuMemory::StreamOrdered => DL_CUDA,
                    locus::GpuMemory::Pinned => DL_CUDA_HOST,
                    locus::GpuMemory::Managed => DL_CUDA_MANAGED,
                },
                ordinal(n),
            ),
            _ => (DL_CUDA, ordinal(n)),
        },
        Location::Hip(n) => match native {
            Some(Native::Hip {
                kind: locus::GpuMemory::Pinned,
                ..
            }) => (DL_ROCM_HOST, ordinal(n)),
            _ => (DL_ROCM, ordinal(n)),
        },
    };
    DLDevice {
        device_type,
        device_id,
    }
}

fn on_host(location: Location) -> bool {
    locus::registry()
        .device(location)
        .is_ok_and(|d| d.executes_on_host())
}

/// The location that memory of a DLPack device lives at.
pub fn location_of_device(device: DLDevice) -> PyResult<Location> {
    let id = u32::try_from(device.device_id).map_err(|_| {
        PyValueError::new_err(format!("negative DLPack device id {}", device.device_id))
    })?;
    Ok(match device.device_type {
        DL_CPU => Location::Host,
        DL_CUDA | DL_CUDA_HOST | DL_CUDA_MANAGED => Location::Cuda(id),
        DL_ROCM | DL_ROCM_HOST => Location::Hip(id),
        DL_OPENCL => Location::OpenCl(id),
        DL_ONEAPI => Location::Sycl(id),
        DL_VULKAN => Location::WebGpu(id),
        DL_EXT_DEV => Location::OpenMp(id),
        other => {
            return Err(PyBufferError::new_err(format!(
                "DLPack device type {other} has no locus location (locus knows CPU 1, CUDA 2/3/13, \
                 OpenCL 4, Vulkan 7, ROCm 10/11, ext_dev (OpenMP) 12, oneAPI 14)"
            )))
        }
    })
}

/// DLPack's `stream=` for a producer on `device`: locus's own stream of that CUDA or
/// ROCm device (the producer makes it wait for its pending work on the memory, so
/// nothing locus then queues there reads unfinished data), `None` for every other
/// device. A CUDA or ROCm device locus does not have is an error before the producer is
/// asked for anything.
pub fn consumer_stream(device: DLDevice) -> PyResult<Option<u64>> {
    let location = match device.device_type {
        DL_CUDA | DL_CUDA_MANAGED | DL_ROCM => location_of_device(device)?,
        _ => return Ok(None),
    };
    match location {
        Location::Cuda(_) => locus::device_as::<locus::backends::cuda::CudaDevice>(location)
            .map(|d| Some(d.consumer_stream())),
        _ => locus::device_as::<locus::backends::hip::HipDevice>(location)
            .map(|d| Some(d.consumer_stream())),
    }
    .map_err(crate::py_err)
}

/// The native handle for adopting `data` (already offset) at `location` of DLPack
/// device `device`.
pub fn native_for(
    location: Location,
    device: DLDevice,
    data: *mut u8,
    byte_offset: u64,
) -> PyResult<Native> {
    let refuse = |why: &str| {
        PyBufferError::new_err(format!("cannot adopt DLPack memory at {location}: {why}"))
    };
    Ok(match location {
        Location::Host => Native::Host {
            ptr: data.wrapping_add(byte_offset as usize),
        },
        Location::OpenMp(n) => Native::OpenMp {
            ptr: data.wrapping_add(byte_offset as usize),
            device: n as i32,
        },
        Location::OpenCl(_) => Native::OpenCl {
            mem: data.cast(),
            offset: byte_offset as usize,
        },
        Location::Sycl(_) => Native::Sycl {
            ptr: data.wrapping_add(byte_offset as usize),
            kind: locus::backends::sycl::UsmKind::Device,
        },
        Location::Cuda(_) => Native::Cuda {
            ptr: data as u64 + byte_offset,
            kind: match device.device_type {
                DL_CUDA_HOST => locus::GpuMemory::Pinned,
                DL_CUDA_MANAGED => locus::GpuMemory::Managed,
                _ => locus::GpuMemory::Device,
            },
        },
        Location::Hip(_) => Native::Hip {
            ptr: data as u64 + byte_offset,
            kind: match device.device_type {
                DL_ROCM_HOST => locus::GpuMemory::Pinned,
                _ => locus::GpuMemory::Device,
            },
        },
        Location::WebGpu(_) => {
            return Err(refuse(
                "Vulkan memory from another library cannot become a wgpu buffer (only \
                 buffers locus itself exported come back); copy it to the host first",
            ))
        }
        #[allow(unreachable_patterns)]
        _ => return Err(refuse(
            "locus does not adopt DLPack memory of this technology yet; copy it to the host first",
        )),
    })
}

/// A DLPack tensor taken out of a capsule: the fields locus needs, and the deleter to
/// run when the adopted memory is no longer used.
pub struct Imported {
    /// Where the data lives.
    pub device: DLDevice,
    /// Data handle (before `byte_offset`).
    pub data: *mut u8,
    /// Bytes to the first element.
    pub byte_offset: u64,
    /// Extents.
    pub shape: Vec<i64>,
    /// Strides in elements (`None`: compact row-major).
    pub strides: Option<Vec<i64>>,
    /// Element type.
    pub dtype: DLDataType,
    /// True when the producer marked it read-only.
    pub read_only: bool,
    /// Frees the producer's tensor.
    pub owner: Owner,
}

/// The producer's managed tensor, freed (by its own deleter) on drop.
pub enum Owner {
    /// A legacy tensor.
    Legacy(*mut DLManagedTensor),
    /// A versioned tensor.
    Versioned(*mut DLManagedTensorVersioned),
}

// SAFETY: DLPack requires the deleter to be callable from any thread; the pointer is
// only dereferenced by that call, once.
unsafe impl Send for Owner {}
// SAFETY: shared references give no access to the pointer.
unsafe impl Sync for Owner {}

impl Drop for Owner {
    fn drop(&mut self) {
        // SAFETY: the tensor came from a capsule we consumed (renamed to "used_..."), so we
        // own it and call its deleter exactly once, here.
        unsafe {
            match *self {
                Owner::Legacy(t) => {
                    if let Some(d) = (*t).deleter {
                        d(t)
                    }
                }
                Owner::Versioned(t) => {
                    if let Some(d) = (*t).deleter {
                        d(t)
                    }
                }
            }
        }
    }
}

/// The most dimensions a tensor may have (DLPack sets no limit; numpy's is 64).
const MAX_NDIM: i32 = 64;

/// The shape and strides of `tensor`, read only once its header is known to be
/// consistent: `ndim` within 0..=64, non-null `shape` (and `strides` when given) for
/// `ndim > 0`, no negative extent, `data + byte_offset` not wrapping, a known element
/// type. A forged capsule is a clean Python exception, not a read through a bad pointer.
///
/// # Safety
/// `tensor.shape` and `tensor.strides`, when non-null, point to `ndim` readable `i64`s
/// (the DLPack contract; nothing else about a capsule can be checked).
unsafe fn checked_layout(tensor: &DLTensor) -> PyResult<(Vec<i64>, Option<Vec<i64>>)> {
    if !(0..=MAX_NDIM).contains(&tensor.ndim) {
        return Err(PyValueError::new_err(format!(
            "DLPack tensor with ndim = {}: expected 0..={MAX_NDIM}",
            tensor.ndim
        )));
    }
    let ndim = tensor.ndim as usize;
    if ndim > 0 && tensor.shape.is_null() {
        return Err(PyValueError::new_err(format!(
            "DLPack tensor with ndim = {ndim} and a null shape pointer: a malformed capsule"
        )));
    }
    crate::dtype::DType::from_dlpack(tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes)?;
    if (tensor.data as u64)
        .checked_add(tensor.byte_offset)
        .is_none()
        || tensor.byte_offset > isize::MAX as u64
    {
        return Err(PyValueError::new_err(format!(
            "DLPack tensor with data {:p} and byte_offset {}: the address wraps",
            tensor.data, tensor.byte_offset
        )));
    }
    let shape = if ndim == 0 {
        Vec::new()
    } else {
        // SAFETY: non-null, `ndim` extents by the caller's contract.
        unsafe { std::slice::from_raw_parts(tensor.shape, ndim) }.to_vec()
    };
    if let Some(bad) = shape.iter().find(|&&d| d < 0) {
        return Err(PyValueError::new_err(format!(
            "DLPack tensor with shape {shape:?}: extent {bad} is negative"
        )));
    }
    let strides = if tensor.strides.is_null() || ndim == 0 {
        None
    } else {
        // SAFETY: non-null, `ndim` strides by the caller's contract.
        Some(unsafe { std::slice::from_raw_parts(tensor.strides, ndim) }.to_vec())
    };
    Ok((shape, strides))
}

/// Takes the tensor out of a DLPack capsule and marks the capsule used. Refuses a
/// capsule that was already consumed, and a versioned tensor of an unknown major version.
pub fn consume(capsule: &Bound<'_, PyAny>) -> PyResult<Imported> {
    let ptr = capsule.as_ptr();
    // SAFETY: `ptr` is a live Python object (borrowed from `capsule`); the capsule API
    // checks its type and name before handing out the pointer, and we hold the GIL.
    unsafe {
        if ffi::PyCapsule_CheckExact(ptr) == 0 {
            return Err(PyValueError::new_err(format!(
                "expected a DLPack capsule or an object with __dlpack__, got {}",
                capsule.get_type().name()?
            )));
        }
        let name = ffi::PyCapsule_GetName(ptr);
        if name.is_null() {
            ffi::PyErr_Clear();
        }
        let name = if name.is_null() {
            c""
        } else {
            CStr::from_ptr(name)
        };
        if name == USED_LEGACY || name == USED_VERSIONED {
            return Err(PyBufferError::new_err(
                "this DLPack capsule was already consumed: a capsule can be consumed once; ask the producer for a new one",
            ));
        }
        let versioned = if name == VERSIONED {
            true
        } else if name == LEGACY {
            false
        } else {
            return Err(PyValueError::new_err(format!(
                "not a DLPack capsule (its name is {name:?}, not \"dltensor\" or \"dltensor_versioned\")"
            )));
        };
        let raw = ffi::PyCapsule_GetPointer(ptr, name.as_ptr());
        if raw.is_null() {
            return Err(PyErr::fetch(capsule.py()));
        }
        let (tensor, owner, read_only) = if versioned {
            let t = raw.cast::<DLManagedTensorVersioned>();
            let owner = Owner::Versioned(t);
            if (*t).version.major != 1 {
                let major = (*t).version.major;
                ffi::PyCapsule_SetName(ptr, USED_VERSIONED.as_ptr());
                drop(owner);
                return Err(PyBufferError::new_err(format!(
                    "DLPack major version {major} is not supported (locus reads 1.x)"
                )));
            }
            (
                &(*t).dl_tensor as *const DLTensor,
                owner,
                (*t).flags & FLAG_READ_ONLY != 0,
            )
        } else {
            let t = raw.cast::<DLManagedTensor>();
            (&(*t).dl_tensor as *const DLTensor, Owner::Legacy(t), false)
        };
        let tensor = &*tensor;
        let (shape, strides) = match checked_layout(tensor) {
            Ok(layout) => layout,
            Err(e) => {
                // Refused before anything it points to was read; the capsule stays the
                // producer's (unconsumed), and its own destructor frees the tensor.
                std::mem::forget(owner);
                return Err(e);
            }
        };
        let imported = Imported {
            device: tensor.device,
            data: tensor.data.cast(),
            byte_offset: tensor.byte_offset,
            shape,
            strides,
            dtype: tensor.dtype,
            read_only,
            owner,
        };
        let used = if versioned {
            USED_VERSIONED
        } else {
            USED_LEGACY
        };
        if ffi::PyCapsule_SetName(ptr, used.as_ptr()) != 0 {
            // Renaming failed: leave the tensor to the capsule's own destructor.
            std::mem::forget(imported.owner);
            return Err(PyErr::fetch(capsule.py()));
        }
        Ok(imported)
    }
}
