//! Reading a unified diff (what `git format-patch` and `diff -u` write) into files and hunks,
//! and a report of a hunk that does not apply that a maintainer can act on: the file, the
//! hunk, the lines the patch expected and the lines the file has there.

/// One `@@ -start,len +start,len @@` block of a file in a unified diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    pub header: String,
    pub old_start: usize,
    /// The lines the file must have for the hunk to apply (context and removed lines),
    /// without their line ends.
    pub expected: Vec<String>,
    /// The lines that take their place (context and added lines).
    pub replacement: Vec<String>,
    /// `\ No newline at end of file` after the old side's last line.
    pub old_ends_without_newline: bool,
    /// `\ No newline at end of file` after the new side's last line.
    pub new_ends_without_newline: bool,
}

impl Hunk {
    /// The hunk that undoes this one.
    pub fn reversed(&self) -> Hunk {
        Hunk {
            header: self.header.clone(),
            old_start: self.old_start,
            expected: self.replacement.clone(),
            replacement: self.expected.clone(),
            old_ends_without_newline: self.new_ends_without_newline,
            new_ends_without_newline: self.old_ends_without_newline,
        }
    }
}

/// One file a diff changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// The path `-p1` names (without `a/` or `b/`).
    pub path: String,
    /// The old side is `/dev/null`: the patch creates the file.
    pub creates: bool,
    pub hunks: Vec<Hunk>,
}

/// The files a diff changes, in order.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Diff {
    pub files: Vec<FileDiff>,
}

/// Parses a unified diff. Lines before the first `--- `/`+++ ` pair (a mail header, the
/// patch's explanation) are ignored; a hunk's body is read by the counts in its header, so a
/// removed line that itself starts with `-- ` is not taken for a new file. Line ends are
/// dropped (a patch checked out with CRLF reads as the same diff).
pub fn parse(text: &str) -> Result<Diff, String> {
    let lines: Vec<&str> = text
        .lines()
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let mut diff = Diff::default();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let (Some(old), Some(new)) = (
            line.strip_prefix("--- "),
            lines.get(i + 1).and_then(|l| l.strip_prefix("+++ ")),
        ) {
            let creates = strip_time(old) == "/dev/null";
            if strip_time(new) == "/dev/null" {
                return Err(format!(
                    "line {}: the patch deletes {}, which is not supported",
                    i + 1,
                    p1(strip_time(old))
                ));
            }
            diff.files.push(FileDiff {
                path: p1(strip_time(new)).to_string(),
                creates,
                hunks: Vec::new(),
            });
            i += 2;
        } else if line.starts_with("@@ ") {
            let Some(file) = diff.files.last_mut() else {
                return Err(format!("line {}: a hunk before any `+++ ` line", i + 1));
            };
            let (hunk, next) = hunk_at(&lines, i)?;
            file.hunks.push(hunk);
            i = next;
        } else {
            i += 1;
        }
    }
    Ok(diff)
}

/// The hunk whose header is `lines[at]`, and the index of the line after it.
fn hunk_at(lines: &[&str], at: usize) -> Result<(Hunk, usize), String> {
    let header = lines[at];
    let bad = || format!("line {}: cannot read the hunk header `{header}`", at + 1);
    let mut words = header.split_whitespace().skip(1);
    let (old_start, mut old_left) =
        range(words.next().and_then(|w| w.strip_prefix('-'))).ok_or_else(bad)?;
    let (new_start, mut new_left) =
        range(words.next().and_then(|w| w.strip_prefix('+'))).ok_or_else(bad)?;
    // Any start and count that fit add up to a line number the applying code can offset by
    // a signed amount without overflow.
    for (start, count) in [(old_start, old_left), (new_start, new_left)] {
        if start.checked_add(count).is_none_or(|end| end > MAX_LINE) {
            return Err(format!(
                "line {}: the hunk header `{header}` names {count} line(s) from line {start}, \
                 past the last line number there can be ({MAX_LINE}): fix the header",
                at + 1
            ));
        }
    }
    let mut hunk = Hunk {
        header: header.to_string(),
        old_start,
        expected: Vec::new(),
        replacement: Vec::new(),
        old_ends_without_newline: false,
        new_ends_without_newline: false,
    };
    let mut i = at + 1;
    // Which side(s) the last line belonged to, for `\ No newline at end of file`.
    let mut last = (false, false);
    while i < lines.len() && (old_left > 0 || new_left > 0 || lines[i].starts_with('\\')) {
        let line = lines[i];
        let (kind, body) = match line.chars().next() {
            Some(c @ (' ' | '-' | '+' | '\\')) => (c, &line[1..]),
            None => (' ', ""),
            Some(_) => break,
        };
        match kind {
            '\\' => {
                hunk.old_ends_without_newline |= last.0;
                hunk.new_ends_without_newline |= last.1;
            }
            ' ' if old_left > 0 && new_left > 0 => {
                hunk.expected.push(body.to_string());
                hunk.replacement.push(body.to_string());
                (old_left, new_left, last) = (old_left - 1, new_left - 1, (true, true));
            }
            '-' if old_left > 0 => {
                hunk.expected.push(body.to_string());
                (old_left, last) = (old_left - 1, (true, false));
            }
            '+' if new_left > 0 => {
                hunk.replacement.push(body.to_string());
                (new_left, last) = (new_left - 1, (false, true));
            }
            _ => break,
        }
        i += 1;
    }
    if old_left > 0 || new_left > 0 {
        return Err(format!(
            "line {}: the hunk `{header}` ends early ({old_left} old and {new_left} new \
             line(s) missing)",
            at + 1
        ));
    }
    Ok((hunk, i))
}

