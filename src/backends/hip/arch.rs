//! The device's architecture as hiprtc needs it (`--offload-arch=gfx90a:sramecc+:xnack-`,
//! issue 48 item 5): the `gcnArchName` of the device's properties, target features
//! included. Without the option hiprtc looks the architecture up itself through the
//! unversioned `libamdhip64.so`, which installs of the runtime alone lack, and every
//! compile fails.
//!
//! The properties struct's layout is fixed per entry point, and differs between them
//! (offsets from ROCm's own headers, `hip_runtime_api.h` and `hip_deprecated.h`):
//! `hipGetDevicePropertiesR0600` (ROCm 6 and later: 1472 bytes, the name at 1160) and,
//! where that is missing, `hipGetDeviceProperties` of ROCm 5 (792 bytes, at 396).

use std::ffi::{c_int, c_void, CStr, CString};

/// `hipDeviceProp_tR0600`: size and `gcnArchName`'s offset.
const R0600: (usize, usize) = (1472, 1160);
/// ROCm 5's `hipDeviceProp_t` (`hipDeviceProp_tR0000` since ROCm 6).
const R0000: (usize, usize) = (792, 396);
/// `gcnArchName` is `char[256]`.
const NAME_LEN: usize = 256;

type GetProperties = unsafe extern "C" fn(*mut c_void, c_int) -> c_int;

/// The `gcnArchName` in a properties struct of `layout` (`None` unless it names a GCN
/// architecture: a layout this code does not know reads as nothing, never as garbage).
pub(super) fn arch_in(props: &[u8], layout: (usize, usize)) -> Option<String> {
    let field = props.get(layout.1..layout.1 + NAME_LEN)?;
    let name = CStr::from_bytes_until_nul(field).ok()?.to_str().ok()?;
    name.starts_with("gfx").then(|| name.to_string())
}

/// The architecture of each of `count` devices, asked of the HIP runtime loaded from
/// `runtime` (a library name already loaded: opening it again only takes a reference);
/// `None` for a device the runtime says nothing of.
pub(super) fn gcn_arch_names(runtime: &str, count: i32) -> Vec<Option<String>> {
    let count = usize::try_from(count).unwrap_or(0);
    // SAFETY: the library is loaded already (its initialisers ran); only symbols are
    // looked up.
    let Ok(library) = (unsafe { libloading::Library::new(runtime) }) else {
        return vec![None; count];
    };
    // The first entry point the runtime exports, with its layout.
    let entry = [
        (&b"hipGetDevicePropertiesR0600\0"[..], R0600),
        (&b"hipGetDeviceProperties\0"[..], R0000),
    ]
    .into_iter()
    .find_map(|(symbol, layout)| {
        // SAFETY: both entry points have this signature (a properties pointer, a device).
        let get = unsafe { library.get::<GetProperties>(symbol) }.ok()?;
        Some((get, layout))
    });
    let Some((get, layout)) = entry else {
        return vec![None; count];
    };
    (0..count)
        .map(|device| {
            // Room beyond the struct, should a runtime write more than its header says.
            let mut props = vec![0u8; 4096];
            // SAFETY: `props` has room for the struct of this entry point's layout.
            let rc = unsafe { get(props.as_mut_ptr().cast(), device as c_int) };
            (rc == 0)
                .then(|| arch_in(&props[..layout.0], layout))
                .flatten()
        })
        .collect()
}

/// hiprtc's options for a device of architecture `arch`: `--offload-arch=...` where
/// known, nothing otherwise (hiprtc then asks the runtime itself).
pub(super) fn hiprtc_options(arch: Option<&str>) -> Vec<CString> {
    arch.and_then(|a| CString::new(format!("--offload-arch={a}")).ok())
        .into_iter()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_architecture_is_read_where_each_layout_keeps_it() {
        for layout in [R0600, R0000] {
            let mut props = vec![0u8; layout.0];
            props[..18].copy_from_slice(b"AMD Instinct MI210");
            let arch = b"gfx90a:sramecc+:xnack-";
            props[layout.1..layout.1 + arch.len()].copy_from_slice(arch);
            assert_eq!(
                arch_in(&props, layout).as_deref(),
                Some("gfx90a:sramecc+:xnack-")
            );
            // The other layout's offset holds something else: nothing, not garbage.
            let other = if layout == R0600 { R0000 } else { R0600 };
            assert_eq!(arch_in(&props, other), None);
        }
        assert_eq!(arch_in(&[0u8; 100], R0600), None, "a struct too short");
    }

    #[test]
    fn hiprtc_is_told_the_architecture_where_it_is_known() {
        let options = hiprtc_options(Some("gfx942:sramecc+:xnack-"));
        assert_eq!(
            options,
            [CString::new("--offload-arch=gfx942:sramecc+:xnack-").unwrap()]
        );
        assert!(hiprtc_options(None).is_empty());
    }
}
