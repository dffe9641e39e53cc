//! SYCL's prefetch: USM shared memory moved to the device ahead of its use
//! (`sycl::queue::prefetch`, through dpctl's `DPCTLQueue_Prefetch`), on locus's queue.

use super::*;
use crate::core::capability::{Prefetch, Prefetched};

impl Prefetch for SyclDevice {
    fn prefetch(
        &self,
        memory: &Native,
        offset: usize,
        len: usize,
        here: bool,
    ) -> Result<Prefetched> {
        let Native::Sycl { ptr, kind } = memory else {
            return Err(Error::Invalid(format!(
                "{}: prefetch of memory that is not SYCL USM",
                self.location
            )));
        };
        if *kind != UsmKind::Shared {
            return Ok(Prefetched::NotMoved(format!(
                "{}: USM {} memory stays where it was allocated (only USM shared memory migrates)",
                self.location,
                kind.name()
            )));
        }
        if !here {
            return Ok(Prefetched::NotMoved(format!(
                "{}: SYCL prefetches USM shared memory to its device only (sycl::queue::prefetch); the host's first touch brings it back",
                self.location
            )));
        }
        if len == 0 {
            return Ok(Prefetched::NotMoved("nothing to move (0 bytes)".into()));
        }
        // SAFETY: `ptr + offset .. + len` lies in a live USM shared allocation of this
        // context (the caller checked the range against the memory); the queue is
        // locus's, live while the device is.
        let event = unsafe {
            self.api
                .DPCTLQueue_Prefetch(self.queue, ptr.add(offset).cast(), len as u64)
        };
        if event.is_null() {
            return Err(Error::Backend {
                location: self.location,
                call: "DPCTLQueue_Prefetch",
                message: "dpctl returned no event".into(),
                hint: "the memory must be USM shared memory of this device's context".into(),
            });
        }
        Ok(Prefetched::Started(Completion::new(work::SyclWork {
            api: self.api,
            event,
            profiled: self.profiled,
        })))
    }
}
