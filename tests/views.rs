//! Strided views of buffers (`Buffer::view`, `BufferViewMut::copy_from`), as a user of a
//! grid writes them: a column face into a halo column, a row of a column-major (Fortran)
//! grid, every other row of a block, a plane of a 3-D box, between every pair of required
//! locations, each checked element by element against the same selection made on the
//! host; reading a view moves only its elements; transposes, shape mismatches and layouts
//! past the buffer are refused with nothing written.

mod common;

use locus::{Buffer, Layout, Location};

/// `values[index]` for each index of `layout` in row-major index order.
fn select(values: &[f64], layout: &Layout) -> Vec<f64> {
    let (shape, strides) = (layout.shape(), layout.strides());
    let mut out = Vec::with_capacity(layout.len());
    let mut index = vec![0usize; shape.len()];
    loop {
        let at = layout.offset() + index.iter().zip(strides).map(|(i, s)| i * s).sum::<usize>();
        out.push(values[at]);
        let mut d = shape.len();
        loop {
            if d == 0 {
                return out;
            }
            d -= 1;
            index[d] += 1;
            if index[d] < shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
}

/// `values` with the elements of `layout` set to `with` (row-major index order).
fn assign(values: &[f64], layout: &Layout, with: &[f64]) -> Vec<f64> {
    let mut out = values.to_vec();
    let marks: Vec<f64> = (0..values.len()).map(|i| i as f64).collect();
    for (k, at) in select(&marks, layout).into_iter().enumerate() {
        out[at as usize] = with[k];
    }
    out
}

fn ramp(n: usize, salt: usize) -> Vec<f64> {
    (0..n).map(|i| (i * 7 + salt) as f64).collect()
}

/// (name, source shape and layout, destination shape and layout): views of one shape
/// and one memory order on both sides.
fn cases() -> Vec<(&'static str, usize, Layout, usize, Layout)> {
    let (rows, cols) = (40, 24);
    let grid = Layout::row_major(&[rows, cols]);
    let halo = Layout::row_major(&[rows, cols + 2]);
    let fortran = Layout::column_major(&[cols, rows]);
    let boxed = Layout::row_major(&[6, 10, 12]);
    let v = |r: locus::Result<Layout>| r.unwrap();
    vec![
        (
            "a column face into a halo column",
            rows * cols,
            v(grid.index(1, cols - 1)),
            rows * (cols + 2),
            v(halo.index(1, 0)),
        ),
        (
            "a row of a Fortran grid into a Fortran grid's last row",
            rows * cols,
            v(fortran.index(0, 3)),
            rows * cols,
            v(fortran.index(0, cols - 1)),
        ),
        (
            "every other row of a block",
            rows * cols,
            v(grid
                .slice_step(0, 1..rows - 1, 2)
                .and_then(|l| l.slice(1, 2..9))),
            19 * 7,
            Layout::row_major(&[19, 7]),
        ),
        (
            "a plane of a 3-D box across its rows",
            6 * 10 * 12,
            v(boxed.index(1, 9)),
            6 * 10 * 12,
            v(boxed.index(1, 0)),
        ),
    ]
}

#[test]
fn views_move_between_every_pair_as_host_selection_says() {
    let all = common::required_locations();
    for &a in &all {
        for &b in &all {
            for (k, (name, src_len, src_layout, dst_len, dst_layout)) in
                cases().into_iter().enumerate()
            {
                let (src_values, dst_values) = (ramp(src_len, k), ramp(dst_len, 1000 + k));
                let src = Buffer::from_slice(a, &src_values).unwrap();
                let mut dst = Buffer::from_slice(b, &dst_values).unwrap();
                let view = src.view_with(src_layout.clone()).unwrap();
                let route = dst
                    .view_mut_with(dst_layout.clone())
                    .unwrap()
                    .copy_from(&view)
                    .unwrap_or_else(|e| panic!("{name}, {a} -> {b}: {e}"));
                let want = assign(&dst_values, &dst_layout, &select(&src_values, &src_layout));
                assert!(
                    dst.to_vec().unwrap() == want,
                    "{name}, {a} -> {b} ({route})"
                );
                assert_eq!(dst.location(), b);
            }
        }
    }
}

#[test]
fn reading_a_view_moves_only_its_elements() {
    for at in common::required_locations() {
        let values = ramp(64 * 48, 3);
        let grid = Buffer::from_slice(at, &values).unwrap();
        let column = grid.view(&[64, 48]).unwrap().index(1, 47).unwrap();
        let before = locus::transfer::global_stats().totals().bytes_moved();
        let there = column.to_location(Location::Host).unwrap();
        let moved = locus::transfer::global_stats().totals().bytes_moved() - before;
        assert_eq!(
            there.to_vec().unwrap(),
            select(&values, column.layout()),
            "{at}"
        );
        assert!(
            moved <= 2 * 64 * 8,
            "{at}: {moved} bytes moved for a column of 512"
        );
        // Row-major views read as numpy's ravel(); a Fortran view in its memory order.
        let fortran = grid.view_with(Layout::column_major(&[48, 64])).unwrap();
        let block = fortran.slice(0, 2..4).unwrap().slice(1, 0..3).unwrap();
        assert_eq!(
            block.to_vec().unwrap(),
            [2.0, 3.0, 50.0, 51.0, 98.0, 99.0].map(|i: f64| values[i as usize])
        );
    }
}

#[test]
fn bad_views_are_refused_and_write_nothing() {
    let at = *common::required_locations().last().unwrap();
    let src = Buffer::from_slice(at, &ramp(12 * 10, 0)).unwrap();
    let mut dst = Buffer::from_slice(at, &ramp(12 * 10, 1)).unwrap();
    let before = dst.to_vec().unwrap();
    let row_major = src.view(&[12, 10]).unwrap().slice(0, 0..10).unwrap();
    let mut errors = vec![
        src.view(&[12, 11]).err().unwrap(),
        src.view_with(Layout::strided(5, &[12, 10], &[10, 1]).unwrap())
            .err()
            .unwrap(),
        // A transpose: a row-major 10 x 10 view into a column-major one.
        dst.view_mut_with(Layout::column_major(&[10, 10]))
            .unwrap()
            .copy_from(&row_major)
            .unwrap_err(),
        dst.view_mut(&[12, 10])
            .unwrap()
            .copy_from(&src.view(&[12, 10]).unwrap().index(0, 0).unwrap())
            .unwrap_err(),
        dst.view_mut(&[12, 10])
            .unwrap()
            .index(1, 0)
            .unwrap()
            .copy_from_slice(&[1.0; 11])
            .unwrap_err(),
    ];
    errors.push(row_major.slice(1, 3..11).err().unwrap());
    let said: Vec<String> = errors.iter().map(ToString::to_string).collect();
    for (text, phrase) in said.iter().zip([
        "holds 132 elements",
        "past the buffer's 120",
        "transpose",
        "shape",
        "11 values",
        "end at most 10",
    ]) {
        assert!(text.contains(phrase), "{text:?} should say {phrase:?}");
    }
    assert!(
        said[0].contains("Buffer::view") && said[2].contains(&at.to_string()),
        "{said:?}"
    );
    assert_eq!(
        dst.to_vec().unwrap(),
        before,
        "a refused view wrote the buffer"
    );
}
