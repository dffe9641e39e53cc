//! `is_accessible_from`: can code running at one location use memory of another in
//! place? Decided from what each runtime reports, not from a fixed table.

use super::registry::{registry, Registry};
use crate::core::device::{Device, HostAccess};
use crate::core::error::Result;
use crate::core::location::Location;
use crate::core::memory::Memory;
use crate::core::native::Native;

/// Can code running at `accessor` use memory allocated at `memory` (with the device's
/// default kind of allocation) in place? Returns the answer and a one-line reason.
pub fn location_accessibility(
    registry: &Registry,
    memory: Location,
    accessor: Location,
) -> Result<(bool, String)> {
    let owner = registry.device(memory)?;
    let user = registry.device(accessor)?;
    Ok(between(
        owner.as_ref(),
        None,
        owner.host_access_default(),
        user.as_ref(),
    ))
}

/// The same question for one allocation.
pub fn memory_accessibility(memory: &Memory, accessor: Location) -> (bool, String) {
    match registry().device(accessor) {
        Ok(user) => between(
            memory.device().as_ref(),
            Some(memory.native()),
            memory.host_access(),
            user.as_ref(),
        ),
        Err(_) => (false, format!("{accessor} is not available")),
    }
}

/// Whether code at `user` uses memory of `owner` (the allocation `native` where one is
/// asked about, with host access `host`) in place, and why: the user's own say first,
/// then the general rules. For devices outside the registry too (a resource's GPU).
pub(crate) fn between(
    owner: &dyn Device,
    native: Option<&Native>,
    host: HostAccess,
    user: &dyn Device,
) -> (bool, String) {
    let (memory, accessor) = (owner.location(), user.location());
    if memory != accessor {
        if let Some(answer) = user.accessibility_of(owner, native, host) {
            return answer;
        }
    }
    decide(
        memory,
        host,
        &owner.host_access_reason(),
        accessor,
        user.executes_on_host(),
    )
}

fn decide(
    memory: Location,
    host_access: HostAccess,
    why: &str,
    accessor: Location,
    accessor_on_host: bool,
) -> (bool, String) {
    if memory == accessor {
        return (true, "same location".into());
    }
    match (accessor.is_host(), host_access) {
        (true, HostAccess::Pointer | HostAccess::Mapped) => (true, why.to_string()),
        (true, HostAccess::None) => (false, why.to_string()),
        (false, HostAccess::Pointer) if accessor_on_host => (
            true,
            format!("{accessor} dereferences host addresses and {why}"),
        ),
        (false, _) if accessor_on_host => (
            false,
            format!("{accessor} needs a plain host address; {memory} memory has none"),
        ),
        (false, _) => (
            false,
            format!("{accessor} kernels cannot address {memory} memory"),
        ),
    }
}

/// The whole relation for this machine as a text table: rows are where the memory
/// lives, columns where the code runs; `yes` means in place, `-` means a copy.
pub fn accessibility_table(registry: &Registry) -> String {
    let locations = registry.locations();
    let names: Vec<String> = locations.iter().map(|l| l.to_string()).collect();
    let width = names.iter().map(String::len).max().unwrap_or(4).max(10);
    let mut out = format!("{:width$}", "memory \\ by");
    for n in &names {
        out.push_str(&format!(" {n:>width$}"));
    }
    out.push('\n');
    for (row, name) in locations.iter().zip(&names) {
        out.push_str(&format!("{name:width$}"));
        for col in &locations {
            let yes = location_accessibility(registry, *row, *col)
                .map(|(yes, _)| yes)
                .unwrap_or(false);
            out.push_str(&format!(" {:>width$}", if yes { "yes" } else { "-" }));
        }
        out.push('\n');
    }
    out
}

impl Memory {
    /// Can code running at `accessor` use this memory in place? Not symmetric.
    pub fn is_accessible_from(&self, accessor: Location) -> bool {
        memory_accessibility(self, accessor).0
    }
}
