//! The MPI suite: each test starts itself under `mpirun` (two or three ranks, loopback
//! only, every wait bounded) and, inside it, moves buffers between ranks at every
//! location this machine has and checks the data on the receiving rank. Needs the `mpi`
//! feature and Open MPI's `mpirun` (scripts/test.sh installs both).
#![cfg(feature = "mpi")]

mod common;

use std::time::{Duration, Instant};

use common::mpi_job::{inside, launch_with};
use locus::mpi::{Comm, Mpi, Policy, Wire};
use locus::{Buffer, Location, Memory};

fn locations() -> Vec<Location> {
    locus::available()
}

fn pattern(n: usize, salt: u32) -> Vec<f32> {
    (0..n).map(|i| (i as u32 ^ salt) as f32 * 0.5).collect()
}

fn pairs_between(world: &Comm, policy: Policy, n: usize) {
    world.set_policy(policy);
    let all = locations();
    for (i, &a) in all.iter().enumerate() {
        for (j, &b) in all.iter().enumerate() {
            let salt = (i * 31 + j) as u32;
            let want = pattern(n, salt);
            if world.rank() == 0 {
                let data = Buffer::from_slice(a, &want).unwrap();
                world
                    .send(&data, 1, 5)
                    .unwrap_or_else(|e| panic!("{a} -> {b}: {e}"));
            } else {
                let mut data = Buffer::<f32>::zeroed(b, n).unwrap();
                world
                    .recv(&mut data, 0, 5)
                    .unwrap_or_else(|e| panic!("{a} -> {b}: {e}"));
                assert_eq!(data.location(), b);
                assert_eq!(
                    data.to_vec().unwrap(),
                    want,
                    "{a} -> {b} ({policy:?}, {n} elements)"
                );
            }
        }
    }
    world.barrier().unwrap();
}

// Every ordered pair of locations between rank 0 and rank 1, each on its own wire (host
// memory and host-visible devices mapped in place), then all staged through chunks of
// 64 KiB (so a 1 MiB + 12 byte message is 17 pieces through two chunks, the last short).
mpi_test!(
    every_location_pair_between_two_ranks,
    2,
    &[("LOCUS_MPI_CHUNK", "64KiB")],
    |world| {
        for n in [1, 1000, (1 << 18) + 3] {
            pairs_between(world, Policy::Auto, n);
            // Staged through host chunks: through the staged engine, and (from 64 KiB)
            // through the same-node path.
            world.set_same_node_ipc(false);
            pairs_between(world, Policy::Staged, n);
            world.set_same_node_ipc(true);
            pairs_between(world, Policy::Staged, n);
        }
        if world.rank() == 0 {
            println!(
                "checked {} location pairs, mapped and staged",
                locations().len().pow(2)
            );
        }
    }
);

