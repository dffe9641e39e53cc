//! WebGPU through `wgpu` (Vulkan, Metal, DX12 or GL, each loaded at run time).
//!
//! Memory is a storage buffer (STORAGE | COPY_SRC | COPY_DST) of up to the adapter's
//! `max_buffer_size` (the device is opened with the adapter's real limits, not the
//! defaults). Buffers may be larger than the storage binding limit: kernels bind them in
//! windows (see [`binding_windows`]).
//!
//! On unified memory (a CPU or integrated adapter offering `MAPPABLE_PRIMARY_BUFFERS`)
//! storage buffers are also `MAP_READ | MAP_WRITE`: the host reaches them in place
//! through a mapping ([`HostAccess::Mapped`]) and every transfer is one copy (see the
//! `unified` module). Elsewhere host data goes up through two reused MAP_WRITE staging
//! buffers and comes down through two reused MAP_READ ones, alternating so that the host
//! copy of one chunk overlaps the GPU copy of the other; `queue.write_buffer` (a new
//! staging buffer per call) is used only for small asynchronous uploads.
//!
//! wgpu panics on validation errors by default; locus installs an error handler that
//! records them instead, and returns them as [`Error::Backend`]. Only errors raised while
//! the thread is inside a locus call (`InLocus`) are locus's: an error of the
//! application's own use of locus's device is a warning on stderr naming the location
//! (as wgpu's own handler would report it), never charged to a later, unrelated locus
//! call.

mod adopted;
mod batch;
mod native_calls;
mod staging;
mod staging_views;
mod unified;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::core::batch_copy::DeviceCopy;
use crate::core::capability::{
    launch_after_waiting, CopyBatches, Kernels, NativeCalls, QueueAdoption, QueuedCopies,
    StagingViews,
};
use crate::core::completion::{native_deps, Completion, Dependencies, NativeWork};
use crate::core::copy_span::CopySpan;
use crate::core::device::{
    fill_by_writes, Device, DeviceInfo, Direction, HostAccess, HostReach, PhysicalDevice, StageWay,
    StagedView,
};
use crate::core::discovery::{Discovery, Unavailable};
use crate::core::error::{Error, Result};
use crate::core::launch::{bad_argument, cache_key, LaunchArg, LaunchSpec};
use crate::core::location::Location;
use crate::core::memory::Memory;
use crate::core::native::Native;

use staging::Staging;
use staging_views::Lent;
use unified::Unified;

mod device;
mod kernels;
mod work;

pub use kernels::binding_windows;
pub use work::WgpuWork;

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
    /// Host views of mappable storage buffers: `Some` on unified memory.
    unified: Option<Unified>,
    /// Idle staging buffers lent to host consumers in place ([`StagingViews::stage`]).
    lent: Arc<Lent>,
    /// The readback buffer of the native reads (`native_calls.rs`), grown as needed.
    native_readback: Mutex<Option<wgpu::Buffer>>,
}

impl std::fmt::Debug for WebGpuDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WebGpuDevice({}, {})", self.location, self.info.name)
    }
}

pub(crate) fn discover() -> Result<Discovery, Unavailable> {
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
        ).into());
    }
    Ok(Discovery {
        devices,
        skipped,
        paths: vec![],
    })
}

