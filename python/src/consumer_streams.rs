//! The CUDA and HIP streams a consumer of a write handle queues its writes on, so that
//! those writes land before locus uses the buffer again (the DLPack contract, the other
//! way round: the consumer's work is made visible to the producer).
//!
//! - `__dlpack__(stream=S)` names the consumer's stream: for CUDA 1 or `None` is the
//!   legacy default stream, 2 the per-thread default stream, -1 "no ordering", any other
//!   number a `cudaStream_t`; for ROCm 0 or `None` is the default stream.
//! - The CUDA array interface has no way to name the consumer's stream: an export through
//!   it stands for the legacy default stream, which waits for every blocking stream of
//!   the context (PyTorch's and CuPy's default streams among them). A consumer writing on
//!   a non-blocking stream of its own names it through DLPack, or is adopted
//!   (`locus.Queue.from_external`).
//!
//! Locus records an event on each named stream when the handle closes (while the
//! consumer's stream surely lives) and, while the handle is open, at each use of the
//! buffer; it waits for those events before that use.

use super::*;

use locus::{Completion, NativeQueue};

/// DLPack's CUDA legacy default stream, as `__dlpack__(stream=)` names it.
const DLPACK_CUDA_LEGACY: i64 = 1;
/// DLPack's CUDA per-thread default stream.
const DLPACK_CUDA_PER_THREAD: i64 = 2;
/// The driver's handle of the per-thread default stream (`CU_STREAM_PER_THREAD`).
const CU_STREAM_PER_THREAD: u64 = 2;

/// The streams a write handle's consumers named, and the events recorded on them at the
/// handle's close.
pub(crate) struct ConsumerStreams {
    location: Location,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Streams named and not yet recorded at a close.
    named: Vec<u64>,
    /// Recorded at the close: waited for (once) at the next use.
    recorded: Vec<Completion>,
}

impl ConsumerStreams {
    /// For a write handle at `consumer`: `None` unless it is a CUDA or HIP location.
    pub(crate) fn for_writer(consumer: Location) -> Option<Arc<ConsumerStreams>> {
        matches!(consumer, Location::Cuda(_) | Location::Hip(_)).then(|| {
            Arc::new(ConsumerStreams {
                location: consumer,
                state: Mutex::new(State::default()),
            })
        })
    }

    /// Records that a consumer took the data through `__dlpack__(stream=dlpack)`.
    pub(crate) fn name_dlpack(&self, dlpack: Option<i64>) {
        let stream = match (self.location, dlpack) {
            (_, Some(-1)) => return,
            (Location::Cuda(_), None | Some(DLPACK_CUDA_LEGACY)) => 0,
            (Location::Cuda(_), Some(DLPACK_CUDA_PER_THREAD)) => CU_STREAM_PER_THREAD,
            (_, None) => 0,
            (_, Some(s)) => s as u64,
        };
        self.name(stream);
    }

    /// Records that a consumer took the data through the CUDA array interface: the
    /// legacy default stream stands for its stream.
    pub(crate) fn name_array_interface(&self) {
        self.name(0);
    }

    fn name(&self, stream: u64) {
        let mut state = lock(&self.state);
        if !state.named.contains(&stream) {
            state.named.push(stream);
        }
    }

    /// An event recorded now on `stream`: done once what was queued there is.
    fn marker(&self, stream: u64) -> locus::Result<Option<Completion>> {
        let native = NativeQueue::from_raw(self.location, stream).ok_or_else(|| {
            locus::Error::Invalid(format!("{}: no stream to order on", self.location))
        })?;
        locus::registry()
            .device(self.location)?
            .adopt_queue(&native)?
            .marker()
    }

    /// At the handle's close: an event on each named stream, waited for at the next use.
    /// A stream that cannot be recorded stays named (recorded again at that use).
    pub(crate) fn record_at_close(&self) {
        let mut state = lock(&self.state);
        let named = std::mem::take(&mut state.named);
        for stream in named {
            match self.marker(stream) {
                Ok(Some(done)) => state.recorded.push(done),
                Ok(None) => {}
                Err(_) => state.named.push(stream),
            }
        }
    }

    /// Before a use of the buffer: waits for what the consumers queued (events recorded
    /// at the close, or now while the handle is open).
    pub(crate) fn wait(&self) -> locus::Result<()> {
        let (named, recorded) = {
            let mut state = lock(&self.state);
            (state.named.clone(), std::mem::take(&mut state.recorded))
        };
        for done in recorded {
            done.wait()?;
        }
        for stream in named {
            match self.marker(stream) {
                Ok(Some(done)) => done.wait()?,
                Ok(None) => {}
                Err(e) => {
                    // Reported once: the buffer stays usable afterwards.
                    lock(&self.state).named.retain(|&s| s != stream);
                    return Err(locus::Error::Invalid(format!(
                        "{}: the stream {stream:#x} a consumer of a write handle named \
                         (DLPack's stream=) cannot be waited for ({e}); its writes may not have \
                         landed: keep a stream alive until the handle is closed",
                        self.location
                    )));
                }
            }
        }
        Ok(())
    }
}
