//! Regions between ranks ([`Comm::send_region`] and its kin), each test a job of two
//! ranks under `mpirun`: a column face of a grid at every location on rank 0 into the
//! last column of a grid at every location on rank 1 (the rest of that grid untouched),
//! a plane of a 3-D box, a region message taken whole and a whole message taken into a
//! region, and refusals (a length that differs, a region past the buffer) that write
//! nothing. Needs the `mpi` feature and Open MPI's `mpirun` (scripts/test.sh installs
//! both).
#![cfg(feature = "mpi")]

mod common;

use locus::{Buffer, Region};

const ROWS: usize = 48;
const COLS: usize = 40;

fn grid(salt: usize) -> Vec<f32> {
    (0..ROWS * COLS).map(|i| (i * 3 + salt) as f32).collect()
}

fn column(col: usize) -> Region {
    Region::block_2d::<f32>((ROWS, COLS), (0, col), (ROWS, 1))
}

/// Rank 1's grid after column `col` of `sent` arrived in its last column, over -1.
fn expected_after(sent: &[f32], col: usize) -> Vec<f32> {
    let mut want = vec![-1.0; ROWS * COLS];
    for r in 0..ROWS {
        want[r * COLS + COLS - 1] = sent[r * COLS + col];
    }
    want
}

// Every ordered pair: rank 0's column 7 into rank 1's last column (the last byte of its
// memory), blocking on even pairs and non-blocking on odd ones. The non-blocking sender
// overwrites its grid as soon as the call returns (the region was packed), and the
// receiver reads its grid without waiting for the event (reads wait for the region).
mpi_test!(a_column_face_between_every_pair_of_locations, 2, |world| {
    let all = common::required_locations();
    for (i, &a) in all.iter().enumerate() {
        for (j, &b) in all.iter().enumerate() {
            let (salt, blocking) = (i * 31 + j, (i + j) % 2 == 0);
            let sent = grid(salt);
            if world.rank() == 0 {
                let mut g = Buffer::from_slice(a, &sent).unwrap();
                if blocking {
                    world.send_region(&g, &column(7), 1, 11).unwrap();
                } else {
                    let sending = world.isend_region(&g, &column(7), 1, 11).unwrap();
                    g.set(0, &[9.0; ROWS * COLS]).unwrap();
                    sending.wait().unwrap_or_else(|e| panic!("{a} -> {b}: {e}"));
                }
            } else {
                let mut g = Buffer::filled(b, ROWS * COLS, -1.0f32).unwrap();
                let last = column(COLS - 1);
                if blocking {
                    world.recv_region(&mut g, &last, 0, 11).unwrap();
                } else {
                    world.irecv_region(&mut g, &last, 0, 11).unwrap();
                }
                assert_eq!(g.location(), b);
                let got = g.to_vec().unwrap_or_else(|e| panic!("{a} -> {b}: {e}"));
                assert!(
                    got == expected_after(&sent, 7),
                    "{a} -> {b} (blocking: {blocking}): the column differs"
                );
            }
        }
    }
    world.barrier().unwrap();
    if world.rank() == 0 {
        println!("checked {} location pairs", all.len().pow(2));
    }
});

// A plane of a 3-D box (one row of each of its planes: 8 separate rows) from the host on
// rank 0 into the last such plane of a box at every location on rank 1.
mpi_test!(a_plane_of_a_3d_box_at_every_location, 2, |world| {
    let (d, h, w) = (8, 6, 5);
    let plane = |y| Region::block_3d::<f64>((d, h, w), (0, y, 0), (d, 1, w));
    let sent: Vec<f64> = (0..d * h * w).map(|i| i as f64 * 0.5).collect();
    for b in common::required_locations() {
        if world.rank() == 0 {
            let box_ = Buffer::from_slice(locus::Location::Host, &sent).unwrap();
            world.send_region(&box_, &plane(2), 1, 12).unwrap();
        } else {
            let mut box_ = Buffer::filled(b, d * h * w, -1.0f64).unwrap();
            world.recv_region(&mut box_, &plane(h - 1), 0, 12).unwrap();
            let got = box_.to_vec().unwrap();
            for z in 0..d {
                for y in 0..h {
                    for x in 0..w {
                        let want = match y == h - 1 {
                            true => sent[(z * h + 2) * w + x],
                            false => -1.0,
                        };
                        assert_eq!(got[(z * h + y) * w + x], want, "{b} at ({z}, {y}, {x})");
                    }
                }
            }
        }
    }
    world.barrier().unwrap();
});

