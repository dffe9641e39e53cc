//! Where a group's variables are: held by the group (its own buffers, or the caller's),
//! or lent to one call (an asynchronous call keeps them until its [`Pending`] is
//! dropped); the variables' buffers as the caller reads and writes them.

use super::*;

/// Makes a group variable's buffer: `len` elements at the group's target.
pub(super) type Make = fn(Location, usize) -> Result<Box<dyn KernelBuffer>>;

/// Where a variable's buffer is.
pub(super) enum Slot<'k> {
    /// Declared; [`Group::allocate`] makes it.
    Unallocated,
    /// In the group, ready for a call.
    Held(Held<'k>),
    /// Lent to the asynchronous call of the codelet named, until that call is done.
    Lent(String),
}

/// A variable's buffer: the group's own, or the caller's.
pub(super) enum Held<'k> {
    Own(Box<dyn KernelBuffer>),
    Caller(&'k mut dyn KernelBuffer),
}

impl Held<'_> {
    pub(super) fn get(&self) -> &dyn KernelBuffer {
        match self {
            Held::Own(b) => &**b,
            Held::Caller(b) => &**b,
        }
    }
    pub(super) fn get_mut(&mut self) -> &mut dyn KernelBuffer {
        match self {
            Held::Own(b) => &mut **b,
            Held::Caller(b) => &mut **b,
        }
    }
}

/// A variable's buffer, taken out of the group for one call: back in its slot when
/// dropped (for an asynchronous call, when its [`Pending`] is, after the kernel).
struct Loan<'g, 'k> {
    slot: &'g Mutex<Slot<'k>>,
    held: Option<Held<'k>>,
}

impl Lent for Loan<'_, '_> {
    fn buffer(&self) -> Option<&dyn KernelBuffer> {
        self.held.as_ref().map(Held::get)
    }
    fn buffer_mut(&mut self) -> Option<&mut dyn KernelBuffer> {
        self.held.as_mut().map(Held::get_mut)
    }
}

impl Drop for Loan<'_, '_> {
    fn drop(&mut self) {
        if let Some(held) = self.held.take() {
            *lock(self.slot) = Slot::Held(held);
        }
    }
}

pub(super) fn lock<'g, 'k>(slot: &'g Mutex<Slot<'k>>) -> std::sync::MutexGuard<'g, Slot<'k>> {
    slot.lock().unwrap_or_else(|e| e.into_inner())
}

impl<'k> Group<'k> {
    /// Runs `f` on the variable `name`'s buffer, held by the group (an error while it is
    /// lent to an asynchronous call, or before `allocate`).
    pub(super) fn with_held<R>(
        &self,
        name: &str,
        f: impl FnOnce(&dyn KernelBuffer) -> Result<R>,
    ) -> Result<R> {
        let v = &self.vars[self.var_index(name)?];
        match &*lock(&v.slot) {
            Slot::Held(held) => f(held.get()),
            Slot::Unallocated => Err(unallocated_var(&self.name, name)),
            Slot::Lent(label) => Err(lent_var(&self.name, name, label)),
        }
    }

    /// The variable `name`'s buffer (its host side too: read it anywhere). The group is
    /// borrowed mutably: no asynchronous call can be using the variable meanwhile.
    pub fn var<T: Element>(&mut self, name: &str) -> Result<&Buffer<T>> {
        self.var_mut(name).map(|b| &*b)
    }

    /// The variable `name`'s buffer, to write (a write on the host makes the next call
    /// upload it, once).
    pub fn var_mut<T: Element>(&mut self, name: &str) -> Result<&mut Buffer<T>> {
        let i = self.var_index(name)?;
        let Group {
            name: group, vars, ..
        } = self;
        let v = &mut vars[i];
        let dtype = v.dtype;
        match v.slot_mut() {
            Slot::Held(held) => held
                .get_mut()
                .as_any_mut()
                .downcast_mut::<Buffer<T>>()
                .ok_or_else(|| wrong_type::<T>(group, name, dtype)),
            Slot::Unallocated => Err(unallocated_var(group, name)),
            Slot::Lent(label) => Err(lent_var(group, name, label)),
        }
    }

    /// Takes the variables codelet `m` uses out of the group for one call, in its
    /// parameters' order (each is given back when its loan is dropped); an error naming
    /// the variable and the call using it when one is lent already.
    pub(super) fn lend(&self, m: usize) -> Result<Vec<Box<dyn Lent + '_>>> {
        let member = &self.members[m];
        let mut loans: Vec<Box<dyn Lent + '_>> = Vec::new();
        for v in member.bound.iter().flatten().copied() {
            let var = &self.vars[v];
            let mut slot = lock(&var.slot);
            match std::mem::replace(&mut *slot, Slot::Lent(member.label.clone())) {
                Slot::Held(held) => loans.push(Box::new(Loan {
                    slot: &var.slot,
                    held: Some(held),
                })),
                other => {
                    let e = match &other {
                        Slot::Lent(label) => lent_var(&self.name, &var.name, label),
                        _ => unallocated_var(&self.name, &var.name),
                    };
                    *slot = other;
                    return Err(e); // the loans taken so far go back as they drop
                }
            }
        }
        Ok(loans)
    }
}

pub(super) fn lent_var(group: &str, name: &str, label: &str) -> Error {
    Error::Invalid(format!(
        "group `{group}`: variable `{name}` is in use by the asynchronous call of codelet `{label}`: synchronize that call first"
    ))
}

pub(super) fn unallocated_var(group: &str, name: &str) -> Error {
    Error::Invalid(format!(
        "group `{group}` is not allocated: variable `{name}` exists once allocate() has run"
    ))
}

pub(super) fn wrong_type<T: Element>(group: &str, name: &str, dtype: DType) -> Error {
    Error::Invalid(format!(
        "group `{group}`: variable `{name}` holds {dtype} elements, not {}",
        T::DTYPE
    ))
}
