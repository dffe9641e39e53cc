//! Calling a codelet: [`Codelet`] picks the first target with a source, moves the
//! arguments as their intents say, launches, and reports what moved ([`CallReport`]).

use super::*;

mod launch;

/// What a call did.
#[derive(Debug, Clone)]
pub struct CallReport {
    /// Where the kernel ran.
    pub target: Location,
    /// What the arguments' buffers moved for this call (per route kind).
    pub moved: TransferTotals,
    /// The targets tried first whose launch failed (a kernel that does not build there,
    /// a device error, out of memory), each with the error: the call fell back past them
    /// (OpenHMPP's fallback), in the target list's order.
    pub fell_back: Vec<(Location, String)>,
}

/// A kernel bound to a target list: calls run at the first available location, and
/// fall back to the next when a launch fails there.
///
/// ```
/// use locus::codelet::{kernels, Arg, Codelet, Launch};
/// use locus::{Buffer, Location};
///
/// let kernel = kernels::vec_add(); // one source per technology, in shaders/
/// let targets = [*locus::available().last().unwrap(), Location::Host];
/// let codelet = Codelet::new(&kernel, &targets)?;
/// let a = Buffer::filled(Location::Host, 1000, 1.0f32)?;
/// let b = Buffer::filled(Location::Host, 1000, 2.0f32)?;
/// let mut c = Buffer::<f32>::zeroed(Location::Host, 1000)?;
/// let report = codelet.call(
///     &mut [Arg::buf(&a), Arg::buf(&b), Arg::buf_mut(&mut c), Arg::u32(1000)],
///     Launch::d1(1000),
/// )?;
/// println!("ran at {}", report.target);
/// assert!(c.to_vec()?.iter().all(|&x| x == 3.0));
/// # Ok::<(), locus::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Codelet<'k> {
    kernel: &'k Kernel,
    /// The available targets, in the list's order; the first is where calls run.
    pub(super) targets: Vec<Location>,
    skipped: Vec<(Location, String)>,
    /// Per parameter: how its argument is served (`noupdate`, `const`).
    modes: Vec<ArgMode>,
    /// Per parameter: the copy a `const` argument was uploaded to, and where.
    constants: Arc<Mutex<Vec<Option<Uploaded>>>>,
}

/// Where a `const` argument was uploaded, and the copy there.
type Uploaded = (Location, Arc<Memory>);

/// How a buffer argument is served at the target (OpenHMPP's per-argument properties).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum ArgMode {
    /// As its intent says: moved there when the copy there is not current.
    #[default]
    Normal,
    /// `noupdate`: the copy at the target is used as it is, nothing moved.
    NoUpdate,
    /// `const`: uploaded at the first call, then used without looking again.
    Constant,
}

