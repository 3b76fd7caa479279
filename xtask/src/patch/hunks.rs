//! Reading a unified diff's hunks, and turning what GNU `patch` says about a failed hunk
//! into a report a maintainer can act on: the file, the hunk, the lines the patch expected
//! and the lines the file has there.

use std::fs;
use std::path::Path;

/// One `@@ -start,len +start,len @@` block of a file in a unified diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    pub header: String,
    pub old_start: usize,
    /// The lines the file must have for the hunk to apply (context and removed lines).
    pub expected: Vec<String>,
}

/// The hunks of each file a diff changes, by the file's path (`-p1`: without `a/`).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Diff {
    pub files: Vec<(String, Vec<Hunk>)>,
}

pub fn parse(text: &str) -> Diff {
    let mut diff = Diff::default();
    for line in text.lines() {
        if let Some(path) = line.strip_prefix("+++ ") {
            let path = path.split('\t').next().unwrap_or(path).trim();
            let path = path.split_once('/').map_or(path, |(_, rest)| rest);
            diff.files.push((path.to_string(), Vec::new()));
        } else if line.starts_with("@@ ") {
            let Some((_, hunks)) = diff.files.last_mut() else {
                continue;
            };
            hunks.push(Hunk {
                header: line.to_string(),
                old_start: old_start(line).unwrap_or(1),
                expected: Vec::new(),
            });
        } else if let Some(hunk) = diff.files.last_mut().and_then(|(_, h)| h.last_mut()) {
            if let Some(kept) = line.strip_prefix(' ').or_else(|| line.strip_prefix('-')) {
                if !line.starts_with("--- ") {
                    hunk.expected.push(kept.to_string());
                }
            } else if line.is_empty() {
                hunk.expected.push(String::new());
            }
        }
    }
    diff
}

/// `@@ -22,8 +22,10 @@` → 22.
fn old_start(header: &str) -> Option<usize> {
    let old = header.split_whitespace().nth(1)?.strip_prefix('-')?;
    old.split(',').next()?.parse().ok()
}

/// What `patch --dry-run` said went wrong, for one patch.
#[derive(Debug, PartialEq, Eq)]
pub enum Problem {
    /// `Hunk #N FAILED at L.`
    HunkFailed {
        file: String,
        hunk: usize,
        at: usize,
    },
    /// The patch names a file the tree does not have.
    NoFile { file: String },
    /// The patch is already in the tree.
    AlreadyApplied,
}

/// The problems in `patch`'s output (GNU patch 2.7 wording).
pub fn problems(output: &str) -> Vec<Problem> {
    let mut file = String::new();
    let mut found = Vec::new();
    for line in output.lines() {
        if let Some(rest) = line
            .strip_prefix("checking file ")
            .or_else(|| line.strip_prefix("patching file "))
        {
            file = rest.trim().trim_matches(['\'', '"']).to_string();
        } else if let Some(rest) = line.strip_prefix("Hunk #") {
            let mut words = rest.split_whitespace();
            let hunk = words.next().and_then(|n| n.parse().ok());
            let failed = words.next() == Some("FAILED");
            let at = words
                .nth(1)
                .and_then(|l| l.trim_end_matches('.').parse().ok());
            if let (Some(hunk), true, Some(at)) = (hunk, failed, at) {
                found.push(Problem::HunkFailed {
                    file: file.clone(),
                    hunk,
                    at,
                });
            }
        } else if line.starts_with("can't find file to patch") {
            found.push(Problem::NoFile {
                file: String::new(),
            });
        } else if line.contains("Reversed (or previously applied) patch detected") {
            found.push(Problem::AlreadyApplied);
        } else if let Some(Problem::NoFile { file }) = found.last_mut()
            && file.is_empty()
            && let Some(name) = line.strip_prefix("|+++ ")
        {
            let name = name.split('\t').next().unwrap_or(name).trim();
            *file = name.split_once('/').map_or(name, |(_, r)| r).to_string();
        }
    }
    found
}

