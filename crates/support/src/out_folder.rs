//! The folder flags of commands that write a folder whole (`--out`) or read one (`--from`,
//! `--release`): checked before any work, so that a file, a Windows device name or a release
//! already there is bad input (exit 2) that names the flag and the path, rather than an OS
//! error after the build. A folder that must be empty is written beside it and renamed into
//! place ([`put_in_place`]), so that what fills it after the check is never replaced.

use std::fs;
use std::io;
use std::path::Path;

use anyhow::Context;

use crate::diagnostic::InputError;
use crate::digest::sha256_file;
use crate::paths::shown;
use crate::report::Reporter;
use crate::safe_path;

/// What may already be at an output folder's path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    /// Nothing, or an empty folder (a release: never replaced; see [`put_in_place`]).
    MustBeEmpty,
    /// [`Existing::MustBeEmpty`], or a folder that may hold byte for byte what this run
    /// writes (a site: a rerun after a run killed once its site was in place). Never replaced:
    /// [`put_in_place`] compares it with the finished output.
    EmptyOrSame,
    /// A folder, replaced as a whole once the new one is complete, when it is this tool's
    /// output unchanged (a bundle; see `owned_output`).
    Replaced,
}

/// `path`, given as `flag`, can become the folder written: its name is not a device, nothing
/// but a folder is there, and the nearest existing folder above it is a folder.
pub fn check_out(flag: &str, path: &Path, existing: Existing) -> Result<(), InputError> {
    let shown = path.display();
    if let Some(name) = path.file_name().and_then(|n| n.to_str())
        && safe_path::is_device_name(name)
    {
        return Err(InputError::new(format!(
            "{flag} {shown}: `{name}` is a Windows device name, not a folder"
        ))
        .note(format!("give a folder to create, e.g. {flag} target/out")));
    }
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => {
            let empty = fs::read_dir(path)
                .map_err(|e| InputError::new(format!("{flag} {shown}: cannot list it: {e}")))?;
            if existing == Existing::MustBeEmpty && empty.into_iter().next().is_some() {
                return Err(InputError::new(format!(
                    "{flag} {shown} is not empty; this is written into a new folder and never \
                     replaces one"
                ))
                .note("remove it, or give another folder"));
            }
            Ok(())
        }
        Ok(_) => Err(InputError::new(format!(
            "{flag} {shown} is a file (or a link); it names the folder to write"
        ))
        .note("remove it, or give another path")),
        Err(_) => check_parent(flag, path),
    }
}

/// A new staging folder beside `dest` (on its file system, so that [`put_in_place`] is a
/// rename), its parent made first.
pub fn staging_beside(
    dest: &Path,
    prefix: &str,
    reporter: &Reporter,
) -> anyhow::Result<crate::staging::Staging> {
    let parent = match dest.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
    crate::staging::create(parent, prefix, reporter)
        .with_context(|| format!("cannot create a staging folder in {}", parent.display()))
}

/// Renames the finished `staged` folder to `dest`, which [`check_out`] found missing or empty
/// ([`Existing::MustBeEmpty`]). An empty `dest` is removed first (never more: a folder that
/// has filled since cannot be removed that way), and the rename fails where anything is at
/// `dest` again, so nothing there is ever replaced. A `dest` that holds exactly the files of
/// `staged`, byte for byte (a run killed once it had put the same output in place), is left
/// as it is and `staged` removed.
pub fn put_in_place(
    flag: &str,
    staged: &Path,
    dest: &Path,
    reporter: &Reporter,
) -> anyhow::Result<()> {
    let filled = |e: io::Error| -> anyhow::Error {
        InputError::new(format!(
            "{flag} {} is not empty ({e}), and does not hold what this run wrote; this is \
             written into a new folder and never replaces one",
            shown(dest)
        ))
        .note("nothing there was changed: remove it, or give another folder")
        .into()
    };
    match fs::remove_dir(dest) {
        Err(_) if same_files(staged, dest).unwrap_or(false) => {
            reporter.say(format_args!(
                "{flag} {} already holds this output, byte for byte: left as it is",
                crate::diagnostic::escaped(&shown(dest))
            ));
            return fs::remove_dir_all(staged)
                .with_context(|| format!("cannot remove {}", staged.display()));
        }
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(filled(e)),
        _ => {}
    }
    fs::rename(staged, dest).map_err(|e| match fs::symlink_metadata(dest) {
        Ok(_) => filled(e),
        Err(_) => anyhow::Error::new(e).context(format!("cannot move it to {}", dest.display())),
    })
}

/// Whether the folders `a` and `b` hold the same regular files (names and bytes), and
/// nothing else (no link, no FIFO).
fn same_files(a: &Path, b: &Path) -> io::Result<bool> {
    let (in_a, in_b) = (files_below(a)?, files_below(b)?);
    if in_a
        .iter()
        .map(|(name, _)| name)
        .ne(in_b.iter().map(|(name, _)| name))
    {
        return Ok(false);
    }
    for ((_, one), (_, other)) in in_a.iter().zip(&in_b) {
        let (m1, m2) = (fs::symlink_metadata(one)?, fs::symlink_metadata(other)?);
        if !m1.is_file() || !m2.is_file() || m1.len() != m2.len() {
            return Ok(false);
        }
        if sha256_file(one)?.0 != sha256_file(other)?.0 {
            return Ok(false);
        }
    }
    Ok(true)
}

