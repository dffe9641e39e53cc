//! [`replay`]: an allocation log (locus's, or one RMM's `logging_resource_adaptor`
//! wrote) replayed against any resource, as RMM's replay benchmark does: each logged
//! thread's events on a thread of its own, in the log's order across threads, each on
//! a queue standing for its logged stream.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Condvar, Mutex};
use std::time::Instant;

use locus::resource::{Block, MemoryResource};
use locus::{Error, Event, Queue, Result};

/// The most threads a replay starts: a log naming more shares them out (a fuzzed or
/// corrupt log may name a thread per line).
const MAX_THREADS: usize = 64;

/// What a replay measured.
#[derive(Debug, Clone, Copy)]
pub struct ReplayReport {
    /// Allocations and frees replayed (failed allocations in the log are skipped).
    pub operations: usize,
    /// Wall time of the replay.
    pub seconds: f64,
    /// Most bytes live at once during the replay.
    pub peak_live_bytes: usize,
    /// Most allocations live at once.
    pub peak_live_count: usize,
    /// Bytes still live at the end of the log (given back after the replay).
    pub end_live_bytes: usize,
    /// Allocations still live at the end of the log.
    pub end_live_count: usize,
    /// Threads the log names (each replayed on a thread of its own; 1 when the log has
    /// no `Thread` column).
    pub threads: usize,
    /// Streams the log names besides the default (each replayed on a queue of its own).
    pub streams: usize,
}

/// The columns a replay reads, by position.
struct Columns {
    action: usize,
    size: usize,
    /// `Id` when the log has it (locus), else `Pointer` (RMM).
    key: usize,
    thread: Option<usize>,
    stream: Option<usize>,
    count: usize,
}

impl Columns {
    /// Finds the columns by name (any case): a locus log (this header or the one before
    /// it, `thread,time_ns,action,id,address,size,location`) or an RMM log
    /// (`Thread,Time,Action,Pointer,Size,Stream`).
    fn of(header: &str) -> Result<Columns> {
        let names: Vec<String> = header
            .split(',')
            .map(|c| c.trim().to_ascii_lowercase())
            .collect();
        let find = |name: &str| names.iter().position(|n| n == name);
        let bad = || {
            Error::Invalid(format!(
                "not an allocation log: the first line must name the columns Action, Size and Id or Pointer (locus writes `{}`); it is `{header}`",
                locus::resource::LOG_HEADER
            ))
        };
        Ok(Columns {
            action: find("action").ok_or_else(bad)?,
            size: find("size").ok_or_else(bad)?,
            key: find("id").or_else(|| find("pointer")).ok_or_else(bad)?,
            thread: find("thread"),
            stream: find("stream"),
            count: names.len(),
        })
    }
}

/// One logged allocation or free.
struct Op {
    allocate: bool,
    key: String,
    size: usize,
    stream: String,
}

/// What the replaying threads share: the next event to run (the log's order), the
/// live blocks, and the counts.
struct Shared {
    next: usize,
    blocks: HashMap<String, (Block, usize)>,
    bytes: usize,
    peak: usize,
    peak_count: usize,
    failed: Option<Error>,
}

/// Reads the log's events, in order, each with the thread it names.
fn parse(log: &str) -> Result<Vec<(String, Op)>> {
    let mut lines = log.lines();
    let columns = Columns::of(lines.next().unwrap_or(""))?;
    let mut ops = Vec::new();
    for (n, line) in lines.enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let bad =
            |why: &str| Error::Invalid(format!("allocation log line {}: {why}: `{line}`", n + 2));
        if fields.len() < columns.count {
            return Err(bad("too few columns"));
        }
        let allocate = match fields[columns.action] {
            "allocate" => true,
            "free" => false,
            "allocate failure" => continue,
            _ => return Err(bad("the action is not allocate, allocate failure or free")),
        };
        let size = fields[columns.size]
            .parse()
            .map_err(|_| bad("the size is not a number"))?;
        let at = |c: Option<usize>| c.map_or("0", |c| fields[c]).to_string();
        ops.push((
            at(columns.thread),
            Op {
                allocate,
                key: fields[columns.key].to_string(),
                size,
                stream: at(columns.stream),
            },
        ));
    }
    Ok(ops)
}

