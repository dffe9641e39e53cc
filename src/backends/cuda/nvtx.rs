//! NVTX ranges for Nsight Systems and other NVTX tools, through NVTX v3's injection
//! protocol (what the header-only NVTX of CUDA 10+ does in every application): a tool
//! that profiles the process names its library in `NVTX_INJECTION64_PATH`; locus loads
//! it, calls its `InitializeInjectionNvtx2` with locus's export tables, and the tool
//! writes its handlers into locus's table of the core module's calls. Locus's copies
//! then show as ranges (`nvtxRangeStartA` / `nvtxRangeEnd`), its allocations and frees
//! as marks (`nvtxMarkA`). With no tool, nothing is loaded and nothing is called.

use std::ffi::{c_char, c_int, c_uint, c_void, CString};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use crate::core::profiler_ranges::ProfilerRanges;

/// `NVTX_ETID_CALLBACKS` and `NVTX_ETID_VERSIONINFO` (nvtxTypes.h).
const ETID_CALLBACKS: u32 = 1;
const ETID_VERSIONINFO: u32 = 3;
/// `NVTX_CB_MODULE_CORE`.
const MODULE_CORE: c_int = 1;
/// `NVTX_CBID_CORE_SIZE`, and the ids locus calls (`NVTX_CBID_CORE_*`).
const CORE_SIZE: usize = 16;
const MARK_A: usize = 2;
const RANGE_START_A: usize = 5;
const RANGE_END: usize = 7;
/// The NVTX API version locus speaks.
const NVTX_VERSION: u32 = 3;

/// The core module's function slots the tool fills (`NvtxFunctionPointer` each, 0 when
/// the tool left it empty), indexed by callback id.
static SLOTS: [AtomicUsize; CORE_SIZE + 1] = [const { AtomicUsize::new(0) }; CORE_SIZE + 1];

/// `NvtxFunctionTable`: an array of pointers to the slots.
struct Table([*mut usize; CORE_SIZE + 1]);
// SAFETY: the pointers point into `SLOTS`, a static of atomics, valid for the whole run.
unsafe impl Send for Table {}
// SAFETY: as above; the array itself is never written after it is made.
unsafe impl Sync for Table {}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| Table(std::array::from_fn(|i| SLOTS[i].as_ptr())))
}

/// `NvtxExportTableCallbacks`.
#[repr(C)]
struct ExportCallbacks {
    struct_size: usize,
    get_module_function_table:
        unsafe extern "C" fn(c_int, *mut *const *mut usize, *mut c_uint) -> c_int,
}

/// `NvtxExportTableVersionInfo`.
#[repr(C)]
struct ExportVersionInfo {
    struct_size: usize,
    version: u32,
    reserved0: u32,
    set_injection_nvtx_version: unsafe extern "C" fn(u32),
}

/// `GetModuleFunctionTable`: the core module's table; no other module is offered.
///
/// # Safety
/// `out_table` and `out_size` are NULL or writable (the tool's side of the protocol).
unsafe extern "C" fn get_module_function_table(
    module: c_int,
    out_table: *mut *const *mut usize,
    out_size: *mut c_uint,
) -> c_int {
    if module != MODULE_CORE {
        return 0;
    }
    if !out_table.is_null() {
        // SAFETY: a writable pointer (the protocol's contract).
        unsafe { *out_table = table().0.as_ptr() };
    }
    if !out_size.is_null() {
        // SAFETY: as above.
        unsafe { *out_size = CORE_SIZE as c_uint };
    }
    1
}

/// `SetInjectionNvtxVersion`: the tool's version, which locus has no use for.
unsafe extern "C" fn set_injection_nvtx_version(_: u32) {}

static CALLBACKS: ExportCallbacks = ExportCallbacks {
    struct_size: std::mem::size_of::<ExportCallbacks>(),
    get_module_function_table,
};

