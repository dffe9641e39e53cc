//! 18: a 2-D Jacobi solve decomposed across MPI ranks in both dimensions, each rank at a
//! location of its own, with the halo faces (rows and columns) sent and received as
//! regions of the rank's one grid: no face buffers, no copies the program makes.
//!
//! ```text
//! cargo build --release --features mpi --example 18_mpi_halo_2d
//! mpirun -np 4 target/release/examples/18_mpi_halo_2d host openmp:0 opencl:0 webgpu:0
//! ```
//! The ranks form a grid of `px` x `py` tiles (`px` the larger factor of the rank count:
//! two ranks split the columns, so column faces cross). Rank r runs at the (r+1)-th
//! location given (the last one for ranks past the list; `host` when none is given).
//! Each tile has a halo column or row on every side that has a neighbour. Every step:
//! the kernel updates the tile's inside (its edges stay fixed, which is what a halo, and
//! the grid's own boundary, must be during a step); then each rank posts its receives
//! into the halos and its sends of its own edge rows and columns, all on the one grid,
//! and waits. A column face is one region: locus packs it at the rank's location in one
//! rectangle copy and unpacks it at the neighbour's. Checked against one process.

use locus::codelet::{kernels, Arg, Codelet, Launch};
use locus::mpi::{Comm, Mpi};
use locus::{Buffer, Location, Region};

/// Where this rank's tile sits: its rows and columns of the global grid, and which
/// sides have a neighbour (and a halo).
struct Tile {
    rows: (usize, usize),
    cols: (usize, usize),
    /// Halo rows above and below, halo columns left and right (0 or 1 each).
    halo: [usize; 4],
    /// The neighbours' ranks: up, down, left, right.
    next: [Option<i32>; 4],
}

impl Tile {
    fn new(me: i32, (px, py): (usize, usize), (nx, ny): (usize, usize)) -> Tile {
        let (tx, ty) = (me as usize % px, me as usize / px);
        let split = |n: usize, parts: usize, k: usize| (n * k / parts, n * (k + 1) / parts);
        let rank = |x: usize, y: usize| (y * px + x) as i32;
        let next = [
            (ty > 0).then(|| rank(tx, ty - 1)),
            (ty + 1 < py).then(|| rank(tx, ty + 1)),
            (tx > 0).then(|| rank(tx - 1, ty)),
            (tx + 1 < px).then(|| rank(tx + 1, ty)),
        ];
        Tile {
            rows: split(ny, py, ty),
            cols: split(nx, px, tx),
            halo: next.map(|n| usize::from(n.is_some())),
            next,
        }
    }

    /// The tile's size with its halos: (rows, columns).
    fn shape(&self) -> (usize, usize) {
        let [up, down, left, right] = self.halo;
        (
            up + self.rows.1 - self.rows.0 + down,
            left + self.cols.1 - self.cols.0 + right,
        )
    }

    /// For each side: the region of the tile's own edge sent there, and the halo region
    /// received from there.
    fn faces(&self) -> [(Region, Region); 4] {
        let (h, w) = self.shape();
        let [up, down, left, right] = self.halo;
        let (own_rows, own_cols) = (h - up - down, w - left - right);
        let row = |r| Region::block_2d::<f32>((h, w), (r, left), (1, own_cols));
        let col = |c| Region::block_2d::<f32>((h, w), (up, c), (own_rows, 1));
        [
            (row(up), row(0)),
            (row(h - 1 - down), row(h - 1)),
            (col(left), col(0)),
            (col(w - 1 - right), col(w - 1)),
        ]
    }
}

