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
