//! OpenCL memory kinds beyond the default buffer: host-visible buffers
//! (`CL_MEM_ALLOC_HOST_PTR`) and shared virtual memory (`clSVMAlloc`, coarse- or
//! fine-grained, OpenCL 2.0), each made a buffer object (SVM through
//! `CL_MEM_USE_HOST_PTR` over the SVM pointer), so that every copy, map and kernel of the
//! backend works on them as on any buffer. An SVM allocation is freed after its buffer.

use opencl3::device::{CL_DEVICE_SVM_COARSE_GRAIN_BUFFER, CL_DEVICE_SVM_FINE_GRAIN_BUFFER};
use opencl3::memory::{svm_alloc, svm_free, CL_MEM_SVM_FINE_GRAIN_BUFFER, CL_MEM_USE_HOST_PTR};

use super::*;

/// Alignment asked of `clSVMAlloc`: 0, the runtime's own (the size of the largest data
/// type the device supports). OpenCL refuses more than that (128 bytes for `long16`),
/// and locus's ALIGNMENT is 256; the SVM pointer is never a locus address anyway (the
/// buffer object made over it is, with offsets from 0).
const SVM_ALIGNMENT: u32 = 0;

/// What a buffer of a kind other than the default was made from: the SVM allocation
/// under it (its address; 0 for a host-visible buffer), to free after the buffer.
#[derive(Clone, Copy)]
pub(super) struct Made {
    svm: usize,
}

impl OpenClDevice {
    /// The kinds this device offers: the default, host-visible buffers, and the SVM
    /// kinds its `CL_DEVICE_SVM_CAPABILITIES` name (none on OpenCL 1.x).
    pub(super) fn offered_kinds(&self) -> Vec<MemoryKind> {
        let svm = self.device.svm_mem_capability();
        let mut kinds = vec![MemoryKind::Default, MemoryKind::HostVisible];
        if svm & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER != 0 {
            kinds.push(MemoryKind::SvmCoarse);
        }
        if svm & CL_DEVICE_SVM_FINE_GRAIN_BUFFER != 0 {
            kinds.push(MemoryKind::SvmFine);
        }
        kinds
    }

    /// A buffer of `kind` (not the default) of `bytes`.
    pub(super) fn allocate_made(&self, bytes: usize, kind: MemoryKind) -> Result<Native> {
        let bytes = bytes.max(1); // OpenCL rejects size 0
        let offered = self.offered_kinds();
        let svm_flags = match kind {
            MemoryKind::HostVisible => None,
            MemoryKind::SvmCoarse if offered.contains(&kind) => Some(CL_MEM_READ_WRITE),
            MemoryKind::SvmFine if offered.contains(&kind) => {
                Some(CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER)
            }
            other => {
                return Err(crate::core::device::unsupported_kind(
                    self.location,
                    other,
                    &offered,
                ))
            }
        };
        let (mem, svm) = match svm_flags {
            None => {
                // SAFETY: a valid context, no host pointer, a non-zero size.
                let mem = unsafe {
                    create_buffer(
                        self.context.get(),
                        CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                        bytes,
                        ptr::null_mut(),
                    )
                }
                .map_err(|code| self.fail("clCreateBuffer", code).asking_for(bytes))?;
                (mem, 0)
            }
            Some(flags) => {
                let svm = {
                    let _one_at_a_time = self.svm.lock().unwrap_or_else(|e| e.into_inner());
                    // SAFETY: a valid context and flags; a null result is an error.
                    let first =
                        unsafe { svm_alloc(self.context.get(), flags, bytes, SVM_ALIGNMENT) };
                    first.or_else(|_| {
                        // Once more after the queue drains (frees wait on it).
                        let _ = self.queue.finish();
                        // SAFETY: as above.
                        unsafe { svm_alloc(self.context.get(), flags, bytes, SVM_ALIGNMENT) }
                    })
                }
                .map_err(|_| Error::OutOfMemory {
                    location: self.location,
                    requested: bytes,
                    by: "clSVMAlloc".into(),
                    reason: format!("no {kind} memory of {bytes} bytes was returned"),
                })?;
                // SAFETY: `svm` is `bytes` of SVM of this context, alive until freed after
                // the buffer (OpenCL 2.0: a buffer over an SVM pointer uses that memory).
                let made = unsafe {
                    create_buffer(
                        self.context.get(),
                        CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR,
                        bytes,
                        svm,
                    )
                };
                match made {
                    Ok(mem) => (mem, svm as usize),
                    Err(code) => {
                        let _one_at_a_time = self.svm.lock().unwrap_or_else(|e| e.into_inner());
                        // SAFETY: allocated above, used by nothing.
                        let _ = unsafe { svm_free(self.context.get(), svm) };
                        return Err(self.fail("clCreateBuffer (over SVM)", code));
                    }
                }
            }
        };
        self.live.fetch_add(1, Ordering::Relaxed);
        super::remember_made(mem);
        self.made
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(mem as usize, Made { svm });
        Ok(Native::OpenCl { mem, offset: 0 })
    }

    /// The kind `mem` was made as, if not the default.
    pub(super) fn made_as(&self, mem: cl_mem) -> Option<Made> {
        let made = self.made.lock().unwrap_or_else(|e| e.into_inner());
        if made.is_empty() {
            return None;
        }
        made.get(&(mem as usize)).copied()
    }

    /// Forgets `mem` (being freed) and frees its SVM allocation, if it has one, after
    /// the buffer: the caller releases the buffer first.
    ///
    /// # Safety
    /// `mem` was released and nothing uses its memory.
    pub(super) unsafe fn forget_made(&self, mem: cl_mem) {
        let made = self
            .made
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&(mem as usize));
        if let Some(Made { svm, .. }) = made.filter(|m| m.svm != 0) {
            // The buffer over it may still have commands in flight: they finish first.
            let _ = self.queue.finish();
            let _one_at_a_time = self.svm.lock().unwrap_or_else(|e| e.into_inner());
            // SAFETY: `svm` came from `clSVMAlloc` in this context and its buffer is
            // released with no command left (the caller's contract, and the finish).
            let _ = unsafe { svm_free(self.context.get(), svm as *mut c_void) };
        }
    }
}
