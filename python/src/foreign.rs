//! [`Foreign`]: memory another library made (a numpy array, a DLPack capsule), adopted
//! without a copy when it can be, with the producer kept alive.

use super::*;

/// Memory made elsewhere, about to be adopted (from DLPack or an array interface).
pub(crate) struct Foreign {
    pub(crate) location: Location,
    pub(crate) device: DLDevice,
    pub(crate) data: *mut u8,
    pub(crate) byte_offset: u64,
    pub(crate) shape: Vec<usize>,
    /// Strides in bytes (`None`: compact row-major).
    pub(crate) strides: Option<Vec<isize>>,
    pub(crate) dtype: DType,
    pub(crate) read_only: bool,
    /// Keeps the producer's memory alive; dropped when locus no longer uses it.
    pub(crate) keep: Box<dyn Send + Sync>,
    /// Register the host memory in place with the runtimes that pin host memory
    /// (`locus.register_host_memory` in Rust) while locus uses it.
    pub(crate) register: bool,
}

/// The bytes of a strided host array, gathered in row-major order.
///
/// # Safety
/// `base` plus every offset the shape and strides reach must address readable memory.
unsafe fn gather(base: *const u8, shape: &[usize], strides: &[isize], size: usize) -> Vec<u8> {
    let len: usize = shape.iter().product();
    let mut out = Vec::with_capacity(len * size);
    let mut index = vec![0usize; shape.len()];
    for _ in 0..len {
        let offset: isize = index
            .iter()
            .zip(strides)
            .map(|(&i, &s)| i as isize * s)
            .sum();
        // SAFETY: per the caller's contract the element at `offset` is readable.
        out.extend_from_slice(unsafe { std::slice::from_raw_parts(base.offset(offset), size) });
        for d in (0..shape.len()).rev() {
            index[d] += 1;
            if index[d] < shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
    out
}

pub(crate) fn is_compact(shape: &[usize], strides: &[isize], size: usize) -> bool {
    let mut expected = size as isize;
    for (&n, &s) in shape.iter().zip(strides).rev() {
        if n != 1 && s != expected {
            return false;
        }
        expected *= n as isize;
    }
    true
}

impl Foreign {
    pub(crate) fn adopt(self, py: Python<'_>, copy: Option<bool>) -> PyResult<PyBuffer> {
        let Foreign {
            mut location,
            device,
            data,
            byte_offset,
            shape,
            strides,
            dtype,
            read_only,
            keep,
            register,
        } = self;
        if register && (location != Location::Host || copy == Some(true)) {
            return Err(PyValueError::new_err(format!(
                "register=True pins host memory where it lies: {}",
                if copy == Some(true) {
                    "with copy=True there is nothing of the caller's to pin (the copy is locus's)"
                        .to_string()
                } else {
                    format!("the array is at {location}, not in host memory")
                }
            )));
        }
        locus::registry().device(location).map_err(py_err)?;
        let len = buffer::elements(&shape, dtype.size)?;
        if len == 0 {
            // Nothing to adopt (the pointer of an empty array may be anything, null too).
            drop(keep);
            let store =
                crate::detach(py, || Store::zeroed(location, 0, dtype.size)).map_err(py_err)?;
            return Ok(PyBuffer::wrap(store, dtype, shape, read_only));
        }
        if data.is_null() {
            return Err(PyBufferError::new_err(format!(
                "the {location} array of shape {shape:?} has a null data pointer; there is no memory to adopt"
            )));
        }
        if let Some(s) = strides.as_ref().filter(|s| s.len() != shape.len()) {
            return Err(PyValueError::new_err(format!(
                "the {location} array has {} strides {s:?} for its {} dimensions (shape {shape:?}): \
                 a malformed array interface",
                s.len(),
                shape.len()
            )));
        }
        let compact = strides
            .as_ref()
            .is_none_or(|s| is_compact(&shape, s, dtype.size));
        let first = data.wrapping_add(byte_offset as usize);
        let aligned = location != Location::Host || (first as usize).is_multiple_of(dtype.size);
        if !compact || !aligned {
            let what = if compact {
                "misaligned"
            } else {
                "non-contiguous"
            };
            if copy != Some(true) {
                return Err(PyBufferError::new_err(format!(
                    "the array is {what} (strides {strides:?} bytes, shape {shape:?}): locus adopts only contiguous, \
                     aligned memory without copying; pass copy=True for a contiguous copy"
                )));
            }
            if location != Location::Host {
                return Err(PyBufferError::new_err(format!(
                    "the array at {location} is {what}: locus adopts only contiguous device memory; \
                     make it contiguous on its device first"
                )));
            }
            let default_strides = {
                let mut s = vec![0isize; shape.len()];
                let mut acc = dtype.size as isize;
                for d in (0..shape.len()).rev() {
                    s[d] = acc;
                    acc *= shape[d] as isize;
                }
                s
            };
            let strides = strides.unwrap_or(default_strides);
            // SAFETY: the producer vouches that its shape and strides address its memory,
            // which `keep` holds alive until after this copy.
            let bytes = unsafe { gather(first, &shape, &strides, dtype.size) };
            drop(keep);
            let store = crate::detach(py, || Store::from_bytes(Location::Host, &bytes, dtype.size))
                .map_err(py_err)?;
            return Ok(PyBuffer::wrap(store, dtype, shape, false));
        }
        let (native, keep): (Native, Box<dyn Send + Sync>) = match location {
            // A wgpu buffer locus exported: the same buffer (another handle to it).
            Location::WebGpu(_) => {
                match exported_wgpu_view(data as usize, byte_offset, (len * dtype.size) as u64) {
                    Some(view) => match view.memory.native().duplicate() {
                        Native::WebGpu { buffer, .. } => (
                            Native::WebGpu {
                                buffer,
                                offset: byte_offset,
                            },
                            Box::new((keep, view)),
                        ),
                        _ => (
                            dlpack::native_for(location, device, data, byte_offset)?,
                            keep,
                        ),
                    },
                    None => (
                        dlpack::native_for(location, device, data, byte_offset)?,
                        keep,
                    ),
                }
            }
            // A cl_mem of another context (another library's) cannot be used on locus'
            // queue; a SYCL pointer must be USM of the device's context (its kind decides
            // how the host reaches it).
            Location::OpenCl(_) => {
                let cl = locus::device_as::<locus::backends::opencl::OpenClDevice>(location)
                    .map_err(py_err)?;
                // Only a cl_mem locus made may be asked about: a forged handle would
                // crash the ICD loader in the very query meant to refuse it.
                if !locus::backends::opencl::made_by_locus(data.cast()) {
                    return Err(PyBufferError::new_err(format!(
                        "the DLPack capsule's OpenCL data {data:p} is not a buffer locus made \
                         (only those can be checked safely before use at {location}): copy it \
                         through the host"
                    )));
                }
                // SAFETY: a cl_mem locus made and has not released (checked just above).
                if !unsafe { cl.owns(data.cast()) } {
                    return Err(PyBufferError::new_err(format!(
                        "the cl_mem belongs to another OpenCL context than {location}'s (locus opens \
                         each device in its own context): copy it through the host"
                    )));
                }
                (
                    dlpack::native_for(location, device, data, byte_offset)?,
                    keep,
                )
            }
            Location::Sycl(_) => {
                // The location whose context owns the USM: the one DLPack names, or an
                // application's context adopted as a location of its own.
                let known = |at: Location| {
                    let sycl = locus::device_as::<locus::backends::sycl::SyclDevice>(at).ok()?;
                    sycl.pointer_kind(data).map(|kind| (at, kind))
                };
                let Some((at, kind)) = known(location).or_else(|| {
                    locus::available()
                        .into_iter()
                        .filter(|l| l.technology() == locus::Technology::Sycl && *l != location)
                        .find_map(known)
                }) else {
                    return Err(PyBufferError::new_err(format!(
                        "the pointer is not USM of {location}'s SYCL context, nor of a context \
                         adopted (locus.adopt_context, Queue.from_external): copy it through \
                         the host, or adopt its context first"
                    )));
                };
                location = at;
                let ptr = data.wrapping_add(byte_offset as usize);
                (Native::Sycl { ptr, kind }, keep)
            }
            _ => (
                dlpack::native_for(location, device, data, byte_offset)?,
                keep,
            ),
        };
        let keep: Box<dyn Send + Sync> = if register {
            let (at, bytes) = (first as usize, len * dtype.size);
            // SAFETY: the producer keeps `bytes` bytes alive at `first` until `keep` is
            // dropped; the registrations are dropped before it (a tuple drops its fields
            // in order), when locus's use of the memory has ended.
            let registrations = crate::detach(py, || unsafe {
                locus::register_host_memory(at as *mut u8, bytes)
            })
            .map_err(py_err)?;
            Box::new((registrations, keep))
        } else {
            keep
        };
        // SAFETY: the producer keeps `len * size` bytes alive at `native` until `keep` is
        // dropped, which the deleter does; alignment was checked above for host memory.
        let store = unsafe { Store::adopt(location, native, len, dtype.size, move |_| drop(keep)) }
            .map_err(py_err)?;
        if copy == Some(true) {
            let copied = crate::detach(py, || store.to_location(location)).map_err(py_err)?;
            return Ok(PyBuffer::wrap(copied, dtype, shape, false));
        }
        Ok(PyBuffer::wrap(store, dtype, shape, read_only))
    }
}
