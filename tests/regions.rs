//! Copies of regions (`Memory::copy_region_to`), as a user of a grid makes them: a column
//! face, a block at the memory's far corner, a side of a 3-D box and an odd-width tile
//! between every pair of required locations, on every route that applies, checked byte
//! for byte against the same copy made element by element on the host; bad regions
//! refused before anything is written.

mod common;

use std::collections::BTreeSet;

use locus::{Location, Memory, Region, RegionRouteKind, RegionVia};

fn memory(at: Location, bytes: &[u8]) -> Memory {
    let m = Memory::new(at, bytes.len()).unwrap_or_else(|e| panic!("{at}: {e}"));
    m.write(0, bytes).unwrap();
    m
}

fn contents(m: &Memory) -> Vec<u8> {
    let mut out = vec![0u8; m.len()];
    m.read(0, &mut out).unwrap();
    out
}

/// The regions a grid program moves: (name, source grid bytes, source region,
/// destination grid bytes, destination region).
fn cases() -> Vec<(&'static str, usize, Region, usize, Region)> {
    let (rows, cols) = (40, 24);
    let grid = rows * cols * 8;
    let column = Region::block_2d::<f64>((rows, cols), (0, 5), (rows, 1));
    // A 7 x 5 block ending at the last byte of the source grid, to a block of a grid
    // with a different pitch.
    let corner = Region::block_2d::<f64>((rows, cols), (rows - 7, cols - 5), (7, 5));
    let elsewhere = Region::block_2d::<f64>((16, 9), (2, 3), (7, 5));
    let boxed = (6, 10, 12);
    let side = Region::block_3d::<f32>(boxed, (0, 0, 11), (6, 10, 1));
    let box_bytes = boxed.0 * boxed.1 * boxed.2 * 4;
    // Widths and pitches that are not multiples of 4 bytes.
    let odd = Region::rows((3, 1), 7, 5, 13);
    let odd_dst = Region::rows((1, 0), 7, 5, 9);
    vec![
        ("column face", grid, column, rows * 8, column.packed()),
        ("corner block", grid, corner, 16 * 9 * 8, elsewhere),
        ("side of a box", box_bytes, side, 6 * 10 * 4, side.packed()),
        ("odd tile", 13 * 7, odd, 9 * 6, odd_dst),
    ]
}

/// Copies every case from `from` to `to` on `via`, checks the destination byte for
/// byte, and returns the route kinds taken; routes that do not apply are skipped.
fn copy_cases(from: Location, to: Location, via: RegionVia, taken: &mut BTreeSet<&'static str>) {
    for (name, src_len, sr, dst_len, dr) in cases() {
        let src_bytes = common::pattern_u8(src_len, 7);
        let dst_bytes = vec![0xeeu8; dst_len];
        let (src, dst) = (memory(from, &src_bytes), memory(to, &dst_bytes));
        let route = match src.copy_region_to_via(&sr, &dst, &dr, via) {
            Ok(route) => route,
            Err(e) if via != RegionVia::Planner && e.to_string().contains("no ") => continue,
            Err(e) => panic!("{from} -> {to}: {name} via {via:?}: {e}"),
        };
        assert_eq!(
            contents(&dst),
            common::region_copied(&src_bytes, &sr, &dst_bytes, &dr),
            "{from} -> {to}: {name} on {route}"
        );
        taken.insert(route.kind.name());
    }
}

#[test]
fn regions_arrive_byte_for_byte_at_every_pair_on_every_route() {
    let locations = common::required_locations();
    let mut taken = BTreeSet::new();
    for &from in &locations {
        for &to in &locations {
            copy_cases(from, to, RegionVia::Planner, &mut taken);
            for kind in RegionRouteKind::ALL {
                copy_cases(from, to, RegionVia::Kind(kind), &mut taken);
            }
        }
    }
    for kind in ["rect", "packed", "runs"] {
        assert!(
            taken.contains(kind),
            "no pair took the {kind} route: {taken:?}"
        );
    }
}

#[test]
fn the_planner_takes_the_runtimes_rectangle_copy_within_one_device() {
    for at in common::required_locations() {
        let (_, len, sr, _, _) = cases()[0];
        let (src, dst) = (memory(at, &vec![1u8; len]), memory(at, &vec![0u8; len]));
        let dr = Region::block_2d::<f64>((40, 24), (0, 9), (40, 1));
        let route = src.copy_region_to(&sr, &dst, &dr).unwrap();
        println!("{route}");
        let rect_here = dst.host_pointer().is_some() || at.technology().name() == "opencl";
        if rect_here {
            assert_eq!(route.kind, RegionRouteKind::Rect, "{route}");
        }
    }
}

