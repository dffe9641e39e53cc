//! Staged copies: device -> host chunk -> device, with the two legs overlapping.
//!
//! A reader thread fills host chunks from the source while the calling thread writes
//! the previous chunk to the destination. Chunks come from a process-wide pool, so
//! repeated copies reuse the same host buffers; no full-size temporary is ever made.
//! Pooled chunks are registered in place with the runtimes whose copies need page-locked
//! memory for DMA (CUDA, HIP: [`register_host_memory`]) when first reused, and stay
//! registered while pooled: a staged copy's GPU legs then move at pinned memory's speed,
//! and the registration's cost is paid once per chunk, not per copy.

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

fn give_back(chunk: Chunk) {
    if (MIN_POOLED..=MAX_CHUNK).contains(&chunk.buf.len()) {
        if let Ok(mut pool) = POOL.lock() {
            if pool.len() < 2 * DEPTH {
                pool.push(chunk);
            }
        }
    }
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
