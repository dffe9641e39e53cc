//! A move is planned once: the buffer's choice of source replica makes the plan, and the
//! copy engine takes it (the code before asked the matrix again for the statistics and
//! for the copy itself).

use super::*;
use crate::runtime::transfer::matrix::PLANS_MADE;

fn plans_made() -> usize {
    PLANS_MADE.with(|n| n.get())
}

#[test]
fn a_buffer_move_asks_the_matrix_once() {
    for mode in [Transfer::Async, Transfer::Sync] {
        let src = Buffer::from_slice(Location::Host, &[7u32; 1024])
            .unwrap()
            .with_transfer(mode);
        let mut dst = Buffer::from_slice(Location::Host, &[0u32; 1024])
            .unwrap()
            .with_transfer(mode);
        let before = plans_made();
        dst.copy_from(0, &src, 0..1024).unwrap();
        assert_eq!(plans_made() - before, 1, "{mode:?}");
        assert_eq!(dst.to_vec().unwrap(), vec![7u32; 1024], "{mode:?}");
    }
}
