//! [`Logging`]: a CSV line per allocation and free with RMM's columns and formats (RMM's
//! `logging_resource_adaptor`); `locus replay` (the command-line tool) replays such a log (or one RMM wrote).

use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex};

use crate::core::block::Block;
use crate::core::error::{Error, Result};
use crate::core::location::Location;
use crate::resource::MemoryResource;
use crate::runtime::event::Event;
use crate::runtime::queue::Queue;

/// The CSV header [`Logging`] writes first: RMM's six columns, in RMM's formats (RMM's
/// `log_parser.hpp` reads a locus log, and `locus replay` an RMM one), then locus's
/// `Id` (a number unique in the log) and `Location`.
///
/// - `Thread`: the operating system's id of the calling thread (an integer, as RMM's
///   `%t`); `Time`: the time of day (UTC) as `HH:MM:SS.ffffff`, as RMM's `%H:%M:%S.%f`;
/// - `Action`: `allocate`, `allocate failure` or `free`;
/// - `Pointer`: one hex address per block: the block's address
///   ([`Native::address`](crate::Native::address)) where the technology has pointers;
///   for OpenCL and WebGPU, whose blocks are parts of buffer objects with no visible
///   address, a stand-in unique among the log's live blocks (`0x4...`, above every
///   user-space address);
/// - `Size`: bytes; `Stream`: the [`Queue`] the allocation or free was ordered on, as
///   a decimal number (0: none, like RMM's default stream).
pub const LOG_HEADER: &str = "Thread,Time,Action,Pointer,Size,Stream,Id,Location";

/// The environment variable that names the log file of [`Logging::from_env`], as in
/// RMM; [`LOG_FILE_ALIAS`] is read when it is unset.
pub const LOG_FILE_VARIABLE: &str = "RMM_LOG_FILE";

/// locus's own name for [`LOG_FILE_VARIABLE`], kept as an alias.
pub const LOG_FILE_ALIAS: &str = "LOCUS_LOG_FILE";

/// Where the stand-in addresses of blocks without a visible address start (above every
/// user-space address, below 2^63, which RMM's parser reads as a signed `long long`).
const STAND_IN_BASE: u64 = 0x4000_0000_0000_0000;

/// Writes a CSV line ([`LOG_HEADER`]) per allocation and free of the resource it wraps.
/// `locus replay` replays such a file against any resource and location.
pub struct Logging {
    inner: Arc<dyn MemoryResource>,
    out: Mutex<Box<dyn Write + Send>>,
    ids: Mutex<LogIds>,
}

/// The last id given, and each live block's id by its handle's key.
type LogIds = (u64, HashMap<(u64, u64), u64>);

impl Logging {
    /// The resource this one takes its memory from (RMM's `get_upstream_resource`).
    pub fn upstream(&self) -> &Arc<dyn MemoryResource> {
        &self.inner
    }

    /// Wraps `inner`, writing to `out` (the header first).
    pub fn new(inner: Arc<dyn MemoryResource>, mut out: Box<dyn Write + Send>) -> Result<Logging> {
        writeln!(out, "{LOG_HEADER}")
            .map_err(|e| Error::Invalid(format!("writing the allocation log: {e}")))?;
        Ok(Logging {
            inner,
            out: Mutex::new(out),
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

    /// Wraps `inner`, writing to the file that `RMM_LOG_FILE` names (or, when it is
    /// unset, `LOCUS_LOG_FILE`); an error naming both when neither is set.
    pub fn from_env(inner: Arc<dyn MemoryResource>) -> Result<Logging> {
        match log_file_from_env() {
            Some(path) => Logging::to_file(inner, path),
            None => Err(Error::Invalid(format!(
                "{}: neither {LOG_FILE_VARIABLE} nor {LOG_FILE_ALIAS} is set; set one to the path of the allocation log, or use Logging::to_file",
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
            None => 0,
            Some((0, address)) => address,
            // Unique while the block lives: its id, spread out so that no two overlap.
            Some(_) => STAND_IN_BASE + (id << 20),
        };
        let stream = queue.map_or(0, Queue::id);
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let _ = writeln!(
            out,
            "{},{},{action},{pointer:#x},{size},{stream},{id},{}",
            os_thread_id(),
            time_of_day(),
            self.inner.location()
        );
        let _ = out.flush();
    }
}

/// The path `RMM_LOG_FILE` names, else `LOCUS_LOG_FILE` (empty values are unset).
pub fn log_file_from_env() -> Option<std::ffi::OsString> {
    std::env::var_os(LOG_FILE_VARIABLE)
        .filter(|v| !v.is_empty())
        .or_else(|| crate::core::config::path(LOG_FILE_ALIAS).map(Into::into))
}

/// The calling thread's id as the operating system numbers it (RMM's `%t`).
fn os_thread_id() -> u64 {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: gettid takes no arguments and cannot fail.
        (unsafe { libc::syscall(libc::SYS_gettid) }) as u64
    }
    #[cfg(not(target_os = "linux"))]
    {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        thread_local!(static ID: u64 = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        ID.with(|id| *id)
    }
}

/// The time of day (UTC) as `HH:MM:SS.ffffff` (RMM's `%H:%M:%S.%f`).
fn time_of_day() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let day = now.as_secs() % 86_400;
    format!(
        "{:02}:{:02}:{:02}.{:06}",
        day / 3600,
        day / 60 % 60,
        day % 60,
        now.subsec_micros()
    )
}

impl MemoryResource for Logging {
    fn location(&self) -> Location {
        self.inner.location()
    }
    fn device(&self) -> Option<std::sync::Arc<dyn crate::core::device::Device>> {
        self.inner.device()
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