thread_local! {
    /// How deep this thread is in locus's calls on a WebGPU device.
    static IN_LOCUS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Marks this thread as inside a locus call on a WebGPU device while it lives: a wgpu
/// error raised meanwhile outside any error scope is locus's (the next wait reports it),
/// any other is the application's.
pub(super) struct InLocus(());

impl InLocus {
    pub(super) fn enter() -> InLocus {
        IN_LOCUS.with(|depth| depth.set(depth.get() + 1));
        InLocus(())
    }

    fn here() -> bool {
        IN_LOCUS.with(|depth| depth.get() > 0)
    }
}

impl Drop for InLocus {
    fn drop(&mut self) {
        IN_LOCUS.with(|depth| depth.set(depth.get().saturating_sub(1)));
    }
}

impl WebGpuDevice {
    fn open(location: Location, adapter: wgpu::Adapter) -> Result<WebGpuDevice, Unavailable> {
        let adapter_info = adapter.get_info();
        let limits = adapter.limits();
        let shares = matches!(
            adapter_info.device_type,
            wgpu::DeviceType::Cpu | wgpu::DeviceType::IntegratedGpu
        );
        let mappable = shares
            && adapter
                .features()
                .contains(wgpu::Features::MAPPABLE_PRIMARY_BUFFERS)
            && unified::wanted();
        let descriptor = wgpu::DeviceDescriptor {
            label: Some("locus"),
            required_limits: limits.clone(),
            required_features: if mappable {
                wgpu::Features::MAPPABLE_PRIMARY_BUFFERS
            } else {
                wgpu::Features::empty()
            },
            ..Default::default()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&descriptor))
            .map_err(|e| format!("request_device failed: {e}"))?;
        let errors = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&errors);
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            if !InLocus::here() {
                crate::core::config::warn_once(&format!(
                    "{location}: a wgpu error outside any locus call on locus's WebGPU device \
                     (the application's own use of it; push an error scope around those calls \
                     to handle it there): {e}"
                ));
                return;
            }
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
        let version = format!("{} {}", adapter_info.driver, adapter_info.driver_info);
        let mut notes = vec![format!(
            "max buffer {} MiB, storage binding {} MiB (larger buffers are bound in windows)",
            limits.max_buffer_size >> 20,
            limits.max_storage_buffer_binding_size >> 20
        )];
        notes.push(if mappable {
            "storage buffers mapped in place for the host (MAPPABLE_PRIMARY_BUFFERS on unified memory): one copy per transfer".into()
        } else if shares {
            "unified memory, but storage buffers are not mappable here (no MAPPABLE_PRIMARY_BUFFERS, or LOCUS_WEBGPU_MAPPABLE=0): transfers go through staging buffers".into()
        } else {
            "transfers go through staging buffers".into()
        });
        Ok(WebGpuDevice {
            location,
            info: DeviceInfo {
                name: adapter_info.name.clone(),
                platform: format!("wgpu {:?}", adapter_info.backend),
                kind: kind.into(),
                memory_bytes: None,
                max_allocation: limits.max_buffer_size & !3,
                shares_host_memory: shares,
                version: Some(version),
                notes,
                physical: match adapter_info.device_type {
                    wgpu::DeviceType::Cpu => Some(PhysicalDevice::HostCpu),
                    // Vulkan's VK_EXT_pci_bus_info, where the driver has it.
                    _ => PhysicalDevice::parse_pci(&adapter_info.device_pci_bus_id),
                },
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
            unified: mappable.then(Unified::default),
            lent: Arc::default(),
            native_readback: Mutex::new(None),
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

    /// Runs `f` inside a validation error scope of this thread (wgpu keeps scopes per
    /// thread), so that a validation error is reported to the operation that caused it,
    /// not to whichever thread checks next. A validation error is the cause of whatever
    /// failed after it (a wait on the refused submission), so it is the one reported.
    fn scoped<R>(&self, call: &'static str, f: impl FnOnce() -> Result<R>) -> Result<R> {
        let _inside = InLocus::enter();
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let result = f();
        match pollster::block_on(scope.pop()) {
            Some(e) => Err(self.fail(call, e.to_string())),
            None => result,
        }
    }

    /// Runs `f` with the staging engine behind `lock`, in a validation scope; after any
    /// failure (or a panic that poisoned the lock) the engine's buffers are replaced, so
    /// that nothing it left mapped or pending reaches the next transfer.
    fn staged(
        &self,
        call: &'static str,
        lock: &Mutex<Staging>,
        f: impl FnOnce(&mut Staging) -> Result<()>,
    ) -> Result<()> {
        let mut staging = match lock.lock() {
            Ok(guard) => guard,
            Err(poisoned) => {
                lock.clear_poison();
                let mut guard = poisoned.into_inner();
                guard.reset(&self.device);
                guard
            }
        };
        let result = self.scoped(call, || f(&mut staging));
        if result.is_err() {
            staging.reset(&self.device);
        }
        result
    }

    fn wait(&self, call: &'static str, index: Option<wgpu::SubmissionIndex>) -> Result<()> {
        let _inside = InLocus::enter();
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
        self.staged("read (staged download)", &self.download, |staging| {
            staging.download(self, src, offset, dst)
        })
    }

    fn copy_on_device(
        &self,
        src: &wgpu::Buffer,
        src_offset: u64,
        dst: &wgpu::Buffer,
        dst_offset: u64,
        len: u64,
    ) -> Result<wgpu::SubmissionIndex> {
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("locus copy"),
            });
        self.encode_copy(&mut encoder, src, src_offset, dst, dst_offset, len);
        self.submit_on(&[src, dst], || self.queue.submit([encoder.finish()]))
    }

    /// Runs `submit`, GPU work on `buffers`: on unified memory once no host view of them
    /// is alive (WebGPU refuses work on a mapped buffer), elsewhere at once.
    pub(crate) fn submit_on<R>(
        &self,
        buffers: &[&wgpu::Buffer],
        submit: impl FnOnce() -> R,
    ) -> Result<R> {
        match &self.unified {
            Some(unified) => unified.submit(self, buffers, submit),
            None => Ok(submit()),
        }
    }

    /// The usage of storage buffers: mappable too on unified memory.
    fn storage_usage(&self) -> wgpu::BufferUsages {
        let usage = wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST;
        if self.unified.is_some() {
            usage | wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::MAP_WRITE
        } else {
            usage
        }
    }

    /// True when `native` is a buffer this device maps for the host: on unified memory,
    /// a buffer made mappable (its own, or an adopted one with both map usages).
    fn mappable(&self, native: &Native) -> bool {
        let usage = wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::MAP_WRITE;
        self.unified.is_some() && buffer_of(native).0.usage().contains(usage)
    }

    /// Runs `f` with the host address of `offset` bytes into `native` (a mappable
    /// buffer), the view ended after it.
    fn in_view<R>(
        &self,
        native: &Native,
        offset: usize,
        f: impl FnOnce(*mut u8) -> R,
    ) -> Result<R> {
        let at = self.view(native, offset)?;
        let value = f(at);
        // SAFETY: `at` came from `view` on this buffer and `f` is done with it.
        unsafe { crate::core::device::Device::unmap(self, native, at) }?;
        Ok(value)
    }

    /// The host address of `offset` bytes into a mappable storage buffer (unified memory
    /// only); ended by [`Unified::unmap`].
    fn view(&self, native: &Native, offset: usize) -> Result<*mut u8> {
        let (buffer, base) = buffer_of(native);
        match &self.unified {
            Some(unified) if self.mappable(native) => {
                unified.map(self, buffer, base + offset as u64)
            }
            _ => Err(Error::NotHostAccessible {
                location: self.location,
            }),
        }
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

fn buffer_of(native: &Native) -> (&Arc<wgpu::Buffer>, u64) {
    match native {
        Native::WebGpu { buffer, offset } => (buffer, *offset),
        #[allow(unreachable_patterns)]
        other => unreachable!("WebGPU device given a foreign handle {other:?}"),
    }
}