/// The largest line number a hunk header may name.
const MAX_LINE: usize = isize::MAX as usize;

/// `22,8` → (22, 8); `22` → (22, 1). Digits only (`parse` would take `+22`).
fn range(text: Option<&str>) -> Option<(usize, usize)> {
    let number = |t: &str| {
        if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        t.parse().ok()
    };
    let text = text?;
    match text.split_once(',') {
        Some((start, len)) => Some((number(start)?, number(len)?)),
        None => Some((number(text)?, 1)),
    }
}

/// `a/src/x.cu\t2024-01-01 …` → `a/src/x.cu`.
fn strip_time(name: &str) -> &str {
    name.split('\t').next().unwrap_or(name).trim()
}

/// `-p1`: `a/src/x.cu` → `src/x.cu`.
fn p1(name: &str) -> &str {
    name.split_once('/').map_or(name, |(_, rest)| rest)
}

/// Why a patch does not apply to a tree.
#[derive(Debug, PartialEq, Eq)]
pub enum Problem {
    /// Hunk `hunk` (from 1) of `file` matches nowhere; `at` is where it was looked for first.
    HunkFailed {
        file: String,
        hunk: usize,
        at: usize,
    },
    /// The patch names a file the tree does not have.
    NoFile { file: String },
    /// The patch creates a file the tree already has.
    FileExists { file: String },
    /// A file it changes is not UTF-8 text.
    NotText { file: String },
    /// A folder on the file's path is a file, the file is not a regular file, or it cannot
    /// be read.
    Unusable { file: String, why: String },
    /// The file's path is not a plain relative path (`..`, absolute, a drive, …).
    Unsafe { file: String, why: String },
    /// A part of the file's path in the tree (`link`, as shown) is a symbolic link to
    /// `target`: never followed, as it could lead out of the tree.
    Symlink {
        file: String,
        link: String,
        target: String,
    },
}

impl Problem {
    /// Why the patch may not touch the tree at all (bad input rather than a patch that does
    /// not apply), as one line.
    pub fn refusal(&self) -> Option<String> {
        match self {
            Problem::Unsafe { file, why } => Some(format!(
                "refused to patch `{}`: {why}; fix the file names on the patch's `---` and \
                 `+++` lines (nothing was changed)",
                file.escape_debug()
            )),
            Problem::Symlink { file, link, target } => Some(format!(
                "refused to patch {}: {link} is a symbolic link (to {target}), and no \
                 symbolic link in the source tree is followed, as one could lead out of it; \
                 nothing was changed: replace the link with a copy of what it points to, or use \
                 a fresh tree",
                file.escape_debug()
            )),
            _ => None,
        }
    }

    /// The problem as one line, without the hunk's lines.
    pub fn says(&self) -> String {
        match self {
            Problem::HunkFailed { file, hunk, at } => {
                format!("{file}: hunk #{hunk} FAILED at line {at}")
            }
            Problem::NoFile { file } => format!("{file}: the tree has no such file"),
            Problem::FileExists { file } => {
                format!("{file}: the patch creates it, but the tree has it already")
            }
            Problem::NotText { file } => format!("{file}: not UTF-8 text, cannot be patched"),
            Problem::Unusable { file, why } => format!("{file}: {why}"),
            Problem::Unsafe { .. } | Problem::Symlink { .. } => self.refusal().unwrap_or_default(),
        }
    }
}

