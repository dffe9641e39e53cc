//! Copies in batches ([`copy_batch`]): many copies between any locations, checked
//! together first, then issued so that each runtime's fixed cost is paid once per batch
//! instead of once per copy: every copy whose route is a call of OpenCL, CUDA or HIP is
//! queued on that runtime's queue without a wait, and the batch waits for all of them at
//! the end; a device with a batch form of its own (WebGPU: every upload, download and
//! copy within it in one submission) runs its copies in it; the others (host memcpy,
//! mapped and staged routes, SYCL, whose queued copies cost more than its synchronous
//! ones) run on the caller's thread meanwhile.

use std::collections::HashMap;
use std::sync::Arc;

use super::async_copy::{plan_for, start_native};
use super::copy::copy_on_plan;
use super::matrix::Plan;
use crate::core::batch_copy::DeviceCopy;
use crate::core::capability::run_batch;
use crate::core::copy_span::CopySpan;
use crate::core::device::{Device, HostAccess};
use crate::core::error::{Error, Result};
use crate::core::memory::Memory;
use crate::runtime::event::Event;

/// One copy of a batch: `len` bytes from `src` at `src_offset` to `dst` at `dst_offset`.
#[derive(Clone)]
pub struct BatchCopy {
    /// The source.
    pub src: Arc<Memory>,
    /// Where in the source.
    pub src_offset: usize,
    /// The destination.
    pub dst: Arc<Memory>,
    /// Where in the destination.
    pub dst_offset: usize,
    /// Bytes.
    pub len: usize,
}

impl BatchCopy {
    /// A copy of `len` bytes from `src` at `src_offset` to `dst` at `dst_offset`.
    pub fn new(
        src: &Arc<Memory>,
        src_offset: usize,
        dst: &Arc<Memory>,
        dst_offset: usize,
        len: usize,
    ) -> BatchCopy {
        BatchCopy {
            src: Arc::clone(src),
            src_offset,
            dst: Arc::clone(dst),
            dst_offset,
            len,
        }
    }

    fn describe(&self, i: usize) -> String {
        format!(
            "copy {i} ({} bytes, {} at {} -> {} at {})",
            self.len,
            self.src.location(),
            self.src_offset,
            self.dst.location(),
            self.dst_offset
        )
    }
}

/// Checks every copy before any runs: each range inside its memory, and no two copies
/// writing the same bytes (their order would decide the result). A batch may read what
/// another copy of it writes only where it does not matter which runs first, so that is
/// refused too.
fn check(copies: &[BatchCopy]) -> Result<()> {
    for (i, c) in copies.iter().enumerate() {
        c.src
            .check("copy_batch source", c.src_offset, c.len)
            .and_then(|_| c.dst.check("copy_batch destination", c.dst_offset, c.len))
            .map_err(|e| {
                Error::Invalid(format!(
                    "copy_batch: {}: {e}; nothing was copied",
                    c.describe(i)
                ))
            })?;
    }
    // Writes sorted by destination memory and offset: two overlap only as neighbours, and
    // a read overlaps a write only if it overlaps the last write starting before its end.
    let key = |m: &Arc<Memory>, offset: usize| (Arc::as_ptr(m) as usize, offset);
    let mut writes: Vec<usize> = (0..copies.len()).filter(|&i| copies[i].len > 0).collect();
    writes.sort_by_key(|&i| key(&copies[i].dst, copies[i].dst_offset));
    for pair in writes.windows(2) {
        let (a, b) = (&copies[pair[0]], &copies[pair[1]]);
        if Arc::ptr_eq(&a.dst, &b.dst) && a.dst_offset + a.len > b.dst_offset {
            return Err(conflict(
                copies,
                pair[0],
                pair[1],
                "write the same bytes of",
            ));
        }
    }
    for (j, r) in copies.iter().enumerate().filter(|(_, c)| c.len > 0) {
        let end = key(&r.src, r.src_offset + r.len);
        let before = writes.partition_point(|&i| key(&copies[i].dst, copies[i].dst_offset) < end);
        // The last write starting before the read ends, or the one before it when that
        // is the copy's own write (a copy may read and write one memory).
        for &i in writes[..before].iter().rev().take(2) {
            let w = &copies[i];
            if i == j {
                continue;
            }
            if Arc::ptr_eq(&w.dst, &r.src) && w.dst_offset + w.len > r.src_offset {
                return Err(conflict(copies, j, i, "reads what the other writes in"));
            }
            break;
        }
    }
    Ok(())
}

