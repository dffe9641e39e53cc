//! The simulated drivers answer every entry point the call layers use (issue 61, item
//! 2): each method of `CudaDriver`, `HipRuntime`, `HipPool` and `Hiprtc` (the traits
//! the generators write from the vendors' headers, whose default answers "not
//! supported") has an implementation in the simulator's folder, which applies a rule
//! of the real library's. A method added to a trait without one fails here, naming it.

use std::collections::BTreeSet;
use std::path::Path;

/// The `unsafe fn` names declared in the block of `pub trait <name>` in `text`.
fn trait_methods(text: &str, name: &str) -> BTreeSet<String> {
    let start = text
        .find(&format!("pub trait {name}"))
        .unwrap_or_else(|| panic!("no trait {name}"));
    let open = start + text[start..].find('{').expect("a trait body");
    let mut depth = 0;
    let mut end = open;
    for (i, c) in text[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    end = open + i;
                    break;
                }
            }
            _ => {}
        }
    }
    functions(&text[open..end])
}

/// The names after `unsafe fn ` in `text`.
fn functions(text: &str) -> BTreeSet<String> {
    text.split("unsafe fn ")
        .skip(1)
        .map(|rest| {
            rest.chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()
        })
        .collect()
}

/// The functions the simulator's files under `folder` implement.
fn implemented(folder: &Path) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for entry in std::fs::read_dir(folder).expect("the simulator's folder") {
        let path = entry.expect("a file").path();
        if path.extension().is_some_and(|e| e == "rs") {
            names.extend(functions(
                &std::fs::read_to_string(&path).expect("readable"),
            ));
        }
    }
    names
}

fn check(entry_points: &str, traits: &[&str], simulator: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join(entry_points)).expect("the generated trait");
    let served = implemented(&root.join(simulator));
    for name in traits {
        let methods = trait_methods(&text, name);
        assert!(methods.len() >= 5, "{name}: {methods:?}");
        let missing: Vec<&String> = methods.difference(&served).collect();
        assert!(
            missing.is_empty(),
            "{simulator} does not serve these {name} entry points (they would answer \
             \"not supported\" without a rule): {missing:?}"
        );
        println!("{name}: all {} entry points simulated", methods.len());
    }
}

#[test]
fn the_simulated_cuda_driver_serves_every_entry_point_cuda_api_calls() {
    check(
        "src/backends/cuda/entry_points.rs",
        &["CudaDriver"],
        "src/backends/cuda/simulated",
    );
}

#[test]
fn the_simulated_hip_runtime_serves_every_entry_point_hip_api_calls() {
    check(
        "src/backends/hip/entry_points.rs",
        &["HipRuntime", "HipPool", "Hiprtc"],
        "src/backends/hip/simulated",
    );
}
