//! WebGPU through `wgpu` (Vulkan, Metal, DX12 or GL, each loaded at run time).
//!
//! Memory is a storage buffer (STORAGE | COPY_SRC | COPY_DST) of up to the adapter's
//! `max_buffer_size` (the device is opened with the adapter's real limits, not the
//! defaults). Host data goes up through two reused MAP_WRITE staging buffers and comes
//! down through two reused MAP_READ ones, alternating so that the host copy of one chunk
//! overlaps the GPU copy of the other; `queue.write_buffer` (a new staging buffer per
//! call) is not used. Buffers may be larger than the storage binding limit: kernels bind
//! them in windows (see [`binding_windows`]).
//!
//! wgpu panics on validation errors by default; locus installs an error handler that
//! records them instead, and returns them as [`Error::Backend`].

mod staging;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::core::completion::{native_deps, Completion, Dependency, NativeWork};
use crate::core::device::{fill_by_writes, Device, DeviceInfo, Discovery, HostAccess};
use crate::core::error::{Error, Result};
use crate::core::launch::{bad_argument, cache_key, LaunchArg, LaunchSpec};
use crate::core::location::Location;
use crate::core::memory::Memory;
use crate::core::native::Native;

use staging::Staging;

/// Bytes per staging buffer.
const STAGING_BYTES: u64 = 4 << 20;

/// One wgpu adapter with its device and queue.
pub struct WebGpuDevice {
    location: Location,
    info: DeviceInfo,
    adapter: wgpu::Adapter,
    device: wgpu::Device,
    queue: wgpu::Queue,
    limits: wgpu::Limits,
    upload: Mutex<Staging>,
    download: Mutex<Staging>,
    errors: Arc<Mutex<Vec<String>>>,
    live: AtomicUsize,
    pipelines: Mutex<HashMap<u64, wgpu::ComputePipeline>>,
}

impl std::fmt::Debug for WebGpuDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WebGpuDevice({}, {})", self.location, self.info.name)
    }
}

pub(crate) fn discover() -> Result<Discovery, String> {
    // Vulkan / Metal / DX12 first; GL (which initialises EGL, and complains on stderr
    // without a display) only when none of those has an adapter, or when WGPU_BACKEND
    // asks for it.
    let chosen = std::env::var("WGPU_BACKEND").is_ok();
    let instance_for = |backends: wgpu::Backends| {
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
        if !chosen {
            desc.backends = backends;
        }
        wgpu::Instance::new(desc)
    };
    let enumerate = |backends| {
        pollster::block_on(instance_for(backends).enumerate_adapters(wgpu::Backends::all()))
    };
    let mut adapters = enumerate(wgpu::Backends::PRIMARY);
    let mut skipped = Vec::new();
    if adapters.is_empty() && !chosen {
        adapters = enumerate(wgpu::Backends::GL);
        skipped.push("no Vulkan/Metal/DX12 adapter: tried GL".to_string());
    }
    let mut devices: Vec<Arc<dyn Device>> = Vec::new();
    for adapter in adapters {
        let info = adapter.get_info();
        let location = Location::WebGpu(devices.len() as u32);
        match WebGpuDevice::open(location, adapter) {
            Ok(device) => devices.push(Arc::new(device)),
            Err(e) => skipped.push(format!("{} ({:?}): {e}", info.name, info.backend)),
        }
    }
    if devices.is_empty() {
        return Err(format!(
            "no WebGPU adapter{}; install a Vulkan driver and loader (e.g. apt-get install mesa-vulkan-drivers libvulkan1)",
            if skipped.is_empty() { " was found".to_string() } else { format!(" could be opened ({})", skipped.join("; ")) }
        ));
    }
    Ok(Discovery {
        devices,
        skipped,
        paths: vec![],
    })
}

