//! A technology compiled in but absent at run time: the main entry points (buffers,
//! memory, copies, routes, codelets) with one of its locations return an error naming
//! it (no panic), and the reason is the runtime's own answer.

mod common;

use locus::codelet::{kernels, Codelet};
use locus::{Buffer, Location, Memory};

fn missing_locations() -> Vec<Location> {
    [
        Location::Cuda(0),
        Location::Hip(0),
        Location::Sycl(5),
        Location::OpenCl(42),
        Location::WebGpu(9),
    ]
    .into_iter()
    .filter(|l| !locus::registry().has(*l))
    .collect()
}

#[test]
fn every_entry_point_errors_without_panicking() {
    let _serial = common::serial();
    let registry = locus::registry();
    let host = Buffer::from_slice(Location::Host, &[1.0f32, 2.0]).unwrap();
    for l in missing_locations() {
        eprintln!("checking {l}");
        let name = l.to_string();
        let named = |e: locus::Error| {
            let text = e.to_string();
            assert!(
                text.contains(&name) || text.contains(l.technology().name()),
                "{l}: {text}"
            );
        };
        named(registry.device(l).map(|_| ()).unwrap_err());
        named(Buffer::<f32>::zeroed(l, 4).unwrap_err());
        named(Buffer::filled(l, 4, 1u32).unwrap_err());
        named(Buffer::from_slice(l, &[1u8]).unwrap_err());
        named(Memory::new(l, 16).unwrap_err());
        named(host.access(l).map(|_| ()).unwrap_err());
        named(host.to_location(l).map(|_| ()).unwrap_err());
        named(host.prefetch(l).map(|_| ()).unwrap_err());
        let mut moved = Buffer::from_slice(Location::Host, &[1u8, 2]).unwrap();
        named(moved.access_mut(l).map(|_| ()).unwrap_err());
        named(moved.move_to(l).unwrap_err());
        assert_eq!(
            moved.to_vec().unwrap(),
            vec![1, 2],
            "a failed move loses nothing"
        );
        named(locus::transfer::copy_route(registry, Location::Host, l).unwrap_err());
        named(locus::transfer::access_route(registry, l, Location::Host).unwrap_err());
        named(locus::access::location_accessibility(registry, l, Location::Host).unwrap_err());
        let k = kernels::vec_add();
        let err = Codelet::new(&k, &[l]).unwrap_err().to_string();
        assert!(err.contains(&name), "{err}");
        // No memory can be made there, so no copy to it can be started either (the old
        // check here copied 0 bytes within the host, which could not fail).
        named(Memory::new(l, 8).unwrap_err());
    }
    #[cfg(feature = "cuda")]
    if !registry.has(Location::Cuda(0)) {
        assert!(locus::device_as::<locus::backends::cuda::CudaDevice>(Location::Cuda(0)).is_err());
    }
    #[cfg(feature = "hip")]
    if !registry.has(Location::Hip(0)) {
        assert!(locus::device_as::<locus::backends::hip::HipDevice>(Location::Hip(0)).is_err());
    }
}

#[test]
fn cuda_and_hip_say_why() {
    let registry = locus::registry();
    for t in [locus::Technology::Cuda, locus::Technology::Hip] {
        if registry.locations().iter().any(|l| l.technology() == t) {
            eprintln!("{t} has a device here: nothing to check");
            continue;
        }
        let reason = registry
            .missing()
            .get(&t)
            .unwrap_or_else(|| panic!("{t}: no reason"));
        eprintln!("{t}: {reason}");
        assert!(!reason.is_empty());
    }
    // Without libcuda the reason says so (CI machines have no NVIDIA driver).
    if std::env::var("LOCUS_EXPECT_NO_LIBCUDA").is_ok() {
        let reason = &registry.missing()[&locus::Technology::Cuda];
        assert!(reason.contains("libcuda.so not found"), "{reason}");
    }
    // With libamdhip64 installed but no AMD GPU, the reason is the runtime's answer.
    if std::env::var("LOCUS_EXPECT_HIP_NO_DEVICE").is_ok() {
        let reason = &registry.missing()[&locus::Technology::Hip];
        assert!(
            reason.contains("hipErrorNoDevice: no AMD GPU found"),
            "{reason}"
        );
    }
}