#[test]
fn a_region_within_one_memory_moves_when_it_does_not_overlap_itself() {
    for at in common::required_locations() {
        let bytes = common::pattern_u8(40 * 24 * 8, 3);
        let grid = memory(at, &bytes);
        // The halo update of a periodic grid: the last interior column to the first.
        let last = Region::block_2d::<f64>((40, 24), (0, 22), (40, 1));
        let first = Region::block_2d::<f64>((40, 24), (0, 0), (40, 1));
        let route = grid.copy_region_to(&last, &grid, &first).unwrap();
        assert_eq!(
            contents(&grid),
            common::region_copied(&bytes, &last, &bytes, &first),
            "{at}: {route}"
        );
    }
}

#[test]
fn bad_regions_are_refused_before_anything_is_written() {
    for at in common::required_locations() {
        let src = memory(at, &common::pattern_u8(4096, 1));
        let dst = memory(at, &vec![0u8; 4096]);
        let refused = |sr: Region, dr: Region, what: &str, words: &str| {
            let e = src
                .copy_region_to(&sr, &dst, &dr)
                .expect_err(what)
                .to_string();
            assert!(
                e.contains(words) && e.contains("nothing was copied"),
                "{at}: {what}: {e}"
            );
            assert!(
                e.contains(&at.to_string()),
                "{at}: {what}: no location in {e}"
            );
            assert!(
                contents(&dst).iter().all(|&b| b == 0),
                "{at}: {what}: written"
            );
        };
        let fine = Region::rows((0, 0), 16, 8, 64);
        refused(
            fine,
            Region::rows((0, 60), 16, 8, 64),
            "past the end",
            "past the memory's 4096 bytes",
        );
        refused(
            Region::rows((0, 0), 64, 8, 32),
            fine,
            "pitch below the width",
            "row pitch of 32",
        );
        refused(
            Region::rows((0, 0), 0, 8, 64),
            Region::rows((0, 0), 0, 8, 64),
            "zero width",
            "zero width",
        );
        refused(
            fine,
            Region::rows((0, 0), 16, 7, 64),
            "different extents",
            "rows (y) is 8",
        );
        let huge = Region::rows((0, 0), 16, 8, usize::MAX / 4);
        refused(huge, fine, "overflowing pitch", "overflows");
        let planes = Region {
            origin: [0, 0, 0],
            extent: [16, 4, 2],
            row_pitch: 64,
            slice_pitch: 100,
        };
        refused(planes, planes, "planes overlapping", "slice pitch of 100");
        let e = src
            .copy_region_to(&fine, &src, &Region::rows((8, 2), 16, 8, 64))
            .expect_err("overlap")
            .to_string();
        assert!(e.contains("share bytes of one memory"), "{at}: {e}");
    }
}

#[test]
fn asynchronous_region_copies_run_in_the_order_their_events_say() {
    use std::sync::Arc;

    use locus::Event;
    let locations = common::required_locations();
    for &from in &locations {
        for &to in &locations {
            let (_, len, sr, _, _) = cases()[0];
            let bytes = common::pattern_u8(len, 5);
            let grid = Arc::new(memory(from, &bytes));
            let face = Arc::new(memory(to, &vec![0u8; sr.bytes().unwrap()]));
            let back = Arc::new(memory(from, &vec![0u8; len]));
            // The face goes out only once the user says so, and comes back into a second
            // grid after it: the caller waits on the last event alone.
            let (go, trigger) = Event::user();
            let out = grid
                .copy_region_to_async(&sr, &face, &sr.packed(), &[go])
                .unwrap();
            let home = face
                .copy_region_to_async(&sr.packed(), &back, &sr, &[out])
                .unwrap();
            assert!(
                !home.is_complete(),
                "{from} -> {to}: ran before the trigger"
            );
            trigger.complete();
            home.wait().unwrap();
            assert_eq!(
                contents(&back),
                common::region_copied(&bytes, &sr, &vec![0u8; len], &sr),
                "{from} -> {to}"
            );
            // A bad region is refused at once, starting nothing.
            let past = Region::rows((0, 1), 8, len / 8, 8);
            assert!(grid
                .copy_region_to_async(&past, &face, &past.packed(), &[])
                .is_err());
        }
    }
}