impl WebGpuDevice {
    fn open(location: Location, adapter: wgpu::Adapter) -> Result<WebGpuDevice, String> {
        let adapter_info = adapter.get_info();
        let limits = adapter.limits();
        let descriptor = wgpu::DeviceDescriptor {
            label: Some("locus"),
            required_limits: limits.clone(),
            ..Default::default()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&descriptor))
            .map_err(|e| format!("request_device failed: {e}"))?;
        let errors = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&errors);
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            if let Ok(mut list) = sink.lock() {
                list.push(e.to_string());
            }
        }));
        let kind = match adapter_info.device_type {
            wgpu::DeviceType::Cpu => "cpu",
            wgpu::DeviceType::IntegratedGpu => "integrated gpu",
            wgpu::DeviceType::DiscreteGpu => "gpu",
            wgpu::DeviceType::VirtualGpu => "virtual gpu",
            wgpu::DeviceType::Other => "other",
        };
        let shares = matches!(
            adapter_info.device_type,
            wgpu::DeviceType::Cpu | wgpu::DeviceType::IntegratedGpu
        );
        let notes = vec![
            format!(
                "driver: {} {}",
                adapter_info.driver, adapter_info.driver_info
            ),
            format!(
                "max buffer {} MiB, storage binding {} MiB (larger buffers are bound in windows)",
                limits.max_buffer_size >> 20,
                limits.max_storage_buffer_binding_size >> 20
            ),
        ];
        Ok(WebGpuDevice {
            location,
            info: DeviceInfo {
                name: adapter_info.name.clone(),
                platform: format!("wgpu {:?}", adapter_info.backend),
                kind: kind.into(),
                memory_bytes: None,
                max_allocation: limits.max_buffer_size & !3,
                shares_host_memory: shares,
                notes,
            },
            adapter,
            upload: Mutex::new(Staging::new(
                &device,
                STAGING_BYTES,
                wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
            )),
            download: Mutex::new(Staging::new(
                &device,
                STAGING_BYTES,
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            )),
            device,
            queue,
            limits,
            errors,
            live: AtomicUsize::new(0),
            pipelines: Mutex::new(HashMap::new()),
        })
    }

    /// The wgpu device (to create pipelines and bind groups on).
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// The wgpu queue locus submits its copies to.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// The adapter.
    pub fn adapter(&self) -> &wgpu::Adapter {
        &self.adapter
    }

    /// The limits the device was opened with (the adapter's own).
    pub fn limits(&self) -> &wgpu::Limits {
        &self.limits
    }

    fn fail(&self, call: &'static str, message: String) -> Error {
        Error::Backend {
            location: self.location,
            call,
            message,
            hint: "see the wgpu message; check sizes against `locus info`".into(),
        }
    }

    /// Returns the first error wgpu reported since the last check.
    fn check(&self, call: &'static str) -> Result<()> {
        let mut list = self.errors.lock().unwrap_or_else(|e| e.into_inner());
        if list.is_empty() {
            Ok(())
        } else {
            let message = list.join("; ");
            list.clear();
            Err(self.fail(call, message))
        }
    }

    fn wait(&self, call: &'static str, index: Option<wgpu::SubmissionIndex>) -> Result<()> {
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: index,
                timeout: None,
            })
            .map_err(|e| self.fail(call, e.to_string()))?;
        self.check(call)
    }

    /// The compute pipeline for `entry` of WGSL `source`, built once and cached.
    fn pipeline(&self, source: &str, entry: &str) -> Result<wgpu::ComputePipeline> {
        let key = cache_key(source, entry);
        let mut cache = self.pipelines.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = cache.get(&key) {
            return Ok(p.clone());
        }
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = self
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(entry),
                source: wgpu::ShaderSource::Wgsl(source.into()),
            });
        let pipeline = self
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(entry),
                layout: None,
                module: &module,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: None,
            });
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(Error::Backend {
                location: self.location,
                call: "create_compute_pipeline",
                message: e.to_string(),
                hint: format!("fix the WGSL source of `{entry}`"),
            });
        }
        cache.insert(key, pipeline.clone());
        Ok(pipeline)
    }

    fn read_raw(&self, src: &wgpu::Buffer, offset: u64, dst: &mut [u8]) -> Result<()> {
        let mut staging = self.download.lock().unwrap_or_else(|e| e.into_inner());
        staging.download(self, src, offset, dst)
    }

    fn copy_on_device(
        &self,
        src: &wgpu::Buffer,
        src_offset: u64,
        dst: &wgpu::Buffer,
        dst_offset: u64,
        len: u64,
    ) -> wgpu::SubmissionIndex {
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("locus copy"),
            });
        self.encode_copy(&mut encoder, src, src_offset, dst, dst_offset, len);
        self.queue.submit([encoder.finish()])
    }

    /// Records a copy of `len` bytes (offsets and length multiples of 4). Between two
    /// ranges of one buffer (pool blocks of the same chunk; `copy_buffer_to_buffer`
    /// refuses one buffer as both ends) it goes through a temporary buffer, in the same
    /// command buffer.
    pub(crate) fn encode_copy(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        src: &wgpu::Buffer,
        src_offset: u64,
        dst: &wgpu::Buffer,
        dst_offset: u64,
        len: u64,
    ) {
        if src != dst {
            encoder.copy_buffer_to_buffer(src, src_offset, dst, dst_offset, len);
            return;
        }
        let between = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("locus copy within one buffer"),
            size: len,
            usage: wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        encoder.copy_buffer_to_buffer(src, src_offset, &between, 0, len);
        encoder.copy_buffer_to_buffer(&between, 0, dst, dst_offset, len);
    }
}

