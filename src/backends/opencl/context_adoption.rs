//! An application's own OpenCL context adopted as a location of its own
//! ([`OpenClDevice::adopt_context`]): the context retained, an in-order queue of locus's
//! own made in it, so that the application's queues ([`crate::AdoptedQueue`]) and
//! buffers ([`buffer_facts`]) of that context join locus as those of locus's own
//! contexts do.

use cl3::context::{get_context_info, retain_context, CL_CONTEXT_DEVICES};
use cl3::info_type::InfoType;
use cl3::memory::{get_mem_object_info, CL_MEM_CONTEXT, CL_MEM_SIZE};
use opencl3::types::{cl_context, cl_device_id};

use super::*;

impl OpenClDevice {
    /// The device `device` of the application's `context`, as `location`: the context
    /// retained (locus's reference is released with the device), and an in-order queue
    /// of locus's own made in it.
    ///
    /// # Safety
    /// `context` is a live `cl_context` (checked: `device` must be one of its devices).
    pub(crate) unsafe fn adopt_context(
        location: Location,
        context: cl_context,
        device: cl_device_id,
    ) -> Result<OpenClDevice> {
        let fail = |what: String| {
            Error::Invalid(format!(
                "{location}: cannot adopt OpenCL context {context:?}: {what}"
            ))
        };
        let devices = match get_context_info(context, CL_CONTEXT_DEVICES) {
            Ok(InfoType::VecIntPtr(d)) => d,
            Ok(_) => Vec::new(),
            Err(code) => {
                return Err(fail(format!(
                    "clGetContextInfo says {}; pass a live context",
                    cl_text(code)
                )))
            }
        };
        if !devices.iter().any(|&d| d as usize == device as usize) {
            return Err(fail(format!(
                "device {device:?} is not one of its devices ({devices:x?}); pass one of them"
            )));
        }
        // SAFETY: a live context (it answered above); `Context` releases this reference
        // when the device is dropped.
        unsafe { retain_context(context) }
            .map_err(|code| fail(format!("clRetainContext says {}", cl_text(code))))?;
        let owned = Context::new(context, &[device]);
        let device = ClDevice::new(device);
        let platform = device
            .platform()
            .ok()
            .and_then(|p| opencl3::platform::Platform::new(p).name().ok())
            .unwrap_or_else(|| "unknown platform".into());
        Self::with_context(location, device, &platform, owned, Some(context as usize))
            .map_err(|e| fail(e.to_string()))
    }

    /// The raw `cl_context` and `cl_device_id` of this location, as integers.
    pub(crate) fn context_and_device(&self) -> (usize, usize) {
        (self.context.get() as usize, self.device.id() as usize)
    }
}

/// The context a buffer of the application's belongs to, that context's first device,
/// and the buffer's size in bytes.
///
/// # Safety
/// `mem` is a live `cl_mem` (OpenCL cannot tell one from any other pointer).
pub(crate) unsafe fn buffer_facts(mem: cl_mem) -> Result<(cl_context, cl_device_id, usize)> {
    let fail = |call: &str, code: cl_int| {
        Error::Invalid(format!(
            "OpenCL buffer {mem:?}: {call} says {}; pass a live cl_mem",
            cl_text(code)
        ))
    };
    let context = match get_mem_object_info(mem, CL_MEM_CONTEXT) {
        Ok(InfoType::Ptr(c)) => c as cl_context,
        Ok(_) => std::ptr::null_mut(),
        Err(code) => return Err(fail("clGetMemObjectInfo(CL_MEM_CONTEXT)", code)),
    };
    let size = match get_mem_object_info(mem, CL_MEM_SIZE) {
        Ok(InfoType::Size(n)) => n,
        Ok(_) => 0,
        Err(code) => return Err(fail("clGetMemObjectInfo(CL_MEM_SIZE)", code)),
    };
    let device = match get_context_info(context, CL_CONTEXT_DEVICES) {
        Ok(InfoType::VecIntPtr(d)) => d
            .first()
            .map_or(std::ptr::null_mut(), |&d| d as cl_device_id),
        Ok(_) => std::ptr::null_mut(),
        Err(code) => return Err(fail("clGetContextInfo(CL_CONTEXT_DEVICES)", code)),
    };
    Ok((context, device, size))
}
