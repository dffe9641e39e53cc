//! Groups: OpenHMPP's `group` of codelets sharing one target and the data kept there
//! between calls (`resident`, `map`, `mapbyname`), with `allocate` and `release`.

use super::call::{load, wait_all};
use super::*;

mod data;

/// How a group variable binds codelet parameters.
#[derive(Debug, Clone)]
enum Binds {
    /// Every parameter of that name, in every codelet (`resident`, `mapbyname`).
    ByName,
    /// These `(codelet, parameter)` pairs (`map`).
    Params(Vec<(String, String)>),
}

/// A variable the group holds: declared with its element type and length, allocated at
/// the group's target by [`Group::allocate`].
struct Var {
    name: String,
    dtype: DType,
    len: usize,
    directive: &'static str,
    binds: Binds,
    make: fn(Location, usize) -> Result<Box<dyn KernelBuffer>>,
    buffer: Option<Box<dyn KernelBuffer>>,
}

fn make<T: Element>(at: Location, len: usize) -> Result<Box<dyn KernelBuffer>> {
    Ok(Box::new(Buffer::<T>::zeroed(at, len)?))
}

/// A codelet of the group and, per parameter, the group variable bound to it.
struct Member<'k> {
    label: String,
    codelet: Codelet<'k>,
    bound: Vec<Option<usize>>,
}

/// A group of codelets (OpenHMPP's `group`): one target for all of them, chosen once
/// when the group is allocated (the first available target of the list where every
/// codelet has a source), and variables held at that target for the life of the
/// allocation, usable by every codelet without being passed or moved:
///
/// - [`Group::resident`]: a group-global variable; every codelet parameter of its name
///   is it (OpenHMPP's `resident`).
/// - [`Group::map`]: parameters of different codelets bound together (by position in
///   the group: codelet and parameter name) share one device copy (`map`).
/// - [`Group::map_by_name`]: every parameter of that name, in every codelet (`mapbyname`).
///
/// A call passes only the arguments the group does not hold, in parameter order. The
/// host side of a variable is [`Group::var`] / [`Group::var_mut`]: a [`Buffer`] whose
/// copies follow the usual rules (reading it on the host brings it back, once; writing
/// it there makes the next call upload it). Unlike OpenHMPP, where a mapped argument is
/// still named at each call site, the group owns the buffer: there is one, so it cannot
/// disagree with itself. Calls, `cond`, asynchrony, sections, `noupdate` / `const` and
/// fallback are a [`Codelet`]'s.
///
/// ```
/// use locus::codelet::{kernels, Arg, Group, Launch};
/// use locus::Location;
///
/// let n = 16;
/// let jacobi = kernels::jacobi();
/// // Two codelet labels over one kernel, the grids mapped crosswise: ping-pong on the device.
/// let mut group = Group::new("heat", &[Location::OpenCl(0), Location::Host])?
///     .codelet("even", &jacobi)?
///     .codelet("odd", &jacobi)?
///     .map::<f32>("grid", n * n, &[("even", "src"), ("odd", "dst")])?
///     .map::<f32>("next", n * n, &[("even", "dst"), ("odd", "src")])?;
/// group.allocate()?;
/// group.var_mut::<f32>("grid")?.set(0, &vec![100.0; n])?; // the top row is hot
/// for step in 0..10 {
///     let label = if step % 2 == 0 { "even" } else { "odd" };
///     group.call(label, &mut [Arg::u32(n as u32), Arg::u32(n as u32)], Launch::d2(n, n))?;
/// }
/// // The grids never left the target: nothing moved since allocate.
/// assert_eq!(group.var::<f32>("next")?.stats().bytes_moved(), 0);
/// group.delegated_store_var("grid", None, Location::Host)?; // the one download
/// let grid = group.var::<f32>("grid")?.to_vec()?;
/// assert!(grid[n + 1] > 0.0 && grid[n + 1] < 100.0);
/// group.release()?;
/// # Ok::<(), locus::Error>(())
/// ```
pub struct Group<'k> {
    name: String,
    targets: Vec<Location>,
    members: Vec<Member<'k>>,
    vars: Vec<Var>,
    /// Once allocated: the chosen target first, then where calls fall back to.
    allocated: Option<Vec<Location>>,
    skipped: Vec<(Location, String)>,
}

