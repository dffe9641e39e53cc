//! The timing loops every benchmark of locus uses (`locus bench` and `benches/`), written
//! once: a median of repeated runs after a warm-up, two or more closures timed in
//! rotation so that drift on a busy machine hits all alike, and runs until a time
//! budget is spent.

use std::time::{Duration, Instant};

use super::stats::Stats;
use locus::core::config;
use locus::Result;

/// Timed repetitions per measurement: `LOCUS_BENCH_REPS`, or `default`. A value that
/// is not a whole number above zero is named in a warning on stderr, once, and the
/// default is used.
pub fn reps(default: usize) -> usize {
    reps_from(config::text("LOCUS_BENCH_REPS").as_deref(), default)
}

fn reps_from(value: Option<&str>, default: usize) -> usize {
    let reps = config::parse_number("LOCUS_BENCH_REPS", value, |&n: &usize| n > 0);
    config::or_warn(reps).unwrap_or(default)
}

/// The median time of `reps` runs of `f`, after one untimed warm-up run.
pub fn median(reps: usize, mut f: impl FnMut()) -> Duration {
    f();
    let mut times: Vec<Duration> = (0..reps.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

/// The medians of `a` and `b` timed alternately (a, b, a, b, ...) over `reps` rounds,
/// after one warm-up run each.
pub fn interleaved(reps: usize, mut a: impl FnMut(), mut b: impl FnMut()) -> (Duration, Duration) {
    a();
    b();
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        a();
        ta.push(t.elapsed());
        let t = Instant::now();
        b();
        tb.push(t.elapsed());
    }
    ta.sort();
    tb.sort();
    (ta[ta.len() / 2], tb[tb.len() / 2])
}

/// The run with the median `key` among `passes` runs of `pass` (after one warm-up run),
/// for passes that time themselves and report more than a time.
pub fn median_by<T, E>(
    passes: usize,
    mut pass: impl FnMut() -> std::result::Result<T, E>,
    key: impl Fn(&T) -> f64,
) -> std::result::Result<T, E> {
    pass()?;
    let mut runs = (0..passes.max(1))
        .map(|_| pass())
        .collect::<std::result::Result<Vec<T>, E>>()?;
    runs.sort_by(|a, b| key(a).total_cmp(&key(b)));
    Ok(runs.swap_remove(runs.len() / 2))
}

/// Times `f`: one warm-up, then runs until `budget` seconds are spent and `min_runs` are
/// done (at most 10000).
pub fn measure(budget: f64, min_runs: usize, mut f: impl FnMut() -> Result<()>) -> Result<Stats> {
    f()?;
    let start = Instant::now();
    let mut samples = Vec::new();
    while samples.len() < min_runs
        || (start.elapsed().as_secs_f64() < budget && samples.len() < 10_000)
    {
        let t = Instant::now();
        f()?;
        samples.push(t.elapsed());
    }
    Stats::of(&samples)
}

/// Times several closures in rotation: one warm-up each, then rounds until the budget
/// (per closure) is spent and `min_runs` rounds are done. Every other round runs them in
/// reverse order (a, b, c, c, b, a, ...), so that no one closure always runs after the
/// same other: a GPU copy timed right after a large host memcpy (the GPU idle meanwhile)
/// takes longer than the same copy timed after another GPU copy, and a fixed order
/// would charge that to one side (`docs/design-measurements.md`).
pub fn measure_together(
    budget: f64,
    min_runs: usize,
    fns: &mut [&mut dyn FnMut() -> Result<()>],
) -> Result<Vec<Stats>> {
    for f in fns.iter_mut() {
        f()?;
    }
    let start = Instant::now();
    let mut samples = vec![Vec::new(); fns.len()];
    let total = budget * fns.len() as f64;
    while samples[0].len() < min_runs
        || (start.elapsed().as_secs_f64() < total && samples[0].len() < 10_000)
    {
        let round = samples[0].len();
        for i in 0..fns.len() {
            let k = if round % 2 == 0 { i } else { fns.len() - 1 - i };
            let t = Instant::now();
            fns[k]()?;
            samples[k].push(t.elapsed());
        }
    }
    samples.iter().map(|s| Stats::of(s)).collect()
}

/// Gigabytes (10^9 bytes) per second for `bytes` in `time`.
pub fn gbps(bytes: usize, time: Duration) -> f64 {
    bytes as f64 / time.as_secs_f64() / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locus_bench_reps_is_a_whole_number_above_zero_or_the_default() {
        assert_eq!(reps_from(None, 7), 7);
        assert_eq!(reps_from(Some(" 12 "), 7), 12);
        for bad in ["0", "-3", "many", "2.5", ""] {
            assert_eq!(reps_from(Some(bad), 7), 7, "{bad:?}");
        }
    }

    #[test]
    fn medians_and_rotation() {
        let mut calls = 0;
        median(5, || calls += 1);
        assert_eq!(calls, 6, "a warm-up and five timed runs");
        let (mut a, mut b) = (0, 0);
        interleaved(3, || a += 1, || b += 1);
        assert_eq!((a, b), (4, 4));
        let mut n = 0.0;
        let mid = median_by::<f64, ()>(
            5,
            || {
                n += 1.0;
                Ok(10.0 - n)
            },
            |v| *v,
        );
        assert_eq!(mid, Ok(6.0), "passes 2..=6 give 8..=4: the median is 6");
    }

    #[test]
    fn rotation_reverses_every_other_round() {
        let order = std::cell::RefCell::new(Vec::new());
        let (mut a, mut b, mut c) = (
            || {
                order.borrow_mut().push('a');
                Ok(())
            },
            || {
                order.borrow_mut().push('b');
                Ok(())
            },
            || {
                order.borrow_mut().push('c');
                Ok(())
            },
        );
        let stats = measure_together(0.0, 3, &mut [&mut a, &mut b, &mut c]).unwrap();
        assert!(stats.iter().all(|s| s.runs == 3));
        let seen: String = order.borrow().iter().collect();
        assert_eq!(
            seen,
            "abc" /* warm-up */
                .to_owned()
                + "abc"
                + "cba"
                + "abc"
        );
    }
}
