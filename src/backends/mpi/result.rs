//! MPI's thin result layer (cudarc's middle layer): each call `locus::mpi` makes, as a
//! function that checks the return code and turns it into [`Error::Mpi`]. The bindings
//! underneath are rsmpi's (`mpi::ffi`, bindgen over the `mpi.h` found by `mpicc` at
//! build time).
//!
//! Requests are polled ([`Request::test`]), never waited on blindly: `wire` bounds every
//! wait by a time limit, so a rank that died is an error, not a hang.

use std::ffi::{c_int, c_void};

use ::mpi::ffi;

use crate::core::element::DType;
use crate::core::error::{Error, Result};
use crate::core::location::Technology;

/// What to do after an MPI call fails (the same for every call of this layer).
const HINT: &str = "check that every rank makes the matching call with the same sizes, \
                    and read the MPI library's own message above";

/// The error of a failed call: the library's text for `code`.
fn failed(call: &'static str, code: c_int, rank: i32) -> Error {
    Error::Mpi {
        rank,
        call,
        message: error_string(code),
        hint: HINT.into(),
    }
}

/// `Ok` when `code` is `MPI_SUCCESS`.
fn check(call: &'static str, code: c_int, rank: i32) -> Result<()> {
    if code == ffi::MPI_SUCCESS as c_int {
        Ok(())
    } else {
        Err(failed(call, code, rank))
    }
}

/// The MPI library's text for an error code (`MPI_Error_string`).
pub fn error_string(code: c_int) -> String {
    let mut text = vec![0u8; ffi::MPI_MAX_ERROR_STRING as usize + 1];
    let mut len: c_int = 0;
    // SAFETY: `text` has room for MPI_MAX_ERROR_STRING characters, as the call requires;
    // `len` is a valid out-pointer.
    let rc = unsafe { ffi::MPI_Error_string(code, text.as_mut_ptr().cast(), &mut len) };
    if rc != ffi::MPI_SUCCESS as c_int {
        return format!("MPI error code {code}");
    }
    text.truncate(len.clamp(0, ffi::MPI_MAX_ERROR_STRING as c_int) as usize);
    format!("{} (MPI error code {code})", String::from_utf8_lossy(&text))
}

/// The largest count one call takes (`int`).
pub const MAX_COUNT: usize = c_int::MAX as usize;

fn count(call: &'static str, n: usize, rank: i32) -> Result<c_int> {
    c_int::try_from(n).map_err(|_| Error::Mpi {
        rank,
        call,
        message: format!("{n} elements are more than one MPI call takes ({MAX_COUNT})"),
        hint: "split the data into pieces below 2^31 elements".into(),
    })
}

/// An MPI communicator handle locus owns (a duplicate of the caller's): freed on drop
/// unless MPI was finalized first.
#[derive(Debug)]
pub struct RawComm {
    comm: ffi::MPI_Comm,
    rank: i32,
    size: i32,
}

// SAFETY: an MPI communicator handle may be used from any thread once MPI is initialized
// with MPI_THREAD_MULTIPLE, which `locus::mpi` checks before it makes one.
unsafe impl Send for RawComm {}
// SAFETY: as for Send; every call through `&RawComm` is thread-safe under THREAD_MULTIPLE.
unsafe impl Sync for RawComm {}

impl RawComm {
    /// A duplicate of `MPI_COMM_WORLD`.
    pub fn world() -> Result<RawComm> {
        // SAFETY: reading an extern static handle the library set up at initialization.
        let world = unsafe { ffi::RSMPI_COMM_WORLD };
        Self::duplicate_raw(world)
    }

    /// A duplicate of `comm` with `MPI_ERRORS_RETURN` set, so failures come back as
    /// codes instead of aborting the job.
    pub fn duplicate_raw(comm: ffi::MPI_Comm) -> Result<RawComm> {
        let mut new = std::mem::MaybeUninit::<ffi::MPI_Comm>::uninit();
        // SAFETY: `comm` is a valid communicator (the caller's or world); `new` is a
        // valid out-pointer.
        let rc = unsafe { ffi::MPI_Comm_dup(comm, new.as_mut_ptr()) };
        check("MPI_Comm_dup", rc, -1)?;
        // SAFETY: MPI_Comm_dup succeeded, so it wrote the handle.
        let comm = unsafe { new.assume_init() };
        let (mut rank, mut size) = (0, 0);
        // SAFETY: `comm` is the valid communicator just made; the out-pointers are valid.
        unsafe {
            check(
                "MPI_Comm_set_errhandler",
                ffi::MPI_Comm_set_errhandler(comm, ffi::RSMPI_ERRORS_RETURN),
                -1,
            )?;
            check("MPI_Comm_rank", ffi::MPI_Comm_rank(comm, &mut rank), -1)?;
            check("MPI_Comm_size", ffi::MPI_Comm_size(comm, &mut size), rank)?;
        }
        Ok(RawComm { comm, rank, size })
    }

