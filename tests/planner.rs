//! The planner that measures the machine: a calibration run on the real locations here,
//! installed, chooses per pair and size class the candidate measured fastest (or keeps
//! the fixed order's choice within the margin), says so with the numbers, and every
//! copy on the calibrated routes is exact; the calibration file round-trips through the
//! cache directory keyed by the machine.

mod common;

use common::pattern_u8;
use locus::transfer::{cost, matrix::MARGIN, Endpoint};
use locus::{Location, Memory};
use locus_cli::bench::calibrate;

fn quick_calibration() -> locus::transfer::Calibration {
    let registry = locus::registry();
    let config = calibrate::Config {
        locations: registry.locations(),
        sizes: vec![4 << 10, 3 << 20],
        budget: 0.002,
        min_runs: 2,
    };
    calibrate::run(registry, &config, &mut |_, _, _| {}).unwrap()
}

#[test]
fn calibrated_routes_are_the_measured_fastest_and_copy_exactly() {
    // The planner is one per process: under `cargo test` (threads) another test's
    // install would change the routes under this one.
    let _serial = common::serial();
    let registry = locus::registry();
    let c = quick_calibration();
    let n = registry.locations().len();
    assert_eq!(c.pairs.len(), n * n, "every ordered pair measured");
    assert!(c.seconds > 0.0 && c.sizes == vec![4 << 10, 3 << 20]);
    registry
        .matrix()
        .install(Some(c.clone()), "test calibration".into());
    assert_eq!(registry.matrix().status(), "test calibration");
    for src_loc in registry.locations() {
        for dst_loc in registry.locations() {
            let src = Memory::new(src_loc, 3 << 20).unwrap();
            let dst = Memory::new(dst_loc, 3 << 20).unwrap();
            let pair = c.pair(src_loc, dst_loc).unwrap();
            assert!(
                pair.paths
                    .iter()
                    .all(|p| p.seconds.iter().all(Option::is_some)),
                "{src_loc} -> {dst_loc}: every candidate measured at every size"
            );
            for (class, &bytes) in c.sizes.iter().enumerate() {
                let (route, path) =
                    registry
                        .matrix()
                        .plan(Endpoint::of(&src), Endpoint::of(&dst), bytes as usize);
                let chosen = c.seconds_of(src_loc, dst_loc, class, path.name()).unwrap();
                let fastest = pair
                    .paths
                    .iter()
                    .filter_map(|p| p.seconds[class])
                    .fold(f64::INFINITY, f64::min);
                assert!(
                    chosen <= fastest * (1.0 + MARGIN) + 1e-12,
                    "{route}: {chosen} s chosen, {fastest} s measured for the fastest"
                );
                assert!(route.reason.contains("measured at"), "{route}");
                // The copy on the chosen route is exact.
                let data = pattern_u8(bytes as usize, class as u8 + 3);
                src.write(0, &data).unwrap();
                let took = src.copy_to(0, &dst, 0, bytes as usize).unwrap();
                assert_eq!(took, route, "the copy takes the planned route");
                let mut got = vec![0u8; bytes as usize];
                dst.read(0, &mut got).unwrap();
                assert!(got == data, "{route}: data");
            }
        }
    }
    // Uninstalled: the fixed order again, without numbers.
    registry.matrix().install(None, "off".into());
    let route = locus::transfer::copy_route(registry, Location::Host, Location::Host).unwrap();
    assert!(!route.reason.contains("measured"), "{route}");
}

/// A thread keeps its last plans (no lock on a small copy's path); installing or
/// removing a calibration must still change the route of the very next copy on it.
#[test]
fn a_threads_recent_plans_follow_the_calibration_installed() {
    let _serial = common::serial();
    let registry = locus::registry();
    let (src, dst) = (
        Memory::new(Location::Host, 4 << 10).unwrap(),
        Memory::new(Location::Host, 4 << 10).unwrap(),
    );
    let copy = || src.copy_to(0, &dst, 0, 4 << 10).unwrap();
    registry.matrix().install(None, "off".into());
    let before = copy();
    assert_eq!(copy(), before, "the kept plan");
    assert!(!before.reason.contains("measured"), "{before}");
    registry
        .matrix()
        .install(Some(quick_calibration()), "test calibration".into());
    let calibrated = copy();
    assert!(calibrated.reason.contains("measured at"), "{calibrated}");
    registry.matrix().install(None, "off".into());
    let after = copy();
    assert!(!after.reason.contains("measured"), "{after}");
}

#[test]
fn the_calibration_file_is_kept_per_machine_and_loaded() {
    let _serial = common::serial();
    let dir = std::env::temp_dir().join(format!("locus-planner-{}", std::process::id()));
    std::env::set_var("LOCUS_CACHE_DIR", &dir);
    let registry = locus::registry();
    let facts = cost::machine_facts(registry.devices());
    let (none, status) = cost::load(&facts);
    assert!(
        none.is_none() && status.contains("locus calibrate"),
        "{status}"
    );
    let c = quick_calibration();
    assert_eq!(c.machine_key, cost::machine_key(&facts));
    let path = c.save().unwrap();
    assert!(path.starts_with(&dir), "{}", path.display());
    let (loaded, status) = cost::load(&facts);
    let loaded = loaded.expect("the saved calibration is found by the machine's key");
    assert_eq!(loaded.pairs.len(), c.pairs.len());
    assert!(status.starts_with("calibrated"), "{status}");
    // LOCUS_CALIBRATION=off ignores it; a corrupt file is reported, not used.
    std::env::set_var("LOCUS_CALIBRATION", "off");
    assert!(cost::load(&facts).0.is_none());
    std::env::remove_var("LOCUS_CALIBRATION");
    std::fs::write(&path, "not json").unwrap();
    let (broken, status) = cost::load(&facts);
    assert!(
        broken.is_none() && status.contains("locus calibrate"),
        "{status}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Before any calibration, of two routes of one kind the planner takes the one that
/// maps fewer sides through a runtime's map call: out of a mapped buffer (an OpenCL
/// buffer) into memory with a plain host address (OpenMP's initial device, SYCL USM of a
/// CPU device), the buffer's runtime reads into that address (one call), rather than
/// the buffer being mapped and unmapped around a memcpy by the other side (on PoCL twice
/// the time at 4 KiB). The code before took the latter: the first in the paths' order.
#[test]
fn the_fixed_order_maps_fewer_sides() {
    let _serial = common::serial();
    let registry = locus::registry();
    registry.matrix().install(None, "off".into());
    let locations = common::required_locations();
    let mut checked = 0;
    for &s in &locations {
        for &d in &locations {
            let (src, dst) = (Memory::new(s, 4096).unwrap(), Memory::new(d, 4096).unwrap());
            let (a, b) = (Endpoint::of(&src), Endpoint::of(&dst));
            use locus::HostAccess::{Mapped, Pointer};
            let (route, _) = registry.matrix().plan(a, b, 4096);
            if route.kind != locus::RouteKind::Mapped {
                continue;
            }
            match (a.host, b.host) {
                (Mapped, Pointer) => {
                    assert!(
                        route
                            .reason
                            .contains(&format!("{s} reads into its mapping")),
                        "{route}"
                    );
                    checked += 1;
                }
                (Pointer, Mapped) => {
                    assert!(
                        route
                            .reason
                            .contains(&format!("{d} writes from its mapping")),
                        "{route}"
                    );
                    checked += 1;
                }
                _ => {}
            }
        }
    }
    eprintln!("{checked} pairs with one side mapped and one a plain host address");
}
