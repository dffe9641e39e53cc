//! 11: Converting copies and vector operations: HAMR's own pipeline test
//! (`test/test_hamr_pipeline_host.cpp`), ported line by line. Buffers of `f32` and `f64`
//! are made, combined across types and compared as `int`; each buffer is made at the
//! next location in turn (starting from the one named), and the arithmetic runs on the
//! host through in-place or copied views, as HAMR's `get_host_accessible` does.
//!
//! `cargo run --example 11_conversions -- opencl:0` (or LOCUS_LOCATION, or the last
//! location found)

mod common;

use locus::{Buffer, Element, Location};

/// The locations buffers are made at: the one named, then every other in turn.
struct Rotation {
    all: Vec<Location>,
    next: usize,
}

impl Rotation {
    fn take(&mut self) -> Location {
        let l = self.all[self.next % self.all.len()];
        self.next += 1;
        l
    }
}

/// `buffer<T> ao(alloc, n_vals, val)` then `initialize_host`.
fn initialize<T: Element + std::fmt::Debug>(
    at: Location,
    n_vals: usize,
    val: T,
) -> locus::Result<Buffer<T>> {
    let ao = Buffer::filled(at, n_vals, val)?;
    eprintln!("initialized to an array of {n_vals} to {val:?} at {at}");
    Ok(ao)
}

/// `add_host(a1, a2)`: `T + U` element by element into a new `buffer<T>`, the second
/// operand converted to `T` first (HAMR adds `result[i] = a1[i] + a2[i]` in C++'s
/// promotion; here the conversion is explicit).
fn add<T, U>(at: Location, a1: &Buffer<T>, a2: &Buffer<U>) -> locus::Result<Buffer<T>>
where
    T: Element + std::ops::Add<Output = T>,
    U: Element,
{
    let a2 = Buffer::<T>::converted_at(Location::Host, a2)?;
    let (pa1, pa2) = (a1.access(Location::Host)?, a2.access(Location::Host)?);
    let sum: Vec<T> = pa1
        .as_slice()?
        .iter()
        .zip(pa2.as_slice()?)
        .map(|(&x, &y)| x + y)
        .collect();
    eprintln!(
        "added {} array {} to array {} at {at}",
        a1.len(),
        T::DTYPE,
        U::DTYPE
    );
    Buffer::from_slice(at, &sum)
}

/// `multiply_scalar_host(ai, val)`.
fn multiply_scalar<T>(at: Location, ai: &Buffer<T>, val: T) -> locus::Result<Buffer<T>>
where
    T: Element + std::ops::Mul<Output = T> + std::fmt::Debug,
{
    let pai = ai.access(Location::Host)?;
    let out: Vec<T> = pai.as_slice()?.iter().map(|&x| x * val).collect();
    eprintln!(
        "multiply_scalar {val:?} by {} array {} at {at}",
        ai.len(),
        T::DTYPE
    );
    Buffer::from_slice(at, &out)
}

/// `compare_int(ain, val)`: `buffer<int> ai(...); ain.get(ai);` then compare.
fn compare_int<T: Element>(ain: &Buffer<T>, val: i32) -> locus::Result<bool> {
    eprintln!("comparing array with {} elements to {val}", ain.len());
    let ai = Buffer::<i32>::converted_at(ain.location(), ain)?;
    let pai = ai.to_vec()?;
    if let Some(i) = pai.iter().position(|&x| x != val) {
        eprintln!("ERROR: pai[{i}] = {} != {val}", pai[i]);
        return Ok(false);
    }
    eprintln!("all elements are equal to {val}");
    Ok(true)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let first = common::location_from_args()?;
    let mut all = locus::available();
    let start = all.iter().position(|&l| l == first).unwrap_or(0);
    all.rotate_left(start);
    let mut at = Rotation { all, next: 0 };
    let n_vals = 100000;

    let ao0 = Buffer::filled(at.take(), n_vals, 1.0f32)?; // = 1
    let ao1 = multiply_scalar(at.take(), &ao0, 2.0f32)?; // = 2
    drop(ao0); // ao0.free()

    let ao2 = initialize(at.take(), n_vals, 2.0f64)?; // = 2
    let ao3 = add(at.take(), &ao2, &ao1)?; // = 4
    drop((ao1, ao2));

    let ao4 = multiply_scalar(at.take(), &ao3, 1000.0f64)?; // = 4000
    drop(ao3);

    let ao5 = Buffer::filled(at.take(), n_vals, 3.0f32)?; // = 3
    let ao6 = multiply_scalar(at.take(), &ao5, 100.0f32)?; // = 300
    drop(ao5);

    let mut ao7 = Buffer::<f32>::zeroed(at.take(), n_vals)?; // = uninit in HAMR
    ao7.copy_from(0, &ao6, 0..n_vals)?; // ao7.set(ao6): = 300

    let ao8 = add(at.take(), &ao4, &ao7)?; // = 4300
    drop((ao4, ao7));

    let ok = compare_int(&ao8, 4300)?;

    // HAMR's vector operations on the result: append across types, assign, resize.
    let mut tail = Buffer::<f64>::zeroed(at.take(), 0)?;
    tail.append_converted(&ao6)?; // 300.0 x n_vals, as f64
    tail.append(&ao8)?; // then 4300.0 x n_vals
    println!(
        "appended: {} elements, capacity {}, at {}",
        tail.len(),
        tail.capacity(),
        tail.location()
    );
    let mut check = [0i32; 2];
    tail.get_converted(n_vals - 1, &mut check)?;
    assert_eq!(check, [300, 4300]);
    tail.resize(3)?;
    println!("resized to 3: {:?}", tail.to_vec()?);

    if !ok {
        return Err("the pipeline's result is wrong".into());
    }
    println!("pipeline: all {n_vals} elements are 4300, as in HAMR's test");
    Ok(())
}
