//! Reading a unified diff (what `git format-patch` and `diff -u` write) into files and hunks,
//! and a report of a hunk that does not apply that a maintainer can act on: the file, the
//! hunk, the lines the patch expected and the lines the file has there.

use std::fmt;

/// One `@@ -start,len +start,len @@` block of a file in a unified diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hunk {
    pub header: String,
    pub(crate) old_start: usize,
    /// The lines the file must have for the hunk to apply (context and removed lines),
    /// without their line ends.
    pub expected: Vec<String>,
    /// The lines that take their place (context and added lines).
    pub(crate) replacement: Vec<String>,
    /// `\ No newline at end of file` after the old side's last line.
    pub(crate) old_ends_without_newline: bool,
    /// `\ No newline at end of file` after the new side's last line.
    pub(crate) new_ends_without_newline: bool,
}

impl Hunk {
    /// The hunk that undoes this one.
    pub(crate) fn reversed(&self) -> Hunk {
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
pub(crate) struct FileDiff {
    /// The path `-p1` names (without `a/` or `b/`).
    pub path: String,
    /// The old side is `/dev/null`: the patch creates the file.
    pub creates: bool,
    pub(crate) hunks: Vec<Hunk>,
}

/// The files a diff changes, in order.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Diff {
    pub files: Vec<FileDiff>,
}

/// A unified diff that cannot be read as one: the line (from 1) where it goes wrong, and why.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Malformed {
    pub line: usize,
    pub why: String,
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.why)
    }
}

/// The problem at `lines[at]`.
fn malformed(at: usize, why: String) -> Malformed {
    Malformed { line: at + 1, why }
}

/// Parses a unified diff by `git apply`'s rules, stricter where a line could belong to a hunk.
/// Lines before the first `--- `/`+++ ` pair (a mail header, the patch's explanation) are
/// ignored, and so are lines after a file's last hunk that no hunk could have (`diff --git`,
/// `index …`, `git format-patch`'s `-- ` signature). A hunk's body is read by the counts in
/// its header, so a removed line that itself starts with `-- ` is not taken for a new file.
/// Refused, naming the line: a file header with no hunk, a hunk that does not follow its file
/// header or the hunk before directly (git's "patch fragment without header"), a hunk whose
/// body is shorter or longer than its counts (where git would drop the rest silently), a hunk
/// that changes nothing. Line ends are dropped (a patch checked out with CRLF reads as the
/// same diff).
pub(super) fn parse(text: &str) -> Result<Diff, Malformed> {
    let lines: Vec<&str> = text
        .lines()
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let mut diff = Diff::default();
    // Whether the line before `i` ends a file header or a hunk, which a hunk may follow.
    let mut joined = false;
    let mut i = 0;
    while i < lines.len() {
        if starts_file_header(&lines, i) {
            let file = file_header(&lines, i)?;
            diff.files.push(file);
            i += 2;
        } else if lines[i].starts_with("@@ ") {
            let file = match diff.files.last_mut() {
                Some(file) if joined => file,
                None => {
                    return Err(malformed(
                        i,
                        "a hunk before any file header (`--- a/…` and `+++ b/…` lines)".into(),
                    ));
                }
                Some(_) => {
                    return Err(malformed(
                        i,
                        format!(
                            "the hunk `{}` follows no file header or hunk: line {i} is part of \
                             neither (do the counts of the hunk before match its body?)",
                            lines[i]
                        ),
                    ));
                }
            };
            let (hunk, next) = hunk_at(&lines, i, file)?;
            file.hunks.push(hunk);
            i = next;
        } else {
            joined = false;
            i += 1;
            continue;
        }
        joined = true;
    }
    Ok(diff)
}

/// Whether `lines[at]` and the next line are a file header (`--- a/x`, `+++ b/x`).
fn starts_file_header(lines: &[&str], at: usize) -> bool {
    lines[at].starts_with("--- ") && lines.get(at + 1).is_some_and(|l| l.starts_with("+++ "))
}

/// The file whose header starts at `lines[at]`; a hunk must follow it.
fn file_header(lines: &[&str], at: usize) -> Result<FileDiff, Malformed> {
    let (old, new) = (strip_time(&lines[at][4..]), strip_time(&lines[at + 1][4..]));
    if new == "/dev/null" {
        return Err(malformed(
            at,
            format!("the patch deletes {}, which is not supported", p1(old)),
        ));
    }
    let path = p1(new).to_string();
    if !lines.get(at + 2).is_some_and(|l| l.starts_with("@@ ")) {
        return Err(malformed(
            at,
            format!(
                "the file header of {path} has no hunk: a `@@ -start,count +start,count @@` \
                 line must follow its `+++` line"
            ),
        ));
    }
    Ok(FileDiff {
        path,
        creates: old == "/dev/null",
        hunks: Vec::new(),
    })
}