/// A wgpu submission: the WebGPU backend's own queued work. Submissions on one device's
/// queue run in order, so later locus work there needs no host wait.
pub struct WgpuWork {
    device: wgpu::Device,
    /// The device's location.
    location: Location,
    index: wgpu::SubmissionIndex,
    /// Set by the queue's work-done callback (for polling without a wait); kernels have
    /// none and report done only once waited for.
    done: Option<Arc<std::sync::atomic::AtomicBool>>,
}

impl NativeWork for WgpuWork {
    fn poll(&self) -> bool {
        match &self.done {
            Some(done) => {
                let _ = self.device.poll(wgpu::PollType::Poll);
                done.load(std::sync::atomic::Ordering::Acquire)
            }
            None => false,
        }
    }

    fn block(&self) -> Result<()> {
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(self.index.clone()),
                timeout: None,
            })
            .map(|_| ())
            .map_err(|e| Error::Invalid(format!("waiting for a WebGPU submission: {e}")))
    }

    fn is_queue_ordered(&self) -> bool {
        true
    }
}

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

fn buffer_of(native: &Native) -> (&Arc<wgpu::Buffer>, u64) {
    match native {
        Native::WebGpu { buffer, offset } => (buffer, *offset),
        #[allow(unreachable_patterns)]
        other => unreachable!("WebGPU device given a foreign handle {other:?}"),
    }
}

/// Uploads up to this size from host memory run natively through `Queue::write_buffer`
/// (one submission, ordered on the device's queue); larger ones take the staged engine on
/// a worker thread, which is about 5x faster for large data.
const NATIVE_UPLOAD_MAX: usize = 1 << 20;

