//! 12: Transfer modes, HAMR's `buffer_transfer`: `Async` (the default), `SyncHost` and
//! `Sync`. A producer's work (here a user event standing for a kernel on your own
//! queue) gates the buffer; we watch what each mode does with a move to the target and
//! to the host, then hand the data to "our own kernel" the way HAMR's users do: wait on
//! the guard's events first.
//!
//! `cargo run --example 12_transfer_modes -- opencl:0` (or LOCUS_LOCATION, or the last
//! location found)

mod common;

use std::time::{Duration, Instant};

use locus::{Buffer, Event, Location, Transfer};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let target = common::location_from_args()?;
    let n = 1 << 20;
    let data: Vec<f32> = (0..n).map(|i| i as f32).collect();
    for mode in [Transfer::Async, Transfer::SyncHost, Transfer::Sync] {
        for to in [target, Location::Host] {
            let b = Buffer::from_slice(Location::Host, &data)?.with_transfer(mode);
            // The producer's work: it finishes 100 ms from now.
            let (produced, done) = Event::user();
            b.order_after(&produced);
            let opener = std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(100));
                done.complete();
            });
            let t = Instant::now();
            let g = b.access(to)?;
            let returned = t.elapsed();
            println!(
                "{mode:?}: access at {to} returned after {:>5.1} ms, {} ({} event(s) to wait for)",
                returned.as_secs_f64() * 1e3,
                if g.is_ready() {
                    "data there"
                } else {
                    "data on its way"
                },
                g.events().len()
            );
            // Our own kernel on our own queue: it waits for the events first (HAMR's
            // "the user's stream waits"). Host views wait by themselves.
            g.wait()?;
            if let Ok(slice) = g.as_slice() {
                assert_eq!(slice[n - 1], (n - 1) as f32);
            }
            drop(g);
            assert_eq!(b.to_vec()?[n - 1], (n - 1) as f32);
            opener.join().map_err(|_| "the producer thread panicked")?;
        }
    }
    // copy_from in Async mode returns at once; synchronize() waits for every move.
    let src = Buffer::from_slice(target, &data)?;
    let mut dst = Buffer::<f32>::zeroed(Location::Host, n)?;
    let t = Instant::now();
    let route = dst.copy_from(0, &src, 0..n)?;
    let started = t.elapsed();
    dst.synchronize()?;
    println!(
        "copy_from {target} -> host ({route}): started in {:.2} ms, done in {:.2} ms",
        started.as_secs_f64() * 1e3,
        t.elapsed().as_secs_f64() * 1e3
    );
    assert_eq!(dst.to_vec()?, data);
    println!(
        "every mode delivered the data; only Async and SyncHost (to {target}) returned before it"
    );
    Ok(())
}
