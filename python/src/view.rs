//! What a handle keeps alive ([`View`]): the serving memory and its host mapping; and the
//! WebGPU buffers exported to DLPack consumers, so that adoption finds them again.

use super::*;

/// What a handle keeps alive: the serving memory and, where code at the consumer's
/// location runs on the host, a host mapping of it. The mapping is shared: the handle
/// gives up its hold when it is closed, and the numpy arrays and DLPack exports made from
/// it hold it for as long as they live (a WebGPU buffer runs no GPU work while mapped).
pub(crate) struct View {
    pub(crate) memory: Arc<Memory>,
    mapping: Mutex<Option<Arc<HostMapping>>>,
    /// Made with a host mapping (stays true once the handle's hold is given up: what the
    /// view exports does not change).
    pub(crate) host_mapped: bool,
    pub(crate) consumer: Location,
    pub(crate) dtype: DType,
    pub(crate) shape: Vec<usize>,
    pub(crate) writable: bool,
    /// A write handle counts as a write at its location until it is closed.
    pub(crate) open: AtomicBool,
    pub(crate) in_place: bool,
    pub(crate) route: String,
    /// Made for one export (`copy=True`, another device): the DLPack IS_COPIED flag.
    pub(crate) copied: bool,
    /// For a write handle at a CUDA or HIP location: the streams its consumers named,
    /// waited for before the buffer is used again.
    pub(crate) streams: Option<Arc<crate::consumer_streams::ConsumerStreams>>,
}

impl Drop for View {
    /// The last array or export made from a write handle went (or the handle, never
    /// closed): its consumers' streams are recorded now, as at a close.
    fn drop(&mut self) {
        if let Some(streams) = &self.streams {
            streams.record_at_close();
        }
    }
}

impl View {
    pub(crate) fn new(
        served: Served,
        consumer: Location,
        dtype: DType,
        shape: Vec<usize>,
        writable: bool,
    ) -> locus::Result<View> {
        let on_host = locus::registry().device(consumer)?.executes_on_host();
        let mapping = match served.mapping {
            Some(m) => Some(m),
            None if on_host && served.memory.host_access() != HostAccess::None => {
                Some(served.memory.map(0..served.memory.len(), writable)?)
            }
            None => None,
        };
        Ok(View {
            memory: served.memory,
            host_mapped: mapping.is_some(),
            mapping: Mutex::new(mapping.map(Arc::new)),
            consumer,
            dtype,
            shape,
            writable,
            open: AtomicBool::new(writable),
            in_place: served.in_place,
            route: served.route.to_string(),
            copied: false,
            streams: writable
                .then(|| crate::consumer_streams::ConsumerStreams::for_writer(consumer))
                .flatten(),
        })
    }

    /// The host mapping, while the handle holds it (or an array or export made from it
    /// keeps it: then this is the same mapping).
    pub(crate) fn mapping(&self) -> Option<Arc<HostMapping>> {
        lock(&self.mapping).clone()
    }

    /// Gives up the handle's hold on the mapping: it ends with the last array or export
    /// made from it.
    pub(crate) fn release_mapping(&self) {
        let released = lock(&self.mapping).take();
        drop(released);
    }

    pub(crate) fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// The DLPack device of the data this view exports: CPU for a host address (a
    /// consumer on the host with a mapping, host memory, an OpenMP initial-device
    /// pointer, or memory only the host mapping reaches), the memory's own device type
    /// for its technology's handle (a USM pointer, a cl_mem, ...).
    pub(crate) fn dl_device(&self) -> DLDevice {
        let own = dlpack::device_of_location(self.memory.location(), Some(self.memory.native()));
        let own_technology = self.memory.location().technology() == self.consumer.technology();
        let host_address = match self.memory.native() {
            Native::Host { .. } => true,
            _ if self.consumer == Location::Host => self.host_mapped,
            _ if own_technology => own.device_type == dlpack::DL_CPU,
            _ => self.host_mapped,
        };
        if host_address {
            DLDevice {
                device_type: dlpack::DL_CPU,
                device_id: 0,
            }
        } else {
            own
        }
    }