// Two ranks of one node: a message of 64 KiB or more whose sender's memory is shared
// (`Memory::new_shared`: the receiver copies out of the sender's pages) or staged through
// host chunks (the sender copies into a window the receiver copies out of) goes through
// shared memory, at every location of the receiver; host-visible memory, and WebGPU's
// own lent staging buffers, go through MPI (their paths are as short). With the path off
// every message goes through MPI. All arrive whole.
mpi_test!(
    ranks_on_one_node_exchange_through_shared_memory,
    2,
    &[("LOCUS_WEBGPU_MAPPABLE", "0")],
    |world| {
        let peer = 1 - world.rank();
        assert!(
            world.same_node(peer),
            "two ranks of one job on this machine"
        );
        let n = (1 << 18) + 3;
        let want = pattern(n, 5);
        let lent = locations()
            .into_iter()
            .find(|l| l.technology() == locus::Technology::WebGpu);
        // (the sender's location, its memory shared, its policy, on the path)
        let mut senders = vec![
            (Location::Host, true, Policy::Auto, true),
            (Location::Host, false, Policy::Staged, true),
            (Location::Host, false, Policy::Auto, false),
        ];
        senders.extend(lent.map(|l| (l, false, Policy::Auto, false)));
        for on in [true, false] {
            world.set_same_node_ipc(on);
            for &dst in &locations() {
                for &(src, shared, policy, path) in &senders {
                    let before = world.same_node_messages();
                    world.set_policy(policy);
                    if world.rank() == 0 {
                        let data = if shared {
                            let m = Memory::new_shared(Location::Host, 4 * n).unwrap();
                            let bytes: Vec<u8> =
                                want.iter().flat_map(|x| x.to_ne_bytes()).collect();
                            m.write(0, &bytes).unwrap();
                            Buffer::<f32>::from_memory(m).unwrap()
                        } else {
                            Buffer::from_slice(src, &want).unwrap()
                        };
                        world.send(&data, 1, 6).unwrap();
                    } else {
                        let mut got = Buffer::<f32>::zeroed(dst, n).unwrap();
                        world.recv(&mut got, 0, 6).unwrap();
                        assert_eq!(got.to_vec().unwrap(), want, "{src} -> {dst}");
                    }
                    world.set_policy(Policy::Auto);
                    let took = world.same_node_messages() - before;
                    assert_eq!(
                        took,
                        u64::from(on && path),
                        "{src} (shared {shared}, {policy:?}) -> {dst}: on the path (on: {on})"
                    );
                }
            }
        }
        world.set_same_node_ipc(true);
        // Under 64 KiB: MPI's transport (lower latency), whole as well.
        pairs_between(world, Policy::Auto, 1000);
    }
);

// WebGPU off unified memory (as on a discrete GPU): a staged message goes through the
// device's own staging buffers, lent in place (one device copy per side, no host copy),
// with every other location at the other end; a length `copy_buffer_to_buffer` cannot
// take (1001 bytes) goes through host chunks, and both arrive whole.
mpi_test!(
    webgpu_staging_buffers_carry_messages_in_place,
    2,
    &[("LOCUS_WEBGPU_MAPPABLE", "0"), ("LOCUS_MPI_CHUNK", "64KiB")],
    |world| {
        let Ok(gpu) = "webgpu:0".parse::<Location>() else {
            return;
        };
        if !locations().contains(&gpu) {
            eprintln!("SKIPPED: no webgpu:0 here");
            return;
        }
        for n in [1, 1000, (1 << 18) + 3] {
            pairs_between(world, Policy::Auto, n);
        }
        let bytes: Vec<u8> = (0..1001).map(|i| (i * 13) as u8).collect();
        if world.rank() == 0 {
            world
                .send(&Buffer::from_slice(gpu, &bytes).unwrap(), 1, 8)
                .unwrap();
        } else {
            let mut got = Buffer::<u8>::zeroed(gpu, 1001).unwrap();
            world.recv(&mut got, 0, 8).unwrap();
            assert_eq!(got.to_vec().unwrap(), bytes);
        }
        world.barrier().unwrap();
    }
);

// The wire each location's memory takes from this rank, and why.
mpi_test!(routes_explain_themselves, 2, |world| {
    for at in locations() {
        let b = Buffer::<f32>::zeroed(at, 16).unwrap();
        let memory = b.memory_at(at).unwrap();
        let route = world.route_of(&memory);
        println!("rank {}: {route}", world.rank());
        assert!(!route.reason.is_empty());
        if at == Location::Host {
            assert_eq!(route.wire, Wire::Mapped);
        }
        world.set_policy(Policy::Staged);
        assert_eq!(world.route_of(&memory).wire, Wire::Staged);
        world.set_policy(Policy::Auto);
    }
});

