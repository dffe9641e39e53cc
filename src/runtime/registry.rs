//! Run-time discovery: which locations this machine has, and why the others are missing.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

use super::transfer::matrix::TransferMatrix;
use crate::backends;
use crate::core::device::{Device, PhysicalDevice};
use crate::core::error::{Error, Result};
use crate::core::location::{Location, Technology};

/// Everything discovery found: the devices, and a reason for every technology without one.
pub struct Registry {
    devices: BTreeMap<Location, Arc<dyn Device>>,
    matrix: TransferMatrix,
    missing: BTreeMap<Technology, String>,
    skipped: BTreeMap<Technology, Vec<String>>,
    /// Devices of an application's own contexts, adopted after discovery, in the order
    /// adopted; a slot once filled stays (its location is valid for the process).
    adopted: [OnceLock<Arc<dyn Device>>; ADOPTED],
    /// Held while a slot is filled.
    #[cfg_attr(not(any(feature = "opencl", feature = "sycl")), allow(dead_code))]
    adopting: Mutex<()>,
}

/// How many contexts of an application's a process may adopt.
pub const ADOPTED: usize = 16;

static REGISTRY: OnceLock<Registry> = OnceLock::new();

/// The registry of this process, discovered on first use (each technology probed once).
pub fn registry() -> &'static Registry {
    REGISTRY.get_or_init(|| {
        // The trace's clock starts before anything it may time.
        crate::core::trace::epoch();
        crate::runtime::trace::start_from_env();
        crate::runtime::trace::attach_profilers();
        let registry = Registry::discover();
        // After every runtime was loaded: the exit handler runs before their destructors.
        crate::core::shutdown::register_exit_handler();
        registry
    })
}

/// The locations found on this machine, host first.
///
/// ```
/// use locus::Location;
///
/// for at in locus::available() {
///     println!("{at}");
/// }
/// let gpu = Location::Cuda(0);
/// if !locus::registry().has(gpu) {
///     println!("{gpu}: {}", locus::registry().why_missing(gpu)); // why, and what to do
/// }
/// ```
pub fn available() -> Vec<Location> {
    registry().locations()
}

impl Registry {
    fn discover() -> Registry {
        let mut devices = BTreeMap::new();
        let mut missing = BTreeMap::new();
        let mut skipped = BTreeMap::new();
        let mut matrix = TransferMatrix::default();
        // LOCUS_BACKENDS=host,opencl limits discovery (the host is always there). A list
        // naming anything unknown probes nothing but the host and says why, loudly: a
        // typo must not look like a machine without GPUs.
        let only = crate::core::config::text("LOCUS_BACKENDS").map(|list| {
            crate::core::location_text::parse_technologies(&list).map_err(|e| {
                let why = format!("LOCUS_BACKENDS={list:?} is not a list of technologies: {e}");
                crate::core::config::warn_once(&format!("{why}; only the host is used"));
                why
            })
        });
        // Some loaders split list-valued variables in place (an OpenCL ICD loader's
        // `OCL_ICD_FILENAMES`): put them back for the processes this one starts.
        let environment = backends::environment_guard::EnvironmentGuard::record();
        for technology in Technology::ALL {
            match &only {
                Some(Ok(only)) if !technology.is_host() && !only.contains(&technology) => {
                    missing.insert(
                        technology,
                        "not probed: LOCUS_BACKENDS leaves it out".to_string(),
                    );
                    continue;
                }
                Some(Err(why)) if !technology.is_host() => {
                    missing.insert(technology, format!("not probed: {why}"));
                    continue;
                }
                _ => {}
            }
            match backends::discover(technology) {
                Ok(found) => {
                    if !found.skipped.is_empty() {
                        skipped.insert(technology, found.skipped);
                    }
                    if found.devices.is_empty() {
                        missing.insert(
                            technology,
                            "the runtime loaded but reported no device".into(),
                        );
                    }
                    for (src, dst, path) in found.paths {
                        matrix.register(src, dst, path);
                    }
                    for device in found.devices {
                        devices.insert(device.location(), device);
                    }
                }
                Err(reason) => {
                    missing.insert(technology, reason.to_string());
                }
            }
        }
        environment.repair();
        let registry = Registry {
            devices,
            matrix,
            missing,
            skipped,
            adopted: [const { OnceLock::new() }; ADOPTED],
            adopting: Mutex::new(()),
        };
        let facts = super::transfer::cost::machine_facts(registry.devices());
        let (calibration, status) = super::transfer::cost::load(&facts);
        registry.matrix.install(calibration, status);
        registry
    }

