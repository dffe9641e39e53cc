//! Configuration in one place: every `LOCUS_*` variable the repository uses has a row in
//! `locus::core::config::VARIABLES` and in `docs/environment.md`, and the library and
//! the `locus` tool read them only through `src/core/config.rs`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use locus::core::config::VARIABLES;

/// Set by `build.rs` for the compiler (`env!`), not read at run time; and the C API's
/// names (`LOCUS_OK`, `LOCUS_ERROR_*`, the header's include guard), which are not
/// variables.
const NOT_VARIABLES: &[&str] = &[
    "LOCUS_OPENMP_BUILD_ERROR",
    "LOCUS_OK",
    "LOCUS_ERROR",
    "LOCUS_H",
    // The C API's constants (locus.h).
    "LOCUS_EVENT",
    "LOCUS_NATIVE",
    "LOCUS_KIND",
    "LOCUS_READ",
];

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() {
            if !name.starts_with('.') && name != "target" && name != "__pycache__" {
                files(&path, out);
            }
        } else if ["rs", "py", "sh", "md", "toml", "pyi"]
            .iter()
            .any(|e| name.ends_with(&format!(".{e}")))
        {
            out.push(path);
        }
    }
}

fn names_in(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("LOCUS_") {
        // Part of a longer name (umem.h's `UMEM_LOCUS_DEVICE`): not a variable.
        let inside = rest[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        let tail = &rest[at..];
        if inside {
            rest = &tail["LOCUS_".len()..];
            continue;
        }
        let len = tail
            .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(tail.len());
        let name = tail[..len].trim_end_matches('_');
        if name.len() > "LOCUS_".len() {
            names.insert(name.to_string());
        }
        rest = &tail[len.max(1)..];
    }
    names
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn every_variable_the_repository_uses_is_in_the_table_and_the_docs() {
    let known: BTreeSet<&str> = VARIABLES.iter().map(|v| v.name).collect();
    let mut all = Vec::new();
    for dir in [
        "src",
        "cli",
        "capi",
        "python/src",
        "python/locus",
        "python/tests",
        "python/examples",
        "tests",
        "examples",
        "benches",
        "scripts",
        ".ci",
    ] {
        files(&root().join(dir), &mut all);
    }
    let mut missing = Vec::new();
    for file in &all {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        for name in names_in(&text) {
            let not_variable = NOT_VARIABLES
                .iter()
                .any(|n| name == *n || name.starts_with(&format!("{n}_")));
            if !known.contains(name.as_str()) && !not_variable {
                missing.push(format!("{name} (in {})", file.display()));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "add these to config::VARIABLES and docs/environment.md: {missing:#?}"
    );
    let docs = std::fs::read_to_string(root().join("docs/environment.md")).unwrap();
    for v in VARIABLES {
        let row = format!(
            "| `{}` | {} | {} | {} | {} |",
            v.name, v.accepts, v.default, v.meaning, v.read_by
        );
        assert!(
            docs.contains(&row),
            "docs/environment.md lacks (or differs at) the row {row}"
        );
    }
}

#[test]
fn only_the_config_module_reads_locus_variables() {
    let mut all = Vec::new();
    files(&root().join("src"), &mut all);
    files(&root().join("cli/src"), &mut all);
    let config = root().join("src/core/config.rs");
    let mut readers = Vec::new();
    for file in all.iter().filter(|f| **f != config) {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if (code.contains("env::var(\"LOCUS_") || code.contains("env::var_os(\"LOCUS_"))
                || (code.contains("env::var") && code.contains("\"LOCUS_"))
            {
                readers.push(format!("{}:{}: {}", file.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        readers.is_empty(),
        "read these through locus::core::config: {readers:#?}"
    );
}
