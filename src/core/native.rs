//! [`Native`]: the handle of one allocation, per technology, and the allocation kinds
//! its variants carry. Users match on it to hand the raw handle to their own kernels.

use std::fmt;

use super::location::Technology;

/// The kind of a CUDA or HIP allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuMemory {
    /// Device memory (`cuMemAlloc`, `hipMalloc`).
    Device,
    /// Page-locked host memory (`cuMemAllocHost`, `hipHostMalloc`): usable in place by
    /// the host and by the device.
    Pinned,
    /// Managed (unified) memory (`cuMemAllocManaged`, `hipMallocManaged`): usable in
    /// place by the host only when the device reports concurrent managed access.
    Managed,
    /// Device memory from locus's own stream-ordered pool of the device
    /// (`cuMemAllocFromPoolAsync` / `hipMallocFromPoolAsync` on the device's stream,
    /// freed by `cuMemFreeAsync` / `hipFreeAsync` there).
    StreamOrdered,
}

impl GpuMemory {
    /// The [`MemoryKind`] this allocation kind is.
    pub fn memory_kind(self) -> MemoryKind {
        match self {
            GpuMemory::Device => MemoryKind::Default,
            GpuMemory::Pinned => MemoryKind::PinnedHost,
            GpuMemory::Managed => MemoryKind::Managed,
            GpuMemory::StreamOrdered => MemoryKind::StreamOrdered,
        }
    }
}

/// The kind of memory an allocation is, named alike at every location; each location
/// offers some ([`MemoryKinds`](super::capability::MemoryKinds)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemoryKind {
    /// The location's ordinary memory (what [`Memory::new`](super::memory::Memory) gives).
    Default,
    /// Page-locked host memory of a CUDA / HIP device (`cuMemAllocHost`,
    /// `hipHostMalloc`): used in place by the host and by that device.
    PinnedHost,
    /// Managed (unified) memory of a CUDA / HIP device (`cuMemAllocManaged`,
    /// `hipMallocManaged`).
    Managed,
    /// SYCL USM device memory (`malloc_device`).
    UsmDevice,
    /// SYCL USM shared memory (`malloc_shared`): used in place by the host and the device.
    UsmShared,
    /// SYCL USM host memory (`malloc_host`): host memory the device reads in place.
    UsmHost,
    /// Device memory from a stream-ordered pool of locus's own (RMM's
    /// `cuda_async_memory_resource`, which makes its own pool too): allocated and freed
    /// in stream order on the device's stream, where the driver has memory pools
    /// (CUDA 11.2+, ROCm 5.1+). The device's default pool, which CuPy's and PyTorch's
    /// stream-ordered allocators share, is left as they set it.
    StreamOrdered,
    /// An OpenCL buffer the runtime places in host-accessible memory
    /// (`CL_MEM_ALLOC_HOST_PTR`; pinned on a discrete GPU): the host maps it in place.
    HostVisible,
    /// OpenCL coarse-grained shared virtual memory (`clSVMAlloc`), as a buffer object
    /// over it: one address for the host and the device; the host maps it in place.
    SvmCoarse,
    /// OpenCL fine-grained buffer SVM (`CL_MEM_SVM_FINE_GRAIN_BUFFER`), where the device
    /// offers it: as [`MemoryKind::SvmCoarse`], and coherent while kernels run.
    SvmFine,
}

impl MemoryKind {
    /// Every kind.
    pub const ALL: [MemoryKind; 10] = [
        MemoryKind::Default,
        MemoryKind::PinnedHost,
        MemoryKind::Managed,
        MemoryKind::UsmDevice,
        MemoryKind::UsmShared,
        MemoryKind::UsmHost,
        MemoryKind::StreamOrdered,
        MemoryKind::HostVisible,
        MemoryKind::SvmCoarse,
        MemoryKind::SvmFine,
    ];

    /// Lower-case name (`pinned-host`, `usm-shared`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            MemoryKind::Default => "default",
            MemoryKind::PinnedHost => "pinned-host",
            MemoryKind::Managed => "managed",
            MemoryKind::UsmDevice => "usm-device",
            MemoryKind::UsmShared => "usm-shared",
            MemoryKind::UsmHost => "usm-host",
            MemoryKind::StreamOrdered => "stream-ordered",
            MemoryKind::HostVisible => "host-visible",
            MemoryKind::SvmCoarse => "svm-coarse",
            MemoryKind::SvmFine => "svm-fine",
        }
    }
}

impl std::fmt::Display for MemoryKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The kind of a SYCL USM allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UsmKind {
    /// `sycl::malloc_device`: device memory.
    Device,
    /// `sycl::malloc_shared`: migrates between host and device.
    Shared,
    /// `sycl::malloc_host`: host memory the device can read.
    Host,
}

impl UsmKind {
    /// The [`MemoryKind`] this USM kind is.
    pub fn memory_kind(self) -> MemoryKind {
        match self {
            UsmKind::Device => MemoryKind::UsmDevice,
            UsmKind::Shared => MemoryKind::UsmShared,
            UsmKind::Host => MemoryKind::UsmHost,
        }
    }