    /// The locations found, and the application contexts adopted since
    /// (`adopt_opencl_context`), in `Location` order (host first).
    pub fn locations(&self) -> Vec<Location> {
        let mut all: Vec<Location> = self.devices().map(|d| d.location()).collect();
        all.sort();
        all
    }

    /// The devices found, then those adopted since.
    pub fn devices(&self) -> impl Iterator<Item = &Arc<dyn Device>> {
        self.devices.values().chain(self.adopted_devices())
    }

    fn adopted_devices(&self) -> impl Iterator<Item = &Arc<dyn Device>> {
        self.adopted.iter().map_while(OnceLock::get)
    }

    /// The device at `location`, or why it is not here.
    pub fn device(&self, location: Location) -> Result<&Arc<dyn Device>> {
        crate::core::fork::check(location)?;
        self.find(location).ok_or_else(|| Error::Unavailable {
            location,
            reason: self.why_missing(location),
        })
    }

    fn find(&self, location: Location) -> Option<&Arc<dyn Device>> {
        self.devices
            .get(&location)
            .or_else(|| self.adopted_devices().find(|d| d.location() == location))
    }

    /// The location of the device `existing` picks (one of `technology`'s), or else a
    /// device of an application's own runtime objects (its OpenCL context) added as a
    /// location of its own, numbered after every location of its technology so far;
    /// `make` builds it for that location. Both under one lock, so that two threads
    /// adopting one context get one location. Adopted devices stay for the process.
    #[cfg_attr(not(any(feature = "opencl", feature = "sycl")), allow(dead_code))]
    pub(crate) fn adopt(
        &self,
        technology: Technology,
        existing: impl Fn(&Arc<dyn Device>) -> bool,
        make: impl FnOnce(Location) -> Result<Arc<dyn Device>>,
    ) -> Result<Location> {
        let _one_at_a_time = self.adopting.lock().unwrap_or_else(|e| e.into_inner());
        let mine = || {
            self.devices()
                .filter(move |d| d.location().technology() == technology)
        };
        if let Some(found) = mine().find(|d| existing(d)) {
            return Ok(found.location());
        }
        let Some(slot) = self.adopted.iter().find(|s| s.get().is_none()) else {
            return Err(Error::Invalid(format!(
                "{technology}: a process adopts at most {ADOPTED} contexts of its own, and \
                 {ADOPTED} are adopted; adopt each context once and reuse its location"
            )));
        };
        let device = make(technology.location(mine().count() as u32))?;
        let location = device.location();
        // Only this thread fills slots (the lock), and this one was empty.
        let _ = slot.set(device);
        Ok(location)
    }

    /// The device at `location` as its backend's own type `T` (its context, queue,
    /// adapter: e.g. `OpenClDevice`, `SyclDevice`, `WebGpuDevice`), shared. The one
    /// way to reach a backend's device from a location.
    pub fn device_as<T: Device>(&self, location: Location) -> Result<Arc<T>> {
        let device: Arc<dyn Device> = Arc::clone(self.device(location)?);
        let device: Arc<dyn std::any::Any + Send + Sync> = device;
        device.downcast::<T>().map_err(|_| {
            Error::Invalid(format!(
                "{location} is a {} device, not a `{}`",
                location.technology(),
                std::any::type_name::<T>()
                    .rsplit("::")
                    .next()
                    .unwrap_or("?")
            ))
        })
    }

    /// True when `location` was found.
    pub fn has(&self, location: Location) -> bool {
        self.find(location).is_some()
    }

