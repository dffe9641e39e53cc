//! OpenCL kernels: programs built once per device and cached, buffer arguments as
//! sub-buffers of their ranges, launches on the device's queue.

use super::*;

/// A buffer argument of a kernel: the whole buffer, or a sub-buffer made for a range at
/// an offset (released when the launch is enqueued: OpenCL keeps it until the kernel is
/// done).
struct KernelBuffer {
    mem: cl_mem,
    /// A sub-buffer made for this launch (released on drop).
    made: bool,
}

impl Drop for KernelBuffer {
    fn drop(&mut self) {
        if self.made {
            // SAFETY: a sub-buffer made by `kernel_buffer`, released once; the runtime
            // defers the release until enqueued commands using it finish.
            let _ = unsafe { release_mem_object(self.mem) };
        }
    }
}

impl OpenClDevice {
    /// The kernel argument for `len` bytes at `offset` of `mem`.
    fn kernel_buffer(&self, mem: cl_mem, offset: usize, len: usize) -> Result<KernelBuffer> {
        if offset == 0 {
            return Ok(KernelBuffer { mem, made: false });
        }
        let region = opencl3::types::cl_buffer_region {
            origin: offset,
            size: len.max(1),
        };
        // SAFETY: a region inside a live buffer of this context (the pool keeps it in
        // range and aligned to `sub_alignment`, CL_DEVICE_MEM_BASE_ADDR_ALIGN).
        let sub = unsafe {
            opencl3::memory::create_sub_buffer(
                mem,
                CL_MEM_READ_WRITE,
                opencl3::memory::CL_BUFFER_CREATE_TYPE_REGION,
                (&region as *const opencl3::types::cl_buffer_region).cast(),
            )
        }
        .map_err(|code| self.fail("clCreateSubBuffer", code))?;
        Ok(KernelBuffer {
            mem: sub,
            made: true,
        })
    }
}

impl OpenClDevice {
    pub(super) fn launch_kernel(
        &self,
        spec: &LaunchSpec<'_>,
        args: &[LaunchArg<'_>],
        after: &dyn Dependencies,
    ) -> Result<Completion> {
        let kernel = self.kernel(spec.source, spec.entry)?;
        // Earlier OpenCL work of this context goes in the wait list; anything else (a
        // worker-thread copy, another technology) is waited for here first.
        let own = |c: &Completion| {
            c.work_as::<ClWork>()
                .map(ClWork::event)
                .filter(|&ev| self.owns_event(ev))
        };
        let wait_list = match native_deps(after, own)? {
            Some(list) => list,
            None => {
                for i in 0..after.count() {
                    after.at(i).wait()?;
                }
                Vec::new()
            }
        };
        // One launch at a time per kernel object: argument setting is not thread-safe.
        let kernel = kernel.lock().unwrap_or_else(|e| e.into_inner());
        let mems: Vec<Option<KernelBuffer>> = args
            .iter()
            .enumerate()
            .map(|(i, a)| match a {
                LaunchArg::Memory(m) => match m.native() {
                    Native::OpenCl { mem, offset } if m.location() == self.location => {
                        self.kernel_buffer(*mem, *offset, m.len()).map(Some)
                    }
                    _ => Err(bad_argument(
                        self.location,
                        i,
                        &format!(
                            "memory at {} is not an OpenCL buffer of this device",
                            m.location()
                        ),
                    )),
                },
                _ => Ok(None),
            })
            .collect::<Result<_>>()?;
        let mut exec = ExecuteKernel::new(&kernel);
        for (arg, mem) in args.iter().zip(&mems) {
            // SAFETY: each value matches the kind of the kernel parameter the codelet
            // declared (checked there): a cl_mem of this context or a scalar of the
            // parameter's size.
            unsafe {
                match (arg, mem) {
                    (_, Some(buffer)) => exec.set_arg(&buffer.mem),
                    // clSetKernelArg copies the argument's size in bytes.
                    (LaunchArg::Scalar(t, b), None) => match t.size() {
                        1 => exec.set_arg(&[b[0]]),
                        2 => exec.set_arg(&[b[0], b[1]]),
                        4 => exec.set_arg(&[b[0], b[1], b[2], b[3]]),
                        _ => exec.set_arg(b),
                    },
                    (LaunchArg::Memory(_), None) => unreachable!("buffers were resolved above"),
                };
            }
        }
        exec.set_global_work_sizes(&spec.global[..spec.dims.clamp(1, 2)]);
        exec.event_wait_list.extend(wait_list);
        // SAFETY: every argument is set; the buffers stay alive until the completion is
        // waited for (the codelet holds them).
        let event = unsafe { exec.enqueue_nd_range(&self.queue) }
            .map_err(|e| self.fail("clEnqueueNDRangeKernel", e.0))?;
        Ok(Completion::new(ClWork::adopt(event)))
    }
}
