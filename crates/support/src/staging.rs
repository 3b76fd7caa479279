//! Staging folders and the leftovers of killed runs, one piece of code for every command
//! that stages (unpack, bundle, release, the speech assets, the Windows Python).
//!
//! A staging folder `<prefix><pid>-XXXXXX` is made next to its destination (so that the final
//! rename stays on one file system) with a marker file inside naming the folder, a random
//! token and the folder's path. An old folder moved aside by `owned_output::replace`
//! (`.<name>.old-<pid>`) gets the same marker once it is ours to delete. The next run of the same command removes such a
//! folder only when its process is gone **and** its marker is there and names it: a folder
//! that merely looks like ours (a user's `.bundle-notes`, a `.out.old-1` someone made) is never
//! touched. A folder of that shape holding nothing but a marker not yet written whole (a run
//! killed while marking it) is removed too: nothing is lost with it. Every removal is said on
//! stderr. A marker is read only as a small regular file (`regular_file::read_small`): a link,
//! FIFO or device at its name proves nothing and is never waited on. A marked folder is
//! deleted marker last ([`remove`]), so that a run killed while deleting it leaves it marked.

use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use crate::regular_file::{self, Mode};
use crate::report::Reporter;

/// The marker file a staging or aside folder of this tool holds.
pub const MARKER: &str = ".ct2v-made-by-xtask";

/// The most bytes of a marker read: its line is a name, a token and a path.
const MARKER_CAP: u64 = 64 << 10;

/// A staging folder of this run, deleted when dropped (marker last, [`remove`]) unless kept.
#[derive(Debug)]
pub struct Staging {
    path: Option<PathBuf>,
}

impl Staging {
    pub fn path(&self) -> &Path {
        self.path.as_deref().expect("held until dropped or kept")
    }

    /// Keeps the folder (moved into place, or kept on purpose): it is not deleted.
    pub fn keep(mut self) -> PathBuf {
        self.path.take().expect("held until dropped or kept")
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if let Some(path) = self.path.take() {
            let _ = remove(&path);
        }
    }
}

/// A new staging folder `<prefix><pid>-XXXXXX` in `parent`, after removing the stale ones
/// this tool made there.
pub fn create(parent: &Path, prefix: &str, reporter: &Reporter) -> io::Result<Staging> {
    sweep_and_say(parent, prefix, reporter);
    let dir = tempfile::Builder::new()
        .prefix(&format!("{prefix}{}-", std::process::id()))
        .tempdir_in(parent)?;
    mark(dir.path())?;
    Ok(Staging {
        path: Some(dir.keep()),
    })
}

/// Writes the marker into `dir` (a folder this process made, or moved aside to delete): its
/// name, a random token and where it is, so that a copy or a move of it elsewhere is not ours.
pub fn mark(dir: &Path) -> io::Result<()> {
    let name = dir.file_name().unwrap_or_default().to_string_lossy();
    write_marker(dir, &name, || dunce::canonicalize(dir)).map(drop)
}

/// [`mark`] for the name `dir` is about to be renamed to (`to`, beside it), so that a run
/// killed right after the rename leaves a folder the next run knows as its own. Until then the
/// marker names another folder, and so proves nothing about `dir`.
/// Returns the marker's bytes, which the folder moved to `to` must then hold.
pub(crate) fn mark_as(dir: &Path, to: &Path) -> io::Result<String> {
    let name = to.file_name().unwrap_or_default().to_string_lossy();
    let parent = match to.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    write_marker(dir, &name, || {
        Ok(dunce::canonicalize(parent)?.join(name.as_ref()))
    })
}

/// Writes the marker of `dir` as the folder `name` at `at`. The file is made first and its
/// line written at once, so that a run killed while marking leaves an unfinished marker (see
/// [`unfinished`]) rather than an empty folder, which could be anybody's.
/// The marker is made new: anything already at its name (a link, a FIFO, a user's file) is an
/// error, never written through.
fn write_marker(
    dir: &Path,
    name: &str,
    at: impl FnOnce() -> io::Result<PathBuf>,
) -> io::Result<String> {
    let mut file = regular_file::open(&dir.join(MARKER), Mode::CreateNew)?;
    let line = format!(
        "ct2-variants xtask made {name} ({}) at {}\n",
        token(),
        at()?.display()
    );
    file.write_all(line.as_bytes())?;
    Ok(line)
}

