//! `.gitmodules` read as `git config` reads it (git's Documentation/config.txt, "Syntax"):
//! `[section "subsection"]` headers (and the old `[section.subsection]`), keys in any case,
//! values with quotes, escapes, `#`/`;` comments and `\` line continuations, one submodule's
//! keys over several sections. A file git would refuse is refused, naming the line, and so is
//! a submodule whose `path` or `url` is given twice (git warns and takes the first): it is
//! never read some other way than git reads it.

use std::collections::BTreeMap;

/// One submodule: its name (`[submodule "<name>"]`), `path` and `url`, with the lines of
/// `.gitmodules` (from 1) that give them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitModule {
    pub name: String,
    pub path: String,
    pub url: String,
    pub(crate) path_line: usize,
    pub(crate) url_line: usize,
}

/// A value and the line that gives it.
type Given = Option<(String, usize)>;

/// The submodules `text` lists, in the order their sections first come; a section without a
/// `path` is not a submodule (git skips it too). `Err` is `line N: why`.
pub fn parse(text: &str) -> Result<Vec<GitModule>, String> {
    let mut order: Vec<String> = Vec::new();
    let mut keys: BTreeMap<String, (Given, Given)> = BTreeMap::new();
    let mut section: Option<(String, Option<String>)> = None;
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    while let Some((number, line)) = lines.next() {
        let at = |why: String| format!("line {number}: {why}");
        let line = line.trim_start_matches(is_space);
        if line.is_empty() || line.starts_with(['#', ';']) {
            continue;
        }
        if let Some(header) = line.strip_prefix('[') {
            section = Some(section_header(header).map_err(at)?);
            continue;
        }
        let (key, rest) = key_of(line).map_err(at)?;
        let Some((name, subsection)) = &section else {
            return Err(at(format!("`{key}` comes before any [section]")));
        };
        let value = value_of(rest, &mut lines).map_err(at)?;
        let (Some(module), "submodule") = (subsection, name.as_str()) else {
            continue;
        };
        let slot = keys.entry(module.clone()).or_insert_with(|| {
            order.push(module.clone());
            (None, None)
        });
        let given = match key.as_str() {
            "path" => &mut slot.0,
            "url" => &mut slot.1,
            _ => continue,
        };
        if let Some((_, first)) = given {
            return Err(at(format!(
                "submodule.{module}.{key} is given a second time (first on line {first})"
            )));
        }
        *given = Some((value, number));
    }
    let mut modules = Vec::new();
    for name in order {
        let Some((Some((path, path_line)), url)) = keys.remove(&name) else {
            continue;
        };
        let Some((url, url_line)) = url else {
            return Err(format!(
                "line {path_line}: submodule.{name} has a path but no url"
            ));
        };
        modules.push(GitModule {
            name,
            path: path.trim_end_matches('/').to_string(),
            url,
            path_line,
            url_line,
        });
    }
    Ok(modules)
}

/// git's whitespace (`isspace`).
fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\x0b' | '\x0c')
}

/// `name` or `name "subsection"` (after the `[`), up to its `]`: the name in lower case (git's
/// names are not case-sensitive, subsections are).
fn section_header(header: &str) -> Result<(String, Option<String>), String> {
    let name_len = header
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '.'))
        .unwrap_or(header.len());
    let name = header[..name_len].to_ascii_lowercase();
    let rest = header[name_len..].trim_start_matches(is_space);
    let (subsection, rest) = match rest.strip_prefix('"') {
        Some(quoted) => {
            let (subsection, rest) = quoted_subsection(quoted)?;
            (Some(subsection), rest)
        }
        None => (None, rest),
    };
    let rest = rest
        .strip_prefix(']')
        .ok_or("a section header without its closing `]`")?;
    let rest = rest.trim_start_matches(is_space);
    if !(rest.is_empty() || rest.starts_with(['#', ';'])) {
        return Err("something after a section header's `]`".into());
    }
    if name.is_empty() {
        return Err("a section header without a name".into());
    }
    Ok(match (name.split_once('.'), subsection) {
        (Some(_), Some(_)) => {
            return Err("a section name with both a `.` and a \"subsection\"".into());
        }
        // The old `[section.subsection]`: git takes the subsection in lower case.
        (Some((name, old)), None) => (name.to_string(), Some(old.to_string())),
        (None, subsection) => (name, subsection),
    })
}

/// The rest of `"subsection"` after its opening quote: the subsection (`\"` and `\\` are
/// escapes) and what follows its closing quote.
fn quoted_subsection(text: &str) -> Result<(String, &str), String> {
    let mut out = String::new();
    let mut chars = text.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Ok((out, &text[i + 1..])),
            '\\' => match chars.next() {
                Some((_, escaped)) => out.push(escaped),
                None => break,
            },
            c => out.push(c),
        }
    }
    Err("a subsection name without its closing `\"`".into())
}

