//! Staging folders (`.bundle-<pid>-XXXXXX`, `.release-<pid>-XXXXXX`): made next to their
//! destination so that the final rename stays on one file system, named with the id of the
//! process that made them, and removed by the next run of the same command once that process
//! is gone (a run killed with -9 cannot clean up after itself).
//!
//! Only names of exactly that shape are touched: a user's `.bundle-notes` is not ours.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

/// A new staging folder `<prefix><pid>-XXXXXX` in `parent`, after removing the stale ones.
pub fn create(parent: &Path, prefix: &str) -> io::Result<TempDir> {
    for removed in sweep(parent, prefix) {
        eprintln!("removed {}, left by an interrupted run", removed.display());
    }
    tempfile::Builder::new()
        .prefix(&format!("{prefix}{}-", std::process::id()))
        .tempdir_in(parent)
}

/// Removes the folders `<prefix><pid>-…` in `parent` whose process is gone; returns them.
pub fn sweep(parent: &Path, prefix: &str) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(parent) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| owner(n, prefix)) else {
            continue;
        };
        // A symlink with our name is not a folder we made: never follow it.
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir && !alive(pid) && fs::remove_dir_all(entry.path()).is_ok() {
            removed.push(entry.path());
        }
    }
    removed
}

/// The process id in a name `<prefix><pid>-<suffix>` (or `<prefix><pid>`), if it has that shape.
pub fn owner(name: &str, prefix: &str) -> Option<u32> {
    let rest = name.strip_prefix(prefix)?;
    let (digits, suffix) = rest.split_once('-').unwrap_or((rest, ""));
    let valid_suffix = suffix
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'.');
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && valid_suffix)
        .then(|| digits.parse().ok())
        .flatten()
}

/// Whether process `pid` still runs. Linux reads /proc; Windows asks the process itself; other
/// hosts keep every staging folder (not swept there).
fn alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    if cfg!(target_os = "linux") {
        return Path::new("/proc").join(pid.to_string()).exists();
    }
    #[cfg(windows)]
    return windows_alive(pid);
    #[allow(unreachable_code)]
    true
}

/// OpenProcess fails with ERROR_INVALID_PARAMETER for a pid no process has; a process that
/// has exited but is still held open by someone reports an exit code other than STILL_ACTIVE.
/// Anything else (access denied: another user's process) counts as alive.
#[cfg(windows)]
fn windows_alive(pid: u32) -> bool {
    use windows_sys::Win32::Foundation::{
        CloseHandle, ERROR_INVALID_PARAMETER, GetLastError, STILL_ACTIVE,
    };
    use windows_sys::Win32::System::Threading::{
        GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
    };
    // SAFETY: plain Win32 calls on a handle this function owns and closes.
    unsafe {
        let handle = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid);
        if handle.is_null() {
            return GetLastError() != ERROR_INVALID_PARAMETER;
        }
        let mut code = 0u32;
        let ok = GetExitCodeProcess(handle, &mut code);
        CloseHandle(handle);
        ok == 0 || code == STILL_ACTIVE as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_our_names_with_a_dead_owner_are_swept() {
        assert_eq!(owner(".bundle-123-abC9", ".bundle-"), Some(123));
        assert_eq!(owner(".bundle-notes", ".bundle-"), None);
        assert_eq!(owner(".bundle--x", ".bundle-"), None);
        let dir = tempfile::tempdir().unwrap();
        let dead = dir.path().join(".release-999999999-x1");
        let live = dir
            .path()
            .join(format!(".release-{}-x2", std::process::id()));
        let user = dir.path().join(".release-notes");
        for d in [&dead, &live, &user] {
            fs::create_dir_all(d.join("sub")).unwrap();
        }
        assert_eq!(sweep(dir.path(), ".release-"), vec![dead.clone()]);
        assert!(!dead.exists() && live.exists() && user.exists());
    }
}
