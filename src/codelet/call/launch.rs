//! One call at one target: the arguments served there as their intents say (moves
//! waited for or queued), then the kernel launched in the target's language after them,
//! or the host function run on host views of the arguments.

use super::*;
use crate::core::trace;

impl Codelet<'_> {
    /// Starts the kernel at the first of `targets` where it launches; the failures before
    /// it are reported with it. When it launches nowhere, the error names each failure.
    pub(super) fn start(
        &self,
        targets: &[Location],
        args: &mut [Arg<'_>],
        launch: Launch,
        mut host_fn: Option<HostFn<'_>>,
    ) -> Result<Started> {
        self.check(args, launch)?;
        let mut fell_back = Vec::new();
        for (i, &target) in targets.iter().enumerate() {
            let host = host_fn.as_mut().map(|f| &mut **f as HostFn<'_>);
            match self.start_at(target, args, launch, host) {
                Ok(completion) => {
                    return Ok(Started {
                        target,
                        fell_back,
                        completion,
                    })
                }
                // The last target's error is the answer when it is the only one tried.
                Err(e) if i + 1 == targets.len() && fell_back.is_empty() => return Err(e),
                Err(e) => fell_back.push((target, e.to_string())),
            }
        }
        Err(Error::Invalid(format!(
            "kernel `{}` launched at none of its targets: {}",
            self.kernel.name,
            fell_back
                .iter()
                .map(|(l, why)| format!("{l}: {why}"))
                .collect::<Vec<_>>()
                .join("; ")
        )))
    }

    fn start_at(
        &self,
        target: Location,
        args: &mut [Arg<'_>],
        launch: Launch,
        host_fn: Option<HostFn<'_>>,
    ) -> Result<Completion> {
        self.check_target(target, host_fn.is_some())?;
        // Serve every buffer at the target according to its intent and mode, gathering
        // the moves still in flight that the kernel must come after.
        let mut memories: Vec<Option<(Arc<Memory>, bool)>> = Vec::with_capacity(args.len());
        let mut after: Vec<Event> = Vec::new();
        for (i, (p, a)) in self.kernel.params.iter().zip(args.iter_mut()).enumerate() {
            let mode = self.modes[i];
            let read = |b: &dyn KernelBuffer| match mode {
                ArgMode::Normal => b.serve_for_read(target),
                ArgMode::NoUpdate => b.serve_as_is(target, false),
                ArgMode::Constant => self.constant_at(i, target, b),
            };
            let served = match (p.kind, a) {
                (ParamKind::Buffer(_, Intent::In), Arg::Buf(b)) => Some((read(*b)?, false)),
                (ParamKind::Buffer(_, Intent::In), Arg::BufMut(b)) => Some((read(&**b)?, false)),
                (ParamKind::Buffer(_, Intent::InOut), Arg::BufMut(b))
                    if mode == ArgMode::NoUpdate =>
                {
                    Some((b.serve_as_is(target, true)?, true))
                }
                (ParamKind::Buffer(_, intent), Arg::BufMut(b)) => {
                    Some((b.serve_for_write(target, intent == Intent::InOut)?, true))
                }
                _ => None,
            };
            memories.push(served.map(|((memory, moves), write)| {
                after.extend(moves);
                (memory, write)
            }));
        }
        let (global, dims) = launch.global();
        let Some(language) = target.technology().kernel_language() else {
            after.iter().try_for_each(Event::wait)?;
            let start = trace::start();
            let ran = self.run_on_host(args, &memories, global, host_fn)?;
            trace::launched(target, &self.kernel.name, start);
            return Ok(ran);
        };
        let launch_args: Vec<LaunchArg<'_>> = args
            .iter()
            .zip(&memories)
            .map(|(a, m)| match (a, m) {
                (_, Some((memory, _))) => LaunchArg::Memory(memory),
                (Arg::Scalar(t, b), None) => LaunchArg::Scalar(*t, *b),
                _ => LaunchArg::scalar(0u32),
            })
            .collect();
        let k = self.kernel;
        let (source, entry, workgroup) = k.source_in(language).ok_or_else(|| {
            Error::Invalid(format!("kernel `{}` has no source for {target}", k.name))
        })?;
        let spec = LaunchSpec {
            source,
            entry,
            workgroup,
            global,
            dims,
        };
        // Ordered after the moves on the device's queue where the backend can (OpenCL),
        // after a host wait elsewhere.
        let device = crate::runtime::registry::registry().device(target)?;
        let start = trace::start();
        let launched = device.launch_after(&spec, &launch_args, &after.as_slice())?;
        trace::launched(target, &self.kernel.name, start);
        Ok(launched)
    }

    fn run_on_host(
        &self,
        args: &[Arg<'_>],
        memories: &[Option<(Arc<Memory>, bool)>],
        global: [usize; 2],
        host_fn: Option<HostFn<'_>>,
    ) -> Result<Completion> {
        let mut kernel_fn = self.kernel.host;
        let f: HostFn<'_> = match (host_fn, kernel_fn.as_mut()) {
            (Some(f), _) => f,
            (None, Some(f)) => f,
            (None, None) => {
                return Err(Error::Invalid(format!(
                    "kernel `{}` has no host (Rust) source",
                    self.kernel.name
                )))
            }
        };
        let mut mappings: Vec<Option<HostMapping>> = Vec::with_capacity(memories.len());
        for m in memories {
            mappings.push(match m {
                Some((memory, write)) => Some(memory.map(0..memory.len(), *write)?),
                None => None,
            });
        }
        let mut host_args = Vec::with_capacity(args.len());
        for ((a, m), served) in args.iter().zip(mappings.iter_mut()).zip(memories) {
            let written = served.as_ref().is_some_and(|(_, w)| *w);
            host_args.push(match (a, m) {
                (_, Some(map)) => {
                    if written {
                        HostArg::Write(map.as_mut_slice()?)
                    } else {
                        HostArg::Read(map.as_slice())
                    }
                }
                (Arg::Scalar(_, b), None) => HostArg::Scalar(*b),
                _ => HostArg::Scalar([0; 8]),
            });
        }
        f(&mut host_args, global);
        Ok(Completion::done())
    }
}
