//! 10: umem's two examples, line by line (the seed's C and C++ programs, with `cuda`
//! standing for any location): `calloc` as a `malloc` replacement, then a device
//! allocation aligned to 128 bytes, connected to host memory aligned to 64,
//! initialised on the host, `sync`ed to the device, changed there, and `update`d back.
//!
//! Then the same connection to a location that cannot use the device memory in place, so
//! that the mirror is a separate buffer and each direction moves bytes.
//!
//! `cargo run --release --example 10_umem -- opencl:0`
//!
//! umem's directions: `host_adr.sync(n)` (C: `umem_sync_from(&cuda, cuda_adr, &host,
//! host_adr, n)`) pushes the host's bytes to the device; `host_adr.update(n)` (C:
//! `umem_sync_to(&cuda, cuda_adr, &host, host_adr, n)`) brings the device's back.

mod common;

use std::sync::Arc;

use locus::{mirror, Location, Memory};

const F64: usize = std::mem::size_of::<f64>();

fn doubles(memory: &Memory) -> Result<Vec<f64>, locus::Error> {
    let mut bytes = vec![0u8; 10 * F64];
    memory.read(0, &mut bytes)?;
    Ok(bytemuck::pod_collect_to_vec(&bytes))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cuda = common::location_from_args()?; // umem::Cuda cuda(0), any location here
    let host = Location::Host; // umem::Host host

    // --- The first program: libumem as a replacement of malloc/free.
    {
        // allocate a length 10 array of doubles (host.calloc(sizeof(double), 10))
        let adr = Memory::new(host, 10 * F64)?;
        adr.fill(0..10 * F64, &[0])?; // calloc: zero-initialised
                                      // application specific code follows, for instance, initialize the array as range(10)
        let range: Vec<f64> = (0..10).map(f64::from).collect();
        adr.write(0, bytemuck::cast_slice(&range))?;
        println!("host calloc'd array: {:?}", doubles(&adr)?);
        // leaving the scope frees the adr memory
    }

    // --- The second program: keeping host and device memory in sync.
    {
        // allocate a length 10 array of doubles in GPU device aligned in 128 byte boundaries
        let cuda_alignment = 128;
        let cuda_adr = Arc::new(Memory::new_aligned(cuda, 10 * F64, cuda_alignment)?);
        // establish a connection between host and GPU memories;
        // for allocated host buffer, we'll use alignment 64
        let host_alignment = 64;
        let host_adr = mirror::connect(&cuda_adr, 10 * F64, host, host_alignment)?;
        println!(
            "{cuda} memory at {:#x} (aligned to {cuda_alignment}, origin {:#x}) connected to {host}: {}",
            cuda_adr.native().address(),
            cuda_adr.aligned_origin(),
            if host_adr.is_in_place() {
                "the host uses it in place (umem returns the same address)"
            } else {
                "a separate host buffer, aligned to 64"
            }
        );
        assert_eq!(
            host_adr.memory().native().address() % host_alignment as u64,
            0
        );
        // application specific code, for instance, initialize the array as range(10)
        let range: Vec<f64> = (0..10).map(f64::from).collect();
        host_adr.memory().write(0, bytemuck::cast_slice(&range))?;
        host_adr.sync(10 * F64)?;
        // now the GPU device memory is initialized as range(10)
        let on_device = doubles(&cuda_adr)?;
        println!("after sync, {cuda} holds: {on_device:?}");
        assert_eq!(on_device, range);
        // say, the GPU device changed the allocated data (here: every value squared) ...
        let squared: Vec<f64> = range.iter().map(|x| x * x).collect();
        cuda_adr.write(0, bytemuck::cast_slice(&squared))?;
        // ... so we sync the data to host buffer:
        host_adr.update(10 * F64)?;
        let on_host = doubles(host_adr.memory())?;
        println!("after update, the host holds: {on_host:?}");
        assert_eq!(on_host, squared);
        // leaving the scope frees host_adr and cuda_adr
        host_adr.disconnect();
    }
    // --- Beyond umem's examples: a mirror that is a separate buffer. The host uses most
    // locations in place (the mirror above may be the device memory itself, and then its
    // sync and update move nothing); here the device is connected to a location that
    // cannot use it in place (another OpenCL context, a staged WebGPU device, ...), so
    // `sync` and `update` move bytes, each in its own direction.
    {
        let cuda_adr = Arc::new(Memory::new(cuda, 10 * F64)?);
        let Some(peer) = locus::available()
            .into_iter()
            .find(|&l| l != cuda && !cuda_adr.is_accessible_from(l))
        else {
            println!("SKIPPED: every location here uses {cuda} memory in place: no separate mirror to show");
            return Ok(());
        };
        cuda_adr.write(0, bytemuck::cast_slice(&[-1.0f64; 10]))?;
        let peer_adr = mirror::connect(&cuda_adr, 10 * F64, peer, 64)?;
        assert!(
            !peer_adr.is_in_place(),
            "{peer} does not use {cuda} in place"
        );
        let range: Vec<f64> = (0..10).map(f64::from).collect();
        peer_adr.memory().write(0, bytemuck::cast_slice(&range))?;
        assert_eq!(
            doubles(&cuda_adr)?,
            [-1.0; 10],
            "{cuda}: unchanged before sync"
        );
        peer_adr.sync(10 * F64)?; // the mirror's bytes to the device
        assert_eq!(doubles(&cuda_adr)?, range, "{cuda} after sync from {peer}");
        let squared: Vec<f64> = range.iter().map(|x| x * x).collect();
        cuda_adr.write(0, bytemuck::cast_slice(&squared))?;
        assert_eq!(
            doubles(peer_adr.memory())?,
            range,
            "{peer}: unchanged before update"
        );
        peer_adr.update(10 * F64)?; // the device's bytes to the mirror
        assert_eq!(doubles(peer_adr.memory())?, squared, "{peer} after update");
        println!("{cuda} mirrored at {peer} (a separate buffer): sync and update each moved 80 bytes their way");
        peer_adr.disconnect();
    }
    // The C program passes `10` (bytes) to umem_sync_from / umem_sync_to although its
    // comments promise all ten doubles; this port moves 10 * sizeof(double) bytes, which
    // is what the comments say.
    Ok(())
}
