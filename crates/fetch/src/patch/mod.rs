//! Applying a patch series to an unpacked tree, all or nothing, in-process (no GNU `patch`,
//! which Windows lacks; Git for Windows' copy lives in `usr\\bin`, whose GNU `link.exe`
//! shadows MSVC's linker when that folder is on PATH). The whole series is applied to the
//! files in memory first ([`apply::Overlay`]) and written only when every patch applied, so
//! the tree is never left half-patched. A marker file in the tree records the series
//! applied, so a rerun on the same tree does nothing; a patch whose change is already in the
//! tree (it undoes cleanly, as GNU patch's "Reversed (or previously applied)") is not
//! applied twice. As GNU patch, no symbolic link in the tree is followed, to read or to
//! write: a patch whose file is reached through one is refused as bad input.

mod apply;
mod hunks;
pub mod series;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use apply::Overlay;
use ct2v_support::diagnostic::{InputError, Location};

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
    let mut overlay = Overlay::new(tree);
    let marker = overlay
        .reach(MARKER)
        .map_err(|problem| match problem.refusal() {
            Some(why) => anyhow::Error::new(InputError::new(why)),
            None => anyhow::anyhow!("{}", problem.says()),
        })?;
    match fs::read_to_string(&marker) {
        Ok(text) if text == wanted => return Ok(()),
        Ok(text) => bail!(
            "{} was patched with another series:\n{text}remove {} so that the unpack step \
             recreates it, then run again",
            ct2v_support::paths::shown(tree),
            ct2v_support::paths::shown(tree)
        ),
        Err(_) => {}
    }
    series_on(&mut overlay, patches, tree, log)?;
    overlay.write()?;
    ct2v_support::fsx::write_atomically(&marker, &wanted)
}

/// The text of the file at `path` that `patch` creates (`--- /dev/null`), as applying it would
/// write it: code a patch adds can then be compiled and tested on its own (the cuda variant's
/// cuBLAS loader, crates/fetch/tests/it/cublas_loader.rs).
pub fn created_file(patch: &Path, path: &str) -> Result<String> {
    let text =
        fs::read_to_string(patch).with_context(|| format!("cannot read {}", patch.display()))?;
    let diff = hunks::parse(&text).map_err(|why| anyhow::anyhow!("{}: {why}", patch.display()))?;
    let Some(file) = diff.files.iter().find(|f| f.creates && f.path == path) else {
        bail!("{} creates no file {path}", patch.display());
    };
    let mut out = String::new();
    for hunk in &file.hunks {
        for line in &hunk.replacement {
            out.push_str(line);
            out.push('\n');
        }
        if hunk.new_ends_without_newline {
            out.pop();
        }
    }
    Ok(out)
}

/// What one patch does to a tree.
#[derive(Debug, PartialEq, Eq)]
pub enum Check {
    Applies,
    /// Its change is in the tree already (it undoes cleanly).
    AlreadyThere,
    /// The report: each failed hunk, what it expected, what the file has.
    Fails(String),
}

/// What `patch` would do to `tree` (changing nothing); where each hunk goes is logged.
pub fn check(patch: &Path, tree: &Path, log: &Path) -> Result<Check> {
    step(&mut Overlay::new(tree), patch, log)
}

/// The patch at `path` as a diff (`shown` is how errors name it): a file that is not UTF-8
/// text, not a well-formed unified diff ([`hunks::parse`]) or changes no file is bad input
/// naming the patch and its line.
fn read(path: &Path, shown: &Path) -> Result<hunks::Diff, InputError> {
    let text = ct2v_support::diagnostic::read_text(path, shown)?;
    let not_a_diff = |why: String| {
        InputError::new(format!("{}: {why}", shown.display())).note(
            "a patch is a unified diff (as `git diff` or `git format-patch` writes it): fix it \
             or take it out of its series",
        )
    };
    let diff = hunks::parse(&text).map_err(|problem| {
        not_a_diff(problem.to_string()).at(Location::line(shown, &text, problem.line))
    })?;
    if diff.files.is_empty() {
        return Err(not_a_diff(
            "it changes no file (no `--- a/…` and `+++ b/…` lines)".into(),
        ));
    }
    Ok(diff)
}

