//! Applying parsed diffs to a tree's files held in memory, so that a series is checked whole
//! before one byte is written: an [`Overlay`] reads each file once, applies hunk after hunk,
//! and writes only when asked.
//!
//! Matching follows GNU patch (2.7, its default `--fuzz 2`): a hunk's old lines must match
//! exactly (line ends aside, so a CRLF checkout of either side still applies), at the line its
//! header names moved by the offset of the hunks before it, else at the nearest line where
//! they match, never before the end of the previous hunk; where they match nowhere, up to two
//! context lines at each end are ignored ("with fuzz N", logged), the file keeping its own
//! lines there. Added lines take the file's own line end.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use anyhow::{Context, Result};

use super::hunks::{Diff, FileDiff, Hunk, Problem};

/// The tree's files as the patches applied so far left them.
pub(crate) struct Overlay {
    tree: PathBuf,
    /// `None`: the file does not exist (yet).
    files: BTreeMap<String, Option<String>>,
    changed: Vec<String>,
}

impl Overlay {
    pub(super) fn new(tree: &Path) -> Overlay {
        Overlay {
            tree: tree.to_path_buf(),
            files: BTreeMap::new(),
            changed: Vec::new(),
        }
    }

    /// The text of `file` as the overlay has it (read from the tree the first time).
    pub(super) fn text(&mut self, file: &str) -> Result<Option<&str>, Problem> {
        if !self.files.contains_key(file) {
            let path = self.reach(file)?;
            let loaded = match fs::read(&path) {
                Ok(bytes) => Some(String::from_utf8(bytes).map_err(|_| Problem::NotText {
                    file: file.to_string(),
                })?),
                Err(e) if e.kind() == io::ErrorKind::NotFound => None,
                Err(e) => {
                    return Err(Problem::Unusable {
                        file: file.to_string(),
                        why: format!("cannot read it: {e}"),
                    });
                }
            };
            self.files.insert(file.to_string(), loaded);
        }
        Ok(self.files[file].as_deref())
    }

    /// Where `file` (a path relative to the tree) is, reached without following a symbolic
    /// link: GNU patch refuses a path through one, which could lead anywhere, so every part
    /// that exists must be a real folder and the file itself a regular file. Parts that do not
    /// exist yet are fine (a new file's folders are created).
    pub(super) fn reach(&self, file: &str) -> Result<PathBuf, Problem> {
        let unsafe_path = |why: String| Problem::Unsafe {
            file: file.to_string(),
            why,
        };
        ct2v_support::safe_path::check_nonempty(file).map_err(unsafe_path)?;
        let parts: Vec<_> = Path::new(file)
            .components()
            .filter(|c| *c != Component::CurDir)
            .collect();
        let mut path = self.tree.clone();
        let mut exists = true;
        for (n, part) in parts.iter().enumerate() {
            let Component::Normal(name) = part else {
                return Err(unsafe_path(format!(
                    "`{}` leaves its folder",
                    part.as_os_str().display()
                )));
            };
            path.push(name);
            if !exists {
                continue;
            }
            let shown = || ct2v_support::paths::shown(&path);
            let unusable = |why: String| Problem::Unusable {
                file: file.to_string(),
                why,
            };
            let last = n + 1 == parts.len();
            match fs::symlink_metadata(&path) {
                Err(e) if e.kind() == io::ErrorKind::NotFound => exists = false,
                Err(e) => return Err(unusable(format!("cannot read {}: {e}", shown()))),
                Ok(meta) if meta.file_type().is_symlink() => {
                    let target = fs::read_link(&path)
                        .map_or_else(|e| format!("unreadable: {e}"), |t| t.display().to_string());
                    return Err(Problem::Symlink {
                        file: file.to_string(),
                        link: shown(),
                        target,
                    });
                }
                Ok(meta) if !last && !meta.is_dir() => {
                    return Err(unusable(format!("{} is not a folder", shown())));
                }
                Ok(meta) if last && !meta.is_file() => {
                    return Err(unusable(format!("{} is not a regular file", shown())));
                }
                Ok(_) => {}
            }
        }
        Ok(path)
    }