/// A report of `problems` for `diff`: each failed hunk with the lines it expected and the
/// lines the file has (`text_of` gives a file's text) around where it should go.
pub fn describe(
    problems: &[Problem],
    diff: &Diff,
    text_of: &mut dyn FnMut(&str) -> Option<String>,
) -> String {
    let mut text = String::new();
    for problem in problems {
        let found = match problem {
            Problem::HunkFailed { file, hunk, .. } => diff
                .files
                .iter()
                .find(|f| &f.path == file)
                .and_then(|f| f.hunks.get(hunk.checked_sub(1)?))
                .map(|h| (file, hunk, h)),
            _ => None,
        };
        let Some((file, hunk, h)) = found else {
            text.push_str(&format!("  {}\n", problem.says()));
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
        text.push_str(&surrounding(text_of(file), h.old_start, h.expected.len()));
    }
    text
}

/// The lines of a file from a little before `start` to a little after the hunk's end.
fn surrounding(content: Option<String>, start: usize, len: usize) -> String {
    let Some(content) = content else {
        return "    the file cannot be read\n".to_string();
    };
    let lines: Vec<&str> = content.lines().collect();
    let from = start.saturating_sub(3).max(1);
    let to = start.saturating_add(len).saturating_add(2).min(lines.len());
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
    fn hunks_keep_the_lines_the_file_must_have_and_what_replaces_them() {
        let diff = parse(DIFF).unwrap();
        assert_eq!(diff.files.len(), 1);
        let file = &diff.files[0];
        assert_eq!(file.path, "src/a.cu");
        assert!(!file.creates);
        assert_eq!(file.hunks[0].old_start, 2);
        assert_eq!(file.hunks[0].expected, ["one", "two", "three"]);
        assert_eq!(file.hunks[0].replacement, ["one", "TWO", "three"]);
    }

    #[test]
    fn a_crlf_checkout_of_a_patch_reads_as_the_same_diff() {
        assert_eq!(parse(&DIFF.replace('\n', "\r\n")), parse(DIFF));
    }

    #[test]
    fn a_removed_line_that_looks_like_a_file_header_stays_in_its_hunk() {
        let text = "--- a/x\n+++ b/x\n@@ -1,2 +1,1 @@\n--- not a header\n keep\n";
        let diff = parse(text).unwrap();
        assert_eq!(diff.files.len(), 1);
        assert_eq!(diff.files[0].hunks[0].expected, ["-- not a header", "keep"]);
    }

    #[test]
    fn no_newline_markers_and_new_files_are_read() {
        let text =
            "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+last\n\\ No newline at end of file\n";
        let diff = parse(text).unwrap();
        let file = &diff.files[0];
        assert!(file.creates);
        assert_eq!(file.path, "new.txt");
        assert!(file.hunks[0].new_ends_without_newline);
        assert!(!file.hunks[0].old_ends_without_newline);
    }

    #[test]
    fn a_truncated_hunk_or_a_deletion_is_an_error_naming_the_line() {
        let err = parse("--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n one\n").unwrap_err();
        assert!(
            err.contains("line 3") && err.contains("ends early"),
            "{err}"
        );
        let err = parse("--- a/x\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n").unwrap_err();
        assert!(err.contains("deletes x"), "{err}");
    }

    #[test]
    fn a_failed_hunk_shows_what_was_expected_and_what_is_there() {
        let text = describe(
            &[Problem::HunkFailed {
                file: "src/a.cu".into(),
                hunk: 1,
                at: 2,
            }],
            &parse(DIFF).unwrap(),
            &mut |_| Some("zero\none\nchanged\nthree\nfour\n".to_string()),
        );
        assert!(
            text.contains("src/a.cu: hunk #1 @@ -2,3 +2,3 @@ FAILED"),
            "{text}"
        );
        assert!(text.contains("      | two\n"), "{text}");
        assert!(text.contains("    3| changed\n"), "{text}");
    }

    #[test]
    fn hunk_headers_naming_impossible_lines_or_odd_numbers_are_errors_naming_the_line() {
        for (range, why) in [
            ("-18446744073709551615 +1", "past the last line number"),
            ("-1 +18446744073709551615,1", "past the last line number"),
            ("-1,18446744073709551615 +1", "past the last line number"),
            ("-9223372036854775807,1 +1", "past the last line number"),
            ("-18446744073709551616 +1", "cannot read the hunk header"),
            ("--1 +1", "cannot read the hunk header"),
            ("-+1 +1", "cannot read the hunk header"),
            ("-1, +1", "cannot read the hunk header"),
            ("-1 +1,-0", "cannot read the hunk header"),
        ] {
            let err = parse(&format!("--- a/x\n+++ b/x\n@@ {range} @@\n-a\n+b\n")).unwrap_err();
            assert!(
                err.starts_with("line 3: ") && err.contains(why),
                "{range}: {err}"
            );
        }
        let far = parse("--- a/x\n+++ b/x\n@@ -9223372036854775806,1 +1 @@\n-a\n+b\n").unwrap();
        assert_eq!(far.files[0].hunks[0].old_start, 9223372036854775806);
    }

    #[test]
    fn a_failed_hunk_at_the_largest_line_is_described_without_overflow() {
        let mut diff = parse(DIFF).unwrap();
        diff.files[0].hunks[0].old_start = usize::MAX;
        let text = describe(
            &[
                Problem::HunkFailed {
                    file: "src/a.cu".into(),
                    hunk: 1,
                    at: usize::MAX,
                },
                Problem::HunkFailed {
                    file: "src/a.cu".into(),
                    hunk: 0,
                    at: 1,
                },
            ],
            &diff,
            &mut |_| Some("one\n".to_string()),
        );
        assert!(text.contains("the file has only 1 lines"), "{text}");
        assert!(text.contains("hunk #0 FAILED at line 1"), "{text}");
    }
}
