//! `.7z`: the community rocBLAS build for gfx1010 ships as one (likelovewant/ROCmLibs-for-
//! gfx1103-AMD780M-APU, release v0.6.2.4). Read in-process with `sevenz-rust2` (LZMA, LZMA2
//! and the BCJ filters; no `7z` program on PATH), each entry checked by the [`Tree`] as a
//! zip or tar entry is.
//!
//! The crate's own extractor is not used. What this module relies on, from sevenz-rust2 0.25
//! `src/reader.rs`: an entry's reader must be read to its end (its CRC is checked there, and
//! the next entry's bytes follow in the same stream); a callback's `Ok(false)` does not stop
//! the archive, so a refusal is carried out as an `Err`; encrypted content needs a password
//! (`Error::PasswordRequired`, or an unsupported AES method with the `aes256` feature off, as
//! here). Links have no API: 7-Zip stores a Windows link or junction with
//! `FILE_ATTRIBUTE_REPARSE_POINT`, and p7zip a Unix one with its mode in the attributes' high
//! 16 bits (flag 0x8000); both are refused, as are anti-items (deletions in an update).

use std::fs::File;
use std::io::{self, BufReader, Read};

use sevenz_rust2::{Archive, ArchiveEntry, ArchiveReader, Error, Password};

use super::tree::Tree;
use super::{Refusal, S_IFDIR, S_IFMT, S_IFREG, UnpackError};

/// `FILE_ATTRIBUTE_REPARSE_POINT`.
const REPARSE_POINT: u32 = 0x400;
/// p7zip's flag: the high 16 bits of the attributes are a Unix mode.
const UNIX_EXTENSION: u32 = 0x8000;
/// What a decoder may ask for its dictionary: 7-Zip's largest preset uses 1.5 GiB at most
/// for LZMA2 ("ultra" with a 1536 MiB dictionary); a header asking more is refused.
const MEMORY_LIMIT_KB: usize = 1536 * 1024;

pub(super) fn unpack(file: File, tree: &mut Tree) -> Result<(), UnpackError> {
    let mut reader = ArchiveReader::new_with_memory_limit(
        BufReader::new(file),
        Password::empty(),
        MEMORY_LIMIT_KB,
    )
    .map_err(|e| read_error(tree, e))?;
    check_declared(reader.archive(), tree)?;
    let mut refused: Option<UnpackError> = None;
    let result = reader.for_each_entries(|entry, data| match one_entry(tree, entry, data) {
        Ok(()) => Ok(true),
        Err(e) => {
            refused = Some(e);
            Err(Error::Other("refused".into()))
        }
    });
    if let Some(e) = refused {
        return Err(e);
    }
    result.map_err(|e| read_error(tree, e))
}

/// The entry count and the sizes the header declares, before anything is decompressed.
fn check_declared(archive: &Archive, tree: &Tree) -> Result<(), UnpackError> {
    if archive.files.len() as u64 > tree.limits.max_entries {
        return Err(tree.too_many_entries());
    }
    let mut declared = 0u64;
    for entry in &archive.files {
        declared = declared.saturating_add(entry.size());
        if declared > tree.limits.max_bytes {
            return Err(UnpackError::TooLarge {
                archive: tree.archive.to_path_buf(),
                entry: entry.name().to_string(),
                limit: tree.limits.max_bytes,
            });
        }
    }
    Ok(())
}

fn one_entry(
    tree: &mut Tree,
    entry: &ArchiveEntry,
    data: &mut dyn Read,
) -> Result<(), UnpackError> {
    tree.count_entry()?;
    let name = entry.name().to_string();
    if entry.is_anti_item() {
        let kind = "7z anti-item (a deletion in an update)".to_string();
        return Err(tree.refuse(&name, Refusal::NotIn7z { kind }));
    }
    let attributes = if entry.has_windows_attributes {
        entry.windows_attributes()
    } else {
        0
    };
    let unix_mode = (attributes & UNIX_EXTENSION != 0).then_some(attributes >> 16);
    let unix_type = unix_mode.map_or(0, |m| m & S_IFMT);
    if attributes & REPARSE_POINT != 0
        || (unix_type != 0 && unix_type != S_IFREG && unix_type != S_IFDIR)
    {
        let kind = match unix_type {
            _ if attributes & REPARSE_POINT != 0 => "link (a Windows link or junction)".to_string(),
            super::S_IFLNK => "link (a Unix symbolic link)".to_string(),
            0o020_000 => "character device".to_string(),
            0o060_000 => "block device".to_string(),
            0o010_000 => "FIFO".to_string(),
            0o140_000 => "socket".to_string(),
            other => format!("7z entry of unix type {other:o}"),
        };
        return Err(tree.refuse(&name, Refusal::NotIn7z { kind }));
    }
    if entry.is_directory() || unix_type == S_IFDIR {
        if let Some(rel) = tree.locate(&name, true)? {
            tree.add_dir(&name, &rel, unix_mode.unwrap_or(0o755))?;
        }
    } else if let Some(rel) = tree.locate(&name, false)? {
        tree.add_file(&name, &rel, unix_mode.unwrap_or(0o644), data)?;
    }
    // What was not taken (outside the subdir) is read anyway: the next entry follows it.
    io::copy(data, &mut io::sink()).map_err(|e| tree.read_error(e))?;
    Ok(())
}

/// An archive error with what it means for the user: an encrypted archive says so.
fn read_error(tree: &Tree, error: Error) -> UnpackError {
    let text = match &error {
        Error::PasswordRequired | Error::MaybeBadPassword(_) => {
            "it is encrypted (password-protected): only unencrypted archives are unpacked"
                .to_string()
        }
        Error::UnsupportedCompressionMethod(method)
            if method.to_ascii_uppercase().contains("AES") =>
        {
            format!("it is encrypted ({method}): only unencrypted archives are unpacked")
        }
        other => other.to_string(),
    };
    tree.read_error(io::Error::other(text))
}

/// Every entry name, from the header alone (for `longest_member`).
pub(super) fn names(file: File) -> io::Result<Vec<String>> {
    let archive = Archive::read(&mut BufReader::new(file), &Password::empty())
        .map_err(|e| io::Error::other(e.to_string()))?;
    Ok(archive.files.iter().map(|e| e.name().to_string()).collect())
}