// A region message is an ordinary message of its elements: `recv` of a buffer that long
// takes it, and `recv_region` takes a whole buffer's `send`.
mpi_test!(region_messages_and_whole_messages_meet, 2, |world| {
    let sent = grid(3);
    let at = *common::required_locations().last().unwrap();
    if world.rank() == 0 {
        let g = Buffer::from_slice(at, &sent).unwrap();
        world.send_region(&g, &column(0), 1, 13).unwrap();
        let face = Buffer::from_slice(at, &column_of(&sent, 0)).unwrap();
        world.send(&face, 1, 14).unwrap();
    } else {
        let mut face = Buffer::<f32>::zeroed(at, ROWS).unwrap();
        world.recv(&mut face, 0, 13).unwrap();
        assert_eq!(face.to_vec().unwrap(), column_of(&sent, 0));
        let mut g = Buffer::filled(at, ROWS * COLS, -1.0f32).unwrap();
        world.recv_region(&mut g, &column(COLS - 1), 0, 14).unwrap();
        assert!(g.to_vec().unwrap() == expected_after(&sent, 0));
    }
});

fn column_of(values: &[f32], col: usize) -> Vec<f32> {
    (0..ROWS).map(|r| values[r * COLS + col]).collect()
}

// Refusals: a region past the buffer is this rank's error and nothing is sent (the next
// message arrives as the first); a receiver's region one element short refuses the
// message on both ranks, blocking or not, and its grid keeps its data (readable, not
// lost).
mpi_test!(refused_regions_write_nothing, 2, |world| {
    let sent = grid(5);
    if world.rank() == 0 {
        let g = Buffer::from_slice(locus::Location::Host, &sent).unwrap();
        let past = Region::block_2d::<f32>((ROWS + 1, COLS), (1, 0), (ROWS, 1));
        let e = world.send_region(&g, &past, 1, 15).unwrap_err().to_string();
        assert!(
            e.contains("Comm::send_region") && e.contains("past the memory"),
            "{e}"
        );
        let e = world
            .send_region(&g, &column(0), 0, 15)
            .unwrap_err()
            .to_string();
        assert!(e.contains("not another rank"), "{e}");
        world.send_region(&g, &column(1), 1, 15).unwrap();
        for _ in 0..2 {
            let e = world.send_region(&g, &column(2), 1, 16).unwrap_err();
            assert!(e.to_string().contains("refused"), "{e}");
        }
    } else {
        let at = *common::required_locations().last().unwrap();
        let mut g = Buffer::filled(at, ROWS * COLS, -1.0f32).unwrap();
        world.recv_region(&mut g, &column(COLS - 1), 0, 15).unwrap();
        let want = expected_after(&sent, 1);
        assert!(g.to_vec().unwrap() == want);
        let short = Region::block_2d::<f32>((ROWS, COLS), (1, 3), (ROWS - 1, 1));
        let e = world.recv_region(&mut g, &short, 0, 16).unwrap_err();
        assert!(e.to_string().contains("nothing was written"), "{e}");
        assert!(
            g.to_vec().unwrap() == want,
            "a refused message wrote the grid"
        );
        let receiving = world.irecv_region(&mut g, &short, 0, 16).unwrap();
        assert!(
            g.to_vec().unwrap() == want,
            "a refused message wrote the grid"
        );
        assert!(receiving.wait().is_err());
    }
    world.barrier().unwrap();
});

// A halo exchange on one grid per rank, as MPI programs write it: both receives (into the
// halo columns) posted before both sends (of the edge columns), on the same buffer, the
// ranks at two different locations. A receive in flight holds up only work on its own
// region: were the sends ordered after it, each rank would wait for the other.
mpi_test!(receives_posted_before_sends_on_one_grid, 2, |world| {
    let all = common::required_locations();
    let me = world.rank() as usize;
    let peer = 1 - world.rank();
    let at = all[(me * 3) % all.len()];
    let mine = grid(me);
    let mut g = Buffer::from_slice(at, &mine).unwrap();
    // Rank 0 is on the left: its right halo is its last column, its edge the one before.
    let (halo, edge) = match me {
        0 => (column(COLS - 1), column(COLS - 2)),
        _ => (column(0), column(1)),
    };
    for round in 0..3 {
        let receiving = world.irecv_region(&mut g, &halo, peer, 20 + round).unwrap();
        let sending = world.isend_region(&g, &edge, peer, 20 + round).unwrap();
        sending.wait().unwrap();
        receiving.wait().unwrap();
    }
    let theirs = grid(1 - me);
    let (their_edge, my_halo) = match me {
        0 => (1, COLS - 1),
        _ => (COLS - 2, 0),
    };
    let got = g.to_vec().unwrap();
    for r in 0..ROWS {
        for c in 0..COLS {
            let want = match c == my_halo {
                true => theirs[r * COLS + their_edge],
                false => mine[r * COLS + c],
            };
            assert_eq!(got[r * COLS + c], want, "rank {me} at {at}: ({r}, {c})");
        }
    }
});
