//! Running one call of a Python codelet: the codelet's own kernel, or a region whose
//! host block is a Python function given host views of the arguments.

use super::*;

/// What a call needs of its codelet, owned (a call in flight runs on another thread).
pub(super) struct Parts {
    pub(super) kernel: Kernel,
    pub(super) targets: Vec<Location>,
    pub(super) noupdate: Vec<String>,
    pub(super) host: Option<Arc<Py<PyAny>>>,
}

/// Elements of each buffer argument (None for scalars): a host function sees that many.
pub(super) fn lengths(given: &[Given]) -> Vec<Option<usize>> {
    given
        .iter()
        .map(|g| match g {
            Given::Buffer(b, _) => Some(b.get().dims().iter().product()),
            Given::Scalar(..) => None,
        })
        .collect()
}

/// Runs one call: the codelet's, or with a Python host function, a region whose host
/// block is that function. Python errors (the function's own) come back as they are.
pub(super) fn run(
    parts: &Parts,
    cond: bool,
    args: &mut [Arg<'_>],
    launch: Launch,
    lens: &[Option<usize>],
) -> PyResult<Report> {
    let Some(function) = &parts.host else {
        let c = codelet_of(&parts.kernel, &parts.targets, &parts.noupdate).map_err(py_err)?;
        return c
            .call_if(cond, args, launch)
            .map(|r| Report::of(&r))
            .map_err(py_err);
    };
    let mut region = codelet::Region::new(&parts.kernel, &parts.targets).map_err(py_err)?;
    for p in &parts.noupdate {
        region = region.noupdate(p).map_err(py_err)?;
    }
    let mut raised: Option<PyErr> = None;
    let report = region
        .run_if(cond, args, launch, |host_args, global| {
            if raised.is_none() {
                // Not run once the interpreter is ending (the call fails, unseen).
                let outcome = crate::attach(|py| {
                    call_host(py, function, &parts.kernel, host_args, global, lens)
                })
                .unwrap_or_else(|| {
                    Err(LocusError::new_err(
                        "the host function was not run: the interpreter is ending",
                    ))
                });
                raised = outcome.err();
            }
        })
        .map_err(py_err)?;
    match raised {
        Some(e) => Err(e),
        None => Ok(Report::of(&report)),
    }
}

/// Calls a Python host function with copies of the arguments, and writes back what it
/// left in the written ones (only when it returned without an exception).
fn call_host(
    py: Python<'_>,
    function: &Py<PyAny>,
    kernel: &Kernel,
    host_args: &mut [codelet::HostArg<'_>],
    global: [usize; 2],
    lens: &[Option<usize>],
) -> PyResult<()> {
    let numpy = py.import("numpy")?;
    let params = kernel.params();
    let list = PyList::empty(py);
    let mut written: Vec<(usize, Bound<'_, PyByteArray>, usize)> = Vec::new();
    for (i, (a, p)) in host_args.iter().zip(params).enumerate() {
        let t = match p.kind {
            ParamKind::Buffer(t, _) | ParamKind::Scalar(t) => t,
        };
        let dtype = python_dtype(t)?;
        let bytes: &[u8] = match a {
            codelet::HostArg::Read(b) => b,
            codelet::HostArg::Write(b) => b,
            codelet::HostArg::Scalar(b) => {
                let raw = PyBytes::new(py, &b[..dtype.size]);
                let value = numpy
                    .call_method1("frombuffer", (raw, dtype.name))?
                    .get_item(0)?
                    .call_method0("item")?;
                list.append(value)?;
                continue;
            }
        };
        let n = lens
            .get(i)
            .copied()
            .flatten()
            .unwrap_or(usize::MAX)
            .min(bytes.len() / dtype.size);
        let copy = PyByteArray::new(py, &bytes[..n * dtype.size]);
        let array = numpy.call_method1("frombuffer", (copy.clone(), dtype.name))?;
        if matches!(a, codelet::HostArg::Write(_)) {
            written.push((i, copy, n * dtype.size));
        } else {
            let kwargs = PyDict::new(py);
            kwargs.set_item("write", false)?;
            array.call_method("setflags", (), Some(&kwargs))?;
        }
        list.append(array)?;
    }
    function.call1(py, (list, (global[0], global[1])))?;
    for (i, copy, len) in written {
        let data = copy.to_vec();
        if let Some(codelet::HostArg::Write(out)) = host_args.get_mut(i) {
            if data.len() != len || out.len() < len {
                return Err(PyValueError::new_err(format!(
                    "kernel `{}`: the host function changed the size of argument `{}`",
                    kernel.name(),
                    params[i].name
                )));
            }
            out[..len].copy_from_slice(&data);
        }
    }
    Ok(())
}

/// The codelet of `kernel` over `targets`, with `noupdate` parameters.
pub(super) fn codelet_of<'k>(
    kernel: &'k Kernel,
    targets: &[Location],
    noupdate: &[String],
) -> locus::Result<codelet::Codelet<'k>> {
    let mut c = codelet::Codelet::new(kernel, targets)?;
    for p in noupdate {
        c = c.noupdate(p)?;
    }
    Ok(c)
}
