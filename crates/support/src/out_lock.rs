//! One run at a time per output: a folder written whole (an unpacked input, a bundle's
//! `--out`, a release, a Pages site) is written under an advisory lock on `.<name>.lock`
//! beside it. A second run refuses before any work, naming the process that holds the lock;
//! the operating system drops a lock with its process, so a run killed with `kill -9` never
//! blocks the next one, which removes the lock file it finds when done.
//!
//! The lock file is only ever this tool's: a regular file, empty or holding a holder's line
//! (`pid N: command`). Anything else at its name (a user's file, a FIFO, a folder, a link, a
//! socket) is bad input naming the lock file, and is neither written, truncated nor removed.
//! The folders made for it are removed with it when nothing else was put in them (a run that
//! fails leaves no folder behind).

use std::fs::{self, File, TryLockError};
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};

use crate::diagnostic::InputError;
use crate::regular_file::{self, Mode};

/// Tries to take a lock whose file another run removed between our open and our lock.
const ATTEMPTS: usize = 10;
/// The most of the holder's command line a refusal shows.
const SHOWN_COMMAND: usize = 300;
/// The most bytes of a lock file read: a holder's line, with a long command line.
const LOCK_CAP: u64 = 64 << 10;

/// Held while this run writes one output. Dropping it removes the lock file and releases
/// the lock.
#[derive(Debug)]
pub struct OutLock {
    /// `None` where the file system cannot lock (some network shares): the run goes ahead
    /// unlocked, as downloads do.
    file: Option<File>,
    path: PathBuf,
    /// The folders made for the lock file, deepest first.
    made: Vec<PathBuf>,
}

/// `.<name>.lock` beside `dest`.
pub(crate) fn lock_path(dest: &Path) -> io::Result<PathBuf> {
    let name = dest.file_name().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, "it has no final name to lock")
    })?;
    Ok(dest.with_file_name(format!(".{}.lock", name.to_string_lossy())))
}

/// The lock of `dest` for this run; an `io::Error` of kind `ResourceBusy` that names the
/// process holding it when another run writes `dest`; an [`InputError`] naming the lock file
/// when something not this tool's is at its name.
pub fn hold(dest: &Path) -> anyhow::Result<OutLock> {
    let path = lock_path(dest)?;
    let made = match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(parent) => make_folders(parent)?,
        None => Vec::new(),
    };
    let unlocked = |made| OutLock {
        file: None,
        path: path.clone(),
        made,
    };
    // Whatever stops the run from here removes the folders made (`OutLock`'s drop).
    let mut guard = unlocked(made);
    for _ in 0..ATTEMPTS {
        let mut file = regular_file::open(&path, Mode::Lock).map_err(|e| foreign(&path, &e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => return Err(busy(&mut file, &path).into()),
            Err(TryLockError::Error(_)) => return Ok(unlocked(std::mem::take(&mut guard.made))),
        }
        if still_named(&file, &path) {
            if !holds_a_holders_line(&file) {
                let e = io::Error::other("it holds what this tool never writes there");
                return Err(foreign(&path, &e).into());
            }
            // Who holds it, for the refusal another run prints (over what a killed run left);
            // only a courtesy, so a disk too full for these bytes does not stop the run.
            let _ = file
                .set_len(0)
                .and_then(|()| file.rewind())
                .and_then(|()| writeln!(file, "{}", holder()));
            return Ok(OutLock {
                file: Some(file),
                path: path.clone(),
                made: std::mem::take(&mut guard.made),
            });
        }
    }
    Err(io::Error::new(
        io::ErrorKind::ResourceBusy,
        format!(
            "its lock {} keeps being replaced by other runs",
            path.display()
        ),
    )
    .into())
}

/// Makes `dir` and the folders above it that are missing; returns those made, deepest first.
fn make_folders(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let missing: Vec<PathBuf> = dir
        .ancestors()
        .filter(|a| !a.as_os_str().is_empty())
        .take_while(|a| fs::symlink_metadata(a).is_err())
        .map(Path::to_path_buf)
        .collect();
    fs::create_dir_all(dir)?;
    Ok(missing)
}

/// Whether the locked `file` is empty or holds a holder's line: a lock file of this tool (a
/// killed run's), not a user's file that happens to have its name.
fn holds_a_holders_line(file: &File) -> bool {
    let mut text = Vec::new();
    if file.take(LOCK_CAP + 1).read_to_end(&mut text).is_err() || text.len() as u64 > LOCK_CAP {
        return false;
    }
    let Some(rest) = text.strip_prefix(b"pid ") else {
        return text.is_empty();
    };
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    digits > 0 && rest[digits..].starts_with(b": ") && text.ends_with(b"\n")
}

/// The refusal of what is at the lock file's name: bad input naming the lock file.
fn foreign(path: &Path, e: &io::Error) -> InputError {
    InputError::new(format!(
        "{} is not a lock file of this tool ({e}); this tool locks its output there",
        crate::paths::shown(path)
    ))
    .note("it was not changed: move it away, or write the output somewhere else")
}

impl Drop for OutLock {
    fn drop(&mut self) {
        if let Some(file) = self.file.take() {
            self.remove(file);
        }
        // Only folders still empty go: the output, or anything else put there, keeps them.
        for dir in &self.made {
            if fs::remove_dir(dir).is_err() {
                break;
            }
        }
    }
}

