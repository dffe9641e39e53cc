//! The planner's cost model: the time each candidate path took between two locations
//! at a few sizes, measured on this machine by `locus calibrate` and kept in the cache
//! directory per machine (keyed by the devices and driver versions found).
//!
//! A copy's size class is the measured size nearest to it on a logarithmic scale; the
//! planner chooses, per size class, the path measured fastest at that class's size.

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::core::device::Device;
use crate::core::error::{Error, Result};
use crate::core::location::Location;
pub use crate::core::size::{format_size, parse_size};

/// Format version of the calibration file.
pub const VERSION: u32 = 1;

/// The sizes a calibration measures by default: one per size class.
pub const SIZES: [u64; 4] = [4 << 10, 64 << 10, 1 << 20, 128 << 20];

/// What one candidate path cost between two locations.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PathCost {
    /// The path's name ([`CopyPath::name`](crate::core::route::CopyPath::name)).
    pub path: String,
    /// Its route kind.
    pub kind: String,
    /// Median seconds per copy at each of [`Calibration::sizes`]; `None` where the path
    /// failed at that size.
    pub seconds: Vec<Option<f64>>,
}

/// The candidates measured for one ordered pair.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PairCosts {
    /// Source location (`opencl:0`).
    pub src: String,
    /// Destination location.
    pub dst: String,
    /// Every candidate that applied.
    pub paths: Vec<PathCost>,
}

/// A calibration: measured costs of every candidate path of every pair.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Calibration {
    /// Format version ([`VERSION`]).
    pub version: u32,
    /// The machine key it was made for (see [`machine_key`]).
    pub machine_key: String,
    /// The facts the key was made from, one line per device.
    pub machine: Vec<String>,
    /// When (seconds since the Unix epoch).
    pub unix_time: u64,
    /// How long the calibration ran, in seconds.
    pub seconds: f64,
    /// The sizes measured, ascending.
    pub sizes: Vec<u64>,
    /// One entry per ordered pair.
    pub pairs: Vec<PairCosts>,
}

/// The choice for one pair at one size class.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    /// The winning path's name.
    pub path: String,
    /// Its measured bandwidth at the class's size, GB/s.
    pub gbps: f64,
    /// The runner-up, if any: (path name, GB/s); the faster one when
    /// `kept_within_margin`.
    pub runner_up: Option<(String, f64)>,
    /// The class's size in bytes.
    pub bytes: u64,
    /// True when the preferred path was kept although another was measured faster,
    /// by no more than the margin.
    pub kept_within_margin: bool,
}

impl Calibration {
    /// The size class of a copy of `bytes`: the measured size nearest to it on a
    /// logarithmic scale.
    pub fn class_of(&self, bytes: usize) -> usize {
        // The distance on a log scale between x and s is ln(max / min); ratios compare
        // by cross-multiplying in integers (no logarithms on every copy's path).
        let ratio = |s: u64| {
            let (x, s) = (bytes.max(1) as u128, s.max(1) as u128);
            (x.max(s), x.min(s))
        };
        let mut best = 0;
        for i in 1..self.sizes.len() {
            let ((hi, lo), (best_hi, best_lo)) = (ratio(self.sizes[i]), ratio(self.sizes[best]));
            if hi * best_lo < best_hi * lo {
                best = i;
            }
        }
        best
    }

    /// The measured costs of one pair.
    pub fn pair(&self, src: Location, dst: Location) -> Option<&PairCosts> {
        let (src, dst) = (src.to_string(), dst.to_string());
        self.pairs.iter().find(|p| p.src == src && p.dst == dst)
    }

