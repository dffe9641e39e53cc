//! A group's variables after they are declared: binding them to the members'
//! parameters (checked names, element types, no parameter bound twice), and OpenHMPP's
//! `advancedload` / `delegatedstore` of them and of other buffers to and from the
//! group's target.

use super::*;

impl Group<'_> {
    /// Resolves every binding to `(member, parameter) -> variable`, checking names,
    /// element types and that no parameter is bound twice.
    pub(super) fn bind(&self) -> Result<Vec<Vec<Option<usize>>>> {
        let g = &self.name;
        let mut bound: Vec<Vec<Option<usize>>> = self
            .members
            .iter()
            .map(|m| vec![None; m.codelet.kernel().params().len()])
            .collect();
        for (v, var) in self.vars.iter().enumerate() {
            let pairs: Vec<(usize, usize)> = match &var.binds {
                Binds::ByName => self
                    .members
                    .iter()
                    .enumerate()
                    .filter_map(|(m, member)| {
                        let params = member.codelet.kernel().params();
                        params.iter().position(|p| p.name == var.name).map(|p| (m, p))
                    })
                    .collect(),
                Binds::Params(list) => list
                    .iter()
                    .map(|(label, param)| {
                        let m = self.member_index(label)?;
                        let params = self.members[m].codelet.kernel().params();
                        let p = params.iter().position(|p| &p.name == param).ok_or_else(|| {
                            Error::Invalid(format!(
                                "group `{g}`, {} `{}`: codelet `{label}` has no parameter `{param}`",
                                var.directive, var.name
                            ))
                        })?;
                        Ok((m, p))
                    })
                    .collect::<Result<_>>()?,
            };
            if var.directive == "mapbyname" && pairs.is_empty() {
                return Err(Error::Invalid(format!(
                    "group `{g}`, mapbyname `{}`: no codelet has a parameter of that name",
                    var.name
                )));
            }
            for (m, p) in pairs {
                let member = &self.members[m];
                let param = &member.codelet.kernel().params()[p];
                match param.kind {
                    ParamKind::Buffer(t, _) if t == var.dtype => {}
                    kind => {
                        return Err(Error::Invalid(format!(
                            "group `{g}`, {} `{}`: codelet `{}` parameter `{}` is {}, the variable holds {} elements (mapped arguments must have identical types)",
                            var.directive,
                            var.name,
                            member.label,
                            param.name,
                            match kind {
                                ParamKind::Buffer(t, _) => format!("a {t} buffer"),
                                ParamKind::Scalar(t) => format!("a {t} scalar"),
                            },
                            var.dtype
                        )))
                    }
                }
                if let Some(other) = bound[m][p] {
                    return Err(Error::Invalid(format!(
                        "group `{g}`: codelet `{}` parameter `{}` is bound to both `{}` and `{}`",
                        member.label, param.name, self.vars[other].name, var.name
                    )));
                }
                if bound[m].contains(&Some(v)) {
                    return Err(Error::Invalid(format!(
                        "group `{g}`: `{}` is bound to two parameters of codelet `{}`; one buffer cannot be two arguments of one call",
                        var.name, member.label
                    )));
                }
                bound[m][p] = Some(v);
            }
        }
        Ok(bound)
    }

    /// OpenHMPP's `advancedload` to the group's target, of the whole buffer, and waits
    /// (for a group variable, see [`Group::advanced_load_var`]).
    pub fn advanced_load(&self, buffer: &dyn KernelBuffer) -> Result<()> {
        wait_all(load(buffer, self.target_or_err()?, None)?)
    }

    /// `advancedload` of `section` only (see [`Codelet::advanced_load_section`]).
    pub fn advanced_load_section(
        &self,
        buffer: &dyn KernelBuffer,
        section: &Section,
    ) -> Result<()> {
        wait_all(load(buffer, self.target_or_err()?, Some(section))?)
    }

    /// `advancedload, asynchronous`: the moves' events.
    pub fn advanced_load_async(
        &self,
        buffer: &dyn KernelBuffer,
        section: Option<&Section>,
    ) -> Result<Vec<Event>> {
        load(buffer, self.target_or_err()?, section)
    }

    /// `advancedload` of the group variable `name` (whole or `section`), and waits:
    /// after a write to its host side, loads it (or the part written) back ahead of
    /// the next call. An error while the variable is lent to an asynchronous call.
    pub fn advanced_load_var(&self, name: &str, section: Option<&Section>) -> Result<()> {
        let target = self.target_or_err()?;
        wait_all(self.with_held(name, |b| load(b, target, section))?)
    }

    /// [`Group::advanced_load_var`] started (`advancedload, asynchronous` of a group
    /// variable): the moves' events. Calls that use the variable are ordered after them
    /// without a wait; it may run while an asynchronous call of another codelet does.
    pub fn advanced_load_var_async(
        &self,
        name: &str,
        section: Option<&Section>,
    ) -> Result<Vec<Event>> {
        let target = self.target_or_err()?;
        self.with_held(name, |b| load(b, target, section))
    }

    /// OpenHMPP's `delegatedstore`: brings `buffer` (whole or `section`) to `to`, and
    /// waits (see [`Codelet::delegated_store_to`]).
    pub fn delegated_store(
        &self,
        buffer: &dyn KernelBuffer,
        section: Option<&Section>,
        to: Location,
    ) -> Result<()> {
        wait_all(load(buffer, to, section)?)
    }

    /// `delegatedstore` of the group variable `name` (whole or `section`) to `to`, and
    /// waits. A section needs a copy at `to` already (store it whole once).
    pub fn delegated_store_var(
        &self,
        name: &str,
        section: Option<&Section>,
        to: Location,
    ) -> Result<()> {
        wait_all(self.with_held(name, |b| load(b, to, section))?)
    }

    /// [`Group::delegated_store_var`] started: the moves' events.
    pub fn delegated_store_var_async(
        &self,
        name: &str,
        section: Option<&Section>,
        to: Location,
    ) -> Result<Vec<Event>> {
        self.with_held(name, |b| load(b, to, section))
    }
}
