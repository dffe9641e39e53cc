//! The architecture, checked: every `crate::` and `super::` path in `src/` is resolved
//! to the file module that defines it, and
//!
//! - a file of the core (`src/core/`) imports only the core;
//! - a backend file (`src/backends/<technology>/`) imports only the core, its own folder
//!   and the shared `backends::loading` and `backends::pages` helpers (CUDA and HIP also `backends::cuda_hip`),
//!   never another backend, the registry, the transfer matrix, resources or buffers;
//! - every layer imports only layers below it, in the order ARCHITECTURE.md's diagram
//!   draws them (read from it: the one place the layers are listed);
//! - the graph of imports between files has no circle (the core counts as one file: its
//!   `Device` trait and the `Memory` it takes name each other).
//!
//! Unit-test files (`tests.rs`, `*_tests.rs`) and inline `#[cfg(test)]` modules are test
//! code, not library code, and are left out; so are comments.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module path such as `runtime::transfer::copy` (the crate root is "").
type Module = String;

fn module_of(src: &Path, file: &Path) -> Option<Module> {
    let rel = file.strip_prefix(src).ok()?;
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.pop()?;
    match last.as_str() {
        "lib.rs" | "main.rs" if parts.is_empty() => Some(String::new()),
        "mod.rs" => Some(parts.join("::")),
        name => {
            parts.push(name.strip_suffix(".rs")?.to_string());
            Some(parts.join("::"))
        }
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src/") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The source without comments and without inline `#[cfg(test)]` modules.
fn library_code(text: &str) -> String {
    let mut lines: Vec<&str> = Vec::new();
    let mut skip_depth: Option<i64> = None;
    let mut pending_test_attr = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(depth) = skip_depth.as_mut() {
            *depth += line.matches('{').count() as i64 - line.matches('}').count() as i64;
            if *depth <= 0 {
                skip_depth = None;
            }
            continue;
        }
        if trimmed.starts_with("#[cfg(") && trimmed.contains("test") {
            pending_test_attr = true;
            continue;
        }
        if pending_test_attr && trimmed.starts_with("mod ") && trimmed.contains('{') {
            let depth = line.matches('{').count() as i64 - line.matches('}').count() as i64;
            if depth > 0 {
                skip_depth = Some(depth);
            }
            pending_test_attr = false;
            continue;
        }
        if !trimmed.starts_with("#[") {
            pending_test_attr = false;
        }
        if trimmed.starts_with("//") {
            continue;
        }
        let code = match line.find("//") {
            // A `//` inside a string literal is rare here; treat it as a comment start
            // only when no quote precedes it.
            Some(i) if !line[..i].contains('"') => &line[..i],
            _ => line,
        };
        lines.push(code);
    }
    lines.join("\n")
}

/// Every path that starts with `crate::` or `super::` in `code`, with brace groups
/// expanded (`use super::{a, b::c}` gives `super::a` and `super::b::c`).
fn paths(code: &str) -> Vec<String> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let rest = &code[i..];
        let starts = (rest.starts_with("crate::") || rest.starts_with("super::"))
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'))
            && !(i >= 2 && &code[i - 2..i] == "::");
        if !starts {
            i += 1;
            continue;
        }
        let (path, used) = read_path(rest);
        out.extend(path);
        i += used.max(1);
    }
    out
}

/// Reads one path (with brace groups) at the start of `text`: the expanded paths and the
/// number of bytes read.
fn read_path(text: &str) -> (Vec<String>, usize) {
    let mut prefix = String::new();
    let mut i = 0;
    let bytes = text.as_bytes();
    loop {
        let start = i;
        while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
            i += 1;
        }
        prefix.push_str(&text[start..i]);
        if text[i..].starts_with("::{") {
            i += 3;
            let mut depth = 1;
            let group_start = i;
            while i < bytes.len() && depth > 0 {
                match bytes[i] {
                    b'{' => depth += 1,
                    b'}' => depth -= 1,
                    _ => {}
                }
                i += 1;
            }
            let group = &text[group_start..i.saturating_sub(1)];
            let mut out = Vec::new();
            for item in split_top_level(group) {
                let item = item.trim();
                if item.is_empty() {
                    continue;
                }
                if item == "self" {
                    out.push(prefix.clone());
                    continue;
                }
                let (inner, _) = read_path(item);
                for p in inner {
                    out.push(format!("{prefix}::{p}"));
                }
            }
            return (out, i);
        }
        if text[i..].starts_with("::") {
            prefix.push_str("::");
            i += 2;
            continue;
        }
        return (vec![prefix], i);
    }
}