    /// The fastest of `allowed` paths between the two at size class `class`, among those
    /// measured there; `None` when none was. With `prefer = Some((path, margin))`, that
    /// path stays chosen unless the fastest was measured more than `margin` (a fraction)
    /// faster.
    pub fn choose(
        &self,
        src: Location,
        dst: Location,
        class: usize,
        allowed: &dyn Fn(&str) -> bool,
        prefer: Option<(&str, f64)>,
    ) -> Option<Choice> {
        let bytes = *self.sizes.get(class)?;
        let mut measured: Vec<(&str, f64)> = self
            .pair(src, dst)?
            .paths
            .iter()
            .filter(|p| allowed(&p.path))
            .filter_map(|p| Some((p.path.as_str(), (*p.seconds.get(class)?)?)))
            .filter(|(_, s)| s.is_finite() && *s > 0.0)
            .collect();
        measured.sort_by(|a, b| a.1.total_cmp(&b.1));
        let gbps = |s: f64| bytes as f64 / s / 1e9;
        let (path, best) = *measured.first()?;
        let kept = prefer.and_then(|(preferred, margin)| {
            measured
                .iter()
                .find(|(p, s)| *p == preferred && *p != path && *s <= best * (1.0 + margin))
        });
        Some(match kept {
            Some(&(preferred, t)) => Choice {
                path: preferred.to_string(),
                gbps: gbps(t),
                runner_up: Some((path.to_string(), gbps(best))),
                bytes,
                kept_within_margin: true,
            },
            None => Choice {
                path: path.to_string(),
                gbps: gbps(best),
                runner_up: measured.get(1).map(|(p, s)| (p.to_string(), gbps(*s))),
                bytes,
                kept_within_margin: false,
            },
        })
    }

    /// The measured seconds of `path` between the two at size class `class`.
    pub fn seconds_of(
        &self,
        src: Location,
        dst: Location,
        class: usize,
        path: &str,
    ) -> Option<f64> {
        let cost = self.pair(src, dst)?.paths.iter().find(|p| p.path == path)?;
        (*cost.seconds.get(class)?).filter(|s| s.is_finite() && *s > 0.0)
    }

    /// The file this calibration is kept in.
    pub fn file(&self) -> PathBuf {
        file_for(&self.machine_key)
    }

    /// Writes it to [`Calibration::file`] (creating the directory, `0700`, and checking
    /// that no other user can write there: `core::cache`).
    pub fn save(&self) -> Result<PathBuf> {
        crate::core::cache::private_dir("", "calibration")?;
        let path = self.file();
        let fail = |what: &str, e: std::io::Error| {
            Error::Invalid(format!(
                "calibration: cannot {what} {}: {e}; set LOCUS_CACHE_DIR to a writable directory",
                path.display()
            ))
        };
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| Error::Invalid(format!("calibration: cannot serialize: {e}")))?;
        // Write a sibling of a fresh name (never through a link) and rename, so that a
        // reader never sees half a file.
        let tmp = crate::core::cache::fresh_sibling(&path, "tmp");
        crate::core::cache::write_new(&tmp, text.as_bytes()).map_err(|e| fail("write", e))?;
        std::fs::rename(&tmp, &path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            fail("rename into", e)
        })?;
        Ok(path)
    }

    /// Reads a calibration file.
    pub fn read(path: &std::path::Path) -> Result<Calibration> {
        let text = read_regular_file(path, MAX_FILE_BYTES).map_err(|e| {
            Error::Invalid(format!("calibration: cannot read {}: {e}", path.display()))
        })?;
        let c: Calibration = serde_json::from_str(&text).map_err(|e| {
            Error::Invalid(format!(
                "calibration: {} is not a calibration file ({e}); run `locus calibrate` again",
                path.display()
            ))
        })?;
        if c.version != VERSION {
            return Err(Error::Invalid(format!(
                "calibration: {} has format version {} (this locus reads {VERSION}); run `locus calibrate` again",
                path.display(),
                c.version
            )));
        }
        Ok(c)
    }
}

/// The largest calibration file read (one is a few hundred KiB).
const MAX_FILE_BYTES: u64 = 64 << 20;

