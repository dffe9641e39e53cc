//! Staged copies: device -> host chunk -> device, with the two legs overlapping.
//!
//! A reader thread fills host chunks from the source while the calling thread writes
//! the previous chunk to the destination. Chunks come from a process-wide pool, so
//! repeated copies reuse the same host buffers; no full-size temporary is ever made.
//! Pooled chunks are registered in place with the runtimes whose copies need page-locked
//! memory for DMA (CUDA, HIP: [`register_host_memory`]) when first reused, and stay
//! registered while pooled: a staged copy's GPU legs then move at pinned memory's speed,
//! and the registration's cost is paid once per chunk, not per copy. A full pool lets an
//! unregistered chunk go before a registered one (ending a registration synchronises a
//! ROCm device), and keeps a bounded number of registered chunks beyond its usual size.

use std::sync::mpsc::sync_channel;
use std::sync::Mutex;

use crate::core::error::{Error, Result};
use crate::core::memory::Memory;
use crate::core::registration::HostRegistration;
use crate::runtime::register_host_memory;

/// The largest chunk the pool keeps (smaller chunks reuse a prefix of one).
const MAX_CHUNK: usize = 8 << 20;
/// The smallest chunk the pool keeps.
const MIN_POOLED: usize = 1 << 20;
/// Chunks in flight per copy (one being read, one being written, one spare).
const DEPTH: usize = 3;

/// One host chunk; `registered` is dropped (undone) before `buf` is freed, and `buf` is
/// never resized, so the registered range stays its buffer.
struct Chunk {
    registered: Option<Vec<HostRegistration>>,
    buf: Vec<u8>,
}

impl Chunk {
    /// Registers the chunk, once: when it is taken from the pool again (a chunk made and
    /// dropped while the pool is full, as under many concurrent copies, never pays).
    fn register(&mut self) {
        if self.registered.is_none() {
            let len = self.buf.len();
            // SAFETY: `buf`'s heap buffer of `len` bytes lives, unmoved and never
            // resized, as long as the chunk; the registrations are dropped first
            // (declared first). A runtime's refusal leaves the chunk pageable.
            let made = unsafe { register_host_memory(self.buf.as_mut_ptr(), len) };
            self.registered = Some(made.unwrap_or_default());
        }
    }
}

static POOL: Mutex<Vec<Chunk>> = Mutex::new(Vec::new());

fn take(len: usize) -> Chunk {
    let reused = POOL.lock().ok().and_then(|mut pool| pool.pop());
    match reused {
        Some(mut chunk) if chunk.buf.len() >= len => {
            chunk.register();
            chunk
        }
        // None pooled, or too small: a new one (pooled sizes from 1 MiB up; callers ask
        // for at most MAX_CHUNK).
        _ => Chunk {
            registered: None,
            buf: vec![0u8; len.max(MIN_POOLED)],
        },
    }
}

/// How many chunks the pool keeps: any kind up to `2 * DEPTH`, registered ones up to
/// `REGISTERED_KEPT`.
const REGISTERED_KEPT: usize = 4 * DEPTH;

fn give_back(chunk: Chunk) {
    if (MIN_POOLED..=MAX_CHUNK).contains(&chunk.buf.len()) {
        let let_go = match POOL.lock() {
            Ok(mut pool) => keep(&mut pool, chunk),
            Err(_) => Some(chunk),
        };
        // Dropped after the pool's lock is released: ending a registration may wait for
        // the device, and other copies take and give back chunks meanwhile.
        drop(let_go);
    }
}

/// Puts `chunk` back into `pool`; when the pool is full, the chunk to let go, preferring
/// one that is not registered: ending a registration is not free (on ROCm
/// `hipHostUnregister` synchronises every stream of the device, other libraries' work
/// included), so registered chunks stay, up to [`REGISTERED_KEPT`] of them, and are let
/// go only beyond that.
fn keep(pool: &mut Vec<Chunk>, chunk: Chunk) -> Option<Chunk> {
    if pool.len() < 2 * DEPTH {
        pool.push(chunk);
        return None;
    }
    let registered = |c: &Chunk| c.registered.as_ref().is_some_and(|r| !r.is_empty());
    if !registered(&chunk) {
        return Some(chunk);
    }
    if let Some(plain) = pool.iter().position(|c| !registered(c)) {
        // The unregistered chunk is let go instead.
        return Some(std::mem::replace(&mut pool[plain], chunk));
    }
    if pool.len() < REGISTERED_KEPT {
        pool.push(chunk);
        return None;
    }
    Some(chunk)
}

