//! [`Logging`]: a CSV line per allocation and free with RMM's columns (RMM's
//! `logging_resource_adaptor`), and [`replay`], which replays such a log (or one RMM
//! wrote) against any resource.

use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::{Block, MemoryResource};
use crate::core::error::{Error, Result};
use crate::core::location::Location;
use crate::runtime::event::Event;
use crate::runtime::queue::Queue;

/// The CSV header [`Logging`] writes first: RMM's six columns, then locus's `Id` (a
/// number unique in the log, for pairing a free with its allocation on every
/// technology) and `Location`.
///
/// - `Thread`: the thread that called; `Time`: nanoseconds since the adaptor was made;
/// - `Action`: `allocate`, `allocate failure` or `free`;
/// - `Pointer`: the block's address ([`Native::address`](crate::Native::address));
///   for OpenCL and WebGPU, whose device addresses are not visible, the buffer object
///   and the offset inside it (`0x<object>+0x<offset>`);
/// - `Size`: bytes; `Stream`: the [`Queue`] the allocation or free was ordered on
///   (0: none, like RMM's default stream).
pub const LOG_HEADER: &str = "Thread,Time,Action,Pointer,Size,Stream,Id,Location";

/// The environment variable that names the log file of [`Logging::from_env`] (RMM's
/// `RMM_LOG_FILE`).
pub const LOG_FILE_VARIABLE: &str = "LOCUS_LOG_FILE";

/// Writes a CSV line ([`LOG_HEADER`]) per allocation and free of the resource it wraps.
/// `locus replay` replays such a file against any resource and location.
pub struct Logging {
    inner: Arc<dyn MemoryResource>,
    out: Mutex<Box<dyn Write + Send>>,
    start: Instant,
    ids: Mutex<LogIds>,
}

/// The last id given, and each live block's id by its handle's key.
type LogIds = (u64, HashMap<(u64, u64), u64>);

impl Logging {
    /// Wraps `inner`, writing to `out` (the header first).
    pub fn new(inner: Arc<dyn MemoryResource>, mut out: Box<dyn Write + Send>) -> Result<Logging> {
        writeln!(out, "{LOG_HEADER}")
            .map_err(|e| Error::Invalid(format!("writing the allocation log: {e}")))?;
        Ok(Logging {
            inner,
            out: Mutex::new(out),
            start: Instant::now(),
            ids: Mutex::new((0, HashMap::new())),
        })
    }

    /// Wraps `inner`, writing to the file at `path` (created, or emptied).
    pub fn to_file(
        inner: Arc<dyn MemoryResource>,
        path: impl AsRef<std::path::Path>,
    ) -> Result<Logging> {
        let path = path.as_ref();
        let file = std::fs::File::create(path).map_err(|e| {
            Error::Invalid(format!(
                "{}: cannot create the allocation log {}: {e}",
                inner.location(),
                path.display()
            ))
        })?;
        Logging::new(inner, Box::new(std::io::BufWriter::new(file)))
    }

    /// Wraps `inner`, writing to the file that `LOCUS_LOG_FILE` names (RMM's
    /// `RMM_LOG_FILE`); an error naming the variable when it is unset.
    pub fn from_env(inner: Arc<dyn MemoryResource>) -> Result<Logging> {
        match std::env::var_os(LOG_FILE_VARIABLE) {
            Some(path) if !path.is_empty() => Logging::to_file(inner, path),
            _ => Err(Error::Invalid(format!(
                "{}: {LOG_FILE_VARIABLE} is not set; set it to the path of the allocation log, or use Logging::to_file",
                inner.location()
            ))),
        }
    }

    /// Gives `block` a new id and logs its allocation.
    fn allocated(&self, block: Result<Block>, bytes: usize, queue: Option<Queue>) -> Result<Block> {
        let block = match block {
            Ok(block) => block,
            Err(e) => {
                self.line("allocate failure", None, bytes, queue, 0);
                return Err(e);
            }
        };
        let id = {
            let mut ids = self.ids.lock().unwrap_or_else(|e| e.into_inner());
            ids.0 += 1;
            let id = ids.0;
            ids.1.insert(block.native.key(), id);
            id
        };
        self.line("allocate", Some(&block), block.bytes, queue, id);
        Ok(block)
    }

    /// Logs the free of `block` (its id: 0 for a block this adaptor did not hand out).
    fn freed(&self, block: &Block, queue: Option<Queue>) {
        let id = (self.ids.lock().unwrap_or_else(|e| e.into_inner()).1)
            .remove(&block.native.key())
            .unwrap_or(0);
        self.line("free", Some(block), block.bytes, queue, id);
    }

