//! WebGPU kernels: WGSL compute pipelines built once per device and cached, bound in
//! windows that fit the device's storage binding limit.

use super::*;

/// Splits a buffer of `bytes` into binding windows `(offset, size)` that each fit the
/// device's storage binding limit and offset alignment, for kernels over buffers larger
/// than one binding. `element` is the element size; windows hold whole elements.
pub fn binding_windows(limits: &wgpu::Limits, bytes: u64, element: u64) -> Vec<(u64, u64)> {
    let align = u64::from(limits.min_storage_buffer_offset_alignment).max(element);
    let step = (limits.max_storage_buffer_binding_size / align * align).max(align);
    let mut windows = Vec::new();
    let mut offset = 0;
    while offset < bytes {
        let size = step.min(bytes - offset);
        windows.push((offset, size));
        offset += size;
    }
    windows
}

impl WebGpuDevice {
    pub(super) fn launch_kernel(
        &self,
        spec: &LaunchSpec<'_>,
        args: &[LaunchArg<'_>],
    ) -> Result<Completion> {
        let _inside = super::InLocus::enter();
        let pipeline = self.pipeline(spec.source, spec.entry)?;
        let binding_limit = self.limits.max_storage_buffer_binding_size;
        let mut buffers = Vec::new();
        let mut scalars: Vec<u8> = Vec::new();
        for (i, a) in args.iter().enumerate() {
            match a {
                LaunchArg::Memory(m) => match m.native() {
                    Native::WebGpu { buffer, offset } if m.location() == self.location => {
                        let size = (m.len() as u64).div_ceil(4).max(1) * 4;
                        if size > binding_limit {
                            return Err(bad_argument(
                                self.location,
                                i,
                                &format!(
                                    "{size} bytes exceed the storage binding limit of {binding_limit} bytes; split the work"
                                ),
                            ));
                        }
                        buffers.push((buffer.clone(), *offset, size));
                    }
                    _ => {
                        return Err(bad_argument(
                            self.location,
                            i,
                            &format!(
                                "memory at {} is not a buffer of this WebGPU device",
                                m.location()
                            ),
                        ))
                    }
                },
                scalar => {
                    let bytes = scalar.scalar_bytes().unwrap_or_default();
                    if bytes.len() != 4 {
                        return Err(bad_argument(
                            self.location,
                            i,
                            "WGSL takes 32-bit scalars only (no f64, i64, u64, nor 8- or 16-bit integers); run this kernel on a technology with them",
                        ));
                    }
                    scalars.extend(bytes);
                }
            }
        }
        let mut entries: Vec<wgpu::BindGroupEntry<'_>> = buffers
            .iter()
            .enumerate()
            .map(|(i, (b, offset, size))| wgpu::BindGroupEntry {
                binding: i as u32,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: b,
                    offset: *offset,
                    size: wgpu::BufferSize::new(*size),
                }),
            })
            .collect();
        let uniform;
        if !scalars.is_empty() {
            scalars.resize(scalars.len().div_ceil(16) * 16, 0);
            uniform = self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("locus kernel scalars"),
                size: scalars.len() as u64,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            self.queue.write_buffer(&uniform, 0, &scalars);
            entries.push(wgpu::BindGroupEntry {
                binding: buffers.len() as u32,
                resource: uniform.as_entire_binding(),
            });
        }
        let groups = |n: usize, wg: u32| (n as u64).div_ceil(u64::from(wg.max(1)));
        let (x, y) = if spec.dims >= 2 {
            (
                groups(spec.global[0], spec.workgroup[0]),
                groups(spec.global[1], spec.workgroup[1]),
            )
        } else {
            // 1-D: fold into a 2-D grid of at most 65535 groups per row.
            let total = groups(spec.global[0], spec.workgroup[0]);
            (total.min(65535), total.div_ceil(65535))
        };
        let max = u64::from(self.limits.max_compute_workgroups_per_dimension);
        if x > max || y > max {
            return Err(Error::Invalid(format!(
                "{}: a dispatch of {x} x {y} workgroups exceeds the limit of {max} per dimension",
                self.location
            )));
        }
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(spec.entry),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        });
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some(spec.entry),
            });
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &group, &[]);
            if x > 0 && y > 0 {
                pass.dispatch_workgroups(x as u32, y as u32, 1);
            }
        }
        let storage: Vec<&wgpu::Buffer> = buffers.iter().map(|(b, _, _)| b.as_ref()).collect();
        let submitted = self.submit_on(&storage, || self.queue.submit([encoder.finish()]));
        let refused = pollster::block_on(scope.pop());
        let index = submitted?;
        if let Some(e) = refused {
            return Err(Error::Backend {
                location: self.location,
                call: "dispatch_workgroups",
                message: e.to_string(),
                hint: format!(
                    "check the arguments of `{}` against its WGSL bindings",
                    spec.entry
                ),
            });
        }
        Ok(Completion::new(WgpuWork {
            device: self.device.clone(),
            location: self.location,
            index,
            done: None,
        }))
    }
}