    /// Applies `diff` (undoes it when `reverse`): every file or none. On success the log
    /// lines say where each hunk went.
    pub(super) fn apply(
        &mut self,
        diff: &Diff,
        reverse: bool,
        max_fuzz: usize,
    ) -> Result<Vec<String>, Vec<Problem>> {
        let (results, log) = self.try_apply(diff, reverse, max_fuzz)?;
        for (path, text) in results {
            if !self.changed.contains(&path) {
                self.changed.push(path.clone());
            }
            self.files.insert(path, text);
        }
        Ok(log)
    }

    /// What [`Overlay::apply`] would make of each file, changing nothing.
    #[allow(clippy::type_complexity)]
    pub(crate) fn try_apply(
        &mut self,
        diff: &Diff,
        reverse: bool,
        max_fuzz: usize,
    ) -> Result<(Vec<(String, Option<String>)>, Vec<String>), Vec<Problem>> {
        let mut results = Vec::new();
        let mut problems = Vec::new();
        let mut log = Vec::new();
        for file in &diff.files {
            match self.apply_file(file, reverse, max_fuzz) {
                Ok((text, lines)) => {
                    log.push(format!("patching file {}", file.path));
                    log.extend(lines);
                    results.push((file.path.clone(), text));
                }
                Err(problem) => problems.push(problem),
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok((results, log))
    }

    fn apply_file(
        &mut self,
        file: &FileDiff,
        reverse: bool,
        max_fuzz: usize,
    ) -> Result<(Option<String>, Vec<String>), Problem> {
        let path = &file.path;
        let current = self.text(path)?.map(str::to_string);
        // A creating patch undone removes the file; applied, it needs the file absent.
        let (creates, removes) = (file.creates && !reverse, file.creates && reverse);
        let text = match (current, creates) {
            (Some(_), true) => return Err(Problem::FileExists { file: path.clone() }),
            (None, false) => return Err(Problem::NoFile { file: path.clone() }),
            (Some(text), false) => text,
            (None, true) => String::new(),
        };
        let hunks: Vec<Hunk> = if reverse {
            file.hunks.iter().map(Hunk::reversed).collect()
        } else {
            file.hunks.clone()
        };
        let (patched, log) = apply_hunks(&text, &hunks, path, max_fuzz)?;
        if removes {
            return if patched.is_empty() {
                Ok((None, log))
            } else {
                Err(Problem::HunkFailed {
                    file: path.clone(),
                    hunk: 1,
                    at: 1,
                })
            };
        }
        Ok((Some(patched), log))
    }

    /// Writes every file the applied diffs changed, each atomically. Every path is checked
    /// again first (the tree may have changed since it was read): none is written when one
    /// is refused.
    pub(super) fn write(self) -> Result<()> {
        let mut dests = Vec::new();
        for path in &self.changed {
            let dest = self.reach(path).map_err(|problem| {
                anyhow::anyhow!(
                    "{} changed while it was being patched, nothing was written: {}",
                    ct2v_support::paths::shown(&self.tree),
                    problem.says()
                )
            })?;
            dests.push(dest);
        }
        for (path, dest) in self.changed.iter().zip(dests) {
            match &self.files[path] {
                Some(text) => {
                    if let Some(parent) = dest.parent() {
                        fs::create_dir_all(parent)
                            .with_context(|| format!("cannot create {}", parent.display()))?;
                    }
                    ct2v_support::fsx::write_atomically(&dest, text)?;
                }
                None => fs::remove_file(&dest)
                    .with_context(|| format!("cannot remove {}", dest.display()))?,
            }
        }
        Ok(())
    }
}

/// `text` with `hunks` applied in order, and a log line per hunk.
fn apply_hunks(
    text: &str,
    hunks: &[Hunk],
    file: &str,
    max_fuzz: usize,
) -> Result<(String, Vec<String>), Problem> {
    let eol = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out = String::with_capacity(text.len() + 256);
    let mut log = Vec::new();
    let mut pos = 0;
    let mut offset: isize = 0;
    for (n, hunk) in hunks.iter().enumerate() {
        // `@@ -5,0 …` inserts after line 5; `@@ -5,2 …` starts at line 5.
        let named = if hunk.expected.is_empty() {
            hunk.old_start
        } else {
            hunk.old_start.saturating_sub(1)
        };
        let Some((fuzz, at, hunk)) = (0..=max_fuzz).find_map(|fuzz| {
            let (lead, trimmed) = trim_context(hunk, fuzz);
            if trimmed.expected.is_empty() && !hunk.expected.is_empty() {
                return None; // no line left to anchor it
            }
            let want = named
                .saturating_add_signed(offset)
                .saturating_add(lead)
                .max(pos);
            find(&lines, &trimmed.expected, want, pos).map(|at| (fuzz, at, trimmed))
        }) else {
            return Err(Problem::HunkFailed {
                file: file.to_string(),
                hunk: n + 1,
                at: hunk.old_start,
            });
        };
        out.extend(lines[pos..at].iter().copied());
        let end = at + hunk.expected.len();
        let at_end = end == lines.len();
        for (i, line) in hunk.replacement.iter().enumerate() {
            out.push_str(line);
            let last = i + 1 == hunk.replacement.len();
            if !(last && at_end && hunk.new_ends_without_newline) {
                out.push_str(eol);
            }
        }
        let (lead, _) = trim_context(&hunks[n], fuzz);
        let moved = signed_distance(named.saturating_add(lead), at);
        let mut said = format!("  hunk #{} at line {}", n + 1, at + 1);
        if fuzz > 0 {
            said.push_str(&format!(" with fuzz {fuzz}"));
        }
        if moved != 0 {
            said.push_str(&format!(" (offset {moved} line(s))"));
        }
        log.push(said);
        offset = moved;
        pos = end;
    }
    out.extend(lines[pos..].iter().copied());
    Ok((out, log))
}

/// `to - from`, saturating: a hunk header may name any line.
fn signed_distance(from: usize, to: usize) -> isize {
    if to >= from {
        isize::try_from(to - from).unwrap_or(isize::MAX)
    } else {
        isize::try_from(from - to).map_or(isize::MIN, |d| -d)
    }
}

/// GNU patch's default `--fuzz`.
pub(crate) const MAX_FUZZ: usize = 2;

/// `hunk` without up to `fuzz` context lines at each end, and how many went at the start.
fn trim_context(hunk: &Hunk, fuzz: usize) -> (usize, Hunk) {
    let common = |a: &mut dyn Iterator<Item = (&String, &String)>| {
        a.take_while(|(x, y)| x == y).count().min(fuzz)
    };
    let lead = common(&mut hunk.expected.iter().zip(&hunk.replacement));
    let trail = common(
        &mut hunk
            .expected
            .iter()
            .rev()
            .zip(hunk.replacement.iter().rev()),
    );
    let cut = |v: &[String]| {
        v[lead.min(v.len())..v.len().saturating_sub(trail).max(lead.min(v.len()))].to_vec()
    };
    let mut trimmed = hunk.clone();
    trimmed.expected = cut(&hunk.expected);
    trimmed.replacement = cut(&hunk.replacement);
    if trail > 0 {
        trimmed.new_ends_without_newline = false;
    }
    (lead, trimmed)
}

/// The first line of a place where `expected` matches, nearest to `want`, not before `from`.
fn find(lines: &[&str], expected: &[String], want: usize, from: usize) -> Option<usize> {
    let last = lines.len().checked_sub(expected.len())?;
    if from > last {
        return None;
    }
    let want = want.clamp(from, last);
    let matches = |at: usize| {
        expected
            .iter()
            .zip(&lines[at..])
            .all(|(e, l)| l.trim_end_matches(['\n', '\r']) == e)
    };
    let reach = (last - want).max(want - from);
    (0..=reach)
        .flat_map(|d| [Some(want + d), want.checked_sub(d).filter(|_| d > 0)])
        .flatten()
        .filter(|&at| (from..=last).contains(&at))
        .find(|&at| matches(at))
}

#[cfg(test)]
mod tests {
    use super::super::hunks::parse;
    use super::*;

    fn overlay_with(text: &str) -> (tempfile::TempDir, Overlay) {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.txt"), text).unwrap();
        let overlay = Overlay::new(dir.path());
        (dir, overlay)
    }

    fn diff(body: &str) -> Diff {
        parse(&format!("--- a/a.txt\n+++ b/a.txt\n{body}")).unwrap()
    }

    #[test]
    fn a_hunk_applies_where_its_header_says_or_at_the_nearest_match() {
        let change = diff("@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n");
        let (_dir, mut o) = overlay_with("a\nb\nc\nd\ne\n");
        let log = o.apply(&change, false, MAX_FUZZ).unwrap();
        assert_eq!(o.text("a.txt").unwrap(), Some("a\nb\nC\nd\ne\n"));
        assert_eq!(log, ["patching file a.txt", "  hunk #1 at line 2"]);
        // Three lines inserted above: found three lines further down, and said so.
        let (_dir, mut o) = overlay_with("x\ny\nz\na\nb\nc\nd\n");
        let log = o.apply(&change, false, MAX_FUZZ).unwrap();
        assert_eq!(o.text("a.txt").unwrap(), Some("x\ny\nz\na\nb\nC\nd\n"));
        assert_eq!(log[1], "  hunk #1 at line 5 (offset 3 line(s))");
    }

    #[test]
    fn crlf_files_keep_their_line_ends_and_undoing_gives_the_file_back() {
        let original = "a\r\nb\r\nc\r\n";
        let change = diff("@@ -1,2 +1,3 @@\n a\n+new\n b\n");
        let (_dir, mut o) = overlay_with(original);
        o.apply(&change, false, MAX_FUZZ).unwrap();
        assert_eq!(o.text("a.txt").unwrap(), Some("a\r\nnew\r\nb\r\nc\r\n"));
        assert!(o.apply(&change, false, 0).is_err(), "not twice");
        o.apply(&change, true, MAX_FUZZ).unwrap();
        assert_eq!(o.text("a.txt").unwrap(), Some(original));
    }

    #[test]
    fn a_failed_file_leaves_the_other_files_of_the_diff_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.txt"), "one\n").unwrap();
        fs::write(dir.path().join("b.txt"), "other\n").unwrap();
        let both = parse(
            "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+two\n\
             --- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-missing\n+x\n",
        )
        .unwrap();
        let mut o = Overlay::new(dir.path());
        let problems = o.apply(&both, false, MAX_FUZZ).unwrap_err();
        assert_eq!(
            problems,
            [Problem::HunkFailed {
                file: "b.txt".into(),
                hunk: 1,
                at: 1
            }]
        );
        assert_eq!(o.text("a.txt").unwrap(), Some("one\n"));
        o.write().unwrap();
        assert_eq!(
            fs::read_to_string(dir.path().join("a.txt")).unwrap(),
            "one\n"
        );
    }

    #[test]
    fn new_files_missing_files_and_paths_outside_the_tree() {
        let (dir, mut o) = overlay_with("a\n");
        let create = parse(
            "--- /dev/null\n+++ b/sub/new.txt\n@@ -0,0 +1 @@\n+hello\n\\ No newline at end of file\n",
        )
        .unwrap();
        o.apply(&create, false, MAX_FUZZ).unwrap();
        assert_eq!(
            o.apply(&create, false, MAX_FUZZ).unwrap_err(),
            [Problem::FileExists {
                file: "sub/new.txt".into()
            }]
        );
        o.write().unwrap();
        assert_eq!(
            fs::read_to_string(dir.path().join("sub/new.txt")).unwrap(),
            "hello"
        );
        let missing = parse("--- a/gone.txt\n+++ b/gone.txt\n@@ -1 +1 @@\n-a\n+b\n").unwrap();
        let mut o = Overlay::new(dir.path());
        assert_eq!(
            o.apply(&missing, false, MAX_FUZZ).unwrap_err(),
            [Problem::NoFile {
                file: "gone.txt".into()
            }]
        );
        let escaping = parse("--- a/../x.txt\n+++ b/../x.txt\n@@ -1 +1 @@\n-a\n+b\n").unwrap();
        let problems = o.apply(&escaping, false, MAX_FUZZ).unwrap_err();
        assert!(
            matches!(&problems[0], Problem::Unsafe { why, .. } if why.contains("leaves its folder")),
            "{problems:?}"
        );
    }

    #[test]
    fn up_to_two_changed_context_lines_at_each_end_are_fuzz_as_gnu_patch_allows() {
        let change = diff("@@ -1,5 +1,5 @@\n a\n b\n-c\n+C\n d\n e\n");
        let (_dir, mut o) = overlay_with("A\nB\nc\nD\nE\n");
        let log = o.apply(&change, false, MAX_FUZZ).unwrap();
        assert_eq!(
            o.text("a.txt").unwrap(),
            Some("A\nB\nC\nD\nE\n"),
            "the file's context kept"
        );
        assert_eq!(log[1], "  hunk #1 at line 3 with fuzz 2");
        let (_dir, mut o) = overlay_with("x\na\nb\nc\nd\nE\n");
        let log = o.apply(&change, false, MAX_FUZZ).unwrap();
        assert_eq!(log[1], "  hunk #1 at line 3 with fuzz 1 (offset 1 line(s))");
        // A changed line next to the change is more than fuzz: it does not apply.
        let (_dir, mut o) = overlay_with("a\nb\nX\nd\ne\n");
        assert!(o.apply(&change, false, MAX_FUZZ).is_err());
    }

    #[test]
    fn a_hunk_never_matches_before_the_previous_one() {
        let change = diff("@@ -1 +1 @@\n-x\n+X\n@@ -3 +3 @@\n-x\n+Y\n");
        let (_dir, mut o) = overlay_with("x\na\nb\n");
        assert!(o.apply(&change, false, MAX_FUZZ).is_err());
        let (_dir, mut o) = overlay_with("x\na\nx\n");
        o.apply(&change, false, MAX_FUZZ).unwrap();
        assert_eq!(o.text("a.txt").unwrap(), Some("X\na\nY\n"));
    }

    #[test]
    fn a_hunk_far_past_the_end_after_an_offset_is_searched_for_without_overflow() {
        // The first hunk lands 4 lines down, so the second is looked for 4 lines past the
        // largest line a header may name.
        let change = diff(
            "@@ -1 +1 @@\n-a\n+A\n@@ -9223372036854775806,1 +9223372036854775806,1 @@\n-b\n+B\n",
        );
        let (_dir, mut o) = overlay_with("w\nx\ny\nz\na\nb\n");
        let log = o.apply(&change, false, MAX_FUZZ).unwrap();
        assert_eq!(o.text("a.txt").unwrap(), Some("w\nx\ny\nz\nA\nB\n"));
        assert!(
            log[2].starts_with("  hunk #2 at line 6 (offset -"),
            "{log:?}"
        );
        let (_dir, mut o) = overlay_with("w\nx\ny\nz\na\nc\n");
        assert!(o.apply(&change, false, MAX_FUZZ).is_err());
    }

    #[cfg(unix)]
    mod links {
        use super::*;
        use std::os::unix::fs::symlink;

        /// A tree with links out of it and within it, and the folder outside.
        fn tree_with_links() -> (tempfile::TempDir, PathBuf, PathBuf) {
            let dir = tempfile::tempdir().unwrap();
            let (tree, outside) = (dir.path().join("tree"), dir.path().join("outside"));
            fs::create_dir_all(tree.join("sub")).unwrap();
            fs::create_dir_all(&outside).unwrap();
            fs::write(tree.join("sub/a.txt"), "a\n").unwrap();
            fs::write(outside.join("a.txt"), "a\n").unwrap();
            symlink(&outside, tree.join("out")).unwrap();
            symlink("../outside/a.txt", tree.join("file-link.txt")).unwrap();
            symlink("sub", tree.join("inner")).unwrap();
            (dir, tree, outside)
        }

        #[test]
        fn a_path_through_a_symbolic_link_is_refused_wherever_the_link_points() {
            let (_dir, tree, outside) = tree_with_links();
            for (path, link, creates) in [
                ("out/a.txt", "out", false),
                ("out/new/b.txt", "out", true),
                ("file-link.txt", "file-link.txt", false),
                ("inner/a.txt", "inner", false),
            ] {
                let old = if creates {
                    "/dev/null".into()
                } else {
                    format!("a/{path}")
                };
                let hunk = if creates {
                    "@@ -0,0 +1 @@\n+b\n"
                } else {
                    "@@ -1 +1 @@\n-a\n+b\n"
                };
                let change = parse(&format!("--- {old}\n+++ b/{path}\n{hunk}")).unwrap();
                let mut o = Overlay::new(&tree);
                let problems = o.apply(&change, false, MAX_FUZZ).unwrap_err();
                match &problems[..] {
                    [
                        Problem::Symlink {
                            file, link: shown, ..
                        },
                    ] => {
                        assert_eq!(file, path);
                        assert!(shown.ends_with(link), "{shown}");
                    }
                    other => panic!("{path}: {other:?}"),
                }
                assert!(problems[0].refusal().unwrap().contains("symbolic link"));
                o.write().unwrap();
            }
            assert_eq!(fs::read_to_string(outside.join("a.txt")).unwrap(), "a\n");
            assert!(!outside.join("new").exists());
        }

        #[test]
        fn a_link_planted_where_the_temporary_file_would_go_does_not_redirect_the_write() {
            let (_dir, tree, outside) = tree_with_links();
            let change = parse("--- a/sub/a.txt\n+++ b/sub/a.txt\n@@ -1 +1 @@\n-a\n+b\n").unwrap();
            // The names a temporary file beside it could have had, with this process's id.
            let pid = std::process::id();
            for name in [format!(".a.txt.tmp-{pid}"), format!(".a.txt.{pid}.tmp")] {
                symlink(outside.join("a.txt"), tree.join("sub").join(name)).unwrap();
            }
            let mut o = Overlay::new(&tree);
            o.apply(&change, false, MAX_FUZZ).unwrap();
            o.write().unwrap();
            assert_eq!(fs::read_to_string(tree.join("sub/a.txt")).unwrap(), "b\n");
            assert_eq!(fs::read_to_string(outside.join("a.txt")).unwrap(), "a\n");
        }

        #[test]
        fn a_folder_replaced_by_a_link_after_reading_stops_every_write() {
            let (_dir, tree, outside) = tree_with_links();
            fs::create_dir_all(tree.join("late")).unwrap();
            fs::write(tree.join("late/a.txt"), "a\n").unwrap();
            let change = parse(
                "--- a/sub/a.txt\n+++ b/sub/a.txt\n@@ -1 +1 @@\n-a\n+b\n\
                 --- a/late/a.txt\n+++ b/late/a.txt\n@@ -1 +1 @@\n-a\n+b\n",
            )
            .unwrap();
            let mut o = Overlay::new(&tree);
            o.apply(&change, false, MAX_FUZZ).unwrap();
            fs::remove_dir_all(tree.join("late")).unwrap();
            symlink(&outside, tree.join("late")).unwrap();
            let err = format!("{:#}", o.write().unwrap_err());
            assert!(
                err.contains("symbolic link") && err.contains("late"),
                "{err}"
            );
            assert_eq!(fs::read_to_string(tree.join("sub/a.txt")).unwrap(), "a\n");
            assert_eq!(fs::read_to_string(outside.join("a.txt")).unwrap(), "a\n");
        }

        #[test]
        fn a_patched_file_keeps_its_permissions() {
            use std::os::unix::fs::PermissionsExt;
            let (_dir, tree, _) = tree_with_links();
            let script = tree.join("sub/a.txt");
            fs::set_permissions(&script, fs::Permissions::from_mode(0o750)).unwrap();
            let change = parse("--- a/sub/a.txt\n+++ b/sub/a.txt\n@@ -1 +1 @@\n-a\n+b\n").unwrap();
            let mut o = Overlay::new(&tree);
            o.apply(&change, false, MAX_FUZZ).unwrap();
            o.write().unwrap();
            let mode = fs::metadata(&script).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o750);
        }
    }

    #[test]
    fn a_file_where_a_folder_should_be_or_a_folder_to_patch_does_not_apply() {
        let (_dir, mut o) = overlay_with("a\n");
        let change = parse(
            "--- /dev/null\n+++ b/a.txt/new.txt\n@@ -0,0 +1 @@\n+x\n\
             --- /dev/null\n+++ b/./\n@@ -0,0 +1 @@\n+x\n",
        )
        .unwrap();
        let problems = o.apply(&change, false, MAX_FUZZ).unwrap_err();
        assert!(
            matches!(&problems[..], [Problem::Unusable { why, .. }, Problem::Unsafe { .. }] if why.contains("is not a folder")),
            "{problems:?}"
        );
    }
}
