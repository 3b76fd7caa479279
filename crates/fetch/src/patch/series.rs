//! Patch series: `patches/ctranslate2-<version>/series` lists patch files in the order they
//! are applied, one per line; `#` starts a comment.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use ct2v_support::diagnostic::{InputError, Location};

#[derive(Debug, Clone, Serialize)]
pub struct Series {
    /// The series file, relative to the repository root.
    pub path: PathBuf,
    /// The patch files in order, relative to the repository root.
    pub patches: Vec<PathBuf>,
}

impl Series {
    /// Reads a series and checks that every patch it lists exists and is a well-formed diff
    /// that changes something (what applying it checks first), so that a malformed patch is
    /// refused when the variant is read, before any download. `path` is relative to `root`;
    /// errors name the series file and line, or the patch and its line.
    pub fn load(root: &Path, path: &Path) -> Result<Series, InputError> {
        let text = ct2v_support::diagnostic::read_text(&root.join(path), path)?;
        let dir = path.parent().unwrap_or(Path::new(""));
        let mut patches = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let name = line.split('#').next().unwrap_or("").trim();
            if name.is_empty() {
                continue;
            }
            if let Err(why) = ct2v_support::safe_path::check_nonempty(name) {
                return Err(InputError::new(format!(
                    "patch `{}` listed in {} is not allowed: {why}",
                    name.escape_debug(),
                    path.display()
                ))
                .at(Location::line(path, &text, index + 1))
                .note("series lines name patch files next to the series file"));
            }
            let patch = dir.join(name);
            if !root.join(&patch).is_file() {
                let available = patch_files(&root.join(dir));
                return Err(InputError::new(format!(
                    "patch `{name}` listed in {} does not exist",
                    path.display()
                ))
                .at(Location::line(path, &text, index + 1))
                .allowed(name, &available)
                .note(format!(
                    "add {} or remove the line from the series",
                    patch.display()
                )));
            }
            super::check_form(&root.join(&patch), &patch)
                .map_err(|e| e.note(format!("listed in {}, line {}", path.display(), index + 1)))?;
            patches.push(patch);
        }
        Ok(Series {
            path: path.to_path_buf(),
            patches,
        })
    }
}

fn patch_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".patch") || n.ends_with(".diff"))
        .collect();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATCH: &str = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n";

    #[test]
    fn reads_patches_in_order_and_skips_comments() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("patches/v");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("0001-a.patch"), PATCH).unwrap();
        fs::write(dir.join("0002-b.patch"), PATCH).unwrap();
        fs::write(
            dir.join("series"),
            "# why\n0002-b.patch\n\n0001-a.patch  # later\n",
        )
        .unwrap();
        let series = Series::load(root.path(), Path::new("patches/v/series")).unwrap();
        assert_eq!(
            series.patches,
            [
                PathBuf::from("patches/v/0002-b.patch"),
                PathBuf::from("patches/v/0001-a.patch")
            ]
        );
    }

    #[test]
    fn a_missing_patch_names_the_series_line_and_a_near_name() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("patches/v");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("0001-fix.patch"), PATCH).unwrap();
        fs::write(dir.join("series"), "# c\n0001-fx.patch\n").unwrap();
        let err = Series::load(root.path(), Path::new("patches/v/series")).unwrap_err();
        let shown = err.to_string();
        assert!(shown.contains("patches/v/series:2:1"), "{shown}");
        assert!(shown.contains("did you mean `0001-fix.patch`?"), "{shown}");
    }

    #[test]
    fn a_malformed_patch_is_refused_naming_its_line_and_the_series_line() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("patches/v");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("0001-a.patch"), PATCH).unwrap();
        fs::write(
            dir.join("0002-b.patch"),
            "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n-c\n+d\n",
        )
        .unwrap();
        fs::write(dir.join("series"), "0001-a.patch\n0002-b.patch\n").unwrap();
        let err = Series::load(root.path(), Path::new("patches/v/series")).unwrap_err();
        // The patch's path as the host writes it (`patches/v\0002-b.patch` on Windows).
        let shown = err.to_string().replace('\\', "/");
        for needle in [
            "patches/v/0002-b.patch: line 3: the hunk `@@ -1 +1 @@` says 1 old and 1 new",
            "--> patches/v/0002-b.patch:3:1",
            "listed in patches/v/series, line 2",
        ] {
            assert!(shown.contains(needle), "`{needle}` in {shown}");
        }
    }
}
