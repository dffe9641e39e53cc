//! `locus.use_pool`, `locus.use_upstream` and `locus.memory_statistics`: RMM's
//! `reinitialize(pool_allocator=True)` for every location, beside the composable
//! classes of `locus.mr`: route a location's allocations through a counted pool, read
//! its statistics, and go back to the raw allocation.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use locus::resource::{self, MemoryResource, Pool, Statistics};
use locus::Location;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::{guarded, lock, parse_location, py_err};

/// A pool `use_pool` installed, and the statistics adaptor over it.
type Counted = (Arc<Pool>, Arc<Statistics>);

/// The counted pools `use_pool` installed, by location (for `memory_statistics`).
static POOLS: Mutex<Option<HashMap<Location, Counted>>> = Mutex::new(None);

/// Makes a pool the default resource at `location`: buffers made there afterwards take
/// their memory from it (memory already allocated goes back where it came from).
/// `initial_size` bytes are taken from the backend now, and the pool grows in steps of
/// at least that much up to `maximum_size`. Returns the pool's description.
#[pyfunction]
#[pyo3(signature = (location, initial_size = 8 << 20, maximum_size = usize::MAX / 2))]
pub fn use_pool(
    py: Python<'_>,
    location: &str,
    initial_size: usize,
    maximum_size: usize,
) -> PyResult<String> {
    guarded(|| {
        let at = parse_location(location)?;
        crate::detach(py, || {
            let pool = Arc::new(Pool::new(
                resource::upstream(at)?,
                initial_size,
                maximum_size,
            ));
            pool.reserve(initial_size)?;
            let counted = Arc::new(Statistics::new(pool.clone()));
            resource::set_default(at, counted.clone())?;
            let description = counted.describe();
            lock(&POOLS)
                .get_or_insert_with(HashMap::new)
                .insert(at, (pool, counted));
            Ok(description)
        })
        .map_err(py_err)
    })
}

/// Makes the backend's own allocation the default resource at `location` again.
#[pyfunction]
pub fn use_upstream(py: Python<'_>, location: &str) -> PyResult<()> {
    guarded(|| {
        let at = parse_location(location)?;
        crate::detach(py, || {
            resource::set_default(at, resource::upstream(at)?)?;
            if let Some(pools) = lock(&POOLS).as_mut() {
                pools.remove(&at);
            }
            Ok(())
        })
        .map_err(py_err)
    })
}

/// The default resource at `location` and, when it is a pool from `use_pool`, what it
/// did: `{"resource": str, "current_bytes", "peak_bytes", "total_bytes", "current_count",
/// "peak_count", "total_count", "pool_bytes"}` (`pool_bytes`: taken from the backend).
#[pyfunction]
pub fn memory_statistics<'py>(py: Python<'py>, location: &str) -> PyResult<Bound<'py, PyDict>> {
    guarded(|| {
        let at = parse_location(location)?;
        let out = PyDict::new(py);
        let current = crate::detach(py, || resource::default_for(at).map(|r| r.describe()))
            .map_err(py_err)?;
        out.set_item("resource", current)?;
        let counted = lock(&POOLS).as_ref().and_then(|p| p.get(&at).cloned());
        if let Some((pool, counted)) = counted {
            let t = counted.totals();
            out.set_item("current_bytes", t.current_bytes)?;
            out.set_item("peak_bytes", t.peak_bytes)?;
            out.set_item("total_bytes", t.total_bytes)?;
            out.set_item("current_count", t.current_count)?;
            out.set_item("peak_count", t.peak_count)?;
            out.set_item("total_count", t.total_count)?;
            out.set_item("pool_bytes", pool.held_bytes())?;
        }
        Ok(out)
    })
}