/// The hunk whose header is `lines[at]`, of `file`, and the index of the line after it.
fn hunk_at(lines: &[&str], at: usize, file: &FileDiff) -> Result<(Hunk, usize), Malformed> {
    let header = lines[at];
    let [(old_start, old_count), (_, new_count)] = header_ranges(header, at)?;
    if file.creates && old_count > 0 {
        return Err(malformed(
            at,
            format!(
                "the hunk `{header}` has {old_count} old line(s), but the patch creates {} \
                 (`--- /dev/null`): a new file's hunk is `@@ -0,0 +1,count @@`",
                file.path
            ),
        ));
    }
    let mut hunk = Hunk {
        header: header.to_string(),
        old_start,
        expected: Vec::new(),
        replacement: Vec::new(),
        old_ends_without_newline: false,
        new_ends_without_newline: false,
    };
    let (mut old_left, mut new_left) = (old_count, new_count);
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
    if old_left > 0 || new_left > 0 || body_goes_on(lines, i) {
        let (old, new, end) = body_run(lines, at + 1);
        let span = match end - (at + 1) {
            0 => String::new(),
            1 => format!(" (line {end})"),
            _ => format!(" (lines {}-{end})", at + 2),
        };
        return Err(malformed(
            at,
            format!(
                "the hunk `{header}` says {old_count} old and {new_count} new line(s), but its \
                 body has {old} old and {new} new line(s){span}: fix its counts (old: its ` ` \
                 and `-` lines, new: its ` ` and `+` lines)"
            ),
        ));
    }
    if hunk.expected == hunk.replacement
        && hunk.old_ends_without_newline == hunk.new_ends_without_newline
    {
        return Err(malformed(
            at,
            format!(
                "the hunk `{header}` changes nothing: its new lines are its old lines (context \
                 only, or it adds back what it removes)"
            ),
        ));
    }
    Ok((hunk, i))
}

/// The (start, count) of the old and new sides of the hunk header `header` (`lines[at]`).
fn header_ranges(header: &str, at: usize) -> Result<[(usize, usize); 2], Malformed> {
    let bad = || malformed(at, format!("cannot read the hunk header `{header}`"));
    let mut words = header.split_whitespace().skip(1);
    let old = range(words.next().and_then(|w| w.strip_prefix('-'))).ok_or_else(bad)?;
    let new = range(words.next().and_then(|w| w.strip_prefix('+'))).ok_or_else(bad)?;
    if words.next() != Some("@@") {
        return Err(bad());
    }
    for (start, count) in [old, new] {
        // Any start and count that fit add up to a line number the applying code can offset
        // by a signed amount without overflow.
        if start.checked_add(count).is_none_or(|end| end > MAX_LINE) {
            return Err(malformed(
                at,
                format!(
                    "the hunk header `{header}` names {count} line(s) from line {start}, past \
                     the last line number there can be ({MAX_LINE}): fix the header"
                ),
            ));
        }
        if start == 0 && count > 0 {
            return Err(malformed(
                at,
                format!(
                    "the hunk header `{header}` names {count} line(s) from line 0, but lines \
                     are numbered from 1: only a count of 0 (no line) goes with line 0"
                ),
            ));
        }
    }
    Ok([old, new])
}

/// Whether the lines after a hunk whose counts are used up go on as more of its body (where
/// `git apply` and GNU patch would drop them). Blank lines are skipped, as one may stand for
/// an empty context line; a file header and `git format-patch`'s signature (`-- `, then the
/// git version) are no body.
fn body_goes_on(lines: &[&str], from: usize) -> bool {
    let Some(next) = (from..lines.len()).find(|&n| !lines[n].is_empty()) else {
        return false;
    };
    match lines[next].chars().next() {
        Some(' ' | '+') => true,
        Some('-') => !(starts_file_header(lines, next) || lines[next] == "-- "),
        _ => false,
    }
}

