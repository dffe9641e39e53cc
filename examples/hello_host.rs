//! Hello, host: the location every program has, and who else reaches it.
//!
//! Host memory is what `malloc` and Rust's allocator return: a plain address the CPU
//! dereferences. Its "raw API" is `memcpy` and a loop. What matters for a portable
//! program is who *else* can use it in place: a CPU OpenCL or SYCL device, OpenMP's
//! initial device, a GPU with unified memory or with the pages pinned. locus answers
//! that per location (`is_accessible_from`), and a buffer read there is then used in
//! place, with no copy.
//!
//! ```text
//! cargo run --release --example hello_host
//! ```

mod common;

use locus::{Buffer, Location, Memory};

const N: usize = 1 << 16;
const BYTES: usize = N * std::mem::size_of::<f32>();

fn main() -> Result<(), common::AnyError> {
    // 1. Memory at `host`: an aligned allocation (256 bytes, as RMM's) with a host
    //    address.
    let a = Memory::new(Location::Host, BYTES)?;
    let b = Memory::new(Location::Host, BYTES)?;
    println!("a is {:?}", a.native());

    // 2. One copy, the host's way: `memcpy` (here `copy_from_slice`) into the memory's
    //    bytes ...
    let ones = vec![1.0f32; N];
    a.write(0, bytemuck::cast_slice(&ones))?;
    //    ... and locus's copy between two host allocations, one line.
    let counting = Memory::new(Location::Host, BYTES)?;
    let values: Vec<f32> = (0..N).map(|i| i as f32).collect();
    counting.write(0, bytemuck::cast_slice(&values))?;
    println!("route: {}", counting.copy_to(0, &b, 0, BYTES)?);

    // 3. The kernel: a loop over the three arrays, through typed buffers.
    let (a, b) = (
        Buffer::<f32>::from_memory(a)?,
        Buffer::<f32>::from_memory(b)?,
    );
    let mut c = Buffer::<f32>::zeroed(Location::Host, N)?;
    {
        let (x, y) = (a.access(Location::Host)?, b.access(Location::Host)?);
        let mut out = c.access_mut(Location::Host)?;
        for ((out, p), q) in out
            .as_mut_slice()?
            .iter_mut()
            .zip(x.as_slice()?)
            .zip(y.as_slice()?)
        {
            *out = p + q;
        }
    }
    let result = c.access(Location::Host)?;
    common::check_sums(result.as_slice()?)?;
    println!("c = a + b: {:?} ...", &result.as_slice()?[..4]);
    let memory = result.memory();

    // 4. Who reaches host memory in place on this machine, and why (else: the route
    //    a read there takes).
    for at in locus::available() {
        let (in_place, why) = locus::access::memory_accessibility(memory, at);
        println!(
            "  {at}: {} ({why})",
            if in_place { "in place" } else { "copied" }
        );
    }
    Ok(())
}
