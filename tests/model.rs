//! Property tests: random sequences of buffer operations over every available location,
//! checked after each step against a plain `Vec` model; and random queued asynchronous
//! copies between memories at random locations, against the same copies in order.

mod common;

use locus::Buffer;
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Read(usize),
    Write {
        at: usize,
        index: usize,
        value: u32,
    },
    CopyIn {
        at: usize,
        data: Vec<u32>,
        src: (usize, usize),
        dst: usize,
    },
    Resize(usize),
    MoveTo(usize),
    ToLocation(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => any::<usize>().prop_map(Op::Read),
        3 => (any::<usize>(), any::<usize>(), any::<u32>())
            .prop_map(|(at, index, value)| Op::Write { at, index, value }),
        2 => (any::<usize>(), prop::collection::vec(any::<u32>(), 0..80), (0usize..90, 0usize..90), 0usize..200)
            .prop_map(|(at, data, src, dst)| Op::CopyIn { at, data, src, dst }),
        1 => (0usize..200).prop_map(Op::Resize),
        1 => any::<usize>().prop_map(Op::MoveTo),
        1 => any::<usize>().prop_map(Op::ToLocation),
    ]
}

fn run(start: usize, init: Vec<u32>, ops: Vec<Op>) -> Result<(), TestCaseError> {
    let locations = locus::available();
    let pick = |i: usize| locations[i % locations.len()];
    let mut model = init.clone();
    let mut b = Buffer::from_slice(pick(start), &init).unwrap();
    for op in ops {
        match op {
            Op::Read(at) => prop_assert_eq!(
                common::contents(&b, pick(at)),
                model.clone(),
                "read at {}",
                pick(at)
            ),
            Op::Write { at, index, value } => {
                if model.is_empty() {
                    continue;
                }
                let i = index % model.len();
                let mut w = b.access_mut(pick(at)).unwrap();
                match w.as_mut_slice() {
                    Ok(s) => s[i] = value,
                    Err(_) => w.memory().write(i * 4, &value.to_ne_bytes()).unwrap(),
                }
                model[i] = value;
            }
            Op::CopyIn { at, data, src, dst } => {
                let other = Buffer::from_slice(pick(at), &data).unwrap();
                let (s0, s1) = (src.0.min(src.1), src.0.max(src.1));
                let fits = s1 <= data.len() && dst + (s1 - s0) <= model.len();
                let result = b.copy_from(dst, &other, s0..s1);
                prop_assert_eq!(
                    result.is_ok(),
                    fits,
                    "copy {:?} to {} ({:?})",
                    s0..s1,
                    dst,
                    result
                );
                if fits {
                    model[dst..dst + (s1 - s0)].copy_from_slice(&data[s0..s1]);
                }
            }
            Op::Resize(n) => {
                b.resize(n).unwrap();
                model.resize(n, 0);
            }
            Op::MoveTo(at) => {
                b.move_to(pick(at)).unwrap();
                prop_assert_eq!(b.location(), pick(at));
            }
            Op::ToLocation(at) => {
                let c = b.to_location(pick(at)).unwrap();
                prop_assert_eq!(c.to_vec().unwrap(), model.clone());
            }
        }
        prop_assert_eq!(b.to_vec().unwrap(), model.clone());
        let valid = b.replicas().iter().filter(|r| r.1).count();
        prop_assert!(valid >= 1, "at least one valid replica: {:?}", b.replicas());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn buffers_behave_like_vec(
        start in any::<usize>(),
        init in prop::collection::vec(any::<u32>(), 0..150),
        ops in prop::collection::vec(op(), 1..25),
    ) {
        let _serial = common::serial();
        run(start, init, ops)?;
    }
}

#[test]
fn model_covers_every_required_location() {
    let required = common::required();
    for item in required.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        common::location(item);
    }
    let names: Vec<String> = locus::available().iter().map(|l| l.to_string()).collect();
    eprintln!(
        "the model test runs over {} (and every pair of them)",
        names.join(", ")
    );
    // Every location LOCUS_REQUIRE names is among them (`common::location` fails the
    // test for a required one that is missing), and there is a pair to test.
    assert!(
        names.len() > 1 || required.is_empty(),
        "LOCUS_REQUIRE={required} but only {names:?} here: the model would test no pair"
    );
}

