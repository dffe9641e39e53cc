//! The examples' vec_add kernels (from `shaders/`) at every location this machine must
//! have (a missing one FAILS where `LOCUS_REQUIRE` names it), checked against the host,
//! plus a WebGPU run over buffers larger than one storage binding.

mod common;
#[path = "../examples/common/mod.rs"]
mod example;

use locus::Buffer;

fn check(c: &Buffer<f32>) {
    let values = c.to_vec().unwrap();
    for (i, v) in values.iter().enumerate() {
        assert_eq!(*v, i as f32 + 1.0, "element {i}");
    }
}

#[test]
fn vec_add_everywhere() {
    let _serial = common::serial();
    for location in common::required_locations() {
        eprintln!("vec_add at {location}");
        let c = example::hello(location, 10_007).unwrap();
        assert_eq!(c.location(), location);
        check(&c);
    }
}

#[test]
fn webgpu_buffers_beyond_one_binding() {
    let _serial = common::serial();
    let Some(gpu) = common::location("webgpu:0") else {
        return;
    };
    let limits = locus::device_as::<locus::backends::webgpu::WebGpuDevice>(gpu)
        .unwrap()
        .limits()
        .clone();
    let binding = limits.max_storage_buffer_binding_size;
    // A bit more than one binding window, in f32 elements (exact in f32: < 2^24 + ...).
    let n = (binding / 4 + 1000) as usize;
    assert!(n as u64 * 4 > binding);
    let windows = locus::backends::webgpu::binding_windows(&limits, n as u64 * 4, 4);
    assert!(windows.len() >= 2, "{windows:?}");
    let c = example::hello(gpu, n).unwrap();
    // Values above 2^24 are not exact in f32; check against the same f32 arithmetic.
    let values = c.to_vec().unwrap();
    for i in (0..n)
        .step_by(997)
        .chain([n - 1, n - 2, (binding / 4) as usize])
    {
        assert_eq!(values[i], i as f32 + 1.0, "element {i}");
    }
}
