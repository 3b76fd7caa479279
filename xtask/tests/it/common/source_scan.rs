//! The workspace's own Rust code read as text, for tests that hold a rule over all of it.

use std::fs;
use std::path::Path;

use super::{repo_root, rust_files};

/// One line of code that is not a test: its file (relative, with `/`), number and text.
pub struct CodeLine {
    pub file: String,
    pub number: usize,
    pub text: String,
}

/// Every line of code below `roots` (relative to the checkout) that is not a test and not a
/// comment: files under `tests/` or `benches/` and `tests.rs` are left out, and so is each
/// file's unit-test module at its end.
pub fn code_lines(roots: &[&str]) -> Vec<CodeLine> {
    let mut files = Vec::new();
    for root in roots {
        rust_files(&repo_root().join(root), &mut files);
    }
    assert!(files.len() > 100, "the scan found {} files", files.len());
    let mut lines = Vec::new();
    for path in files {
        let file = relative(&path);
        if file.contains("/tests/") || file.ends_with("/tests.rs") || file.contains("/benches/") {
            continue;
        }
        let text = fs::read_to_string(&path).unwrap();
        for (n, line) in code_before_tests(&text).enumerate() {
            if !line.trim_start().starts_with("//") {
                lines.push(CodeLine {
                    file: file.clone(),
                    number: n + 1,
                    text: line.to_string(),
                });
            }
        }
    }
    lines
}

fn relative(path: &Path) -> String {
    path.strip_prefix(repo_root())
        .unwrap()
        .to_string_lossy()
        .replace('\\', "/")
}

/// The lines of a source file before its unit tests, which sit at the end in a module under
/// `#[cfg(test)]` (or `#[cfg(all(test, unix))]`).
pub fn code_before_tests(text: &str) -> impl Iterator<Item = &str> {
    let lines: Vec<&str> = text.lines().collect();
    let end = (0..lines.len())
        .find(|&i| {
            lines[i].starts_with("#[cfg(")
                && lines[i].contains("test")
                && lines.get(i + 1).is_some_and(|next| {
                    let item = next
                        .trim_start_matches("pub(crate) ")
                        .trim_start_matches("pub ");
                    item.starts_with("mod ")
                })
        })
        .unwrap_or(lines.len());
    lines.into_iter().take(end)
}