/// Replays an allocation log against `resource`: every allocation and free in the log's
/// order, each on a thread standing for the logged `Thread` and, for a `Stream` other
/// than 0, on a queue standing for it (stream-ordered allocations and frees), paired by
/// `Id` (locus's logs) or `Pointer` (RMM's). Blocks the log never frees are given back
/// at the end; on an error (an unreadable line, a block allocated twice, a failed
/// allocation) everything the replay holds is given back first.
pub fn replay(log: &str, resource: &dyn MemoryResource) -> Result<ReplayReport> {
    let ops = parse(log)?;
    let mut threads: BTreeMap<&str, usize> = BTreeMap::new();
    let mut by_thread: Vec<Vec<usize>> = Vec::new();
    let mut queues: HashMap<&str, Queue> = HashMap::new();
    for (i, (thread, op)) in ops.iter().enumerate() {
        let next = threads.len();
        let worker = *threads.entry(thread).or_insert(next) % MAX_THREADS;
        if worker == by_thread.len() {
            by_thread.push(Vec::new());
        }
        by_thread[worker].push(i);
        if op.stream != "0" && op.stream != "0x0" {
            queues.entry(op.stream.as_str()).or_default();
        }
    }
    let shared = Mutex::new(Shared {
        next: 0,
        blocks: HashMap::new(),
        bytes: 0,
        peak: 0,
        peak_count: 0,
        failed: None,
    });
    let turn = Condvar::new();
    let start = Instant::now();
    std::thread::scope(|scope| {
        for indices in &by_thread {
            let (shared, turn, ops, queues) = (&shared, &turn, &ops, &queues);
            let spawned = std::thread::Builder::new().spawn_scoped(scope, move || {
                for &i in indices {
                    let mut state = shared.lock().unwrap_or_else(|e| e.into_inner());
                    while state.next != i && state.failed.is_none() {
                        state = turn.wait(state).unwrap_or_else(|e| e.into_inner());
                    }
                    if state.failed.is_none() {
                        let op = &ops[i].1;
                        let queue = queues.get(op.stream.as_str()).copied();
                        if let Err(e) = run(resource, &mut state, op, queue, i) {
                            state.failed = Some(e);
                        }
                    }
                    state.next = i + 1;
                    turn.notify_all();
                }
            });
            if let Err(e) = spawned {
                // The other threads stop waiting for this one's events.
                let mut state = shared.lock().unwrap_or_else(|e| e.into_inner());
                state.failed = Some(Error::Invalid(format!(
                    "replay: could not start a thread for the log's threads: {e}"
                )));
                turn.notify_all();
            }
        }
    });
    let mut state = shared.into_inner().unwrap_or_else(|e| e.into_inner());
    let end_live_count = state.blocks.len();
    for (_, (block, _)) in state.blocks.drain() {
        resource.deallocate(block);
    }
    if let Some(e) = state.failed {
        return Err(e);
    }
    Ok(ReplayReport {
        operations: ops.len(),
        seconds: start.elapsed().as_secs_f64(),
        peak_live_bytes: state.peak,
        peak_live_count: state.peak_count,
        end_live_bytes: state.bytes,
        end_live_count,
        threads: threads.len().max(1),
        streams: queues.len(),
    })
}

/// Runs one event (number `i` of the log) on the calling thread.
fn run(
    resource: &dyn MemoryResource,
    state: &mut Shared,
    op: &Op,
    queue: Option<Queue>,
    i: usize,
) -> Result<()> {
    if op.allocate {
        if state.blocks.contains_key(&op.key) {
            return Err(Error::Invalid(format!(
                "allocation log event {}: `{}` allocated again before it was freed",
                i + 1,
                op.key
            )));
        }
        let align = locus::ALIGNMENT;
        let block = match queue {
            Some(q) => resource.allocate_on(op.size, align, q)?,
            None => resource.allocate(op.size, align)?,
        };
        state.blocks.insert(op.key.clone(), (block, op.size));
        state.bytes = state.bytes.saturating_add(op.size);
        state.peak = state.peak.max(state.bytes);
        state.peak_count = state.peak_count.max(state.blocks.len());
    } else if let Some((block, size)) = state.blocks.remove(&op.key) {
        // The size the log asked for, not the block's (a resource may round up).
        state.bytes = state.bytes.saturating_sub(size);
        match queue {
            Some(q) => resource.deallocate_after(block, q, Event::done()),
            None => resource.deallocate(block),
        }
    }
    Ok(())
}
