//! The CUDA code a library carries: the entries of the fatbins in its `.nv_fatbin` section
//! (ELF; `.nv_fatb` in a PE DLL), each a cubin (machine code, SASS) or PTX for one
//! architecture. What `cuobjdump --list-elf --list-ptx` lists, read without the CUDA toolkit.
//!
//! NVIDIA does not document the layout. It is the one open readers use: RWTH-ACS/cricket
//! `cpu/cpu-elf2.c` (`FATBIN_TEXT_MAGIC 0xBA55ED50`, `struct fat_elf_header` and
//! `fat_text_header`, the section `.nv_fatbin`) and n-eiling/cuda-fatbin-decompression; checked
//! here against nvcc 13.0's output and cuobjdump's listing of the same files
//! (`tests/data/fatbin/README.md`). The PE name `.nv_fatb` (section names stop at 8 bytes) is
//! not checked on a real DLL: no Windows CUDA build has run. The section holds fatbins one after the
//! other (one per compiled `.cu` file), each:
//! - a 16-byte header: magic 0xBA55ED50 (u32), version 1 (u16), header size (u16), size of
//!   the entries that follow (u64);
//! - entries, each a header of its own size (64 to 112 bytes seen) then its payload: kind
//!   (u16 at 0: 1 PTX, 2 ELF cubin), header size (u32 at 4), payload size (u64 at 8), the
//!   architecture (u32 at 28: 90 for sm_90 / compute_90). Compressed payloads
//!   (`-Xfatbin=-compress-all`) keep this header, so no payload is read.
//!
//! Every offset and size comes from the file and is checked before use: a damaged section
//! is an error naming the file and what is wrong, never a panic.

use std::fmt;
use std::path::Path;

use object::{Object, ObjectSection};

use super::input::Input;
use super::le::{u16_at, u32_at, u64_at};
use super::{BinaryError, BinaryFormat};

const FATBIN_MAGIC: u32 = 0xBA55_ED50;
const FATBIN_HEADER: u64 = 16;
/// The fields read from an entry header end at byte 32.
const ENTRY_HEADER_MIN: u64 = 32;
/// More entries than any real library has (CTranslate2 with 12 targets: about 300).
const MAX_ENTRIES: usize = 1 << 20;

/// What one fatbin entry holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CodeKind {
    /// Machine code (SASS) for one architecture: runs on that major, same or newer minor.
    Cubin,
    /// PTX: the driver compiles it at first use for the GPU it runs on (same or newer).
    Ptx,
    /// A kind this reader does not know (LTO IR…), with its number.
    Other(u16),
}

/// One entry: its kind and architecture (`90` for sm_90 / compute_90).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CudaCode {
    pub kind: CodeKind,
    pub arch: u32,
}

impl fmt::Display for CudaCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            CodeKind::Cubin => write!(f, "sm_{}", self.arch),
            CodeKind::Ptx => write!(f, "compute_{} (PTX)", self.arch),
            CodeKind::Other(kind) => write!(f, "kind {kind} for {}", self.arch),
        }
    }
}

