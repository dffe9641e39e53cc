//! `locus.mr`: memory resources as composable classes, as hipMM's / RMM's Python
//! `rmm.mr` has them (`PoolMemoryResource(upstream_mr, initial_pool_size,
//! maximum_pool_size)`, `StatisticsResourceAdaptor(upstream_mr)`, ...), for every
//! location, and the resource each location's buffers allocate from
//! (`set_per_device_resource`, `set_current_device_resource`).
//!
//! Each class holds the Rust resource it made and a reference to its upstream object,
//! so a composition stays alive as long as its top does.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use locus::resource::{
    self, Arena, Binning, Block, FailureCallback, FixedSize, Limiting, Logging, MemoryResource,
    Pool, Statistics, Tracking,
};
use locus::{Location, MemoryKind};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::{guarded, lock, parse_location, py_err};

mod adaptors;
pub(crate) mod reinitialize;

pub use adaptors::{PyFailureCallback, PyLimiting, PyLogging, PyStatistics, PyTracking};

/// The base of every resource class: where it allocates, `allocate` / `deallocate` of
/// raw blocks, and its upstream.
#[pyclass(subclass, frozen, module = "locus.mr", name = "MemoryResource")]
pub struct PyResource {
    pub(crate) inner: Arc<dyn MemoryResource>,
    upstream: Option<Py<PyResource>>,
    /// Blocks handed out by `allocate`, by the number returned for them.
    blocks: Mutex<HashMap<u64, Block>>,
}

/// The numbers standing for OpenCL and WebGPU blocks, unique in the process (not per
/// resource: a number one resource gave out is then never one of another's, and a
/// `deallocate` on the wrong resource is an error instead of freeing its block).
static NEXT_HANDLE: AtomicU64 = AtomicU64::new(1);

impl PyResource {
    fn new(inner: Arc<dyn MemoryResource>, upstream: Option<Py<PyResource>>) -> PyResource {
        PyResource {
            inner,
            upstream,
            blocks: Mutex::new(HashMap::new()),
        }
    }

    /// A subclass's initializer over `inner`.
    fn init<T: pyo3::PyClass<BaseType = PyResource>>(
        inner: Arc<dyn MemoryResource>,
        upstream: Option<Py<PyResource>>,
        sub: T,
    ) -> PyClassInitializer<T> {
        PyClassInitializer::from(PyResource::new(inner, upstream)).add_subclass(sub)
    }
}

impl Drop for PyResource {
    fn drop(&mut self) {
        // Blocks `allocate` handed out and nobody gave back: back to the resource.
        for (_, block) in lock(&self.blocks).drain() {
            self.inner.deallocate(block);
        }
    }
}

#[pymethods]
impl PyResource {
    /// Where its memory lives (`"host"`, `"opencl:0"`, ...).
    #[getter]
    fn location(&self) -> String {
        self.inner.location().to_string()
    }

    /// The resource this one takes its memory from (`None` for an upstream).
    #[getter]
    fn upstream_mr(&self, py: Python<'_>) -> Option<Py<PyResource>> {
        self.upstream.as_ref().map(|u| u.clone_ref(py))
    }

    /// Allocates `nbytes` aligned to `alignment` and returns its address: the pointer
    /// where the technology has pointers (host, OpenMP, SYCL, CUDA, HIP), a number
    /// standing for the block elsewhere (OpenCL and WebGPU blocks are parts of buffer
    /// objects). Give it back with `deallocate`.
    #[pyo3(signature = (nbytes, alignment = 256))]
    fn allocate(&self, py: Python<'_>, nbytes: usize, alignment: usize) -> PyResult<u64> {
        guarded(|| {
            let block =
                crate::detach(py, || self.inner.allocate(nbytes, alignment)).map_err(py_err)?;
            let handle = match block.location().technology() {
                locus::Technology::OpenCl | locus::Technology::WebGpu => {
                    NEXT_HANDLE.fetch_add(1, Ordering::Relaxed)
                }
                _ => block.native().address(),
            };
            let mut blocks = lock(&self.blocks);
            // A zero-byte block may share an address with another: keep both.
            let handle = (handle..)
                .find(|h| !blocks.contains_key(h))
                .unwrap_or(handle);
            blocks.insert(handle, block);
            Ok(handle)
        })
    }