/// Whether queueing this pair's copies pays: either side's device says its queued
/// copies cost less than its synchronous ones (OpenCL, CUDA, HIP); SYCL's and WebGPU's
/// queued copies carry an event of their own that costs more, so those run here, one
/// after another (`locus bench --batch` measures both ways).
fn queues_cheaply(src: &Memory, dst: &Memory) -> bool {
    let cheap = |m: &Memory| {
        m.device()
            .queued_copies()
            .is_some_and(|q| q.queues_copies_cheaply())
    };
    cheap(src) || cheap(dst)
}

fn conflict(copies: &[BatchCopy], a: usize, b: usize, what: &str) -> Error {
    Error::Invalid(format!(
        "copy_batch: {} and {} {what} {}: their order would decide the result; split the \
         batch there; nothing was copied",
        copies[a].describe(a),
        copies[b].describe(b),
        copies[b].dst.location()
    ))
}

/// What a batch's plans are kept by: both devices, how the host reaches each side, the
/// size.
type PlanKey = (usize, usize, HostAccess, HostAccess, usize);

/// A device's identity (its address), to group copies by device.
pub(super) fn device_id(device: &Arc<dyn Device>) -> usize {
    Arc::as_ptr(device) as *const u8 as usize
}

/// How a copy runs in one device's batch form ([`CopyBatches::copy_batch`](crate::core::capability::CopyBatches::copy_batch)).
#[derive(Clone, Copy)]
enum Side {
    /// Host memory into the device's.
    Write,
    /// The device's memory into host memory.
    Read,
    /// Within the device.
    Within,
}

/// The device whose batch form can run `c`, and how: both ends its memory, or one end its
/// and the other host memory with a plain host address.
fn batch_side(c: &BatchCopy) -> Option<(&Arc<dyn Device>, Side)> {
    let (s, d) = (c.src.device(), c.dst.device());
    let batches = |device: &Arc<dyn Device>| device.copy_batches().is_some();
    if device_id(s) == device_id(d) {
        return batches(s).then_some((s, Side::Within));
    }
    if batches(d) && c.src.host_pointer().is_some() {
        return Some((d, Side::Write));
    }
    if batches(s) && c.dst.host_pointer().is_some() {
        return Some((s, Side::Read));
    }
    None
}

/// One device's copies of a batch: the device, and each copy's index and side.
type Group<'a> = (&'a Arc<dyn Device>, Vec<(usize, Side)>);

/// Runs, per device with a batch form, the copies of `copies` it can run (two or more)
/// as one batch; the failures go into `failed`. Returns, per copy, whether it ran.
fn run_device_batches(copies: &[BatchCopy], failed: &mut Vec<String>) -> Vec<bool> {
    let mut groups: Vec<Group<'_>> = Vec::new();
    for (i, c) in copies.iter().enumerate().filter(|(_, c)| c.len > 0) {
        let Some((device, side)) = batch_side(c) else {
            continue;
        };
        match groups
            .iter_mut()
            .find(|(d, _)| device_id(d) == device_id(device))
        {
            Some((_, members)) => members.push((i, side)),
            None => groups.push((device, vec![(i, side)])),
        }
    }
    let mut ran = vec![false; copies.len()];
    for (device, members) in groups.into_iter().filter(|(_, m)| m.len() > 1) {
        members.iter().for_each(|&(i, _)| ran[i] = true);
        if let Err(e) = run_group(device.as_ref(), copies, &members) {
            let which: Vec<String> = members.iter().map(|&(i, _)| i.to_string()).collect();
            failed.push(format!(
                "the batch of copies {} at {} ({} copies, one submission: which of them ran \
                 is not known): {e}",
                which.join(", "),
                device.location(),
                members.len()
            ));
        }
    }
    ran
}

