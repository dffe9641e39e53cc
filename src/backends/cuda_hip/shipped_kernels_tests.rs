//! Every CUDA or HIP kernel locus ships, as a compiler sees it: the sources in
//! `shaders/` (codelets and the stream kernels, with the element type defined in front,
//! as the BabelStream set does) and the conversion kernels generated for each pair of
//! element types. The strict simulator's compile rules and the real compilers (NVRTC,
//! hiprtc: `cuda/real_compiler_tests.rs`, `hip/real_compiler_tests.rs`) go through the
//! same list. A test helper (the file name keeps it out of the layering rule: the
//! conversion kernels come from the buffer layer, above the backends).

use crate::buffer::convert_kernels::cuda_conversion;
use crate::core::element::DType;

/// One kernel: where it comes from, its whole source, its entry point.
pub(crate) struct Kernel {
    pub(crate) origin: String,
    pub(crate) source: String,
    pub(crate) entry: String,
}

/// The kernels of the `shaders/` files with extension `extension` (`cu`, `hip`).
pub(crate) fn shipped(extension: &str) -> Vec<Kernel> {
    let mut folders = vec![std::path::PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/shaders"
    ))];
    let mut kernels = Vec::new();
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).expect("shaders/ is readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            if path.extension().and_then(|e| e.to_str()) != Some(extension) {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("a shipped source is text");
            let source = format!("#define T float\n{text}");
            for line in text.lines() {
                let Some(rest) = line.split("__global__ void ").nth(1) else {
                    continue;
                };
                let entry = rest.split('(').next().unwrap_or_default().trim();
                kernels.push(Kernel {
                    origin: path.display().to_string(),
                    source: source.clone(),
                    entry: entry.to_string(),
                });
            }
        }
    }
    kernels.sort_by(|a, b| (&a.origin, &a.entry).cmp(&(&b.origin, &b.entry)));
    kernels
}

/// The conversion kernels CUDA and HIP devices compile, one per pair of element types
/// they convert between on the device.
pub(crate) fn conversions() -> Vec<Kernel> {
    let mut kernels = Vec::new();
    for from in DType::ALL {
        for to in DType::ALL {
            if let Some(source) = cuda_conversion(from, to) {
                let entry = source
                    .split("__global__ void ")
                    .nth(1)
                    .and_then(|rest| rest.split('(').next())
                    .unwrap_or_default()
                    .trim()
                    .to_string();
                kernels.push(Kernel {
                    origin: format!("conversion {from:?} -> {to:?}"),
                    source,
                    entry,
                });
            }
        }
    }
    kernels
}
