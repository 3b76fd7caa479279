//! Applying a patch series to an unpacked tree, all or nothing: each patch is checked with
//! `patch --dry-run` before it is applied, and if one does not apply, those already applied
//! are reversed, so the tree is never left half-patched. A marker file in the tree records
//! the series applied, so a rerun on the same tree does nothing; a patch whose change is
//! already in the tree (without the marker) is recognised and not applied twice.

mod hunks;

use std::ffi::OsStr;
use std::fs;
use std::io::Write;
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
        let result = match check(p, tree, log)? {
            Check::Applies => run_patch(p, tree, log, &[]),
            Check::AlreadyThere => continue,
            Check::Fails(report) => Err(anyhow::anyhow!("{report}")),
        };
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
    crate::fsx::write_atomically(&marker, &wanted)
}

/// What `patch --dry-run` says of one patch on a tree.
#[derive(Debug, PartialEq, Eq)]
pub enum Check {
    Applies,
    /// Its change is in the tree already (it reverses cleanly).
    AlreadyThere,
    /// The report: each failed hunk, what it expected, what the file has.
    Fails(String),
}

/// Dry-runs `patch` on `tree` (changing nothing); the output goes to `log` too.
pub fn check(patch: &Path, tree: &Path, log: &Path) -> Result<Check> {
    let (ok, output) = dry_run(patch, tree, &[])?;
    append(log, &output)?;
    if ok {
        return Ok(Check::Applies);
    }
    let problems = hunks::problems(&output);
    if problems.contains(&hunks::Problem::AlreadyApplied) && dry_run(patch, tree, &["--reverse"])?.0
    {
        return Ok(Check::AlreadyThere);
    }
    let text =
        fs::read_to_string(patch).with_context(|| format!("cannot read {}", patch.display()))?;
    let mut report = hunks::describe(&problems, &hunks::parse(&text), tree);
    if report.is_empty() {
        report = format!("  patch said:\n{output}");
    }
    Ok(Check::Fails(report))
}

fn dry_run(patch: &Path, tree: &Path, extra: &[&str]) -> Result<(bool, String)> {
    let mut args: Vec<&OsStr> = ["-p1", "--forward", "--batch", "--dry-run", "-d"]
        .map(OsStr::new)
        .to_vec();
    args.extend([tree.as_os_str(), OsStr::new("-i"), patch.as_os_str()]);
    args.extend(extra.iter().map(OsStr::new));
    let output = crate::process::capture("patch", args)
        .map_err(|e| e.source)
        .context(
            "cannot run `patch` (install it: apt-get install patch, or Git for Windows' usr/bin)",
        )?;
    let mut text = output.stdout;
    text.push_str(&output.stderr);
    Ok((output.success, text))
}

fn append(log: &Path, text: &str) -> Result<()> {
    let mut file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .with_context(|| format!("cannot write {}", log.display()))?;
    file.write_all(text.as_bytes())?;
    Ok(())
}

/// The files of `tree` that `patches` change, copied into `copy` (same relative paths):
/// enough for the series to be applied to the copy instead of the tree.
pub fn copy_touched(patches: &[PathBuf], tree: &Path, copy: &Path) -> Result<Vec<String>> {
    let mut touched = Vec::new();
    for p in patches {
        let text = fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?;
        for (file, _) in hunks::parse(&text).files {
            if touched.contains(&file) {
                continue;
            }
            let from = tree.join(&file);
            if from.is_file() {
                let to = copy.join(&file);
                fs::create_dir_all(to.parent().unwrap_or(copy))?;
                fs::copy(&from, &to).with_context(|| format!("cannot copy {}", from.display()))?;
            }
            touched.push(file);
        }
    }
    Ok(touched)
}

/// Applies `patches` to a copy of the files of `tree` they change (the tree is not
/// touched) and says, for each, whether it applied or was there already. The first that
/// does not apply is an error with its report.
pub fn check_series(patches: &[PathBuf], tree: &Path, log: &Path) -> Result<Vec<Check>> {
    let copy = tempfile::tempdir().context("cannot create a temporary folder")?;
    copy_touched(patches, tree, copy.path())?;
    let mut outcomes = Vec::new();
    for p in patches {
        let outcome = check(p, copy.path(), log)?;
        match &outcome {
            Check::Applies => run_patch(p, copy.path(), log, &[])?,
            Check::AlreadyThere => {}
            Check::Fails(report) => bail!(
                "{} does not apply to {} (nothing was changed):\n{report}",
                p.display(),
                tree.display()
            ),
        }
        outcomes.push(outcome);
    }
    Ok(outcomes)
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
    fn a_change_already_in_the_tree_is_recognised_and_not_applied_twice() {
        if !have_patch() {
            eprintln!("skipping: `patch` is not installed");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let tree = tree_with(dir.path(), "two\n");
        let p1 = patch_file(dir.path(), "1.patch", "one", "two");
        let log = dir.path().join("patch.log");
        assert_eq!(check(&p1, &tree, &log).unwrap(), Check::AlreadyThere);
        apply_series(std::slice::from_ref(&p1), &tree, &log).unwrap();
        assert_eq!(fs::read_to_string(tree.join("src/a.txt")).unwrap(), "two\n");
        assert!(tree.join(MARKER).exists());
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
        let shown = format!("{err:#}");
        assert!(shown.contains("2.patch does not apply"), "{shown}");
        assert!(
            shown.contains("src/a.txt: hunk #1 @@ -1 +1 @@ FAILED"),
            "{shown}"
        );
        assert!(shown.contains("      | nothing like it"), "{shown}");
        assert!(
            shown.contains("    1| two"),
            "the file as it was then: {shown}"
        );
        assert_eq!(fs::read_to_string(tree.join("src/a.txt")).unwrap(), "one\n");
        assert!(!tree.join(MARKER).exists());
    }
}
