//! OpenMP through libgomp, loaded at run time.
//!
//! build.rs compiles the runtime shim (`shim.c`) and the OpenMP kernels from `shaders/`
//! with `-fopenmp` into one shared object; it is embedded in the binary and loaded from
//! an anonymous in-memory file (`memfd_create`) the first time OpenMP is used. The
//! locus binary itself therefore never links libgomp: where libgomp is missing, loading
//! fails and `openmp` is reported unavailable with the reason.
//!
//! Devices: with offload devices, `openmp:N` is OpenMP device N. Without any (libgomp
//! on a machine with no GPU plugin), `openmp:0` is the initial device, where target
//! regions run on the host: memory from `omp_target_alloc` there is host memory, which
//! the backend decides from what libgomp reports (`omp_get_initial_device`,
//! `omp_is_initial_device` inside a target region), never from a fixed table.
//!
//! No queued work: every copy and kernel runs to completion before the call returns
//! (asynchronous copies go to locus's worker threads).

use std::any::Any;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use libloading::Library;

use crate::core::capability::{
    launch_after_waiting, native_calls_are_own, HostMemoryInPlace, InPlace, Kernels, NativeCalls,
};
use crate::core::completion::{Completion, Dependencies};
use crate::core::device::{Device, DeviceInfo, HostAccess, HostReach, PhysicalDevice};
use crate::core::discovery::{Discovery, Unavailable};
use crate::core::error::{Error, Result};
use crate::core::launch::{bad_argument, LaunchArg, LaunchSpec};
use crate::core::location::{Location, Technology};
use crate::core::memory::Memory;
use crate::core::native::Native;
use crate::core::route::{CopyPath, Endpoint, Route, RouteKind};

mod device;
mod kernels;
mod rect;
mod user_kernels;

pub use kernels::{raw_kernel, vec_add_f32};

static LIBRARY: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/liblocus_openmp.so"));

type Count = unsafe extern "C" fn() -> i32;
type OnHost = unsafe extern "C" fn(i32) -> i32;
type Alloc = unsafe extern "C" fn(usize, i32) -> *mut c_void;
type Free = unsafe extern "C" fn(*mut c_void, i32);
type Memcpy =
    unsafe extern "C" fn(*mut c_void, *const c_void, usize, usize, usize, i32, i32) -> i32;
/// `locus_omp_memcpy_rect(dst, src, num_dims, volume, dst_dims, src_dims, dst_dev, src_dev)`.
type MemcpyRect = unsafe extern "C" fn(
    *mut c_void,
    *const c_void,
    i32,
    *const usize,
    *const usize,
    *const usize,
    i32,
    i32,
) -> i32;
type Fill = unsafe extern "C" fn(*mut c_void, usize, usize, *const u8, usize, i32) -> i32;
type VecAdd = unsafe extern "C" fn(*const f32, *const f32, *mut f32, usize, i32) -> i32;
/// `int locus_omp_k_<name>(void **args, size_t gx, size_t gy, int dev)`.
type KernelEntry = unsafe extern "C" fn(*mut *mut c_void, usize, usize, i32) -> i32;

/// The entry points of the loaded kernel library.
struct Api {
    num_devices: Count,
    initial_device: Count,
    default_device: Count,
    runs_on_host: OnHost,
    alloc: Alloc,
    free: Free,
    memcpy: Memcpy,
    memcpy_rect: MemcpyRect,
    fill: Fill,
    vec_add_f32: VecAdd,
    _library: Library,
}

fn api() -> Result<&'static Api, Unavailable> {
    static API: OnceLock<Result<Api, Unavailable>> = OnceLock::new();
    API.get_or_init(load).as_ref().map_err(Clone::clone)
}