    /// Another duplicate of this one (its own message space).
    pub fn duplicate(&self) -> Result<RawComm> {
        Self::duplicate_raw(self.comm)
    }

    /// This process's rank.
    pub fn rank(&self) -> i32 {
        self.rank
    }

    /// How many ranks.
    pub fn size(&self) -> i32 {
        self.size
    }

    /// Starts sending `bytes` bytes at `ptr` to `dest` with `tag`.
    ///
    /// # Safety
    /// `ptr..ptr+bytes` stays valid and unwritten until the request completes or is
    /// forgotten with [`Request::abandon`] (after which it must stay valid for the life of
    /// the process). `ptr` may be a device address only where the MPI library takes it
    /// (a device-aware build).
    pub unsafe fn isend(
        &self,
        ptr: *const u8,
        bytes: usize,
        dest: i32,
        tag: i32,
    ) -> Result<Request> {
        let n = count("MPI_Isend", bytes, self.rank)?;
        let mut request = Request::null(self.rank);
        // SAFETY: the caller keeps the range valid until completion; the handles are valid.
        let rc = unsafe {
            ffi::MPI_Isend(
                ptr.cast(),
                n,
                ffi::RSMPI_UINT8_T,
                dest,
                tag,
                self.comm,
                &mut request.raw,
            )
        };
        check("MPI_Isend", rc, self.rank).map(|()| request)
    }

    /// Starts receiving up to `bytes` bytes from `source` with `tag` into `ptr`.
    ///
    /// # Safety
    /// As for [`RawComm::isend`], and nothing else reads or writes the range meanwhile.
    pub unsafe fn irecv(
        &self,
        ptr: *mut u8,
        bytes: usize,
        source: i32,
        tag: i32,
    ) -> Result<Request> {
        let n = count("MPI_Irecv", bytes, self.rank)?;
        let mut request = Request::null(self.rank);
        // SAFETY: the caller keeps the range valid and unshared until completion.
        let rc = unsafe {
            ffi::MPI_Irecv(
                ptr.cast(),
                n,
                ffi::RSMPI_UINT8_T,
                source,
                tag,
                self.comm,
                &mut request.raw,
            )
        };
        check("MPI_Irecv", rc, self.rank).map(|()| request)
    }

    /// Starts broadcasting `bytes` bytes at `ptr` from `root`.
    ///
    /// # Safety
    /// As for [`RawComm::irecv`] (the root's range is read, the others' written).
    pub unsafe fn ibcast(&self, ptr: *mut u8, bytes: usize, root: i32) -> Result<Request> {
        let n = count("MPI_Ibcast", bytes, self.rank)?;
        let mut request = Request::null(self.rank);
        // SAFETY: the caller keeps the range valid and unshared until completion.
        let rc = unsafe {
            ffi::MPI_Ibcast(
                ptr.cast(),
                n,
                ffi::RSMPI_UINT8_T,
                root,
                self.comm,
                &mut request.raw,
            )
        };
        check("MPI_Ibcast", rc, self.rank).map(|()| request)
    }