/// The text of `path` when it is a regular file of at most `limit` bytes. Opened without
/// blocking (a FIFO or a device named by mistake would hang every program at start) and
/// checked on the open descriptor before a byte is read.
fn read_regular_file(path: &std::path::Path, limit: u64) -> std::io::Result<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a FIFO, device or directory); name a calibration file or `off`",
        ));
    }
    if meta.len() > limit {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "{} bytes, more than a calibration file has ({limit} at most)",
                meta.len()
            ),
        ));
    }
    let mut text = String::new();
    file.take(limit).read_to_string(&mut text)?;
    Ok(text)
}

/// The facts a machine's key is made from: the hardware threads, then one line per
/// device (location, name, platform, kind, the driver's or runtime's version and the
/// backend's notes).
pub fn machine_facts<'a>(devices: impl Iterator<Item = &'a Arc<dyn Device>>) -> Vec<String> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::iter::once(format!("{threads} hardware threads"))
        .chain(devices.map(|d| {
            let i = d.info();
            format!(
                "{}: {} [{}; {}] {} {}",
                d.location(),
                i.name,
                i.kind,
                i.platform,
                i.version.as_deref().unwrap_or("-"),
                i.notes.join("; ")
            )
        }))
        .collect()
}

/// The calibration for the machine `facts` describe ([`machine_facts`]), if one was
/// made, and a line on where the planner's costs come from. `LOCUS_CALIBRATION=off`
/// ignores any; a path uses that file whatever its key.
pub fn load(facts: &[String]) -> (Option<Calibration>, String) {
    let chosen = crate::core::config::path("LOCUS_CALIBRATION");
    if chosen.as_deref() == Some(std::path::Path::new("off")) {
        return (
            None,
            "calibration off (LOCUS_CALIBRATION=off): routes by fixed order".into(),
        );
    }
    let key = machine_key(facts);
    let named = chosen.is_some();
    let path = chosen.unwrap_or_else(|| file_for(&key));
    if named && !path.exists() {
        // A path the user named that is not there is a mistake worth a word.
        let status = format!(
            "LOCUS_CALIBRATION={} names no file (a calibration file, or `off`): routes by fixed order",
            path.display()
        );
        crate::core::config::warn_once(&status);
        return (None, status);
    }
    if !path.exists() {
        return (
            None,
            format!(
                "not calibrated: routes by fixed order (run `locus calibrate`; it would write {})",
                path.display()
            ),
        );
    }
    match Calibration::read(&path) {
        Ok(c) => {
            let status = format!(
                "calibrated: {} ({} pairs, {} sizes, measured in {:.1} s)",
                path.display(),
                c.pairs.len(),
                c.sizes.len(),
                c.seconds
            );
            (Some(c), status)
        }
        Err(e) => {
            // An unreadable, empty or corrupt file: said once on stderr, not only in
            // `locus info`.
            let status = format!("{e}: routes by fixed order");
            crate::core::config::warn_once(&status);
            (None, status)
        }
    }
}

/// The file a machine's calibration is kept in: `<cache dir>/calibration-<key>.json`.
pub fn file_for(key: &str) -> PathBuf {
    crate::core::cache::cache_dir().join(format!("calibration-{key}.json"))
}