/// Checks that the patch at `path` is one applying it would read: a well-formed unified diff
/// that changes something. A series is checked so when its variant is read, before any work.
pub(crate) fn check_form(path: &Path, shown: &Path) -> Result<(), InputError> {
    read(path, shown).map(drop)
}

/// Applies `patch` to the overlay when it applies; says what it did.
fn step(overlay: &mut Overlay, patch: &Path, log: &Path) -> Result<Check> {
    let shown = ct2v_support::paths::shown(patch);
    let diff = read(patch, Path::new(&shown))?;
    for file in &diff.files {
        if let Err(problem) = overlay.text(&file.path)
            && let Some(why) = problem.refusal()
        {
            return Err(InputError::new(format!("{shown}: {why}")).into());
        }
    }
    let name = patch.file_name().unwrap_or_default().to_string_lossy();
    // As GNU patch: exact first, then "already applied" exactly, then with more fuzz.
    let mut problems = Vec::new();
    for fuzz in 0..=apply::MAX_FUZZ {
        match overlay.apply(&diff, false, fuzz) {
            Ok(lines) => {
                append(log, &format!("{name}: applies\n{}\n", lines.join("\n")))?;
                return Ok(Check::Applies);
            }
            Err(found) => problems = found,
        }
        if overlay.try_apply(&diff, true, fuzz).is_ok() {
            append(log, &format!("{name}: already in the tree\n"))?;
            return Ok(Check::AlreadyThere);
        }
    }
    let report = hunks::describe(&problems, &diff, &mut |file| {
        overlay.text(file).ok().flatten().map(str::to_string)
    });
    append(log, &format!("{name}: does not apply\n{report}"))?;
    Ok(Check::Fails(report))
}

/// Applies `patches` in order to the overlay; the first that does not apply is an error with
/// its report (the overlay is then not to be written).
fn series_on(
    overlay: &mut Overlay,
    patches: &[PathBuf],
    tree: &Path,
    log: &Path,
) -> Result<Vec<Check>> {
    let mut outcomes = Vec::new();
    for p in patches {
        let outcome = step(overlay, p, log)?;
        if let Check::Fails(report) = &outcome {
            bail!(
                "{} does not apply to {} (nothing was changed):\n{report}",
                ct2v_support::paths::shown(p),
                ct2v_support::paths::shown(tree)
            );
        }
        outcomes.push(outcome);
    }
    Ok(outcomes)
}

/// Applies `patches` in memory to the files of `tree` (the tree is not touched) and says,
/// for each, whether it applied or was there already. The first that does not apply is an
/// error with its report.
pub fn check_series(patches: &[PathBuf], tree: &Path, log: &Path) -> Result<Vec<Check>> {
    series_on(&mut Overlay::new(tree), patches, tree, log)
}