// A receiver whose element type or length differs refuses the message before anything
// is written: both ranks get an error naming both sides, the receiver keeps its data,
// and the next message between them goes through.
mpi_test!(a_mismatch_is_an_error_on_both_ranks, 2, |world| {
    let sent = Buffer::from_slice(Location::Host, &pattern(100, 1)).unwrap();
    if world.rank() == 0 {
        let e = world.send(&sent, 1, 1).unwrap_err().to_string();
        assert!(
            e.contains("refused") && e.contains("100 x u32") && e.contains("100 x f32"),
            "{e}"
        );
        let e = world.send(&sent, 1, 2).unwrap_err().to_string();
        assert!(e.contains("99 x f32"), "{e}");
        world.send(&sent, 1, 3).unwrap();
    } else {
        let mut wrong_type = Buffer::<u32>::filled(Location::Host, 100, 7).unwrap();
        let e = world.recv(&mut wrong_type, 0, 1).unwrap_err().to_string();
        assert!(
            e.contains("100 x f32") && e.contains("nothing was written"),
            "{e}"
        );
        assert!(
            wrong_type.to_vec().unwrap().iter().all(|&x| x == 7),
            "the receiver's data was touched"
        );
        let mut short = Buffer::<f32>::zeroed(Location::Host, 99).unwrap();
        assert!(world.recv(&mut short, 0, 2).is_err());
        let mut right = Buffer::<f32>::zeroed(Location::Host, 100).unwrap();
        world.recv(&mut right, 0, 3).unwrap();
        assert_eq!(right.to_vec().unwrap(), pattern(100, 1));
    }
});

// A rank that never makes the matching call: the waiting rank's error comes within the
// time limit, naming the other rank.
mpi_test!(
    a_silent_peer_is_a_timeout_not_a_hang,
    2,
    &[("LOCUS_MPI_TIMEOUT_S", "2")],
    |world| {
        if world.rank() == 0 {
            let mut b = Buffer::<f32>::zeroed(Location::Host, 10).unwrap();
            let start = Instant::now();
            let e = world.recv(&mut b, 1, 9).unwrap_err().to_string();
            assert!(start.elapsed() < Duration::from_secs(10));
            assert!(
                e.contains("rank 1") && e.contains("did not finish within 2.0 s"),
                "{e}"
            );
            assert!(e.contains("LOCUS_MPI_TIMEOUT_S"), "{e}");
        }
        world.set_timeout(Some(Duration::from_secs(30)));
        world.barrier().unwrap();
    }
);

// A rank that dies without a word: the survivor's wait ends within the time limit with an
// error naming it. `--enable-recovery` keeps the survivor running (by default mpirun ends
// the whole job when one rank dies, and no rank is left to report anything).
#[test]
fn a_rank_that_dies_is_an_error_on_the_survivor() {
    if inside() {
        let mpi = Mpi::init().expect("MPI");
        let world = mpi.world().expect("world");
        // Both ranks past MPI's start-up (a rank gone during MPI_Init or a communicator's
        // creation leaves the other in calls locus does not bound).
        world.barrier().unwrap();
        if world.rank() == 1 {
            std::process::exit(0);
        }
        let mut b = Buffer::<f32>::filled(Location::Host, 10, 1.5).unwrap();
        let start = Instant::now();
        let e = world.recv(&mut b, 1, 3).unwrap_err().to_string();
        assert!(start.elapsed() < Duration::from_secs(10), "{e}");
        assert!(
            e.contains("rank 1") && e.contains("LOCUS_MPI_TIMEOUT_S"),
            "{e}"
        );
        assert_eq!(
            b.to_vec().unwrap(),
            vec![1.5; 10],
            "the buffer kept its data"
        );
        println!("the survivor reported: {e}");
        // Ends here, without MPI_Finalize: finalizing waits on the dead rank (a hang
        // under load, seen when this ran beside the WebGPU tests).
        use std::io::Write;
        let _ = std::io::stdout().flush();
        std::process::exit(0);
    }
    let (_, out) = launch_with(
        "a_rank_that_dies_is_an_error_on_the_survivor",
        2,
        &[("LOCUS_MPI_TIMEOUT_S", "2")],
        &["--enable-recovery"],
    );
    println!("{out}");
    assert!(out.contains("the survivor reported: MPI rank 0"), "{out}");
}

