//! The process environment as it was before the runtimes were opened: some vendor
//! loaders split a list-valued variable in place, writing NULs over its separators in
//! the very string `getenv` returned (an OpenCL ICD loader does this to
//! `OCL_ICD_FILENAMES`: `libpocl.so.2:libnvidia-opencl.so.1` reads `libpocl.so.2`
//! afterwards). The process itself has already read it, but every child it starts
//! inherits the truncated value, and finds fewer devices than its parent (a child of a
//! locus process on an NVIDIA machine lost NVIDIA's OpenCL that way).
//!
//! [`EnvironmentGuard`] records each variable's string before discovery and, after it,
//! writes back the characters a loader replaced with NULs, in place, where the variable
//! still points to the same string (nothing is written where the application or a
//! library set it anew meanwhile).

use std::ffi::{c_char, CStr, CString};

/// The environment's strings before the runtimes were opened.
pub(crate) struct EnvironmentGuard {
    /// Each variable's name, the address of its value and the value's bytes.
    recorded: Vec<(CString, usize, Vec<u8>)>,
}

impl EnvironmentGuard {
    /// Records every variable of the process's environment.
    pub(crate) fn record() -> EnvironmentGuard {
        let recorded = std::env::vars_os()
            .filter_map(|(name, _)| {
                let name = CString::new(name.into_encoded_bytes()).ok()?;
                // SAFETY: getenv with a NUL-terminated name; the value it returns is
                // read at once, before any other call that could change the
                // environment on this thread (discovery has not started).
                let value = unsafe { libc::getenv(name.as_ptr()) };
                if value.is_null() {
                    return None;
                }
                // SAFETY: a NUL-terminated string of the environment (just returned).
                let bytes = unsafe { CStr::from_ptr(value) }.to_bytes().to_vec();
                Some((name, value as usize, bytes))
            })
            .collect();
        EnvironmentGuard { recorded }
    }

    /// Writes back, in place, every character a loader replaced with a NUL in a value
    /// that is still the same string; returns the names it repaired.
    pub(crate) fn repair(self) -> Vec<String> {
        let mut repaired = Vec::new();
        for (name, address, before) in self.recorded {
            // SAFETY: getenv with a NUL-terminated name.
            let value = unsafe { libc::getenv(name.as_ptr()) };
            if value as usize != address {
                continue; // set anew, or removed: not ours to touch
            }
            // SAFETY: the same string as recorded, whose `before.len()` bytes and NUL
            // terminator are still allocated (a loader that splits it in place writes
            // NULs within it and keeps its storage); read byte by byte, never past the
            // recorded length.
            let now: Vec<u8> = (0..before.len())
                .map(|i| unsafe { *value.add(i) } as u8)
                .collect();
            let truncated =
                now != before && now.iter().zip(&before).all(|(&n, &b)| n == b || n == 0);
            if !truncated {
                continue;
            }
            for (i, (&n, &b)) in now.iter().zip(&before).enumerate() {
                if n != b {
                    // SAFETY: within the string's recorded length, as above; the loader
                    // wrote a NUL here, this puts back what the environment held.
                    unsafe { *value.add(i) = b as c_char };
                }
            }
            repaired.push(name.to_string_lossy().into_owned());
        }
        repaired
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A loader's in-place split (as `strtok` on `getenv`'s string does) is undone, and
    /// a variable set anew meanwhile is left alone. Fails on the code before (the
    /// second entry kept reading `a.so`).
    #[test]
    fn a_list_split_in_place_is_whole_again_and_a_new_value_is_kept() {
        let split = "ENVIRONMENT_GUARD_TEST_SPLIT";
        let replaced = "ENVIRONMENT_GUARD_TEST_REPLACED";
        // The test's own variables (nextest runs each test in a process of its own).
        std::env::set_var(split, "a.so:b.so:c.so");
        std::env::set_var(replaced, "x:y");
        let guard = EnvironmentGuard::record();
        let name = CString::new(split).unwrap();
        // SAFETY: as a loader does: NULs over the separators of getenv's own string.
        unsafe {
            let value = libc::getenv(name.as_ptr());
            *value.add(4) = 0;
            *value.add(9) = 0;
        }
        assert_eq!(std::env::var(split).unwrap(), "a.so");
        std::env::set_var(replaced, "z");
        assert_eq!(guard.repair(), vec![split.to_string()]);
        assert_eq!(std::env::var(split).unwrap(), "a.so:b.so:c.so");
        assert_eq!(std::env::var(replaced).unwrap(), "z");
    }
}