    /// Gives back the block `allocate` returned as `ptr` (`nbytes` as asked).
    fn deallocate(&self, py: Python<'_>, ptr: u64, nbytes: usize) -> PyResult<()> {
        guarded(|| {
            let block = lock(&self.blocks).remove(&ptr).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "{}: {ptr:#x} is not a block this resource's allocate returned (it was given back \
                     already, or another resource allocated it: give it back to that one); nothing was freed",
                    self.inner.describe()
                ))
            })?;
            if block.bytes() < nbytes {
                let bytes = block.bytes();
                lock(&self.blocks).insert(ptr, block);
                return Err(PyValueError::new_err(format!(
                    "{}: the block at {ptr:#x} has {bytes} bytes, not {nbytes}",
                    self.inner.location()
                )));
            }
            crate::detach(py, || self.inner.deallocate(block));
            Ok(())
        })
    }

    fn __repr__(&self) -> String {
        format!("<locus.mr {}>", self.inner.describe())
    }
}

/// Bytes from an int or a string with a unit (`"1GiB"`, `"512 MiB"`, `"2GB"`, `"4096"`),
/// as RMM's Python takes pool sizes; strings as `locus bench --sizes` reads them.
fn parse_bytes(value: &Bound<'_, PyAny>) -> PyResult<usize> {
    if let Ok(n) = value.extract::<usize>() {
        return Ok(n);
    }
    let text: String = value.extract().map_err(|_| {
        PyTypeError::new_err("a size is an int of bytes or a string such as \"1GiB\"")
    })?;
    let bytes = locus::core::size::parse_size(&text).map_err(py_err)?;
    usize::try_from(bytes)
        .map_err(|_| PyValueError::new_err(format!("size {text:?} does not fit in memory sizes")))
}

/// An optional size argument.
fn size_or(value: Option<&Bound<'_, PyAny>>, default: usize) -> PyResult<usize> {
    value.map_or(Ok(default), parse_bytes)
}

/// The backend's own allocation at `location`, of memory `kind` (`"default"`,
/// `"pinned-host"`, `"managed"`, `"stream-ordered"`, `"usm-device"`, `"usm-shared"`,
/// `"usm-host"`: those the location offers). RMM's `CudaMemoryResource`,
/// `ManagedMemoryResource`, `PinnedHostMemoryResource` and `CudaAsyncMemoryResource`
/// are this class at a CUDA location with a kind.
#[pyclass(extends = PyResource, subclass, frozen, module = "locus.mr", name = "UpstreamMemoryResource")]
pub struct PyUpstream;

#[pymethods]
impl PyUpstream {
    #[new]
    #[pyo3(signature = (location = "host", kind = "default"))]
    fn new(location: &str, kind: &str) -> PyResult<PyClassInitializer<PyUpstream>> {
        guarded(|| {
            let at = parse_location(location)?;
            let kind = MemoryKind::ALL
                .into_iter()
                .find(|k| k.name() == kind)
                .ok_or_else(|| {
                    PyValueError::new_err(format!(
                        "{at}: unknown memory kind {kind:?}; kinds: {}",
                        MemoryKind::ALL.map(|k| k.name()).join(", ")
                    ))
                })?;
            let inner = resource::upstream_of_kind(at, kind).map_err(py_err)?;
            Ok(PyResource::init(inner, None, PyUpstream))
        })
    }
}

/// A pool over `upstream_mr` (RMM's `PoolMemoryResource`): it takes `initial_pool_size`
/// bytes from upstream at once and grows in steps of at least that much up to
/// `maximum_pool_size`. The default initial size is half the free memory at the location
/// (RMM's), at most the largest single allocation there; the default maximum, none.
#[pyclass(extends = PyResource, frozen, module = "locus.mr", name = "PoolMemoryResource")]
pub struct PyPool {
    pool: Arc<Pool>,
}

