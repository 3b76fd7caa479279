//! The dynamic-linking facts of PE (Windows) and ELF (Linux) files: what a library or program
//! imports, what it calls itself (ELF soname) and where it looks (ELF rpath/runpath).
//!
//! Files are memory-mapped and only the headers and tables that matter are read, so a 60 MB
//! DLL costs a few pages. Damaged files give an error naming the file and what is wrong,
//! never a panic: every offset and size read from the file is checked before use.
//!
//! - `mod.rs`: what is read ([`BinaryInfo`]), the errors, the format sniff, `$ORIGIN`
//! - `input.rs`: the file's bytes with bounds-checked reads
//! - `le.rs`: little-endian integers at an offset of a slice
//! - `pe.rs`: PE32 and PE32+ (imports, delay imports, machine, subsystem)
//! - `elf.rs`: ELF32 and ELF64 (NEEDED, SONAME, RPATH, RUNPATH, DT_VERNEED)
//! - `fatbin.rs`: the CUDA cubins and PTX in a library's fatbin section

mod elf;
pub mod fatbin;
mod input;
mod le;
mod pe;
#[cfg(test)]
mod tests;
pub mod version;

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use memmap2::Mmap;

use elf::parse_elf;
use input::Input;
use pe::parse_pe;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BinaryFormat {
    Pe,
    Elf,
}

impl BinaryFormat {
    fn name(self) -> &'static str {
        match self {
            BinaryFormat::Pe => "PE",
            BinaryFormat::Elf => "ELF",
        }
    }
}

/// What the loader needs to know about one binary.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BinaryInfo {
    pub format: BinaryFormat,
    /// "x86_64", "i386", "aarch64", "arm", … or "unknown-0x…" with the raw machine number.
    pub machine: String,
    /// PE only: "windows-cui", "windows-gui", "native", … ("unknown-N" for other values).
    pub(crate) subsystem: Option<String>,
    /// PE: `IMAGE_FILE_DLL` is set. ELF: the type is `ET_DYN`, which position-independent
    /// executables are too.
    pub is_dll: bool,
    /// PE: the import table's DLL names, in order. ELF: the `DT_NEEDED` entries, in order.
    pub imports: Vec<String>,
    /// PE: the delay-load import table's DLL names, in order. ELF: always empty.
    pub delay_imports: Vec<String>,
    /// ELF `DT_SONAME`.
    pub soname: Option<String>,
    /// ELF `DT_RPATH`, split on ':' (empty entries kept: glibc searches the current directory
    /// for them).
    pub rpath: Vec<String>,
    /// ELF `DT_RUNPATH`, split on ':'. When present the loader ignores `rpath`.
    pub runpath: Vec<String>,
    /// ELF symbol versions needed (`DT_VERNEED`, the `.gnu.version_r` table): each library
    /// with the versions asked of it, e.g. `("libc.so.6", ["GLIBC_2.2.5", "GLIBC_2.14"])`,
    /// in file order. PE: always empty.
    pub(crate) version_needs: Vec<(String, Vec<String>)>,
}

#[derive(Debug, thiserror::Error)]
pub enum BinaryError {
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{} is neither a PE nor an ELF file (it starts with {start})", path.display())]
    UnknownFormat { path: PathBuf, start: String },
    #[error(
        "{} is truncated: {what} at 0x{offset:x}..0x{end:x} runs past the end of the file \
         (0x{len:x} bytes)",
        path.display()
    )]
    Truncated {
        path: PathBuf,
        what: String,
        offset: u64,
        end: u64,
        len: u64,
    },
    #[error("{} is not a valid {} file: {problem}", path.display(), format.name())]
    Malformed {
        path: PathBuf,
        format: BinaryFormat,
        problem: String,
    },
}

/// The format of a file, from its first four bytes only.
pub(crate) fn sniff(path: &Path) -> io::Result<Option<BinaryFormat>> {
    let mut start = Vec::with_capacity(4);
    File::open(path)?.take(4).read_to_end(&mut start)?;
    Ok(sniff_bytes(&start))
}

fn sniff_bytes(data: &[u8]) -> Option<BinaryFormat> {
    if data.starts_with(b"MZ") {
        Some(BinaryFormat::Pe)
    } else if data.starts_with(b"\x7fELF") {
        Some(BinaryFormat::Elf)
    } else {
        None
    }
}

/// Maps the file and parses it; only the pages holding headers and import tables are read.
pub fn read(path: &Path) -> Result<BinaryInfo, BinaryError> {
    let io_error = |source| BinaryError::Io {
        path: path.to_path_buf(),
        source,
    };
    // Asked before opening: Windows refuses to open a folder ("Access denied").
    let metadata = std::fs::metadata(path).map_err(io_error)?;
    if !metadata.is_file() {
        return Err(io_error(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        )));
    }
    if metadata.len() == 0 {
        return parse(&[], path);
    }
    let file = File::open(path).map_err(io_error)?;
    // SAFETY: the map is read-only and lives only for this call. Another process truncating
    // the file meanwhile could fault the read; build outputs and unpacked wheels are not
    // rewritten while they are inspected.
    let map = unsafe { Mmap::map(&file) }.map_err(io_error)?;
    parse(&map, path)
}

/// Parses a whole file's bytes; `path` is only used in error messages.
pub fn parse(data: &[u8], path: &Path) -> Result<BinaryInfo, BinaryError> {
    match sniff_bytes(data) {
        Some(format) => {
            let input = Input { data, path, format };
            match format {
                BinaryFormat::Pe => parse_pe(&input),
                BinaryFormat::Elf => parse_elf(&input),
            }
        }
        None => Err(BinaryError::UnknownFormat {
            path: path.to_path_buf(),
            start: describe_start(data),
        }),
    }
}

fn describe_start(data: &[u8]) -> String {
    if data.is_empty() {
        return "nothing: it is empty".to_string();
    }
    let hex: Vec<String> = data.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("bytes {}", hex.join(" "))
}

/// Replaces `$ORIGIN` and `${ORIGIN}` in an rpath/runpath entry with `dir` (the folder of
/// the binary that holds the entry), as the ELF loader does. `$ORIGINAL` and other names
/// are left alone; nothing is normalised, so `$ORIGIN/../lib` stays `dir/../lib`.
pub(crate) fn expand_origin(entry: &str, dir: &Path) -> PathBuf {
    let mut out = std::ffi::OsString::new();
    let mut rest = entry;
    while let Some(at) = rest.find('$') {
        out.push(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix("{ORIGIN}") {
            out.push(dir.as_os_str());
            rest = tail;
        } else if let Some(tail) = after
            .strip_prefix("ORIGIN")
            .filter(|t| !t.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
        {
            out.push(dir.as_os_str());
            rest = tail;
        } else {
            out.push("$");
            rest = after;
        }
    }
    out.push(rest);
    PathBuf::from(out)
}
