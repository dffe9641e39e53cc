use super::*;

#[test]
fn row_and_column_major_strides() {
    let c = Layout::row_major(&[4, 5, 6]);
    assert_eq!(c.strides(), &[30, 6, 1]);
    assert_eq!(c.span(), Some(120));
    let f = Layout::column_major(&[4, 5, 6]);
    assert_eq!(f.strides(), &[1, 4, 20]);
    assert_eq!(f.memory_order(), vec![2, 1, 0]);
}

#[test]
fn slices_and_indices_follow_numpy() {
    // numpy: a = arange(8*10).reshape(8, 10); a[1:7:2, 3] -> offset 13, shape (3,), strides (20,)
    let a = Layout::row_major(&[8, 10]);
    let v = a.slice_step(0, 1..7, 2).unwrap().index(1, 3).unwrap();
    assert_eq!(
        (v.offset(), v.shape(), v.strides()),
        (13, &[3][..], &[20][..])
    );
    assert_eq!(v.span(), Some(54));
    // a[2:3] keeps its dimension; a[2] drops it.
    assert_eq!(a.slice(0, 2..3).unwrap().shape(), &[1, 10]);
    assert_eq!(a.index(0, 2).unwrap().shape(), &[10]);
    // A 1-D index keeps one element.
    assert_eq!(Layout::row_major(&[5]).index(0, 4).unwrap().shape(), &[1]);
}

#[test]
fn bad_slices_name_the_dimension_and_the_limit() {
    let a = Layout::row_major(&[8, 10]);
    for e in [
        a.slice(1, 4..11).unwrap_err(),
        a.slice(0, 3..3).unwrap_err(),
        a.index(2, 0).unwrap_err(),
        a.index(0, 8).unwrap_err(),
        a.slice_step(0, 0..8, 0).unwrap_err(),
        Layout::strided(0, &[3, 0], &[1, 1]).unwrap_err(),
        Layout::strided(0, &[3, 2], &[0, 1]).unwrap_err(),
        Layout::strided(0, &[3], &[1, 1]).unwrap_err(),
    ] {
        assert!(e.to_string().starts_with("Layout: "), "{e}");
    }
    assert!(a
        .index(0, 8)
        .unwrap_err()
        .to_string()
        .contains("extent is 8"));
}

#[test]
fn regions_walk_memory_order_and_merge_contiguous_dimensions() {
    let grid = Layout::row_major(&[64, 48]);
    // A column: 64 rows of one element.
    let column = grid.index(1, 5).unwrap();
    assert_eq!(
        column.region::<f64>().unwrap(),
        Region::block_2d::<f64>((64, 48), (0, 5), (64, 1)).normalized()
    );
    // The whole grid is one contiguous run; so is a 4-D contiguous box.
    assert_eq!(
        grid.region::<f32>().unwrap(),
        Region::contiguous(0, 64 * 48 * 4)
    );
    let four = Layout::row_major(&[2, 3, 4, 5]);
    assert_eq!(four.region::<u8>().unwrap(), Region::contiguous(0, 120));
    // A column-major grid's row (one element per column): the same bytes as the column
    // of the transposed row-major grid.
    let f = Layout::column_major(&[48, 64]);
    assert_eq!(
        f.index(0, 5).unwrap().region::<f64>().unwrap(),
        column.region::<f64>().unwrap()
    );
    // A sub-box of a 4-D array is four strided runs deep.
    let deep = four
        .slice(0, 0..2)
        .and_then(|l| l.slice(1, 0..2))
        .and_then(|l| l.slice(2, 0..2))
        .and_then(|l| l.slice(3, 0..2))
        .unwrap();
    assert!(deep.region::<f32>().unwrap_err().to_string().contains("3"));
}

#[test]
fn region_pairs_share_one_extent() {
    // Every other row of a 40 x 24 grid's columns 2..9, into a packed 19 x 7 block: the
    // block alone is one run, but paired it is 19 rows of 7 elements like the source.
    let src = Layout::row_major(&[40, 24])
        .slice_step(0, 1..39, 2)
        .and_then(|l| l.slice(1, 2..9))
        .unwrap();
    let dst = Layout::row_major(&[19, 7]);
    let (a, b) = src.region_pair::<f64>(&dst).unwrap();
    assert_eq!(a.extent, b.extent);
    assert_eq!(
        (a.extent, a.row_pitch, b.row_pitch),
        ([56, 19, 1], 48 * 8, 56)
    );
    // A contiguous row paired with a strided one: an element per row on both sides.
    let row = Layout::row_major(&[5, 6]).index(0, 1).unwrap();
    let column = Layout::row_major(&[6, 5]).index(1, 1).unwrap();
    let (a, b) = row.region_pair::<f32>(&column).unwrap();
    assert_eq!(
        (a.extent, b.extent, a.row_pitch, b.row_pitch),
        ([4, 6, 1], [4, 6, 1], 4, 20)
    );
    // Different orders, or shapes, are refused.
    let f = Layout::column_major(&[4, 4]);
    assert!(Layout::row_major(&[4, 4])
        .region_pair::<f32>(&f)
        .unwrap_err()
        .to_string()
        .contains("transpose"));
    assert!(row.region_pair::<f32>(&Layout::row_major(&[5])).is_err());
}
