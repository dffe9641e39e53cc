//! Copies in batches (`copy_batch`), as a user makes them: a hundred small copies at
//! scattered offsets between every pair of required locations (and within one), checked
//! byte for byte against the same copies made one by one on the host; bad input refused
//! before anything is copied.

mod common;

use std::sync::Arc;

use locus::{copy_batch, BatchCopy, Location, Memory};

const N: usize = 64 << 10;
const SLOT: usize = 512;

fn memory(at: Location, fill: &[u8]) -> Arc<Memory> {
    let m = Memory::new(at, fill.len()).unwrap_or_else(|e| panic!("{at}: {e}"));
    m.write(0, fill).unwrap();
    Arc::new(m)
}

fn contents(m: &Memory) -> Vec<u8> {
    let mut out = vec![0u8; m.len()];
    m.read(0, &mut out).unwrap();
    out
}

#[test]
fn a_batch_equals_its_copies_one_by_one_at_every_pair() {
    let locations = common::required_locations();
    let mut rng = common::Rng(0x9e37_79b9_7f4a_7c15);
    for &from in &locations {
        for &to in &locations {
            scattered_batch(from, to, &mut rng);
        }
    }
}

#[test]
fn bad_batches_are_refused_before_anything_is_copied() {
    for at in common::required_locations() {
        let src = memory(at, &common::pattern_u8(N, 9));
        let dst = memory(at, &vec![0u8; N]);
        let refused = |copies: &[BatchCopy], why: &str| {
            let e = copy_batch(copies).expect_err(why).to_string();
            assert!(e.contains("nothing was copied"), "{at}: {why}: {e}");
            assert!(
                contents(&dst).iter().all(|&b| b == 0),
                "{at}: {why}: something was copied"
            );
            e
        };
        let fine = BatchCopy::new(&src, 0, &dst, 0, 100);
        let e = refused(
            &[fine.clone(), BatchCopy::new(&src, 0, &dst, 50, 100)],
            "overlapping writes",
        );
        assert!(
            e.contains("write the same bytes") && e.contains("copy 1"),
            "{e}"
        );
        let e = refused(
            &[fine.clone(), BatchCopy::new(&src, N - 10, &dst, 200, 100)],
            "a range past the end",
        );
        assert!(e.contains("copy 1") && e.contains(&at.to_string()), "{e}");
        let e = refused(
            &[fine.clone(), BatchCopy::new(&dst, 10, &src, 0, 20)],
            "a read of a written range",
        );
        assert!(e.contains("reads what the other writes"), "{e}");
        // A copy within one memory, and another copy writing what the first reads.
        let e = refused(
            &[
                BatchCopy::new(&dst, 100, &dst, 150, 100),
                BatchCopy::new(&src, 0, &dst, 0, 120),
            ],
            "a read of bytes another copy writes, past the copy's own write",
        );
        assert!(e.contains("reads what the other writes"), "{e}");
        // Nothing to copy is no error; a copy of zero bytes anywhere is none.
        copy_batch(&[]).unwrap();
        copy_batch(&[BatchCopy::new(&src, N, &dst, N, 0)]).unwrap();
    }
}

/// 100 copies of up to a slot each from `from` into distinct slots of `to`, in a
/// scattered order, half of them 4-byte aligned (offsets and lengths: what WebGPU's
/// batch form takes), checked against the same copies made on the host.
fn scattered_batch(from: Location, to: Location, rng: &mut common::Rng) {
    let src_bytes = common::pattern_u8(N, 9);
    let src = memory(from, &src_bytes);
    let dst = memory(to, &vec![0u8; N]);
    let mut want = vec![0u8; N];
    let mut slots: Vec<usize> = (0..N / SLOT).collect();
    for i in (1..slots.len()).rev() {
        slots.swap(i, rng.below(i + 1));
    }
    let copies: Vec<BatchCopy> = slots[..100]
        .iter()
        .map(|&slot| {
            let aligned = slot % 2 == 0;
            let len = if aligned {
                4 * (1 + rng.below(SLOT / 4))
            } else {
                1 + rng.below(SLOT)
            };
            let at = rng.below(N - len) & if aligned { !3 } else { !0 };
            let to_at = slot * SLOT;
            want[to_at..to_at + len].copy_from_slice(&src_bytes[at..at + len]);
            BatchCopy::new(&src, at, &dst, to_at, len)
        })
        .collect();
    copy_batch(&copies).unwrap_or_else(|e| panic!("{from} -> {to}: {e}"));
    assert!(
        contents(&dst) == want,
        "{from} -> {to}: the batch's bytes differ"
    );
}

