//! The transfer matrix as a planner: for each ordered pair, every copy path that
//! applies is a candidate (the paths backends registered for the pair's technologies,
//! then the generic ones of [`paths`](super::paths)), and one is chosen per size class:
//! - by measured cost, where a calibration of this machine measured the pair
//!   (`locus calibrate`; the route's reason quotes the numbers);
//! - before any calibration, by a fixed order: a path a backend registered for the pair
//!   (it knows better, e.g. that a GPU copy goes through pinned memory), else the
//!   cheapest route kind among the generic paths, then the one that maps fewer sides
//!   through a runtime's map call, the first in their order on a tie.
//!
//! Plans are cached per (pair, host access of each side, size class), so that a small
//! copy pays a lookup, not a search; each thread also keeps its last few plans, so
//! that a copy repeated on one thread takes no lock and updates no reference count
//! (`TransferMatrix::with_plan`).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use rustc_hash::FxHashMap;

use super::cost::Calibration;
use super::paths;
use crate::core::device::{Device, HostAccess};
use crate::core::error::Result;
use crate::core::location::{Location, Technology};
use crate::core::route::{CopyPath, Endpoint, Route, RouteKind};

/// A route and the path that takes it.
pub type Plan = (Route, Arc<dyn CopyPath>);

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct PlanKey {
    src: Location,
    dst: Location,
    src_host: HostAccess,
    dst_host: HostAccess,
    class: usize,
}

struct Cached {
    // The devices the plan was made for (held, so that the key's devices are these).
    src: Arc<dyn Device>,
    dst: Arc<dyn Device>,
    plan: Plan,
}

/// What the planner knows, behind one lock (a copy takes one read lock to find its
/// plan): the costs in use, where they came from, and the plans made with them.
struct Planner {
    costs: Option<Arc<Calibration>>,
    status: String,
    /// FxHash: a copy looks its plan up every time, and SipHash's resistance to chosen
    /// keys buys nothing for keys made of locations and size classes.
    plans: FxHashMap<PlanKey, Cached>,
}

/// The registry of copy paths, filled by the backends at discovery, and the planner
/// that chooses among them.
pub struct TransferMatrix {
    registered: BTreeMap<(Technology, Technology), Vec<Arc<dyn CopyPath>>>,
    generic: Vec<Arc<dyn CopyPath>>,
    planner: RwLock<Planner>,
}

impl Default for TransferMatrix {
    fn default() -> Self {
        GENERATION.fetch_add(1, Ordering::Relaxed);
        TransferMatrix {
            registered: BTreeMap::new(),
            generic: paths::generic(),
            planner: RwLock::new(Planner {
                costs: None,
                status: "not calibrated: routes by fixed order (run `locus calibrate`)".into(),
                plans: FxHashMap::default(),
            }),
        }
    }
}

/// Moved on whenever a matrix is made or changes what it would choose: the plans a
/// thread kept before are not used after.
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// What a thread's recent plan was made for: the matrix, both devices (by address), how
/// the host reaches each side, and the copy's size.
#[derive(Clone, Copy, PartialEq, Eq)]
struct RecentKey {
    matrix: usize,
    src: usize,
    dst: usize,
    src_host: HostAccess,
    dst_host: HostAccess,
    bytes: usize,
}

impl RecentKey {
    fn of(matrix: &TransferMatrix, src: Endpoint<'_>, dst: Endpoint<'_>, bytes: usize) -> Self {
        RecentKey {
            matrix: matrix as *const TransferMatrix as usize,
            src: Arc::as_ptr(src.device) as *const () as usize,
            dst: Arc::as_ptr(dst.device) as *const () as usize,
            src_host: src.host,
            dst_host: dst.host,
            bytes,
        }
    }
}

/// A thread's last few plans, made in `generation`.
struct Recent {
    generation: u64,
    plans: Vec<(RecentKey, Plan)>,
}