impl Device for WebGpuDevice {
    /// Starts natively, as one submission on the device's queue (every earlier
    /// submission there runs first): a copy between two ranges of one WebGPU device
    /// (`copy_buffer_to_buffer`), or an upload of up to 1 MiB from host memory
    /// (`Queue::write_buffer`, which reads the host memory before it returns). `None`:
    /// not such a copy (other devices, unaligned ranges, overlap, larger uploads), or a
    /// still-running dependency from elsewhere.
    fn copy_async(
        &self,
        src: &Memory,
        src_offset: usize,
        dst: &Memory,
        dst_offset: usize,
        len: usize,
        after: &[&dyn Dependency],
    ) -> Result<Option<Completion>> {
        let mine = |m: &Memory| m.location() == self.location;
        let aligned = |offsets: &[usize]| {
            offsets
                .iter()
                .all(|v| (*v as u64).is_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT))
        };
        let upload = match (src.native(), dst.native()) {
            (Native::WebGpu { .. }, Native::WebGpu { .. })
                if mine(src)
                    && mine(dst)
                    && aligned(&[src_offset, dst_offset, len])
                    && !src.overlaps(src_offset, dst, dst_offset, len) =>
            {
                false
            }
            (Native::Host { .. }, Native::WebGpu { .. })
                if src.location() == Location::Host
                    && mine(dst)
                    && len <= NATIVE_UPLOAD_MAX
                    && aligned(&[dst_offset, len]) =>
            {
                true
            }
            _ => return Ok(None),
        };
        // Earlier submissions on this device's queue run first anyway: no host wait.
        let same_queue = |c: &Completion| {
            c.work_as::<WgpuWork>()
                .filter(|w| w.location == self.location)
                .map(|_| ())
        };
        if native_deps(after, same_queue)?.is_none() {
            return Ok(None);
        }
        let (d, d_base) = buffer_of(dst.native());
        let (index, call) = if upload {
            src.with_host_slice(src_offset, len, false, |data| {
                self.queue.write_buffer(d, d_base + dst_offset as u64, data);
                Ok(())
            })?;
            (self.queue.submit([]), "Queue::write_buffer")
        } else {
            let (s, s_base) = buffer_of(src.native());
            let mut encoder = self
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("locus async copy"),
                });
            self.encode_copy(
                &mut encoder,
                s,
                s_base + src_offset as u64,
                d,
                d_base + dst_offset as u64,
                len as u64,
            );
            (self.queue.submit([encoder.finish()]), "Queue::submit")
        };
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = Arc::clone(&done);
        self.queue.on_submitted_work_done(move || {
            flag.store(true, std::sync::atomic::Ordering::Release);
        });
        self.check(call)?;
        Ok(Some(Completion::new(WgpuWork {
            device: self.device.clone(),
            location: self.location,
            index,
            done: Some(done),
        })))
    }

    fn synchronize(&self) -> Result<()> {
        self.wait("Device::poll", None)
    }

    fn location(&self) -> Location {
        self.location
    }

    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn allocate(&self, bytes: usize) -> Result<Native> {
        let size = (bytes as u64).div_ceil(4).max(1) * 4;
        if size > self.limits.max_buffer_size {
            return Err(Error::TooLarge {
                location: self.location,
                requested: bytes,
                max: self.info.max_allocation as usize,
            });
        }
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("locus"),
            size,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(self.fail("create_buffer", e.to_string()));
        }
        self.check("create_buffer")?;
        self.live.fetch_add(1, Ordering::Relaxed);
        Ok(Native::WebGpu {
            buffer: Arc::new(buffer),
            offset: 0,
        })
    }

    unsafe fn free(&self, native: &Native, _bytes: usize) {
        let (buffer, offset) = buffer_of(native);
        if offset == 0 {
            buffer.destroy();
        }
        self.live.fetch_sub(1, Ordering::Relaxed);
    }

    fn host_access(&self, _native: &Native) -> HostAccess {
        HostAccess::None
    }

    fn host_access_default(&self) -> HostAccess {
        HostAccess::None
    }

    fn executes_on_host(&self) -> bool {
        false
    }

    fn write(&self, dst: &Native, offset: usize, src: &[u8]) -> Result<()> {
        let mut staging = self.upload.lock().unwrap_or_else(|e| e.into_inner());
        let (buffer, base) = buffer_of(dst);
        staging.upload(self, buffer, base + offset as u64, src)
    }

    fn read(&self, src: &Native, offset: usize, dst: &mut [u8]) -> Result<()> {
        let (buffer, base) = buffer_of(src);
        self.read_raw(buffer, base + offset as u64, dst)
    }

    fn copy_within(
        &self,
        src: &Native,
        src_offset: usize,
        dst: &Native,
        dst_offset: usize,
        len: usize,
    ) -> Result<()> {
        // copy_buffer_to_buffer needs 4-byte alignment (the handles' own offsets are
        // multiples of the storage offset alignment, so only these can break it).
        if !(src_offset | dst_offset | len).is_multiple_of(4) {
            let mut tmp = vec![0u8; len];
            self.read(src, src_offset, &mut tmp)?;
            return self.write(dst, dst_offset, &tmp);
        }
        let ((s, s0), (d, d0)) = (buffer_of(src), buffer_of(dst));
        let index = self.copy_on_device(
            s,
            s0 + src_offset as u64,
            d,
            d0 + dst_offset as u64,
            len as u64,
        );
        self.wait("copy_buffer_to_buffer", Some(index))
    }

    fn fill(&self, dst: &Native, offset: usize, len: usize, pattern: &[u8]) -> Result<()> {
        if pattern.iter().all(|&b| b == 0) && (offset | len).is_multiple_of(4) {
            let mut encoder = self
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("locus clear"),
                });
            let (buffer, base) = buffer_of(dst);
            encoder.clear_buffer(buffer, base + offset as u64, Some(len as u64));
            let index = self.queue.submit([encoder.finish()]);
            return self.wait("clear_buffer", Some(index));
        }
        fill_by_writes(self, dst, offset, len, pattern)
    }

    fn map(&self, _native: &Native, _offset: usize, _len: usize, _write: bool) -> Result<*mut u8> {
        Err(Error::NotHostAccessible {
            location: self.location,
        })
    }

    unsafe fn unmap(&self, _native: &Native, _ptr: *mut u8) -> Result<()> {
        Ok(())
    }

    fn live_allocations(&self) -> usize {
        self.live.load(Ordering::Relaxed)
    }

    fn sub_native(&self, parent: &Native, offset: usize, _len: usize) -> Result<Native> {
        let (buffer, base) = buffer_of(parent);
        Ok(Native::WebGpu {
            buffer: Arc::clone(buffer),
            offset: base + offset as u64,
        })
    }

    fn sub_alignment(&self) -> usize {
        (self.limits.min_storage_buffer_offset_alignment as usize)
            .max(crate::core::device::ALIGNMENT)
    }

    fn launch(&self, spec: &LaunchSpec<'_>, args: &[LaunchArg<'_>]) -> Result<Completion> {
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
                scalar => scalars.extend(scalar.scalar_bytes().unwrap_or_default()),
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
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(spec.entry),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        });
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
        let index = self.queue.submit([encoder.finish()]);
        if let Some(e) = pollster::block_on(scope.pop()) {
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