    /// Lower-case name (`device`, `shared`, `host`).
    pub fn name(self) -> &'static str {
        match self {
            UsmKind::Device => "device",
            UsmKind::Shared => "shared",
            UsmKind::Host => "host",
        }
    }
}

/// The native handle of one allocation, per technology.
///
/// Pointers here are raw: they stay valid while the owning [`Memory`](super::memory::Memory) lives.
#[non_exhaustive]
pub enum Native {
    /// Host memory.
    Host {
        /// Start of the allocation.
        ptr: *mut u8,
    },
    /// Memory from `omp_target_alloc`.
    #[cfg(feature = "openmp")]
    OpenMp {
        /// The device pointer (a host address on the initial device).
        ptr: *mut u8,
        /// The OpenMP device number it belongs to (pass it to `device(...)` clauses).
        device: i32,
    },
    /// A range of an OpenCL buffer object.
    #[cfg(feature = "opencl")]
    OpenCl {
        /// The `cl_mem` handle.
        mem: opencl3::types::cl_mem,
        /// Where this allocation starts inside it (non-zero for pool sub-allocations:
        /// OpenCL calls take it as their offset; kernels get a sub-buffer of the range).
        offset: usize,
    },
    /// CUDA memory (device, pinned host or managed).
    #[cfg(feature = "cuda")]
    Cuda {
        /// The device address (a host address too for pinned and managed memory).
        ptr: u64,
        /// Which kind of allocation.
        kind: GpuMemory,
    },
    /// HIP memory (device, pinned host or managed).
    #[cfg(feature = "hip")]
    Hip {
        /// The device address (a host address too for pinned and managed memory).
        ptr: u64,
        /// Which kind of allocation.
        kind: GpuMemory,
    },
    /// SYCL unified shared memory.
    #[cfg(feature = "sycl")]
    Sycl {
        /// The USM pointer.
        ptr: *mut u8,
        /// Device, shared or host USM.
        kind: UsmKind,
    },
    /// A range of a wgpu storage buffer (usage STORAGE | COPY_SRC | COPY_DST).
    #[cfg(feature = "webgpu")]
    WebGpu {
        /// The buffer; its size is rounded up to a multiple of 4 bytes. Shared (one
        /// reference count) by the pool's sub-allocations of it.
        buffer: std::sync::Arc<wgpu::Buffer>,
        /// Where this allocation starts inside it (non-zero for pool sub-allocations;
        /// a multiple of the storage-buffer offset alignment).
        offset: u64,
    },
}

// SAFETY: the raw pointers in `Native` are plain addresses of memory owned by one
// `Memory`; every runtime used here (libgomp, OpenCL 1.2+, wgpu) allows its handles to be
// used from any thread. Synchronisation of the *contents* is the job of the borrow rules
// on `Buffer` and of the blocking calls in each backend.
unsafe impl Send for Native {}
// SAFETY: see `Send` above; no method mutates the handle itself.
unsafe impl Sync for Native {}

impl Native {
    /// A second handle to the same memory (no reference is taken: the owner of the
    /// original keeps the memory alive; a wgpu buffer handle is cloned). For bindings
    /// that adopt memory locus exported (`Memory::adopt` is the unsafe step).
    pub fn duplicate(&self) -> Native {
        match self {
            Native::Host { ptr } => Native::Host { ptr: *ptr },
            #[cfg(feature = "cuda")]
            Native::Cuda { ptr, kind } => Native::Cuda {
                ptr: *ptr,
                kind: *kind,
            },
            #[cfg(feature = "hip")]
            Native::Hip { ptr, kind } => Native::Hip {
                ptr: *ptr,
                kind: *kind,
            },
            #[cfg(feature = "openmp")]
            Native::OpenMp { ptr, device } => Native::OpenMp {
                ptr: *ptr,
                device: *device,
            },
            #[cfg(feature = "opencl")]
            Native::OpenCl { mem, offset } => Native::OpenCl {
                mem: *mem,
                offset: *offset,
            },
            #[cfg(feature = "sycl")]
            Native::Sycl { ptr, kind } => Native::Sycl {
                ptr: *ptr,
                kind: *kind,
            },
            #[cfg(feature = "webgpu")]
            Native::WebGpu { buffer, offset } => Native::WebGpu {
                buffer: buffer.clone(),
                offset: *offset,
            },
        }
    }

    /// The number alignment is measured on: the address for pointer handles (host,
    /// OpenMP, CUDA, HIP, SYCL USM); for buffer objects (OpenCL, WebGPU), whose device
    /// address a program cannot see, the offset inside the object (the runtime aligns
    /// the object itself: OpenCL to `CL_DEVICE_MEM_BASE_ADDR_ALIGN`, a wgpu storage
    /// binding to its offset alignment). umem's `aligned_origin` and `connect` test
    /// alignment on it.
    pub fn address(&self) -> u64 {
        match *self {
            Native::Host { ptr } => ptr as u64,
            #[cfg(feature = "openmp")]
            Native::OpenMp { ptr, .. } => ptr as u64,
            #[cfg(feature = "opencl")]
            Native::OpenCl { offset, .. } => offset as u64,
            #[cfg(feature = "cuda")]
            Native::Cuda { ptr, .. } => ptr,
            #[cfg(feature = "hip")]
            Native::Hip { ptr, .. } => ptr,
            #[cfg(feature = "sycl")]
            Native::Sycl { ptr, .. } => ptr as u64,
            #[cfg(feature = "webgpu")]
            Native::WebGpu { offset, .. } => offset,
        }
    }

