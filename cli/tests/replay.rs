//! `locus replay` and [`locus_cli::replay`]: allocation logs (locus's `Logging`
//! adaptor's, or RMM's) replayed against any resource, at every location.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::sync::Arc;

use locus::resource::{self, MemoryResource, Pool, Statistics};
use locus::{Location, Memory};
use locus_cli::replay;

const MIB: usize = 1 << 20;

#[test]
fn logging_writes_a_log_that_replays() {
    let _serial = common::serial();
    let dir = std::env::temp_dir().join(format!("locus-log-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("allocations.csv");
    let file = std::fs::File::create(&path).unwrap();
    let logging: Arc<dyn MemoryResource> = Arc::new(
        resource::Logging::new(resource::upstream(Location::Host).unwrap(), Box::new(file))
            .unwrap(),
    );
    let mut live = Vec::new();
    for i in 0..200usize {
        if i % 3 == 2 {
            live.swap_remove(i % live.len());
        } else {
            live.push(Memory::from_resource(&logging, 64 * (1 + i % 17)).unwrap());
        }
    }
    drop(live);
    drop(logging);
    let log = std::fs::read_to_string(&path).unwrap();
    assert!(log.starts_with(resource::LOG_HEADER));
    assert_eq!(
        log.lines().count(),
        1 + 2 * 134,
        "a line per allocation and per free"
    );
    // Replay against a pool, in process and through the CLI.
    let pool = Pool::new(resource::upstream(Location::Host).unwrap(), MIB, 64 * MIB);
    let report = replay(&log, &pool).unwrap();
    assert_eq!(report.operations, 2 * 134);
    assert!(report.peak_live_bytes > 0);
    for kind in ["upstream", "pool", "binning"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_locus"))
            .args(["replay"])
            .arg(&path)
            .args(["--resource", kind])
            .env("XDG_RUNTIME_DIR", "/tmp")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{kind}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            text.contains("replayed 268 operations") && text.contains("peak footprint"),
            "{text}"
        );
    }
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "not,a,log\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_locus"))
        .args(["replay"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not an allocation log"));
    // An endless or binary file is refused at once (before, /dev/zero was read until
    // memory ran out), and so is one over --max-log-bytes.
    for (file, limit, says) in [
        ("/dev/zero".into(), "4GiB", "holds NUL bytes"),
        (path.clone(), "100", "longer than 100 bytes"),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_locus"))
            .args(["replay", "--max-log-bytes", limit])
            .arg(&file)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(says), "{stderr}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A log written on each location replays with the original peak and live set, on that
/// location and on the host: every block has its own id on every technology. (Before,
/// every block from a device upstream logged id 0, so a replay paired frees with the
/// wrong allocations: the peak and live set came out wrong off the host.)
#[test]
fn logs_written_on_every_location_replay_their_peak_and_live_set() {
    let required = common::required_locations();
    let _serial = common::serial();
    let dir = std::env::temp_dir().join(format!("locus-logs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for l in required {
        let path = dir.join(format!("{}.csv", l.to_string().replace(':', "_")));
        let counted = Arc::new(Statistics::new(resource::upstream(l).unwrap()));
        let logging: Arc<dyn MemoryResource> =
            Arc::new(resource::Logging::to_file(counted.clone(), &path).unwrap());
        let queue = locus::Queue::new();
        let mut live = Vec::new();
        let mut state = 12345u64;
        for i in 0..120usize {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let pick = (state >> 33) as usize;
            if pick % 5 < 2 && !live.is_empty() {
                live.swap_remove(pick % live.len());
            } else {
                let bytes = 64 * (1 + pick % 29) + i;
                let m = if i % 4 == 0 {
                    Memory::from_resource_on(&logging, bytes, queue).unwrap()
                } else {
                    Memory::from_resource(&logging, bytes).unwrap()
                };
                live.push(m);
            }
        }
        let original = counted.totals();
        drop(logging);
        let log = std::fs::read_to_string(&path).unwrap();
        assert!(log.starts_with(resource::LOG_HEADER), "{l}");
        let streams = log
            .lines()
            .filter(|line| line.split(',').nth(5) == Some(&queue.id().to_string()))
            .count();
        assert!(streams > 0, "{l}: the Stream column names the queue");
        for target in [l, Location::Host] {
            let replayed = Statistics::new(resource::upstream(target).unwrap());
            let report = replay(&log, &replayed).unwrap();
            assert_eq!(
                report.peak_live_bytes, original.peak_bytes,
                "{l} on {target}: peak"
            );
            assert_eq!(
                report.peak_live_count, original.peak_count,
                "{l} on {target}"
            );
            assert_eq!(
                report.end_live_bytes, original.current_bytes,
                "{l} on {target}: live set"
            );
            assert_eq!(
                report.end_live_count, original.current_count,
                "{l} on {target}"
            );
            assert_eq!(
                replayed.totals().peak_bytes,
                original.peak_bytes,
                "{l} on {target}"
            );
            assert_eq!(
                replayed.totals().current_bytes,
                0,
                "{l}: the replay gives all back"
            );
        }
        drop(live);
    }
}

/// A replay that fails half-way gives back everything it holds; an id allocated twice
/// is an error, not a silent leak.
#[test]
fn a_failed_replay_gives_everything_back() {
    let _serial = common::serial();
    let counted = Statistics::new(resource::upstream(Location::Host).unwrap());
    let header = resource::LOG_HEADER;
    let twice = format!("{header}\nT,1,allocate,0x10,64,0,1,host\nT,2,allocate,0x20,64,0,1,host\n");
    let err = replay(&twice, &counted).unwrap_err();
    assert!(err.to_string().contains("allocated again"), "{err}");
    let broken =
        format!("{header}\nT,1,allocate,0x10,64,0,1,host\nT,2,allocate,0x20,lots,0,2,host\n");
    assert!(replay(&broken, &counted).is_err());
    assert_eq!(counted.totals().current_bytes, 0, "nothing kept");
    // An RMM log (no Id column) pairs by pointer.
    let rmm = "Thread,Time,Action,Pointer,Size,Stream\n1,08:00:00.1,allocate,0x7f00,4096,0x0\n1,08:00:00.2,allocate,0x8f00,100,0x0\n1,08:00:00.3,free,0x7f00,4096,0x0\n";
    let report = replay(rmm, &counted).unwrap();
    assert_eq!((report.peak_live_bytes, report.end_live_bytes), (4196, 100));
}

/// An RMM-written log with three threads and two streams besides the default replays
/// as RMM's replay benchmark does: each thread's events on a thread of its own, in the
/// log's order, the streams on queues of their own. On the code before, `Thread` and
/// `Stream` were ignored (one thread, no queues).
#[test]
fn an_rmm_log_with_several_threads_and_streams_replays_on_each() {
    let _serial = common::serial();
    let rmm = "Thread,Time,Action,Pointer,Size,Stream\n\
        140001,08:00:00.000100,allocate,0x7f0000001000,4096,0x0\n\
        140002,08:00:00.000200,allocate,0x7f0000002000,1000,0x55d0c0de0010\n\
        140003,08:00:00.000300,allocate,0x7f0000003000,300,0x55d0c0de0020\n\
        140002,08:00:00.000400,free,0x7f0000001000,4096,0x55d0c0de0010\n\
        140001,08:00:00.000500,allocate,0x7f0000001000,200,0x0\n\
        140003,08:00:00.000600,free,0x7f0000002000,1000,0x55d0c0de0020\n\
        140003,08:00:00.000700,allocate failure,0x0,99999999999,0x0\n";
    let counted = Statistics::new(resource::upstream(Location::Host).unwrap());
    let report = replay(rmm, &counted).unwrap();
    assert_eq!((report.threads, report.streams), (3, 2));
    assert_eq!(report.operations, 6);
    assert_eq!(
        (
            report.peak_live_bytes,
            report.end_live_bytes,
            report.end_live_count
        ),
        (5396, 500, 2)
    );
    assert_eq!(counted.totals().current_bytes, 0, "everything given back");
}
