//! Errors in user input (variant files, patch series, command-line values), rendered as one
//! screen that names the file, line, column and key, and what would be allowed instead.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// Bad input: the command exits with code 2 when one of these reaches `main`.
#[derive(Debug)]
pub struct InputError {
    pub message: String,
    /// Boxed: a Windows `PathBuf` is larger, and clippy's `result_large_err` counts it.
    pub location: Option<Box<Location>>,
    pub notes: Vec<String>,
}

/// A place in a text file, with the file's text so the line can be shown.
#[derive(Debug, Clone)]
pub struct Location {
    pub path: PathBuf,
    pub line: usize,
    pub(crate) column: usize,
    pub line_text: String,
    pub width: usize,
}

impl Location {
    /// `span` is a byte range into `text`, as the TOML parser reports it.
    pub fn from_span(path: &Path, text: &str, span: Range<usize>) -> Location {
        let boundary = |mut at: usize| {
            at = at.min(text.len());
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            at
        };
        let start = boundary(span.start);
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        let line = text[..start].matches('\n').count() + 1;
        let column = text[line_start..start].chars().count() + 1;
        let end = boundary(span.end).clamp(start, line_end);
        Location {
            path: path.to_path_buf(),
            line,
            column,
            line_text: text[line_start..line_end]
                .trim_end_matches('\r')
                .to_string(),
            width: text[start..end].chars().count().max(1),
        }
    }

    /// A whole line (1-based) of a file that is not TOML, such as a patch series.
    pub fn line(path: &Path, text: &str, line: usize) -> Location {
        let line_text = text.lines().nth(line - 1).unwrap_or("").to_string();
        Location {
            path: path.to_path_buf(),
            line,
            column: 1,
            width: line_text.chars().count().max(1),
            line_text,
        }
    }
}

impl InputError {
    pub fn new(message: impl Into<String>) -> InputError {
        InputError {
            message: message.into(),
            location: None,
            notes: Vec::new(),
        }
    }

    pub fn at(mut self, location: Location) -> InputError {
        self.location = Some(Box::new(location));
        self
    }

    pub fn note(mut self, note: impl Into<String>) -> InputError {
        self.notes.push(note.into());
        self
    }

    /// Adds "did you mean" (when something is close) and the list of allowed values.
    pub fn allowed<S: AsRef<str>>(self, wrong: &str, allowed: &[S]) -> InputError {
        let allowed: Vec<&str> = allowed.iter().map(AsRef::as_ref).collect();
        let with_hint = match did_you_mean(wrong, &allowed) {
            Some(near) => self.note(format!("did you mean `{near}`?")),
            None => self,
        };
        if allowed.is_empty() {
            with_hint
        } else {
            with_hint.note(format!("allowed: {}", allowed.join(", ")))
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.message)?;
        if let Some(loc) = &self.location {
            let number = loc.line.to_string();
            let pad = " ".repeat(number.len());
            writeln!(
                f,
                "{pad}--> {}:{}:{}",
                loc.path.display(),
                loc.line,
                loc.column
            )?;
            let (shown, caret_at, width) = shown_line(loc);
            writeln!(f, "{pad} |")?;
            writeln!(f, "{number} | {shown}")?;
            writeln!(f, "{pad} | {}{}", " ".repeat(caret_at), "^".repeat(width))?;
        }
        for note in &self.notes {
            writeln!(f, "  = {note}")?;
        }
        Ok(())
    }
}

impl std::error::Error for InputError {}

/// A text file the user edits (`shown` is how errors name it): not UTF-8 is bad input that
/// points at the first byte that is not.
/// Reads `path` as text and parses it; a parse error is prefixed with the file.
pub fn load_with<T>(
    path: &Path,
    parse: impl FnOnce(&str) -> Result<T, String>,
) -> Result<T, InputError> {
    let text = read_text(path, path)?;
    parse(&text).map_err(|e| InputError::new(format!("{}: {e}", path.display())))
}

pub fn read_text(path: &Path, shown: &Path) -> Result<String, InputError> {
    let bytes = std::fs::read(path)
        .map_err(|e| InputError::new(format!("cannot read {}: {e}", shown.display())))?;
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        let lossy = String::from_utf8_lossy(bytes);
        // The lossy text is the same up to `at`, where U+FFFD (3 bytes) stands for the bad byte.
        let at_lossy = String::from_utf8_lossy(&bytes[..at]).len();
        InputError::new(format!(
            "{} is not UTF-8 text: byte 0x{:02x} at offset {at}",
            shown.display(),
            bytes[at]
        ))
        .at(Location::from_span(shown, &lossy, at_lossy..at_lossy + 3))
        .note("save it as UTF-8 (a Windows editor may have written it as ANSI/cp1252)")
    })
}

/// `name` as it may be printed: control characters (ESC, `\r`, …) and the invisible ones
/// that reorder or hide text written as escapes (`\u{1b}`), so that a name from an archive
/// or a release folder cannot move the cursor, recolour the terminal or pass for another name.
pub fn escaped(name: &str) -> Cow<'_, str> {
    if !name.chars().any(hidden) {
        return Cow::Borrowed(name);
    }
    Cow::Owned(name.chars().map(escaped_char).collect())
}

/// Control characters and the invisible ones that reorder or hide text (the bidirectional
/// overrides and isolates, zero-width characters, the byte-order mark).
pub fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}')
}

/// A [`hidden`] character as its escape (`\u{1b}`), any other as it is.
fn escaped_char(c: char) -> String {
    if hidden(c) {
        c.escape_default().to_string()
    } else {
        c.to_string()
    }
}

