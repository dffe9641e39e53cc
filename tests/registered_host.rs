//! Host memory registered in place (issue 45, item 1), as a user holds it: a `Vec` made
//! into locus memory with `Memory::from_vec_registered`, copied to every location this
//! machine must have and back, byte for byte. Where a runtime registers host memory
//! (CUDA, HIP) the copies go by DMA; elsewhere the memory is used as it is, and the same
//! code works. An empty vector registers nothing.

mod common;

use locus::Memory;

#[test]
fn registered_host_memory_copies_to_and_from_every_location() {
    let n = (3 << 20) + 100;
    let want = common::pattern_u8(n, 7);
    for at in common::required_locations() {
        let host = Memory::from_vec_registered(want.clone()).unwrap();
        let there = Memory::new(at, n).unwrap();
        host.copy_to(0, &there, 0, n).unwrap();
        let back = Memory::from_vec_registered(vec![0u8; n]).unwrap();
        there.copy_to(0, &back, 0, n).unwrap();
        let mut got = vec![0u8; n];
        back.read(0, &mut got).unwrap();
        assert!(got == want, "{at}: the bytes did not make the round trip");
        // The registration ends with the memory; new memory registers afresh.
        drop((host, back));
        let again = Memory::from_vec_registered(want.clone()).unwrap();
        again.copy_to(0, &there, 0, n).unwrap();
    }
}

#[test]
fn an_empty_or_typed_vector_is_registered_memory_too() {
    let empty = Memory::from_vec_registered(Vec::<u8>::new()).unwrap();
    assert_eq!(empty.len(), 0);
    let floats = Memory::from_vec_registered(vec![1.5f32; 1000]).unwrap();
    assert_eq!(floats.len(), 4000);
    let mut back = [0u8; 4];
    floats.read(3996, &mut back).unwrap();
    assert_eq!(f32::from_ne_bytes(back), 1.5);
}

/// A range that runs past the end of the address space (a C or Python caller's wrong
/// length) is an error naming it, for registration and for adoption; the code before
/// accepted both (and entered the range in the address index).
#[test]
fn ranges_that_wrap_the_address_space_are_refused() {
    let near_the_end = (usize::MAX - 15) as *mut u8;
    // SAFETY: refused before anything touches the range.
    let e = unsafe { locus::register_host_memory(near_the_end, 64) }.unwrap_err();
    assert!(e.to_string().contains("address space"), "{e}");
    for at in common::required_locations() {
        let native = match at.technology() {
            locus::Technology::Host => locus::Native::Host { ptr: near_the_end },
            _ => continue,
        };
        // SAFETY: refused before anything touches the range.
        let e = unsafe { Memory::adopt(at, native, 64, |_| {}) }.unwrap_err();
        assert!(e.to_string().contains("address space"), "{at}: {e}");
    }
}