    /// Whether the handle is an address programs use (host, OpenMP, CUDA, HIP, SYCL USM),
    /// rather than a buffer object (OpenCL, WebGPU), whose [`Native::address`] is an
    /// offset inside the object.
    pub fn is_pointer(&self) -> bool {
        match self {
            #[cfg(feature = "opencl")]
            Native::OpenCl { .. } => false,
            #[cfg(feature = "webgpu")]
            Native::WebGpu { .. } => false,
            _ => true,
        }
    }

    /// The kind of memory the handle says it is: CUDA's and HIP's allocation kinds and
    /// SYCL's USM kinds by name; [`MemoryKind::Default`] for the others (a handle of an
    /// OpenCL buffer does not carry its flags).
    pub fn memory_kind(&self) -> MemoryKind {
        match *self {
            #[cfg(feature = "cuda")]
            Native::Cuda { kind, .. } => kind.memory_kind(),
            #[cfg(feature = "hip")]
            Native::Hip { kind, .. } => kind.memory_kind(),
            #[cfg(feature = "sycl")]
            Native::Sycl { kind, .. } => kind.memory_kind(),
            _ => MemoryKind::Default,
        }
    }

    /// A key that no other live allocation of the same location shares: the buffer
    /// object (0 for pointer handles) and [`Native::address`]. Resources that keep
    /// records of blocks (tracking, logging) key them on it.
    pub fn key(&self) -> (u64, u64) {
        let object = match self {
            #[cfg(feature = "opencl")]
            Native::OpenCl { mem, .. } => *mem as u64,
            #[cfg(feature = "webgpu")]
            Native::WebGpu { buffer, .. } => std::sync::Arc::as_ptr(buffer) as u64,
            _ => 0,
        };
        (object, self.address())
    }

    /// The technology this handle belongs to.
    pub fn technology(&self) -> Technology {
        match self {
            Native::Host { .. } => Technology::Host,
            #[cfg(feature = "openmp")]
            Native::OpenMp { .. } => Technology::OpenMp,
            #[cfg(feature = "opencl")]
            Native::OpenCl { .. } => Technology::OpenCl,
            #[cfg(feature = "cuda")]
            Native::Cuda { .. } => Technology::Cuda,
            #[cfg(feature = "hip")]
            Native::Hip { .. } => Technology::Hip,
            #[cfg(feature = "sycl")]
            Native::Sycl { .. } => Technology::Sycl,
            #[cfg(feature = "webgpu")]
            Native::WebGpu { .. } => Technology::WebGpu,
        }
    }
}

impl fmt::Debug for Native {
    /// The handle's value (the address or object it names), so that two handles to the
    /// same memory print the same.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Native::Host { ptr } => write!(f, "Host({ptr:p})"),
            #[cfg(feature = "openmp")]
            Native::OpenMp { ptr, device } => write!(f, "OpenMp({ptr:p}, device {device})"),
            #[cfg(feature = "opencl")]
            Native::OpenCl { mem, offset } => write!(f, "OpenCl(cl_mem {mem:p} + {offset})"),
            #[cfg(feature = "cuda")]
            Native::Cuda { ptr, kind } => write!(f, "Cuda({ptr:#x}, {kind:?})"),
            #[cfg(feature = "hip")]
            Native::Hip { ptr, kind } => write!(f, "Hip({ptr:#x}, {kind:?})"),
            #[cfg(feature = "sycl")]
            Native::Sycl { ptr, kind } => write!(f, "Sycl({ptr:p}, {kind:?} USM)"),
            #[cfg(feature = "webgpu")]
            Native::WebGpu { ref buffer, offset } => write!(
                f,
                "WebGpu(buffer {:p} of {} bytes + {offset})",
                std::sync::Arc::as_ptr(buffer),
                buffer.size()
            ),
        }
    }
}

#[cfg(test)]
mod native_debug_tests {
    use super::Native;

    #[test]
    fn debug_prints_the_handle_not_where_it_is_stored() {
        let at = 0x1000 as *mut u8;
        let (a, b) = (Native::Host { ptr: at }, Native::Host { ptr: at });
        assert_eq!(format!("{a:?}"), "Host(0x1000)");
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
        #[cfg(feature = "opencl")]
        assert_eq!(
            format!(
                "{:?}",
                Native::OpenCl {
                    mem: 0x2000 as opencl3::types::cl_mem,
                    offset: 64
                }
            ),
            "OpenCl(cl_mem 0x2000 + 64)"
        );
    }
}