/// Takes the marker out of a staging folder that is about to become the destination itself.
pub fn unmark(dir: &Path) -> io::Result<()> {
    match fs::remove_file(dir.join(MARKER)) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Removes the stale folders of `prefix` in `parent` and says each.
pub fn sweep_and_say(parent: &Path, prefix: &str, reporter: &Reporter) {
    for removed in sweep(parent, prefix) {
        reporter.say(format_args!(
            "removed {}, left by an interrupted run of this tool",
            crate::paths::shown(&removed)
        ));
    }
}

/// Removes the folders `<prefix><pid>-…` (or `<prefix><pid>`) in `parent` whose process is
/// gone and whose marker names them, or that hold nothing but an unfinished marker; returns
/// them.
pub(crate) fn sweep(parent: &Path, prefix: &str) -> Vec<PathBuf> {
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
        if is_dir
            && !alive(pid)
            && (marked(&entry.path()) || unfinished(&entry.path()))
            && remove(&entry.path()).is_ok()
        {
            removed.push(entry.path());
        }
    }
    removed
}

/// Whether `dir` holds this tool's marker naming `dir` itself (a copy or a renamed folder
/// does not count): the proof that a folder found where this tool works is its own.
pub fn marked(dir: &Path) -> bool {
    let name = dir.file_name().unwrap_or_default().to_string_lossy();
    let Ok(at) = dunce::canonicalize(dir) else {
        return false;
    };
    regular_file::read_small_to_string(&dir.join(MARKER), MARKER_CAP).is_ok_and(|text| {
        let line = text.lines().next().unwrap_or_default();
        line.starts_with(&format!("ct2-variants xtask made {name} ("))
            && line.ends_with(&format!(") at {}", at.display()))
    })
}

/// Whether `dir` holds nothing but a marker file whose line is not whole: a staging folder
/// whose run was killed while it marked it.
fn unfinished(dir: &Path) -> bool {
    let Ok(entries) = fs::read_dir(dir) else {
        return false;
    };
    let names: Vec<_> = entries.flatten().map(|e| e.file_name()).collect();
    let marker = dir.join(MARKER);
    names.len() == 1
        && names[0] == MARKER
        && regular_file::read_small(&marker, MARKER_CAP).is_ok_and(|text| !text.ends_with(b"\n"))
}

/// Whether the marker in `dir` was left by a run of this tool killed while it moved `dir`
/// aside, between marking it with its aside name (`owned_output::replace`, [`mark_as`]) and
/// the rename: it names `.<name>.old-<pid>` beside `dir` for a process that is gone, or it is
/// that line not yet written whole (empty, or a start of it without its line end).
pub(crate) fn left_by_a_killed_move(dir: &Path) -> bool {
    let (Some(name), Some(parent)) = (dir.file_name(), dir.parent()) else {
        return false;
    };
    let prefix = format!(".{}.old-", name.to_string_lossy());
    let head = format!("ct2-variants xtask made {prefix}");
    let Ok(text) = regular_file::read_small_to_string(&dir.join(MARKER), MARKER_CAP) else {
        return false;
    };
    let Some(line) = text.strip_suffix('\n') else {
        return head.starts_with(text.as_str()) || text.starts_with(&head);
    };
    let Some((aside, _)) = line
        .strip_prefix("ct2-variants xtask made ")
        .and_then(|rest| rest.split_once(" ("))
    else {
        return false;
    };
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    owner(aside, &prefix).is_some_and(|pid| !alive(pid))
        && dunce::canonicalize(parent)
            .is_ok_and(|at| line.ends_with(&format!(") at {}", at.join(aside).display())))
}

/// Deletes the marked folder `dir`, its marker last: a run killed on the way leaves a folder
/// still marked, which the next sweep removes. Links below it are removed, never followed.
pub fn remove(dir: &Path) -> io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_name() == MARKER {
            continue;
        }
        if entry.file_type()?.is_dir() {
            fs::remove_dir_all(entry.path())?;
        } else {
            fs::remove_file(entry.path())?;
        }
    }
    unmark(dir)?;
    fs::remove_dir(dir)
}