    fn line(
        &self,
        action: &str,
        block: Option<&Block>,
        size: usize,
        queue: Option<Queue>,
        id: u64,
    ) {
        let pointer = match block.map(|b| b.native.key()) {
            None => "0x0".to_string(),
            Some((0, address)) => format!("{address:#x}"),
            Some((object, offset)) => format!("{object:#x}+{offset:#x}"),
        };
        let stream = queue.map_or(0, Queue::id);
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let _ = writeln!(
            out,
            "{:?},{},{action},{pointer},{size},{stream},{id},{}",
            std::thread::current().id(),
            self.start.elapsed().as_nanos(),
            self.inner.location()
        );
        let _ = out.flush();
    }
}

impl MemoryResource for Logging {
    fn location(&self) -> Location {
        self.inner.location()
    }
    fn describe(&self) -> String {
        format!("logging({})", self.inner.describe())
    }
    fn allocate(&self, bytes: usize, align: usize) -> Result<Block> {
        self.allocated(self.inner.allocate(bytes, align), bytes, None)
    }
    fn allocate_on(&self, bytes: usize, align: usize, queue: Queue) -> Result<Block> {
        self.allocated(
            self.inner.allocate_on(bytes, align, queue),
            bytes,
            Some(queue),
        )
    }
    fn deallocate(&self, block: Block) {
        self.freed(&block, None);
        self.inner.deallocate(block);
    }
    fn deallocate_after(&self, block: Block, queue: Queue, event: Event) {
        self.freed(&block, Some(queue));
        self.inner.deallocate_after(block, queue, event);
    }
}

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
}

/// The columns a replay reads, by position.
struct Columns {
    action: usize,
    size: usize,
    /// `Id` when the log has it (locus), else `Pointer` (RMM).
    key: usize,
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
                "not an allocation log: the first line must name the columns Action, Size and Id or Pointer (locus writes `{LOG_HEADER}`); it is `{header}`"
            ))
        };
        Ok(Columns {
            action: find("action").ok_or_else(bad)?,
            size: find("size").ok_or_else(bad)?,
            key: find("id").or_else(|| find("pointer")).ok_or_else(bad)?,
            count: names.len(),
        })
    }
}

/// The blocks a replay holds; every one goes back to the resource however the replay
/// ends.
struct Live<'a> {
    resource: &'a dyn MemoryResource,
    blocks: HashMap<String, (Block, usize)>,
}

impl Drop for Live<'_> {
    fn drop(&mut self) {
        for (_, (b, _)) in self.blocks.drain() {
            self.resource.deallocate(b);
        }
    }
}

/// Replays an allocation log against `resource`: every allocation and free in order,
/// paired by `Id` (locus's logs) or `Pointer` (RMM's). Blocks the log never frees are
/// given back at the end; on an error (an unreadable line, an id allocated twice, a
/// failed allocation) everything the replay holds is given back first.
pub fn replay(log: &str, resource: &dyn MemoryResource) -> Result<ReplayReport> {
    let mut lines = log.lines();
    let columns = Columns::of(lines.next().unwrap_or(""))?;
    let mut live = Live {
        resource,
        blocks: HashMap::new(),
    };
    let (mut bytes, mut peak, mut peak_count, mut ops) = (0usize, 0usize, 0usize, 0usize);
    let start = Instant::now();
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
        let key = fields[columns.key];
        match fields[columns.action] {
            "allocate" => {
                let size: usize = fields[columns.size]
                    .parse()
                    .map_err(|_| bad("the size is not a number"))?;
                if live.blocks.contains_key(key) {
                    return Err(bad("allocated again before it was freed"));
                }
                let block = resource.allocate(size, crate::core::device::ALIGNMENT)?;
                live.blocks.insert(key.to_string(), (block, size));
                bytes = bytes.saturating_add(size);
                peak = peak.max(bytes);
                peak_count = peak_count.max(live.blocks.len());
            }
            "free" => {
                // The size the log asked for, not the block's (a resource may round up).
                if let Some((b, size)) = live.blocks.remove(key) {
                    bytes = bytes.saturating_sub(size);
                    resource.deallocate(b);
                }
            }
            "allocate failure" => continue,
            _ => return Err(bad("the action is not allocate, allocate failure or free")),
        }
        ops += 1;
    }
    let end_live_count = live.blocks.len();
    drop(live);
    Ok(ReplayReport {
        operations: ops,
        seconds: start.elapsed().as_secs_f64(),
        peak_live_bytes: peak,
        peak_live_count: peak_count,
        end_live_bytes: bytes,
        end_live_count,
    })
}