impl fmt::Debug for Group<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Group")
            .field("name", &self.name)
            .field("targets", &self.targets)
            .field(
                "codelets",
                &self.members.iter().map(|m| &m.label).collect::<Vec<_>>(),
            )
            .field(
                "vars",
                &self.vars.iter().map(|v| &v.name).collect::<Vec<_>>(),
            )
            .field("allocated", &self.allocated)
            .finish()
    }
}

impl<'k> Group<'k> {
    /// A group named `name` over the target list `targets` (OpenHMPP's `group, target=`).
    /// At least one of them must be available on this machine.
    pub fn new(name: &str, targets: &[Location]) -> Result<Group<'k>> {
        let registry = crate::runtime::registry::registry();
        if !targets.iter().any(|&t| registry.has(t)) {
            return Err(Error::Invalid(format!(
                "group `{name}`: no target is available: {}",
                if targets.is_empty() {
                    "the list is empty".to_string()
                } else {
                    targets
                        .iter()
                        .map(|&t| format!("{t}: {}", registry.why_missing(t)))
                        .collect::<Vec<_>>()
                        .join("; ")
                }
            )));
        }
        Ok(Group {
            name: name.to_string(),
            targets: targets.to_vec(),
            members: Vec::new(),
            vars: Vec::new(),
            allocated: None,
            skipped: Vec::new(),
        })
    }

    fn unallocated(&self, what: &str) -> Result<()> {
        match self.allocated {
            None => Ok(()),
            Some(_) => Err(Error::Invalid(format!(
                "group `{}`: {what} after allocate; release the group first",
                self.name
            ))),
        }
    }

    /// Adds `kernel` to the group as the codelet `label`.
    pub fn codelet(mut self, label: &str, kernel: &'k Kernel) -> Result<Group<'k>> {
        self.unallocated("a codelet cannot be added")?;
        if self.members.iter().any(|m| m.label == label) {
            return Err(Error::Invalid(format!(
                "group `{}` already has a codelet `{label}`",
                self.name
            )));
        }
        self.members.push(Member {
            label: label.to_string(),
            codelet: Codelet::with_targets(kernel, self.targets.clone()),
            bound: Vec::new(),
        });
        Ok(self)
    }

    fn member_index(&self, label: &str) -> Result<usize> {
        named_index(&self.name, "codelet", &self.members, label, |m| &m.label)
    }

    /// `args[param].noupdate=true` on codelet `label` (see [`Codelet::noupdate`]).
    pub fn noupdate(mut self, label: &str, param: &str) -> Result<Group<'k>> {
        let i = self.member_index(label)?;
        self.members[i].codelet = self.members[i].codelet.clone().noupdate(param)?;
        Ok(self)
    }

    /// `args[param].const=true` on codelet `label`: uploaded at the first call, never
    /// checked again until the group is released (see [`Codelet::constant`]).
    pub fn constant(mut self, label: &str, param: &str) -> Result<Group<'k>> {
        let i = self.member_index(label)?;
        self.members[i].codelet = self.members[i].codelet.clone().constant(param)?;
        Ok(self)
    }

    fn declare<T: Element>(
        mut self,
        name: &str,
        len: usize,
        directive: &'static str,
        binds: Binds,
    ) -> Result<Group<'k>> {
        self.unallocated("a variable cannot be declared")?;
        if self.vars.iter().any(|v| v.name == name) {
            return Err(Error::Invalid(format!(
                "group `{}` already has a variable `{name}`",
                self.name
            )));
        }
        self.vars.push(Var {
            name: name.to_string(),
            dtype: T::DTYPE,
            len,
            directive,
            binds,
            make: make::<T>,
            buffer: None,
        });
        Ok(self)
    }

    /// Declares `name`, `len` elements of `T`, resident at the group's target
    /// (OpenHMPP's `resident`): every codelet parameter named `name` is this variable.
    pub fn resident<T: Element>(self, name: &str, len: usize) -> Result<Group<'k>> {
        self.declare::<T>(name, len, "resident", Binds::ByName)
    }

    /// Binds the parameters `params` (`(codelet, parameter)` pairs, of identical element
    /// type) to one device copy, the group variable `name` of `len` elements
    /// (OpenHMPP's `map`).
    pub fn map<T: Element>(
        self,
        name: &str,
        len: usize,
        params: &[(&str, &str)],
    ) -> Result<Group<'k>> {
        let pairs = params
            .iter()
            .map(|(c, p)| (c.to_string(), p.to_string()))
            .collect();
        self.declare::<T>(name, len, "map", Binds::Params(pairs))
    }

    /// Binds every parameter named `name`, in every codelet of the group, to one device
    /// copy of `len` elements (OpenHMPP's `mapbyname`).
    pub fn map_by_name<T: Element>(self, name: &str, len: usize) -> Result<Group<'k>> {
        self.declare::<T>(name, len, "mapbyname", Binds::ByName)
    }

    /// OpenHMPP's `allocate`: chooses the group's target (the first available one of the
    /// list where every codelet has a source and, for `f64` kernels, 64-bit floats) and
    /// allocates every variable there (zeroed). Returns the target. When anything fails
    /// nothing stays allocated.
    pub fn allocate(&mut self) -> Result<Location> {
        self.unallocated("allocate again")?;
        let bound = self.bind()?;
        let registry = crate::runtime::registry::registry();
        let mut skipped = Vec::new();
        let mut chosen = None;
        for (i, &t) in self.targets.iter().enumerate() {
            if !registry.has(t) {
                skipped.push((t, registry.why_missing(t)));
                continue;
            }
            let unfit = self
                .members
                .iter()
                .find_map(|m| m.codelet.check_target(t, false).err());
            match unfit {
                Some(e) => skipped.push((t, e.to_string())),
                None => {
                    chosen = Some(i);
                    break;
                }
            }
        }
        let Some(first) = chosen else {
            return Err(Error::Invalid(format!(
                "group `{}`: no target runs every codelet: {}",
                self.name,
                skipped
                    .iter()
                    .map(|(l, why)| format!("{l}: {why}"))
                    .collect::<Vec<_>>()
                    .join("; ")
            )));
        };
        let mut targets = vec![self.targets[first]];
        for &t in &self.targets[first + 1..] {
            if registry.has(t) && !targets.contains(&t) {
                targets.push(t);
            }
        }
        let target = targets[0];
        let mut made = Vec::with_capacity(self.vars.len());
        for var in &self.vars {
            made.push((var.make)(target, var.len).map_err(|e| {
                Error::Invalid(format!(
                    "group `{}`: allocating {} `{}` ({} x {}) at {target}: {e}",
                    self.name, var.directive, var.name, var.len, var.dtype
                ))
            })?);
        }
        for (var, buffer) in self.vars.iter_mut().zip(made) {
            var.buffer = Some(buffer);
        }
        for (member, bound) in self.members.iter_mut().zip(bound) {
            member.bound = bound;
        }
        self.skipped = skipped;
        self.allocated = Some(targets);
        Ok(target)
    }

    /// OpenHMPP's `release`: waits for the variables' moves, frees them (their data is
    /// gone: store what you need first) and forgets the `const` uploads. The group can
    /// be allocated again. The first failed move is the error; everything is freed anyway.
    pub fn release(&mut self) -> Result<()> {
        let mut first = Ok(());
        for var in &mut self.vars {
            if let Some(buffer) = var.buffer.take() {
                if let Err(e) = buffer.settle() {
                    first = first.and(Err(e));
                }
            }
        }
        for m in &self.members {
            m.codelet.forget_constants();
        }
        self.allocated = None;
        first
    }

    /// The group's target, once allocated.
    pub fn target(&self) -> Option<Location> {
        self.allocated.as_ref().map(|t| t[0])
    }

    /// Where calls fall back to when a launch fails at the target, once allocated.
    pub fn fallbacks(&self) -> &[Location] {
        self.allocated.as_deref().map_or(&[], |t| &t[1..])
    }

    /// The targets passed over by [`Group::allocate`], each with why.
    pub fn skipped(&self) -> &[(Location, String)] {
        &self.skipped
    }

    /// The group's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The group's target; an error before `allocate`.
    fn target_or_err(&self) -> Result<Location> {
        allocated_targets(&self.name, &self.allocated).map(|t| t[0])
    }

    fn var_index(&self, name: &str) -> Result<usize> {
        named_index(&self.name, "variable", &self.vars, name, |v| &v.name)
    }

    fn held(&self, name: &str) -> Result<&dyn KernelBuffer> {
        let v = &self.vars[self.var_index(name)?];
        v.buffer
            .as_deref()
            .ok_or_else(|| unallocated_var(&self.name, name))
    }

    /// The variable `name`'s buffer (its host side too: read it anywhere).
    pub fn var<T: Element>(&self, name: &str) -> Result<&Buffer<T>> {
        let v = &self.vars[self.var_index(name)?];
        v.buffer
            .as_deref()
            .ok_or_else(|| unallocated_var(&self.name, name))?
            .as_any()
            .downcast_ref::<Buffer<T>>()
            .ok_or_else(|| wrong_type::<T>(&self.name, name, v.dtype))
    }

    /// The variable `name`'s buffer, to write (a write on the host makes the next call
    /// upload it, once).
    pub fn var_mut<T: Element>(&mut self, name: &str) -> Result<&mut Buffer<T>> {
        let i = self.var_index(name)?;
        let Group {
            name: group, vars, ..
        } = self;
        let v = &mut vars[i];
        v.buffer
            .as_deref_mut()
            .ok_or_else(|| unallocated_var(group, name))?
            .as_any_mut()
            .downcast_mut::<Buffer<T>>()
            .ok_or_else(|| wrong_type::<T>(group, name, v.dtype))
    }

    /// The full argument list of a member: the caller's `args` for the parameters the
    /// group does not hold, in order, and the group's variables for the others.
    fn assemble<'s>(
        name: &str,
        member: &Member<'_>,
        vars: &'s mut [Var],
        args: Vec<Arg<'s>>,
    ) -> Result<Vec<Arg<'s>>> {
        let params = member.codelet.kernel().params();
        let names = |held: bool| {
            params
                .iter()
                .zip(&member.bound)
                .filter(|(_, b)| b.is_some() == held)
                .map(|(p, _)| p.name.as_str())
                .collect::<Vec<_>>()
        };
        let free = names(false);
        if args.len() != free.len() {
            let held = names(true);
            return Err(Error::Invalid(format!(
                "group `{name}`, codelet `{}`: pass {} arguments ({}), the group holds {}; got {}",
                member.label,
                free.len(),
                free.join(", "),
                if held.is_empty() {
                    "none".to_string()
                } else {
                    held.join(", ")
                },
                args.len()
            )));
        }
        let mut slots: Vec<Option<&'s mut dyn KernelBuffer>> = vars
            .iter_mut()
            .map(|v| {
                v.buffer
                    .as_mut()
                    .map(|b| &mut **b as &'s mut dyn KernelBuffer)
            })
            .collect();
        let mut given = args.into_iter();
        let mut full = Vec::with_capacity(params.len());
        for (p, b) in params.iter().zip(&member.bound) {
            full.push(match b {
                Some(v) => match (slots[*v].take(), p.kind) {
                    (Some(buffer), ParamKind::Buffer(_, Intent::In)) => Arg::Buf(buffer),
                    (Some(buffer), _) => Arg::BufMut(buffer),
                    (None, _) => {
                        return Err(Error::Invalid(format!(
                            "group `{name}` is not allocated: call allocate() first"
                        )))
                    }
                },
                // As many as the free parameters: counted above.
                None => given
                    .next()
                    .ok_or_else(|| Error::Invalid("internal: argument count".into()))?,
            });
        }
        Ok(full)
    }

    /// Calls codelet `label` (OpenHMPP's `callsite`) at the group's target, with the
    /// arguments the group does not hold, in parameter order (see
    /// [`Codelet::call`]: the same checks, moves, fallback and report).
    pub fn call(
        &mut self,
        label: &str,
        args: &mut [Arg<'_>],
        launch: Launch,
    ) -> Result<CallReport> {
        self.call_if(true, label, args, launch)
    }

    /// [`Group::call`] offloaded when `offload` is true, on the host with the host
    /// implementation when false (OpenHMPP's `cond`); the group's variables move to
    /// the host and back only as the calls need them.
    pub fn call_if(
        &mut self,
        offload: bool,
        label: &str,
        args: &mut [Arg<'_>],
        launch: Launch,
    ) -> Result<CallReport> {
        self.target_or_err()?; // "not allocated" before "no such codelet"
        let m = self.member_index(label)?;
        let Group {
            name,
            members,
            vars,
            allocated,
            ..
        } = self;
        let host = [Location::Host];
        let targets = match allocated_targets(name, allocated)? {
            all if offload => all,
            _ => &host[..],
        };
        let member = &members[m];
        let given = args.iter_mut().map(reborrow).collect();
        let mut full = Self::assemble(name, member, vars, given)?;
        member.codelet.call_among(targets, &mut full, launch, None)
    }

    /// Starts codelet `label` and returns at once (OpenHMPP's `callsite, asynchronous`);
    /// the group and the arguments stay borrowed until [`Pending::synchronize`]
    /// (OpenHMPP's `synchronize`).
    pub fn call_async<'a>(
        &'a mut self,
        label: &str,
        args: Vec<Arg<'a>>,
        launch: Launch,
    ) -> Result<Pending<'a>> {
        self.target_or_err()?; // "not allocated" before "no such codelet"
        let m = self.member_index(label)?;
        let Group {
            name,
            members,
            vars,
            allocated,
            ..
        } = self;
        let targets = allocated_targets(name, allocated)?;
        let member = &members[m];
        let full = Self::assemble(name, member, vars, args)?;
        member.codelet.call_async_among(targets, full, launch)
    }
}

