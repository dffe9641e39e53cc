//! A pipeline of 8 moves and 8 kernels over 4 locations, in `Transfer::Async` mode
//! against the same pipeline in `Transfer::Sync` mode, in the same run (issue 14's
//! target: async no slower, and faster where two technologies overlap).
//!
//! Four buffers of `LOCUS_BENCH_MIB` MiB (default 16) of `f32`, one made at each of
//! four locations. Each of two rounds moves every buffer to the next location
//! (`prefetch`: four moves) and runs `saxpy` on it there (four codelet calls). In async
//! mode the four moves of a round are started together and each kernel waits only for
//! its own buffer; in sync mode every move completes before the next starts.
//!
//! Run: `cargo bench --bench pipeline` (LOCUS_BENCH_REPS, LOCUS_BENCH_LOCATIONS to pick
//! the four, e.g. `host,opencl:1,sycl:0,webgpu:0`; LOCUS_BENCH_TRACE=1 prints when each
//! call of one run per mode returned). Printed, never asserted.

use locus::codelet::{kernels, Arg, Codelet, Launch};
use locus::{Buffer, Location, Transfer};
use locus_cli::bench::timing;

fn locations() -> Vec<Location> {
    if let Ok(list) = std::env::var("LOCUS_BENCH_LOCATIONS") {
        if let Ok(l) = locus::parse_locations(&list) {
            return l;
        }
    }
    // The host and one location of each other technology, up to four.
    let mut picked: Vec<Location> = Vec::new();
    for l in locus::available() {
        if picked.len() < 4 && !picked.iter().any(|p| p.technology() == l.technology()) {
            picked.push(l);
        }
    }
    picked
}

/// The pipeline's starting state: one buffer at each location, and `x` (all ones)
/// already everywhere (not part of the timed moves).
fn prepare(
    locs: &[Location],
    n: usize,
    mode: Transfer,
) -> Result<(Vec<Buffer<f32>>, Buffer<f32>), locus::Error> {
    let ys = (0..locs.len())
        .map(|i| Buffer::filled(locs[i], n, i as f32).map(|b| b.with_transfer(mode)))
        .collect::<Result<_, _>>()?;
    let x = Buffer::filled(Location::Host, n, 1.0f32)?;
    for &l in locs {
        x.prefetch(l)?;
    }
    x.synchronize()?;
    Ok((ys, x))
}

/// When each call of one pipeline returned (`LOCUS_BENCH_TRACE=1`): where the time goes.
struct Trace {
    start: std::time::Instant,
    marks: Option<Vec<(String, f64)>>,
}

impl Trace {
    fn new(on: bool) -> Trace {
        Trace {
            start: std::time::Instant::now(),
            marks: on.then(Vec::new),
        }
    }

    fn mark(&mut self, what: impl FnOnce() -> String) {
        let t = self.start.elapsed().as_secs_f64();
        if let Some(m) = self.marks.as_mut() {
            m.push((what(), t));
        }
    }

    fn print(&self, mode: Transfer) {
        let Some(marks) = &self.marks else { return };
        println!("  trace, {mode:?} mode (ms since start when each call returned):");
        let mut last = 0.0;
        for (what, t) in marks {
            println!("    {:8.3} (+{:7.3})  {what}", t * 1e3, (t - last) * 1e3);
            last = *t;
        }
    }
}

/// Two rounds of (four moves, four saxpy calls), then waits for everything.
fn pipeline(
    locs: &[Location],
    ys: &mut [Buffer<f32>],
    x: &Buffer<f32>,
    trace: &mut Trace,
) -> Result<(), locus::Error> {
    let saxpy = kernels::saxpy();
    let (k, n) = (locs.len(), x.len());
    for round in 1..=2 {
        for (i, y) in ys.iter().enumerate() {
            let to = locs[(i + round) % k];
            y.prefetch(to)?;
            trace.mark(|| format!("round {round}: prefetch y{i} -> {to}"));
        }
        for (i, y) in ys.iter_mut().enumerate() {
            let at = locs[(i + round) % k];
            Codelet::new(&saxpy, &[at])?.call(
                &mut [
                    Arg::f32(1.0),
                    Arg::buf(x),
                    Arg::buf_mut(y),
                    Arg::u32(n as u32),
                ],
                Launch::d1(n),
            )?;
            trace.mark(|| format!("round {round}: saxpy on y{i} at {at}"));
        }
    }
    for (i, y) in ys.iter().enumerate() {
        y.synchronize()?;
        trace.mark(|| format!("synchronize y{i}"));
    }
    Ok(())
}

/// The median time of the pipeline in `mode` over `reps` runs (each on fresh buffers),
/// and the last element of each buffer afterwards.
fn timed(
    locs: &[Location],
    n: usize,
    mode: Transfer,
    reps: usize,
) -> Result<(f64, Vec<f32>), locus::Error> {
    let mut times = Vec::new();
    let mut last = Vec::new();
    let trace_on = trace_wanted();
    for rep in 0..reps + 1 {
        let (mut ys, x) = prepare(locs, n, mode)?;
        let t = std::time::Instant::now();
        let mut trace = Trace::new(trace_on && rep == reps);
        pipeline(locs, &mut ys, &x, &mut trace)?;
        times.push(t.elapsed().as_secs_f64());
        trace.print(mode);
        last = ys
            .iter()
            .map(|y| y.to_vec().map(|v| v[n - 1]))
            .collect::<Result<_, _>>()?;
    }
    times.remove(0); // warm-up
    times.sort_by(f64::total_cmp);
    Ok((times[times.len() / 2], last))
}

/// `LOCUS_BENCH_TRACE=1`: the last run of each timed set prints when each call returned.
fn trace_wanted() -> bool {
    std::env::var("LOCUS_BENCH_TRACE").is_ok_and(|v| v == "1")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mib: usize = std::env::var("LOCUS_BENCH_MIB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(16);
    let n = mib << 20 >> 2;
    let locs = locations();
    let names: Vec<String> = locs.iter().map(|l| l.to_string()).collect();
    println!(
        "pipeline: 8 moves + 8 saxpy calls over {} ({mib} MiB per buffer)",
        names.join(", ")
    );
    let want: Vec<f32> = (0..locs.len()).map(|i| i as f32 + 2.0).collect();
    let reps = timing::reps(5);
    let (mut ta, mut ts) = (Vec::new(), Vec::new());
    // Alternate the two modes so that drift on a busy machine hits both alike.
    for _ in 0..3 {
        let (a, got) = timed(&locs, n, Transfer::Async, reps)?;
        assert_eq!(got, want, "async result");
        let (s, got) = timed(&locs, n, Transfer::Sync, reps)?;
        assert_eq!(got, want, "sync result");
        ta.push(a);
        ts.push(s);
    }
    ta.sort_by(f64::total_cmp);
    ts.sort_by(f64::total_cmp);
    let (ta, ts) = (ta[1], ts[1]);
    println!(
        "async {:.2} ms, sync {:.2} ms: async / sync = {:.2} ({})",
        ta * 1e3,
        ts * 1e3,
        ta / ts,
        if ta <= ts * 1.05 {
            "no slower: met"
        } else {
            "slower: NOT met"
        }
    );
    Ok(())
}