// WebGPU off unified memory (as on a discrete GPU): its uploads, downloads and copies
// within it go in its batch form (one submission, one readback mapping); the bytes equal
// the copies made one by one, with every location at the other end. Run in a second
// process of this binary, with LOCUS_WEBGPU_MAPPABLE=0 set before locus starts.
#[test]
fn webgpu_batches_off_unified_memory_equal_their_copies_one_by_one() {
    if std::env::var("LOCUS_WEBGPU_MAPPABLE").as_deref() == Ok("0") {
        let Some(gpu) = common::location("webgpu:0") else {
            return;
        };
        let mut rng = common::Rng(0x5eed);
        for other in common::required_locations() {
            scattered_batch(other, gpu, &mut rng);
            scattered_batch(gpu, other, &mut rng);
        }
        println!("batches checked");
        return;
    }
    if common::location("webgpu:0").is_none() {
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "webgpu_batches_off_unified_memory_equal_their_copies_one_by_one",
            "--nocapture",
        ])
        .env("LOCUS_WEBGPU_MAPPABLE", "0")
        .output()
        .unwrap();
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("batches checked"),
        "the second process failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The first CUDA or HIP device here, or `None` (the GPU tests then print SKIPPED).
fn gpu() -> Option<Location> {
    let found = ["cuda:0", "hip:0"].into_iter().find_map(common::location);
    if found.is_none() {
        println!("SKIPPED: no CUDA or HIP device");
    }
    found
}

/// The first batch a process makes at a GPU, alone: where a driver's batch call is met
/// for the first time (CUDA 13 maps `cuMemcpyBatchAsync` to a new form; a wrong ABI
/// crashes here). `scripts/run-offline.sh settle` runs it in a process of its own.
#[test]
fn a_first_batch_at_a_gpu_equals_its_copies() {
    let Some(at) = gpu() else { return };
    let device = memory(at, &[0u8; 8192]);
    let a = memory(Location::Host, &[1u8; 4096]);
    let b = memory(Location::Host, &[2u8; 4096]);
    let back = memory(Location::Host, &[0u8; 4096]);
    copy_batch(&[
        BatchCopy::new(&a, 0, &device, 0, 4096),
        BatchCopy::new(&b, 0, &device, 4096, 4096),
    ])
    .unwrap_or_else(|e| panic!("{at}: {e}"));
    copy_batch(&[BatchCopy::new(&device, 2048, &back, 0, 4096)]).unwrap();
    let got = contents(&back);
    assert!(got[..2048].iter().all(|&x| x == 1) && got[2048..].iter().all(|&x| x == 2));
}

/// A batch at a GPU over every memory kind the device offers (device, pinned, managed,
/// stream-ordered), pageable and registered host memory: each kind uploaded from and
/// downloaded to the host in one batch, byte for byte.
#[test]
fn a_batch_at_a_gpu_mixes_every_memory_kind_and_host_memory() {
    let Some(at) = gpu() else { return };
    let kinds = locus::registry().device(at).unwrap().memory_kinds();
    let pattern = common::pattern_u8(N, 5);
    let pageable = memory(Location::Host, &pattern);
    let registered = Arc::new(Memory::from_vec_registered(pattern.clone()).unwrap());
    let mut copies = Vec::new();
    let mut made = Vec::new();
    for (i, kind) in kinds.iter().enumerate() {
        let m = Arc::new(Memory::new_kind(at, *kind, N).unwrap_or_else(|e| panic!("{kind}: {e}")));
        let from = if i % 2 == 0 { &pageable } else { &registered };
        copies.push(BatchCopy::new(from, 0, &m, 0, N));
        made.push((*kind, m));
    }
    copy_batch(&copies).unwrap_or_else(|e| panic!("{at}: uploads: {e}"));
    let downloads: Vec<(String, Arc<Memory>)> = made
        .iter()
        .map(|(kind, _)| (kind.to_string(), memory(Location::Host, &vec![0u8; N])))
        .collect();
    let back: Vec<BatchCopy> = made
        .iter()
        .zip(&downloads)
        .map(|((_, m), (_, to))| BatchCopy::new(m, 0, to, 0, N))
        .collect();
    copy_batch(&back).unwrap_or_else(|e| panic!("{at}: downloads: {e}"));
    for (kind, to) in &downloads {
        assert!(
            contents(to) == pattern,
            "{at}: {kind} memory's bytes differ"
        );
    }
}