impl OutLock {
    fn remove(&self, file: File) {
        // Unix removes the file while it is still locked, so no run locks a file that is no
        // longer there (one that opened it before sees it gone, `still_named`, and opens the
        // new one). Windows cannot remove a file another run has open (it is opened without
        // FILE_SHARE_DELETE): closed first, it is removed only where no run has it open.
        if cfg!(unix) {
            if still_named(&file, &self.path) {
                let _ = fs::remove_file(&self.path);
            }
            drop(file);
        } else {
            drop(file);
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Whether `path` still names the file this run locked (the holder before may have removed
/// it between our open and our lock).
#[cfg(unix)]
fn still_named(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), fs::symlink_metadata(path)) {
        (Ok(ours), Ok(named)) => ours.dev() == named.dev() && ours.ino() == named.ino(),
        _ => false,
    }
}

/// On Windows a file open elsewhere is never removed (see [`open`]): the one locked is the
/// one named.
#[cfg(not(unix))]
fn still_named(_: &File, _: &Path) -> bool {
    true
}

/// This process as a refusal names it: its id and command line.
fn holder() -> String {
    let command: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    format!("pid {}: {}", std::process::id(), command.join(" "))
}

/// The refusal: the holder's line from the lock file, or (Windows locks the file's bytes
/// against reading too) the lock file itself.
fn busy(file: &mut File, path: &Path) -> io::Error {
    let mut text = String::new();
    let _ = (&*file).take(LOCK_CAP).read_to_string(&mut text);
    let line = text.lines().next().unwrap_or_default();
    let who = if line.is_empty() {
        format!("it holds the lock {}", path.display())
    } else {
        let shown: String = line.chars().take(SHOWN_COMMAND).collect();
        let cut = if shown.len() < line.len() { "…" } else { "" };
        format!("{}{cut}", crate::diagnostic::printable(&shown))
    };
    io::Error::new(
        io::ErrorKind::ResourceBusy,
        format!(
            "another run of xtask is writing it ({who}); wait for that run to end, or write \
             somewhere else"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_naming_the_first_and_the_lock_goes_with_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let first = hold(&out).unwrap();
        let lock = dir.path().join(".out.lock");
        assert!(lock.is_file());
        let refused = hold(&out).unwrap_err();
        let io = refused.downcast_ref::<io::Error>().expect("an io::Error");
        assert_eq!(io.kind(), io::ErrorKind::ResourceBusy);
        let text = refused.to_string();
        assert!(
            text.contains("another run of xtask is writing it")
                && text.contains(&format!("pid {}:", std::process::id())),
            "{text}"
        );
        drop(first);
        assert!(!lock.exists(), "removed with its holder");
        // A lock file a killed run left (nobody holds it) blocks nothing.
        fs::write(&lock, "pid 999999999: xtask bundle\n").unwrap();
        let next = hold(&out).unwrap();
        drop(next);
        assert!(!lock.exists());
    }

    /// A user's file at the lock file's name is neither truncated nor deleted, and a folder,
    /// a link or a FIFO there is named: all bad input, the lock file named, nothing changed.
    #[test]
    fn anything_but_a_lock_file_at_its_name_is_refused_naming_it_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let lock = dir.path().join(".out.lock");
        let users = dir.path().join("users.txt");
        fs::write(&users, "mine\n").unwrap();
        let forms: &[&str] = if cfg!(unix) {
            &["file", "folder", "link", "FIFO"]
        } else {
            &["file", "folder"]
        };
        let plant = |form: &str| match form {
            "file" => fs::write(&lock, "my notes\n").unwrap(),
            "folder" => fs::create_dir(&lock).unwrap(),
            #[cfg(unix)]
            "link" => std::os::unix::fs::symlink(&users, &lock).unwrap(),
            _ => {
                let status = std::process::Command::new("mkfifo")
                    .arg(&lock)
                    .status()
                    .unwrap();
                assert!(status.success());
            }
        };
        for &form in forms {
            plant(form);
            let e = hold(&out).unwrap_err();
            let input = e.downcast_ref::<InputError>().expect("bad input");
            assert!(
                input
                    .message
                    .contains(".out.lock is not a lock file of this tool"),
                "{form}: {input}"
            );
            let meta = fs::symlink_metadata(&lock).expect("kept");
            if form == "file" {
                assert_eq!(fs::read_to_string(&lock).unwrap(), "my notes\n");
            }
            assert_eq!(fs::read_to_string(&users).unwrap(), "mine\n");
            if meta.is_dir() {
                fs::remove_dir(&lock).unwrap();
            } else {
                fs::remove_file(&lock).unwrap();
            }
        }
    }

    /// The folders made for a lock file go with it, unless something else was put there.
    #[test]
    fn the_folders_made_for_the_lock_go_with_it_when_empty() {
        let dir = tempfile::tempdir().unwrap();
        drop(hold(&dir.path().join("a/b/out")).unwrap());
        assert!(!dir.path().join("a").exists());
        let kept = hold(&dir.path().join("a/b/out")).unwrap();
        fs::create_dir_all(dir.path().join("a/b/out")).unwrap();
        drop(kept);
        assert!(dir.path().join("a/b/out").is_dir());
        assert!(!dir.path().join("a/b/.out.lock").exists());
    }
}
