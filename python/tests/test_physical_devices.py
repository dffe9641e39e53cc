"""`locus.physical_devices()` (issue 66, item 1): which locations share hardware. Every
CPU location here runs on the host's CPUs; on an NVIDIA machine CUDA's device and
NVIDIA's OpenCL and Vulkan adapters name one PCI address."""

import pytest

import locus


def test_the_host_s_cpus_come_first_and_hold_the_host():
    groups = locus.physical_devices()
    name, locations = groups[0]
    assert name == "the host's CPUs"
    assert "host" in locations
    placed = [l for _, ls in groups for l in ls]
    assert len(placed) == len(set(placed)), "a location on two devices"
    assert set(placed) <= set(locus.available())


def test_a_cuda_device_shares_its_pci_address_with_its_other_apis():
    cuda = [l for l in locus.available() if l.startswith("cuda:")]
    if not cuda:
        pytest.skip("no CUDA device here")
    group = next(ls for name, ls in locus.physical_devices() if cuda[0] in ls)
    print(cuda[0], "shares its device with", group)
    assert cuda[0] in group