/// The argument, borrowed for a shorter time.
fn reborrow<'s>(a: &'s mut Arg<'_>) -> Arg<'s> {
    match a {
        Arg::Buf(b) => Arg::Buf(*b),
        Arg::BufMut(b) => Arg::BufMut(&mut **b),
        Arg::Scalar(t, bytes) => Arg::Scalar(*t, *bytes),
    }
}

/// The chosen target and the fallbacks of an allocated group; an error naming `group`
/// before `allocate`.
fn allocated_targets<'a>(
    group: &str,
    allocated: &'a Option<Vec<Location>>,
) -> Result<&'a [Location]> {
    allocated.as_deref().ok_or_else(|| {
        Error::Invalid(format!(
            "group `{group}` is not allocated: call allocate() first"
        ))
    })
}

fn unallocated_var(group: &str, name: &str) -> Error {
    Error::Invalid(format!(
        "group `{group}` is not allocated: variable `{name}` exists once allocate() has run"
    ))
}

fn wrong_type<T: Element>(group: &str, name: &str, dtype: DType) -> Error {
    Error::Invalid(format!(
        "group `{group}`: variable `{name}` holds {dtype} elements, not {}",
        T::DTYPE
    ))
}

impl Drop for Group<'_> {
    /// Releases the group (OpenHMPP's `release` at the end of its scope).
    fn drop(&mut self) {
        let _ = self.release();
    }
}

/// The index of the item named `name` in group `group`, or an error that lists the
/// names it has ("group `g` has no variable `x` (its variables: a, b)").
fn named_index<T>(
    group: &str,
    what: &str,
    items: &[T],
    name: &str,
    name_of: impl Fn(&T) -> &String,
) -> Result<usize> {
    items
        .iter()
        .position(|i| name_of(i) == name)
        .ok_or_else(|| {
            let names: Vec<&str> = items.iter().map(|i| name_of(i).as_str()).collect();
            Error::Invalid(format!(
                "group `{group}` has no {what} `{name}` (its {what}s: {})",
                names.join(", ")
            ))
        })
}