/// Copies `len` bytes through host chunks of `chunk` bytes, the read of chunk `k+1`
/// overlapping the write of chunk `k`.
pub(crate) fn copy(
    src: &Memory,
    src_offset: usize,
    dst: &Memory,
    dst_offset: usize,
    len: usize,
    chunk: usize,
) -> Result<()> {
    let chunk = chunk.clamp(4096, MAX_CHUNK);
    if len <= chunk {
        let mut chunk = take(len);
        let result = src
            .read(src_offset, &mut chunk.buf[..len])
            .and_then(|()| dst.write(dst_offset, &chunk.buf[..len]));
        give_back(chunk);
        return result;
    }
    std::thread::scope(|scope| {
        let (full_tx, full_rx) = sync_channel::<(usize, Chunk, usize)>(DEPTH);
        let (free_tx, free_rx) = sync_channel::<Chunk>(DEPTH);
        for _ in 0..DEPTH {
            // Cannot fail: the channel has room for DEPTH buffers and the receiver lives.
            let _ = free_tx.send(take(chunk));
        }
        let reader = scope.spawn(move || -> Result<()> {
            let mut pos = 0;
            let mut result = Ok(());
            while pos < len {
                let Ok(mut buf) = free_rx.recv() else {
                    break; // the writer stopped on an error
                };
                let n = chunk.min(len - pos);
                if let Err(e) = src.read(src_offset + pos, &mut buf.buf[..n]) {
                    give_back(buf);
                    result = Err(e);
                    break;
                }
                if let Err(back) = full_tx.send((pos, buf, n)) {
                    give_back(back.0 .1);
                    break;
                }
                pos += n;
            }
            drop(full_tx);
            free_rx.try_iter().for_each(give_back);
            result
        });
        let mut written = Ok(());
        for (pos, buf, n) in full_rx.iter() {
            if written.is_ok() {
                written = dst.write(dst_offset + pos, &buf.buf[..n]);
            }
            if written.is_err() {
                give_back(buf);
                break;
            }
            if let Err(back) = free_tx.send(buf) {
                give_back(back.0);
            }
        }
        drop(full_rx);
        drop(free_tx);
        let read = reader
            .join()
            .unwrap_or_else(|_| Err(Error::Invalid("staging reader thread panicked".into())));
        read.and(written)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::location::Location;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// A chunk registered with a stand-in runtime whose undo counts into `undone`.
    fn registered(undone: &Arc<AtomicUsize>) -> Chunk {
        let undone = Arc::clone(undone);
        Chunk {
            registered: Some(vec![HostRegistration::new(Location::Hip(0), move || {
                undone.fetch_add(1, Ordering::Relaxed);
            })]),
            buf: vec![0u8; MIN_POOLED],
        }
    }

    fn plain() -> Chunk {
        Chunk {
            registered: None,
            buf: vec![0u8; MIN_POOLED],
        }
    }

    /// Issue 61, item 9: a registered chunk given back to a full pool stays registered
    /// (an unregistered chunk is dropped in its place, then the pool grows up to
    /// REGISTERED_KEPT registered chunks); only beyond that is a registration ended. On
    /// the code before, every chunk given back to a full pool was dropped, and on ROCm
    /// each of those `hipHostUnregister`s synchronised the whole device.
    #[test]
    fn a_full_pool_drops_unregistered_chunks_before_it_ends_a_registration() {
        let undone = Arc::new(AtomicUsize::new(0));
        let mut pool: Vec<Chunk> = (0..2 * DEPTH).map(|_| plain()).collect();
        for _ in 0..REGISTERED_KEPT {
            drop(keep(&mut pool, registered(&undone)));
        }
        assert_eq!(
            undone.load(Ordering::Relaxed),
            0,
            "a registration was ended"
        );
        assert_eq!(pool.len(), REGISTERED_KEPT);
        assert!(pool.iter().all(|c| c.registered.is_some()));
        keep(&mut pool, plain());
        assert_eq!(
            pool.len(),
            REGISTERED_KEPT,
            "a plain chunk joined a full pool"
        );
        keep(&mut pool, registered(&undone));
        assert_eq!(
            undone.load(Ordering::Relaxed),
            1,
            "beyond the registered chunks kept, the chunk given back is let go"
        );
        drop(pool);
        assert_eq!(undone.load(Ordering::Relaxed), 1 + REGISTERED_KEPT);
    }

    #[test]
    fn a_chunk_is_registered_once_when_reused_and_never_when_only_made() {
        let made = take(4096);
        assert!(
            made.registered.is_none(),
            "a fresh chunk paid for a registration"
        );
        assert_eq!(
            made.buf.len(),
            MIN_POOLED,
            "small copies share pooled chunks"
        );
        let at = made.buf.as_ptr();
        give_back(made);
        // The pool is process-wide: another test's copy may take the chunk first.
        let again = take(4096);
        if again.buf.as_ptr() == at {
            assert!(
                again.registered.is_some(),
                "a reused chunk was not registered"
            );
        }
        give_back(again);
    }
}
