//! Copies at the same time from one memory to many, and from many into one, as a user's
//! threads (or `locus bench --concurrent`) make them: every byte arrives, nothing
//! crashes. On the code before, copies out of one OpenCL buffer to several locations at
//! once crashed the process (SIGSEGV inside PoCL's or Intel's runtime, every run with
//! both PoCL devices and a third location): each copy mapped the same buffer, and one
//! copy's unmap pulled the mapping from under another copy still reading it.

mod common;

use std::sync::Barrier;

use locus::{Location, Memory};

const N: usize = 64 << 10;
const ROUNDS: usize = 40;

/// Runs `copies` (source index, destination index) at once from threads of their own,
/// `ROUNDS` times, each round started together; then checks every destination.
fn at_once(sources: &[Memory], destinations: &[Memory], copies: &[(usize, usize)]) {
    let barrier = Barrier::new(copies.len());
    std::thread::scope(|s| {
        for &(from, to) in copies {
            let barrier = &barrier;
            s.spawn(move || {
                for _ in 0..ROUNDS {
                    barrier.wait();
                    sources[from]
                        .copy_to(0, &destinations[to], 0, N)
                        .unwrap_or_else(|e| panic!("copy {from} -> {to}: {e}"));
                }
            });
        }
    });
    for &(from, to) in copies {
        let mut got = vec![0u8; N];
        destinations[to].read(0, &mut got).unwrap();
        assert!(
            got.iter().all(|&b| b == from as u8 + 1),
            "copy {from} -> {to}: wrong bytes"
        );
    }
}

#[test]
fn one_memory_copied_to_every_location_at_once_and_every_location_into_one() {
    let locations: Vec<Location> = common::required_locations();
    if locations.len() < 3 {
        println!("SKIPPED: fewer than three locations ({locations:?})");
        return;
    }
    let k = locations.len();
    let sources: Vec<Memory> = locations
        .iter()
        .enumerate()
        .map(|(i, &l)| {
            let m = Memory::new(l, N).unwrap();
            m.fill(0..N, &[i as u8 + 1]).unwrap();
            m
        })
        .collect();
    // One destination per (source, destination location): no two copies write one memory.
    let destinations: Vec<Memory> = (0..k * k)
        .map(|i| Memory::new(locations[i % k], N).unwrap())
        .collect();
    for center in 0..k {
        // From `center` to every other location at once.
        let out: Vec<(usize, usize)> = (0..k)
            .filter(|&d| d != center)
            .map(|d| (center, center * k + d))
            .collect();
        at_once(&sources, &destinations, &out);
        // From every other location into `center` at once.
        let into: Vec<(usize, usize)> = (0..k)
            .filter(|&s| s != center)
            .map(|s| (s, s * k + center))
            .collect();
        at_once(&sources, &destinations, &into);
    }
    println!("CONCURRENT: one-to-all and all-to-one at {locations:?}, {ROUNDS} rounds each");
}