/// Posts the receives into the halos, then the sends of the edges, on the one grid, and
/// waits for them all. A message crossing from side s of one tile arrives at the opposite
/// side of the neighbour: it is tagged by the side it leaves from (0 up, 1 down, 2 left,
/// 3 right) and received under the opposite tag.
fn exchange(world: &Comm, grid: &mut Buffer<f32>, tile: &Tile) -> locus::Result<()> {
    let faces = tile.faces();
    let mut events = Vec::new();
    for (side, (_, halo)) in faces.iter().enumerate() {
        if let Some(peer) = tile.next[side] {
            events.push(world.irecv_region(grid, halo, peer, (side ^ 1) as i32)?);
        }
    }
    for (side, (edge, _)) in faces.iter().enumerate() {
        if let Some(peer) = tile.next[side] {
            events.push(world.isend_region(grid, edge, peer, side as i32)?);
        }
    }
    events.iter().try_for_each(|e| e.wait())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mpi = Mpi::init()?;
    let world = mpi.world()?;
    let (me, ranks) = (world.rank(), world.size() as usize);
    let names: Vec<String> = std::env::args().skip(1).collect();
    let name = names
        .get(me as usize)
        .or(names.last())
        .map_or("host", String::as_str);
    let (nx, ny, steps) = (96usize, 80usize, 150);
    // px x py = ranks, px the larger factor (a prime count is a row of tiles).
    let py = (1..=ranks)
        .filter(|d| ranks % d == 0 && d * d <= ranks)
        .max()
        .unwrap_or(1);
    let px = ranks / py;
    let tile = Tile::new(me, (px, py), (nx, ny));
    // One rank's failure (a location it lacks, a kernel that does not build there) stops
    // every rank, each saying which rank and why.
    let at: Location = world.agree(
        name.parse::<Location>()
            .and_then(|l| locus::registry().device(l).map(|_| l)),
    )?;
    let kernel = kernels::jacobi();
    let codelet = world.agree(Codelet::new(&kernel, &[at, Location::Host]))?;
    let (h, w) = tile.shape();
    println!(
        "rank {me}: tile ({}, {}) of {px} x {py}: rows {:?}, columns {:?} at {}",
        me as usize % px,
        me as usize / px,
        tile.rows,
        tile.cols,
        codelet.target()
    );
    // A hot left edge and a rough start inside (so that every face carries heat from
    // the first step); this rank's tile with its halos.
    let start_value = |y: usize, x: usize| match x {
        0 => 100.0,
        _ => ((x * 7 + y * 13) % 17) as f32,
    };
    let (y0, x0) = (tile.rows.0 - tile.halo[0], tile.cols.0 - tile.halo[2]);
    let start: Vec<f32> = (0..h * w)
        .map(|k| start_value(y0 + k / w, x0 + k % w))
        .collect();
    let mut a = Buffer::from_slice(at, &start)?;
    let mut b = Buffer::from_slice(at, &start)?;
    for _ in 0..steps {
        let args = &mut [
            Arg::buf(&a),
            Arg::buf_mut(&mut b),
            Arg::u32(w as u32),
            Arg::u32(h as u32),
        ];
        codelet.call(args, Launch::d2(w, h))?;
        exchange(&world, &mut b, &tile)?;
        std::mem::swap(&mut a, &mut b);
    }
    // Every tile's own cells go to their place in the global grid on rank 0, region to
    // region (no packing by the program), and are checked against one process's solve.
    let own = |t: &Tile| {
        let (h, w) = t.shape();
        let extent = (t.rows.1 - t.rows.0, t.cols.1 - t.cols.0);
        let inside = Region::block_2d::<f32>((h, w), (t.halo[0], t.halo[2]), extent);
        let global = Region::block_2d::<f32>((ny, nx), (t.rows.0, t.cols.0), extent);
        (inside, global)
    };
    if me != 0 {
        world.send_region(&a, &own(&tile).0, 0, 9)?;
        return Ok(());
    }
    let mut result = Buffer::<f32>::zeroed(Location::Host, nx * ny)?;
    let (inside, global) = own(&tile);
    result.copy_region_from(&global, &a, &inside)?;
    for r in 1..ranks as i32 {
        world.recv_region(&mut result, &own(&Tile::new(r, (px, py), (nx, ny))).1, r, 9)?;
    }
    let (mut expect, mut tmp) = (
        (0..nx * ny)
            .map(|k| start_value(k / nx, k % nx))
            .collect::<Vec<f32>>(),
        vec![0.0; nx * ny],
    );
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
    println!("{ranks} ranks as {px} x {py} tiles, {steps} steps on {nx} x {ny}: largest difference from one process: {worst:.2e}");
    if worst > 1e-3 {
        return Err(format!("the decomposed solve differs from one process by {worst}").into());
    }
    Ok(())
}
