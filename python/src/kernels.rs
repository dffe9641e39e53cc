//! `locus.Kernel` and `locus.Codelet`: kernels from Python (sources per technology, the
//! kernels locus ships), bound to target lists and called on `locus.Buffer`s with their
//! intents, as in Rust (`locus::codelet`).

use super::*;

use locus::codelet::{self, Arg, Intent, Kernel, Launch, ParamKind};

/// Python dtype names and the kernel element types they are (`bool` is a byte; numpy
/// has no bfloat16, so kernels with bfloat16 parameters are not available from Python).
const KERNEL_DTYPES: [(&str, locus::DType); 11] = [
    ("float16", locus::DType::F16),
    ("float32", locus::DType::F32),
    ("float64", locus::DType::F64),
    ("int8", locus::DType::I8),
    ("int16", locus::DType::I16),
    ("int32", locus::DType::I32),
    ("int64", locus::DType::I64),
    ("uint8", locus::DType::U8),
    ("uint16", locus::DType::U16),
    ("uint32", locus::DType::U32),
    ("uint64", locus::DType::U64),
];

/// A Python dtype as the kernel's element type (`bool` is a byte).
fn kernel_dtype(dtype: &DType) -> locus::DType {
    KERNEL_DTYPES
        .iter()
        .find(|(name, _)| *name == dtype.name)
        .map_or(locus::DType::U8, |(_, t)| *t)
}

/// The Python dtype of a kernel element type.
fn python_dtype(t: locus::DType) -> PyResult<DType> {
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
    kernel: Kernel,
}

#[pymethods]
impl PyKernel {
    #[new]
    fn new(name: &str) -> PyKernel {
        PyKernel {
            kernel: Kernel::new(name),
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
        Ok(PyKernel { kernel })
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
        }
    }
}

/// A kernel bound to a target list: calls run at the first available location and fall
/// back to the next when a launch fails there (OpenHMPP's codelet).
///
/// `Codelet(kernel, ["opencl:0", "host"]).call([x, 2.0, y, n], launch=n)`
#[pyclass(frozen, module = "locus", name = "Codelet")]
pub(crate) struct PyCodelet {
    kernel: Kernel,
    targets: Vec<Location>,
    noupdate: Vec<String>,
}

/// A launch size: an int (1-D) or a pair (2-D, x fastest).
fn launch_of(launch: &Bound<'_, PyAny>) -> PyResult<Launch> {
    if let Ok(n) = launch.extract::<usize>() {
        return Ok(Launch::d1(n));
    }
    if let Ok((x, y)) = launch.extract::<(usize, usize)>() {
        return Ok(Launch::d2(x, y));
    }
    Err(PyTypeError::new_err(
        "launch must be an int (1-D) or a pair of ints (2-D, x fastest)",
    ))
}

/// One argument after checking, before the buffers are locked.
enum Given<'py> {
    Buffer(&'py PyBuffer, bool),
    Scalar(locus::DType, [u8; 8]),
}

#[pymethods]
impl PyCodelet {
    #[new]
    #[pyo3(signature = (kernel, targets, noupdate=Vec::new()))]
    fn new(kernel: &PyKernel, targets: Vec<String>, noupdate: Vec<String>) -> PyResult<PyCodelet> {
        guarded(|| {
            let targets = targets
                .iter()
                .map(|t| parse_location(t))
                .collect::<PyResult<Vec<_>>>()?;
            let mut c = codelet::Codelet::new(&kernel.kernel, &targets).map_err(py_err)?;
            for p in &noupdate {
                c = c.noupdate(p).map_err(py_err)?;
            }
            Ok(PyCodelet {
                kernel: kernel.kernel.clone(),
                targets,
                noupdate,
            })
        })
    }

    /// Where calls run (unless a launch fails there).
    #[getter]
    fn target(&self) -> PyResult<String> {
        Ok(self.codelet().map_err(py_err)?.target().to_string())
    }

    /// Where a call goes when the launch fails at the targets before.
    #[getter]
    fn fallbacks(&self) -> PyResult<Vec<String>> {
        Ok(self
            .codelet()
            .map_err(py_err)?
            .fallbacks()
            .iter()
            .map(|l| l.to_string())
            .collect())
    }

