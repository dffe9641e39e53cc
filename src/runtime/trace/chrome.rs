//! [`ChromeTrace`]: the trace written as the Chrome trace event format (a JSON array),
//! which Perfetto (<https://ui.perfetto.dev>) and `chrome://tracing` open.
//!
//! One track per host thread and one per device queue; copies, launches and waits are
//! complete events (`"ph": "X"`) with their route, path and bytes in `args`, coloured
//! by route; allocations and frees are instant events (`"ph": "i"`) with their id, and a
//! counter (`"ph": "C"`) per location and source shows the bytes held. Each event is one
//! write to the file, so the file up to a crash is readable: the format lets the closing
//! `]` be missing.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{json, Value};

use crate::core::error::{Error, Result};
use crate::core::location::Location;
use crate::core::trace::{
    self, micros_between, micros_since_epoch, SinkHandle, TraceEvent, TraceSink, Track,
};

/// The file and what the writer knows so far.
struct Writer {
    path: PathBuf,
    /// `None` once closed, or after a write failed (warned once).
    file: Option<File>,
    /// Whether an event was written (the next one is preceded by a comma).
    wrote: bool,
    /// Bytes of the file written whole (a write that fails part way is cut back to it).
    good: u64,
    /// Track ids of device queues, from 1_000_000 up.
    queues: HashMap<Location, u64>,
    /// Host threads named so far (their `thread_name` metadata written).
    threads: HashSet<u64>,
    /// Bytes held per counter name (location and source).
    held: HashMap<String, i64>,
}

/// The Chrome trace sink: events go to its file from [`ChromeTrace::create`] until it is
/// [finished](ChromeTrace::finish) or dropped.
pub struct ChromeTrace {
    writer: Arc<Mutex<Writer>>,
    sink: Option<SinkHandle>,
}

impl std::fmt::Debug for ChromeTrace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        f.debug_struct("ChromeTrace")
            .field("path", &w.path)
            .finish()
    }
}

struct Sink(Arc<Mutex<Writer>>);

thread_local! {
    /// This thread's track id (a small number, from 1).
    static THREAD_TRACK: u64 = {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    };
}

/// The trace viewer's reserved colour for a route kind (by its name).
fn colour_of(route: &str) -> &'static str {
    match route {
        "direct" => "good",
        "peer" => "olive",
        "mapped" => "yellow",
        "staged" => "terrible",
        _ => "grey",
    }
}

impl Writer {
    /// Writes `event` as one write (after a comma when one came before); a failure is
    /// warned once and ends the trace, never the program.
    fn write(&mut self, event: &Value) {
        self.write_text(&event.to_string());
    }

    /// [`Writer::write`] of an event already formatted.
    fn write_text(&mut self, event: &str) {
        let Some(file) = self.file.as_mut() else {
            return;
        };
        let text = if self.wrote {
            format!(",\n{event}")
        } else {
            event.to_string()
        };
        match file.write_all(text.as_bytes()) {
            Ok(()) => {
                self.wrote = true;
                self.good += text.len() as u64;
            }
            Err(e) => {
                // A disk full part way through an event: the file keeps its whole
                // events only, so it still opens (as a trace cut short).
                let _ = file.set_len(self.good);
                eprintln!(
                    "locus: warning: the trace file {} could not be written ({e}); the trace stops here and the program goes on",
                    self.path.display()
                );
                self.file = None;
            }
        }
    }

    /// The track the event ran on, named in the file the first time it is used.
    fn track(&mut self, track: Track, pid: u32) -> u64 {
        match track {
            Track::Thread => {
                let tid = THREAD_TRACK.with(|t| *t);
                if self.threads.insert(tid) {
                    let name = std::thread::current()
                        .name()
                        .map_or_else(|| format!("thread {tid}"), str::to_string);
                    let meta = json!({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                        "args": {"name": name}});
                    self.write(&meta);
                }
                tid
            }
            Track::Queue(location) => {
                let next = 1_000_000 + self.queues.len() as u64;
                let tid = *self.queues.entry(location).or_insert(next);
                if tid == next {
                    let meta = json!({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                        "args": {"name": format!("{location} queue")}});
                    self.write(&meta);
                }
                tid
            }
        }
    }

    /// Adds `delta` to the bytes `location`'s `source` holds, and writes the counter.
    fn count(&mut self, location: Location, source: &str, delta: i64, at: f64, pid: u32) {
        let name = format!("{location} {source}");
        let held = self.held.entry(name.clone()).or_insert(0);
        *held += delta;
        let value = *held;
        let tid = self.track(Track::Thread, pid);
        self.write(
            &json!({"name": name, "cat": "memory", "ph": "C", "ts": at, "pid": pid,
            "tid": tid, "args": {"bytes": value}}),
        );
    }
}

/// `text` as a JSON string.
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| String::from("\"?\""))
}

