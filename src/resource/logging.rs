//! [`Logging`]: a CSV line per allocation and free (RMM's `logging_resource_adaptor`), and [`replay`], which replays such a log against any resource.

use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::{Block, MemoryResource};
use crate::core::error::{Error, Result};
use crate::core::location::Location;

/// Writes a CSV line per allocation and free: `thread,time_ns,action,id,address,size,location`.
/// `locus replay` replays such a file against any resource and location.
pub struct Logging {
    inner: Arc<dyn MemoryResource>,
    out: Mutex<Box<dyn Write + Send>>,
    start: Instant,
    ids: Mutex<LogIds>,
}

/// The logging adaptor's own ids: the last one given, and (block id, address) -> id.
type LogIds = (u64, HashMap<(u64, u64), u64>);

/// The CSV header `Logging` writes first.
pub const LOG_HEADER: &str = "thread,time_ns,action,id,address,size,location";

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

    fn line(&self, action: &str, id: u64, block: &Block) {
        let address = match &block.native {
            crate::core::native::Native::Host { ptr } => format!("{:p}", *ptr),
            #[allow(unreachable_patterns)]
            other => format!("{other:?}").replace(',', ";"),
        };
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let _ = writeln!(
            out,
            "{:?},{},{action},{id},{address},{},{}",
            std::thread::current().id(),
            self.start.elapsed().as_nanos(),
            block.bytes,
            block.location
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
        let block = self.inner.allocate(bytes, align)?;
        let id = {
            let mut ids = self.ids.lock().unwrap_or_else(|e| e.into_inner());
            ids.0 += 1;
            let id = ids.0;
            ids.1.insert((block.id, addr(&block)), id);
            id
        };
        self.line("allocate", id, &block);
        Ok(block)
    }
    fn deallocate(&self, block: Block) {
        let id = self
            .ids
            .lock()
            .map(|mut ids| ids.1.remove(&(block.id, addr(&block))).unwrap_or(0))
            .unwrap_or(0);
        self.line("free", id, &block);
        self.inner.deallocate(block);
    }
}

fn addr(block: &Block) -> u64 {
    match &block.native {
        crate::core::native::Native::Host { ptr } => *ptr as u64,
        #[allow(unreachable_patterns)]
        _ => 0,
    }
}

/// What a replay measured.
#[derive(Debug, Clone, Copy)]
pub struct ReplayReport {
    /// Allocations and frees replayed.
    pub operations: usize,
    /// Wall time of the replay.
    pub seconds: f64,
    /// Most bytes live at once during the replay.
    pub peak_live_bytes: usize,
}

/// Replays a `Logging` CSV against `resource`: every allocation and free in order.
pub fn replay(log: &str, resource: &dyn MemoryResource) -> Result<ReplayReport> {
    let mut lines = log.lines();
    match lines.next() {
        Some(h) if h.trim() == LOG_HEADER => {}
        _ => {
            return Err(Error::Invalid(format!(
                "not a locus allocation log: the first line must be `{LOG_HEADER}`"
            )))
        }
    }
    let mut live: HashMap<u64, Block> = HashMap::new();
    let (mut bytes, mut peak, mut ops) = (0usize, 0usize, 0usize);
    let start = Instant::now();
    for (n, line) in lines.enumerate() {
        let fields: Vec<&str> = line.split(',').collect();
        let bad = || {
            Error::Invalid(format!(
                "allocation log line {}: cannot read `{line}`",
                n + 2
            ))
        };
        if fields.len() < 7 {
            return Err(bad());
        }
        let id: u64 = fields[3].parse().map_err(|_| bad())?;
        let size: usize = fields[5].parse().map_err(|_| bad())?;
        match fields[2] {
            "allocate" => {
                live.insert(id, resource.allocate(size, crate::core::device::ALIGNMENT)?);
                bytes += size;
                peak = peak.max(bytes);
            }
            "free" => {
                if let Some(b) = live.remove(&id) {
                    bytes -= b.bytes();
                    resource.deallocate(b);
                }
            }
            _ => return Err(bad()),
        }
        ops += 1;
    }
    for (_, b) in live.drain() {
        resource.deallocate(b);
    }
    Ok(ReplayReport {
        operations: ops,
        seconds: start.elapsed().as_secs_f64(),
        peak_live_bytes: peak,
    })
}
