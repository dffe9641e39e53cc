//! 16: a 2-D Jacobi solve decomposed across MPI ranks by rows, with a halo exchange every
//! step, each rank at a location of its own; checked against the single-process result.
//!
//! ```text
//! cargo build --release --features mpi --example 16_mpi_jacobi
//! mpirun -np 2 target/release/examples/16_mpi_jacobi opencl:0 webgpu:0
//! ```
//! Rank r runs at the (r+1)-th location given (the last one for ranks past the list;
//! `host` when none is given). Each rank's slab of rows lives at its location with one
//! halo row above and below (none at the grid's own edges); after each step the edge rows
//! go to the neighbours with non-blocking sends and receives, whatever their locations.

use locus::codelet::{kernels, Arg, Codelet, Launch};
use locus::mpi::Mpi;
use locus::{Buffer, Location};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mpi = Mpi::init()?;
    let world = mpi.world()?;
    let (me, ranks) = (world.rank(), world.size());
    let names: Vec<String> = std::env::args().skip(1).collect();
    let name = names
        .get(me as usize)
        .or(names.last())
        .map_or("host", String::as_str);
    let (nx, ny, steps) = (128usize, 96usize, 200);
    // Rows [first, last) of the grid are this rank's; a halo row above and below unless
    // at the grid's edge (the kernel keeps a grid's first and last rows fixed, which is
    // what a halo, and the grid's own boundary, must be during a step).
    let rows = |r: i32| {
        (
            ny * r as usize / ranks as usize,
            ny * (r as usize + 1) / ranks as usize,
        )
    };
    let (first, last) = rows(me);
    let above = usize::from(me > 0);
    let below = usize::from(me < ranks - 1);
    let local_rows = above + (last - first) + below;
    // One rank's failure (a location it lacks, a kernel that does not build there) stops
    // every rank, each saying which rank and why.
    let at: Location = world.agree(
        name.parse::<Location>()
            .and_then(|l| locus::registry().device(l).map(|_| l)),
    )?;
    let kernel = kernels::jacobi();
    let codelet = world.agree(Codelet::new(&kernel, &[at, Location::Host]))?;
    println!(
        "rank {me}: rows {first}..{last} of {ny} at {} ({} rows with halos)",
        codelet.target(),
        local_rows
    );
    // Hot left edge, cold elsewhere (the global grid, this rank's rows and halos).
    let global: Vec<f32> = (0..nx * ny)
        .map(|k| if k % nx == 0 { 100.0 } else { 0.0 })
        .collect();
    let start_row = first - above;
    let mine = &global[start_row * nx..(start_row + local_rows) * nx];
    let mut a = Buffer::from_slice(at, mine)?;
    let mut b = Buffer::from_slice(at, mine)?;
    let (mut up_out, mut down_out) = (
        Buffer::<f32>::zeroed(at, nx)?,
        Buffer::<f32>::zeroed(at, nx)?,
    );
    let (mut up_in, mut down_in) = (
        Buffer::<f32>::zeroed(at, nx)?,
        Buffer::<f32>::zeroed(at, nx)?,
    );
    for _ in 0..steps {
        codelet.call(
            &mut [
                Arg::buf(&a),
                Arg::buf_mut(&mut b),
                Arg::u32(nx as u32),
                Arg::u32(local_rows as u32),
            ],
            Launch::d2(nx, local_rows),
        )?;
        // Halo exchange: my first own row goes up, my last own row goes down.
        let mut events = Vec::new();
        if above == 1 {
            up_out.copy_from(0, &b, nx..2 * nx)?;
            events.push(world.irecv(&mut up_in, me - 1, 1)?);
            events.push(world.isend(&up_out, me - 1, 2)?);
        }
        if below == 1 {
            let own_last = local_rows - 2;
            down_out.copy_from(0, &b, own_last * nx..(own_last + 1) * nx)?;
            events.push(world.irecv(&mut down_in, me + 1, 2)?);
            events.push(world.isend(&down_out, me + 1, 1)?);
        }
        for e in &events {
            e.wait()?;
        }
        if above == 1 {
            b.copy_from(0, &up_in, 0..nx)?;
        }
        if below == 1 {
            b.copy_from((local_rows - 1) * nx, &down_in, 0..nx)?;
        }
        std::mem::swap(&mut a, &mut b);
    }
    // Everyone's own rows, gathered on rank 0 in row order, against one process's solve.
    let own = Buffer::from_slice(
        Location::Host,
        &a.to_vec()?[above * nx..(above + last - first) * nx],
    )?;
    let gathered = world.gather(&own, 0, Location::Host)?;
    if let Some(result) = gathered {
        let (mut expect, mut tmp) = (global, vec![0.0; nx * ny]);
        for _ in 0..steps {
            kernels::jacobi_reference(&expect, &mut tmp, nx, ny);
            std::mem::swap(&mut expect, &mut tmp);
        }
        let worst = result
            .to_vec()?
            .iter()
            .zip(&expect)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0f32, f32::max);
        println!("{ranks} ranks, {steps} steps on {nx} x {ny}: largest difference from one process: {worst:.2e}");
        if worst > 1e-3 {
            return Err(format!("the decomposed solve differs from one process by {worst}").into());
        }
    }
    Ok(())
}