    /// Starts gathering every rank's bytes into `recv` (at `root` only, or at every rank
    /// when `root` is `None`): rank `i`'s `counts[i]` bytes land at `displs[i]`.
    ///
    /// # Safety
    /// `send` stays valid for `send_bytes` bytes and `recv` (where it receives) for
    /// `displs[i] + counts[i]` bytes of every rank, unshared, until completion;
    /// `counts` and `displs` have one entry per rank and stay valid until completion.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn igatherv(
        &self,
        send: *const u8,
        send_bytes: usize,
        recv: *mut u8,
        counts: &[c_int],
        displs: &[c_int],
        root: Option<i32>,
    ) -> Result<Request> {
        let call = if root.is_some() {
            "MPI_Igatherv"
        } else {
            "MPI_Iallgatherv"
        };
        let n = count(call, send_bytes, self.rank)?;
        let mut request = Request::null(self.rank);
        // SAFETY: reading an extern static handle the library set up at initialization.
        let byte = unsafe { ffi::RSMPI_UINT8_T };
        // SAFETY: the caller keeps the ranges and the count arrays valid until completion.
        let rc = unsafe {
            match root {
                Some(root) => ffi::MPI_Igatherv(
                    send.cast(),
                    n,
                    byte,
                    recv.cast(),
                    counts.as_ptr(),
                    displs.as_ptr(),
                    byte,
                    root,
                    self.comm,
                    &mut request.raw,
                ),
                None => ffi::MPI_Iallgatherv(
                    send.cast(),
                    n,
                    byte,
                    recv.cast(),
                    counts.as_ptr(),
                    displs.as_ptr(),
                    byte,
                    self.comm,
                    &mut request.raw,
                ),
            }
        };
        check(call, rc, self.rank).map(|()| request)
    }

    /// Starts summing `count` elements of `dtype` at `send` across ranks into `recv`.
    ///
    /// # Safety
    /// `send` and `recv` hold `count` elements of `dtype` each and stay valid until
    /// completion; nothing else writes `send` or touches `recv` meanwhile.
    pub unsafe fn iallreduce_sum(
        &self,
        send: *const u8,
        recv: *mut u8,
        count_: usize,
        dtype: DType,
    ) -> Result<Request> {
        let n = count("MPI_Iallreduce", count_, self.rank)?;
        let datatype = datatype(dtype).ok_or_else(|| Error::Mpi {
            rank: self.rank,
            call: "MPI_Iallreduce",
            message: format!("MPI has no sum of {}", dtype.name()),
            hint: "convert the buffer to f32 first (Buffer::convert)".into(),
        })?;
        let mut request = Request::null(self.rank);
        // SAFETY: the caller keeps both ranges valid and unshared until completion.
        let rc = unsafe {
            ffi::MPI_Iallreduce(
                send.cast(),
                recv.cast(),
                n,
                datatype,
                ffi::RSMPI_SUM,
                self.comm,
                &mut request.raw,
            )
        };
        check("MPI_Iallreduce", rc, self.rank).map(|()| request)
    }

    /// Starts a barrier.
    pub fn ibarrier(&self) -> Result<Request> {
        let mut request = Request::null(self.rank);
        // SAFETY: valid handles; a barrier touches no user memory.
        let rc = unsafe { ffi::MPI_Ibarrier(self.comm, &mut request.raw) };
        check("MPI_Ibarrier", rc, self.rank).map(|()| request)
    }
}

impl Drop for RawComm {
    fn drop(&mut self) {
        if finalized() {
            return;
        }
        // SAFETY: the handle is ours (a duplicate) and freed once; freeing with requests
        // still pending on it is allowed (MPI frees it when they finish).
        unsafe { ffi::MPI_Comm_free(&mut self.comm) };
    }
}

/// The MPI datatype of an element type, where MPI has one (not for f16 / bf16).
fn datatype(dtype: DType) -> Option<ffi::MPI_Datatype> {
    // SAFETY: reading extern static handles the library set up at initialization.
    unsafe {
        Some(match dtype {
            DType::F32 => ffi::RSMPI_FLOAT,
            DType::F64 => ffi::RSMPI_DOUBLE,
            DType::I8 => ffi::RSMPI_INT8_T,
            DType::U8 => ffi::RSMPI_UINT8_T,
            DType::I16 => ffi::RSMPI_INT16_T,
            DType::U16 => ffi::RSMPI_UINT16_T,
            DType::I32 => ffi::RSMPI_INT32_T,
            DType::U32 => ffi::RSMPI_UINT32_T,
            DType::I64 => ffi::RSMPI_INT64_T,
            DType::U64 => ffi::RSMPI_UINT64_T,
            DType::F16 | DType::BF16 => return None,
        })
    }
}

/// Whether MPI can sum elements of `dtype`.
pub fn can_sum(dtype: DType) -> bool {
    datatype(dtype).is_some()
}

/// What a finished receive reported.
#[derive(Debug, Clone, Copy)]
pub struct Status {
    /// The sender's rank.
    pub source: i32,
    /// The message's tag.
    pub tag: i32,
    /// Bytes received.
    pub bytes: usize,
}

/// A started operation (`MPI_Request`).
#[derive(Debug)]
pub struct Request {
    raw: ffi::MPI_Request,
    rank: i32,
}

