//! locus's own wgpu queue, adopted ([`QueueAdoption::adopt_queue`]): WebGPU has one queue per
//! device, so a user's submissions there and locus's are already in one order (and a
//! buffer is mapped only after the submissions that use it). Adopting it orders locus's
//! worker-thread copies for the user's later submissions by a wait on the host.
//!
//! [`QueueAdoption::adopt_queue`]: crate::core::capability::QueueAdoption::adopt_queue

use super::*;
use crate::core::native_queue::{ForeignQueue, NativeQueue};
use work::WgpuWork;

pub(super) struct AdoptedWgpuQueue {
    queue: wgpu::Queue,
    device: wgpu::Device,
    location: Location,
}

impl WebGpuDevice {
    /// Adopts `queue` if it is this device's queue.
    pub(super) fn adopt(&self, queue: &wgpu::Queue) -> Result<AdoptedWgpuQueue> {
        if *queue != self.queue {
            return Err(Error::Invalid(format!(
                "{}: cannot adopt a wgpu queue: it is not the queue of locus's \
                 device `{}` (WebGPU has one queue per device, and locus's buffers live on \
                 its own); use locus::Queue::native_at, or the queue of \
                 locus::backends::webgpu::WebGpuDevice::queue",
                self.location, self.info.name
            )));
        }
        Ok(AdoptedWgpuQueue {
            queue: queue.clone(),
            device: self.device.clone(),
            location: self.location,
        })
    }
}

impl ForeignQueue for AdoptedWgpuQueue {
    fn native(&self) -> NativeQueue {
        NativeQueue::WebGpu(self.queue.clone())
    }

    fn marker(&self) -> Result<Option<Completion>> {
        // Locus submits to the same queue: already after the user's submissions.
        Ok(None)
    }

    fn follow(&self, work: &Completion) -> Result<bool> {
        // A submission on this device's queue is before every later one.
        Ok(work
            .work_as::<WgpuWork>()
            .is_some_and(|w| w.location == self.location))
    }

    fn synchronize(&self) -> Result<()> {
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: None,
                timeout: None,
            })
            .map(|_| ())
            .map_err(|e| Error::Backend {
                location: self.location,
                call: "Device::poll",
                message: e.to_string(),
                hint: "see the wgpu message".into(),
            })
    }
}