static VERSION_INFO: ExportVersionInfo = ExportVersionInfo {
    struct_size: std::mem::size_of::<ExportVersionInfo>(),
    version: NVTX_VERSION,
    reserved0: 0,
    set_injection_nvtx_version,
};

/// `nvtxGetExportTable`.
unsafe extern "C" fn get_export_table(id: u32) -> *const c_void {
    match id {
        ETID_CALLBACKS => std::ptr::from_ref(&CALLBACKS).cast(),
        ETID_VERSIONINFO => std::ptr::from_ref(&VERSION_INFO).cast(),
        _ => std::ptr::null(),
    }
}

type Initialize = unsafe extern "C" fn(unsafe extern "C" fn(u32) -> *const c_void) -> c_int;
type RangeStartA = unsafe extern "C" fn(*const c_char) -> u64;
type RangeEnd = unsafe extern "C" fn(u64);
type MarkA = unsafe extern "C" fn(*const c_char);

/// The tool's handlers, once it attached.
pub struct Nvtx {
    start: Option<RangeStartA>,
    end: Option<RangeEnd>,
    mark: Option<MarkA>,
}

/// The handler the tool wrote into slot `id`, as a function of type `F`.
///
/// # Safety
/// `F` is the function type NVTX declares for that id.
unsafe fn handler<F: Copy>(id: usize) -> Option<F> {
    let address = SLOTS[id].load(Ordering::Acquire);
    // SAFETY: a non-zero slot holds the tool's function of the type NVTX declares for
    // the id (the caller's `F`); both are one pointer wide.
    (address != 0).then(|| unsafe { std::mem::transmute_copy::<usize, F>(&address) })
}

/// Loads the NVTX tool `NVTX_INJECTION64_PATH` names and lets it attach; `Ok(None)` when
/// the variable is unset, an error saying what failed otherwise (the library kept loaded
/// for the rest of the run, as NVTX keeps it).
pub fn attach() -> Result<Option<Nvtx>, String> {
    let Some(path) = std::env::var_os("NVTX_INJECTION64_PATH") else {
        return Ok(None);
    };
    let shown = path.to_string_lossy().into_owned();
    // SAFETY: loading the profiler's injection library runs its initialisers, which is
    // what the tool that set the variable asks of every NVTX application.
    let library = unsafe { libloading::Library::new(&path) }
        .map_err(|e| format!("{shown}: {}", crate::backends::loading::dl_error(&e)))?;
    // SAFETY: `InitializeInjectionNvtx2` has this signature in NVTX v3's protocol.
    let init = unsafe { library.get::<Initialize>(b"InitializeInjectionNvtx2\0") }
        .map_err(|e| format!("{shown}: {}", crate::backends::loading::dl_error(&e)))?;
    // SAFETY: the tool's initialiser, called once with locus's export-table getter
    // (static tables that live for the whole run).
    let attached = unsafe { init(get_export_table) };
    std::mem::forget(library);
    if attached == 0 {
        return Err(format!("{shown}: InitializeInjectionNvtx2 declined"));
    }
    // SAFETY: each id's NVTX function type (nvtxImplCore.h).
    Ok(Some(unsafe {
        Nvtx {
            start: handler::<RangeStartA>(RANGE_START_A),
            end: handler::<RangeEnd>(RANGE_END),
            mark: handler::<MarkA>(MARK_A),
        }
    }))
}

impl ProfilerRanges for Nvtx {
    fn start(&self, name: &CString) -> u64 {
        // SAFETY: the tool's handler, called with a NUL-terminated string that lives
        // for the call.
        self.start.map_or(0, |f| unsafe { f(name.as_ptr()) })
    }

    fn end(&self, id: u64) {
        if let Some(f) = self.end {
            // SAFETY: the tool's handler, with an id its `start` returned.
            unsafe { f(id) }
        }
    }

    fn mark(&self, name: &CString) {
        if let Some(f) = self.mark {
            // SAFETY: as in `start`.
            unsafe { f(name.as_ptr()) }
        }
    }
}