#[cfg(target_os = "linux")]
fn open_library() -> Result<Library, Unavailable> {
    use std::io::Write;
    use std::os::fd::FromRawFd;
    let build_error = env!("LOCUS_OPENMP_BUILD_ERROR");
    if LIBRARY.is_empty() {
        return Err(format!(
            "locus was built without its OpenMP kernels (the C compiler failed: {build_error}); \
             install gcc with libgomp (apt-get install gcc) and rebuild"
        )
        .into());
    }
    // SAFETY: memfd_create with a NUL-terminated name and no flags has no preconditions.
    let fd = unsafe { libc::memfd_create(c"locus-openmp".as_ptr(), 0) };
    if fd < 0 {
        return Err(format!("memfd_create failed: {}", std::io::Error::last_os_error()).into());
    }
    // SAFETY: `fd` is a fresh descriptor that this `File` now owns.
    let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
    file.write_all(LIBRARY)
        .map_err(|e| format!("writing the OpenMP kernel library to memory failed: {e}"))?;
    let path = format!("/proc/self/fd/{fd}");
    // SAFETY: the library is locus's own kernel object built by build.rs; its
    // initialisers are libgomp's.
    let library = unsafe { Library::new(&path) }.map_err(|e| {
        let error = super::loading::dl_error(&e);
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
        format!(
            "the OpenMP kernel library could not be loaded ({error}); {}",
            load_failure_hint(&error, &maps)
        )
    });
    drop(file);
    Ok(library?)
}

/// What to do when the kernel library (which needs `libgomp.so.1`) does not load, from
/// the loader's `error` and the process's mappings (`/proc/self/maps`): another library's
/// own OpenMP runtime already in the process (PyTorch and scikit-learn wheels bundle a
/// renamed libgomp) is named, since installing libgomp1 does not help there.
fn load_failure_hint(error: &str, maps: &str) -> String {
    let foreign = maps
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|path| {
            let name = path.rsplit('/').next().unwrap_or(path);
            name.starts_with("libgomp") && !name.starts_with("libgomp.so")
        });
    let first = "import locus (or load libgomp.so.1) before the library that brings its own, or start the program with LD_PRELOAD=libgomp.so.1";
    match foreign {
        _ if error.contains("static TLS") => format!(
            "the process has no static TLS left for libgomp, which happens when another OpenMP runtime{} was loaded first: {first}",
            foreign.map(|f| format!(" ({f})")).unwrap_or_default()
        ),
        Some(f) if !error.contains("libgomp.so.1: cannot open") => format!(
            "another library's OpenMP runtime is already loaded ({f}): {first}"
        ),
        Some(f) => format!(
            "install libgomp1 (part of gcc); the OpenMP runtime another library brought ({f}) is private to it"
        ),
        None => "install libgomp1 (part of gcc)".into(),
    }
}

#[cfg(not(target_os = "linux"))]
fn open_library() -> Result<Library, Unavailable> {
    Err("the OpenMP backend loads its kernels with memfd_create, which needs Linux".into())
}

fn load() -> Result<Api, Unavailable> {
    let library = open_library()?;
    // SAFETY: each symbol is defined in shim.c / shaders with exactly the C signature of
    // the type it is loaded as.
    unsafe {
        fn missing(name: &str, e: libloading::Error) -> String {
            format!("symbol {name} missing from the OpenMP kernel library: {e}")
        }
        macro_rules! sym {
            ($name:literal) => {
                *library
                    .get(concat!($name, "\0").as_bytes())
                    .map_err(|e| missing($name, e))?
            };
        }
        Ok(Api {
            num_devices: sym!("locus_omp_num_devices"),
            initial_device: sym!("locus_omp_initial_device"),
            default_device: sym!("locus_omp_default_device"),
            runs_on_host: sym!("locus_omp_runs_on_host"),
            alloc: sym!("locus_omp_alloc"),
            free: sym!("locus_omp_free"),
            memcpy: sym!("locus_omp_memcpy"),
            memcpy_rect: sym!("locus_omp_memcpy_rect"),
            fill: sym!("locus_omp_fill"),
            vec_add_f32: sym!("locus_omp_vec_add_f32"),
            _library: library,
        })
    }
}

/// One OpenMP device.
#[derive(Debug)]
pub struct OpenMpDevice {
    location: Location,
    info: DeviceInfo,
    device_number: i32,
    initial_device: i32,
    on_host: bool,
    live: AtomicUsize,
}

