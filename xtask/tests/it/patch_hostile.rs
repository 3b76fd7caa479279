//! Malformed patch files: a hunk whose body does not match the counts of its header (longer,
//! shorter, both counts 0, a later hunk or file), a file header with no hunk, a patch with no
//! file, a hunk that changes nothing, a hunk after lines that belong to no hunk, line 0 with
//! lines, a new file with old lines. `patch` (and `--check`) and `build` refuse each with exit
//! 2 naming the patch file and the hunk's line, CRLF patches alike, and write nothing; the
//! valid forms (a new file, a pure insertion, a deletion, `git format-patch`'s signature,
//! blank lines after the last hunk, no newline at the end) still apply. `--source` that is
//! not a folder is exit 2 naming the flag, before any work.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};

use common::command_args::{job, patch_gfx1010};
use common::{Run, Scratch};

const SERIES: &str = "patches/ctranslate2-4.7.1";
const FIRST: &str = "0001-hip-use-hipblasGemmEx_v2.patch";
const SECOND: &str = "0002-hip-6-define-syncwarp.patch";

/// A valid first patch, so that a refusal of the second writes nothing of it either.
const FIRST_PATCH: &str = "--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1 +1 @@\n-one\n+ONE\n";

/// A scratch checkout whose rocm-gfx1010 4.7.1 series is FIRST then SECOND, and a source tree.
struct Setup {
    scratch: Scratch,
    _dir: tempfile::TempDir,
    tree: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let scratch = Scratch::new();
        fs::write(scratch.path().join(SERIES).join(FIRST), FIRST_PATCH).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let tree = dir.path().join("tree");
        fs::create_dir_all(tree.join("src")).unwrap();
        fs::write(tree.join("src/a.txt"), "one\ntwo\nthree\nfour\nfive\n").unwrap();
        fs::write(tree.join("src/b.txt"), "last").unwrap();
        Setup {
            scratch,
            _dir: dir,
            tree,
        }
    }

    fn second(&self, text: &str) {
        fs::write(self.scratch.path().join(SERIES).join(SECOND), text).unwrap();
    }

    /// `patch` for rocm-gfx1010 on the tree, with `extra` arguments.
    fn patch(&self, extra: &[&str]) -> Run {
        self.patch_on(&self.tree, extra)
    }

    /// `patch` for rocm-gfx1010 on `source`, with `extra` arguments.
    fn patch_on(&self, source: &Path, extra: &[&str]) -> Run {
        let source = ["--source", source.to_str().unwrap()];
        self.scratch
            .run(&patch_gfx1010(&[&source[..], extra].concat()))
    }

    /// Every file of the tree with its text.
    fn files(&self) -> Vec<(PathBuf, String)> {
        let mut seen = Vec::new();
        let mut todo = vec![self.tree.clone()];
        while let Some(dir) = todo.pop() {
            for entry in fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    todo.push(path);
                } else {
                    seen.push((path.clone(), fs::read_to_string(&path).unwrap()));
                }
            }
        }
        seen.sort();
        seen
    }
}

