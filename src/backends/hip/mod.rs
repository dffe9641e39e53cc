//! HIP through bindgen bindings of the HIP runtime (`sys.rs`) and its runtime
//! compiler hiprtc (`rtc_sys.rs`) and the stream-ordered allocator
//! (`pool_sys.rs`: `hipMallocAsync` / `hipFreeAsync`, ROCm 5.1+, loaded on its own so
//! that an older runtime still loads without it), made by `scripts/gen-hip-bindings.sh` from
//! Debian's libamdhip64-dev (CI regenerates and diffs them), loaded at run time: the
//! `hip-sys` crates link libamdhip64 at load time, and a binary built with them does not
//! start without it.
//!
//! The runtime and the compiler are loaded separately, where each ROCm version puts
//! them ([`RUNTIME_LIBRARIES`], [`hiprtc_libraries`]): since ROCm 7 hiprtc is only in
//! `libhiprtc.so`, before it libamdhip64 exported it too. A missing compiler leaves the
//! memory paths working; only kernels then fail, saying why.
//!
//! With the runtime installed but no AMD GPU (this project's machines), `hipInit` and
//! `hipGetDeviceCount` answer with an error and the backend reports it as the reason.
//! Not run on a GPU where it was written.

#[allow(
    clippy::all,
    clippy::pedantic,
    clippy::undocumented_unsafe_blocks,
    missing_docs,
    unsafe_op_in_unsafe_fn
)]
#[rustfmt::skip]
pub mod sys;
#[allow(
    clippy::all,
    clippy::pedantic,
    clippy::undocumented_unsafe_blocks,
    missing_docs,
    unsafe_op_in_unsafe_fn
)]
#[rustfmt::skip]
pub mod rtc_sys;
#[allow(
    clippy::all,
    clippy::pedantic,
    clippy::undocumented_unsafe_blocks,
    missing_docs,
    unsafe_op_in_unsafe_fn
)]
#[rustfmt::skip]
pub mod pool_sys;

use std::ffi::{c_void, CStr, CString};
use std::sync::Arc;

use entry_points::{HipPool, HipRuntime, Hiprtc};
use pool_sys::HipPoolRaw;
use rtc_sys::{hiprtcProgram, hiprtcResult_HIPRTC_SUCCESS, HiprtcRaw};
use sys::*;

use super::cuda_hip::{self, GpuApi, GpuDevice, GpuError, GpuFacts, GpuMemory, GpuRect};
use super::loading::dl_error;
use crate::core::device::PhysicalDevice;
use crate::core::discovery::{Discovery, Unavailable};
use crate::core::location::Technology;
use crate::core::native::Native;

mod arch;
pub mod entry_points;
mod pointers;
mod pool;
mod rect;
mod result;
pub mod roctx;

/// The old name of [`sys`], for one release.
#[deprecated(
    note = "renamed `sys`: cudarc's layer names (sys, result, entry points) in every vendor folder"
)]
pub mod bindings {
    pub use super::sys::*;
}

/// The old name of [`rtc_sys`], for one release.
#[deprecated(
    note = "renamed `rtc_sys`: cudarc's layer names (sys, result, entry points) in every vendor folder"
)]
pub mod rtc_bindings {
    pub use super::rtc_sys::*;
}

/// The old name of [`pool_sys`], for one release.
#[deprecated(
    note = "renamed `pool_sys`: cudarc's layer names (sys, result, entry points) in every vendor folder"
)]
pub mod pool_bindings {
    pub use super::pool_sys::*;
}

/// The old name of [`entry_points`], for one release.
#[deprecated(
    note = "renamed `entry_points`: cudarc's layer names (sys, result, entry points) in every vendor folder"
)]
pub mod raw_traits {
    pub use super::entry_points::*;
}

/// The HIP device at one location: `locus::device_as::<HipDevice>(location)`. The device
/// type CUDA and HIP share (`cuda_hip`: its `Device` implementation, its kernels,
/// compiled by hiprtc through [`HipApi`], and its queued work, a stream event) over
/// this backend's calls.
pub type HipDevice = GpuDevice<HipApi>;

