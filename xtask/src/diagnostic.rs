//! Errors in user input (variant files, patch series, command-line values), rendered as one
//! screen that names the file, line, column and key, and what would be allowed instead.

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
    pub column: usize,
    pub line_text: String,
    pub width: usize,
}

impl Location {
    /// `span` is a byte range into `text`, as the TOML parser reports it.
    pub fn from_span(path: &Path, text: &str, span: Range<usize>) -> Location {
        let start = span.start.min(text.len());
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        let line = text[..start].matches('\n').count() + 1;
        let column = text[line_start..start].chars().count() + 1;
        let end = span.end.clamp(start, line_end);
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
            writeln!(f, "{pad} |")?;
            writeln!(f, "{number} | {}", loc.line_text)?;
            writeln!(
                f,
                "{pad} | {}{}",
                " ".repeat(loc.column - 1),
                "^".repeat(loc.width)
            )?;
        }
        for note in &self.notes {
            writeln!(f, "  = {note}")?;
        }
        Ok(())
    }
}

impl std::error::Error for InputError {}

/// The closest candidate to `wrong`, if it is close enough to be a likely typo.
pub fn did_you_mean<'a>(wrong: &str, candidates: &[&'a str]) -> Option<&'a str> {
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
    fn did_you_mean_ignores_far_candidates() {
        assert_eq!(did_you_mean("cpuu", &["cpu", "cuda"]), Some("cpu"));
        assert_eq!(did_you_mean("zzzzzz", &["cpu", "cuda"]), None);
        assert_eq!(
            did_you_mean("rocm-gfx101", &["rocm", "rocm-gfx1010"]),
            Some("rocm-gfx1010")
        );
    }
}