/// A report of `problems` for `diff` applied to `tree`: each failed hunk with the lines it
/// expected and the lines the file has around where it should go.
pub fn describe(problems: &[Problem], diff: &Diff, tree: &Path) -> String {
    let mut text = String::new();
    for problem in problems {
        match problem {
            Problem::HunkFailed { file, hunk, at } => {
                let found = diff
                    .files
                    .iter()
                    .find(|(f, _)| f == file)
                    .and_then(|(_, hunks)| hunks.get(hunk - 1));
                let Some(h) = found else {
                    text.push_str(&format!("  {file}: hunk #{hunk} FAILED at line {at}\n"));
                    continue;
                };
                text.push_str(&format!("  {file}: hunk #{hunk} {} FAILED\n", h.header));
                text.push_str(&format!(
                    "    the patch expects, at line {}:\n",
                    h.old_start
                ));
                for line in &h.expected {
                    text.push_str(&format!("      | {line}\n"));
                }
                text.push_str(&surrounding(
                    &tree.join(file),
                    h.old_start,
                    h.expected.len(),
                ));
            }
            Problem::NoFile { file } => {
                text.push_str(&format!(
                    "  {}: the tree has no such file\n",
                    if file.is_empty() { "a file" } else { file }
                ));
            }
            Problem::AlreadyApplied => {
                text.push_str("  the tree already has this change (patched before?)\n");
            }
        }
    }
    text
}

/// The lines of `file` from a little before `start` to a little after the hunk's end.
fn surrounding(file: &Path, start: usize, len: usize) -> String {
    let Ok(content) = fs::read_to_string(file) else {
        return format!("    {} cannot be read\n", file.display());
    };
    let lines: Vec<&str> = content.lines().collect();
    let from = start.saturating_sub(3).max(1);
    let to = (start + len + 2).min(lines.len());
    if from > to {
        return format!("    the file has only {} lines\n", lines.len());
    }
    let mut text = format!("    the file has, at lines {from}-{to}:\n");
    for (n, line) in lines[from - 1..to].iter().enumerate() {
        text.push_str(&format!("      {:>5}| {line}\n", from + n));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIFF: &str = "Subject: x\n---\n--- a/src/a.cu\n+++ b/src/a.cu\n@@ -2,3 +2,3 @@\n one\n-two\n+TWO\n three\n";

    #[test]
    fn hunks_keep_the_lines_the_file_must_have() {
        let diff = parse(DIFF);
        assert_eq!(diff.files.len(), 1);
        let (file, hunks) = &diff.files[0];
        assert_eq!(file, "src/a.cu");
        assert_eq!(hunks[0].old_start, 2);
        assert_eq!(hunks[0].expected, ["one", "two", "three"]);
    }

    #[test]
    fn gnu_patch_failures_are_read() {
        let output = "checking file src/a.cu\nHunk #1 FAILED at 2.\n1 out of 1 hunk FAILED\n";
        assert_eq!(
            problems(output),
            [Problem::HunkFailed {
                file: "src/a.cu".into(),
                hunk: 1,
                at: 2
            }]
        );
        let output = "checking file src/a.cu\nReversed (or previously applied) patch detected!  Skipping patch.\n";
        assert_eq!(problems(output), [Problem::AlreadyApplied]);
    }

    #[test]
    fn a_failed_hunk_shows_what_was_expected_and_what_is_there() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("src")).unwrap();
        fs::write(
            dir.path().join("src/a.cu"),
            "zero\none\nchanged\nthree\nfour\n",
        )
        .unwrap();
        let text = describe(
            &[Problem::HunkFailed {
                file: "src/a.cu".into(),
                hunk: 1,
                at: 2,
            }],
            &parse(DIFF),
            dir.path(),
        );
        assert!(
            text.contains("src/a.cu: hunk #1 @@ -2,3 +2,3 @@ FAILED"),
            "{text}"
        );
        assert!(text.contains("      | two\n"), "{text}");
        assert!(text.contains("    3| changed\n"), "{text}");
    }
}