/// One asynchronous copy on the queue: between two of the memories (never one to
/// itself), any offsets and length (aligned or not, native or worker).
#[derive(Debug, Clone)]
enum AsyncOp {
    Copy {
        src: usize,
        dst: usize,
        src_at: usize,
        dst_at: usize,
        len: usize,
    },
    /// Waits for the queue, then checks one memory against the model.
    Check(usize),
    /// A copy that first waits for a user event, opened by the next operation.
    Gated { src: usize, dst: usize, len: usize },
}

const SLOTS: usize = 4;
const SLOT_BYTES: usize = 4096;

fn async_op() -> impl Strategy<Value = AsyncOp> {
    prop_oneof![
        6 => (0..SLOTS, 1..SLOTS, 0..SLOT_BYTES, 0..SLOT_BYTES, 0..SLOT_BYTES).prop_map(
            |(src, step, src_at, dst_at, len)| AsyncOp::Copy {
                src,
                dst: (src + step) % SLOTS,
                src_at,
                dst_at,
                len: len.min(SLOT_BYTES - src_at).min(SLOT_BYTES - dst_at),
            }
        ),
        1 => (0..SLOTS).prop_map(AsyncOp::Check),
        1 => (0..SLOTS, 1..SLOTS, 0..SLOT_BYTES)
            .prop_map(|(src, step, len)| AsyncOp::Gated { src, dst: (src + step) % SLOTS, len }),
    ]
}

fn read_all(m: &locus::Memory) -> Vec<u8> {
    let mut out = vec![0u8; m.len()];
    m.read(0, &mut out).expect("read");
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Random copies on one queue between memories at random locations (native queues,
    /// worker threads, gates and every mix of them as dependencies) end in the state of
    /// the same copies applied in order to plain vectors.
    #[test]
    fn queued_async_copies_behave_like_vec_copies_in_order(
        at in prop::collection::vec(any::<usize>(), SLOTS),
        ops in prop::collection::vec(async_op(), 1..16),
    ) {
        use std::sync::Arc;
        let _serial = common::serial();
        let locations = locus::available();
        let mut model: Vec<Vec<u8>> =
            (0..SLOTS).map(|i| common::pattern_u8(SLOT_BYTES, 40 + i as u8)).collect();
        let memories: Vec<Arc<locus::Memory>> = at
            .iter()
            .zip(&model)
            .map(|(&a, data)| {
                let m = locus::Memory::new(locations[a % locations.len()], SLOT_BYTES).unwrap();
                m.write(0, data).unwrap();
                Arc::new(m)
            })
            .collect();
        let queue = locus::Queue::new();
        let mut gate: Option<locus::EventTrigger> = None;
        for op in ops {
            match op {
                AsyncOp::Copy { src, dst, src_at, dst_at, len } => {
                    memories[src]
                        .copy_to_async_on(queue, src_at, &memories[dst], dst_at, len, &[])
                        .unwrap();
                    let bytes = model[src][src_at..src_at + len].to_vec();
                    model[dst][dst_at..dst_at + len].copy_from_slice(&bytes);
                }
                AsyncOp::Check(i) => {
                    if let Some(g) = gate.take() {
                        g.complete();
                    }
                    queue.wait().unwrap();
                    prop_assert!(read_all(&memories[i]) == model[i], "memory {} at {}", i, memories[i].location());
                }
                AsyncOp::Gated { src, dst, len } => {
                    let (event, trigger) = locus::Event::user();
                    memories[src]
                        .copy_to_async_on(queue, 0, &memories[dst], 0, len, &[event])
                        .unwrap();
                    let bytes = model[src][..len].to_vec();
                    model[dst][..len].copy_from_slice(&bytes);
                    // The previous gate opens now, this one at the next check (or end).
                    if let Some(g) = gate.replace(trigger) {
                        g.complete();
                    }
                }
            }
        }
        if let Some(g) = gate.take() {
            g.complete();
        }
        queue.wait().unwrap();
        for (i, m) in memories.iter().enumerate() {
            prop_assert!(read_all(m) == model[i], "memory {} at {}", i, m.location());
        }
    }
}
