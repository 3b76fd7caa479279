//! The part file on disk: its lock, what may stand at its place, where a request resumes
//! from, and opening it without following links.

use std::fs::{self, File, TryLockError};
use std::io;
use std::path::Path;

use crate::cache;
use ct2v_support::regular_file;

use super::error::io_error;
use super::progress::ProgressSink;
use super::worker::{AttemptError, Failure, Target};

/// Removes whatever is at the part file's place and is not a regular file (a symlink
/// planted there would have the download written through it, wherever it points).
pub(super) fn clear_odd(report: &ProgressSink, path: &Path, name: &str) -> Result<(), Failure> {
    match fs::symlink_metadata(path) {
        Ok(meta) if !meta.is_file() => {
            report.line(&format!(
                "warning: {name}: {} is not a regular file (a symlink?); removed, not followed",
                path.display()
            ));
            let removed = if meta.is_dir() {
                fs::remove_dir_all(path)
            } else {
                fs::remove_file(path)
            };
            removed.map_err(|e| Failure::Fatal(io_error(name, "remove", path)(e)))
        }
        _ => Ok(()),
    }
}

/// An exclusive lock on `path`, so that two processes never write one part file. Where
/// the file system cannot lock, the download goes ahead unlocked.
pub(super) fn lock(
    report: &ProgressSink,
    path: &Path,
    name: &str,
) -> Result<Option<File>, Failure> {
    clear_odd(report, path, name)?;
    let file = regular_file::open(path, regular_file::Mode::Lock)
        .map_err(|e| Failure::Fatal(io_error(name, "open", path)(e)))?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(TryLockError::WouldBlock) => {
            report.line(&format!(
                "{name}: waiting for another process downloading it (lock {})",
                path.display()
            ));
            file.lock()
                .map_err(|e| Failure::Fatal(io_error(name, "lock", path)(e)))?;
            Ok(Some(file))
        }
        Err(TryLockError::Error(_)) => Ok(None),
    }
}

/// Where the request starts: the part file's length when resuming, else zero. A part longer
/// than the pinned size is emptied first.
pub(super) fn resume_offset(target: &Target) -> Result<u64, AttemptError> {
    if !target.resume {
        return Ok(0);
    }
    let offset = len(target.path);
    if target.size.is_some_and(|size| offset > size) {
        clear(target)?;
        return Ok(0);
    }
    Ok(offset)
}

/// The part file's sha256 and size, read from disk.
pub(super) fn digest(target: &Target) -> Result<(String, u64), AttemptError> {
    cache::sha256_file(target.path).map_err(target.io_fatal("hash"))
}

/// Empties the part file (creating it where it is missing).
pub(super) fn clear(target: &Target) -> Result<(), AttemptError> {
    regular_file::open(target.path, regular_file::Mode::Truncate)
        .map(drop)
        .map_err(target.io_fatal("truncate"))
}

/// Removes the part file, so that the next run starts from the beginning.
pub(super) fn remove(target: &Target) -> Result<(), AttemptError> {
    match fs::remove_file(target.path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(target.io_fatal("remove")(e)),
        _ => Ok(()),
    }
}

pub(super) fn len(path: &Path) -> u64 {
    fs::metadata(path).map_or(0, |m| m.len())
}