// A location one rank lacks stops every rank, each with the failing rank's reason.
mpi_test!(
    a_location_missing_on_one_rank_stops_every_rank,
    2,
    |world| {
        let at = if world.rank() == 1 {
            "cuda:7".parse().unwrap()
        } else {
            Location::Host
        };
        let e = world
            .agree(Buffer::<f32>::zeroed(at, 10))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("rank 1") && e.contains("cuda:7"),
            "rank {}: {e}",
            world.rank()
        );
    }
);

// Non-blocking: a ring (each rank sends right, receives from the left) at two locations
// per rank; the events compose (a read waits for its receive).
mpi_test!(nonblocking_ring_exchange, 3, |world| {
    let (me, n) = (world.rank(), world.size());
    let all = locations();
    let at = all[me as usize % all.len()];
    let right = (me + 1) % n;
    let left = (me + n - 1) % n;
    let out = Buffer::from_slice(at, &pattern(5000, me as u32)).unwrap();
    let mut inbox = Buffer::<f32>::zeroed(at, 5000).unwrap();
    let recv = world.irecv(&mut inbox, left, 4).unwrap();
    let send = world.isend(&out, right, 4).unwrap();
    // Reading waits for the receive's event.
    assert_eq!(inbox.to_vec().unwrap(), pattern(5000, left as u32));
    recv.wait().unwrap();
    send.wait().unwrap();
});

// Collectives over three ranks, each at a different location.
mpi_test!(collectives_over_three_ranks, 3, |world| {
    let me = world.rank();
    let all = locations();
    let at = all[(me as usize * 2 + 1) % all.len()];
    // Broadcast from rank 1.
    let mut b = Buffer::<f64>::zeroed(at, 777).unwrap();
    if me == 1 {
        b = Buffer::from_slice(at, &(0..777).map(|i| i as f64).collect::<Vec<_>>()).unwrap();
    }
    world.broadcast(&mut b, 1).unwrap();
    assert_eq!(
        b.to_vec().unwrap(),
        (0..777).map(|i| i as f64).collect::<Vec<_>>()
    );
    // Gather to rank 2, lengths differ per rank.
    let mine: Vec<i32> = (0..(me + 1) * 10).map(|i| me * 1000 + i).collect();
    let part = Buffer::from_slice(at, &mine).unwrap();
    let want: Vec<i32> = (0..world.size())
        .flat_map(|r| (0..(r + 1) * 10).map(move |i| r * 1000 + i))
        .collect();
    let gathered = world.gather(&part, 2, at).unwrap();
    assert_eq!(gathered.is_some(), me == 2);
    if let Some(g) = gathered {
        assert_eq!(g.to_vec().unwrap(), want);
    }
    let everywhere = world.all_gather(&part, Location::Host).unwrap();
    assert_eq!(everywhere.to_vec().unwrap(), want);
    // Sum.
    let mut s = Buffer::from_slice(at, &vec![me as f32 + 1.0; 4099]).unwrap();
    world.all_reduce_sum(&mut s).unwrap();
    assert!(s.to_vec().unwrap().iter().all(|&x| x == 6.0));
    // Mismatched lengths: an error on every rank, nothing moved.
    let mut odd = Buffer::<f32>::filled(at, 10 + me as usize, 1.0).unwrap();
    let e = world.all_reduce_sum(&mut odd).unwrap_err().to_string();
    assert!(e.contains("nothing was moved"), "{e}");
    assert!(odd.to_vec().unwrap().iter().all(|&x| x == 1.0));
    // f16 has no MPI sum: refused on every rank.
    let mut h = Buffer::<locus::half::f16>::zeroed(at, 4).unwrap();
    assert!(world
        .all_reduce_sum(&mut h)
        .unwrap_err()
        .to_string()
        .contains("no sum of f16"));
});