    /// Runs the kernel with `args` in parameter order (`locus.Buffer`s for buffer
    /// parameters, Python numbers for scalars) over `launch` work items; with `cond`
    /// false, on the host with the host implementation (OpenHMPP's `cond`). The GIL is
    /// released while the arguments move and the kernel runs. Returns
    /// `{"target": ..., "bytes_moved": ..., "fell_back": [(location, why), ...]}`.
    #[pyo3(signature = (args, launch, cond=true))]
    fn call<'py>(
        &self,
        py: Python<'py>,
        args: Vec<Bound<'py, PyAny>>,
        launch: &Bound<'py, PyAny>,
        cond: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        guarded(|| {
            let launch = launch_of(launch)?;
            let params = self.kernel.params();
            if args.len() != params.len() {
                return Err(PyValueError::new_err(format!(
                    "kernel `{}` takes {} arguments ({}), got {}",
                    self.kernel.name(),
                    params.len(),
                    params
                        .iter()
                        .map(|p| p.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    args.len()
                )));
            }
            let mut given = Vec::with_capacity(args.len());
            for (p, a) in params.iter().zip(&args) {
                given.push(match p.kind {
                    ParamKind::Buffer(t, intent) => {
                        let b = a.cast::<PyBuffer>().map_err(|_| {
                            PyTypeError::new_err(format!(
                                "kernel `{}`: argument `{}` must be a locus.Buffer of {}",
                                self.kernel.name(),
                                p.name,
                                python_dtype(t).map(|d| d.name).unwrap_or("?")
                            ))
                        })?;
                        let b: &PyBuffer = b.get();
                        if kernel_dtype(&b.dtype) != t {
                            return Err(PyTypeError::new_err(format!(
                                "kernel `{}`: argument `{}` must hold {}, this buffer holds {}",
                                self.kernel.name(),
                                p.name,
                                python_dtype(t).map(|d| d.name).unwrap_or("?"),
                                b.dtype.name
                            )));
                        }
                        let write = intent != Intent::In;
                        if write && b.readonly {
                            return Err(PyValueError::new_err(format!(
                                "kernel `{}`: argument `{}` is written, but this buffer adopted read-only memory",
                                self.kernel.name(),
                                p.name
                            )));
                        }
                        Given::Buffer(b, write)
                    }
                    ParamKind::Scalar(t) => {
                        let bytes = python_dtype(t)?.encode(a)?;
                        let mut slot = [0u8; 8];
                        slot[..bytes.len()].copy_from_slice(&bytes);
                        Given::Scalar(t, slot)
                    }
                });
            }
            // One lock per buffer: the same buffer twice would be two arguments aliasing.
            for (i, g) in given.iter().enumerate() {
                if let Given::Buffer(b, _) = g {
                    let again = given[..i]
                        .iter()
                        .any(|o| matches!(o, Given::Buffer(c, _) if std::ptr::eq(*c, *b)));
                    if again {
                        return Err(PyValueError::new_err(format!(
                            "kernel `{}`: argument `{}` is a buffer already passed as another argument; pass a copy",
                            self.kernel.name(),
                            params[i].name
                        )));
                    }
                }
            }
            let report = py
                .detach(|| {
                    let mut guards: Vec<MutexGuard<'_, Store>> = Vec::new();
                    for g in &given {
                        if let Given::Buffer(b, _) = g {
                            let mut store = lock(&b.store);
                            b.sync_writers(&mut store)?;
                            guards.push(store);
                        }
                    }
                    let mut typed: Vec<store::Typed<'_>> = guards
                        .iter_mut()
                        .zip(
                            params
                                .iter()
                                .filter(|p| matches!(p.kind, ParamKind::Buffer(..))),
                        )
                        .map(|(g, p)| store::Typed {
                            store: g,
                            dtype: match p.kind {
                                ParamKind::Buffer(t, _) => t,
                                ParamKind::Scalar(t) => t,
                            },
                        })
                        .collect();
                    let mut slots = typed.iter_mut();
                    let mut call_args: Vec<Arg<'_>> = Vec::with_capacity(given.len());
                    for g in &given {
                        call_args.push(match g {
                            Given::Buffer(_, write) => {
                                let t = slots.next().ok_or_else(|| {
                                    locus::Error::Invalid("internal: argument count".into())
                                })?;
                                if *write {
                                    Arg::BufMut(t)
                                } else {
                                    Arg::Buf(&*t)
                                }
                            }
                            Given::Scalar(t, b) => Arg::Scalar(*t, *b),
                        });
                    }
                    let c = self.codelet()?;
                    c.call_if(cond, &mut call_args, launch)
                })
                .map_err(py_err)?;
            let out = PyDict::new(py);
            out.set_item("target", report.target.to_string())?;
            out.set_item("bytes_moved", report.moved.bytes_moved())?;
            let fell: Vec<(String, String)> = report
                .fell_back
                .iter()
                .map(|(l, why)| (l.to_string(), why.clone()))
                .collect();
            out.set_item("fell_back", fell)?;
            Ok(out)
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "Codelet({:?}, targets=[{}])",
            self.kernel.name(),
            self.targets
                .iter()
                .map(|t| t.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

impl PyCodelet {
    fn codelet(&self) -> locus::Result<codelet::Codelet<'_>> {
        let mut c = codelet::Codelet::new(&self.kernel, &self.targets)?;
        for p in &self.noupdate {
            c = c.noupdate(p)?;
        }
        Ok(c)
    }
}