thread_local! {
    /// The device `activate` made current on this thread (one `HipApi` per process). A
    /// thread-local: no lock on every call, nothing kept for threads that ended.
    static CURRENT: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// The HIP runtime, with one stream per device, and its runtime compiler.
pub struct HipApi {
    /// The runtime's entry points (the loaded library; a simulated one in tests).
    raw: Box<dyn HipRuntime>,
    /// hiprtc, or why it could not be loaded.
    rtc: Result<Box<dyn Hiprtc>, Unavailable>,
    /// The stream-ordered allocator's calls (`hipMemPoolCreate`,
    /// `hipMallocFromPoolAsync`, `hipFreeAsync`, ...), or `None` on a runtime older than
    /// ROCm 5.1.
    pool: Option<Box<dyn HipPool>>,
    /// Per device: locus's own stream-ordered pool.
    pools: cuda_hip::OwnPools,
    streams: Vec<hipStream_t>,
    /// Each device's architecture for hiprtc (`gcnArchName`), by ordinal; `None` where
    /// the runtime did not say.
    archs: Vec<Option<String>>,
}

// SAFETY: HIP streams and modules may be used from any thread after hipSetDevice
// (`activate` does that before every call); mutable state is behind a mutex.
unsafe impl Send for HipApi {}
// SAFETY: as for `Send`.
unsafe impl Sync for HipApi {}

/// Where the HIP runtime is, newest ROCm first (7, 6, 5; the unversioned name is the
/// development symlink).
pub const RUNTIME_LIBRARIES: [&str; 4] = [
    "libamdhip64.so",
    "libamdhip64.so.7",
    "libamdhip64.so.6",
    "libamdhip64.so.5",
];

/// Where hiprtc is, in the order tried, for a runtime of ROCm `major` loaded as
/// `runtime`: the compiler library of that same major version, then the runtime library
/// itself (which exported hiprtc up to ROCm 6), then the unversioned development name
/// (whose version [`hiprtc_matches`] checks: a mixed install may point it at another
/// ROCm, whose compiler makes code the loaded runtime cannot load).
pub fn hiprtc_libraries(runtime: &str, major: i32) -> Vec<String> {
    let mut names = vec![format!("libhiprtc.so.{major}")];
    if major <= 6 {
        names.push(runtime.to_string());
    }
    names.push("libhiprtc.so".into());
    names
}

/// The ROCm major version of a HIP runtime version number (`hipRuntimeGetVersion`:
/// major * 10,000,000 + minor * 100,000 + patch).
pub fn rocm_major(runtime_version: i32) -> i32 {
    runtime_version / 10_000_000
}

/// Why the hiprtc in the library file `path` cannot serve a runtime of ROCm
/// `runtime_major`, if it cannot: its real file's version (`libhiprtc.so.6.1.60100`, the
/// target of the `libhiprtc.so` link) names another ROCm. (`hiprtcVersion` does not
/// tell: ROCm 5's answers 9.0, NVRTC's numbering.) A file without a version passes.
pub fn hiprtc_matches(path: &std::path::Path, runtime_major: i32) -> Result<(), LibraryRefused> {
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let name = real
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let major = name
        .split_once(".so.")
        .and_then(|(_, v)| v.split('.').next())
        .and_then(|m| m.parse::<i32>().ok());
    match major {
        Some(m) if m != runtime_major && name.starts_with("libhiprtc") => {
            Err(LibraryRefused::OtherRocm {
                file: real,
                rocm: m,
                runtime_rocm: runtime_major,
            })
        }
        _ => Ok(()),
    }
}

/// Why one library file of HIP's was not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LibraryRefused {
    /// The loader refused it (no such file, a symbol missing): its words.
    NotLoaded(String),
    /// It loaded, but is another ROCm's than the runtime's (a mixed install).
    OtherRocm {
        /// The library's real file (the target of its link).
        file: std::path::PathBuf,
        /// The ROCm its file name says.
        rocm: i32,
        /// The ROCm of the loaded runtime.
        runtime_rocm: i32,
    },
}

impl From<libloading::Error> for LibraryRefused {
    fn from(e: libloading::Error) -> LibraryRefused {
        LibraryRefused::NotLoaded(dl_error(&e))
    }
}

impl std::fmt::Display for LibraryRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LibraryRefused::NotLoaded(why) => f.write_str(why),
            LibraryRefused::OtherRocm {
                file,
                rocm,
                runtime_rocm,
            } => write!(
                f,
                "{} is ROCm {rocm}'s, but the loaded runtime is ROCm {runtime_rocm} (a mixed \
                 install: install the runtime compiler of the same ROCm)",
                file.display()
            ),
        }
    }
}

