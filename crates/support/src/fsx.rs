//! File-system moves that lose nothing: write a file atomically, the name an old folder is
//! moved aside to, list the files below a folder.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Writes `text` to a temporary file beside `path`, then renames it over `path`: a reader
/// sees the old file or the new one, never half of one. The temporary file gets a fresh
/// random name and is created only where no file or link of that name is, so that a link
/// planted under a predictable name cannot redirect the write. An existing file's
/// permissions are kept (an executable script stays one).
pub fn write_atomically(path: &Path, text: &str) -> Result<()> {
    use std::io::Write;
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let old = fs::symlink_metadata(path).ok().filter(|m| m.is_file());
        // tempfile's own default is 0600; the umask applies to what is asked here.
        builder.permissions(
            old.map_or_else(|| fs::Permissions::from_mode(0o666), |m| m.permissions()),
        );
    }
    let mut temp = builder
        .tempfile_in(dir)
        .with_context(|| format!("cannot write in {}", dir.display()))?;
    temp.write_all(text.as_bytes())
        .with_context(|| format!("cannot write {}", temp.path().display()))?;
    temp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("cannot replace {}", path.display()))?;
    Ok(())
}

/// The name an old `dest` is moved aside to while `owned_output::replace` runs:
/// `.<name>.old-<pid>` beside it, so that `staging::sweep(parent, ".<name>.old-")` finds one a
/// killed run left behind.
pub fn aside(dest: &Path) -> PathBuf {
    dest.with_file_name(format!(
        ".{}.old-{}",
        dest.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ))
}

/// Writes `contents` to `path` (made, or emptied first) through [`crate::regular_file::open`]:
/// only ever a regular file there, never through a link, naming `path` when it fails (a full
/// disk, a read-only one).
pub fn write(path: &Path, contents: impl AsRef<[u8]>) -> Result<()> {
    use std::io::Write;
    crate::regular_file::open(path, crate::regular_file::Mode::Truncate)
        .and_then(|mut file| file.write_all(contents.as_ref()))
        .with_context(|| format!("cannot write {}", path.display()))
}

/// `fs::create_dir_all`, naming `dir` when it fails.
pub fn create_dir_all(dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))
}

/// Every file (not folder) below `dir`, as (`/`-separated path relative to `dir`, path),
/// sorted by the relative path.
pub fn files_below(dir: &Path) -> Result<Vec<(String, PathBuf)>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in fs::read_dir(&at).with_context(|| format!("cannot list {}", at.display()))? {
            let entry = entry.with_context(|| format!("cannot list {}", at.display()))?;
            let path = entry.path();
            if entry.file_type()?.is_dir() {
                stack.push(path);
            } else {
                let relative = path
                    .strip_prefix(dir)
                    .expect("below dir")
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push((relative, path));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Copies the tree `from` into `to` (created), files and folders only: a link is refused,
/// never followed. Keeps Unix modes (an executable stays one).
pub fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    fs::create_dir_all(to).with_context(|| format!("cannot create {}", to.display()))?;
    for entry in fs::read_dir(from).with_context(|| format!("cannot list {}", from.display()))? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            crate::regular_file::copy(entry.path(), &target).with_context(|| {
                format!(
                    "cannot copy {} to {}",
                    entry.path().display(),
                    target.display()
                )
            })?;
        } else {
            anyhow::bail!(
                "{} is not a file or a folder: not copied",
                entry.path().display()
            );
        }
    }
    Ok(())
}

/// For an error about a missing folder: what its parent does hold (`; PARENT holds a/, b/`),
/// so that `lib64/` beside a missing `lib/` (an install whose CMake chose GNUInstallDirs'
/// non-Debian layout) is seen at once.
pub fn folders_beside_note(missing: &Path) -> String {
    let Some(parent) = missing.parent() else {
        return String::new();
    };
    let Ok(entries) = std::fs::read_dir(parent) else {
        return format!("; its parent {} does not exist either", parent.display());
    };
    let mut folders: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| format!("{}/", e.file_name().to_string_lossy()))
        .collect();
    folders.sort();
    if folders.is_empty() {
        format!("; {} holds no folder", parent.display())
    } else {
        format!("; {} holds {}", parent.display(), folders.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_written_atomically() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("a");
        write_atomically(&dest, "a").unwrap();
        assert_eq!(fs::read_to_string(&dest).unwrap(), "a");
        write_atomically(&dest, "b").unwrap();
        assert_eq!(fs::read_to_string(&dest).unwrap(), "b");
        let names: Vec<_> = files_below(dir.path())
            .unwrap()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names, ["a"]);
    }

    #[test]
    fn a_missing_folder_note_lists_its_siblings() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("lib64")).unwrap();
        fs::create_dir_all(dir.path().join("bin")).unwrap();
        fs::write(dir.path().join("file"), "").unwrap();
        assert_eq!(
            folders_beside_note(&dir.path().join("lib")),
            format!("; {} holds bin/, lib64/", dir.path().display())
        );
        let gone = dir.path().join("gone");
        assert!(folders_beside_note(&gone.join("lib")).contains("does not exist either"));
    }
}