/// 128 random bits from the operating system, as hex (a name `tempfile` would not reuse).
pub fn token() -> String {
    let file = tempfile::Builder::new().prefix("").tempfile();
    let seed = file
        .as_ref()
        .map(|f| f.path().to_string_lossy().into_owned())
        .unwrap_or_default();
    let time = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let digest =
        <sha2::Sha256 as sha2::Digest>::digest(format!("{seed}{time}{}", std::process::id()));
    super::digest::hex(&digest[..16])
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
    fn only_marked_folders_of_a_dead_owner_are_swept() {
        assert_eq!(owner(".bundle-123-abC9", ".bundle-"), Some(123));
        assert_eq!(owner(".bundle-notes", ".bundle-"), None);
        assert_eq!(owner(".bundle--x", ".bundle-"), None);
        let dir = tempfile::tempdir().unwrap();
        let dead = dir.path().join(".release-999999999-x1");
        let live = dir
            .path()
            .join(format!(".release-{}-x2", std::process::id()));
        let user = dir.path().join(".release-notes");
        // The right shape and a dead owner, but no marker: a user's folder.
        let lookalike = dir.path().join(".release-999999998-x3");
        // A marker that names another folder (a copy of ours): not this one's.
        let copied = dir.path().join(".release-999999997-x4");
        for d in [&dead, &live, &user, &lookalike, &copied] {
            fs::create_dir_all(d.join("sub")).unwrap();
        }
        mark(&dead).unwrap();
        mark(&live).unwrap();
        fs::copy(dead.join(MARKER), copied.join(MARKER)).unwrap();
        assert_eq!(sweep(dir.path(), ".release-"), vec![dead.clone()]);
        assert!(!dead.exists() && live.exists() && user.exists());
        assert!(lookalike.exists() && copied.exists());
    }

    /// A run killed while it marked its staging folder leaves nothing in it but a marker not
    /// yet written whole: removed, as nothing is lost with it. An empty folder of that shape,
    /// or one with anything else in it, is kept.
    #[test]
    fn a_staging_folder_killed_while_marked_is_swept() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join(".bundle-999999999-a1");
        let half = dir.path().join(".bundle-999999998-a2");
        let other = dir.path().join(".bundle-999999997-a3");
        for d in [&empty, &half, &other] {
            fs::create_dir_all(d).unwrap();
        }
        fs::write(half.join(MARKER), "ct2-variants xtask ma").unwrap();
        fs::write(other.join(MARKER), "").unwrap();
        fs::write(other.join("mine.txt"), "a user's file").unwrap();
        assert_eq!(sweep(dir.path(), ".bundle-"), vec![half]);
        assert!(empty.is_dir() && other.join("mine.txt").is_file());
    }

    #[test]
    fn a_staging_folder_is_marked_and_tokens_differ() {
        let dir = tempfile::tempdir().unwrap();
        let a = create(dir.path(), ".x-", &Reporter::captured()).unwrap();
        let b = create(dir.path(), ".x-", &Reporter::captured()).unwrap();
        assert!(marked(a.path()) && marked(b.path()));
        assert_ne!(
            fs::read_to_string(a.path().join(MARKER)).unwrap(),
            fs::read_to_string(b.path().join(MARKER)).unwrap()
        );
    }

    /// A folder of the same name elsewhere with a copy of the marker (a copied or moved
    /// prefix, `…/prefix` in another check's folder) is not ours.
    #[test]
    fn a_copy_of_the_same_name_elsewhere_is_not_ours() {
        let dir = tempfile::tempdir().unwrap();
        let ours = dir.path().join("one/prefix");
        let copy = dir.path().join("two/prefix");
        fs::create_dir_all(&ours).unwrap();
        fs::create_dir_all(&copy).unwrap();
        mark(&ours).unwrap();
        fs::copy(ours.join(MARKER), copy.join(MARKER)).unwrap();
        assert!(marked(&ours));
        assert!(!marked(&copy));
    }
}
