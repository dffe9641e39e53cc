//! A fuzzer for the parsers a user feeds text to, on the stable toolchain: location
//! strings, `LOCUS_BACKENDS` / `LOCUS_REQUIRE` lists, the CLI's size strings, and
//! allocation logs for `replay`.
//!
//! It starts from the committed corpus (`tests/fuzz/<target>/`), mutates inputs (bit
//! flips, inserted and deleted bytes, repeated ranges, dictionary tokens, splices of two
//! inputs) and runs each through the parser under `catch_unwind`. Without compiler
//! coverage it is guided by behaviour: an input whose answer (accepted, or the kind and
//! first words of the error) is new joins the pool mutated from. A panic fails the test
//! and prints the input; an input that takes more than 10 s aborts the process, naming
//! it (a hang).
//!
//! `LOCUS_FUZZ_SECS` bounds each target (default 2); `LOCUS_FUZZ_SAVE=1` writes the
//! inputs with new answers back to the corpus, to be reviewed and committed.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod common;

use common::Rng;
use locus::resource::{Limiting, Pool};
use locus::Location;

const DICTIONARY: &[&str] = &[
    ",",
    ":",
    " ",
    "\n",
    "\r\n",
    "\t",
    "0",
    "1",
    "-1",
    "+",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775808",
    "host",
    "cuda",
    "hip",
    "openmp",
    "opencl",
    "sycl",
    "webgpu",
    "HOST",
    "KiB",
    "MiB",
    "GiB",
    "KB",
    "MB",
    "GB",
    "B",
    "allocate",
    "free",
    "allocate failure",
    "Thread,Time,Action,Pointer,Size,Stream,Id,Location",
    "Thread,Time,Action,Pointer,Size,Stream",
    "0x7f00deadbeef",
    "é",
    "\u{0}",
    "\u{feff}",
];

fn mutate(rng: &mut Rng, input: &[u8], pool: &[Vec<u8>]) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..=rng.below(4) {
        let at = rng.below(out.len() + 1);
        match rng.below(7) {
            0 if !out.is_empty() => {
                let i = rng.below(out.len());
                out[i] ^= 1 << rng.below(8);
            }
            1 => out.insert(at, rng.next() as u8),
            2 if !out.is_empty() => {
                let end = (at + rng.below(8) + 1).min(out.len());
                out.drain(at.min(end)..end);
            }
            3 => {
                let token = DICTIONARY[rng.below(DICTIONARY.len())].as_bytes();
                out.splice(at..at, token.iter().copied());
            }
            4 if !out.is_empty() => {
                let start = rng.below(out.len());
                let end = (start + rng.below(64) + 1).min(out.len());
                let piece = out[start..end].to_vec();
                for _ in 0..=rng.below(3) {
                    out.splice(at..at, piece.iter().copied());
                }
            }
            5 if !pool.is_empty() => {
                let other = &pool[rng.below(pool.len())];
                let from = rng.below(other.len() + 1);
                out.truncate(at);
                out.extend_from_slice(&other[from..]);
            }
            _ => {
                if let Some(digit) = out.iter().position(|b| b.is_ascii_digit()) {
                    out[digit] = b'0' + rng.below(10) as u8;
                }
            }
        }
    }
    out.truncate(1 << 16);
    out
}

/// What an answer looks like, for novelty: accepted, or the error's first words with
/// quoted input and numbers left out (so that the same error about another input is
/// not new).
fn signature<T>(answer: &Result<T, locus::Error>) -> String {
    match answer {
        Ok(_) => "ok".into(),
        Err(e) => {
            let text = e.to_string();
            // The input is quoted between the first and the last backtick (it may hold
            // backticks itself).
            let text = match (text.find('`'), text.rfind('`')) {
                (Some(a), Some(b)) if a < b => format!("{}{}", &text[..a], &text[b + 1..]),
                _ => text,
            };
            let kept: String = text.chars().filter(|c| !c.is_ascii_digit()).collect();
            let words: Vec<&str> = kept.split_whitespace().take(6).collect();
            format!("err {}", words.join(" "))
        }
    }
}

fn corpus_dir(target: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz")
        .join(target)
}