pub(crate) fn discover() -> Result<Discovery, Unavailable> {
    let api = api()?;
    // SAFETY: plain OpenMP queries without arguments.
    let (count, initial, default) = unsafe {
        (
            (api.num_devices)(),
            (api.initial_device)(),
            (api.default_device)(),
        )
    };
    let numbers: Vec<i32> = if count > 0 {
        (0..count).collect()
    } else {
        vec![initial]
    };
    let devices = numbers
        .into_iter()
        .enumerate()
        .map(|(ordinal, number)| {
            // SAFETY: `number` is a valid device number (0..count, or the initial device).
            let on_host = number == initial || unsafe { (api.runs_on_host)(number) } != 0;
            let mut notes = vec![format!(
                "OpenMP device {number} (omp_get_num_devices() = {count}, initial device {initial}, default device {default})"
            )];
            if on_host {
                notes.push("target regions run on the host: omp_target_alloc returns host memory".into());
                notes.push(wait_policy_note(
                    std::env::var("OMP_WAIT_POLICY").ok().as_deref(),
                    std::env::var("GOMP_SPINCOUNT").ok().as_deref(),
                ));
            }
            let host = crate::core::device::host_memory_bytes();
            Arc::new(OpenMpDevice {
                location: Location::OpenMp(ordinal as u32),
                info: DeviceInfo {
                    name: if on_host {
                        "libgomp initial device (host fallback)".into()
                    } else {
                        format!("libgomp offload device {number}")
                    },
                    platform: "libgomp".into(),
                    kind: if on_host { "host".into() } else { "offload".into() },
                    memory_bytes: if on_host { host } else { None },
                    max_allocation: host.unwrap_or(u64::MAX / 2),
                    shares_host_memory: on_host,
                    version: None,
                    notes,
                    // An offload device's runtime does not name its hardware.
                    physical: on_host.then_some(PhysicalDevice::HostCpu),
                },
                device_number: number,
                initial_device: initial,
                on_host,
                live: AtomicUsize::new(0),
            }) as Arc<dyn Device>
        })
        .collect();
    let peer: Arc<dyn CopyPath> = Arc::new(BetweenDevices);
    Ok(Discovery {
        devices,
        skipped: vec![],
        paths: vec![(Technology::OpenMp, Technology::OpenMp, peer)],
    })
}

/// `omp_target_memcpy` from one OpenMP device straight to another: the peer route.
struct BetweenDevices;

fn openmp_of(device: &Arc<dyn Device>) -> Option<&OpenMpDevice> {
    (&**device as &dyn Any).downcast_ref::<OpenMpDevice>()
}

impl CopyPath for BetweenDevices {
    fn name(&self) -> &'static str {
        "omp_target_memcpy between two OpenMP devices"
    }

    fn plan(&self, src: Endpoint<'_>, dst: Endpoint<'_>) -> Option<Route> {
        let (a, b) = (openmp_of(src.device)?, openmp_of(dst.device)?);
        (a.device_number != b.device_number).then(|| Route {
            src: a.location,
            dst: b.location,
            kind: RouteKind::Peer,
            reason: format!(
                "omp_target_memcpy from OpenMP device {} to device {}",
                a.device_number, b.device_number
            )
            .into(),
        })
    }

    fn copy(&self, src: &Memory, so: usize, dst: &Memory, d: usize, len: usize) -> Result<()> {
        let (Some(a), Some(b)) = (openmp_of(src.device()), openmp_of(dst.device())) else {
            return Err(Error::Invalid(
                "omp_target_memcpy path given a non-OpenMP allocation".into(),
            ));
        };
        // SAFETY: offsets were bounds-checked by the transfer engine.
        let (from, to) = unsafe { (ptr_of(src.native()).add(so), ptr_of(dst.native()).add(d)) };
        b.memcpy(
            "omp_target_memcpy",
            to,
            b.device_number,
            from,
            a.device_number,
            len,
        )
    }
}

fn ptr_of(native: &Native) -> *mut u8 {
    match native {
        Native::OpenMp { ptr, .. } => *ptr,
        #[allow(unreachable_patterns)]
        other => unreachable!("OpenMP device given a foreign handle {other:?}"),
    }
}

impl OpenMpDevice {
    /// The OpenMP device number (for `device(...)` clauses).
    pub fn device_number(&self) -> i32 {
        self.device_number
    }

    /// The initial (host) device number as libgomp reports it.
    pub fn initial_device(&self) -> i32 {
        self.initial_device
    }

