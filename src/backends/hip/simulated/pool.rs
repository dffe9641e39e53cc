//! Stream-ordered pools in the simulated HIP runtime: a pool of locus's own is made for
//! a valid device; allocations come only from a pool `hipMemPoolCreate` made; an
//! attribute set on any other pool (the device's default one, which CuPy's and
//! PyTorch's `hipMallocAsync` share) is recorded as a violation; a stream-ordered free
//! gives the memory back.

use std::os::raw::c_void;

use super::super::entry_points::HipPool;
use super::super::pool_sys::*;
use super::{out, SimHip};
use crate::backends::cuda_hip::sim_model::Kind;

impl HipPool for SimHip {
    unsafe fn hipMemPoolCreate(
        &self,
        pool: *mut hipMemPool_t,
        props: *const hipMemPoolProps,
    ) -> hipError_t {
        if let Err(rc) = self.gate() {
            return rc;
        }
        // SAFETY: the caller's properties.
        let props = unsafe { &*props };
        if props.location.type_ != hipMemLocationType_hipMemLocationTypeDevice
            || !self.valid(props.location.id)
        {
            return hipError_t_hipErrorInvalidValue;
        }
        let mut devices = self.devices();
        let made = 0xB000 + 0x10 * devices.pools.len();
        devices.pools.push(made);
        drop(devices);
        self.0.record("hipMemPoolCreate", made);
        // SAFETY: the caller's out-pointer.
        unsafe { out(pool, made as hipMemPool_t) }
    }
    unsafe fn hipMemPoolDestroy(&self, pool: hipMemPool_t) -> hipError_t {
        self.0.record("hipMemPoolDestroy", pool as usize);
        let mut devices = self.devices();
        match devices.pools.iter().position(|&p| p == pool as usize) {
            Some(i) => {
                devices.pools[i] = 0;
                hipError_t_hipSuccess
            }
            None => hipError_t_hipErrorInvalidValue,
        }
    }
    unsafe fn hipMemPoolSetAttribute(
        &self,
        pool: hipMemPool_t,
        _: hipMemPoolAttr,
        _: *mut c_void,
    ) -> hipError_t {
        self.0.record("hipMemPoolSetAttribute", pool as usize);
        if !self.devices().pools.contains(&(pool as usize)) {
            self.0.violation(format!(
                "hipMemPoolSetAttribute on pool {pool:p}, which locus did not make (the device's default pool, shared with other libraries)"
            ));
        }
        hipError_t_hipSuccess
    }
    unsafe fn hipMallocFromPoolAsync(
        &self,
        ptr: *mut *mut c_void,
        size: usize,
        pool: hipMemPool_t,
        stream: hipStream_t,
    ) -> hipError_t {
        if let Err(rc) = self.gate() {
            return rc;
        }
        if !self.devices().pools.contains(&(pool as usize)) {
            return hipError_t_hipErrorInvalidValue;
        }
        self.0.record("hipMallocFromPoolAsync", stream as usize);
        match self.0.allocate_kind(size, Kind::Pool) {
            // SAFETY: the caller's out-pointer.
            Some(p) => unsafe { out(ptr, p as *mut c_void) },
            None => hipError_t_hipErrorOutOfMemory,
        }
    }
    unsafe fn hipFreeAsync(&self, ptr: *mut c_void, _: hipStream_t) -> hipError_t {
        if let Err(rc) = self.gate() {
            return rc;
        }
        match self.0.release("hipFreeAsync", ptr as usize) {
            true => hipError_t_hipSuccess,
            false => hipError_t_hipErrorInvalidValue,
        }
    }
}
