//! Groups: OpenHMPP's `group` of codelets sharing one target and the data kept there
//! between calls (`resident`, `map`, `mapbyname`), with `allocate` and `release`.

use super::call::{load, reborrow, wait_all, Lent};
use super::*;
use std::sync::Mutex;

mod calls;
mod data;
mod slots;

use slots::{Held, Make, Slot};

/// How a group variable binds codelet parameters.
#[derive(Debug, Clone)]
enum Binds {
    /// Every parameter of that name, in every codelet (`resident`, `mapbyname`).
    ByName,
    /// These `(codelet, parameter)` pairs (`map`).
    Params(Vec<(String, String)>),
}

/// A variable the group holds: declared with its element type and length, allocated at
/// the group's target by [`Group::allocate`] (or the caller's own buffer:
/// [`Group::map_buffer`]).
struct Var<'k> {
    name: String,
    dtype: DType,
    len: usize,
    directive: &'static str,
    binds: Binds,
    /// Makes the group's own buffer; `None` for the caller's.
    make: Option<Make>,
    slot: Mutex<Slot<'k>>,
}

impl<'k> Var<'k> {
    /// The slot, through the group's exclusive borrow (no lock to take).
    fn slot_mut(&mut self) -> &mut Slot<'k> {
        self.slot.get_mut().unwrap_or_else(|e| e.into_inner())
    }
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
/// still named at each call site, the group holds the buffer (its own, or the caller's
/// with [`Group::map_buffer`]): there is one, so it cannot disagree with itself. Calls,
/// `cond`, asynchrony, sections, `noupdate` / `const` and fallback are a [`Codelet`]'s;
/// calls take the group shared, so an asynchronous call of one codelet overlaps calls of
/// others and loads of the variables it does not use ([`Group::call_async`]).
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
    vars: Vec<Var<'k>>,
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
            make: Some(make::<T>),
            slot: Mutex::new(Slot::Unallocated),
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

    /// [`Group::map`] over the caller's own buffer: the parameters `params` share
    /// `buffer`'s copies (OpenHMPP's `map` of an array the caller owns). The group uses it
    /// for its life: calls move it as the codelets need and leave the newest data where
    /// it was made; `allocate` makes nothing for it and `release` only waits for its
    /// moves; once the group is gone, the caller reads it as any buffer (it comes back
    /// from the target then, once).
    pub fn map_buffer<T: Element>(
        mut self,
        name: &str,
        buffer: &'k mut Buffer<T>,
        params: &[(&str, &str)],
    ) -> Result<Group<'k>> {
        let len = buffer.len();
        self = self.map::<T>(name, len, params)?;
        if let Some(var) = self.vars.last_mut() {
            var.make = None;
            *var.slot_mut() = Slot::Held(Held::Caller(buffer));
        }
        Ok(self)
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
            let Some(make) = var.make else {
                made.push(None); // the caller's own buffer
                continue;
            };
            made.push(Some(make(target, var.len).map_err(|e| {
                Error::Invalid(format!(
                    "group `{}`: allocating {} `{}` ({} x {}) at {target}: {e}",
                    self.name, var.directive, var.name, var.len, var.dtype
                ))
            })?));
        }
        for (var, buffer) in self.vars.iter_mut().zip(made) {
            if let Some(buffer) = buffer {
                *var.slot_mut() = Slot::Held(Held::Own(buffer));
            }
        }
        for (member, bound) in self.members.iter_mut().zip(bound) {
            member.bound = bound;
        }
        self.skipped = skipped;
        self.allocated = Some(targets);
        Ok(target)
    }

    /// OpenHMPP's `release`: waits for the variables' moves, frees the group's own (their
    /// data is gone: store what you need first; the caller's buffers of
    /// [`Group::map_buffer`] stay as they are) and forgets the `const` uploads. The group
    /// can be allocated again. The first failed move is the error; everything is freed
    /// anyway.
    pub fn release(&mut self) -> Result<()> {
        let mut first = Ok(());
        for var in &mut self.vars {
            let own = var.make.is_some();
            let slot = var.slot_mut();
            if let Slot::Held(held) = slot {
                if let Err(e) = held.get().settle() {
                    first = first.and(Err(e));
                }
            }
            // The group's own buffers go (one still lent was lost with its `Pending`, which
            // was forgotten); the caller's stay bound.
            if own || matches!(slot, Slot::Lent(_)) {
                *slot = Slot::Unallocated;
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