fn files_below(dir: &Path) -> io::Result<Vec<(String, std::path::PathBuf)>> {
    crate::fsx::files_below(dir).map_err(io::Error::other)
}

/// `path`, given as `flag`, is a folder to read.
pub fn check_in(flag: &str, path: &Path) -> Result<(), InputError> {
    match fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(InputError::new(format!(
            "{flag} {}: not a folder",
            path.display()
        ))),
        Err(e) => Err(InputError::new(format!(
            "{flag} {}: {}",
            path.display(),
            if e.kind() == std::io::ErrorKind::NotFound {
                "no such folder".to_string()
            } else {
                e.to_string()
            }
        ))
        .note(
            crate::fsx::folders_beside_note(path)
                .trim_start_matches("; ")
                .to_string(),
        )),
    }
}

fn check_parent(flag: &str, path: &Path) -> Result<(), InputError> {
    let mut above = path.parent();
    while let Some(dir) = above {
        if dir.as_os_str().is_empty() {
            return Ok(());
        }
        if let Ok(meta) = fs::metadata(dir) {
            return if meta.is_dir() {
                Ok(())
            } else {
                Err(InputError::new(format!(
                    "{flag} {}: {} is a file, so no folder can be made below it",
                    path.display(),
                    dir.display()
                )))
            };
        }
        above = dir.parent();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_devices_and_full_folders_are_refused_new_and_empty_folders_pass() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        fs::write(&file, "x").unwrap();
        let full = dir.path().join("full");
        fs::create_dir(&full).unwrap();
        fs::write(full.join("a"), "").unwrap();
        let empty = dir.path().join("empty");
        fs::create_dir(&empty).unwrap();
        let must = Existing::MustBeEmpty;
        assert!(check_out("--out", &dir.path().join("new/deeper"), must).is_ok());
        assert!(check_out("--out", &empty, must).is_ok());
        assert!(check_out("--out", &full, Existing::Replaced).is_ok());
        for (path, says) in [
            (file.clone(), "is a file"),
            (file.join("below"), "no folder can be made below it"),
            (full.clone(), "not empty"),
            (dir.path().join("NUL"), "device name"),
            (dir.path().join("com1.txt"), "device name"),
        ] {
            let e = check_out("--out", &path, must).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("--out"), "{e}");
        }
        assert!(check_in("--from", dir.path()).is_ok());
        let e = check_in("--from", &file).unwrap_err().to_string();
        assert!(e.contains("not a folder"), "{e}");
        let e = check_in("--from", &dir.path().join("gone"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("no such folder"), "{e}");
    }

    /// A release or a site is renamed into place: onto nothing or an empty folder, never onto
    /// one that filled after the check (as in a race with another writer).
    #[test]
    fn a_folder_put_in_place_never_replaces_one_that_filled_since() {
        let dir = tempfile::tempdir().unwrap();
        let reporter = Reporter::captured();
        let staged = |name: &str| {
            let staged = staging_beside(&dir.path().join("x"), ".s-", &reporter)
                .unwrap()
                .keep();
            fs::write(staged.join("index.html"), name).unwrap();
            staged
        };
        let dest = dir.path().join("site");
        put_in_place("--out", &staged("new"), &dest, &reporter).unwrap();
        let empty = dir.path().join("empty");
        fs::create_dir_all(&empty).unwrap();
        put_in_place("--out", &staged("empty"), &empty, &reporter).unwrap();
        assert_eq!(
            fs::read_to_string(empty.join("index.html")).unwrap(),
            "empty"
        );
        // Filled between the check and the rename, by a folder or a file.
        let late = staged("late");
        for filled in [dest.clone(), dir.path().join("file")] {
            fs::write(dir.path().join("file"), "mine").unwrap();
            let e = put_in_place("--out", &late, &filled, &reporter).unwrap_err();
            let input = e.downcast_ref::<InputError>().expect("bad input");
            assert!(input.message.contains("is not empty"), "{input}");
            assert!(late.join("index.html").is_file());
        }
        assert_eq!(fs::read_to_string(dest.join("index.html")).unwrap(), "new");
        assert_eq!(fs::read_to_string(dir.path().join("file")).unwrap(), "mine");
        // The very output already there (a run killed once it was in place): kept as it is.
        let same = dir.path().join("same");
        crate::fsx::copy_tree(&dest, &same).unwrap();
        put_in_place("--out", &same, &dest, &reporter).unwrap();
        assert!(!same.exists());
        let said = reporter.said().err;
        assert!(
            said.contains("already holds this output, byte for byte: left as it is"),
            "{said}"
        );
        assert_eq!(fs::read_to_string(dest.join("index.html")).unwrap(), "new");
    }
}
