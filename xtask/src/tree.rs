//! Walking a folder tree.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

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
