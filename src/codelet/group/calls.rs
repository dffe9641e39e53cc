//! Calling a group's codelets: the variables a codelet uses lent for the call, the
//! caller's arguments in between, then a [`Codelet`]'s call.

use super::*;

impl<'k> Group<'k> {
    /// The full argument list of a member: the caller's `args` for the parameters the
    /// group does not hold, in order, and the group's variables for the others.
    /// `loans` are the member's variables in parameter order ([`Group::lend`]).
    fn assemble<'s, 'a: 's>(
        name: &str,
        member: &Member<'_>,
        loans: &'s mut [Box<dyn Lent + 'a>],
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
        let mut lent = loans.iter_mut();
        let mut given = args.into_iter();
        let mut full = Vec::with_capacity(params.len());
        for (p, b) in params.iter().zip(&member.bound) {
            full.push(match b {
                Some(_) => match (lent.next().and_then(|l| l.buffer_mut()), p.kind) {
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
    /// [`Codelet::call`]: the same checks, moves, fallback and report). The group is
    /// shared: an asynchronous call of another codelet, or a load, may run meanwhile; a
    /// variable lent to an asynchronous call still pending is an error naming it.
    pub fn call(&self, label: &str, args: &mut [Arg<'_>], launch: Launch) -> Result<CallReport> {
        self.call_if(true, label, args, launch)
    }

    /// [`Group::call`] offloaded when `offload` is true, on the host with the host
    /// implementation when false (OpenHMPP's `cond`); the group's variables move to
    /// the host and back only as the calls need them.
    pub fn call_if(
        &self,
        offload: bool,
        label: &str,
        args: &mut [Arg<'_>],
        launch: Launch,
    ) -> Result<CallReport> {
        let all = self.targets_or_err()?; // "not allocated" before "no such codelet"
        let m = self.member_index(label)?;
        let host = [Location::Host];
        let targets = if offload { all } else { &host[..] };
        let member = &self.members[m];
        let mut lent = self.lend(m)?;
        let given = args.iter_mut().map(reborrow).collect();
        let mut full = Self::assemble(&self.name, member, &mut lent, given)?;
        member.codelet.call_among(targets, &mut full, launch, None)
    }

    /// Starts codelet `label` and returns at once (OpenHMPP's `callsite, asynchronous`);
    /// the variables it uses and the arguments stay with the call until
    /// [`Pending::synchronize`] (OpenHMPP's `synchronize`). Meanwhile the group is
    /// shared: other codelets may be called, synchronously or not, and loads
    /// (`advanced_load_var`, `advanced_load_async`) may run, on the variables this call
    /// does not use: asynchronous callsites and loads overlap.
    pub fn call_async<'a>(
        &'a self,
        label: &str,
        args: Vec<Arg<'a>>,
        launch: Launch,
    ) -> Result<Pending<'a>> {
        let targets = self.targets_or_err()?; // "not allocated" before "no such codelet"
        let m = self.member_index(label)?;
        let member = &self.members[m];
        let lent = self.lend(m)?;
        let name = &self.name;
        member
            .codelet
            .call_async_lent(targets, args, lent, launch, None, |given, lent| {
                Self::assemble(name, member, lent, given)
            })
    }

    /// The chosen target and the fallbacks; an error before `allocate`.
    fn targets_or_err(&self) -> Result<&[Location]> {
        allocated_targets(&self.name, &self.allocated)
    }
}