    /// The locations on each physical device the runtimes named
    /// ([`DeviceInfo::physical`](crate::DeviceInfo::physical)), the host's CPUs first:
    /// `cuda:0`, `opencl:1` and `webgpu:0` on one NVIDIA GPU come as one entry. A
    /// location whose runtime names no hardware is in none.
    pub fn physical_devices(&self) -> Vec<(PhysicalDevice, Vec<Location>)> {
        let mut groups: BTreeMap<PhysicalDevice, Vec<Location>> = BTreeMap::new();
        for device in self.devices() {
            if let Some(physical) = device.info().physical {
                groups.entry(physical).or_default().push(device.location());
            }
        }
        groups.into_iter().collect()
    }

    /// Whether `a` and `b` run on one physical device, as their runtimes name it (false
    /// where either names none, or either is absent).
    pub fn same_physical_device(&self, a: Location, b: Location) -> bool {
        let physical = |l| self.find(l).and_then(|d| d.info().physical);
        physical(a).is_some() && physical(a) == physical(b)
    }

    /// The transfer matrix: the copy paths the backends registered, and the generic ones.
    pub fn matrix(&self) -> &TransferMatrix {
        &self.matrix
    }

    /// The host device (always present).
    pub(crate) fn host(&self) -> Arc<dyn Device> {
        Arc::clone(&self.devices[&Location::Host])
    }

    /// Technologies without any device, each with the reason and what to install.
    pub fn missing(&self) -> &BTreeMap<Technology, String> {
        &self.missing
    }

    /// Devices that were seen but not used, per technology, with the reason.
    pub fn skipped(&self) -> &BTreeMap<Technology, Vec<String>> {
        &self.skipped
    }

    /// Why `location` is not available: its technology's reason, or the devices found
    /// and those seen but not used (each with the runtime's reason).
    pub fn why_missing(&self, location: Location) -> String {
        let technology = location.technology();
        if let Some(reason) = self.missing.get(&technology) {
            return format!("{technology}: {reason}");
        }
        let found: Vec<String> = self
            .locations()
            .into_iter()
            .filter(|l| l.technology() == technology)
            .map(|l| l.to_string())
            .collect();
        let skipped = match self.skipped.get(&technology) {
            Some(s) if !s.is_empty() => format!("; seen but not used: {}", s.join("; ")),
            _ => String::new(),
        };
        format!(
            "{technology} has {} device(s) here ({}); there is no {location}{skipped}",
            found.len(),
            found.join(", ")
        )
    }

    /// Checks that every technology in `required` (names as in `LOCUS_REQUIRE`:
    /// `host,openmp,opencl,webgpu`, or full locations such as `opencl:1`) is present.
    /// The error lists every one that is missing, with its reason.
    pub fn require(&self, required: &str) -> Result<()> {
        let mut problems = Vec::new();
        for item in required.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let location: Location = item.parse()?;
            let present = if item.contains(':') {
                self.has(location)
            } else {
                self.devices
                    .keys()
                    .any(|l| l.technology() == location.technology())
            };
            if !present {
                problems.push(format!("{item}: {}", self.why_missing(location)));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(Error::Invalid(format!(
                "required backends are missing:\n  {}",
                problems.join("\n  ")
            )))
        }
    }
}

/// The device at `location` as its backend's own type (see [`Registry::device_as`]):
/// `locus::device_as::<OpenClDevice>(Location::OpenCl(0))?.queue()`.
pub fn device_as<T: Device>(location: Location) -> Result<Arc<T>> {
    registry().device_as(location)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_ordinal_names_the_devices_seen_but_not_used() {
        let registry = Registry {
            devices: BTreeMap::new(),
            matrix: TransferMatrix::default(),
            missing: BTreeMap::new(),
            skipped: BTreeMap::from([(
                Technology::OpenCl,
                vec!["NVIDIA CUDA: clCreateContext failed: CL_OUT_OF_RESOURCES".to_string()],
            )]),
            adopted: [const { OnceLock::new() }; ADOPTED],
            adopting: Mutex::new(()),
        };
        let why = registry.why_missing(Location::OpenCl(1));
        assert!(
            why.contains("there is no opencl:1")
                && why.contains("seen but not used: NVIDIA CUDA: clCreateContext failed"),
            "{why}"
        );
    }
}
