//! OpenCL's rectangle copies ([`RectCopies`]): `clEnqueueCopyBufferRect` within the
//! device, `clEnqueueWriteBufferRect` / `clEnqueueReadBufferRect` with host memory, each
//! one call on the device's in-order queue, waited for.

use opencl3::command_queue::{
    enqueue_copy_buffer_rect, enqueue_read_buffer_rect, enqueue_write_buffer_rect,
};

use super::*;
use crate::core::rect_copy::{RectCopies, RectCopy};
use crate::core::region::Region;

/// A normalized region as OpenCL takes it: the origin `[x, y, z]` with the buffer's own
/// offset (a sub-allocation's) added to x, the pitches.
fn cl_origin(region: &Region, base: usize) -> [usize; 3] {
    [base + region.origin[0], region.origin[1], region.origin[2]]
}

impl RectCopies for OpenClDevice {
    fn rect_call(&self, direction: Direction) -> &'static str {
        match direction {
            Direction::HostToDevice => "clEnqueueWriteBufferRect",
            Direction::DeviceToHost => "clEnqueueReadBufferRect",
            Direction::WithinDevice => "clEnqueueCopyBufferRect",
        }
    }

    fn copy_rect(&self, copy: RectCopy<'_>) -> Result<()> {
        let call = self.rect_call(copy.direction());
        let queue = self.queue.get();
        let event = match copy {
            RectCopy::Within {
                src,
                src_region: sr,
                dst,
                dst_region: dr,
            } => {
                let ((s, s_base), (d, d_base)) = (mem_of(src), mem_of(dst));
                let (so, doff) = (cl_origin(&sr, s_base), cl_origin(&dr, d_base));
                // SAFETY: both buffers belong to this context; both regions were checked
                // inside their memory and apart from each other; the arrays live for the
                // call.
                unsafe {
                    enqueue_copy_buffer_rect(
                        queue,
                        s,
                        d,
                        so.as_ptr(),
                        doff.as_ptr(),
                        sr.extent.as_ptr(),
                        sr.row_pitch,
                        sr.slice_pitch,
                        dr.row_pitch,
                        dr.slice_pitch,
                        0,
                        ptr::null(),
                    )
                }
            }
            RectCopy::Write {
                src,
                src_region: sr,
                dst,
                dst_region: dr,
            } => {
                let (d, d_base) = mem_of(dst);
                let (host, buffer) = (sr.origin, cl_origin(&dr, d_base));
                // SAFETY: a blocking write from a live host slice that covers the source
                // region into a checked region of this context's buffer.
                unsafe {
                    enqueue_write_buffer_rect(
                        queue,
                        d,
                        CL_BLOCKING,
                        buffer.as_ptr(),
                        host.as_ptr(),
                        dr.extent.as_ptr(),
                        dr.row_pitch,
                        dr.slice_pitch,
                        sr.row_pitch,
                        sr.slice_pitch,
                        src.as_ptr() as *const c_void,
                        0,
                        ptr::null(),
                    )
                }
            }
            RectCopy::Read {
                src,
                src_region: sr,
                dst,
                dst_region: dr,
            } => {
                let (s, s_base) = mem_of(src);
                let (buffer, host) = (cl_origin(&sr, s_base), dr.origin);
                // SAFETY: a blocking read of a checked region of this context's buffer
                // into an exclusive host slice that covers the destination region.
                unsafe {
                    enqueue_read_buffer_rect(
                        queue,
                        s,
                        CL_BLOCKING,
                        buffer.as_ptr(),
                        host.as_ptr(),
                        sr.extent.as_ptr(),
                        sr.row_pitch,
                        sr.slice_pitch,
                        dr.row_pitch,
                        dr.slice_pitch,
                        dst.as_mut_ptr() as *mut c_void,
                        0,
                        ptr::null(),
                    )
                }
            }
        }
        .map_err(|code| self.fail(call, code))?;
        self.finish_event(call, event)
    }
}