/// What the body starting at `lines[from]` has, counts aside: its old and new lines and the
/// index after its last line. It runs while lines could be a hunk's, up to a file or hunk
/// header; blank lines count as context, except at its end.
fn body_run(lines: &[&str], from: usize) -> (usize, usize, usize) {
    let (mut old, mut new, mut end) = (0, 0, from);
    let mut blanks = 0;
    for (n, line) in lines.iter().enumerate().skip(from) {
        if starts_file_header(lines, n) {
            break;
        }
        match line.chars().next() {
            None => {
                blanks += 1;
                continue;
            }
            Some(' ') => (old, new) = (old + 1, new + 1),
            Some('-') => old += 1,
            Some('+') => new += 1,
            Some('\\') => {}
            Some(_) => break,
        }
        (old, new, blanks) = (old + blanks, new + blanks, 0);
        end = n + 1;
    }
    (old, new, end)
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
pub(crate) enum Problem {
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
    pub(super) fn refusal(&self) -> Option<String> {
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
    pub(super) fn says(&self) -> String {
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
pub(super) fn describe(
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
        assert_eq!(err.line, 3);
        assert!(
            err.why.contains("but its body has 1 old and 1 new"),
            "{err}"
        );
        let err = parse("--- a/x\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n").unwrap_err();
        assert!(err.why.contains("deletes x"), "{err}");
    }

    /// The error `parse` gives for a diff of src `x` with `hunks` after its file header (line
    /// 3 on), as written and with CRLF line ends (the same error).
    fn refusal(hunks: &str) -> Malformed {
        let text = format!("--- a/x\n+++ b/x\n{hunks}");
        let err = parse(&text).expect_err(hunks);
        assert_eq!(parse(&text.replace('\n', "\r\n")).unwrap_err(), err);
        err
    }

    #[test]
    fn a_hunk_whose_body_does_not_match_its_counts_is_refused_with_what_each_says() {
        for (hunks, line, says) in [
            (
                "@@ -1 +1 @@\n-a\n+A\n-b\n+B\n",
                3,
                (1, 1, 2, 2, " (lines 4-7)"),
            ),
            ("@@ -0,0 +0,0 @@\n-a\n+A\n", 3, (0, 0, 1, 1, " (lines 4-5)")),
            ("@@ -1 +1 @@\n a\n-b\n+B\n", 3, (1, 1, 2, 2, " (lines 4-6)")),
            (
                "@@ -1 +1 @@\n-a\n+A\n\n\n b\n",
                3,
                (1, 1, 4, 4, " (lines 4-8)"),
            ),
            (
                "@@ -1,3 +1,3 @@\n-a\n+A\n b\n",
                3,
                (3, 3, 2, 2, " (lines 4-6)"),
            ),
            ("@@ -1 +1 @@\n", 3, (1, 1, 0, 0, "")),
            ("@@ -1 +1 @@\n+A\n", 3, (1, 1, 0, 1, " (line 4)")),
            (
                "@@ -1 +1,2 @@\n-a\n-b\n+A\n+B\n",
                3,
                (1, 2, 2, 2, " (lines 4-7)"),
            ),
            (
                "@@ -1 +1 @@\n-a\n+A\n@@ -5,2 +5,2 @@\n-e\n+E\ndiff --git a/y b/y\n",
                6,
                (2, 2, 1, 1, " (lines 7-8)"),
            ),
        ] {
            let err = refusal(hunks);
            let (old, new, body_old, body_new, span) = says;
            assert_eq!(err.line, line, "{hunks:?}: {err}");
            let said = format!(
                "says {old} old and {new} new line(s), but its body has {body_old} old and \
                 {body_new} new line(s){span}: "
            );
            assert!(err.why.contains(&said), "{hunks:?}: `{said}` in {err}");
        }
    }

    #[test]
    fn a_hunk_of_a_later_file_is_checked_and_named_by_its_line() {
        let err =
            refusal("@@ -1 +1 @@\n-a\n+A\n--- a/y\n+++ b/y\n@@ -1,1 +1,1 @@\n-y\n+Y\n-z\n+Z\n");
        assert_eq!(err.line, 8, "{err}");
        assert!(
            err.why.starts_with("the hunk `@@ -1,1 +1,1 @@` says"),
            "{err}"
        );
    }

    #[test]
    fn a_file_header_with_no_hunk_or_a_hunk_after_stray_lines_is_refused() {
        for (hunks, line, says) in [
            ("", 1, "the file header of x has no hunk"),
            (
                "--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n",
                1,
                "of x has no hunk",
            ),
            (
                "@@ -1 +1 @@\n-a\n+b\n--- a/y\n+++ b/y\n",
                6,
                "of y has no hunk",
            ),
            ("index 1..2\n@@ -1 +1 @@\n-a\n+b\n", 1, "of x has no hunk"),
            (
                "@@ -1 +1 @@\n-a\n+b\n\n@@ -3 +3 @@\n-c\n+C\n",
                7,
                "follows no file header or hunk: line 6 is part of neither",
            ),
            (
                "@@ -1 +1 @@\n-a\n+b\n-- \n2.43.0\n@@ -3 +3 @@\n-c\n+C\n",
                8,
                "follows no file header or hunk: line 7 is part of neither",
            ),
        ] {
            let err = refusal(hunks);
            assert_eq!(err.line, line, "{hunks:?}: {err}");
            assert!(err.why.contains(says), "{hunks:?}: `{says}` in {err}");
        }
        let err = parse("Subject: x\n\n@@ -1 +1 @@\n-a\n+b\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 3: a hunk before any file header (`--- a/…` and `+++ b/…` lines)"
        );
    }

    #[test]
    fn a_hunk_that_changes_nothing_is_refused() {
        for hunks in [
            "@@ -1,2 +1,2 @@\n a\n b\n",
            "@@ -2 +2 @@\n-b\n+b\n",
            "@@ -1,2 +1,2 @@\n a\n-b\n+b\n",
            "@@ -1,0 +1,0 @@\n",
        ] {
            let err = refusal(hunks);
            assert_eq!(err.line, 3, "{err}");
            assert!(err.why.contains("changes nothing"), "{hunks:?}: {err}");
        }
        // Only the newline at the end: a change.
        let diff =
            parse("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+a\n\\ No newline at end of file\n").unwrap();
        assert!(diff.files[0].hunks[0].new_ends_without_newline);
    }

    #[test]
    fn line_0_goes_only_with_a_count_of_0_and_a_new_file_has_no_old_lines() {
        for (text, says) in [
            (
                "--- a/x\n+++ b/x\n@@ -0,1 +1 @@\n-a\n+b\n",
                "names 1 line(s) from line 0",
            ),
            (
                "--- a/x\n+++ b/x\n@@ -1 +0,2 @@\n-a\n+b\n+c\n",
                "names 2 line(s) from line 0",
            ),
            (
                "--- /dev/null\n+++ b/x\n@@ -1 +1,2 @@\n-a\n+b\n+c\n",
                "has 1 old line(s), but the patch creates x (`--- /dev/null`)",
            ),
            (
                "--- a/x\n+++ b/x\n@@ -1 +1\n-a\n+b\n",
                "cannot read the hunk header `@@ -1 +1`",
            ),
        ] {
            let err = parse(text).unwrap_err();
            assert_eq!(err.line, 3, "{err}");
            assert!(err.why.contains(says), "{text:?}: `{says}` in {err}");
        }
        for valid in [
            "--- /dev/null\n+++ b/x\n@@ -0,0 +1,2 @@\n+a\n+b\n",
            "--- a/x\n+++ b/x\n@@ -3,0 +4,1 @@\n+d\n",
            "--- a/x\n+++ b/x\n@@ -0,0 +1 @@\n+first\n",
            "--- a/x\n+++ b/x\n@@ -2 +1,0 @@\n-b\n",
            "--- a/x\n+++ b/x\n@@ -1,2 +0,0 @@\n-a\n-b\n",
        ] {
            parse(valid).unwrap_or_else(|e| panic!("{valid:?}: {e}"));
        }
    }

    #[test]
    fn lines_after_a_file_s_last_hunk_that_no_hunk_could_have_are_skipped() {
        let text = "From 1234 Mon Sep 17 00:00:00 2001\nSubject: x\n\n- a bullet\n---\n x | 2 +-\n\n\
                    diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+A\n\
                    \\ No newline at end of file\n\n\
                    diff --git a/y b/y\nindex 3..4 100644\n--- a/y\n+++ b/y\n@@ -2,2 +2,2 @@\n b\n-c\n+C\n\
                    \n\n-- \n2.43.0\n\n";
        for text in [text.to_string(), text.replace('\n', "\r\n")] {
            let diff = parse(&text).unwrap();
            let paths: Vec<&str> = diff.files.iter().map(|f| f.path.as_str()).collect();
            assert_eq!(paths, ["x", "y"]);
            assert!(diff.files[0].hunks[0].new_ends_without_newline);
            assert_eq!(diff.files[1].hunks[0].replacement, ["b", "C"]);
        }
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
            let err = parse(&format!("--- a/x\n+++ b/x\n@@ {range} @@\n-a\n+b\n"))
                .unwrap_err()
                .to_string();
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
