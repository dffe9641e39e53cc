//! Modules and launches in the simulated runtime: an image is read as the driver reads
//! it (an ELF object, whose header says its length, or NUL-terminated text: PTX); the
//! vendor's simulator decides whether it loads (its ELF ABI, PTX's ISA version); a
//! function the module does not define is not found; a launch of an unknown function,
//! of a zero or oversized grid, or of a block of more than 1024 threads is refused. A
//! launch is queued on its stream like a copy (its body does not run: the tests check
//! what was launched, [`SimModel::launches`]).

use std::collections::HashMap;

use super::{Refusal, SimModel};

/// An image handed to `cuModuleLoadData` / `hipModuleLoadData`.
#[derive(Debug)]
pub(crate) enum Image {
    /// An ELF object: its ABI byte (`EI_OSABI`: 51 for CUDA, 64 for AMD's HSA), its
    /// `e_flags` (a cubin's architecture) and the names in it.
    Elf(u8, u32, Vec<String>),
    /// Text (PTX).
    Text(String),
}

/// One launch, as the driver was asked for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Launch {
    /// The function's name.
    pub(crate) name: String,
    pub(crate) grid: [u32; 3],
    pub(crate) block: [u32; 3],
    pub(crate) stream: usize,
}

#[derive(Default)]
pub(super) struct Modules {
    /// Module handle -> the names it defines.
    loaded: HashMap<usize, Vec<String>>,
    /// Function handle -> its name.
    functions: HashMap<usize, String>,
    launches: Vec<Launch>,
    next: usize,
}

/// Reads the image at `ptr` as the driver does.
///
/// # Safety
/// `ptr` points to a whole ELF object or to NUL-terminated text.
pub(crate) unsafe fn read_image(ptr: *const u8) -> Image {
    // SAFETY: per the caller's contract, at least the 4 magic bytes or a NUL are there.
    let head = unsafe { std::slice::from_raw_parts(ptr, 4) };
    if head == b"\x7fELF" {
        // SAFETY: an ELF64 header is 64 bytes; its section table ends the object.
        let header = unsafe { std::slice::from_raw_parts(ptr, 64) };
        let word = |at: usize, n: usize| {
            header[at..at + n]
                .iter()
                .rev()
                .fold(0usize, |v, &b| (v << 8) | usize::from(b))
        };
        let end = word(0x28, 8) + word(0x3A, 2) * word(0x3C, 2);
        // SAFETY: the object is `end` bytes long, as its header says.
        let bytes = unsafe { std::slice::from_raw_parts(ptr, end.max(64)) };
        let names = bytes
            .split(|&b| b == 0)
            .filter(|s| !s.is_empty() && s.iter().all(|b| b.is_ascii_graphic()))
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .collect();
        let flags = word(0x30, 4) as u32;
        return Image::Elf(header[7], flags, names);
    }
    // SAFETY: NUL-terminated text, per the caller's contract.
    let text = unsafe { std::ffi::CStr::from_ptr(ptr.cast()) };
    Image::Text(text.to_string_lossy().into_owned())
}

/// A small ELF object of ABI `osabi` naming `names` (what the simulated hiprtc makes).
pub(crate) fn elf_image(osabi: u8, names: &[&str]) -> Vec<u8> {
    let mut strings = vec![0u8];
    for n in names {
        strings.extend_from_slice(n.as_bytes());
        strings.push(0);
    }
    let mut image = vec![0u8; 64];
    image[..4].copy_from_slice(b"\x7fELF");
    image[4] = 2; // 64-bit
    image[5] = 1; // little-endian
    image[6] = 1;
    image[7] = osabi;
    // No section table: the object ends after the strings.
    image[0x28..0x30].copy_from_slice(&((64 + strings.len()) as u64).to_le_bytes());
    image.extend_from_slice(&strings);
    image
}

/// The kernels a PTX text defines (`.entry name`).
pub(crate) fn ptx_entries(ptx: &str) -> Vec<String> {
    ptx.split(".entry")
        .skip(1)
        .filter_map(|rest| {
            let name: String = rest
                .trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
                .collect();
            (!name.is_empty()).then_some(name)
        })
        .collect()
}

impl SimModel {
    /// Loads a module defining `names`; its handle.
    pub(crate) fn load_module(&self, call: &'static str, names: Vec<String>) -> usize {
        self.record(call, 0);
        let mut state = self.lock();
        state.modules.next += 16;
        let handle = 0xC000 + state.modules.next;
        state.modules.loaded.insert(handle, names);
        handle
    }

    /// The function `name` of `module`.
    pub(crate) fn function(
        &self,
        call: &'static str,
        module: usize,
        name: &str,
    ) -> Result<usize, Refusal> {
        self.record(call, 0);
        let mut state = self.lock();
        let defined = match state.modules.loaded.get(&module) {
            None => return Err(Refusal::InvalidHandle),
            Some(names) => names.iter().any(|n| n == name),
        };
        if !defined {
            return Err(Refusal::NotFound);
        }
        state.modules.next += 16;
        let handle = 0xD000 + state.modules.next;
        state.modules.functions.insert(handle, name.to_string());
        Ok(handle)
    }

    /// Queues a launch of `function` on `stream`; at most `max_items_x` work items
    /// along x.
    pub(crate) fn launch(
        &self,
        call: &'static str,
        function: usize,
        (grid, block): ([u32; 3], [u32; 3]),
        stream: usize,
        max_items_x: u64,
    ) -> Result<(), Refusal> {
        let threads = block.iter().map(|&b| u64::from(b)).product::<u64>();
        let name = self.lock().modules.functions.get(&function).cloned();
        let Some(name) = name else {
            self.record(call, stream);
            return Err(Refusal::InvalidHandle);
        };
        if grid.contains(&0)
            || block.contains(&0)
            || grid[1] > 65_535
            || grid[2] > 65_535
            || threads > 1024
            || u64::from(grid[0]) * u64::from(block[0]) > max_items_x
        {
            self.record(call, stream);
            return Err(Refusal::InvalidValue);
        }
        self.lock().modules.launches.push(Launch {
            name,
            grid,
            block,
            stream,
        });
        self.enqueue(call, stream, Box::new(|| {}));
        Ok(())
    }

    /// The launches so far.
    pub(crate) fn launches(&self) -> Vec<Launch> {
        self.lock().modules.launches.clone()
    }
}
