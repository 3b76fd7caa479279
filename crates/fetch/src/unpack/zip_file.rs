//! `.zip` and wheels: sizes checked from the central directory first, then each entry into
//! the [`Tree`].

use std::fs::File;
use std::io::{BufReader, Read};

use zip::ZipArchive;

use super::tree::Tree;
use super::{Refusal, S_IFDIR, S_IFLNK, S_IFMT, S_IFREG, UnpackError, utf8};

pub(super) fn unpack(file: File, tree: &mut Tree) -> Result<(), UnpackError> {
    let mut archive =
        ZipArchive::new(BufReader::new(file)).map_err(|e| tree.read_error(e.into()))?;
    if archive.len() as u64 > tree.limits.max_entries {
        return Err(tree.too_many_entries());
    }
    // The sizes the central directory declares, checked before anything is written: entries
    // that share one compressed stream declare the sizes they would inflate to.
    let mut declared = 0u64;
    for index in 0..archive.len() {
        let entry = archive
            .by_index_raw(index)
            .map_err(|e| tree.read_error(e.into()))?;
        declared = declared.saturating_add(entry.size());
        if declared > tree.limits.max_bytes {
            return Err(UnpackError::TooLarge {
                archive: tree.archive.to_path_buf(),
                entry: String::from_utf8_lossy(entry.name_raw()).into_owned(),
                limit: tree.limits.max_bytes,
            });
        }
    }
    for index in 0..archive.len() {
        let mut entry = archive
            .by_index(index)
            .map_err(|e| tree.read_error(e.into()))?;
        tree.count_entry()?;
        let name = match entry.name() {
            Ok(name) => name.into_owned(),
            Err(_) => {
                let shown = String::from_utf8_lossy(entry.name_raw()).into_owned();
                return Err(tree.refuse(&shown, Refusal::NotUtf8));
            }
        };
        let mode = entry.unix_mode();
        let file_type = mode.map_or(0, |m| m & S_IFMT);
        if entry.is_dir() || file_type == S_IFDIR {
            if let Some(rel) = tree.locate(&name, true)? {
                tree.add_dir(&name, &rel, mode.unwrap_or(0o755))?;
            }
        } else if file_type == 0 || file_type == S_IFREG {
            if let Some(rel) = tree.locate(&name, false)? {
                tree.add_file(&name, &rel, mode.unwrap_or(0o644), &mut entry)?;
            }
        } else if file_type == S_IFLNK {
            if let Some(rel) = tree.locate(&name, false)? {
                // A zip symlink's data is its target; PATH_MAX bounds any real one.
                let mut target = Vec::new();
                (&mut entry)
                    .take(4097)
                    .read_to_end(&mut target)
                    .map_err(|e| tree.read_error(e))?;
                if target.len() > 4096 {
                    return Err(tree.refuse(&name, Refusal::LinkTargetTooLong));
                }
                let target = utf8(target, tree, Some(&name))?;
                tree.add_symlink(&name, &rel, &target)?;
            }
        } else {
            let kind = match file_type {
                0o020_000 => "character device".to_string(),
                0o060_000 => "block device".to_string(),
                0o010_000 => "FIFO".to_string(),
                0o140_000 => "socket".to_string(),
                other => format!("zip entry of unix type {other:o}"),
            };
            return Err(tree.refuse(&name, Refusal::Unsupported { kind }));
        }
    }
    Ok(())
}