/// `text` as it may reach a terminal: control characters other than newline and tab (an
/// archive entry named with ESC or `\r`, say) are written as escapes, never interpreted.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| hidden(c) && c != '\n' && c != '\t') {
        return text.into();
    }
    text.chars()
        .map(|c| match c {
            '\n' | '\t' => c.to_string(),
            c => escaped_char(c),
        })
        .collect::<String>()
        .into()
}

/// The most of a value [`quoted`] shows.
const QUOTED: usize = 60;

/// A value as a message names it: in backticks, every control character escaped (a newline
/// too, so that the value stays on its line), cut after [`QUOTED`] characters.
pub fn quoted(text: &str) -> String {
    let shown: String = text.chars().take(QUOTED).map(escaped_char).collect();
    let length = text.chars().count();
    if length > QUOTED {
        format!("`{shown}…` ({length} characters)")
    } else {
        format!("`{shown}`")
    }
}

/// The most of a line shown under an error: a longer one (a minified or hostile file) is
/// cut around the column, so that one error stays one screen.
const SHOWN_LINE: usize = 160;

/// The part of the location's line that is shown, the caret's column in it (0-based) and
/// its width; control characters are shown as `?` so the terminal never interprets them.
fn shown_line(loc: &Location) -> (String, usize, usize) {
    let chars: Vec<char> = loc
        .line_text
        .chars()
        .map(|c| if c.is_control() && c != '\t' { '?' } else { c })
        .collect();
    let column = loc.column.saturating_sub(1).min(chars.len());
    if chars.len() <= SHOWN_LINE {
        return (chars.iter().collect(), column, loc.width);
    }
    let start = column.saturating_sub(SHOWN_LINE / 2);
    let end = (start + SHOWN_LINE).min(chars.len());
    let mut shown = String::new();
    if start > 0 {
        shown.push('…');
    }
    shown.extend(&chars[start..end]);
    if end < chars.len() {
        shown.push('…');
    }
    let caret_at = column - start + usize::from(start > 0);
    let width = loc.width.clamp(1, end.saturating_sub(column).max(1));
    (shown, caret_at, width)
}

/// The closest candidate to `wrong`, if it is close enough to be a likely typo.
pub(crate) fn did_you_mean<'a>(wrong: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let limit = (wrong.chars().count() / 3).max(2);
    candidates
        .iter()
        .map(|c| (strsim::damerau_levenshtein(wrong, c), *c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn location_counts_lines_and_columns_from_one() {
        let text = "a = 1\n  bee = 2\n";
        let loc = Location::from_span(Path::new("f.toml"), text, 8..11);
        assert_eq!((loc.line, loc.column, loc.width), (2, 3, 3));
        assert_eq!(loc.line_text, "  bee = 2");
    }

    #[test]
    fn rendering_shows_path_line_caret_and_notes() {
        let text = "descriptio = \"x\"\n";
        let err = InputError::new("unknown key `descriptio`")
            .at(Location::from_span(
                Path::new("variants/cpu.toml"),
                text,
                0..10,
            ))
            .allowed("descriptio", &["description", "python"]);
        let shown = err.to_string();
        assert!(shown.contains("--> variants/cpu.toml:1:1"), "{shown}");
        assert!(shown.contains("^^^^^^^^^^"), "{shown}");
        assert!(shown.contains("did you mean `description`?"), "{shown}");
        assert!(shown.contains("allowed: description, python"), "{shown}");
    }

    #[test]
    fn a_long_line_is_cut_around_the_column_and_control_characters_are_not_printed() {
        let text = format!("x = {}\u{1b}[2J{}", "[".repeat(50_000), "]".repeat(50_000));
        let at = 4 + 30_000;
        let e = InputError::new("too deep").at(Location::from_span(
            Path::new("v.toml"),
            &text,
            at..at + 1,
        ));
        let shown = e.to_string();
        assert!(shown.len() < 1_000, "{}", shown.len());
        assert!(shown.contains("v.toml:1:30005"), "{shown}");
        let lines: Vec<&str> = shown.lines().collect();
        let (line, caret) = (lines[3], lines[4]);
        assert!(
            line.starts_with("1 | …[[[") && line.ends_with("[[…"),
            "{line}"
        );
        assert_eq!(caret.find('^').unwrap(), "1 | ".len() + 81, "{caret}");
        let escaped = InputError::new("x")
            .at(Location::line(Path::new("s"), "a\u{1b}[2Jb\r", 1))
            .to_string();
        assert!(
            !escaped.contains('\u{1b}') && escaped.contains("a?[2Jb"),
            "{escaped}"
        );
    }

    #[test]
    fn printable_escapes_control_characters_but_keeps_lines() {
        assert_eq!(printable("a\nb\tc"), "a\nb\tc");
        assert_eq!(printable("x\u{1b}[2J\ry\u{7}"), "x\\u{1b}[2J\\ry\\u{7}");
    }

    #[test]
    fn quoted_values_stay_on_one_line_and_are_cut() {
        assert_eq!(quoted("v1\n\u{1b}"), "`v1\\n\\u{1b}`");
        let long = quoted(&"x".repeat(5_000));
        assert!(
            long.ends_with("…` (5000 characters)") && long.len() < 100,
            "{long}"
        );
    }

    #[test]
    fn did_you_mean_ignores_far_candidates() {
        assert_eq!(did_you_mean("cpuu", &["cpu", "cuda"]), Some("cpu"));
        assert_eq!(did_you_mean("zzzzzz", &["cpu", "cuda"]), None);
        assert_eq!(
            did_you_mean("rocm-gfx101", &["rocm", "rocm-gfx1010"]),
            Some("rocm-gfx1010")
        );
    }
}