/// Malformed second patches, one of each rule (`inputs::patch::hunks`' unit tests have every
/// form): what it is, its text, the line the refusal names and what it says there. The
/// first two are the issue's own (`@@ -1,1 +1,1 @@` and `@@ -0,0 +0,0 @@` with more lines).
const REFUSED: &[(&str, &str, usize, &[&str])] = &[
    (
        "a body longer than its counts",
        "--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1,1 +1,1 @@\n-one\n+ONE\n-two\n+TWO\n",
        3,
        &["says 1 old and 1 new line(s), but its body has 2 old and 2 new line(s) (lines 4-7)"],
    ),
    (
        "both counts 0",
        "--- a/src/a.txt\n+++ b/src/a.txt\n@@ -0,0 +0,0 @@\n-one\n+ONE\n",
        3,
        &["says 0 old and 0 new line(s), but its body has 1 old and 1 new line(s) (lines 4-5)"],
    ),
    (
        "counts used up by a context line",
        "--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1,1 +1,1 @@\n one\n-two\n+TWO\n",
        3,
        &["says 1 old and 1 new line(s), but its body has 2 old and 2 new line(s) (lines 4-6)"],
    ),
    (
        "a truncated hunk",
        "--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1,3 +1,3 @@\n-one\n+ONE\n two\n",
        3,
        &["says 3 old and 3 new line(s), but its body has 2 old and 2 new line(s) (lines 4-6)"],
    ),
    (
        "the hunk of a later file",
        "--- a/src/a.txt\n+++ b/src/a.txt\n@@ -2 +2 @@\n-two\n+TWO\n\
         --- a/src/b.txt\n+++ b/src/b.txt\n@@ -1,2 +1,2 @@\n-last\n+LAST\n",
        8,
        &["the hunk `@@ -1,2 +1,2 @@` says 2 old and 2 new line(s), but its body has 1 old"],
    ),
    (
        "a file header with no hunk",
        "--- a/src/a.txt\n+++ b/src/a.txt\n",
        1,
        &["the file header of src/a.txt has no hunk"],
    ),
    (
        "a hunk of context lines only",
        "--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1,2 +1,2 @@\n one\n two\n",
        3,
        &["the hunk `@@ -1,2 +1,2 @@` changes nothing"],
    ),
    (
        "a hunk after a line that belongs to no hunk",
        "--- a/src/a.txt\n+++ b/src/a.txt\n@@ -2 +2 @@\n-two\n+TWO\nnot a diff line\n\
         @@ -4 +4 @@\n-four\n+FOUR\n",
        7,
        &["follows no file header or hunk: line 6 is part of neither"],
    ),
    (
        "old lines from line 0",
        "--- a/src/a.txt\n+++ b/src/a.txt\n@@ -0,1 +1 @@\n-one\n+ONE\n",
        3,
        &["names 1 line(s) from line 0"],
    ),
    (
        "a new file with old lines",
        "--- /dev/null\n+++ b/src/new.txt\n@@ -1,1 +1,2 @@\n-q\n+A\n+B\n",
        3,
        &["has 1 old line(s), but the patch creates src/new.txt"],
    ),
];

/// Each refusal: exit 2 naming the patch file and line, nothing written to the tree; the
/// first two also with `--check` and checked out with CRLF.
#[test]
fn a_hunk_whose_body_does_not_match_its_counts_is_refused_naming_the_line() {
    let setup = Setup::new();
    let before = setup.files();
    for (n, (what, text, line, needles)) in REFUSED.iter().enumerate() {
        let crlf = text.replace('\n', "\r\n");
        let runs: &[(&str, &[&str])] = if n < 2 {
            &[(text, &[]), (text, &["--check"]), (&crlf, &[])]
        } else {
            &[(text, &[])]
        };
        for (text, extra) in runs {
            setup.second(text);
            let run = setup.patch(extra);
            let at = format!("{SECOND}: line {line}: ");
            let location = format!("--> {SERIES}/{SECOND}:{line}:1");
            let mut all: Vec<&str> = vec![&at, &location];
            all.extend_from_slice(needles);
            assert_eq!(
                run.code, 2,
                "{what} {extra:?}:\n{}{}",
                run.stdout, run.stderr
            );
            common::assert_exit(&run, 2, &all);
            assert_eq!(setup.files(), before, "{what}: nothing written");
        }
    }
}

#[test]
fn a_patch_with_no_file_is_refused() {
    let setup = Setup::new();
    for (text, extra) in [
        ("", &[][..]),
        (
            "Subject: nothing\n\n- a bullet\n---\n x | 2 +-\n",
            &["--check"],
        ),
    ] {
        setup.second(text);
        let run = setup.patch(extra);
        common::assert_exit(&run, 2, &[&format!("{SECOND}: it changes no file")]);
    }
    assert!(!setup.tree.join(".ct2v-patches").exists());
}