/// A host implementation given at the call (a [`Region`](super::Region)'s closure).
pub(super) type HostFn<'f> = &'f mut dyn FnMut(&mut [HostArg<'_>], [usize; 2]);

/// How a call started: where, past which failures, and its completion.
struct Started {
    target: Location,
    fell_back: Vec<(Location, String)>,
    completion: Completion,
}

fn totals(args: &[Arg<'_>]) -> TransferTotals {
    lent_totals(args, &[])
}

/// The counters of the buffers among `args` and of the `lent` ones, summed.
fn lent_totals(args: &[Arg<'_>], lent: &[Box<dyn Lent + '_>]) -> TransferTotals {
    let given = args.iter().filter_map(|a| match a {
        Arg::Buf(b) => Some(*b),
        Arg::BufMut(b) => Some(&**b),
        Arg::Scalar(..) => None,
    });
    sum_of(given.chain(lent.iter().filter_map(|l| l.buffer())))
}

fn sum_of<'b>(buffers: impl Iterator<Item = &'b dyn KernelBuffer>) -> TransferTotals {
    let mut sum = TransferTotals::default();
    for b in buffers {
        let t = b.counters();
        for i in 0..RouteKind::ALL.len() {
            sum.calls[i] += t.calls[i];
            sum.bytes[i] += t.bytes[i];
        }
    }
    sum
}

fn difference(after: TransferTotals, before: TransferTotals) -> TransferTotals {
    let mut d = TransferTotals::default();
    for i in 0..RouteKind::ALL.len() {
        d.calls[i] = after.calls[i].saturating_sub(before.calls[i]);
        d.bytes[i] = after.bytes[i].saturating_sub(before.bytes[i]);
    }
    d
}

impl<'k> Codelet<'k> {
    /// Binds `kernel` to the first location of `targets` this machine has. An empty
    /// list, or one with nothing available, is an error naming each reason.
    pub fn new(kernel: &'k Kernel, targets: &[Location]) -> Result<Codelet<'k>> {
        let registry = crate::runtime::registry::registry();
        let mut skipped = Vec::new();
        let mut available = Vec::new();
        for &t in targets {
            if registry.has(t) {
                if !available.contains(&t) {
                    available.push(t);
                }
            } else if available.is_empty() {
                skipped.push((t, registry.why_missing(t)));
            }
        }
        if !available.is_empty() {
            let mut codelet = Codelet::with_targets(kernel, available);
            codelet.skipped = skipped;
            return Ok(codelet);
        }
        Err(Error::Invalid(if targets.is_empty() {
            format!("codelet `{}`: the target list is empty", kernel.name)
        } else {
            format!(
                "codelet `{}`: no target is available: {}",
                kernel.name,
                skipped
                    .iter()
                    .map(|(l, why)| format!("{l}: {why}"))
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        }))
    }

    /// A codelet over `targets` as they are (available, in order, not empty).
    pub(super) fn with_targets(kernel: &'k Kernel, targets: Vec<Location>) -> Codelet<'k> {
        Codelet {
            kernel,
            targets,
            skipped: Vec::new(),
            modes: vec![ArgMode::Normal; kernel.params.len()],
            constants: Arc::new(Mutex::new(vec![None; kernel.params.len()])),
        }
    }

    /// The index of buffer parameter `param`, for a per-argument property.
    fn buffer_param(&self, param: &str, property: &str) -> Result<(usize, Intent)> {
        let k = self.kernel;
        match k.params.iter().position(|p| p.name == param) {
            Some(i) => match k.params[i].kind {
                ParamKind::Buffer(_, intent) => Ok((i, intent)),
                ParamKind::Scalar(_) => Err(Error::Invalid(format!(
                    "codelet `{}`: {property} applies to buffer arguments; `{param}` is a scalar",
                    k.name
                ))),
            },
            None => Err(Error::Invalid(format!(
                "codelet `{}` has no parameter `{param}` for {property} (its parameters: {})",
                k.name,
                k.signature()
            ))),
        }
    }

    /// OpenHMPP's `args[param].noupdate=true`: the copy of `param`'s buffer at the
    /// target is taken as current and used as it is, with no upload even when the host
    /// copy is newer (an `inout` argument's target copy then becomes the only current
    /// one). **You assert it**: when the copy there is stale, the kernel reads stale
    /// data, and an `inout` argument loses the newer host data; nothing checks. A
    /// buffer with no copy at the target at all is an error (load it there first with
    /// [`Codelet::advanced_load`]). For `in` and `inout` buffers.
    pub fn noupdate(mut self, param: &str) -> Result<Codelet<'k>> {
        let (i, intent) = self.buffer_param(param, "noupdate")?;
        if intent == Intent::Out {
            return Err(Error::Invalid(format!(
                "codelet `{}`: noupdate applies to in and inout buffers; `{param}` is out, which is never uploaded anyway",
                self.kernel.name
            )));
        }
        self.modes[i] = ArgMode::NoUpdate;
        Ok(self)
    }

    /// OpenHMPP's `args[param].const=true`: an `in` buffer uploaded at the first call
    /// and never checked again for the life of the codelet (or its group): later calls
    /// use that device copy as it is, whatever the buffer passed then holds (its length
    /// is still checked). Changes made to the data after the first call are not
    /// uploaded (where the target uses the data in place, e.g. on the host, it sees
    /// them: it reads the same memory); [`Codelet::forget_constants`] makes the next call
    /// upload again. The uploaded copy stays allocated until then, even if its buffer
    /// is dropped.
    pub fn constant(mut self, param: &str) -> Result<Codelet<'k>> {
        let (i, intent) = self.buffer_param(param, "const")?;
        if intent != Intent::In {
            return Err(Error::Invalid(format!(
                "codelet `{}`: const applies to in buffers; `{param}` is {intent:?}",
                self.kernel.name
            )));
        }
        self.modes[i] = ArgMode::Constant;
        Ok(self)
    }

    /// Forgets the copies `const` arguments were uploaded to: the next call uploads them.
    pub fn forget_constants(&self) {
        let mut cache = self.constants.lock().unwrap_or_else(|e| e.into_inner());
        cache.iter_mut().for_each(|c| *c = None);
    }

    /// The copy parameter `i`'s `const` buffer was uploaded to at `target`, uploaded now
    /// (and waited for) at the first call.
    fn constant_at(
        &self,
        i: usize,
        target: Location,
        buffer: &dyn KernelBuffer,
    ) -> Result<(Arc<Memory>, Vec<Event>)> {
        let need = buffer.elements().saturating_mul(buffer.dtype().size());
        let mut cache = self.constants.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((at, memory)) = &cache[i] {
            if *at == target && memory.len() >= need {
                return Ok((Arc::clone(memory), Vec::new()));
            }
        }
        let (memory, moves) = buffer.serve_for_read(target)?;
        moves.iter().try_for_each(Event::wait)?;
        cache[i] = Some((target, Arc::clone(&memory)));
        Ok((memory, Vec::new()))
    }

    /// Where calls run (unless a launch fails there: see [`Codelet::fallbacks`]).
    pub fn target(&self) -> Location {
        self.targets[0]
    }

    /// The available targets after [`Codelet::target`], in the list's order: where a
    /// call goes when the launch fails at the ones before.
    pub fn fallbacks(&self) -> &[Location] {
        &self.targets[1..]
    }

    /// The targets tried before this one, each with why it was not used.
    pub fn skipped(&self) -> &[(Location, String)] {
        &self.skipped
    }

    /// The kernel.
    pub fn kernel(&self) -> &Kernel {
        self.kernel
    }

    /// Checks what the target decides (a source for its technology, 64-bit floats);
    /// `host_fn`: the host implementation is given at the call.
    pub(super) fn check_target(&self, target: Location, host_fn: bool) -> Result<()> {
        let k = self.kernel;
        if !(host_fn && target.is_host()) {
            k.source_for(target.technology())?;
        }
        if k.needs_f64() {
            let device = crate::runtime::registry::registry().device(target)?;
            if let Some(why) = device.lacks_f64() {
                return Err(Error::Invalid(format!(
                    "kernel `{}` uses f64, but {why}; run it on a device with 64-bit floats",
                    k.name
                )));
            }
        }
        Ok(())
    }

    /// Checks the arguments and the launch size, before anything moves or launches
    /// (wherever the call runs).
    fn check(&self, args: &[Arg<'_>], launch: Launch) -> Result<()> {
        let k = self.kernel;
        let name = &k.name;
        if args.len() != k.params.len() {
            return Err(Error::Invalid(format!(
                "kernel `{name}` takes {} arguments ({}), got {}",
                k.params.len(),
                k.signature(),
                args.len()
            )));
        }
        if let Some(p) = k
            .params
            .iter()
            .find(|p| matches!(p.kind, ParamKind::Scalar(DType::F16 | DType::BF16)))
        {
            return Err(Error::Invalid(format!(
                "kernel `{name}`: scalar `{}` is {}; kernels take integer, f32 and f64 scalars, not half types",
                p.name,
                match p.kind {
                    ParamKind::Scalar(t) => t.name(),
                    ParamKind::Buffer(t, _) => t.name(),
                }
            )));
        }
        let mut first_len: Option<(&str, usize)> = None;
        for (i, (p, a)) in k.params.iter().zip(args).enumerate() {
            let wrong = || {
                Error::Invalid(format!(
                    "kernel `{name}`: argument {i} (`{}`) must be {}, got {}",
                    p.name,
                    match p.kind {
                        ParamKind::Buffer(t, Intent::In) => format!("a {t} buffer (Arg::buf)"),
                        ParamKind::Buffer(t, intent) => {
                            format!("a writable {t} buffer for `{intent:?}` (Arg::buf_mut)")
                        }
                        ParamKind::Scalar(t) => format!("a {t} scalar"),
                    },
                    a.describe()
                ))
            };
            let len = match (p.kind, a) {
                (ParamKind::Buffer(t, Intent::In), Arg::Buf(b)) if b.dtype() == t => b.elements(),
                (ParamKind::Buffer(t, Intent::In), Arg::BufMut(b)) if b.dtype() == t => {
                    b.elements()
                }
                (ParamKind::Buffer(t, _), Arg::BufMut(b)) if b.dtype() == t => b.elements(),
                (ParamKind::Scalar(t), Arg::Scalar(u, _)) if t == *u => continue,
                _ => return Err(wrong()),
            };
            let bounds_launch = k
                .launch_within
                .as_ref()
                .is_none_or(|names| names.contains(&p.name));
            if bounds_launch && launch.items() > len {
                return Err(Error::Invalid(format!(
                    "kernel `{name}`: a launch of {} work items is larger than buffer `{}` ({len} elements); nothing was launched",
                    launch.items(),
                    p.name
                )));
            }
            if k.equal_lengths {
                match first_len {
                    Some((other, n)) if n != len => {
                        return Err(Error::Invalid(format!(
                            "kernel `{name}`: buffers must have equal lengths, but `{other}` has {n} elements and `{}` has {len}",
                            p.name
                        )))
                    }
                    None => first_len = Some((&p.name, len)),
                    _ => {}
                }
            }
        }
        k.check_counts(args)
    }

    /// Runs the kernel. When it returns, every later locus operation on the arguments
    /// (a read elsewhere, an access, another call) sees the kernel's results: on targets
    /// whose kernels and transfers share one in-order queue (OpenCL, WebGPU) that holds
    /// once the kernel is enqueued, so consecutive calls pipeline without a host wait;
    /// elsewhere (SYCL USM read in place by the host, OpenMP, host) the call waits.
    /// Use [`Codelet::call_async`] and [`Pending::synchronize`] to wait explicitly,
    /// e.g. before handing a native handle to another queue.
    ///
    /// When the launch fails at the target (a kernel that does not build there, a device
    /// error, out of memory), the call falls back to the next available target of the
    /// list, moving the data it needs there, and the report says where it ran and why
    /// the others did not ([`CallReport::fell_back`]). A failure while the kernel runs
    /// (reported when it is waited for) is an error, not a fallback: the kernel may have
    /// written part of its outputs.
    pub fn call(&self, args: &mut [Arg<'_>], launch: Launch) -> Result<CallReport> {
        self.call_among(&self.targets, args, launch, None)
    }

    /// Runs the kernel offloaded when `offload` is true (as [`Codelet::call`]), and on
    /// the host with its host implementation when false (OpenHMPP's `cond`, evaluated at
    /// the call site: keep small problems on the host). The buffers stay coherent either
    /// way: each moves only where the call runs needs it.
    pub fn call_if(
        &self,
        offload: bool,
        args: &mut [Arg<'_>],
        launch: Launch,
    ) -> Result<CallReport> {
        if offload {
            self.call(args, launch)
        } else {
            self.call_among(&[Location::Host], args, launch, None)
        }
    }

    pub(super) fn call_among(
        &self,
        targets: &[Location],
        args: &mut [Arg<'_>],
        launch: Launch,
        host_fn: Option<HostFn<'_>>,
    ) -> Result<CallReport> {
        let before = totals(args);
        let started = self.start(targets, args, launch, host_fn)?;
        started.completion.detach()?;
        Ok(CallReport {
            target: started.target,
            moved: difference(totals(args), before),
            fell_back: started.fell_back,
        })
    }

    /// Starts the kernel and returns at once; the arguments stay borrowed until
    /// [`Pending::synchronize`] (or the drop of the [`Pending`], which waits too). Falls
    /// back past targets whose launch fails, as [`Codelet::call`] does.
    pub fn call_async<'a>(&self, args: Vec<Arg<'a>>, launch: Launch) -> Result<Pending<'a>> {
        self.call_async_among(&self.targets, args, launch, None)
    }

    pub(super) fn call_async_among<'a>(
        &self,
        targets: &[Location],
        args: Vec<Arg<'a>>,
        launch: Launch,
        host_fn: Option<HostFn<'_>>,
    ) -> Result<Pending<'a>> {
        self.call_async_lent(targets, args, Vec::new(), launch, host_fn, |given, _| {
            Ok(given)
        })
    }

    /// [`Codelet::call_async_among`] with buffers lent by a group for the call (its
    /// variables): `assemble` makes the full argument list of the caller's `args` and
    /// the lent buffers; the [`Pending`] keeps both until the kernel is done, and gives
    /// the lent ones back when it is dropped.
    pub(super) fn call_async_lent<'a>(
        &self,
        targets: &[Location],
        mut args: Vec<Arg<'a>>,
        mut lent: Vec<Box<dyn Lent + 'a>>,
        launch: Launch,
        host_fn: Option<HostFn<'_>>,
        assemble: impl for<'s> FnOnce(
            Vec<Arg<'s>>,
            &'s mut [Box<dyn Lent + 'a>],
        ) -> Result<Vec<Arg<'s>>>,
    ) -> Result<Pending<'a>> {
        let before = lent_totals(&args, &lent);
        let started = {
            let given = args.iter_mut().map(reborrow).collect();
            let mut full = assemble(given, &mut lent)?;
            self.start(targets, &mut full, launch, host_fn)?
        };
        Ok(Pending {
            completion: Some(started.completion),
            before,
            args,
            lent,
            target: started.target,
            fell_back: started.fell_back,
        })
    }

    /// Moves an input to the target now, ahead of a call (`advancedload`), and waits.
    pub fn advanced_load(&self, buffer: &dyn KernelBuffer) -> Result<()> {
        wait_all(load(buffer, self.target(), None)?)
    }

    /// Moves only `section` of an input to the target now (`advancedload` with
    /// `section=`), and waits. The copy at the target must exist and, outside the
    /// section, hold the current data already: see [`Buffer::update_section`].
    pub fn advanced_load_section(
        &self,
        buffer: &dyn KernelBuffer,
        section: &Section,
    ) -> Result<()> {
        wait_all(load(buffer, self.target(), Some(section))?)
    }

    /// Starts `advancedload` (of the whole buffer, or of `section`) and returns the
    /// moves' events: OpenHMPP's `advancedload, asynchronous`. Calls that use the
    /// buffer are ordered after them without a wait.
    pub fn advanced_load_async(
        &self,
        buffer: &dyn KernelBuffer,
        section: Option<&Section>,
    ) -> Result<Vec<Event>> {
        load(buffer, self.target(), section)
    }

    /// Brings a buffer's current data to the host now (`delegatedstore`), and waits;
    /// without it, outputs come back only when someone reads them.
    pub fn delegated_store(&self, buffer: &dyn KernelBuffer) -> Result<()> {
        self.delegated_store_to(buffer, None, Location::Host)
    }

    /// `delegatedstore` to any location (`to`), of the whole buffer or of `section`
    /// only, and waits. A section lands in the copy at `to`, which must exist (the
    /// buffer was stored there whole once) and is taken as current outside the section:
    /// see [`Buffer::update_section`].
    pub fn delegated_store_to(
        &self,
        buffer: &dyn KernelBuffer,
        section: Option<&Section>,
        to: Location,
    ) -> Result<()> {
        wait_all(load(buffer, to, section)?)
    }

    /// Starts [`Codelet::delegated_store_to`] and returns the moves' events.
    pub fn delegated_store_async(
        &self,
        buffer: &dyn KernelBuffer,
        section: Option<&Section>,
        to: Location,
    ) -> Result<Vec<Event>> {
        load(buffer, to, section)
    }
}