fn split_top_level(group: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&group[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&group[start..]);
    out
}

/// The file module a path names: its longest prefix that is a module of the crate.
fn resolve(path: &str, from: &Module, modules: &BTreeSet<Module>) -> Module {
    let mut segments: Vec<&str> = path.split("::").collect();
    let mut base: Vec<String> = Vec::new();
    match segments.first() {
        Some(&"crate") => {
            segments.remove(0);
        }
        Some(&"super") => {
            base = from
                .split("::")
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect();
            // `super` in `a/b.rs` and in `a/b/mod.rs` (both module a::b) is `a`.
            while segments.first() == Some(&"super") {
                segments.remove(0);
                base.pop();
            }
        }
        _ => {}
    }
    let mut best = base.join("::");
    let mut current = base;
    for s in segments {
        current.push(s.to_string());
        let candidate = current.join("::");
        if modules.contains(&candidate) {
            best = candidate;
        } else {
            break;
        }
    }
    best
}

/// The layers, bottom first, as ARCHITECTURE.md draws them (the one place they are
/// listed): the `src/` folders named at the start of the lines of its diagram, read
/// from the bottom up.
fn layers() -> Vec<String> {
    static LAYERS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    LAYERS
        .get_or_init(|| {
            let root = Path::new(env!("CARGO_MANIFEST_DIR"));
            let text = std::fs::read_to_string(root.join("ARCHITECTURE.md"))
                .expect("read ARCHITECTURE.md");
            let diagram = text
                .split("```text")
                .nth(1)
                .and_then(|rest| rest.split("```").next())
                .expect("ARCHITECTURE.md draws the layers in a ```text block");
            let mut layers: Vec<String> = diagram
                .lines()
                .filter_map(|line| line.split_whitespace().next())
                .filter_map(|word| word.strip_suffix('/'))
                .filter(|name| root.join("src").join(name).is_dir())
                .map(str::to_string)
                .collect();
            layers.reverse();
            layers
        })
        .clone()
}

/// The layer of a module and its rank (lower ranks are lower layers; a module in no
/// drawn layer, the crate root, ranks above them all).
fn layer(module: &str) -> (&str, usize) {
    let top = module.split("::").next().unwrap_or("");
    let layers = layers();
    let rank = layers.iter().position(|l| l == top).unwrap_or(layers.len());
    (top, rank)
}

/// What a backend file may import besides the core: its own folder and the shared
/// helpers (`loading`, `pages`; `cuda_hip` for CUDA and HIP).
fn backend_may_import(from: &str, to: &str) -> bool {
    let parts: Vec<&str> = from.split("::").collect();
    let own = parts.get(1).copied().unwrap_or("");
    let target: Vec<&str> = to.split("::").collect();
    if to.starts_with("core") || to == "backends::loading" || to == "backends::pages" {
        return true;
    }
    if target.first() != Some(&"backends") {
        return false;
    }
    if from == "backends" {
        return true; // the index: discovery dispatch over every backend
    }
    let theirs = target.get(1).copied().unwrap_or("");
    theirs == own || (theirs == "cuda_hip" && (own == "cuda" || own == "hip"))
}

struct Crate {
    /// Imports per file module: (target module, the path as written).
    imports: BTreeMap<Module, Vec<(Module, String)>>,
}

/// A unit-test module's file: `tests.rs`, or `<topic>_tests.rs` beside it.
fn is_unit_test_file(name: &std::ffi::OsStr) -> bool {
    name.to_str()
        .is_some_and(|n| n == "tests.rs" || n.ends_with("_tests.rs"))
}

