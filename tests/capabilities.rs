//! Each location answers for the optional abilities its runtime has (the table in
//! ARCHITECTURE.md, "Backends own their types"), and each answer works: a backend that
//! forgot a getter would fall back to the generic path without a word.

mod common;

use std::collections::BTreeSet;

use locus::{Device, Direction, Location, Memory, MemoryKind, Technology};

/// The abilities `device` answers for, by getter name.
fn abilities(device: &dyn Device) -> BTreeSet<&'static str> {
    [
        ("native_calls", device.native_calls().is_some()),
        ("queued_copies", device.queued_copies().is_some()),
        ("copy_batches", device.copy_batches().is_some()),
        ("staging_views", device.staging_views().is_some()),
        ("ipc_handles", device.ipc_handles().is_some()),
        ("host_registration", device.host_registration().is_some()),
        (
            "host_memory_in_place",
            device.host_memory_in_place().is_some(),
        ),
        ("placement", device.placement().is_some()),
        ("prefetcher", device.prefetcher().is_some()),
        ("memory_report", device.memory_report().is_some()),
        ("kinds", device.kinds().is_some()),
        ("queue_adoption", device.queue_adoption().is_some()),
        ("kernels", device.kernels().is_some()),
    ]
    .into_iter()
    .filter_map(|(name, has)| has.then_some(name))
    .collect()
}

/// What ARCHITECTURE.md says the technology's device at `location` has.
fn expected(device: &dyn Device) -> BTreeSet<&'static str> {
    let cpu = device.info().kind == "cpu";
    let mut want: BTreeSet<&str> = match device.location().technology() {
        Technology::Host => ["native_calls", "host_memory_in_place"].into(),
        Technology::OpenMp => ["native_calls", "kernels"].into(),
        Technology::OpenCl | Technology::Sycl => [
            "native_calls",
            "queued_copies",
            "kinds",
            "queue_adoption",
            "kernels",
        ]
        .into(),
        Technology::WebGpu => [
            "native_calls",
            "queued_copies",
            "copy_batches",
            "staging_views",
            "queue_adoption",
            "kernels",
        ]
        .into(),
        _ => [
            "native_calls",
            "queued_copies",
            "ipc_handles",
            "host_registration",
            "placement",
            "memory_report",
            "kinds",
            "queue_adoption",
            "kernels",
        ]
        .into(),
    };
    let in_place = match device.location().technology() {
        // The initial device (host memory), a CPU device's USE_HOST_PTR buffers, system
        // USM: what runs on the host takes host memory in place.
        Technology::OpenMp | Technology::Sycl => device.executes_on_host(),
        Technology::OpenCl => cpu,
        _ => false,
    };
    if in_place {
        want.insert("host_memory_in_place");
    }
    if device.location().technology() == Technology::Sycl {
        // queue.prefetch of USM shared memory.
        want.insert("prefetcher");
    }
    if matches!(
        device.location().technology(),
        Technology::Cuda | Technology::Hip
    ) && device.copy_batches().is_some()
    {
        // Where the driver has a batch call (CUDA 12.8+).
        want.insert("copy_batches");
    }
    want
}

#[test]
fn every_location_answers_for_the_abilities_its_runtime_has() {
    for at in common::required_locations() {
        let device = locus::registry().device(at).unwrap();
        assert_eq!(
            abilities(device.as_ref()),
            expected(device.as_ref()),
            "{at}"
        );
    }
}

#[test]
fn each_answered_ability_works() {
    for at in common::required_locations() {
        let device = locus::registry().device(at).unwrap();
        let memory = Memory::new(at, 4096).unwrap();
        if let Some(calls) = device.native_calls() {
            let name = calls.native_call(memory.native(), Direction::HostToDevice);
            assert!(
                !name.is_empty() && !name.starts_with("the backend"),
                "{at}: {name}"
            );
            calls.native_write(memory.native(), &[9u8; 64]).unwrap();
            let mut back = [0u8; 64];
            calls.native_read(memory.native(), &mut back).unwrap();
            assert_eq!(back, [9u8; 64], "{at}");
        }
        if let Some(kinds) = device.kinds() {
            let offered = kinds.memory_kinds();
            assert_eq!(offered.first(), Some(&MemoryKind::Default), "{at}");
            assert_eq!(offered, device.memory_kinds(), "{at}");
        } else {
            assert_eq!(device.memory_kinds(), vec![MemoryKind::Default], "{at}");
        }
        if let Some(queues) = device.queue_adoption() {
            assert!(queues.native_queue().is_some(), "{at} names no queue");
        }
        if device.kernels().is_none() {
            assert_eq!(device.max_launch_items(), u64::MAX, "{at}");
            assert_eq!(device.lacks_f64(), None, "{at}");
        }
    }
}

#[test]
fn a_device_without_an_ability_answers_the_generic_way() {
    let Some(host) = common::location("host") else {
        return;
    };
    let device = locus::registry().device(host).unwrap();
    // No preferred location on a device whose memory is the host's: nothing to do.
    let memory = Memory::new(Location::Host, 4096).unwrap();
    device
        .prefer_location(memory.native(), 0, 4096, true)
        .unwrap();
    // No queue to adopt: an error naming the location and what to use instead.
    let Err(e) = device.adopt_queue(&locus::NativeQueue::OpenCl(std::ptr::null_mut())) else {
        panic!("the host adopted a queue");
    };
    let e = e.to_string();
    assert!(e.contains("host") && e.contains("locus::Queue"), "{e}");
    // A kind not offered: an error naming what is offered.
    let e = device
        .allocate_kind(64, MemoryKind::Managed)
        .unwrap_err()
        .to_string();
    assert!(e.contains("default"), "{e}");
}