/// The CUDA code in the library at `path`, in file order; empty when it has no fatbin section.
pub fn read_cuda_code(path: &Path) -> Result<Vec<CudaCode>, BinaryError> {
    let data = std::fs::read(path).map_err(|source| BinaryError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_cuda_code(&data, path)
}

/// [`read_cuda_code`] of a file's bytes; `path` is only used in error messages.
pub fn parse_cuda_code(data: &[u8], path: &Path) -> Result<Vec<CudaCode>, BinaryError> {
    let Some(format) = super::sniff_bytes(data) else {
        return Err(BinaryError::UnknownFormat {
            path: path.to_path_buf(),
            start: super::describe_start(data),
        });
    };
    let input = Input { data, path, format };
    let file = object::File::parse(data).map_err(|e| input.malformed(e.to_string()))?;
    let name = match format {
        BinaryFormat::Elf => ".nv_fatbin",
        BinaryFormat::Pe => ".nv_fatb",
    };
    let Some(section) = file.section_by_name(name) else {
        return Ok(Vec::new());
    };
    let Some((offset, size)) = section.file_range() else {
        return Err(input.malformed(format!("{name} has no bytes in the file")));
    };
    input.bytes(offset, size, name)?;
    Sections {
        input: &input,
        name,
    }
    .entries(offset, offset + size)
}

struct Sections<'a, 'b> {
    input: &'b Input<'a>,
    name: &'static str,
}

impl Sections<'_, '_> {
    fn entries(&self, start: u64, end: u64) -> Result<Vec<CudaCode>, BinaryError> {
        let mut found = Vec::new();
        let mut at = start;
        while at < end {
            // Fatbins start 8-byte aligned; a PE section is padded with zeros to its end.
            let rest = self.input.bytes(at, end - at, self.name)?;
            if rest.iter().all(|&b| b == 0) {
                break;
            }
            let padding = rest.iter().take(7).take_while(|&&b| b == 0).count() as u64;
            at += padding;
            at = self.fatbin(at, end, &mut found)?;
        }
        Ok(found)
    }

    /// Reads the fatbin at `at` into `found`; returns where it ends.
    fn fatbin(&self, at: u64, end: u64, found: &mut Vec<CudaCode>) -> Result<u64, BinaryError> {
        let header = self.within(at, FATBIN_HEADER, end, "fatbin header")?;
        // `within` gave the whole header: a cut can only be this code's mistake.
        let cut = || self.problem(at, "fatbin header cut off".to_string());
        let magic = u32_at(header, 0).ok_or_else(cut)?;
        if magic != FATBIN_MAGIC {
            return Err(self.input.malformed(format!(
                "{} at 0x{at:x}: 0x{magic:08x} where a fatbin starts with 0x{FATBIN_MAGIC:08x}",
                self.name
            )));
        }
        let header_size = u64::from(u16_at(header, 6).ok_or_else(cut)?);
        let entries_size = u64_at(header, 8).ok_or_else(cut)?;
        if header_size < FATBIN_HEADER {
            return Err(self.problem(at, format!("fatbin header size {header_size} is below 16")));
        }
        let first = self.input.offset(at, header_size, "fatbin entries")?;
        let fatbin_end = self.input.offset(first, entries_size, "fatbin entries")?;
        if fatbin_end > end {
            return Err(self.problem(
                at,
                format!("fatbin of 0x{entries_size:x} bytes runs past the end of the section"),
            ));
        }
        let mut entry = first;
        while entry < fatbin_end {
            if found.len() >= MAX_ENTRIES {
                return Err(self.problem(entry, format!("more than {MAX_ENTRIES} entries")));
            }
            let head = self.within(entry, ENTRY_HEADER_MIN, fatbin_end, "fatbin entry header")?;
            let cut = || self.problem(entry, "fatbin entry header cut off".to_string());
            let entry_header = u64::from(u32_at(head, 4).ok_or_else(cut)?);
            let payload = u64_at(head, 8).ok_or_else(cut)?;
            if entry_header < ENTRY_HEADER_MIN {
                return Err(self.problem(
                    entry,
                    format!("fatbin entry header size {entry_header} is below {ENTRY_HEADER_MIN}"),
                ));
            }
            let next = self.input.offset(entry, entry_header, "fatbin entry")?;
            let next = self.input.offset(next, payload, "fatbin entry")?;
            if next > fatbin_end {
                return Err(self.problem(
                    entry,
                    format!("fatbin entry of 0x{payload:x} bytes runs past the end of its fatbin"),
                ));
            }
            let kind = match u16_at(head, 0).ok_or_else(cut)? {
                1 => CodeKind::Ptx,
                2 => CodeKind::Cubin,
                other => CodeKind::Other(other),
            };
            found.push(CudaCode {
                kind,
                arch: u32_at(head, 28).ok_or_else(cut)?,
            });
            entry = next;
        }
        Ok(fatbin_end)
    }

    /// `size` bytes at `at` that must end before `limit` (the end of what holds them).
    fn within(&self, at: u64, size: u64, limit: u64, what: &str) -> Result<&[u8], BinaryError> {
        if at.checked_add(size).is_none_or(|e| e > limit) {
            return Err(self.problem(
                at,
                format!("{what} of {size} bytes is cut off at 0x{limit:x}"),
            ));
        }
        self.input.bytes(at, size, what)
    }

    fn problem(&self, at: u64, what: String) -> BinaryError {
        self.input
            .malformed(format!("{} at 0x{at:x}: {what}", self.name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAIN: &[u8] = include_bytes!("../../tests/data/fatbin/libtiny-plain.so");
    const COMPRESSED: &[u8] = include_bytes!("../../tests/data/fatbin/libtiny-compressed.so");
    const CUOBJDUMP: &str = include_str!("../../tests/data/fatbin/cuobjdump.txt");
    /// Where the fixtures' `.nv_fatbin` section starts (`readelf -S`: both at 0x2020).
    const SECTION: usize = 0x2020;

    /// cuobjdump's listing of `library`: "ELF file 1: libtiny-plain.1.sm_75.cubin" and
    /// "PTX file 1: libtiny-plain.1.sm_120.ptx" lines under its "## … library" heading.
    fn cuobjdump_lists(library: &str) -> Vec<CudaCode> {
        let mut lines = CUOBJDUMP
            .lines()
            .skip_while(|l| !l.ends_with(library))
            .skip(1);
        let mut listed = Vec::new();
        for line in lines.by_ref().take_while(|l| !l.starts_with("##")) {
            let (kind, name) = if let Some(rest) = line.strip_prefix("ELF file") {
                (CodeKind::Cubin, rest.trim_end_matches(".cubin"))
            } else if let Some(rest) = line.strip_prefix("PTX file") {
                (CodeKind::Ptx, rest.trim_end_matches(".ptx"))
            } else {
                panic!("unexpected cuobjdump line {line:?}");
            };
            let arch = name.rsplit_once(".sm_").expect("an sm_ suffix").1;
            listed.push(CudaCode {
                kind,
                arch: arch.parse().expect("a number"),
            });
        }
        listed
    }

    /// cuobjdump numbers cubins and PTX apart, so each kind is compared in its own order.
    fn by_kind(codes: &[CudaCode], kind: CodeKind) -> Vec<u32> {
        codes
            .iter()
            .filter(|c| c.kind == kind)
            .map(|c| c.arch)
            .collect()
    }

    #[test]
    fn reads_what_cuobjdump_lists_plain_and_compressed() {
        for (bytes, name) in [
            (PLAIN, "libtiny-plain.so"),
            (COMPRESSED, "libtiny-compressed.so"),
        ] {
            let found = parse_cuda_code(bytes, Path::new(name)).unwrap();
            let listed = cuobjdump_lists(name);
            assert_eq!(listed.len(), 11, "{name}: the fixture's listing");
            assert_eq!(found.len(), listed.len(), "{name}: {found:?}");
            for kind in [CodeKind::Cubin, CodeKind::Ptx] {
                assert_eq!(
                    by_kind(&found, kind),
                    by_kind(&listed, kind),
                    "{name} {kind:?}"
                );
            }
            let names: std::collections::BTreeSet<String> =
                found.iter().map(ToString::to_string).collect();
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            assert_eq!(names, ["compute_120 (PTX)", "sm_120", "sm_75", "sm_89"]);
        }
    }

    #[test]
    fn a_library_without_cuda_code_has_none() {
        // This test's own executable: an ELF or PE file with no fatbin section.
        let me = std::env::current_exe().unwrap();
        assert_eq!(read_cuda_code(&me).unwrap(), []);
        let err = parse_cuda_code(b"#!/bin/sh\n", Path::new("x.so")).unwrap_err();
        assert!(err.to_string().contains("neither a PE nor an ELF"), "{err}");
    }

    #[test]
    fn a_truncated_library_is_an_error_at_every_cut() {
        for bytes in [PLAIN, COMPRESSED] {
            for cut in (0..bytes.len()).step_by(61) {
                let err = parse_cuda_code(&bytes[..cut], Path::new("cut.so"));
                assert!(err.is_err(), "cut at {cut} was read: {err:?}");
            }
        }
    }

    /// The plain fixture with `bytes` written at `at` (an offset into its `.nv_fatbin`).
    fn damaged(at: usize, bytes: &[u8]) -> String {
        let mut data = PLAIN.to_vec();
        data[SECTION + at..SECTION + at + bytes.len()].copy_from_slice(bytes);
        match parse_cuda_code(&data, Path::new("bad.so")) {
            Ok(found) => panic!("damage at {at} was read: {found:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_damaged_fatbin_is_an_error_naming_what_is_wrong() {
        let err = damaged(0, &[0, 0, 0, 1]);
        assert!(err.contains("bad.so is not a valid ELF file"), "{err}");
        assert!(
            err.contains("where a fatbin starts with 0xba55ed50"),
            "{err}"
        );
        let err = damaged(8, &u64::MAX.to_le_bytes());
        assert!(err.contains("past the end of any file"), "{err}");
        let err = damaged(8, &0x10_0000u64.to_le_bytes());
        assert!(err.contains("runs past the end of the section"), "{err}");
        let err = damaged(6, &8u16.to_le_bytes());
        assert!(err.contains("header size 8 is below 16"), "{err}");
        // The first entry (16 bytes in): its header size, then its payload size.
        let err = damaged(16 + 4, &0u32.to_le_bytes());
        assert!(err.contains("entry header size 0 is below 32"), "{err}");
        let err = damaged(16 + 8, &0x10_0000u64.to_le_bytes());
        assert!(err.contains("runs past the end of its fatbin"), "{err}");
        // The second fatbin (at 4808, `tests/data/fatbin/README.md`) no longer a fatbin.
        let err = damaged(4808, b"junk");
        assert!(err.contains("at 0x"), "{err}");
    }

    #[test]
    fn an_unknown_entry_kind_is_kept_not_guessed() {
        let mut data = PLAIN.to_vec();
        data[SECTION + 16] = 4;
        let found = parse_cuda_code(&data, Path::new("lto.so")).unwrap();
        assert_eq!(found[0].kind, CodeKind::Other(4));
        assert_eq!(found[0].to_string(), "kind 4 for 75");
    }
}
