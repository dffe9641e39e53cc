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

use std::any::Any;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use libloading::Library;

use crate::core::completion::Completion;
use crate::core::device::{Device, DeviceInfo, Discovery, HostAccess};
use crate::core::error::{Error, Result};
use crate::core::launch::{bad_argument, LaunchArg, LaunchSpec};
use crate::core::location::{Location, Technology};
use crate::core::memory::Memory;
use crate::core::native::Native;
use crate::core::route::{CopyPath, Endpoint, Route, RouteKind};

static LIBRARY: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/liblocus_openmp.so"));

type Count = unsafe extern "C" fn() -> i32;
type OnHost = unsafe extern "C" fn(i32) -> i32;
type Alloc = unsafe extern "C" fn(usize, i32) -> *mut c_void;
type Free = unsafe extern "C" fn(*mut c_void, i32);
type Memcpy =
    unsafe extern "C" fn(*mut c_void, *const c_void, usize, usize, usize, i32, i32) -> i32;
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
    fill: Fill,
    vec_add_f32: VecAdd,
    _library: Library,
}

fn api() -> Result<&'static Api, String> {
    static API: OnceLock<Result<Api, String>> = OnceLock::new();
    API.get_or_init(load).as_ref().map_err(Clone::clone)
}

#[cfg(target_os = "linux")]
fn open_library() -> Result<Library, String> {
    use std::io::Write;
    use std::os::fd::FromRawFd;
    let build_error = env!("LOCUS_OPENMP_BUILD_ERROR");
    if LIBRARY.is_empty() {
        return Err(format!(
            "locus was built without its OpenMP kernels (the C compiler failed: {build_error}); \
             install gcc with libgomp (apt-get install gcc) and rebuild"
        ));
    }
    // SAFETY: memfd_create with a NUL-terminated name and no flags has no preconditions.
    let fd = unsafe { libc::memfd_create(c"locus-openmp".as_ptr(), 0) };
    if fd < 0 {
        return Err(format!(
            "memfd_create failed: {}",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: `fd` is a fresh descriptor that this `File` now owns.
    let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
    file.write_all(LIBRARY)
        .map_err(|e| format!("writing the OpenMP kernel library to memory failed: {e}"))?;
    let path = format!("/proc/self/fd/{fd}");
    // SAFETY: the library is locus's own kernel object built by build.rs; its
    // initialisers are libgomp's.
    let library = unsafe { Library::new(&path) }.map_err(|e| {
        format!(
            "the OpenMP kernel library could not be loaded ({}); install libgomp1 (part of gcc)",
            super::loading::dl_error(&e)
        )
    });
    drop(file);
    library
}

#[cfg(not(target_os = "linux"))]
fn open_library() -> Result<Library, String> {
    Err("the OpenMP backend loads its kernels with memfd_create, which needs Linux".into())
}

fn load() -> Result<Api, String> {
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

pub(crate) fn discover() -> Result<Discovery, String> {
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
                    notes,
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
            ),
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
        let api = api().map_err(|e| self.unavailable(e))?;
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

/// `omp_target_memcpy(dst, src, len, 0, 0, dst_device, src_device)`, straight through
/// libgomp (the benchmark's raw baseline).
///
/// # Safety
/// `dst` and `src` address at least `len` bytes on the given OpenMP device numbers.
pub unsafe fn target_memcpy(
    dst: *mut u8,
    dst_device: i32,
    src: *const u8,
    src_device: i32,
    len: usize,
) -> Result<()> {
    let api = api().map_err(Error::Invalid)?;
    // SAFETY: forwarded from the caller's contract.
    let rc = unsafe { (api.memcpy)(dst.cast(), src.cast(), len, 0, 0, dst_device, src_device) };
    if rc == 0 {
        Ok(())
    } else {
        Err(Error::Invalid(format!("omp_target_memcpy returned {rc}")))
    }
}

/// The raw entry point `locus_omp_k_<entry>` of an OpenMP kernel built into locus's
/// kernel library (for baselines that call it directly, without a codelet).
///
/// The function follows the convention `int f(void **args, size_t gx, size_t gy, int
/// device)` described in `shaders/vec_add_openmp.c`.
pub fn raw_kernel(
    entry: &str,
) -> Result<unsafe extern "C" fn(*mut *mut c_void, usize, usize, i32) -> i32> {
    let api = api().map_err(Error::Invalid)?;
    let symbol = format!("locus_omp_k_{entry}\0");
    // SAFETY: kernels in the library follow the documented convention.
    unsafe {
        api._library
            .get::<KernelEntry>(symbol.as_bytes())
            .map(|f| *f)
            .map_err(|e| Error::Invalid(format!("no OpenMP kernel `{entry}`: {e}")))
    }
}

/// Runs the `vec_add` kernel of `shaders/vec_add_openmp.c` on OpenMP device `device`:
/// `c[i] = a[i] + b[i]` for `i < n`, as a `target teams distribute parallel for`.
///
/// # Safety
/// `a`, `b` and `c` are device pointers valid on `device` (memory from
/// `omp_target_alloc` there, or host addresses when it is the initial device) of at
/// least `n` elements each, and nothing else accesses `c` during the call.
pub unsafe fn vec_add_f32(
    device: &OpenMpDevice,
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    n: usize,
) -> Result<()> {
    let api = api().map_err(|e| device.unavailable(e))?;
    // SAFETY: forwarded from the caller's contract.
    unsafe { (api.vec_add_f32)(a, b, c, n, device.device_number) };
    Ok(())
}

impl Device for OpenMpDevice {
    fn location(&self) -> Location {
        self.location
    }

    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn allocate(&self, bytes: usize) -> Result<Native> {
        let api = api().map_err(|e| self.unavailable(e))?;
        // On the initial device omp_target_alloc is malloc (16-byte aligned): take
        // ALIGNMENT more, align, and keep the original pointer just below the result.
        let extra = if self.on_host {
            crate::core::device::ALIGNMENT
        } else {
            0
        };
        // SAFETY: omp_target_alloc has no preconditions; it returns NULL on failure.
        let raw = unsafe { (api.alloc)(bytes.max(1) + extra, self.device_number) };
        if raw.is_null() {
            return Err(Error::Backend {
                location: self.location,
                call: "omp_target_alloc",
                message: format!("returned NULL for {bytes} bytes"),
                hint: "the device is out of memory: free buffers or use a smaller size".into(),
            });
        }
        let ptr = if self.on_host {
            let aligned = (raw as usize + std::mem::size_of::<usize>())
                .next_multiple_of(crate::core::device::ALIGNMENT);
            // SAFETY: host memory of bytes + ALIGNMENT bytes: `aligned` lies within the
            // first ALIGNMENT bytes, at least one usize past `raw`, so the slot below it
            // is inside the allocation and aligned for usize.
            unsafe { (aligned as *mut usize).sub(1).write(raw as usize) };
            aligned as *mut u8
        } else {
            if !(raw as usize).is_multiple_of(crate::core::device::ALIGNMENT) {
                // SAFETY: freeing what was just allocated on this device.
                unsafe { (api.free)(raw, self.device_number) };
                return Err(Error::Invalid(format!(
                    "{}: omp_target_alloc returned a pointer not aligned to {} bytes",
                    self.location,
                    crate::core::device::ALIGNMENT
                )));
            }
            raw.cast()
        };
        self.live.fetch_add(1, Ordering::Relaxed);
        Ok(Native::OpenMp {
            ptr,
            device: self.device_number,
        })
    }

    unsafe fn free(&self, native: &Native, _bytes: usize) {
        if let Ok(api) = api() {
            let ptr = ptr_of(native);
            let raw = if self.on_host {
                // SAFETY: `allocate` stored the original pointer just below `ptr`.
                unsafe { (ptr as *const usize).sub(1).read() as *mut c_void }
            } else {
                ptr.cast()
            };
            // SAFETY: `raw` came from omp_target_alloc on this device (caller's contract).
            unsafe { (api.free)(raw, self.device_number) };
        }
        self.live.fetch_sub(1, Ordering::Relaxed);
    }

    fn host_access(&self, _native: &Native) -> HostAccess {
        self.host_access_default()
    }

    fn host_access_default(&self) -> HostAccess {
        if self.on_host {
            HostAccess::Pointer
        } else {
            HostAccess::None
        }
    }

    fn host_access_reason(&self) -> String {
        if self.on_host {
            format!(
                "{} is the initial device: omp_target_alloc returns host memory",
                self.location
            )
        } else {
            format!(
                "{} is an offload device: its memory is not host-visible",
                self.location
            )
        }
    }

    fn executes_on_host(&self) -> bool {
        self.on_host
    }

    fn write(&self, dst: &Native, offset: usize, src: &[u8]) -> Result<()> {
        // SAFETY: `offset` was bounds-checked by `Memory`.
        let target = unsafe { ptr_of(dst).add(offset) };
        let initial = self.initial_device;
        self.memcpy(
            "omp_target_memcpy",
            target,
            self.device_number,
            src.as_ptr(),
            initial,
            src.len(),
        )
    }

    fn read(&self, src: &Native, offset: usize, dst: &mut [u8]) -> Result<()> {
        // SAFETY: `offset` was bounds-checked by `Memory`.
        let source = unsafe { ptr_of(src).add(offset) };
        let initial = self.initial_device;
        self.memcpy(
            "omp_target_memcpy",
            dst.as_mut_ptr(),
            initial,
            source,
            self.device_number,
            dst.len(),
        )
    }

    fn copy_within(
        &self,
        src: &Native,
        src_offset: usize,
        dst: &Native,
        dst_offset: usize,
        len: usize,
    ) -> Result<()> {
        // SAFETY: offsets bounds-checked by `Memory`.
        let (s, d) = unsafe { (ptr_of(src).add(src_offset), ptr_of(dst).add(dst_offset)) };
        let n = self.device_number;
        self.memcpy("omp_target_memcpy", d, n, s, n, len)
    }

    fn fill(&self, dst: &Native, offset: usize, len: usize, pattern: &[u8]) -> Result<()> {
        let api = api().map_err(|e| self.unavailable(e))?;
        // SAFETY: the range was bounds-checked; the pattern is mapped `to` the device.
        let rc = unsafe {
            (api.fill)(
                ptr_of(dst).cast(),
                offset,
                len,
                pattern.as_ptr(),
                pattern.len(),
                self.device_number,
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(Error::Backend {
                location: self.location,
                call: "target teams distribute parallel for (fill)",
                message: format!("returned {rc}"),
                hint: "check the OpenMP device".into(),
            })
        }
    }

    fn map(&self, native: &Native, offset: usize, _len: usize, _write: bool) -> Result<*mut u8> {
        if !self.on_host {
            return Err(Error::NotHostAccessible {
                location: self.location,
            });
        }
        // SAFETY: bounds checked by the caller; on the initial device this is a host address.
        Ok(unsafe { ptr_of(native).add(offset) })
    }

    unsafe fn unmap(&self, _native: &Native, _ptr: *mut u8) -> Result<()> {
        Ok(())
    }

    fn live_allocations(&self) -> usize {
        self.live.load(Ordering::Relaxed)
    }

    fn sub_native(&self, parent: &Native, offset: usize, _len: usize) -> Result<Native> {
        Ok(Native::OpenMp {
            // SAFETY: the sub-allocator keeps `offset + len` inside the parent.
            ptr: unsafe { ptr_of(parent).add(offset) },
            device: self.device_number,
        })
    }

    fn launch(&self, spec: &LaunchSpec<'_>, args: &[LaunchArg<'_>]) -> Result<Completion> {
        let api = api().map_err(|e| self.unavailable(e))?;
        let symbol = format!("locus_omp_k_{}\0", spec.entry);
        // SAFETY: kernels built into the library follow the `KernelEntry` convention
        // (shaders/*_openmp.c).
        let entry: KernelEntry = unsafe {
            *api._library.get::<KernelEntry>(symbol.as_bytes()).map_err(|_| Error::Invalid(format!(
                "{}: no OpenMP kernel `{}` in locus's kernel library (shaders/{}_openmp.c, built by build.rs)",
                self.location, spec.entry, spec.entry
            )))?
        };
        let mut scalars: Vec<[u8; 4]> = args.iter().filter_map(LaunchArg::scalar_bytes).collect();
        let mut next_scalar = scalars.iter_mut();
        let mut pointers: Vec<*mut c_void> = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            match a {
                LaunchArg::Memory(m) => {
                    let ptr = match m.native() {
                        Native::OpenMp { ptr, device } if *device == self.device_number => *ptr,
                        _ if self.on_host && m.host_access() == HostAccess::Pointer => {
                            m.device().map(m.native(), 0, m.len(), true)?
                        }
                        _ => {
                            return Err(bad_argument(
                                self.location,
                                i,
                                &format!(
                                    "memory at {} is not addressable on OpenMP device {}",
                                    m.location(),
                                    self.device_number
                                ),
                            ))
                        }
                    };
                    pointers.push(ptr.cast());
                }
                _ => match next_scalar.next() {
                    Some(bytes) => pointers.push(bytes.as_mut_ptr().cast()),
                    None => return Err(bad_argument(self.location, i, "scalar missing")),
                },
            }
        }
        // SAFETY: `pointers` follows the kernel convention (device pointers for buffers,
        // pointers to live scalar values); the codelet checked counts and lengths.
        let rc = unsafe {
            entry(
                pointers.as_mut_ptr(),
                spec.global[0],
                spec.global[1],
                self.device_number,
            )
        };
        if rc != 0 {
            return Err(Error::Backend {
                location: self.location,
                call: "target teams distribute parallel for",
                message: format!("kernel `{}` returned {rc}", spec.entry),
                hint: "check the kernel's arguments".into(),
            });
        }
        Ok(Completion::done())
    }
}