/// The file a loaded symbol at `address` comes from (`dladdr`).
fn library_path(address: *const std::ffi::c_void) -> Option<std::path::PathBuf> {
    let mut info = libc::Dl_info {
        dli_fname: std::ptr::null(),
        dli_fbase: std::ptr::null_mut(),
        dli_sname: std::ptr::null(),
        dli_saddr: std::ptr::null_mut(),
    };
    // SAFETY: `info` is a writable Dl_info; dladdr only looks the address up.
    let found = unsafe { libc::dladdr(address, &mut info) };
    if found == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr's file name is a NUL-terminated string owned by the loader.
    let name = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
    Some(std::path::PathBuf::from(
        name.to_string_lossy().into_owned(),
    ))
}

/// Tries `names` in order with `open`; the first that loads and its name, or every
/// reason.
fn first_of<T>(
    names: &[impl AsRef<str>],
    open: impl Fn(&str) -> Result<T, LibraryRefused>,
) -> Result<(T, &str), Vec<String>> {
    let mut tried = Vec::new();
    for name in names.iter().map(AsRef::as_ref) {
        match open(name) {
            Ok(library) => return Ok((library, name)),
            Err(e) => tried.push(format!("{name}: {e}")),
        }
    }
    Err(tried)
}

/// The HIP runtime, its compiler (or why not) and its stream-ordered allocator (where
/// the runtime has it).
type Loaded = (
    HipApiRaw,
    Result<HiprtcRaw, Unavailable>,
    Option<HipPoolRaw>,
    &'static str,
);

fn load() -> Result<Loaded, Unavailable> {
    let (raw, runtime) = first_of(&RUNTIME_LIBRARIES, |name| {
        // SAFETY: loading the HIP runtime runs its initialisers, as any HIP program
        // does; every symbol is checked to exist (bindgen's require-all).
        unsafe { HipApiRaw::new(name) }.map_err(LibraryRefused::from)
    })
        .map_err(|tried| {
            format!(
                "the HIP runtime could not be loaded ({}); install ROCm's HIP runtime (apt-get install libamdhip64-5) on a machine with an AMD GPU",
                tried.join("; ")
            )
        })?;
    let mut version = 0;
    // SAFETY: a plain query with an out-pointer to a local.
    unsafe { raw.hipRuntimeGetVersion(&mut version) };
    let major = rocm_major(version);
    let rtc = first_of(&hiprtc_libraries(runtime, major), |name| {
        // SAFETY: as for the runtime, for the runtime compiler's library.
        let rtc = unsafe { HiprtcRaw::new(name) }?;
        let symbol = rtc.hiprtcCreateProgram as *const std::ffi::c_void;
        match library_path(symbol) {
            Some(path) => hiprtc_matches(&path, major).map(|()| rtc),
            None => Ok(rtc),
        }
    })
    .map(|(rtc, _)| rtc)
    .map_err(|tried| {
        Unavailable::from(format!(
            "hiprtc could not be loaded ({}); kernels need ROCm's runtime compiler (libhiprtc)",
            tried.join("; ")
        ))
    });
    // SAFETY: the library is loaded already (above); only symbols are looked up.
    let pool = unsafe { HipPoolRaw::new(runtime) }.ok();
    Ok((raw, rtc, pool, runtime))
}

pub(crate) fn discover() -> Result<Discovery, Unavailable> {
    let (raw, rtc, pool, runtime) = load()?;
    let api = HipApi {
        raw: Box::new(raw),
        rtc: rtc.map(|r| Box::new(r) as Box<dyn Hiprtc>),
        pool: pool.map(|p| Box::new(p) as Box<dyn HipPool>),
        pools: Default::default(),
        streams: Vec::new(),
        archs: Vec::new(),
    };
    discover_on(api, |count| arch::gcn_arch_names(runtime, count))
}

/// Discovery through `api`'s entry points (the HIP runtime's, or a simulated runtime's
/// in tests), `archs` naming each device's architecture. The calling thread's current
/// device is current again when this returns, on every path: opening a device makes it
/// current to create its stream, and leaving the last one current would move the
/// application's next `hipMalloc` on this thread to that device.
pub(super) fn discover_on(
    mut api: HipApi,
    archs: impl FnOnce(i32) -> Vec<Option<String>>,
) -> Result<Discovery, Unavailable> {
    let before = api.current();
    let opened = open_all(&mut api, archs);
    api.restore(before);
    let (facts, skipped) = opened?;
    Ok(cuda_hip::discovery(Arc::new(api), facts, skipped))
}