/// Runs `parse` on mutated inputs of `target`'s corpus for the time allowed.
fn fuzz(target: &str, parse: impl Fn(&str) -> String) {
    let seconds: f64 = std::env::var("LOCUS_FUZZ_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2.0);
    let save = std::env::var("LOCUS_FUZZ_SAVE").is_ok_and(|v| v == "1");
    let dir = corpus_dir(target);
    let mut pool: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("the corpus {}: {e}", dir.display()))
        .filter_map(|entry| std::fs::read(entry.ok()?.path()).ok())
        .collect();
    assert!(!pool.is_empty(), "the corpus {} is empty", dir.display());
    // A fixed seed, printed, so that a failure replays: LOCUS_FUZZ_SEED sets another
    // (the wall clock made every run different and none replayable).
    let seed = std::env::var("LOCUS_FUZZ_SEED")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(0x1dea_5eed_2026_1126)
        | 1;
    println!("FUZZ {target}: seed {seed} (LOCUS_FUZZ_SEED={seed} replays it)");
    let mut rng = Rng(seed);
    let mut seen = HashSet::new();
    let current = Arc::new(Mutex::new(Vec::new()));
    let heartbeat = Arc::new(AtomicU64::new(0));
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watchdog = {
        let (current, heartbeat, done) = (current.clone(), heartbeat.clone(), done.clone());
        let target = target.to_string();
        std::thread::spawn(move || {
            let mut last = (u64::MAX, Instant::now());
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(200));
                let beat = heartbeat.load(Ordering::Relaxed);
                if beat != last.0 {
                    last = (beat, Instant::now());
                } else if last.1.elapsed() > Duration::from_secs(10) {
                    let input = current.lock().unwrap_or_else(|e| e.into_inner()).clone();
                    eprintln!(
                        "FUZZ {target}: no answer in 10 s (a hang) for {:?}",
                        String::from_utf8_lossy(&input)
                    );
                    std::process::abort();
                }
            }
        })
    };
    for input in pool.clone() {
        seen.insert(parse(&String::from_utf8_lossy(&input)));
    }
    let start = Instant::now();
    let mut executions = 0u64;
    let mut failures = Vec::new();
    while start.elapsed().as_secs_f64() < seconds {
        let base = &pool[rng.below(pool.len())];
        let input = mutate(&mut rng, base, &pool);
        let text = String::from_utf8_lossy(&input).into_owned();
        *current.lock().unwrap_or_else(|e| e.into_inner()) = input.clone();
        let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| parse(&text)));
        executions += 1;
        heartbeat.store(executions, Ordering::Relaxed);
        match answer {
            Ok(sig) => {
                if seen.insert(sig) {
                    if save {
                        let name = format!("found-{:016x}", rng.next());
                        let _ = std::fs::write(dir.join(name), &input);
                    }
                    pool.push(input);
                }
            }
            Err(_) => failures.push(text),
        }
    }
    done.store(true, Ordering::Relaxed);
    let _ = watchdog.join();
    eprintln!(
        "FUZZ {target}: {executions} executions in {seconds} s, {} distinct answers, pool {} inputs, {} panics (seed {seed})",
        seen.len(),
        pool.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{target}: {} inputs panicked, e.g. {:?}",
        failures.len(),
        &failures[..failures.len().min(3)]
    );
}

#[test]
fn location_strings() {
    fuzz("location", |text| {
        let parsed = text.parse::<Location>();
        if let Ok(location) = &parsed {
            // What parses prints back to a text that parses to the same location.
            assert_eq!(
                location.to_string().parse::<Location>().ok(),
                Some(*location)
            );
        }
        let list = locus::parse_locations(text);
        format!("{} / {}", signature(&parsed), signature(&list))
    });
}

#[test]
fn backend_and_require_lists() {
    let registry = locus::registry();
    fuzz("technologies", |text| {
        let backends = locus::parse_technologies(text);
        let require = registry.require(text);
        format!("{} / {}", signature(&backends), signature(&require))
    });
}

#[test]
fn cli_sizes() {
    fuzz("sizes", |text| {
        let one = locus_cli::bench::parse_size(text);
        if let Ok(bytes) = one {
            assert!(bytes > 0, "a size of 0 accepted from {text:?}");
        }
        let list = locus_cli::bench::parse_sizes(text);
        format!("{} / {}", signature(&one), signature(&list))
    });
}

#[test]
fn replay_logs() {
    // At most 64 MiB live: a log asking for more gets the limit's out-of-memory error,
    // not gigabytes of real memory. Replayed on the limited upstream, and on a pool
    // over it (whose blocks are rounded up).
    let host = locus::resource::upstream(Location::Host).unwrap();
    let limited = Arc::new(Limiting::new(host, 64 << 20));
    let pool = Pool::new(limited.clone(), 1 << 20, 64 << 20);
    fuzz("replay", |text| {
        let direct = locus_cli::replay(text, limited.as_ref());
        assert_eq!(
            limited.used(),
            0,
            "a replay gives back everything it allocated"
        );
        let pooled = locus_cli::replay(text, &pool);
        pool.release();
        assert_eq!(
            limited.used(),
            0,
            "a replay on a pool gives everything back"
        );
        for r in [&direct, &pooled].into_iter().flatten() {
            assert!(r.end_live_bytes <= r.peak_live_bytes);
            assert!(r.end_live_count <= r.peak_live_count);
        }
        format!("{} / {}", signature(&direct), signature(&pooled))
    });
}