// SAFETY: a request handle may be tested from any thread under MPI_THREAD_MULTIPLE (one
// thread at a time: `test` takes `&mut self`).
unsafe impl Send for Request {}

impl Request {
    fn null(rank: i32) -> Request {
        Request {
            // SAFETY: reading an extern static handle.
            raw: unsafe { ffi::RSMPI_REQUEST_NULL },
            rank,
        }
    }

    /// Whether it finished (`MPI_Test`): `Some(status)` once it has.
    pub fn test(&mut self) -> Result<Option<Status>> {
        let mut flag: c_int = 0;
        let mut status = std::mem::MaybeUninit::<ffi::MPI_Status>::zeroed();
        // SAFETY: `raw` is a request this value owns (or the null request, which tests
        // done); the out-pointers are valid.
        let rc = unsafe { ffi::MPI_Test(&mut self.raw, &mut flag, status.as_mut_ptr()) };
        check("MPI_Test", rc, self.rank)?;
        if flag == 0 {
            return Ok(None);
        }
        // SAFETY: MPI_Test wrote the status (zeroed before, so every field is initialized).
        let status = unsafe { status.assume_init() };
        check("MPI_Test (the operation)", status.MPI_ERROR, self.rank)?;
        let mut bytes: c_int = 0;
        // SAFETY: `status` is the finished request's status; `bytes` is valid.
        let rc = unsafe { ffi::MPI_Get_count(&status, ffi::RSMPI_UINT8_T, &mut bytes) };
        check("MPI_Get_count", rc, self.rank)?;
        Ok(Some(Status {
            source: status.MPI_SOURCE,
            tag: status.MPI_TAG,
            bytes: usize::try_from(bytes).unwrap_or(0),
        }))
    }

    /// Gives up on it (after a time limit): cancels it and lets MPI free it when it can.
    /// The memory it uses must stay valid for the life of the process (the caller leaks it).
    pub fn abandon(mut self) {
        // SAFETY: `raw` is ours; MPI_Cancel then MPI_Request_free is the documented way to
        // drop a request that may never complete.
        unsafe {
            ffi::MPI_Cancel(&mut self.raw);
            ffi::MPI_Request_free(&mut self.raw);
        }
    }
}

/// Whether `MPI_Finalize` has run.
pub fn finalized() -> bool {
    let mut flag: c_int = 0;
    // SAFETY: callable at any time; `flag` is valid.
    unsafe { ffi::MPI_Finalized(&mut flag) };
    flag != 0
}

/// The MPI library's version string (`MPI_Get_library_version`).
pub fn library_version() -> String {
    let mut text = vec![0u8; ffi::MPI_MAX_LIBRARY_VERSION_STRING as usize + 1];
    let mut len: c_int = 0;
    // SAFETY: `text` has the room the call requires; callable before initialization.
    let rc = unsafe { ffi::MPI_Get_library_version(text.as_mut_ptr().cast(), &mut len) };
    if rc != ffi::MPI_SUCCESS as c_int {
        return "unknown MPI library".into();
    }
    text.truncate(len.clamp(0, ffi::MPI_MAX_LIBRARY_VERSION_STRING as c_int) as usize);
    String::from_utf8_lossy(&text)
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .to_string()
}

/// Open MPI's query of whether the MPI library takes `technology`'s device pointers
/// (`MPIX_Query_cuda_support` for CUDA, `MPIX_Query_rocm_support` for HIP), or `None`
/// for a technology MPI libraries have no query for.
pub fn support_query_of(technology: Technology) -> Option<&'static std::ffi::CStr> {
    match technology {
        Technology::Cuda => Some(c"MPIX_Query_cuda_support"),
        Technology::Hip => Some(c"MPIX_Query_rocm_support"),
        _ => None,
    }
}

/// What the MPI library answers to one of Open MPI's device-support queries
/// (`MPIX_Query_cuda_support`, `MPIX_Query_rocm_support`), looked up in the loaded
/// library at run time: `None` when the library has no such query (MPICH, older Open MPI).
pub fn query_support(symbol: &std::ffi::CStr) -> Option<bool> {
    // SAFETY: dlsym on the default namespace with a NUL-terminated name; the result is
    // only called when it is the named function, whose signature is `int (void)`.
    unsafe {
        let f = libc::dlsym(libc::RTLD_DEFAULT, symbol.as_ptr());
        if f.is_null() {
            return None;
        }
        let query: extern "C" fn() -> c_int = std::mem::transmute::<*mut c_void, _>(f);
        Some(query() != 0)
    }
}