/// The build refuses a malformed patch with exit 2 when it reads the variant, before any step
/// (no download, no unpack); its patch step runs the same checks (unit tests of
/// `inputs::patch`).
#[test]
fn a_build_refuses_a_malformed_patch_before_any_step() {
    let setup = Setup::new();
    let (what, text, line, needles) = REFUSED[0];
    setup.second(text);
    let until = ["--offline", "--until", "patch"];
    let run = setup.scratch.run(&job(
        "build",
        "rocm-gfx1010",
        "linux-x86_64",
        "3.12",
        &until,
    ));
    let at = format!("{SECOND}: line {line}: ");
    let mut all: Vec<&str> = vec![&at];
    all.extend_from_slice(needles);
    common::assert_exit(&run, 2, &all);
    assert!(
        !run.stderr.contains("[1/"),
        "{what}: no step ran:\n{}",
        run.stderr
    );
    assert!(
        !setup.scratch.path().join("target").exists(),
        "nothing made"
    );
}

/// The valid forms the refusals must not catch: a new file (`@@ -0,0 +1,2 @@`), a pure
/// insertion (`@@ -3,0 +4,1 @@`), a pure deletion, no newline at the end, blank lines after the
/// last hunk and `git format-patch`'s signature; as written and with CRLF.
#[test]
fn the_valid_forms_still_apply() {
    let second = "Subject: valid forms\n\nWhy: a test.\n---\n\
                  --- /dev/null\n+++ b/src/new.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n\
                  --- a/src/a.txt\n+++ b/src/a.txt\n@@ -3,0 +4,1 @@\n+after three\n\
                  @@ -5 +5,0 @@\n-five\n\
                  --- a/src/b.txt\n+++ b/src/b.txt\n@@ -1 +1 @@\n-last\n\
                  \\ No newline at end of file\n+LAST\n\\ No newline at end of file\n\
                  \n\n-- \n2.43.0\n\n";
    for crlf in [false, true] {
        let setup = Setup::new();
        let text = if crlf {
            second.replace('\n', "\r\n")
        } else {
            second.to_string()
        };
        setup.second(&text);
        if !crlf {
            let run = setup.patch(&["--check"]);
            assert_eq!(run.code, 0, "{}", run.stderr);
            assert!(
                run.stdout.contains(&format!("{SECOND}: applies")),
                "{}",
                run.stdout
            );
        }
        let run = setup.patch(&[]);
        assert_eq!(run.code, 0, "CRLF {crlf}: {}", run.stderr);
        let read = |file: &str| fs::read_to_string(setup.tree.join(file)).unwrap();
        assert_eq!(read("src/a.txt"), "ONE\ntwo\nthree\nafter three\nfour\n");
        assert_eq!(read("src/new.txt"), "hello\nworld\n");
        assert_eq!(read("src/b.txt"), "LAST");
        assert!(setup.tree.join(".ct2v-patches").exists());
    }
}

/// `--source` that is a file, `/dev/null` or missing is bad input naming the flag, found
/// before the series is read or anything is written (no log folder).
#[test]
fn a_source_that_is_not_a_folder_is_bad_input_before_any_work() {
    let setup = Setup::new();
    setup.second(REFUSED[0].1);
    let file = setup.tree.join("src/a.txt");
    let missing = setup.tree.join("missing");
    for (source, says) in [
        (file.as_path(), "is not a folder"),
        (Path::new("/dev/null"), "is not a folder"),
        (missing.as_path(), "does not exist"),
    ] {
        for extra in [&[][..], &["--check"]] {
            let run = setup.patch_on(source, extra);
            let named = format!("--source {}", source.display());
            common::assert_exit(&run, 2, &[&named, says]);
            assert!(
                !run.stderr.contains(SECOND),
                "the flag first: {}",
                run.stderr
            );
            assert!(
                !setup.scratch.path().join("target").exists(),
                "nothing made"
            );
        }
    }
}
