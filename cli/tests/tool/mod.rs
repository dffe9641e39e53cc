//! Shared by the `locus` tool's test binaries: the tool as a command, and the check every
//! figure of a report passes.
#![allow(dead_code)]

use std::process::Command;

/// The `locus` binary of this build, with a runtime directory for Mesa.
pub fn locus() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_locus"));
    c.env(
        "XDG_RUNTIME_DIR",
        std::env::var("XDG_RUNTIME_DIR").unwrap_or_else(|_| "/tmp".into()),
    );
    c
}

/// A report's figure: a number, finite and above zero.
pub fn positive(v: &serde_json::Value, what: &str) -> f64 {
    let x = v
        .as_f64()
        .unwrap_or_else(|| panic!("{what} is not a number: {v}"));
    assert!(x.is_finite() && x > 0.0, "{what} = {x}");
    x
}