/// `hipInit`, then every device opened ([`open_device`]) and its stream kept in `api`;
/// the opened devices' facts and the reasons for those skipped.
fn open_all(
    api: &mut HipApi,
    archs: impl FnOnce(i32) -> Vec<Option<String>>,
) -> Result<cuda_hip::Found, Unavailable> {
    let mut version = 0;
    // SAFETY: plain queries with out-pointers to locals.
    let (init, count_rc, count) = unsafe {
        api.raw.hipRuntimeGetVersion(&mut version);
        let init = api.raw.hipInit(0);
        let mut count = 0;
        let rc = api.raw.hipGetDeviceCount(&mut count);
        (init, rc, count)
    };
    let compiler = match &api.rtc {
        Ok(_) => "kernels compiled by hiprtc for the device's own architecture".to_string(),
        Err(why) => why.to_string(),
    };
    if count_rc != hipError_t_hipSuccess || count == 0 {
        let what = if count_rc == hipError_t_hipErrorNoDevice {
            "hipErrorNoDevice: no AMD GPU found".to_string()
        } else if count_rc != hipError_t_hipSuccess {
            format!("hipGetDeviceCount returned {}", api.describe(count_rc))
        } else {
            "hipGetDeviceCount found 0 devices".to_string()
        };
        return Err(format!(
            "{what} (HIP runtime {version} loaded; hipInit returned {}, hipGetDeviceCount {})",
            api.describe(init),
            api.describe(count_rc)
        )
        .into());
    }
    api.archs = archs(count);
    let (opened, skipped) =
        cuda_hip::open_each("HIP", count, |i| open_device(api, i, version, &compiler))?;
    // Indexed by the driver's ordinal; a skipped device has a null stream, which
    // `activate` refuses.
    api.streams = vec![std::ptr::null_mut(); count.max(0) as usize];
    api.pools = cuda_hip::OwnPools::new(api.streams.len());
    let mut facts = Vec::new();
    for (i, (stream, f)) in opened {
        api.streams[i as usize] = stream;
        facts.push((i, f));
    }
    Ok((facts, skipped))
}

/// Device `i`'s non-blocking stream and its facts.
fn open_device(
    api: &HipApi,
    i: i32,
    version: i32,
    compiler: &str,
) -> Result<(hipStream_t, GpuFacts), Unavailable> {
    let mut name = [0 as std::os::raw::c_char; 256];
    let (mut total, mut managed, mut pools, mut pageable) = (0usize, 0, 0, 0);
    // Domain, bus, device.
    let mut pci = [0; 3];
    let mut stream: hipStream_t = std::ptr::null_mut();
    // SAFETY: device `i` exists (0..count); out-pointers are locals.
    unsafe {
        api.check("hipSetDevice", api.raw.hipSetDevice(i))
            .map_err(|e| e.to_string())?;
        api.raw
            .hipDeviceGetName(name.as_mut_ptr(), name.len() as i32, i);
        api.raw.hipDeviceTotalMem(&mut total, i);
        api.raw.hipDeviceGetAttribute(
            &mut managed,
            hipDeviceAttribute_t_hipDeviceAttributeConcurrentManagedAccess,
            i,
        );
        api.raw.hipDeviceGetAttribute(
            &mut pools,
            hipDeviceAttribute_t_hipDeviceAttributeMemoryPoolsSupported,
            i,
        );
        api.raw.hipDeviceGetAttribute(
            &mut pageable,
            hipDeviceAttribute_t_hipDeviceAttributePageableMemoryAccess,
            i,
        );
        for (value, attribute) in pci.iter_mut().zip([
            hipDeviceAttribute_t_hipDeviceAttributePciDomainID,
            hipDeviceAttribute_t_hipDeviceAttributePciBusId,
            hipDeviceAttribute_t_hipDeviceAttributePciDeviceId,
        ]) {
            api.raw.hipDeviceGetAttribute(value, attribute, i);
        }
        api.check(
            "hipStreamCreateWithFlags",
            api.raw.hipStreamCreateWithFlags(&mut stream, 1),
        )
        .map_err(|e| e.to_string())?;
    }
    // SAFETY: hipDeviceGetName wrote a NUL-terminated string into `name`.
    let name = unsafe { CStr::from_ptr(name.as_ptr()) }
        .to_string_lossy()
        .into_owned();
    let facts = GpuFacts {
        name,
        memory_bytes: total as u64,
        concurrent_managed_access: managed != 0,
        stream_ordered_pools: pools != 0 && api.pool.is_some(),
        pageable_memory_access: pageable != 0,
        version: format!("HIP runtime {version}"),
        pci: Some(PhysicalDevice::Pci {
            domain: pci[0] as u32,
            bus: pci[1] as u32,
            device: pci[2] as u32,
            function: 0,
        }),
        notes: vec![format!(
            "HIP runtime {version}, device {i} ({}), one non-blocking stream; {compiler}",
            match api.archs.get(i as usize).cloned().flatten() {
                Some(arch) => format!("architecture {arch}, passed to hiprtc as --offload-arch"),
                None => "architecture not reported: hiprtc asks the runtime itself".into(),
            }
        )],
    };
    Ok((stream, facts))
}

