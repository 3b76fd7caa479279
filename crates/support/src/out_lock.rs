//! One run at a time per output: a folder written whole (an unpacked input, a bundle's
//! `--out`, a release, a Pages site) is written under an advisory lock on `.<name>.lock`
//! beside it. A second run refuses before any work, naming the process that holds the lock;
//! the operating system drops a lock with its process, so a run killed with `kill -9` never
//! blocks the next one, which removes the lock file it finds when done.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// Tries to take a lock whose file another run removed between our open and our lock.
const ATTEMPTS: usize = 10;
/// The most of the holder's command line a refusal shows.
const SHOWN_COMMAND: usize = 300;

/// Held while this run writes one output. Dropping it removes the lock file and releases
/// the lock.
#[derive(Debug)]
pub struct OutLock {
    /// `None` where the file system cannot lock (some network shares): the run goes ahead
    /// unlocked, as downloads do.
    file: Option<File>,
    path: PathBuf,
}

/// `.<name>.lock` beside `dest`.
pub(crate) fn lock_path(dest: &Path) -> io::Result<PathBuf> {
    let name = dest.file_name().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, "it has no final name to lock")
    })?;
    Ok(dest.with_file_name(format!(".{}.lock", name.to_string_lossy())))
}

/// The lock of `dest` for this run; an error of kind `ResourceBusy` that names the process
/// holding it when another run writes `dest`.
pub fn hold(dest: &Path) -> io::Result<OutLock> {
    let path = lock_path(dest)?;
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent)?;
    }
    for _ in 0..ATTEMPTS {
        let mut file = open(&path)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => return Err(busy(&mut file, &path)),
            Err(TryLockError::Error(_)) => return Ok(OutLock { file: None, path }),
        }
        if still_named(&file, &path) {
            // Who holds it, for the refusal another run prints (over what a killed run left);
            // only a courtesy, so a disk too full for these bytes does not stop the run.
            let _ = file
                .set_len(0)
                .and_then(|()| writeln!(file, "{}", holder()));
            return Ok(OutLock {
                file: Some(file),
                path,
            });
        }
    }
    Err(io::Error::new(
        io::ErrorKind::ResourceBusy,
        format!(
            "its lock {} keeps being replaced by other runs",
            path.display()
        ),
    ))
}

impl Drop for OutLock {
    fn drop(&mut self) {
        let Some(file) = self.file.take() else {
            return;
        };
        // Unix removes the file while it is still locked, so no run locks a file that is no
        // longer there (one that opened it before sees it gone, `still_named`, and opens the
        // new one). Windows cannot remove a file another run has open (it is opened without
        // FILE_SHARE_DELETE): closed first, it is removed only where no run has it open.
        if cfg!(unix) {
            let _ = fs::remove_file(&self.path);
            drop(file);
        } else {
            drop(file);
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Opens (or creates) the lock file, never through a link planted at its name.
fn open(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW);
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        // FILE_SHARE_READ | FILE_SHARE_WRITE: others may open it to try the lock, no one may
        // delete it while it is open.
        options.share_mode(1 | 2);
    }
    options.open(path)
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
    let _ = file.read_to_string(&mut text);
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
        assert_eq!(refused.kind(), io::ErrorKind::ResourceBusy);
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
}
