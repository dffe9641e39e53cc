//! CUDA and HIP kernels: compiled at run time (NVRTC, hiprtc), cached, launched on the
//! device's stream.

use super::*;

impl<A: GpuApi> GpuDevice<A> {
    pub(super) fn launch_kernel(
        &self,
        spec: &LaunchSpec<'_>,
        args: &[LaunchArg<'_>],
    ) -> Result<Completion> {
        let _current = self.activate()?;
        let key = cache_key(spec.source, spec.entry);
        // A failed compile is cached too: every later launch (a conversion's, each
        // time it is asked for) reports it at once instead of running the compiler again.
        let compiled = {
            let mut cache = self.functions.lock().unwrap_or_else(|e| e.into_inner());
            cache
                .entry(key)
                .or_insert_with(|| self.api.compile(spec.source, spec.entry))
                .clone()
        };
        let function = compiled.map_err(|e| Error::Backend {
            location: self.location,
            call: e.call,
            message: e.to_string(),
            hint: format!("fix the source of `{}`", spec.entry),
        })?;
        let mut values: Vec<[u8; 8]> = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            let mut v = [0u8; 8];
            match a {
                LaunchArg::Memory(m) => {
                    // A device pointer of this technology, or a host address where the
                    // device uses host memory in place (pageable memory access).
                    let pointer = A::unpack(m.native())
                        .map(|(ptr, _)| ptr)
                        .or_else(|| m.host_pointer().map(|p| p as u64));
                    let usable = pointer.filter(|_| {
                        m.location() == self.location
                            || self
                                .accessibility_of(
                                    m.device().as_ref(),
                                    Some(m.native()),
                                    m.host_access(),
                                )
                                .is_some_and(|(usable, _)| usable)
                    });
                    let ptr = usable.ok_or_else(|| {
                        bad_argument(
                            self.location,
                            i,
                            &format!("memory at {} is not addressable here", m.location()),
                        )
                    })?;
                    v.copy_from_slice(&ptr.to_ne_bytes());
                }
                scalar => {
                    let bytes = scalar.scalar_bytes().unwrap_or_default();
                    v[..bytes.len()].copy_from_slice(bytes);
                }
            }
            values.push(v);
        }
        // Nothing to run: drivers refuse a grid with a zero dimension.
        if spec.global.contains(&0) {
            return Ok(Completion::done());
        }
        let mut params: Vec<*mut c_void> =
            values.iter_mut().map(|v| v.as_mut_ptr().cast()).collect();
        let block = if spec.dims >= 2 {
            [16, 16, 1]
        } else {
            [256, 1, 1]
        };
        // A launch the driver cannot take is refused here, naming the limit: the grid
        // below is 32-bit, and a larger count would wrap to a smaller launch that
        // covers part of the work and reports success.
        let blocks = [
            (spec.global[0] as u64).div_ceil(u64::from(block[0])),
            (spec.global[1] as u64).div_ceil(u64::from(block[1])),
        ];
        let x_items = blocks[0] * u64::from(block[0]);
        let max_x = self.api.max_items_x();
        if x_items > max_x || blocks[1] > 65_535 {
            return Err(Error::Invalid(format!(
                "{}: a launch of {} x {} work items is more than {} takes at once ({} along x, {} along y); split the work into several calls",
                self.location,
                spec.global[0],
                spec.global[1],
                A::TECHNOLOGY.name(),
                max_x,
                65_535 * u64::from(block[1])
            )));
        }
        let grid = [blocks[0] as u32, blocks[1] as u32, 1];
        // SAFETY: one parameter value per kernel parameter (checked by the codelet):
        // device pointers as 8 bytes, 32-bit scalars in the first 4 bytes.
        unsafe { self.api.launch(function, grid, block, &mut params) }
            .map_err(|e| self.fail("launch", e))?;
        self.api
            .synchronize()
            .map_err(|e| self.fail("synchronize", e))?;
        Ok(Completion::done())
    }
}
