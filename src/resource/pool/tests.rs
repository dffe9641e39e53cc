//! The pool's free lists and coalescing, on its private state.

use super::tlsf::{class_of, CLASSES};
use super::*;

/// A state with one chunk of `len` bytes, all free.
fn state_of(len: usize) -> (State, u32) {
    let mut s = State::new();
    s.chunks.push(None);
    let i = s.record(Range {
        chunk: 0,
        offset: 0,
        len,
        free: false,
        used: false,
        prev: NIL,
        next: NIL,
        class_prev: NIL,
        class_next: NIL,
    });
    s.link(i);
    (s, i)
}

/// (offset, len, free) of every range of chunk 0 in address order.
fn layout(s: &State) -> Vec<(usize, usize, bool)> {
    let mut i = (0..s.ranges.len() as u32)
        .find(|&i| !s.spare.contains(&i) && s.ranges[i as usize].prev == NIL)
        .unwrap();
    let mut out = Vec::new();
    while i != NIL {
        let r = s.ranges[i as usize];
        out.push((r.offset, r.len, r.free));
        i = r.next;
    }
    out
}

#[test]
fn classes_are_monotonic_and_fine() {
    // Monotonic: every range of a higher class holds any size of a lower one (what
    // `find` relies on).
    let mut last = 0;
    for len in 1..200_000usize {
        let c = class_of(len);
        assert!(c >= last, "class_of({len})");
        last = c;
    }
    // Eight classes per power of two: sizes in one class differ by under 12.5%.
    assert_ne!(class_of(1 << 20), class_of((1 << 20) + (1 << 17)));
    assert_eq!(class_of(usize::MAX), CLASSES - 1);
}

#[test]
fn split_coalesce_and_best_fit() {
    let (mut s, whole) = state_of(1000);
    s.take(whole, 100);
    let b = s.find(200).unwrap();
    s.take(b, 200);
    let c = s.find(50).unwrap();
    s.take(c, 50);
    assert_eq!(
        layout(&s),
        vec![
            (0, 100, false),
            (100, 200, false),
            (300, 50, false),
            (350, 650, true)
        ]
    );
    // Free the first and third: not adjacent, no merge.
    s.give(whole);
    s.give(c);
    assert_eq!(
        layout(&s)[2],
        (300, 700, true),
        "third merged with the tail"
    );
    // Best fit: 100 fits the 100-byte hole exactly, not the 700 tail.
    assert_eq!(s.find(100), Some(whole));
    // Freeing the middle merges all three into one range.
    s.give(b);
    assert_eq!(layout(&s), vec![(0, 1000, true)]);
    assert_eq!(s.find(1000).map(|i| s.ranges[i as usize].len), Some(1000));
    assert_eq!(s.find(1001), None);
}