fn append(log: &Path, text: &str) -> Result<()> {
    let mut file = ct2v_support::regular_file::open(log, ct2v_support::regular_file::Mode::Append)
        .with_context(|| format!("cannot write {}", log.display()))?;
    file.write_all(text.as_bytes())?;
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

    #[test]
    fn a_series_applies_once_and_a_rerun_does_nothing() {
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

    fn input_error(err: &anyhow::Error) -> String {
        match err.downcast_ref::<InputError>() {
            Some(input) => input.to_string(),
            None => panic!("not bad input (exit 2) but: {err:#}"),
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_on_the_way_out_of_the_tree_is_bad_input_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let tree = tree_with(dir.path(), "one\n");
        let outside = dir.path().join("outside");
        fs::create_dir_all(&outside).unwrap();
        fs::write(outside.join("b.txt"), "b\n").unwrap();
        std::os::unix::fs::symlink(&outside, tree.join("src/out")).unwrap();
        let good = patch_file(dir.path(), "1.patch", "one", "two");
        let evil = dir.path().join("2.patch");
        fs::write(
            &evil,
            "--- a/src/out/b.txt\n+++ b/src/out/b.txt\n@@ -1 +1 @@\n-b\n+B\n",
        )
        .unwrap();
        let log = dir.path().join("patch.log");
        for check_only in [true, false] {
            let err = if check_only {
                check_series(&[good.clone(), evil.clone()], &tree, &log).unwrap_err()
            } else {
                apply_series(&[good.clone(), evil.clone()], &tree, &log).unwrap_err()
            };
            let shown = input_error(&err);
            assert_eq!(shown.lines().count(), 1, "{shown}");
            for needle in [
                "2.patch",
                "src/out/b.txt",
                "tree/src/out is a symbolic link",
                "nothing was changed",
            ] {
                assert!(shown.contains(needle), "`{needle}` in {shown}");
            }
        }
        assert_eq!(fs::read_to_string(tree.join("src/a.txt")).unwrap(), "one\n");
        assert_eq!(fs::read_to_string(outside.join("b.txt")).unwrap(), "b\n");
        assert!(!tree.join(MARKER).exists());
        // The marker is written through no link either.
        fs::remove_file(tree.join("src/out")).unwrap();
        std::os::unix::fs::symlink(outside.join("b.txt"), tree.join(MARKER)).unwrap();
        let shown = input_error(&apply_series(&[good], &tree, &log).unwrap_err());
        assert!(shown.contains("symbolic link"), "{shown}");
        assert_eq!(fs::read_to_string(outside.join("b.txt")).unwrap(), "b\n");
        assert_eq!(fs::read_to_string(tree.join("src/a.txt")).unwrap(), "one\n");
    }

    /// What the build's patch step runs (`apply_series`) and `patch --check` refuse a patch
    /// whose hunks do not match their counts, has no hunk or changes nothing, as bad input
    /// naming its line, after a patch that applies: nothing is written.
    #[test]
    fn a_malformed_patch_after_a_good_one_is_bad_input_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let tree = tree_with(dir.path(), "one\ntwo\nthree\n");
        let good = patch_file(dir.path(), "1.patch", "one", "ONE");
        let bad = dir.path().join("2.patch");
        let log = dir.path().join("patch.log");
        let header = "--- a/src/a.txt\n+++ b/src/a.txt\n";
        for (hunks, line, says) in [
            (
                "@@ -2 +2 @@\n-two\n+TWO\n-three\n+THREE\n",
                3,
                "says 1 old and 1 new",
            ),
            ("@@ -2,2 +2,2 @@\n-two\n+TWO\n", 3, "says 2 old and 2 new"),
            ("", 1, "has no hunk"),
            ("@@ -1,2 +1,2 @@\n one\n two\n", 3, "changes nothing"),
        ] {
            for line_end in ["\n", "\r\n"] {
                let text = format!("{header}{hunks}").replace('\n', line_end);
                fs::write(&bad, text).unwrap();
                let both = [good.clone(), bad.clone()];
                for err in [
                    check_series(&both, &tree, &log).unwrap_err(),
                    apply_series(&both, &tree, &log).unwrap_err(),
                ] {
                    let shown = input_error(&err);
                    for needle in [
                        format!("2.patch: line {line}: "),
                        format!("2.patch:{line}:1"),
                        says.into(),
                    ] {
                        assert!(shown.contains(&needle), "`{needle}` in {shown}");
                    }
                }
            }
        }
        assert_eq!(
            fs::read_to_string(tree.join("src/a.txt")).unwrap(),
            "one\ntwo\nthree\n"
        );
        assert!(!tree.join(MARKER).exists());
    }

    #[test]
    fn a_patch_that_is_no_diff_is_bad_input_naming_the_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let tree = tree_with(dir.path(), "one\n");
        let log = dir.path().join("patch.log");
        let patch = dir.path().join("1.patch");
        for (text, needle) in [
            (
                &b"--- a/src/a.txt\n+++ b/src/a.txt\n@@ -18446744073709551615 +1 @@\n-one\n+two\n"
                    [..],
                "1.patch: line 3: ",
            ),
            (
                b"--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1 +1 @@\n-one\xff\n+two\n",
                "1.patch is not UTF-8 text: byte 0xff at offset 48",
            ),
            (b"just some text\n", "1.patch: it changes no file"),
            (
                b"--- a/../a.txt\n+++ b/../a.txt\n@@ -1 +1 @@\n-one\n+two\n",
                "1.patch: refused to patch `../a.txt`",
            ),
        ] {
            fs::write(&patch, text).unwrap();
            let shown =
                input_error(&apply_series(std::slice::from_ref(&patch), &tree, &log).unwrap_err());
            assert!(shown.contains(needle), "`{needle}` in {shown}");
        }
        assert_eq!(fs::read_to_string(tree.join("src/a.txt")).unwrap(), "one\n");
    }
}