#[cfg(test)]
thread_local! {
    /// Plans this thread asked the matrix for (a move is planned once).
    pub(crate) static PLANS_MADE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Keeps `plan` first in this thread's list of recent plans (made in `generation`); not
/// kept while the list is being read (a copy inside a copy: a staged path's legs).
fn remember(key: RecentKey, generation: u64, plan: Plan) {
    let _ = RECENT_PLANS.try_with(|recent| {
        if let Ok(mut recent) = recent.try_borrow_mut() {
            if recent.generation != generation {
                recent.generation = generation;
                recent.plans.clear();
            }
            if recent.plans.len() == RECENT {
                recent.plans.pop();
            }
            recent.plans.insert(0, (key, plan));
        }
    });
}

/// How many plans a thread keeps.
const RECENT: usize = 8;

thread_local! {
    static RECENT_PLANS: RefCell<Recent> = const {
        RefCell::new(Recent { generation: u64::MAX, plans: Vec::new() })
    };
}

/// How much faster than the fixed order's choice a measured candidate must be to
/// replace it.
pub const MARGIN: f64 = 0.05;

/// A bandwidth, with two decimals below 10 GB/s.
fn gbps_text(gbps: f64) -> String {
    if gbps >= 10.0 {
        format!("{gbps:.1} GB/s")
    } else {
        format!("{gbps:.2} GB/s")
    }
}

impl TransferMatrix {
    /// Adds a path for copies from `src` to `dst` technology; registered paths are tried
    /// before the generic ones, in registration order.
    pub fn register(&mut self, src: Technology, dst: Technology, path: Arc<dyn CopyPath>) {
        GENERATION.fetch_add(1, Ordering::Relaxed);
        self.registered.entry((src, dst)).or_default().push(path);
    }

    /// Uses `calibration` to choose routes from now on (`None`: the fixed order again);
    /// `status` says where it came from, for `locus info`.
    pub fn install(&self, calibration: Option<Calibration>, status: String) {
        *self.planner.write().unwrap_or_else(|e| e.into_inner()) = Planner {
            costs: calibration.map(Arc::new),
            status,
            plans: FxHashMap::default(),
        };
        GENERATION.fetch_add(1, Ordering::Relaxed);
    }

    /// The calibration in use, if any.
    pub fn calibration(&self) -> Option<Arc<Calibration>> {
        let planner = self.planner.read().unwrap_or_else(|e| e.into_inner());
        planner.costs.clone()
    }

    /// Where the planner's costs come from, in one line.
    pub fn status(&self) -> String {
        let planner = self.planner.read().unwrap_or_else(|e| e.into_inner());
        planner.status.clone()
    }

    /// Every route that applies between the two, with its path: the registered paths
    /// first (unless both are one device), then the generic ones, in order.
    pub fn candidates(&self, src: Endpoint<'_>, dst: Endpoint<'_>) -> Vec<Plan> {
        let (s, d) = (
            src.device.location().technology(),
            dst.device.location().technology(),
        );
        let registered = if Arc::ptr_eq(src.device, dst.device) {
            None
        } else {
            self.registered.get(&(s, d))
        };
        registered
            .into_iter()
            .flatten()
            .chain(self.generic.iter())
            .filter_map(|p| p.plan(src, dst).map(|r| (r, Arc::clone(p))))
            .collect()
    }

    /// The fixed-order choice among candidates: a registered path when one applies,
    /// else the cheapest route kind, then the fewest runtime mappings
    /// ([`CopyPath::maps`]), then the first.
    fn by_order(&self, src: Endpoint<'_>, dst: Endpoint<'_>) -> Plan {
        let (s, d) = (
            src.device.location().technology(),
            dst.device.location().technology(),
        );
        let best = |paths: &mut dyn Iterator<Item = &Arc<dyn CopyPath>>| {
            paths
                .filter_map(|p| p.plan(src, dst).map(|r| (r, Arc::clone(p))))
                .min_by_key(|(r, p)| (r.kind, p.maps(src, dst)))
        };
        let registered = if Arc::ptr_eq(src.device, dst.device) {
            None
        } else {
            best(&mut self.registered.get(&(s, d)).into_iter().flatten())
        };
        registered
            .or_else(|| best(&mut self.generic.iter()))
            .expect("the staged paths apply to every pair")
    }

    /// The measured choice among candidates at the size class of `bytes`, with the
    /// numbers in its reason; `None` without a calibration of this pair. The fixed
    /// order's choice stays unless another candidate was measured more than
    /// [`MARGIN`] faster (so that noise between equals does not flip routes).
    fn by_cost(
        &self,
        costs: &Calibration,
        src: Endpoint<'_>,
        dst: Endpoint<'_>,
        class: usize,
    ) -> Option<Plan> {
        let candidates = self.candidates(src, dst);
        let (s, d) = (src.device.location(), dst.device.location());
        let applies = |name: &str| candidates.iter().any(|(_, p)| p.name() == name);
        let default = self.by_order(src, dst).1.name();
        let choice = costs.choose(s, d, class, &applies, Some((default, MARGIN)))?;
        let (mut route, path) = candidates
            .into_iter()
            .find(|(_, p)| p.name() == choice.path)?;
        let size = super::cost::format_size(choice.bytes);
        let reason = match &choice.runner_up {
            Some((other, gbps)) if choice.kept_within_margin => format!(
                "{}; measured at {size}: {} vs {} for {other} (within {:.0}%: the fixed order's choice stays)",
                route.reason,
                gbps_text(choice.gbps),
                gbps_text(*gbps),
                MARGIN * 100.0
            ),
            Some((other, gbps)) => format!(
                "{}; measured at {size}: {} vs {} for the next best ({other})",
                route.reason,
                gbps_text(choice.gbps),
                gbps_text(*gbps)
            ),
            None => format!(
                "{}; measured at {size}: {} (the only candidate)",
                route.reason,
                gbps_text(choice.gbps)
            ),
        };
        route.reason = reason.into();
        Some((route, path))
    }

    /// The route for a copy of `bytes` between the two endpoints and the path that
    /// takes it (see the module's text for how it is chosen).
    pub fn plan(&self, src: Endpoint<'_>, dst: Endpoint<'_>, bytes: usize) -> Plan {
        #[cfg(test)]
        PLANS_MADE.with(|n| n.set(n.get() + 1));
        self.plan_shared(src, dst, bytes)
    }

    /// [`TransferMatrix::plan`] for the copy paths: a plan this thread used lately is
    /// taken from its own list (no lock), else planned and kept there.
    pub(crate) fn plan_recent(&self, src: Endpoint<'_>, dst: Endpoint<'_>, bytes: usize) -> Plan {
        #[cfg(test)]
        PLANS_MADE.with(|n| n.set(n.get() + 1));
        let key = RecentKey::of(self, src, dst, bytes);
        let generation = GENERATION.load(Ordering::Relaxed);
        let recent = RECENT_PLANS.try_with(|recent| {
            let recent = recent.try_borrow().ok()?;
            (recent.generation == generation)
                .then(|| {
                    recent
                        .plans
                        .iter()
                        .find(|(k, _)| *k == key)
                        .map(|(_, p)| p.clone())
                })
                .flatten()
        });
        if let Ok(Some(plan)) = recent {
            return plan;
        }
        let plan = self.plan_shared(src, dst, bytes);
        remember(key, generation, plan.clone());
        plan
    }

    /// The plan from the matrix's shared table (made and kept there on a miss).
    fn plan_shared(&self, src: Endpoint<'_>, dst: Endpoint<'_>, bytes: usize) -> Plan {
        let key = |class| PlanKey {
            src: src.device.location(),
            dst: dst.device.location(),
            src_host: src.host,
            dst_host: dst.host,
            class,
        };
        let (costs, class) = {
            let planner = self.planner.read().unwrap_or_else(|e| e.into_inner());
            let class = planner.costs.as_ref().map_or(0, |c| c.class_of(bytes));
            if let Some(c) = planner.plans.get(&key(class)) {
                if Arc::ptr_eq(&c.src, src.device) && Arc::ptr_eq(&c.dst, dst.device) {
                    return c.plan.clone();
                }
            }
            (planner.costs.clone(), class)
        };
        let mut plan = costs
            .as_deref()
            .and_then(|c| self.by_cost(c, src, dst, class))
            .unwrap_or_else(|| self.by_order(src, dst));
        let mut planner = self.planner.write().unwrap_or_else(|e| e.into_inner());
        // Kept only if made with the costs still in use (not ones replaced meanwhile).
        let current = match (&planner.costs, &costs) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        if current {
            plan.0.reason = plan.0.reason.kept();
            planner.plans.insert(
                key(class),
                Cached {
                    src: Arc::clone(src.device),
                    dst: Arc::clone(dst.device),
                    plan: plan.clone(),
                },
            );
        }
        plan
    }

    /// Calls `f` with the route's kind for a copy of `bytes` between the two endpoints
    /// and the path that takes it, as [`TransferMatrix::plan`] chooses them; returns the
    /// route once `f` succeeded. A plan this thread used lately is taken from its own
    /// list: no lock, no reference count (what a 4 KiB copy would otherwise pay several
    /// times over).
    pub(crate) fn with_plan(
        &self,
        src: Endpoint<'_>,
        dst: Endpoint<'_>,
        bytes: usize,
        mut f: impl FnMut(RouteKind, &dyn CopyPath) -> Result<()>,
    ) -> Result<Route> {
        let key = RecentKey::of(self, src, dst, bytes);
        let generation = GENERATION.load(Ordering::Relaxed);
        // A copy inside `f` (a staged path's legs) looks up again: the list is only
        // read meanwhile, and a plan it misses is not kept.
        let recent = RECENT_PLANS.try_with(|recent| {
            let recent = recent.try_borrow().ok()?;
            if recent.generation != generation {
                return None;
            }
            let (_, (route, path)) = recent.plans.iter().find(|(k, _)| *k == key)?;
            Some(f(route.kind, &**path).map(|()| route.clone()))
        });
        if let Ok(Some(done)) = recent {
            return done;
        }
        let plan = self.plan_shared(src, dst, bytes);
        f(plan.0.kind, &*plan.1)?;
        let route = plan.0.clone();
        remember(key, generation, plan);
        Ok(route)
    }

    /// A path that takes a route of `kind` between the two, if any does: the planner's
    /// own choice when it is of that kind, else the first candidate of that kind.
    pub fn plan_kind(
        &self,
        kind: RouteKind,
        src: Endpoint<'_>,
        dst: Endpoint<'_>,
        bytes: usize,
    ) -> Option<Plan> {
        let planned = self.plan(src, dst, bytes);
        if planned.0.kind == kind {
            return Some(planned);
        }
        self.candidates(src, dst)
            .into_iter()
            .find(|(r, _)| r.kind == kind)
    }

    /// The candidate path named `name` between the two, if it applies.
    pub fn plan_path(&self, name: &str, src: Endpoint<'_>, dst: Endpoint<'_>) -> Option<Plan> {
        self.candidates(src, dst)
            .into_iter()
            .find(|(_, p)| p.name() == name)
    }

    /// The registered (non-generic) paths, for `locus info`.
    pub fn registered(&self) -> impl Iterator<Item = (Technology, Technology, &'static str)> + '_ {
        self.registered
            .iter()
            .flat_map(|((s, d), paths)| paths.iter().map(move |p| (*s, *d, p.name())))
    }
}
