//! `locus.Kernel`: a kernel's parameters and its sources per technology, from Python
//! or one of the kernels locus ships.

use super::*;

/// A Python dtype as the kernel's element type (`bool` is a byte).
pub(super) fn kernel_dtype(dtype: &DType) -> locus::DType {
    KERNEL_DTYPES
        .iter()
        .find(|(name, _)| *name == dtype.name)
        .map_or(locus::DType::U8, |(_, t)| *t)
}

/// The Python dtype of a kernel element type.
pub(super) fn python_dtype(t: locus::DType) -> PyResult<DType> {
    match KERNEL_DTYPES.iter().find(|(_, k)| *k == t) {
        Some((name, _)) => DType::from_name(name),
        None => Err(PyTypeError::new_err(
            "bfloat16 parameters are not available from Python (numpy has no bfloat16)",
        )),
    }
}

fn intent_of(name: &str) -> PyResult<Intent> {
    match name {
        "in" => Ok(Intent::In),
        "out" => Ok(Intent::Out),
        "inout" => Ok(Intent::InOut),
        other => Err(PyValueError::new_err(format!(
            "intent must be \"in\", \"out\" or \"inout\", got {other:?}"
        ))),
    }
}

/// A parameter as Python sees it: name, "buffer" or "scalar", dtype, intent.
type ParamInfo = (String, &'static str, &'static str, Option<&'static str>);

/// A kernel: a name, parameters (buffers with an intent, scalars) and a source per
/// technology. Every builder method returns a new kernel.
///
/// `Kernel("scale").buffer("x", "float32", "inout").scalar("s", "float32")
/// .opencl_c(source, "scale")`; `Kernel.builtin("saxpy")` is one locus ships.
#[pyclass(frozen, module = "locus", name = "Kernel")]
#[derive(Clone)]
pub(crate) struct PyKernel {
    pub(super) kernel: Kernel,
    /// The host implementation given from Python (`Kernel.host(fn)`).
    pub(super) host: Option<Arc<Py<PyAny>>>,
}

#[pymethods]
impl PyKernel {
    #[new]
    fn new(name: &str) -> PyKernel {
        PyKernel {
            kernel: Kernel::new(name),
            host: None,
        }
    }

    /// One of the kernels locus ships, in every language: "vec_add", "saxpy", "jacobi",
    /// "sgemm", "vec_add_f64", "daxpy".
    #[staticmethod]
    fn builtin(name: &str) -> PyResult<PyKernel> {
        let kernel = match name {
            "vec_add" => codelet::kernels::vec_add(),
            "saxpy" => codelet::kernels::saxpy(),
            "jacobi" => codelet::kernels::jacobi(),
            "sgemm" => codelet::kernels::sgemm(),
            "vec_add_f64" => codelet::kernels::vec_add_f64(),
            "daxpy" => codelet::kernels::daxpy(),
            other => {
                return Err(PyValueError::new_err(format!(
                    "no built-in kernel {other:?}; they are vec_add, saxpy, jacobi, sgemm, vec_add_f64, daxpy"
                )))
            }
        };
        Ok(PyKernel { kernel, host: None })
    }

    /// The host implementation, a Python function: called as `fn(args, launch)` where
    /// `args` are the arguments in parameter order (each buffer a 1-D numpy array of its
    /// elements, read-only for `in` parameters; each scalar a Python number) and `launch`
    /// the `(x, y)` global size. Arrays are copies made for the call (a function may keep
    /// them): what the function leaves in `out` / `inout` arrays is written back when it
    /// returns; an exception raised in it is the call's error, and nothing is written.
    /// Replaces the shipped host implementation of a built-in kernel.
    fn host(&self, function: Py<PyAny>) -> PyKernel {
        PyKernel {
            kernel: self.kernel.clone(),
            host: Some(Arc::new(function)),
        }
    }

    /// Adds a buffer parameter of `dtype` with `intent` ("in", "out", "inout").
    fn buffer(&self, name: &str, dtype: &Bound<'_, PyAny>, intent: &str) -> PyResult<PyKernel> {
        let t = kernel_dtype(&dtype::dtype_of(dtype)?);
        let intent = intent_of(intent)?;
        Ok(self.with(|k| k.buffer(name, t, intent)))
    }

    /// Adds a scalar parameter of `dtype`.
    fn scalar(&self, name: &str, dtype: &Bound<'_, PyAny>) -> PyResult<PyKernel> {
        let t = kernel_dtype(&dtype::dtype_of(dtype)?);
        Ok(self.with(|k| k.scalar(name, t)))
    }

    /// Requires every buffer argument to have the same length.
    fn equal_lengths(&self) -> PyKernel {
        self.with(|k| k.equal_lengths())
    }

    /// Checks the launch size against these buffers only.
    fn launch_within(&self, buffers: Vec<String>) -> PyKernel {
        let names: Vec<&str> = buffers.iter().map(String::as_str).collect();
        self.with(|k| k.launch_within(&names))
    }

    /// The WGSL source (WebGPU), its entry point and its workgroup size.
    #[pyo3(signature = (source, entry, workgroup=(64, 1, 1)))]
    fn wgsl(&self, source: &str, entry: &str, workgroup: (u32, u32, u32)) -> PyKernel {
        let w = [workgroup.0, workgroup.1, workgroup.2];
        self.with(|k| k.wgsl(source, entry, w))
    }

    /// The OpenCL C source (OpenCL, and SYCL through kernel bundles).
    fn opencl_c(&self, source: &str, entry: &str) -> PyKernel {
        self.with(|k| k.opencl_c(source, entry))
    }

    /// The OpenMP C source defining `int locus_omp_k_<entry>(void **args, size_t gx,
    /// size_t gy, int dev)`, compiled at the first call with the system's C compiler.
    fn openmp_c(&self, source: &str, entry: &str) -> PyKernel {
        self.with(|k| k.openmp_c(source, entry))
    }

    /// The CUDA C source (NVRTC).
    fn cuda(&self, source: &str, entry: &str) -> PyKernel {
        self.with(|k| k.cuda(source, entry))
    }

    /// The HIP source (hiprtc).
    fn hip(&self, source: &str, entry: &str) -> PyKernel {
        self.with(|k| k.hip(source, entry))
    }

    /// The kernel's name.
    #[getter]
    fn name(&self) -> String {
        self.kernel.name().to_string()
    }

    /// The parameters: `(name, "buffer", dtype, intent)` or `(name, "scalar", dtype, None)`.
    #[getter]
    fn params(&self) -> PyResult<Vec<ParamInfo>> {
        self.kernel
            .params()
            .iter()
            .map(|p| {
                Ok(match p.kind {
                    ParamKind::Buffer(t, intent) => (
                        p.name.clone(),
                        "buffer",
                        python_dtype(t)?.name,
                        Some(match intent {
                            Intent::In => "in",
                            Intent::Out => "out",
                            Intent::InOut => "inout",
                        }),
                    ),
                    ParamKind::Scalar(t) => (p.name.clone(), "scalar", python_dtype(t)?.name, None),
                })
            })
            .collect()
    }

    fn __repr__(&self) -> String {
        let params: Vec<&str> = self
            .kernel
            .params()
            .iter()
            .map(|p| p.name.as_str())
            .collect();
        format!(
            "Kernel({:?}, params=[{}])",
            self.kernel.name(),
            params.join(", ")
        )
    }
}

impl PyKernel {
    fn with(&self, f: impl FnOnce(Kernel) -> Kernel) -> PyKernel {
        PyKernel {
            kernel: f(self.kernel.clone()),
            host: self.host.clone(),
        }
    }
}