/// A buffer lent to one asynchronous call (a group's variable, taken out of the group
/// for the call): given back when the call's [`Pending`] is dropped, after the kernel.
pub(super) trait Lent {
    /// The buffer (`None` once given back).
    fn buffer(&self) -> Option<&dyn KernelBuffer>;
    /// The buffer, for a writing parameter (`None` once given back).
    fn buffer_mut(&mut self) -> Option<&mut dyn KernelBuffer>;
}

/// The argument, borrowed for a shorter time.
pub(super) fn reborrow<'s>(a: &'s mut Arg<'_>) -> Arg<'s> {
    match a {
        Arg::Buf(b) => Arg::Buf(*b),
        Arg::BufMut(b) => Arg::BufMut(&mut **b),
        Arg::Scalar(t, bytes) => Arg::Scalar(*t, *bytes),
    }
}

/// An asynchronous call in flight. Its arguments stay borrowed until it completes;
/// dropping it waits for the kernel (the fields drop in order: the completion first,
/// then what the kernel used).
pub struct Pending<'a> {
    completion: Option<Completion>,
    before: TransferTotals,
    args: Vec<Arg<'a>>,
    lent: Vec<Box<dyn Lent + 'a>>,
    target: Location,
    fell_back: Vec<(Location, String)>,
}

impl Pending<'_> {
    /// Where the kernel was launched (after any fallback).
    pub fn target(&self) -> Location {
        self.target
    }

    /// Waits for the kernel (`synchronize`) and reports what the call moved.
    pub fn synchronize(mut self) -> Result<CallReport> {
        if let Some(c) = self.completion.take() {
            c.wait()?;
        }
        Ok(CallReport {
            target: self.target,
            moved: difference(lent_totals(&self.args, &self.lent), self.before),
            fell_back: std::mem::take(&mut self.fell_back),
        })
    }
}

/// Moves the whole of `buffer`'s current data, or `section` of it, to `at`: the moves'
/// events.
pub(super) fn load(
    buffer: &dyn KernelBuffer,
    at: Location,
    section: Option<&Section>,
) -> Result<Vec<Event>> {
    match section {
        None => buffer.serve_for_read(at).map(|(_, moves)| moves),
        Some(s) => buffer.update_section(s, at),
    }
}

pub(super) fn wait_all(events: Vec<Event>) -> Result<()> {
    events.iter().try_for_each(Event::wait)
}