/// A stable key for a machine: FNV-1a over the facts given (device names, platforms,
/// driver versions), in hex.
pub fn machine_key(facts: &[String]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for fact in facts {
        for b in fact.bytes().chain([b'\n']) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calibration() -> Calibration {
        let cost = |path: &str, seconds: [f64; 2]| PathCost {
            path: path.into(),
            kind: "mapped".into(),
            seconds: seconds.iter().map(|s| Some(*s)).collect(),
        };
        Calibration {
            version: VERSION,
            machine_key: "k".into(),
            machine: vec![],
            unix_time: 0,
            seconds: 1.0,
            sizes: vec![4096, 1 << 20],
            pairs: vec![PairCosts {
                src: "opencl:0".into(),
                dst: "openmp:0".into(),
                paths: vec![cost("a", [1e-6, 1e-3]), cost("b", [2e-6, 1e-4])],
            }],
        }
    }

    /// The integer comparison picks the size nearest on a log scale, as the logarithms
    /// say, for sizes on both sides of every class boundary (unsorted sizes too).
    #[test]
    fn size_classes_are_nearest_on_a_log_scale() {
        let mut c = calibration();
        for sizes in [SIZES.to_vec(), vec![1 << 20, 4096, 128 << 20, 65536]] {
            c.sizes = sizes;
            let by_logs = |bytes: usize| {
                let x = (bytes.max(1) as f64).ln();
                (0..c.sizes.len())
                    .min_by(|&a, &b| {
                        let da = (x - (c.sizes[a] as f64).ln()).abs();
                        let db = (x - (c.sizes[b] as f64).ln()).abs();
                        da.total_cmp(&db)
                    })
                    .unwrap()
            };
            let mut bytes = 1usize;
            while bytes < 1 << 40 {
                for b in [bytes, bytes + 1, bytes * 3 / 2, bytes * 5 / 3] {
                    assert_eq!(c.class_of(b), by_logs(b), "{b} bytes, sizes {:?}", c.sizes);
                }
                bytes *= 2;
            }
            assert_eq!(c.class_of(0), by_logs(0));
        }
    }

    #[test]
    fn the_fastest_measured_path_wins_per_size_class() {
        let c = calibration();
        let (s, d) = (Location::OpenCl(0), Location::OpenMp(0));
        let all = |_: &str| true;
        assert_eq!(c.class_of(1), 0);
        assert_eq!(c.class_of(60_000), 0);
        assert_eq!(c.class_of(70_000), 1);
        assert_eq!(c.class_of(usize::MAX), 1);
        let small = c.choose(s, d, 0, &all, None).unwrap();
        assert_eq!(small.path, "a");
        assert_eq!(small.runner_up.as_ref().unwrap().0, "b");
        let large = c.choose(s, d, 1, &all, None).unwrap();
        assert_eq!(large.path, "b");
        assert!((large.gbps - (1 << 20) as f64 / 1e-4 / 1e9).abs() < 1e-9);
        // Only paths that apply are chosen; an unmeasured pair has no choice.
        assert_eq!(c.choose(s, d, 1, &|p| p == "a", None).unwrap().path, "a");
        assert!(c.choose(d, s, 0, &all, None).is_none());
    }

    #[test]
    fn keys_are_stable_and_files_round_trip() {
        assert_eq!(machine_key(&["a".into()]), machine_key(&["a".into()]));
        assert_ne!(machine_key(&["a".into()]), machine_key(&["b".into()]));
        let dir = std::env::temp_dir().join(format!("locus-cost-{}", std::process::id()));
        let c = calibration();
        let path = dir.join("c.json");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(&path, serde_json::to_string(&c).unwrap()).unwrap();
        let back = Calibration::read(&path).unwrap();
        assert_eq!(back.pairs[0].paths[1].seconds, c.pairs[0].paths[1].seconds);
        std::fs::write(&path, "{").unwrap();
        let err = Calibration::read(&path).unwrap_err().to_string();
        assert!(err.contains("locus calibrate"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// `LOCUS_CALIBRATION` naming a FIFO, a device or a directory is an error at once
    /// (the old code's read blocked on the FIFO forever, and read /dev/zero without end).
    #[test]
    fn a_fifo_a_device_or_a_directory_is_refused_without_blocking() {
        let dir = std::env::temp_dir().join(format!("locus-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("calibration.json");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        for path in [
            fifo.as_path(),
            std::path::Path::new("/dev/zero"),
            dir.as_path(),
        ] {
            let err = Calibration::read(path).unwrap_err().to_string();
            assert!(err.contains("cannot read"), "{err}");
        }
        assert!(Calibration::read(&fifo)
            .unwrap_err()
            .to_string()
            .contains("not a regular file"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
