//! Sample statistics and size parsing for `locus bench`.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use locus::{Error, Result};

/// Timing statistics of repeated runs, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Number of timed runs.
    pub runs: usize,
    /// Median time.
    pub median_s: f64,
    /// Fastest run.
    pub min_s: f64,
    /// Slowest run.
    pub max_s: f64,
    /// The 99th percentile: the time 99 runs in 100 stay within (the slowest run when
    /// there are fewer than 100). 0 in reports made before it existed.
    #[serde(default)]
    pub p99_s: f64,
    /// Coefficient of variation: the runs' standard deviation over their mean (0.02 is
    /// a spread of 2%). 0 in reports made before it existed.
    #[serde(default)]
    pub cv: f64,
}

impl Stats {
    /// Statistics of `samples` (at least one).
    pub fn of(samples: &[Duration]) -> Result<Stats> {
        if samples.is_empty() {
            return Err(Error::Invalid("no samples to summarise".into()));
        }
        let mut s: Vec<f64> = samples.iter().map(Duration::as_secs_f64).collect();
        s.sort_by(f64::total_cmp);
        let n = s.len();
        let median = if n % 2 == 1 {
            s[n / 2]
        } else {
            (s[n / 2 - 1] + s[n / 2]) / 2.0
        };
        let mean = s.iter().sum::<f64>() / n as f64;
        let variance = s.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
        // The nearest-rank percentile: the smallest time with 99% of the runs at or below it.
        let p99 = s[(n * 99).div_ceil(100).clamp(1, n) - 1];
        Ok(Stats {
            runs: n,
            median_s: median,
            min_s: s[0],
            max_s: s[n - 1],
            p99_s: p99,
            cv: if mean > 0.0 {
                variance.sqrt() / mean
            } else {
                0.0
            },
        })
    }

    /// Bandwidth in GB/s (10^9 bytes per second) for `bytes` at time `seconds`.
    pub fn gbps(bytes: u64, seconds: f64) -> f64 {
        bytes as f64 / seconds / 1e9
    }
}

/// Parses a comma-separated list of sizes.
pub fn parse_sizes(list: &str) -> Result<Vec<u64>> {
    list.split(',')
        .filter(|s| !s.trim().is_empty())
        .map(parse_size)
        .collect()
}

pub use locus::transfer::cost::{format_size, parse_size};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics() {
        let ms = |v: &[u64]| {
            v.iter()
                .map(|&m| Duration::from_millis(m))
                .collect::<Vec<_>>()
        };
        let s = Stats::of(&ms(&[5, 1, 3])).unwrap();
        assert_eq!(
            (s.runs, s.median_s, s.min_s, s.max_s),
            (3, 0.003, 0.001, 0.005)
        );
        let even = Stats::of(&ms(&[4, 1, 3, 2])).unwrap();
        assert!((even.median_s - 0.0025).abs() < 1e-12);
        assert_eq!(Stats::of(&ms(&[7])).unwrap().median_s, 0.007);
        // 100 runs of 1..=100 ms: p99 is 99 ms; 5 runs: the slowest.
        let hundred = Stats::of(&ms(&(1..=100).collect::<Vec<_>>())).unwrap();
        assert_eq!((hundred.p99_s, s.p99_s), (0.099, 0.005));
        // 1, 3, 5 ms: mean 3, standard deviation sqrt(8/3).
        assert!((s.cv - (8.0f64 / 3.0).sqrt() / 3.0).abs() < 1e-9);
        assert_eq!(Stats::of(&ms(&[2, 2, 2])).unwrap().cv, 0.0);
        assert!(Stats::of(&[]).is_err());
        assert!((Stats::gbps(2_000_000_000, 2.0) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4KiB").unwrap(), 4096);
        assert_eq!(parse_size("1MiB").unwrap(), 1 << 20);
        assert_eq!(parse_size("1GiB").unwrap(), 1 << 30);
        assert_eq!(parse_size(" 64 mib ").unwrap(), 64 << 20);
        assert_eq!(parse_size("1000").unwrap(), 1000);
        assert_eq!(parse_size("2MB").unwrap(), 2_000_000);
        assert_eq!(
            parse_sizes("4KiB,1MiB, 64MiB").unwrap(),
            vec![4096, 1 << 20, 64 << 20]
        );
        for bad in [
            "",
            "KiB",
            "4XB",
            "-1MiB",
            "1.5MiB",
            "0",
            "99999999999999999999GiB",
        ] {
            let err = parse_size(bad).unwrap_err().to_string();
            assert!(err.contains("size"), "{bad}: {err}");
        }
        assert_eq!(format_size(4096), "4 KiB");
        assert_eq!(format_size(256 << 20), "256 MiB");
        assert_eq!(format_size(1000), "1000 B");
    }
}