    /// (data handle, byte offset) as DLPack wants them for this view, and the mapping
    /// the consumer reads through (to keep alive with the export). A host address whose
    /// mapping the closed handle gave up is an error.
    pub(crate) fn dl_data(
        &self,
    ) -> PyResult<(*mut std::ffi::c_void, u64, Option<Arc<HostMapping>>)> {
        let host_address = self.dl_device().device_type == dlpack::DL_CPU;
        if host_address && self.host_mapped {
            let m = self.mapping().ok_or_else(closed_handle)?;
            return Ok((m.as_ptr().cast_mut().cast(), 0, Some(m)));
        }
        let (data, offset) = match self.memory.native() {
            Native::Host { ptr } => (ptr.cast(), 0),
            Native::OpenMp { ptr, .. } => (ptr.cast(), 0),
            Native::OpenCl { mem, offset } => (mem.cast(), *offset as u64),
            Native::Sycl { ptr, .. } => (ptr.cast(), 0),
            Native::Cuda { ptr, .. } | Native::Hip { ptr, .. } => {
                (*ptr as *mut std::ffi::c_void, 0)
            }
            // Opaque: the address of the `wgpu::Buffer`, for Rust code in this process.
            Native::WebGpu { buffer, offset } => {
                (std::ptr::from_ref(&**buffer).cast_mut().cast(), *offset)
            }
            // `Native` is non-exhaustive to other crates, so a wildcard is needed; the
            // match over `Technology` in `dlpack.rs` fails to compile for a technology
            // added to locus until it is handled here and there.
            #[allow(unreachable_patterns)]
            _ => (std::ptr::null_mut(), 0),
        };
        Ok((data, offset, None))
    }
}

/// The error of a host view asked of a closed handle.
pub(crate) fn closed_handle() -> PyErr {
    PyValueError::new_err(
        "this handle is closed (its with-block ended, or close() was called): its host view is \
         given up; call access() / access_mut() again for a new one",
    )
}

/// One WebGPU export: the opaque data handle (the `wgpu::Buffer`'s address, shared by
/// every pool block of that buffer) and the byte range of the buffer it covers.
pub(crate) struct WgpuExport {
    pub(crate) data: usize,
    pub(crate) range: std::ops::Range<u64>,
    pub(crate) view: Weak<View>,
}

/// WebGPU buffers exported through DLPack: a Vulkan tensor coming back is adopted only
/// when it lies inside one of these (a foreign VkBuffer cannot become a wgpu buffer).
pub(crate) static WGPU_EXPORTS: Mutex<Vec<WgpuExport>> = Mutex::new(Vec::new());

pub(crate) fn remember_wgpu_export(data: usize, byte_offset: u64, view: &Arc<View>) {
    let mut exports = lock(&WGPU_EXPORTS);
    exports.retain(|e| e.view.strong_count() > 0);
    exports.push(WgpuExport {
        data,
        range: byte_offset..byte_offset + view.memory.len() as u64,
        view: Arc::downgrade(view),
    });
}

/// The export whose memory holds `bytes` bytes at `byte_offset` of buffer `data` (so
/// that adopting it keeps exactly that memory alive).
pub(crate) fn exported_wgpu_view(data: usize, byte_offset: u64, bytes: u64) -> Option<Arc<View>> {
    lock(&WGPU_EXPORTS)
        .iter()
        .filter(|e| e.data == data)
        .filter(|e| e.range.start <= byte_offset && byte_offset + bytes <= e.range.end)
        .find_map(|e| e.view.upgrade())
}

/// A copy of `view`'s data in new memory at `target`, for one export.
pub(crate) fn copy_view(view: &View, target: Location) -> locus::Result<View> {
    let bytes = view.memory.len();
    let fresh = Arc::new(Memory::new(target, bytes)?);
    let route = view.memory.copy_to(0, &fresh, 0, bytes)?;
    let served = Served {
        memory: fresh,
        in_place: false,
        route,
        mapping: None,
    };
    let mut copy = View::new(
        served,
        target,
        view.dtype,
        view.shape.clone(),
        view.writable,
    )?;
    copy.copied = true;
    copy.open.store(false, Ordering::SeqCst);
    Ok(copy)
}