fn read_crate() -> Crate {
    read_crate_at(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
}

/// The file import graph of the crate whose sources are in `src`.
fn read_crate_at(src: &Path) -> Crate {
    let src = src.to_path_buf();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut modules = BTreeSet::new();
    let mut texts = Vec::new();
    for file in &files {
        let Some(module) = module_of(&src, file) else {
            continue;
        };
        modules.insert(module.clone());
        if file.file_name().is_some_and(is_unit_test_file) {
            continue; // a unit-test module
        }
        let text = std::fs::read_to_string(file).expect("read a source file");
        texts.push((module, library_code(&text)));
    }
    let mut imports = BTreeMap::new();
    for (module, code) in texts {
        let mut targets = Vec::new();
        for path in paths(&code) {
            let to = resolve(&path, &module, &modules);
            if to != module && !module.starts_with(&format!("{to}::")) {
                targets.push((to, path));
            }
        }
        imports.insert(module, targets);
    }
    Crate { imports }
}

/// The problems the rules find (empty when the architecture holds).
fn problems(krate: &Crate) -> Vec<String> {
    let mut out = Vec::new();
    for (from, targets) in &krate.imports {
        if from.is_empty() {
            continue; // lib.rs: the facade re-exports every layer
        }
        let (from_layer, from_rank) = layer(from);
        for (to, path) in targets {
            if to.is_empty() {
                out.push(format!(
                    "{from}: `{path}` goes through the crate root; name the module that defines it"
                ));
                continue;
            }
            let (to_layer, to_rank) = layer(to);
            if from_layer == "core" && to_layer != "core" {
                out.push(format!(
                    "core file {from} imports {to} (`{path}`): the core imports nothing above it"
                ));
            } else if from_layer == "backends" && !backend_may_import(from, to) {
                out.push(format!(
                    "backend file {from} imports {to} (`{path}`): backends import only the core, their own folder, backends::loading and backends::pages"
                ));
            } else if to_rank > from_rank {
                out.push(format!(
                    "{from} ({from_layer}) imports {to} ({to_layer}, a higher layer) through `{path}`"
                ));
            }
        }
    }
    out.extend(circles(krate));
    out
}

/// The node of the import graph a module belongs to: its file, except that the core is
/// one node (one unit: the `Device` trait and the `Memory` it takes name each other).
fn node(module: &str) -> &str {
    if module == "core" || module.starts_with("core::") {
        "core"
    } else {
        module
    }
}

/// Every circle in the file import graph, one line each.
fn circles(krate: &Crate) -> Vec<String> {
    let mut graph: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (from, targets) in krate.imports.iter().filter(|(from, _)| !from.is_empty()) {
        let edges = graph.entry(node(from)).or_default();
        for (to, _) in targets {
            if !to.is_empty() && node(to) != node(from) {
                edges.insert(node(to));
            }
        }
    }
    // Depth-first search with colours; one report per back edge.
    let mut colour: BTreeMap<&str, u8> = BTreeMap::new();
    let mut found = Vec::new();
    fn visit<'a>(
        node: &'a str,
        graph: &BTreeMap<&'a str, BTreeSet<&'a str>>,
        colour: &mut BTreeMap<&'a str, u8>,
        stack: &mut Vec<&'a str>,
        found: &mut Vec<String>,
    ) {
        colour.insert(node, 1);
        stack.push(node);
        for &next in graph.get(node).into_iter().flatten() {
            match colour.get(next).copied().unwrap_or(0) {
                0 => visit(next, graph, colour, stack, found),
                1 => {
                    let start = stack.iter().position(|n| *n == next).unwrap_or(0);
                    let mut circle: Vec<&str> = stack[start..].to_vec();
                    circle.push(next);
                    found.push(format!("import circle: {}", circle.join(" -> ")));
                }
                _ => {}
            }
        }
        stack.pop();
        colour.insert(node, 2);
    }
    for &node in graph.keys() {
        if colour.get(node).copied().unwrap_or(0) == 0 {
            visit(node, &graph, &mut colour, &mut Vec::new(), &mut found);
        }
    }
    found
}

#[test]
fn the_layers_hold_and_the_import_graph_has_no_circle() {
    let krate = read_crate();
    assert!(
        krate
            .imports
            .keys()
            .any(|m| m.starts_with("backends::opencl")),
        "the scan found the backends"
    );
    let problems = problems(&krate);
    assert!(
        problems.is_empty(),
        "the architecture is broken ({} problems):\n  {}",
        problems.len(),
        problems.join("\n  ")
    );
}

