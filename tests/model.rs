//! Property test: random sequences of buffer operations over every available location,
//! checked after each step against a plain `Vec` model.

mod common;

use locus::{Buffer, Location};
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

fn contents(b: &Buffer<u32>, at: Location) -> Vec<u32> {
    let guard = b.access(at).expect("read access");
    match guard.as_slice() {
        Ok(s) => s.to_vec(),
        Err(_) => {
            let mut raw = vec![0u32; b.len()];
            guard
                .memory()
                .read(0, bytemuck::cast_slice_mut(&mut raw))
                .expect("read");
            raw
        }
    }
}

fn run(start: usize, init: Vec<u32>, ops: Vec<Op>) -> Result<(), TestCaseError> {
    let locations = locus::available();
    let pick = |i: usize| locations[i % locations.len()];
    let mut model = init.clone();
    let mut b = Buffer::from_slice(pick(start), &init).unwrap();
    for op in ops {
        match op {
            Op::Read(at) => prop_assert_eq!(
                contents(&b, pick(at)),
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
    let required = std::env::var("LOCUS_REQUIRE").unwrap_or_default();
    for item in required.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        common::location(item);
    }
    let names: Vec<String> = locus::available().iter().map(|l| l.to_string()).collect();
    eprintln!(
        "the model test runs over {} (and every pair of them)",
        names.join(", ")
    );
}
