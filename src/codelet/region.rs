//! Regions: OpenHMPP's `region`, a block of host code run on the target as an inline
//! codelet. In Rust the block is a closure given at the call, paired with the device
//! sources of a [`Kernel`] declared with the same builder (parameters, intents, WGSL,
//! OpenCL C, OpenMP C, CUDA, HIP); on the host the closure runs, elsewhere the source.

use super::call::HostFn;
use super::*;

/// An inline codelet: a [`Kernel`]'s device sources and parameters, with the host
/// implementation given at each call as a closure (which may borrow local state).
///
/// ```
/// use locus::codelet::{Arg, DType, Intent, Kernel, Launch, Region};
/// use locus::{Buffer, Location};
///
/// let scale = 3.0f32;
/// let decl = Kernel::new("scale")
///     .buffer("x", DType::F32, Intent::InOut)
///     .scalar("s", DType::F32)
///     .opencl_c(
///         "__kernel void scale(__global float *x, float s) { x[get_global_id(0)] *= s; }",
///         "scale",
///     );
/// let region = Region::new(&decl, &[Location::OpenCl(0), Location::Host])?;
/// let mut x = Buffer::from_slice(Location::Host, &[1.0f32, 2.0])?;
/// let mut host_runs = 0;
/// region.run(&mut [Arg::buf_mut(&mut x), Arg::f32(scale)], Launch::d1(2), |args, _| {
///     host_runs += 1; // the block may use and change the caller's state
///     let s = args[1].f32();
///     args[0].f32s_mut().iter_mut().for_each(|v| *v *= s);
/// })?;
/// assert_eq!(x.to_vec()?, vec![3.0, 6.0]);
/// # Ok::<(), locus::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Region<'k> {
    codelet: Codelet<'k>,
}

impl<'k> Region<'k> {
    /// The region over `kernel`'s parameters and device sources at the first available
    /// location of `targets` (the host is always possible: the closure is its source).
    pub fn new(kernel: &'k Kernel, targets: &[Location]) -> Result<Region<'k>> {
        Ok(Region {
            codelet: Codelet::new(kernel, targets)?,
        })
    }

    /// `noupdate` for `param` (see [`Codelet::noupdate`]).
    pub fn noupdate(self, param: &str) -> Result<Region<'k>> {
        Ok(Region {
            codelet: self.codelet.noupdate(param)?,
        })
    }

    /// `const` for `param` (see [`Codelet::constant`]).
    pub fn constant(self, param: &str) -> Result<Region<'k>> {
        Ok(Region {
            codelet: self.codelet.constant(param)?,
        })
    }

    /// Where runs go first.
    pub fn target(&self) -> Location {
        self.codelet.target()
    }

    /// Where a run goes when the launch fails at the targets before.
    pub fn fallbacks(&self) -> &[Location] {
        self.codelet.fallbacks()
    }

    /// Runs the region: on a device with the kernel's source for it, on the host with
    /// `host`, which receives the arguments as a host kernel does. Moves, checks,
    /// fallback and the report are a codelet call's ([`Codelet::call`]).
    pub fn run(
        &self,
        args: &mut [Arg<'_>],
        launch: Launch,
        host: impl FnMut(&mut [HostArg<'_>], [usize; 2]),
    ) -> Result<CallReport> {
        self.run_if(true, args, launch, host)
    }

    /// Starts the region and returns at once (OpenHMPP's asynchronous region): on a
    /// device the kernel runs while the caller goes on, and the arguments stay with it
    /// until [`Pending::synchronize`]; where the region runs on the host, `host` runs
    /// before this returns (it may borrow the caller's state, so it cannot outlive the
    /// call), and the [`Pending`] is already done.
    pub fn run_async<'a>(
        &self,
        args: Vec<Arg<'a>>,
        launch: Launch,
        mut host: impl FnMut(&mut [HostArg<'_>], [usize; 2]),
    ) -> Result<Pending<'a>> {
        let host: HostFn<'_> = &mut host;
        self.codelet
            .call_async_among(&self.codelet.targets, args, launch, Some(host))
    }

    /// Runs the region offloaded when `offload` is true, on the host with `host` when
    /// false (OpenHMPP's `cond` on a region).
    pub fn run_if(
        &self,
        offload: bool,
        args: &mut [Arg<'_>],
        launch: Launch,
        mut host: impl FnMut(&mut [HostArg<'_>], [usize; 2]),
    ) -> Result<CallReport> {
        let host: HostFn<'_> = &mut host;
        let host_only = [Location::Host];
        let targets = if offload {
            &self.codelet.targets[..]
        } else {
            &host_only[..]
        };
        self.codelet.call_among(targets, args, launch, Some(host))
    }
}
