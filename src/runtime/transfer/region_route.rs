//! What a region copy ([`Memory::copy_region_to`](crate::Memory::copy_region_to))
//! reports and takes: its route's kind, the route in words, the route a caller asks for.

use std::fmt;

use crate::core::location::Location;

/// How a region moves ([`RegionRoute::kind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RegionRouteKind {
    /// Both sides contiguous: one ordinary copy.
    Contiguous,
    /// The runtime's own rectangle copy (or a memcpy per row between host addresses).
    Rect,
    /// Gathered into a contiguous block at the source, one copy, scattered at the
    /// destination.
    Packed,
    /// One copy per contiguous run.
    Runs,
}

impl RegionRouteKind {
    /// Every kind.
    pub const ALL: [RegionRouteKind; 4] = [
        RegionRouteKind::Contiguous,
        RegionRouteKind::Rect,
        RegionRouteKind::Packed,
        RegionRouteKind::Runs,
    ];

    /// Lower-case name (`contiguous`, `rect`, `packed`, `runs`).
    pub const fn name(self) -> &'static str {
        match self {
            RegionRouteKind::Contiguous => "contiguous",
            RegionRouteKind::Rect => "rect",
            RegionRouteKind::Packed => "packed",
            RegionRouteKind::Runs => "runs",
        }
    }
}

impl fmt::Display for RegionRouteKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The route a region copy took, and how, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionRoute {
    /// Where the data was.
    pub src: Location,
    /// Where it went.
    pub dst: Location,
    /// The route.
    pub kind: RegionRouteKind,
    /// How many contiguous runs the region is made of (1: contiguous).
    pub runs: usize,
    /// The calls it took, in one line.
    pub how: String,
}

impl fmt::Display for RegionRoute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} -> {}: {} ({} runs): {}",
            self.src, self.dst, self.kind, self.runs, self.how
        )
    }
}

/// Which route a region copy takes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RegionVia {
    /// The planner's choice (what [`Memory::copy_region_to`](crate::Memory::copy_region_to) takes).
    #[default]
    Planner,
    /// A route of this kind (a benchmark's or a test's); an error where it does not apply.
    Kind(RegionRouteKind),
}
