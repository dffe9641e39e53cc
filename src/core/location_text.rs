//! Locations and technologies as text: `opencl:1`, `webgpu` (device 0), and the
//! comma-separated lists `LOCUS_REQUIRE` and `LOCUS_BACKENDS` take. Apart from
//! `location.rs` so that the types themselves name no error.

use std::str::FromStr;

use super::error::Error;
use super::location::{Location, Technology};

impl FromStr for Technology {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        let lower = s.trim().to_ascii_lowercase();
        Technology::ALL
            .into_iter()
            .find(|t| t.name() == lower)
            .ok_or_else(|| Error::UnknownLocation {
                text: s.to_string(),
            })
    }
}

impl FromStr for Location {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        let unknown = || Error::UnknownLocation {
            text: s.to_string(),
        };
        let (name, ordinal) = match s.trim().split_once(':') {
            Some((name, n)) => (name, Some(n)),
            None => (s.trim(), None),
        };
        let technology: Technology = name.parse().map_err(|_| unknown())?;
        let ordinal = match ordinal {
            None => 0,
            Some(n) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                n.parse::<u32>().map_err(|_| unknown())?
            }
            Some(_) => return Err(unknown()),
        };
        if technology == Technology::Host && ordinal != 0 {
            return Err(unknown());
        }
        Ok(technology.location(ordinal))
    }
}

/// Parses a comma-separated list of locations (`host,opencl:0,webgpu`).
pub fn parse_locations(list: &str) -> Result<Vec<Location>, Error> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::parse)
        .collect()
}

/// Parses a comma-separated list of technology names, as `LOCUS_BACKENDS` takes them
/// (`host,opencl,webgpu`; case and spaces do not matter, an ordinal is not allowed).
/// Every item must name a technology: the error names the ones that do not, and lists
/// the valid names.
///
/// ```
/// use locus::{parse_technologies, Technology};
/// assert_eq!(parse_technologies("OpenCL, webgpu")?, [Technology::OpenCl, Technology::WebGpu]);
/// assert!(parse_technologies("opencl,vulkan").is_err());
/// # Ok::<(), locus::Error>(())
/// ```
pub fn parse_technologies(list: &str) -> Result<Vec<Technology>, Error> {
    let mut found = Vec::new();
    let mut unknown = Vec::new();
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match item.parse::<Technology>() {
            Ok(t) => found.push(t),
            Err(_) => unknown.push(format!("`{item}`")),
        }
    }
    if unknown.is_empty() {
        return Ok(found);
    }
    let valid: Vec<&str> = Technology::ALL.iter().map(|t| t.name()).collect();
    Err(Error::Invalid(format!(
        "{} {} no technology; the valid names are {} (comma-separated)",
        unknown.join(", "),
        if unknown.len() == 1 { "names" } else { "name" },
        valid.join(", ")
    )))
}
