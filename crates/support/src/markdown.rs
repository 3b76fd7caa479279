//! Text written into Markdown that GitHub renders (release notes, a job summary): a value is
//! shown as the characters it holds, never read as markup. GitHub renders Markdown with
//! cmark-gfm (github/cmark-gfm), then links `@name` mentions and `#123` references in the
//! text outside code (its html-pipeline's MentionFilter skips `code`, `pre` and `a`).
//!
//! - [`code`]: a value as a code span, where CommonMark reads no markup at all (spec 0.29+,
//!   "Code spans": backslash escapes, entities, HTML and links are literal inside), and no
//!   mention is linked.
//! - [`text`], [`paragraph`]: prose, every ASCII punctuation character that can start markup
//!   backslash-escaped ("Backslash escapes": any ASCII punctuation may be), so no heading,
//!   list, emphasis, link, image, raw HTML, entity, table or math starts; an `@` is put in a
//!   code span of its own, so no mention is made.
//!
//! Both write control and invisible characters as escapes (`\u{1b}`, `\n`), so that a value
//! stays on its line (a line break would let the next line start a block) and shows what it
//! holds.

use super::diagnostic::escaped;

/// `value` as one code span: fenced with one backtick more than its longest run of
/// backticks, padded with a space when it starts or ends with one (CommonMark strips one
/// space on each side).
pub fn code(value: &str) -> String {
    if value.is_empty() {
        return "` `".to_string();
    }
    let value = escaped(value);
    let mut longest = 0;
    let mut run = 0;
    for c in value.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let edges = |c: char| value.starts_with(c) || value.ends_with(c);
    let pad = if edges('`') || (value.starts_with(' ') && value.ends_with(' ')) {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{value}{pad}{fence}")
}

/// `value` as plain text inside a line (after other text of a paragraph, a heading or a
/// list item).
pub fn text(value: &str) -> String {
    escaped_text(value, None)
}

/// `value` as plain text that starts a line (a paragraph of its own): [`text`], and a
/// first character that would start a list, a rule or a heading underline (`-`, `+`, `=`,
/// the `.` or `)` of `1. `) escaped too.
pub fn paragraph(value: &str) -> String {
    let value = escaped(value);
    let marker = block_marker_at(&value);
    escaped_text(&value, marker)
}

fn escaped_text(value: &str, marker: Option<usize>) -> String {
    let mut out = String::new();
    for (at, c) in escaped(value).char_indices() {
        match c {
            '@' => out.push_str("`@`"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '#' | '|' | '~' | '&' | '$' | '!' => {
                out.push('\\');
                out.push(c);
            }
            c if Some(at) == marker => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// Where a value put at the start of a line would start a list, a rule or a heading
/// underline: its first character when that is `-`, `+` or `=`, the `.` or `)` after its
/// leading digits when a blank or the end follows (CommonMark's ordered list item).
fn block_marker_at(value: &str) -> Option<usize> {
    if value.starts_with(['-', '+', '=']) {
        return Some(0);
    }
    let digits = value.len() - value.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let after = value[digits..].get(1..).unwrap_or("");
    let item = value[digits..].starts_with(['.', ')'])
        && (after.is_empty() || after.starts_with([' ', '\t']));
    (digits > 0 && item).then_some(digits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_span_holds_any_value_on_one_line() {
        assert_eq!(code("libcublas.so.12"), "`libcublas.so.12`");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x``"), "``` `x`` ```");
        assert_eq!(code("x\n# y\u{1b}[2J"), "`x\\n# y\\u{1b}[2J`");
        assert_eq!(code(""), "` `");
    }

    #[test]
    fn text_escapes_every_punctuation_and_each_mention() {
        assert_eq!(text("a <b> & [c](d)"), "a \\<b\\> \\& \\[c\\](d)");
        assert_eq!(text("hi @everyone"), "hi `@`everyone");
        assert_eq!(text("# x\r\n- y"), "\\# x\\\\r\\\\n- y");
        assert_eq!(text("- x 4.7.1"), "- x 4.7.1");
        assert_eq!(paragraph("- x"), "\\- x");
        assert_eq!(paragraph("+ x"), "\\+ x");
        assert_eq!(paragraph("12. x"), "12\\. x");
        assert_eq!(paragraph("12)"), "12\\)");
        assert_eq!(paragraph("4.7.1 <b>"), "4.7.1 \\<b\\>");
        assert_eq!(
            text("4.7.1-2, see ROCm/x#12 (a)"),
            "4.7.1-2, see ROCm/x\\#12 (a)"
        );
    }
}
