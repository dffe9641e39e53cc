//! Which locations share hardware (issue 66, item 1), as `locus info` groups them: every
//! CPU location here (the host, OpenMP's initial device, PoCL's and Intel's OpenCL CPU
//! devices, SYCL on the CPU, WebGPU on lavapipe) runs on the host's CPUs; on an NVIDIA
//! machine CUDA's device and NVIDIA's OpenCL and Vulkan adapters for it name one PCI
//! address.

mod common;

use locus::{Location, PhysicalDevice, Technology};

#[test]
fn every_cpu_location_runs_on_the_host_s_cpus() {
    let registry = locus::registry();
    for at in common::required_locations() {
        let info = registry.device(at).unwrap().info();
        if matches!(info.kind.as_str(), "cpu" | "host") {
            assert_eq!(
                info.physical,
                Some(PhysicalDevice::HostCpu),
                "{at}: {info:?}"
            );
            assert!(registry.same_physical_device(Location::Host, at), "{at}");
        } else {
            assert_ne!(
                info.physical,
                Some(PhysicalDevice::HostCpu),
                "{at}: {info:?}"
            );
            assert!(!registry.same_physical_device(Location::Host, at), "{at}");
        }
    }
    let groups = registry.physical_devices();
    assert_eq!(groups[0].0, PhysicalDevice::HostCpu, "{groups:?}");
    assert!(groups[0].1.contains(&Location::Host));
}

/// On an NVIDIA GPU, every other technology's adapter for `cuda:0` names its PCI
/// address: NVIDIA's OpenCL (`cl_khr_pci_bus_info` or NVIDIA's query) and Vulkan under
/// WebGPU (`VK_EXT_pci_bus_info`). Without CUDA: SKIPPED.
#[test]
fn a_gpu_s_locations_in_every_technology_name_one_pci_address() {
    let Some(cuda) = common::location("cuda:0") else {
        return;
    };
    let registry = locus::registry();
    let physical = registry.device(cuda).unwrap().info().physical;
    assert!(
        matches!(physical, Some(PhysicalDevice::Pci { .. })),
        "{cuda}: {physical:?}"
    );
    let (_, together) = registry
        .physical_devices()
        .into_iter()
        .find(|(p, _)| Some(*p) == physical)
        .unwrap();
    eprintln!("{}: {together:?}", physical.unwrap());
    for technology in [Technology::OpenCl, Technology::WebGpu] {
        let gpus: Vec<Location> = registry
            .devices()
            .filter(|d| d.location().technology() == technology && d.info().kind.contains("gpu"))
            .map(|d| d.location())
            .collect();
        if gpus.len() == 1 {
            assert!(
                together.contains(&gpus[0]),
                "{} does not name {cuda}'s PCI address: {:?}",
                gpus[0],
                registry.device(gpus[0]).unwrap().info().physical
            );
        } else {
            eprintln!(
                "SKIPPED: {} GPU adapters of {} here",
                gpus.len(),
                technology.name()
            );
        }
    }
}