#[pymethods]
impl PyPool {
    #[new]
    #[pyo3(signature = (upstream_mr, initial_pool_size = None, maximum_pool_size = None))]
    fn new(
        py: Python<'_>,
        upstream_mr: Py<PyResource>,
        initial_pool_size: Option<&Bound<'_, PyAny>>,
        maximum_pool_size: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClassInitializer<PyPool>> {
        guarded(|| {
            let upstream = Arc::clone(&upstream_mr.get().inner);
            let at = upstream.location();
            let initial = match initial_pool_size {
                Some(v) => parse_bytes(v)?,
                None => {
                    let max = locus::registry()
                        .device(at)
                        .map_err(py_err)?
                        .info()
                        .max_allocation;
                    let half = resource::percent_of_free_memory(at, 50).map_err(py_err)?;
                    half.min(usize::try_from(max).unwrap_or(usize::MAX))
                }
            };
            let maximum = size_or(maximum_pool_size, usize::MAX)?;
            if initial > maximum {
                return Err(PyValueError::new_err(format!(
                    "{at}: initial_pool_size {initial} is larger than maximum_pool_size {maximum}"
                )));
            }
            let pool = Arc::new(Pool::new(upstream, initial, maximum));
            crate::detach(py, || pool.reserve(initial)).map_err(py_err)?;
            let inner: Arc<dyn MemoryResource> = pool.clone();
            Ok(PyResource::init(inner, Some(upstream_mr), PyPool { pool }))
        })
    }

    /// Bytes the pool holds from upstream (RMM's `pool_size()`).
    fn pool_size(&self) -> usize {
        self.pool.held_bytes()
    }

    /// Gives the memory nobody uses back to upstream; returns how many bytes.
    fn release(&self, py: Python<'_>) -> usize {
        crate::detach(py, || self.pool.release())
    }
}

/// Per-thread arenas over a global arena (RMM's `ArenaMemoryResource`): the global
/// arena is a pool of `arena_size` bytes over `upstream_mr` (upstream itself when
/// `None`); threads take superblocks of up to 4 MiB from it.
#[pyclass(extends = PyResource, frozen, module = "locus.mr", name = "ArenaMemoryResource")]
pub struct PyArena;

#[pymethods]
impl PyArena {
    #[new]
    #[pyo3(signature = (upstream_mr, arena_size = None))]
    fn new(
        upstream_mr: Py<PyResource>,
        arena_size: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClassInitializer<PyArena>> {
        guarded(|| {
            let upstream = Arc::clone(&upstream_mr.get().inner);
            let (global, superblock): (Arc<dyn MemoryResource>, usize) = match arena_size {
                Some(size) => {
                    let size = parse_bytes(size)?;
                    (Arc::new(Pool::new(upstream, size, size)), size.min(4 << 20))
                }
                None => (upstream, 4 << 20),
            };
            let inner = Arc::new(Arena::new(global, superblock.max(1)));
            Ok(PyResource::init(inner, Some(upstream_mr), PyArena))
        })
    }
}

/// System-allocated memory for a GPU that pages host memory in on use (RMM's
/// `SamHeadroomMemoryResource(headroom)`): each allocation prefers the GPU at
/// `location` for as much as leaves `headroom` bytes of its memory free, the host for
/// the rest. A `ValueError` naming the GPU where it does not use host memory in place
/// (no HMM / ATS).
#[pyclass(extends = PyResource, frozen, module = "locus.mr", name = "SamHeadroomMemoryResource")]
pub struct PySamHeadroom;

#[pymethods]
impl PySamHeadroom {
    #[new]
    #[pyo3(signature = (headroom, location = "cuda:0"))]
    fn new(
        headroom: &Bound<'_, PyAny>,
        location: &str,
    ) -> PyResult<PyClassInitializer<PySamHeadroom>> {
        guarded(|| {
            let headroom = parse_bytes(headroom)?;
            let at = parse_location(location)?;
            let inner = Arc::new(resource::SamHeadroom::new(at, headroom).map_err(py_err)?);
            Ok(PyResource::init(inner, None, PySamHeadroom))
        })
    }
}

/// Blocks of one size (RMM's `FixedSizeMemoryResource`): `block_size` bytes each,
/// `blocks_to_preallocate` of them per upstream allocation.
#[pyclass(extends = PyResource, frozen, module = "locus.mr", name = "FixedSizeMemoryResource")]
pub struct PyFixedSize;

#[pymethods]
impl PyFixedSize {
    #[new]
    #[pyo3(signature = (upstream_mr, block_size = None, blocks_to_preallocate = 128))]
    fn new(
        upstream_mr: Py<PyResource>,
        block_size: Option<&Bound<'_, PyAny>>,
        blocks_to_preallocate: usize,
    ) -> PyResult<PyClassInitializer<PyFixedSize>> {
        guarded(|| {
            let upstream = Arc::clone(&upstream_mr.get().inner);
            let block = size_or(block_size, 1 << 20)?;
            let inner =
                Arc::new(FixedSize::new(upstream, block, blocks_to_preallocate).map_err(py_err)?);
            Ok(PyResource::init(inner, Some(upstream_mr), PyFixedSize))
        })
    }
}

/// Sizes routed to bins (RMM's `BinningMemoryResource`): a fixed-size bin for each power
/// of two from `2**min_size_exponent` to `2**max_size_exponent` (128 blocks per upstream
/// allocation, as RMM's bins take), larger sizes straight to `upstream_mr`; without
/// exponents, no bins.
#[pyclass(extends = PyResource, frozen, module = "locus.mr", name = "BinningMemoryResource")]
pub struct PyBinning;

#[pymethods]
impl PyBinning {
    #[new]
    #[pyo3(signature = (upstream_mr, min_size_exponent = None, max_size_exponent = None))]
    fn new(
        upstream_mr: Py<PyResource>,
        min_size_exponent: Option<u32>,
        max_size_exponent: Option<u32>,
    ) -> PyResult<PyClassInitializer<PyBinning>> {
        guarded(|| {
            let upstream = Arc::clone(&upstream_mr.get().inner);
            let power = |e: u32| {
                1usize.checked_shl(e).ok_or_else(|| {
                    PyValueError::new_err(format!("2**{e} bytes does not fit in memory sizes"))
                })
            };
            let (smallest, largest) = match (min_size_exponent, max_size_exponent) {
                (Some(lo), Some(hi)) => (power(lo)?, power(hi)?),
                (None, None) => (1, 0), // no bins
                _ => {
                    return Err(PyValueError::new_err(
                        "give both min_size_exponent and max_size_exponent, or neither",
                    ))
                }
            };
            let inner = Arc::new(
                Binning::new(Arc::clone(&upstream), upstream, smallest, largest, 128)
                    .map_err(py_err)?,
            );
            Ok(PyResource::init(inner, Some(upstream_mr), PyBinning))
        })
    }
}

/// The Python object set per location, so that `get_per_device_resource` returns it.
static CURRENT: Mutex<Option<HashMap<Location, Py<PyResource>>>> = Mutex::new(None);

/// Makes `mr` the resource buffers at `location` allocate from (RMM's
/// `set_per_device_resource`); `mr` must allocate there. Returns the previous one.
#[pyfunction]
pub fn set_per_device_resource(
    py: Python<'_>,
    location: &str,
    mr: Py<PyResource>,
) -> PyResult<Py<PyResource>> {
    guarded(|| {
        let previous = get_per_device_resource(py, location)?;
        let at = parse_location(location)?;
        let inner = Arc::clone(&mr.get().inner);
        crate::detach(py, || resource::set_default(at, inner)).map_err(py_err)?;
        lock(&CURRENT)
            .get_or_insert_with(HashMap::new)
            .insert(at, mr);
        Ok(previous)
    })
}

/// The resource buffers at `location` allocate from (RMM's `get_per_device_resource`):
/// the object last set there, or the location's upstream.
#[pyfunction]
pub fn get_per_device_resource(py: Python<'_>, location: &str) -> PyResult<Py<PyResource>> {
    guarded(|| {
        let at = parse_location(location)?;
        let inner = crate::detach(py, || resource::default_for(at)).map_err(py_err)?;
        if let Some(set) = lock(&CURRENT).as_ref().and_then(|m| m.get(&at)) {
            if Arc::ptr_eq(&set.get().inner, &inner) {
                return Ok(set.clone_ref(py));
            }
        }
        // Set elsewhere (Rust, `use_pool`): a wrapper of the resource in use.
        Py::new(py, PyClassInitializer::from(PyResource::new(inner, None)))
    })
}

/// Makes `mr` the resource of the location it allocates at (RMM's
/// `set_current_device_resource`; locus has no current device, so the resource's own
/// location is the one). Returns the previous one.
#[pyfunction]
pub fn set_current_device_resource(py: Python<'_>, mr: Py<PyResource>) -> PyResult<Py<PyResource>> {
    let location = mr.get().inner.location().to_string();
    set_per_device_resource(py, &location, mr)
}

/// The memory available at `location` and its total, in bytes (RMM's
/// `available_device_memory`).
#[pyfunction]
pub fn available_device_memory(py: Python<'_>, location: &str) -> PyResult<(u64, u64)> {
    guarded(|| {
        let at = parse_location(location)?;
        crate::detach(py, || resource::available_memory(at)).map_err(py_err)
    })
}

/// `percent` of the memory available at `location`, rounded down to 256 bytes (RMM's
/// `percent_of_free_device_memory`).
#[pyfunction]
pub fn percent_of_free_device_memory(
    py: Python<'_>,
    percent: u32,
    location: &str,
) -> PyResult<usize> {
    guarded(|| {
        let at = parse_location(location)?;
        crate::detach(py, || resource::percent_of_free_memory(at, percent)).map_err(py_err)
    })
}

/// Replays the allocation log `log_file_name` (CSV, as `LoggingResourceAdaptor` writes
/// it) against `mr`: every allocation and free in order, the GIL released (`locus replay`
/// from Python). Returns `{"operations", "seconds", "peak_live_bytes",
/// "peak_live_count", "end_live_bytes", "end_live_count"}`; blocks still live at the log's
/// end are given back after.
#[pyfunction]
pub fn replay<'py>(
    py: Python<'py>,
    log_file_name: std::path::PathBuf,
    mr: Py<PyResource>,
) -> PyResult<Bound<'py, PyDict>> {
    guarded(|| {
        let text = std::fs::read_to_string(&log_file_name).map_err(|e| {
            pyo3::exceptions::PyOSError::new_err(format!(
                "replay: cannot read the log {}: {e}",
                log_file_name.display()
            ))
        })?;
        let inner = Arc::clone(&mr.get().inner);
        let report =
            crate::detach(py, || locus_cli::replay(&text, inner.as_ref())).map_err(py_err)?;
        let out = PyDict::new(py);
        out.set_item("operations", report.operations)?;
        out.set_item("seconds", report.seconds)?;
        out.set_item("peak_live_bytes", report.peak_live_bytes)?;
        out.set_item("peak_live_count", report.peak_live_count)?;
        out.set_item("end_live_bytes", report.end_live_bytes)?;
        out.set_item("end_live_count", report.end_live_count)?;
        out.set_item("threads", report.threads)?;
        out.set_item("streams", report.streams)?;
        Ok(out)
    })
}

/// Adds the classes and functions to `m` (the `locus.mr` names).
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyResource>()?;
    m.add_class::<PyUpstream>()?;
    m.add_class::<PyPool>()?;
    m.add_class::<PyArena>()?;
    m.add_class::<PyFixedSize>()?;
    m.add_class::<PySamHeadroom>()?;
    m.add_class::<PyBinning>()?;
    m.add_class::<PyStatistics>()?;
    m.add_class::<PyLimiting>()?;
    m.add_class::<PyTracking>()?;
    m.add_class::<PyLogging>()?;
    m.add_class::<PyFailureCallback>()?;
    m.add_function(wrap_pyfunction!(set_per_device_resource, m)?)?;
    m.add_function(wrap_pyfunction!(get_per_device_resource, m)?)?;
    m.add_function(wrap_pyfunction!(set_current_device_resource, m)?)?;
    m.add_function(wrap_pyfunction!(available_device_memory, m)?)?;
    m.add_function(wrap_pyfunction!(percent_of_free_device_memory, m)?)?;
    m.add_function(wrap_pyfunction!(replay, m)?)?;
    Ok(())
}