impl HipApi {
    /// A HipApi over the simulated runtime (its pool calls too) and a hiprtc, with each
    /// device's architecture: the call layer tested without an AMD GPU.
    #[cfg(test)]
    fn simulated(
        runtime: &simulated::SimHip,
        rtc: Box<dyn Hiprtc>,
        archs: Vec<Option<String>>,
    ) -> HipApi {
        HipApi {
            raw: Box::new(runtime.clone()),
            rtc: Ok(rtc),
            pool: Some(Box::new(runtime.clone())),
            pools: cuda_hip::OwnPools::new(archs.len()),
            // The stream handles the simulated runtime makes (it queues work by handle).
            streams: (0..archs.len())
                .map(|i| (0x5000 + 16 * i) as hipStream_t)
                .collect(),
            archs,
        }
    }
}

#[cfg(test)]
mod call_layer_tests;
#[cfg(test)]
mod compile_tests;
#[cfg(test)]
mod discovery_tests;
#[cfg(test)]
mod real_compiler_tests;
#[cfg(test)]
mod rect_tests;
#[cfg(test)]
mod runtime_tests;
#[cfg(test)]
mod simulated;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runtime_and_its_compiler_are_looked_for_where_each_rocm_puts_them() {
        assert!(RUNTIME_LIBRARIES.contains(&"libamdhip64.so.7"));
        // The compiler of the runtime's own ROCm first (issue 48, item 11: the code before
        // tried the unversioned `libhiprtc.so` first, whatever ROCm it was), the runtime
        // itself up to ROCm 6, the unversioned name last (its version checked).
        assert_eq!(
            hiprtc_libraries("libamdhip64.so.5", 5),
            ["libhiprtc.so.5", "libamdhip64.so.5", "libhiprtc.so"]
        );
        assert_eq!(
            hiprtc_libraries("libamdhip64.so", 7),
            ["libhiprtc.so.7", "libhiprtc.so"]
        );
        assert_eq!(rocm_major(50_221_153), 5);
        let dir = std::env::temp_dir().join(format!("locus-hiprtc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (real, link) = (dir.join("libhiprtc.so.7.0.70000"), dir.join("libhiprtc.so"));
        std::fs::write(&real, b"").unwrap();
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert!(hiprtc_matches(&link, 7).is_ok());
        let why = hiprtc_matches(&link, 6).unwrap_err().to_string();
        assert!(why.contains("ROCm 7's") && why.contains("ROCm 6"), "{why}");
        assert!(hiprtc_matches(std::path::Path::new("/x/libamdhip64.so.5"), 5).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
        // A compiler that is nowhere is a reason, not a failure of the runtime's load.
        let missing = first_of(&["libhiprtc-missing.so"], |name| {
            // SAFETY: a name that does not exist; nothing is loaded.
            unsafe { HiprtcRaw::new(name) }.map_err(LibraryRefused::from)
        });
        assert!(missing.is_err_and(|tried| tried[0].contains("libhiprtc-missing.so")));
    }

    /// Where the HIP runtime is installed (CI: Debian's ROCm 5, whose libamdhip64 still
    /// exports hiprtc), both load.
    #[test]
    fn the_installed_runtime_loads_with_its_compiler() {
        if !crate::core::config::is_set("LOCUS_EXPECT_HIP_NO_DEVICE") {
            eprintln!("SKIPPED: LOCUS_EXPECT_HIP_NO_DEVICE is not set (no HIP runtime expected)");
            return;
        }
        let (_, rtc, pool, _) = load().expect("the HIP runtime loads");
        assert!(rtc.is_ok(), "{:?}", rtc.err());
        assert!(pool.is_some(), "ROCm 5.2 has hipMallocAsync");
    }
}