impl TraceSink for Sink {
    fn event(&self, event: &TraceEvent<'_>) {
        let pid = std::process::id();
        let now = micros_since_epoch(Instant::now());
        let mut w = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if w.file.is_none() {
            return;
        }
        // Formatted by hand (a `Value` built per event costs more than the copy it
        // describes); free text goes through `quoted`.
        match *event {
            TraceEvent::Allocated {
                id,
                location,
                bytes,
                kind,
                source,
            } => {
                let tid = w.track(Track::Thread, pid);
                w.write_text(&format!(
                    r#"{{"name":"allocate","cat":"memory","ph":"i","s":"t","ts":{now:.3},"pid":{pid},"tid":{tid},"args":{{"id":{id},"location":"{location}","bytes":{bytes},"kind":"{}","source":{}}}}}"#,
                    kind.name(),
                    quoted(source)
                ));
                w.count(location, source, bytes as i64, now, pid);
            }
            TraceEvent::Freed {
                id,
                location,
                bytes,
                source,
            } => {
                let tid = w.track(Track::Thread, pid);
                w.write_text(&format!(
                    r#"{{"name":"free","cat":"memory","ph":"i","s":"t","ts":{now:.3},"pid":{pid},"tid":{tid},"args":{{"id":{id},"location":"{location}","bytes":{bytes},"source":{}}}}}"#,
                    quoted(source)
                ));
                w.count(location, source, -(bytes as i64), now, pid);
            }
            TraceEvent::CopyBegan { .. } => {}
            TraceEvent::Copied {
                ok,
                src,
                dst,
                bytes,
                route,
                path,
                track,
                start,
                end,
                ..
            } => {
                let tid = w.track(track, pid);
                let route = route.name();
                w.write_text(&format!(
                    r#"{{"name":"{src} -> {dst}","cat":"copy,{route}","ph":"X","ts":{:.3},"dur":{:.3},"pid":{pid},"tid":{tid},"cname":"{}","args":{{"src":"{src}","dst":"{dst}","bytes":{bytes},"route":"{route}","path":{},"queued":{},"ok":{ok}}}}}"#,
                    micros_since_epoch(start),
                    micros_between(start, end),
                    colour_of(route),
                    quoted(path),
                    matches!(track, Track::Queue(_)),
                ));
            }
            TraceEvent::Launched {
                location,
                kernel,
                start,
                end,
            } => {
                let tid = w.track(Track::Thread, pid);
                w.write_text(&format!(
                    r#"{{"name":{},"cat":"kernel","ph":"X","ts":{:.3},"dur":{:.3},"pid":{pid},"tid":{tid},"args":{{"location":"{location}"}}}}"#,
                    quoted(kernel),
                    micros_since_epoch(start),
                    micros_between(start, end)
                ));
            }
            TraceEvent::Waited { start, end } => {
                let tid = w.track(Track::Thread, pid);
                w.write_text(&format!(
                    r#"{{"name":"wait","cat":"wait","ph":"X","ts":{:.3},"dur":{:.3},"pid":{pid},"tid":{tid}}}"#,
                    micros_since_epoch(start),
                    micros_between(start, end)
                ));
            }
        }
    }
}

impl ChromeTrace {
    /// Starts a trace in a new file at `path` (replacing one there); every event from now
    /// on goes to it. An error names the path when the file cannot be made.
    pub fn create(path: impl AsRef<Path>) -> Result<ChromeTrace> {
        let path = path.as_ref().to_path_buf();
        let mut file = File::create(&path).map_err(|e| {
            Error::Invalid(format!(
                "the trace file {} could not be made ({e}); name a file in a directory you can write",
                path.display()
            ))
        })?;
        // The epoch first: every time in the file counts from it.
        let _ = trace::epoch();
        file.write_all(b"[\n").map_err(|e| {
            Error::Invalid(format!(
                "the trace file {} could not be written ({e})",
                path.display()
            ))
        })?;
        let writer = Arc::new(Mutex::new(Writer {
            path,
            file: Some(file),
            wrote: false,
            good: 2,
            queues: HashMap::new(),
            threads: HashSet::new(),
            held: HashMap::new(),
        }));
        let pid = std::process::id();
        writer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .write(&json!({"name": "process_name", "ph": "M", "pid": pid,
                "args": {"name": format!("locus (process {pid})")}}));
        let sink = trace::add_sink(Arc::new(Sink(Arc::clone(&writer))));
        Ok(ChromeTrace {
            writer,
            sink: Some(sink),
        })
    }

    /// The file's path.
    pub fn path(&self) -> PathBuf {
        self.writer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .path
            .clone()
    }

    /// Stops tracing and closes the array; an error when the end could not be written.
    pub fn finish(mut self) -> Result<()> {
        self.close()
    }

    fn close(&mut self) -> Result<()> {
        drop(self.sink.take());
        let mut w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let path = w.path.clone();
        match w.file.take() {
            Some(mut file) => file.write_all(b"\n]\n").map_err(|e| {
                Error::Invalid(format!(
                    "the end of the trace file {} could not be written ({e})",
                    path.display()
                ))
            }),
            None => Ok(()),
        }
    }
}

impl Drop for ChromeTrace {
    fn drop(&mut self) {
        if let Err(e) = self.close() {
            eprintln!("locus: warning: {e}");
        }
    }
}