/// One device's batch: the host ends as slices, then the device's batch form.
fn run_group(device: &dyn Device, copies: &[BatchCopy], members: &[(usize, Side)]) -> Result<()> {
    let mut batch = Vec::with_capacity(members.len());
    for &(i, side) in members {
        let c = &copies[i];
        c.src.settle_before_host_use()?;
        c.dst.settle_before_host_use()?;
        let host = |m: &Memory| {
            m.host_pointer().ok_or_else(|| {
                Error::Invalid(format!(
                    "{}: host memory without a host address",
                    m.location()
                ))
            })
        };
        batch.push(match side {
            Side::Within => DeviceCopy::Within {
                src: c.src.native(),
                src_offset: c.src_offset,
                dst: c.dst.native(),
                dst_offset: c.dst_offset,
                len: c.len,
            },
            Side::Write => DeviceCopy::Write {
                dst: c.dst.native(),
                offset: c.dst_offset,
                // SAFETY: the source's host address, `src_offset + len` inside it (checked
                // by `check`), live while `copies` holds the memory; no copy of the batch
                // writes these bytes (`check` refuses a read of what another writes).
                src: unsafe { std::slice::from_raw_parts(host(&c.src)?.add(c.src_offset), c.len) },
            },
            Side::Read => DeviceCopy::Read {
                src: c.src.native(),
                offset: c.src_offset,
                // SAFETY: the destination's host address, the range inside it (`check`),
                // live while `copies` holds the memory; `check` refuses two copies writing
                // the same bytes or reading them, so this slice is the only view of them.
                dst: unsafe {
                    std::slice::from_raw_parts_mut(host(&c.dst)?.add(c.dst_offset), c.len)
                },
            },
        });
    }
    run_batch(device, &mut batch)
}

/// Runs `copies`, any locations each, and returns when all are done. Every copy is
/// checked first (ranges, copies writing the same bytes or reading what another
/// writes): on bad input nothing is copied. A copy that fails once started does not stop
/// the others; the error then names each failed copy and how many completed.
///
/// ```
/// use std::sync::Arc;
///
/// use locus::{copy_batch, BatchCopy, Location, Memory};
///
/// let src = Arc::new(Memory::new(Location::Host, 64 << 10)?);
/// src.write(0, &vec![3u8; 64 << 10])?;
/// let dst = Arc::new(Memory::new(*locus::available().last().unwrap(), 64 << 10)?);
/// // 16 copies of 4 KiB, each to its own place: one submission where the runtime has one.
/// let copies: Vec<_> = (0..16)
///     .map(|i| BatchCopy::new(&src, i * 4096, &dst, i * 4096, 4096))
///     .collect();
/// copy_batch(&copies)?;
/// // Two copies writing the same bytes: refused, nothing copied.
/// let clash = [BatchCopy::new(&src, 0, &dst, 0, 4096), BatchCopy::new(&src, 4096, &dst, 0, 4096)];
/// assert!(copy_batch(&clash).is_err());
/// # Ok::<(), locus::Error>(())
/// ```
pub fn copy_batch(copies: &[BatchCopy]) -> Result<()> {
    check(copies)?;
    let mut queued: Vec<(usize, Event)> = Vec::new();
    let mut failed: Vec<String> = Vec::new();
    let in_groups = run_device_batches(copies, &mut failed);
    // Queued where the synchronous copy would take a runtime's own call too; the other
    // routes (a memcpy between host views, a mapped copy) are cheaper run here than
    // queued. Planned and decided once per pair of devices, host reach and size.
    let mut planned: HashMap<PlanKey, (bool, Plan)> = HashMap::new();
    for (i, c) in copies
        .iter()
        .enumerate()
        .filter(|&(i, c)| c.len > 0 && !in_groups[i])
    {
        let key = (
            device_id(c.src.device()),
            device_id(c.dst.device()),
            c.src.host_access(),
            c.dst.host_access(),
            c.len,
        );
        let (native, plan) = planned.entry(key).or_insert_with(|| {
            let plan = plan_for(&c.src, &c.dst, c.len);
            (
                queues_cheaply(&c.src, &c.dst) && plan.1.is_runtime_call(),
                plan,
            )
        });
        let span = CopySpan {
            src_offset: c.src_offset,
            dst_offset: c.dst_offset,
            len: c.len,
        };
        let started = if *native {
            start_native(&c.src, &c.dst, span, &[], plan)
        } else {
            Ok(None)
        };
        match started {
            Ok(Some(event)) => queued.push((i, event)),
            Ok(None) => {
                if let Err(e) = copy_on_plan(&c.src, &c.dst, span, plan, None) {
                    failed.push(format!("{}: {e}", c.describe(i)));
                }
            }
            Err(e) => failed.push(format!("{}: {e}", c.describe(i))),
        }
    }
    for (i, event) in queued {
        if let Err(e) = event.wait() {
            failed.push(format!("{}: {e}", copies[i].describe(i)));
        }
    }
    if failed.is_empty() {
        return Ok(());
    }
    Err(Error::Invalid(format!(
        "copy_batch: {} of {} copies failed ({} completed): {}",
        failed.len(),
        copies.len(),
        copies.len() - failed.len(),
        failed.join("; ")
    )))
}