    fn memcpy(
        &self,
        call: &'static str,
        dst: *mut u8,
        dst_dev: i32,
        src: *const u8,
        src_dev: i32,
        len: usize,
    ) -> Result<()> {
        let api = api().map_err(|e| self.unavailable(e.to_string()))?;
        // SAFETY: both pointers address at least `len` bytes on their devices (checked
        // by `Memory`, or borrowed host slices on the initial device).
        let rc = unsafe { (api.memcpy)(dst.cast(), src.cast(), len, 0, 0, dst_dev, src_dev) };
        if rc == 0 {
            Ok(())
        } else {
            Err(Error::Backend {
                location: self.location,
                call,
                message: format!("returned {rc}"),
                hint: "check that both pointers belong to the device numbers given".into(),
            })
        }
    }

    fn unavailable(&self, reason: String) -> Error {
        Error::Unavailable {
            location: self.location,
            reason,
        }
    }
}

/// What libgomp's threads do between kernels, as its environment says (read once, when
/// libgomp loads): by default each thread spins about 300,000 times (milliseconds on
/// cores whose `pause` is slow) before it sleeps, which starves other runtimes sharing
/// the cores: asynchronous pipelines run slower than synchronous ones with the default
/// and faster with `OMP_WAIT_POLICY=passive` (`docs/design-measurements.md`).
fn wait_policy_note(policy: Option<&str>, spincount: Option<&str>) -> String {
    match (policy.map(str::trim), spincount.map(str::trim)) {
        (_, Some(n)) if !n.is_empty() => {
            format!("libgomp threads spin GOMP_SPINCOUNT={n} times after each kernel, then sleep")
        }
        (Some(p), _) if p.eq_ignore_ascii_case("passive") => {
            "libgomp threads sleep after each kernel (OMP_WAIT_POLICY=passive)".into()
        }
        (Some(p), _) if p.eq_ignore_ascii_case("active") => {
            "libgomp threads spin between kernels (OMP_WAIT_POLICY=active): other runtimes on \
             these cores run slower meanwhile"
                .into()
        }
        _ => "libgomp threads spin ~300000 times after each kernel before they sleep \
              (OMP_WAIT_POLICY unset): where other runtimes share these cores (asynchronous \
              pipelines), set OMP_WAIT_POLICY=passive"
            .into(),
    }
}

#[cfg(test)]
mod wait_policy_tests {
    use super::wait_policy_note;

    #[test]
    fn the_note_follows_libgomp_s_environment() {
        assert!(wait_policy_note(None, None).contains("set OMP_WAIT_POLICY=passive"));
        assert!(wait_policy_note(Some("PASSIVE"), None).contains("sleep after each kernel"));
        assert!(wait_policy_note(Some("active"), None).contains("spin between kernels"));
        assert!(wait_policy_note(Some("passive"), Some("1000")).contains("GOMP_SPINCOUNT=1000"));
        assert!(wait_policy_note(Some("other"), Some(" ")).contains("OMP_WAIT_POLICY unset"));
    }
}

#[cfg(test)]
mod load_hint_tests {
    use super::load_failure_hint;

    const TORCH: &str = "7f00-7f10 r-xp 00000000 08:01 42 /venv/lib/python3.11/site-packages/torch/lib/libgomp-a34b3233.so.1\n";

    /// The loader's errors when PyTorch's bundled libgomp came first: the hint names it
    /// and says what to do (the code before said "install libgomp1" for every failure).
    #[test]
    fn another_runtime_loaded_first_is_named_with_what_to_do() {
        let h = load_failure_hint(
            "libgomp.so.1: cannot allocate memory in static TLS block",
            TORCH,
        );
        assert!(
            h.contains("static TLS") && h.contains("libgomp-a34b3233") && h.contains("LD_PRELOAD"),
            "{h}"
        );
        let h = load_failure_hint("undefined symbol: GOMP_loop_start, version GOMP_5.0", TORCH);
        assert!(
            h.contains("already loaded") && h.contains("import locus"),
            "{h}"
        );
        let h = load_failure_hint("libgomp.so.1: cannot open shared object file", "");
        assert_eq!(h, "install libgomp1 (part of gcc)");
        let h = load_failure_hint("libgomp.so.1: cannot open shared object file", TORCH);
        assert!(
            h.contains("install libgomp1") && h.contains("private"),
            "{h}"
        );
    }
}
