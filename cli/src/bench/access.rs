//! `access()` latency on the host, beside the matrix: a buffer the host reaches in place
//! (which must not grow with its size) and one served from a cached replica.

use locus::{Buffer, Location, Registry, Result};

use super::{measure, AccessTiming, Config};

/// `access()` latency on the host: in place (must not grow with size) and from a
/// cached replica.
pub(super) fn latency(registry: &Registry, config: &Config) -> Result<Vec<AccessTiming>> {
    let mut out = Vec::new();
    let sizes = [4u64 << 10, *config.sizes.iter().max().unwrap_or(&(1 << 20))];
    for &l in &config.locations {
        let (in_place, _) = locus::access::location_accessibility(registry, l, Location::Host)?;
        for &bytes in &sizes {
            let cap = registry.device(l)?.info().max_allocation;
            if bytes > cap {
                continue;
            }
            let b = Buffer::<u8>::zeroed(l, bytes as usize)?;
            if !in_place {
                drop(b.access(Location::Host)?); // make the replica once
            }
            let stats = measure(config.cell_seconds.min(0.05), config.min_runs, || {
                drop(std::hint::black_box(b.access(Location::Host)?));
                Ok(())
            })?;
            out.push(AccessTiming {
                location: l.to_string(),
                accessor: "host".into(),
                case: if in_place {
                    "in-place"
                } else {
                    "cached replica"
                }
                .into(),
                bytes,
                median_us: stats.median_s * 1e6,
            });
        }
    }
    Ok(out)
}
