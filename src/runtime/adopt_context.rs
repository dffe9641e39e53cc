//! An application's own runtime objects joining locus: its OpenCL context or SYCL
//! context as a location of its own (`adopt_opencl_context`, `adopt_sycl_context`), and
//! its OpenCL buffers wrapped in place (`Memory::adopt_opencl_buffer`; USM pointers of an
//! adopted SYCL context are adopted as any USM is, with `Memory::adopt`). A context is
//! adopted once: adopting it again, or a buffer of it, finds its location.

use std::ffi::c_void;
use std::sync::Arc;

use super::registry::registry;
#[cfg(feature = "opencl")]
use crate::backends::opencl::{buffer_facts, OpenClDevice};
use crate::core::device::Device;
use crate::core::error::Result;
use crate::core::location::{Location, Technology};
#[cfg(feature = "opencl")]
use crate::core::{error::Error, memory::Memory, native::Native};

/// The location of `device` in the application's OpenCL `context`: the location locus
/// already has for that context and device (its own context, or one adopted before), or a
/// new location (`opencl:N`, numbered after every OpenCL location so far) that answers
/// every question a discovered one does (`is_accessible_from`, routes to and from every
/// location, `locus info`, bench). locus retains the context (`clRetainContext`) for the
/// life of the process, and makes an in-order queue of its own in it; the application's
/// queues of that context are adopted with [`Queue::from_native`], its buffers
/// wrapped with [`Memory::adopt_opencl_buffer`].
///
/// [`Queue::from_native`]: crate::Queue::from_native
///
/// # Safety
/// `context` is a live `cl_context` and `device` a `cl_device_id` (checked to be one of
/// the context's devices).
#[cfg(feature = "opencl")]
pub unsafe fn adopt_opencl_context(context: *mut c_void, device: *mut c_void) -> Result<Location> {
    let wanted = (context as usize, device as usize);
    let same = |d: &Arc<dyn Device>| {
        let d: Arc<dyn Device> = Arc::clone(d);
        let d: Arc<dyn std::any::Any + Send + Sync> = d;
        d.downcast::<OpenClDevice>()
            .is_ok_and(|d| d.context_and_device() == wanted)
    };
    registry().adopt(Technology::OpenCl, same, |location| {
        // SAFETY: forwarded from this function's contract.
        let adopted = unsafe { OpenClDevice::adopt_context(location, context, device) }?;
        Ok(Arc::new(adopted) as Arc<dyn Device>)
    })
}

#[cfg(feature = "opencl")]
impl Memory {
    /// Wraps the application's OpenCL buffer `mem` in place, as memory of the location of
    /// its context (adopted now if locus did not know it; a context of several devices
    /// counts as its first device): nothing is copied, locus retains the buffer
    /// (`clRetainMemObject`) and releases it when this memory is dropped, so the
    /// application may release its own reference at any time. The memory copies to and
    /// from every location like any other.
    ///
    /// # Safety
    /// `mem` is a live `cl_mem` (OpenCL cannot tell a memory object from any other
    /// pointer: a wrong one crashes inside the ICD loader).
    pub unsafe fn adopt_opencl_buffer(mem: *mut c_void) -> Result<Memory> {
        let mem = mem as opencl3::types::cl_mem;
        // SAFETY: a live cl_mem, per this function's contract.
        let (context, device, len) = unsafe { buffer_facts(mem) }?;
        if len == 0 || device.is_null() {
            return Err(Error::Invalid(format!(
                "OpenCL buffer {mem:?}: its context has no device or the buffer no bytes; nothing to wrap"
            )));
        }
        // SAFETY: the buffer's own context (it answered), and one of its devices.
        let location = unsafe { adopt_opencl_context(context.cast(), device.cast()) }?;
        // SAFETY: a live buffer; this reference is released by the deleter below.
        unsafe { cl3::memory::retain_mem_object(mem) }.map_err(|code| {
            Error::Invalid(format!(
                "{location}: clRetainMemObject on {mem:?} returned {code}"
            ))
        })?;
        let native = Native::OpenCl { mem, offset: 0 };
        // SAFETY: a buffer of `location`'s context (its context found the location) of
        // `len` bytes, kept alive by the reference taken above until the deleter runs.
        unsafe {
            Memory::adopt(location, native, len, |native| {
                if let Native::OpenCl { mem, .. } = native {
                    if !crate::core::shutdown::is_shutting_down() {
                        // SAFETY: the reference retained above, released once.
                        let _ = cl3::memory::release_mem_object(*mem);
                    }
                }
            })
        }
    }
}

/// The location of `device` in the application's own SYCL `context` (dpctl references:
/// `DPCTLSyclContextRef`, `DPCTLSyclDeviceRef`; dpctl's `SyclContext.addressof_ref()`):
/// the location locus already has for them (its own context, or one adopted before), or
/// a new one (`sycl:N`, numbered after every SYCL location so far) with an in-order queue
/// of locus's own made in the context, which every call takes as it takes a discovered
/// location. The application's queues of that context are then adopted with
/// [`Queue::from_native`](crate::Queue::from_native), and its USM pointers with
/// [`Memory::adopt`](crate::Memory::adopt) at that location (the runtime tells their
/// kind). The caller keeps its references; locus holds its own.
///
/// # Safety
/// `context` and `device` are live dpctl references.
#[cfg(feature = "sycl")]
pub unsafe fn adopt_sycl_context(context: *mut c_void, device: *mut c_void) -> Result<Location> {
    use crate::backends::sycl::SyclDevice;
    let (context, device) = (context.cast(), device.cast());
    let same = |d: &Arc<dyn Device>| {
        let d: Arc<dyn Device> = Arc::clone(d);
        let d: Arc<dyn std::any::Any + Send + Sync> = d;
        // SAFETY: live references (this function's contract).
        d.downcast::<SyclDevice>()
            .is_ok_and(|d| unsafe { d.is(context, device) })
    };
    registry().adopt(Technology::Sycl, same, |location| {
        // SAFETY: forwarded from this function's contract.
        let adopted = unsafe { SyclDevice::adopt_context(location, context, device) }?;
        Ok(Arc::new(adopted) as Arc<dyn Device>)
    })
}