#[test]
fn a_buffer_face_moves_from_wherever_it_is_current() {
    use locus::Buffer;
    let locations = common::required_locations();
    let (rows, cols) = (24, 16);
    let data: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
    let face = Region::block_2d::<f32>((rows, cols), (0, cols - 2), (rows, 1));
    let halo = Region::block_2d::<f32>((rows, cols), (0, 0), (rows, 1));
    for &from in &locations {
        for &to in &locations {
            // The grid made on the host, then current only at `from`.
            let mut grid = Buffer::from_vec(data.clone());
            grid.move_to(from).unwrap();
            let mut other = Buffer::<f32>::zeroed(to, rows * cols).unwrap();
            let route = other.copy_region_from(&halo, &grid, &face).unwrap();
            let got = other.to_vec().unwrap();
            for r in 0..rows {
                assert_eq!(
                    got[r * cols],
                    data[r * cols + cols - 2],
                    "{from} -> {to} row {r}: {route}"
                );
                assert_eq!(
                    got[r * cols + 1],
                    0.0,
                    "{from} -> {to}: wrote outside the halo"
                );
            }
            // Whole elements only, and inside the buffer's length.
            let split = Region::rows((2, 0), 4, 3, 64);
            let e = other.copy_region_from(&split, &grid, &split).unwrap_err();
            assert!(e.to_string().contains("splits elements"), "{e}");
            let past = Region::block_2d::<f32>((rows + 1, cols), (rows, 0), (1, cols));
            assert!(other
                .copy_region_from(&past, &grid, &halo.packed())
                .is_err());
        }
    }
}

#[test]
fn an_openhmpp_section_is_the_rectangle_of_its_runs() {
    use locus::core::region::RegionRuns;
    use locus::{Section, Triplet};
    let merged = |runs: Vec<(usize, usize)>| {
        let mut out: Vec<(usize, usize)> = Vec::new();
        for (s, n) in runs {
            match out.last_mut() {
                Some((a, b)) if *a + *b == s => *b += n,
                _ => out.push((s, n)),
            }
        }
        out
    };
    let sections = [
        Section::new(&[40, 24], &[Triplet::range(3, 30), Triplet::range(2, 5)]),
        Section::new(&[40, 24], &[Triplet::all(40), Triplet::new(1, 1, 1)]),
        Section::new(&[40, 24], &[Triplet::new(0, 38, 2), Triplet::new(1, 21, 4)]),
        Section::new(
            &[6, 10, 12],
            &[Triplet::all(6), Triplet::new(1, 9, 3), Triplet::range(4, 7)],
        ),
        Section::d1(100, 5, 95, 7),
    ];
    for section in &sections {
        let len = section.shape().iter().product::<usize>();
        let region = section.region::<f64>().expect("a rectangle");
        region
            .check(Location::Host, "test", "section", len * 8)
            .unwrap();
        let rects: Vec<(usize, usize)> = RegionRuns::new(&region, &region)
            .iter()
            .map(|(s, _, n)| (s, n))
            .collect();
        let runs = section
            .runs(len)
            .unwrap()
            .into_iter()
            .map(|(s, n)| (s * 8, n * 8))
            .collect();
        assert_eq!(merged(rects), merged(runs), "{section}");
    }
    let four = Section::new(&[4, 4, 4, 4], &[Triplet::all(4); 4]);
    assert!(
        four.region::<f32>().is_none(),
        "four dimensions are not a rectangle"
    );
}

// Between host memory and WebGPU memory the host does not map (a discrete GPU's; CI runs
// this with LOCUS_WEBGPU_MAPPABLE=0), no rectangle way applies and WebGPU batches runs in
// one submission: the planner times one copy per run and packing, three times each, then keeps
// the faster, and says so beforehand (`plan_region`).
#[test]
fn between_host_and_unmapped_webgpu_runs_and_packing_are_timed_then_the_faster_kept() {
    let Some(gpu) = common::location("webgpu:0") else {
        return;
    };
    let grid = (64usize, 64usize);
    let region = Region::block_2d::<f32>(grid, (0, 10), (64, 40));
    let src = memory(Location::Host, &common::pattern_u8(64 * 64 * 4, 3));
    let dst = Memory::new(gpu, 64 * 64 * 4).unwrap();
    if dst.host_access() != locus::HostAccess::None {
        eprintln!("SKIPPED: webgpu:0 is mapped in place here (its rect route applies); set LOCUS_WEBGPU_MAPPABLE=0");
        return;
    }
    let mut taken = Vec::new();
    for _ in 0..8 {
        let planned = locus::transfer::plan_region(&src, &region, &dst, &region);
        let route = src.copy_region_to(&region, &dst, &region).unwrap();
        assert_eq!(route.kind, planned, "{route}");
        taken.push(route.kind);
        let (want, got) = (contents(&src), contents(&dst));
        for y in 0..64 {
            let row = y * 256 + 40..y * 256 + 200;
            assert_eq!(got[row.clone()], want[row], "row {y} by {}", route.kind);
        }
    }
    use RegionRouteKind::{Packed, Runs};
    assert_eq!(
        &taken[..6],
        &[Runs, Packed, Runs, Packed, Runs, Packed],
        "{taken:?}"
    );
    assert_eq!(taken[6], taken[7], "the faster is kept: {taken:?}");
}