/// The doors (the C library, the Python package, the `locus` tool) keep the library's
/// rule that no two files import each other, directly or round a longer circle.
#[test]
fn the_doors_have_no_import_circle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for door in ["capi", "python", "cli"] {
        let krate = read_crate_at(&root.join(door).join("src"));
        assert!(krate.imports.len() > 3, "the scan found {door}'s files");
        found.extend(circles(&krate).into_iter().map(|c| format!("{door}: {c}")));
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_checker_catches_a_backend_that_imports_the_registry_and_a_circle() {
    // The rules themselves, on a made-up crate: a backend reaching up into the registry,
    // and two run-time files importing each other.
    let mut krate = read_crate();
    krate.imports.insert(
        "backends::opencl::device".into(),
        vec![(
            "runtime::registry".into(),
            "crate::runtime::registry::registry".into(),
        )],
    );
    krate.imports.insert(
        "runtime::mirror".into(),
        vec![("runtime::access".into(), "crate::runtime::access".into())],
    );
    krate
        .imports
        .entry("runtime::access".into())
        .or_default()
        .push(("runtime::mirror".into(), "crate::runtime::mirror".into()));
    let problems = problems(&krate);
    assert!(
        problems
            .iter()
            .any(|p| p.contains("backend file backends::opencl::device imports runtime::registry")),
        "{problems:?}"
    );
    assert!(
        problems.iter().any(|p| p.starts_with("import circle")),
        "{problems:?}"
    );
}

#[test]
fn paths_are_read_with_their_brace_groups() {
    let code = "use super::{a, b::{c, d}};\nlet x = crate::core::error::Error::Invalid;";
    assert_eq!(
        paths(code),
        vec![
            "super::a",
            "super::b::c",
            "super::b::d",
            "crate::core::error::Error::Invalid"
        ]
    );
}

/// The technologies besides the host, as variant names (`Technology::ALL`).
fn technology_variants() -> Vec<String> {
    locus::Technology::ALL
        .iter()
        .filter(|t| **t != locus::Technology::Host)
        .map(|t| format!("{t:?}"))
        .collect()
}

/// Whether `code` names a variant of `Technology`, `Location` or `Native` for a
/// technology other than the host (`Technology::OpenCl`, `Native::Cuda { .. }`).
fn names_a_technology(code: &str) -> Option<String> {
    for prefix in ["Technology::", "Location::", "Native::"] {
        for variant in technology_variants() {
            let token = format!("{prefix}{variant}");
            let mut rest = code;
            while let Some(at) = rest.find(&token) {
                let after = rest[at + token.len()..].chars().next();
                let before = rest[..at].chars().next_back();
                let whole = !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
                    && !before.is_some_and(|c| c.is_alphanumeric() || c == '_');
                if whole {
                    return Some(token);
                }
                rest = &rest[at + token.len()..];
            }
        }
    }
    None
}

/// The `src/...` files ARCHITECTURE.md's "Adding a technology" lists.
fn files_to_add_a_technology() -> BTreeSet<String> {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("ARCHITECTURE.md"))
            .expect("read ARCHITECTURE.md");
    let section = text
        .split("## Adding a technology")
        .nth(1)
        .expect("ARCHITECTURE.md has an \"Adding a technology\" section");
    let section = section.split("\n## ").next().unwrap_or(section);
    section
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|t| t.starts_with("src/") && t.ends_with(".rs"))
        .map(str::to_string)
        .collect()
}

/// Technology knowledge lives in the backends: outside `src/backends/` the library names
/// no technology's `Technology`, `Location` or `Native` variant except in the files
/// ARCHITECTURE.md lists for adding a technology (the core's definitions of them, and
/// `src/backends/mod.rs`), so that list is what a contributor actually touches.
#[test]
fn only_the_listed_files_name_a_technology() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let listed = files_to_add_a_technology();
    for file in &listed {
        assert!(
            root.join(file).exists(),
            "ARCHITECTURE.md lists {file}, which does not exist"
        );
    }
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let mut outside = Vec::new();
    for file in files {
        let rel = file
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if (rel.starts_with("src/backends/") && rel != "src/backends/mod.rs")
            || listed.contains(&rel)
            || rel.ends_with("/tests.rs")
            || rel.ends_with("_tests.rs")
        {
            continue;
        }
        let code = library_code(&std::fs::read_to_string(&file).unwrap());
        if let Some(token) = names_a_technology(&code) {
            outside.push(format!("{rel} names {token}"));
        }
    }
    assert!(
        outside.is_empty(),
        "ask the backend (its Device, or the core's Technology) instead, or list the file in \
         ARCHITECTURE.md's \"Adding a technology\": {outside:#?}"
    );
}

