//! Staged copies: device -> host chunk -> device, with the two legs overlapping.
//!
//! A reader thread fills host chunks from the source while the calling thread writes
//! the previous chunk to the destination. Chunks come from a process-wide pool, so
//! repeated copies reuse the same host buffers; no full-size temporary is ever made.

use std::sync::mpsc::sync_channel;
use std::sync::Mutex;

use crate::core::error::{Error, Result};
use crate::core::memory::Memory;

/// The largest chunk the pool keeps (smaller chunks reuse a prefix of one).
const MAX_CHUNK: usize = 8 << 20;
/// Chunks in flight per copy (one being read, one being written, one spare).
const DEPTH: usize = 3;

static POOL: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

fn take(len: usize) -> Vec<u8> {
    let reused = POOL.lock().ok().and_then(|mut pool| pool.pop());
    let mut buf = reused.unwrap_or_default();
    if buf.len() < len {
        buf.resize(len, 0);
    }
    buf
}

fn give_back(buf: Vec<u8>) {
    if (1 << 20..=MAX_CHUNK).contains(&buf.len()) {
        if let Ok(mut pool) = POOL.lock() {
            if pool.len() < 2 * DEPTH {
                pool.push(buf);
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
        let mut buf = take(len);
        let result = src
            .read(src_offset, &mut buf[..len])
            .and_then(|()| dst.write(dst_offset, &buf[..len]));
        give_back(buf);
        return result;
    }
    std::thread::scope(|scope| {
        let (full_tx, full_rx) = sync_channel::<(usize, Vec<u8>, usize)>(DEPTH);
        let (free_tx, free_rx) = sync_channel::<Vec<u8>>(DEPTH);
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
                if let Err(e) = src.read(src_offset + pos, &mut buf[..n]) {
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
                written = dst.write(dst_offset + pos, &buf[..n]);
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
