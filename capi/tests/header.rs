//! `include/locus.h` is what cbindgen makes of the C API's source (`src/`), so the
//! header a C program compiles against and the functions the library exports cannot
//! drift apart. `LOCUS_CAPI_BLESS=1 cargo test -p locus-capi --test header` rewrites it.

use std::path::Path;

#[test]
fn the_header_is_what_cbindgen_makes_of_the_source() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut made = Vec::new();
    cbindgen::Builder::new()
        .with_crate(dir)
        .with_config(config)
        .generate()
        .expect("cbindgen reads src/")
        .write(&mut made);
    let made = String::from_utf8(made).expect("a UTF-8 header");
    let path = dir.join("include/locus.h");
    if std::env::var_os("LOCUS_CAPI_BLESS").is_some() {
        std::fs::write(&path, &made).expect("write include/locus.h");
        return;
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == made,
        "capi/include/locus.h is not what cbindgen makes of capi/src; run \
         `LOCUS_CAPI_BLESS=1 cargo test -p locus-capi --test header` and commit it.\n\
         cbindgen makes:\n{made}"
    );
}