#[test]
fn the_technology_check_sees_variants_and_not_lookalikes() {
    assert_eq!(
        names_a_technology("match t { Technology::Sycl => 1 }"),
        Some("Technology::Sycl".into())
    );
    assert_eq!(
        names_a_technology("Native::Cuda { ptr, .. }"),
        Some("Native::Cuda".into())
    );
    assert_eq!(
        names_a_technology("Technology::Host; MyLocation::OpenClish"),
        None
    );
}

/// ARCHITECTURE.md's diagram names every folder of `src/`, in the order the import
/// rules hold: the core at the bottom, the backends on it.
#[test]
fn the_drawn_layers_are_the_folders_of_src() {
    let layers = layers();
    assert_eq!(
        layers.first().map(String::as_str),
        Some("core"),
        "{layers:?}"
    );
    assert_eq!(
        layers.get(1).map(String::as_str),
        Some("backends"),
        "{layers:?}"
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for entry in std::fs::read_dir(&root).unwrap().flatten() {
        if entry.path().is_dir() {
            let name = entry.file_name().to_string_lossy().into_owned();
            assert!(
                layers.contains(&name),
                "src/{name} is in no layer of ARCHITECTURE.md's diagram"
            );
        }
    }
}

/// Every folder of `src/backends/` is a technology's (named as in location strings) or
/// one of the shared helpers (`cuda_hip`, `mpi`), and has a `mod.rs`. A backend holds the
/// files it needs beside it: none exists to fill a layout.
#[test]
fn every_backend_folder_is_a_technology_or_a_shared_helper() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let technologies: Vec<&str> = locus::Technology::ALL.iter().map(|t| t.name()).collect();
    for entry in std::fs::read_dir(root.join("src/backends"))
        .unwrap()
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !entry.path().is_dir() {
            continue;
        }
        assert!(
            technologies.contains(&name.as_str()) || name == "cuda_hip" || name == "mpi",
            "src/backends/{name} is no technology (Technology::ALL: {technologies:?})"
        );
        assert!(
            entry.path().join("mod.rs").exists(),
            "src/backends/{name} lacks mod.rs"
        );
    }
}

/// The core's files that lie on an import circle inside the core (each circle's files,
/// found as strongly connected components of the core's own import graph).
fn core_circle_members(krate: &Crate) -> BTreeSet<String> {
    let core: BTreeMap<&str, BTreeSet<&str>> = krate
        .imports
        .iter()
        .filter(|(from, _)| from.starts_with("core::"))
        .map(|(from, targets)| {
            let to = targets
                .iter()
                .map(|(to, _)| to.as_str())
                .filter(|to| to.starts_with("core::") && *to != from.as_str())
                .collect();
            (from.as_str(), to)
        })
        .collect();
    // Reachability by repeated search (the core has a few dozen files).
    let reach = |start: &str| -> BTreeSet<&str> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![start];
        while let Some(n) = todo.pop() {
            for &next in core.get(n).into_iter().flatten() {
                if seen.insert(next) {
                    todo.push(next);
                }
            }
        }
        seen
    };
    core.keys()
        .filter(|&&m| reach(m).contains(m))
        .map(|m| m.to_string())
        .collect()
}

/// Inside the core, the one circle is a device and its memory (the `Device` trait, its
/// abilities and the `Memory` they take, with the parts of an allocation); the types
/// everything else is written in (locations, errors, element types, kernel languages,
/// handles, configuration, the process's life) are on no circle.
#[test]
fn the_cores_leaves_are_on_no_import_circle() {
    let krate = read_crate();
    let circled = core_circle_members(&krate);
    assert!(circled.contains("core::device"), "{circled:?}");
    let leaves = [
        "location",
        "location_text",
        "error",
        "kernel_language",
        "element",
        "config",
        "size",
        "native",
        "native_queue",
        "completion",
        "discovery",
        "route",
        "route_kind",
        "trace",
        "host_memory",
        "fork",
        "shutdown",
        "cache",
    ];
    let on_circle: Vec<&str> = leaves
        .iter()
        .copied()
        .filter(|l| circled.contains(&format!("core::{l}")))
        .collect();
    assert!(
        on_circle.is_empty(),
        "core files on an import circle: {on_circle:?} (the circle: {circled:?})"
    );
}