/// The key at the start of `line` (a letter, then letters, digits and `-`), in lower case,
/// and the rest of the line after its `=` (`None`: no `=`, a key that is true).
fn key_of(line: &str) -> Result<(String, Option<&str>), String> {
    let len = line
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .unwrap_or(line.len());
    let key = &line[..len];
    if !key.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return Err(format!(
            "`{}` is not a key (a key starts with a letter)",
            line.escape_debug()
        ));
    }
    let rest = line[len..].trim_start_matches(is_space);
    let value = if rest.is_empty() || rest.starts_with(['#', ';']) {
        None
    } else {
        Some(
            rest.strip_prefix('=')
                .ok_or_else(|| format!("`{key}` is followed by something other than `=`"))?,
        )
    };
    Ok((key.to_ascii_lowercase(), value))
}

/// A value as git reads it: leading and trailing blanks dropped, each blank inside one space,
/// `"…"` quoting, the escapes `\\` `\"` `\n` `\t` `\b`, a comment from `#` or `;` outside
/// quotes, and a `\` at the end of a line continuing it on the next (taken from `more`).
fn value_of<'a>(
    first: Option<&'a str>,
    more: &mut impl Iterator<Item = (usize, &'a str)>,
) -> Result<String, String> {
    let Some(mut line) = first else {
        return Ok("true".into());
    };
    let mut out = String::new();
    let mut quoted = false;
    let mut blanks = 0;
    loop {
        let mut chars = line.chars();
        let mut continued = false;
        while let Some(c) = chars.next() {
            if !quoted && is_space(c) {
                blanks += usize::from(!out.is_empty());
                continue;
            }
            if !quoted && (c == '#' || c == ';') {
                break;
            }
            out.extend(std::iter::repeat_n(' ', blanks));
            blanks = 0;
            match c {
                '"' => quoted = !quoted,
                '\\' => match chars.next() {
                    None => continued = true,
                    Some('\\') => out.push('\\'),
                    Some('"') => out.push('"'),
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some('b') => out.push('\u{8}'),
                    Some(other) => {
                        return Err(format!(
                            "`\\{}` is not an escape git knows",
                            other.escape_debug()
                        ));
                    }
                },
                c => out.push(c),
            }
        }
        if !continued {
            break;
        }
        line = match more.next() {
            Some((_, next)) => next,
            None => return Err("a `\\` continues the value past the end of the file".into()),
        };
    }
    if quoted {
        return Err("a value whose `\"` is not closed".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gitmodules_are_read_as_git_reads_them() {
        let text = "# c\n[submodule \"third_party/ruy\"]\n\tpath = third_party/ruy\n\turl = https://github.com/google/ruy.git\n\
                    [submodule \"x\"] ; here\n\tPath = \"a/b\" # c\n\tURL = git@github.com:o/r.git ; c\n\
                    [core]\n\tpath = no\n\tbare\n\
                    [submodule.Y]\n\tpath = \"sp  ace\"  d\\\"q\\\\ e\n\
                    [submodule \"y\"]\n\turl = https://github.com/o/\\\n  y\n\
                    [Submodule \"z\"]\n\tpath = z/\n\turl = https://github.com/o/z\n\
                    [submodule \"no-path\"]\n\turl = https://github.com/o/n\n";
        let m = parse(text).unwrap();
        let got: Vec<(&str, &str, &str)> = m
            .iter()
            .map(|m| (m.name.as_str(), m.path.as_str(), m.url.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "third_party/ruy",
                    "third_party/ruy",
                    "https://github.com/google/ruy.git"
                ),
                ("x", "a/b", "git@github.com:o/r.git"),
                ("y", "sp  ace  d\"q\\ e", "https://github.com/o/  y"),
                ("z", "z", "https://github.com/o/z"),
            ]
        );
        assert_eq!((m[1].path_line, m[1].url_line), (6, 7));
        assert!(parse("").unwrap().is_empty());
    }

    #[test]
    fn what_git_would_not_read_is_refused_naming_the_line() {
        for (text, at) in [
            (
                "[submodule \"x\"]\n\tpath = \"a\n",
                "line 2: a value whose `\"` is not closed",
            ),
            (
                "[submodule \"x\"\n",
                "line 1: a section header without its closing `]`",
            ),
            (
                "[submodule \"x]\n",
                "line 1: a subsection name without its closing",
            ),
            ("[submodule \"x\"] path = a\n", "line 1: something after"),
            (
                "[submodule \"x\"]\n\tpath = a\\qb\n",
                "line 2: `\\q` is not an escape",
            ),
            (
                "[submodule \"x\"]\n\t?path = a\n",
                "line 2: `?path = a` is not a key",
            ),
            (
                "[submodule \"x\"]\n\tpath a\n",
                "line 2: `path` is followed by something",
            ),
            ("path = a\n", "line 1: `path` comes before any [section]"),
            (
                "[submodule \"x\"]\n\turl = a\\\n",
                "line 2: a `\\` continues the value past",
            ),
            (
                "[submodule \"x\"]\n\tpath = a\n\tPATH = ../b\n",
                "line 3: submodule.x.path is given a second time (first on line 2)",
            ),
            (
                "[submodule \"x\"]\n\tpath = a\n",
                "line 2: submodule.x has a path but no url",
            ),
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.starts_with(at), "{text:?}: {err}");
        }
    }
}
