//! Where memory lives: the [`Location`] enum and the [`Technology`] behind it.

use std::fmt;

use super::kernel_language::KernelLanguage;

/// One programming technology (a "backend kind"). Every [`Location`] belongs to one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Technology {
    /// Ordinary host memory, used by plain Rust code.
    Host,
    /// NVIDIA CUDA.
    Cuda,
    /// AMD HIP.
    Hip,
    /// OpenMP target offload (libgomp).
    OpenMp,
    /// OpenCL.
    OpenCl,
    /// SYCL (unified shared memory).
    Sycl,
    /// WebGPU (wgpu).
    WebGpu,
}

impl Technology {
    /// Every technology, in the order `locus info` prints them.
    pub const ALL: [Technology; 7] = [
        Technology::Host,
        Technology::Cuda,
        Technology::Hip,
        Technology::OpenMp,
        Technology::OpenCl,
        Technology::Sycl,
        Technology::WebGpu,
    ];

    /// The lower-case name used in location strings (`opencl`, `webgpu`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            Technology::Host => "host",
            Technology::Cuda => "cuda",
            Technology::Hip => "hip",
            Technology::OpenMp => "openmp",
            Technology::OpenCl => "opencl",
            Technology::Sycl => "sycl",
            Technology::WebGpu => "webgpu",
        }
    }

    /// True for [`Technology::Host`].
    pub const fn is_host(self) -> bool {
        matches!(self, Technology::Host)
    }

    /// The language its kernels are written in; `None` for the host, whose kernels are
    /// Rust functions.
    pub const fn kernel_language(self) -> Option<KernelLanguage> {
        match self {
            Technology::Host => None,
            Technology::Cuda => Some(KernelLanguage::Cuda),
            Technology::Hip => Some(KernelLanguage::Hip),
            Technology::OpenMp => Some(KernelLanguage::OpenMpC),
            Technology::OpenCl | Technology::Sycl => Some(KernelLanguage::OpenClC),
            Technology::WebGpu => Some(KernelLanguage::Wgsl),
        }
    }

    /// The location of device `ordinal` of this technology (`Host` ignores the ordinal).
    pub const fn location(self, ordinal: u32) -> Location {
        match self {
            Technology::Host => Location::Host,
            Technology::Cuda => Location::Cuda(ordinal),
            Technology::Hip => Location::Hip(ordinal),
            Technology::OpenMp => Location::OpenMp(ordinal),
            Technology::OpenCl => Location::OpenCl(ordinal),
            Technology::Sycl => Location::Sycl(ordinal),
            Technology::WebGpu => Location::WebGpu(ordinal),
        }
    }
}

impl fmt::Display for Technology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where memory lives: the host, or device `n` of one technology.
///
/// The number is the device ordinal within that technology as discovered at run time
/// (`opencl:1` is the second OpenCL device found, whatever its platform). Locations
/// print as `host`, `cuda:0`, `opencl:1`, ... and parse back from the same text;
/// a bare technology name (`webgpu`) means device 0.
///
/// ```
/// use locus::Location;
/// let loc: Location = "opencl:1".parse()?;
/// assert_eq!(loc, Location::OpenCl(1));
/// assert_eq!(loc.to_string(), "opencl:1");
/// assert!("vulkan:0".parse::<Location>().is_err());
/// # Ok::<(), locus::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Location {
    /// Host memory.
    Host,
    /// CUDA device `n`.
    Cuda(u32),
    /// HIP device `n`.
    Hip(u32),
    /// OpenMP device `n` (device 0 is the initial device when there is no offload device).
    OpenMp(u32),
    /// OpenCL device `n`, counted over every platform.
    OpenCl(u32),
    /// SYCL device `n`.
    Sycl(u32),
    /// WebGPU adapter `n`.
    WebGpu(u32),
}

impl Location {
    /// The technology this location belongs to.
    pub const fn technology(self) -> Technology {
        match self {
            Location::Host => Technology::Host,
            Location::Cuda(_) => Technology::Cuda,
            Location::Hip(_) => Technology::Hip,
            Location::OpenMp(_) => Technology::OpenMp,
            Location::OpenCl(_) => Technology::OpenCl,
            Location::Sycl(_) => Technology::Sycl,
            Location::WebGpu(_) => Technology::WebGpu,
        }
    }

    /// The device ordinal within the technology (0 for the host).
    pub const fn ordinal(self) -> u32 {
        match self {
            Location::Host => 0,
            Location::Cuda(n)
            | Location::Hip(n)
            | Location::OpenMp(n)
            | Location::OpenCl(n)
            | Location::Sycl(n)
            | Location::WebGpu(n) => n,
        }
    }

    /// True for [`Location::Host`].
    pub const fn is_host(self) -> bool {
        matches!(self, Location::Host)
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Host => f.write_str("host"),
            other => write!(f, "{}:{}", other.technology().name(), other.ordinal()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::location_text::parse_locations;

    #[test]
    fn every_form_round_trips() {
        for t in Technology::ALL {
            for n in [0, 1, 7, u32::MAX] {
                let loc = t.location(n);
                let text = loc.to_string();
                assert_eq!(text.parse::<Location>().unwrap(), loc, "{text}");
            }
        }
        assert_eq!(Location::Host.to_string(), "host");
        assert_eq!(Location::OpenCl(1).to_string(), "opencl:1");
    }

    #[test]
    fn bare_names_and_case() {
        assert_eq!("WebGPU".parse::<Location>().unwrap(), Location::WebGpu(0));
        assert_eq!(" cuda:3 ".parse::<Location>().unwrap(), Location::Cuda(3));
        assert_eq!("host:0".parse::<Location>().unwrap(), Location::Host);
    }

    #[test]
    fn malformed_names_list_the_valid_forms() {
        for bad in [
            "",
            "gpu",
            "opencl:",
            "opencl:x",
            "opencl:-1",
            "host:1",
            "cuda:0:1",
            "cuda:+1",
        ] {
            let err = bad.parse::<Location>().unwrap_err().to_string();
            assert!(
                err.contains("opencl:N") && err.contains("webgpu:N"),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn lists_parse() {
        assert_eq!(
            parse_locations("host, opencl:1,webgpu").unwrap(),
            vec![Location::Host, Location::OpenCl(1), Location::WebGpu(0)]
        );
        assert!(parse_locations("host,nope").is_err());
    }
}
