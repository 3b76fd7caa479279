//! Applying a patch series to an unpacked tree, all or nothing: each patch is checked with
//! `patch --dry-run` before it is applied, and if one does not apply, those already applied
//! are reversed, so the tree is never left half-patched. A marker file in the tree records
//! the series applied, so a rerun on the same tree does nothing.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::exec::run_logged;
use crate::plan::Command;

const MARKER: &str = ".ct2v-patches";

/// The marker's text: one `sha256  file name` line per patch.
fn marker_text(patches: &[PathBuf]) -> Result<String> {
    let mut text = String::new();
    for p in patches {
        let (sha, _) =
            crate::cache::sha256_file(p).with_context(|| format!("cannot read {}", p.display()))?;
        let name = p.file_name().unwrap_or_default().to_string_lossy();
        text.push_str(&format!("{sha}  {name}\n"));
    }
    Ok(text)
}

/// The sha256 of every patch, for the step's fingerprint: an edited patch is applied again.
pub fn fingerprint(patches: &[PathBuf]) -> Result<String> {
    marker_text(patches)
}

pub fn apply_series(patches: &[PathBuf], tree: &Path, log: &Path) -> Result<()> {
    let wanted = marker_text(patches)?;
    let marker = tree.join(MARKER);
    match fs::read_to_string(&marker) {
        Ok(text) if text == wanted => return Ok(()),
        Ok(text) => bail!(
            "{} was patched with another series:\n{text}remove {} so that the unpack step \
             recreates it, then run again",
            tree.display(),
            tree.display()
        ),
        Err(_) => {}
    }
    let mut applied: Vec<&PathBuf> = Vec::new();
    for p in patches {
        let result =
            run_patch(p, tree, log, &["--dry-run"]).and_then(|()| run_patch(p, tree, log, &[]));
        if let Err(err) = result {
            for done in applied.iter().rev() {
                run_patch(done, tree, log, &["--reverse"]).with_context(|| {
                    format!(
                        "{} does not apply, and reversing {} failed too: remove {} so that the \
                         unpack step recreates it",
                        p.display(),
                        done.display(),
                        tree.display()
                    )
                })?;
            }
            return Err(err).with_context(|| {
                format!(
                    "{} does not apply to {} (nothing was changed)",
                    p.display(),
                    tree.display()
                )
            });
        }
        applied.push(p);
    }
    crate::pin::write_atomically(&marker, &wanted)
}

fn run_patch(patch: &Path, tree: &Path, log: &Path, extra: &[&str]) -> Result<()> {
    let command = Command::new("patch")
        .args([
            "-p1",
            "--forward",
            "--batch",
            "--no-backup-if-mismatch",
            "-d",
        ])
        .arg(tree.display().to_string())
        .arg("-i")
        .arg(patch.display().to_string())
        .args(extra.iter().copied());
    run_logged(&command, &Default::default(), log, &mut |_| {})?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree_with(dir: &Path, text: &str) -> PathBuf {
        let tree = dir.join("tree");
        fs::create_dir_all(tree.join("src")).unwrap();
        fs::write(tree.join("src/a.txt"), text).unwrap();
        tree
    }

    fn patch_file(dir: &Path, name: &str, from: &str, to: &str) -> PathBuf {
        let path = dir.join(name);
        fs::write(
            &path,
            format!("--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1 +1 @@\n-{from}\n+{to}\n"),
        )
        .unwrap();
        path
    }

    fn have_patch() -> bool {
        crate::host::on_path("patch")
    }

    #[test]
    fn a_series_applies_once_and_a_rerun_does_nothing() {
        if !have_patch() {
            eprintln!("skipping: `patch` is not installed");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let tree = tree_with(dir.path(), "one\n");
        let p1 = patch_file(dir.path(), "1.patch", "one", "two");
        let p2 = patch_file(dir.path(), "2.patch", "two", "three");
        let log = dir.path().join("patch.log");
        apply_series(&[p1.clone(), p2.clone()], &tree, &log).unwrap();
        assert_eq!(
            fs::read_to_string(tree.join("src/a.txt")).unwrap(),
            "three\n"
        );
        apply_series(&[p1, p2], &tree, &log).unwrap();
        assert_eq!(
            fs::read_to_string(tree.join("src/a.txt")).unwrap(),
            "three\n"
        );
    }

    #[test]
    fn a_patch_that_does_not_apply_leaves_the_tree_as_it_was() {
        if !have_patch() {
            eprintln!("skipping: `patch` is not installed");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let tree = tree_with(dir.path(), "one\n");
        let good = patch_file(dir.path(), "1.patch", "one", "two");
        let bad = patch_file(dir.path(), "2.patch", "nothing like it", "x");
        let log = dir.path().join("patch.log");
        let err = apply_series(&[good, bad.clone()], &tree, &log).unwrap_err();
        assert!(
            format!("{err:#}").contains("2.patch does not apply"),
            "{err:#}"
        );
        assert_eq!(fs::read_to_string(tree.join("src/a.txt")).unwrap(), "one\n");
        assert!(!tree.join(MARKER).exists());
    }
}
