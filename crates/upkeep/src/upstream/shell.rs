//! A tolerant reader of CTranslate2's `prepare_build_environment_*.sh`: logical lines
//! (backslash continuations joined, heredoc bodies set apart), shell words (quotes, `$VAR`,
//! `${VAR}`, `$(…)`), and the plain assignments of the same script to resolve variables
//! with. Anything it cannot evaluate (a command's output, two different assignments, an
//! expansion operator, a variable the script never assigns) is an error saying so.

use std::collections::BTreeSet;

/// A piece of a shell word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Part {
    Lit(String),
    /// `$NAME` or `${NAME}`.
    Var(String),
    /// `${NAME:-x}` and the like: kept as written.
    Expansion(String),
    /// `$(…)` or `` `…` ``.
    Command(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Token {
    Word(Vec<Part>),
    /// `;`, `&&`, `||`, `|`, `&`.
    Op,
}

/// Backslash-continued lines joined: `first..=last` are 1-based physical lines.
#[derive(Debug, Clone)]
pub(crate) struct Logical {
    pub first: usize,
    pub last: usize,
    pub text: String,
    pub tokens: Vec<Token>,
}

#[derive(Debug, Clone)]
struct Assignment {
    name: String,
    value: Vec<Part>,
    line: usize,
}

/// One script, read.
#[derive(Debug)]
pub(crate) struct Script {
    pub file: String,
    /// The lines the shell runs (heredoc bodies are not among them).
    pub lines: Vec<Logical>,
    /// Heredoc bodies: (first, last) physical lines, and their text.
    pub(crate) heredocs: Vec<(usize, usize, String)>,
    assignments: Vec<Assignment>,
    /// Assignments found inside heredocs, for saying why a variable is not assigned.
    heredoc_assignments: Vec<(String, usize)>,
}

/// A value resolved, with the lines of the assignments it came through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resolved {
    pub text: String,
    pub(crate) origins: Vec<usize>,
}

impl Script {
    pub(super) fn parse(file: &str, text: &str) -> Script {
        let mut lines = Vec::new();
        let mut heredocs = Vec::new();
        let physical: Vec<&str> = text.lines().collect();
        let mut i = 0;
        while i < physical.len() {
            let first = i + 1;
            let mut joined = String::new();
            loop {
                let line = physical[i].trim_end_matches('\r');
                i += 1;
                match line.strip_suffix('\\') {
                    Some(head) if i < physical.len() => {
                        joined.push_str(head);
                        joined.push(' ');
                    }
                    _ => {
                        joined.push_str(line);
                        break;
                    }
                }
            }
            let last = i;
            let delimiter = heredoc_delimiter(&joined);
            lines.push(Logical {
                first,
                last,
                tokens: tokens(&joined),
                text: joined,
            });
            if let Some(delimiter) = delimiter {
                let start = i + 1;
                let mut body = String::new();
                while i < physical.len() && physical[i].trim() != delimiter {
                    body.push_str(physical[i]);
                    body.push('\n');
                    i += 1;
                }
                heredocs.push((start, i, body));
                i += 1; // the delimiter line
            }
        }
        let assignments = lines.iter().flat_map(assignments_of).collect();
        let mut heredoc_assignments = Vec::new();
        for (start, _, body) in &heredocs {
            for (n, line) in body.lines().enumerate() {
                for a in assignments_of(&Logical {
                    first: start + n,
                    last: start + n,
                    text: line.to_string(),
                    tokens: tokens(line),
                }) {
                    heredoc_assignments.push((a.name, a.line));
                }
            }
        }
        Script {
            file: file.to_string(),
            lines,
            heredocs,
            assignments,
            heredoc_assignments,
        }
    }

    /// The heredoc whose body has a line containing `needle`, as "lines a-b".
    pub(crate) fn in_heredoc(&self, needle: &str) -> Option<(usize, usize)> {
        self.heredocs
            .iter()
            .find(|(_, _, body)| body.contains(needle))
            .map(|(a, b, _)| (*a, *b))
    }

    /// Resolves a word from the script's plain assignments.
    pub(super) fn resolve(&self, parts: &[Part]) -> Result<Resolved, String> {
        self.resolve_depth(parts, 0)
    }

    fn resolve_depth(&self, parts: &[Part], depth: usize) -> Result<Resolved, String> {
        let mut out = Resolved {
            text: String::new(),
            origins: Vec::new(),
        };
        for part in parts {
            match part {
                Part::Lit(text) => out.text.push_str(text),
                Part::Command(command) => {
                    return Err(format!("`{command}` is the output of a command"));
                }
                Part::Expansion(text) => {
                    return Err(format!(
                        "`{text}` is an expansion this reader does not evaluate"
                    ));
                }
                Part::Var(name) => {
                    let value = self.variable(name, depth)?;
                    out.text.push_str(&value.text);
                    out.origins.extend(value.origins);
                }
            }
        }
        Ok(out)
    }

    /// The value of `$name` from the script's own plain assignments.
    pub(super) fn variable(&self, name: &str, depth: usize) -> Result<Resolved, String> {
        if depth > 8 {
            return Err(format!("`${name}` refers to itself"));
        }
        let found: Vec<&Assignment> = self.assignments.iter().filter(|a| a.name == name).collect();
        let Some(first) = found.first() else {
            if let Some((_, line)) = self.heredoc_assignments.iter().find(|(n, _)| n == name) {
                return Err(format!(
                    "`${name}` is assigned only inside a heredoc (line {line}), which this \
                     script does not run"
                ));
            }
            return Err(format!("`${name}` is not assigned in this script"));
        };
        let values: BTreeSet<String> = found.iter().map(|a| format!("{:?}", a.value)).collect();
        if values.len() > 1 {
            let lines: Vec<String> = found.iter().map(|a| a.line.to_string()).collect();
            return Err(format!(
                "`${name}` is assigned different values (lines {})",
                lines.join(", ")
            ));
        }
        if let Some(Part::Command(command)) =
            first.value.iter().find(|p| matches!(p, Part::Command(_)))
        {
            return Err(format!(
                "`${name}` is set from a command (line {}): `{command}`",
                first.line
            ));
        }
        let mut value = self
            .resolve_depth(&first.value, depth + 1)
            .map_err(|why| format!("`${name}` (line {}): {why}", first.line))?;
        value.origins.insert(0, first.line);
        Ok(value)
    }

    /// Each command of the script that starts with `program` (`cmake`, `pip`), as its
    /// logical line and the words of that command.
    pub(super) fn commands<'s>(&'s self, program: &str) -> Vec<(&'s Logical, Vec<&'s [Part]>)> {
        let mut found = Vec::new();
        for line in &self.lines {
            for command in line.tokens.split(|t| *t == Token::Op) {
                let words: Vec<&[Part]> = command
                    .iter()
                    .filter_map(|t| match t {
                        Token::Word(parts) => Some(parts.as_slice()),
                        Token::Op => None,
                    })
                    .skip_while(|w| is_keyword(w) || assignment(w).is_some())
                    .collect();
                if words.first().and_then(|w| literal(w)) == Some(program) {
                    found.push((line, words));
                }
            }
        }
        found
    }

    /// The script's words (every command's) that contain `needle` in their literal parts.
    pub(crate) fn words_with<'s>(&'s self, needle: &str) -> Vec<(&'s Logical, &'s [Part])> {
        let mut found = Vec::new();
        for line in &self.lines {
            for token in &line.tokens {
                if let Token::Word(parts) = token
                    && written(parts).contains(needle)
                {
                    found.push((line, parts.as_slice()));
                }
            }
        }
        found
    }

    /// Comment text of the script (`# Install CUDA 12.8:`), with its line.
    pub(super) fn comments(&self) -> impl Iterator<Item = (usize, &str)> {
        self.lines.iter().filter_map(|l| {
            let t = l.text.trim_start();
            t.strip_prefix('#').map(|c| (l.first, c.trim()))
        })
    }
}

/// A word as written, with its variables (`${X}`), for messages and searching.
pub(super) fn written(parts: &[Part]) -> String {
    parts
        .iter()
        .map(|p| match p {
            Part::Lit(t) => t.clone(),
            Part::Var(n) => format!("${{{n}}}"),
            Part::Expansion(t) => t.clone(),
            Part::Command(c) => c.clone(),
        })
        .collect()
}

/// The word's text when it has no expansions.
fn literal(parts: &[Part]) -> Option<&str> {
    match parts {
        [Part::Lit(t)] => Some(t),
        _ => None,
    }
}

fn is_keyword(parts: &[Part]) -> bool {
    matches!(
        literal(parts),
        Some("then" | "else" | "do" | "{" | "export" | "sudo" | "time")
    )
}

/// `NAME=value`: the name and the value's parts.
fn assignment(parts: &[Part]) -> Option<(String, Vec<Part>)> {
    let Some(Part::Lit(head)) = parts.first() else {
        return None;
    };
    let (name, rest) = head.split_once('=')?;
    let valid = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return None;
    }
    let mut value = Vec::new();
    if !rest.is_empty() {
        value.push(Part::Lit(rest.to_string()));
    }
    value.extend(parts[1..].iter().cloned());
    Some((name.to_string(), value))
}

/// The assignments that start a command (`X=1`, `export X=1`, `X=1 Y=2`).
fn assignments_of(line: &Logical) -> Vec<Assignment> {
    let mut found = Vec::new();
    for command in line.tokens.split(|t| *t == Token::Op) {
        let mut words = command.iter().filter_map(|t| match t {
            Token::Word(parts) => Some(parts.as_slice()),
            Token::Op => None,
        });
        let mut exported = false;
        for word in words.by_ref() {
            if matches!(literal(word), Some("then" | "else" | "do" | "{")) {
                continue;
            }
            if matches!(literal(word), Some("export" | "readonly" | "local")) {
                exported = true;
                continue;
            }
            match assignment(word) {
                Some((name, value)) => found.push(Assignment {
                    name,
                    value,
                    line: line.first,
                }),
                None if exported => continue,
                None => break,
            }
        }
    }
    found
}

/// `<<EOF`, `<<-EOF`, `<< 'EOF'`, `<<"EOF"`: the delimiter (not `<<<`, a here-string).
fn heredoc_delimiter(line: &str) -> Option<String> {
    let at = line.find("<<")?;
    let rest = &line[at + 2..];
    if rest.starts_with('<') {
        return None;
    }
    let rest = rest.trim_start_matches('-').trim_start();
    let word: String = rest
        .chars()
        .take_while(|c| !c.is_whitespace() && !matches!(c, ';' | '|' | '&' | ')'))
        .filter(|c| !matches!(c, '\'' | '"'))
        .collect();
    (!word.is_empty()).then_some(word)
}

/// Splits a logical line into words and operators, as the shell does (no globbing, no
/// word splitting of expansions).
pub(super) fn tokens(line: &str) -> Vec<Token> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = Vec::new();
    let mut word: Vec<Part> = Vec::new();
    let mut started = false;
    let mut i = 0;
    let push_lit = |word: &mut Vec<Part>, c: &str| match word.last_mut() {
        Some(Part::Lit(t)) => t.push_str(c),
        _ => word.push(Part::Lit(c.to_string())),
    };
    let end_word = |out: &mut Vec<Token>, word: &mut Vec<Part>, started: &mut bool| {
        if *started {
            out.push(Token::Word(std::mem::take(word)));
        }
        *started = false;
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' => {
                end_word(&mut out, &mut word, &mut started);
                i += 1;
            }
            '#' if !started => break,
            ';' | '|' | '&' => {
                end_word(&mut out, &mut word, &mut started);
                out.push(Token::Op);
                i += 1;
                while i < chars.len() && matches!(chars[i], '|' | '&') {
                    i += 1;
                }
            }
            '\'' => {
                started = true;
                let end = chars[i + 1..]
                    .iter()
                    .position(|&c| c == '\'')
                    .map_or(chars.len(), |p| i + 1 + p);
                let text: String = chars[i + 1..end].iter().collect();
                push_lit(&mut word, &text);
                i = end + 1;
            }
            '"' => {
                started = true;
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\'
                        && i + 1 < chars.len()
                        && matches!(chars[i + 1], '"' | '\\' | '$' | '`')
                    {
                        push_lit(&mut word, &chars[i + 1].to_string());
                        i += 2;
                    } else if matches!(chars[i], '$' | '`') {
                        i = expansion(&chars, i, &mut word);
                    } else {
                        push_lit(&mut word, &chars[i].to_string());
                        i += 1;
                    }
                }
                i += 1;
            }
            '\\' => {
                started = true;
                if let Some(next) = chars.get(i + 1) {
                    push_lit(&mut word, &next.to_string());
                }
                i += 2;
            }
            '$' | '`' => {
                started = true;
                i = expansion(&chars, i, &mut word);
            }
            _ => {
                started = true;
                push_lit(&mut word, &c.to_string());
                i += 1;
            }
        }
    }
    end_word(&mut out, &mut word, &mut started);
    out
}

/// Reads the expansion at `chars[i]` (`$` or a backquote) into `word`; returns the index after it.
fn expansion(chars: &[char], i: usize, word: &mut Vec<Part>) -> usize {
    let rest = |from: usize, close: char, open: Option<char>| {
        let mut depth = 1;
        let mut j = from;
        while j < chars.len() {
            if Some(chars[j]) == open {
                depth += 1;
            } else if chars[j] == close {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            j += 1;
        }
        j
    };
    if chars[i] == '`' {
        let end = rest(i + 1, '`', None);
        word.push(Part::Command(
            chars[i..(end + 1).min(chars.len())].iter().collect(),
        ));
        return end + 1;
    }
    match chars.get(i + 1) {
        Some('(') => {
            let end = rest(i + 2, ')', Some('('));
            word.push(Part::Command(
                chars[i..(end + 1).min(chars.len())].iter().collect(),
            ));
            end + 1
        }
        Some('{') => {
            let end = rest(i + 2, '}', Some('{'));
            let inner: String = chars[i + 2..end.min(chars.len())].iter().collect();
            if inner.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !inner.is_empty() {
                word.push(Part::Var(inner));
            } else {
                word.push(Part::Expansion(format!("${{{inner}}}")));
            }
            end + 1
        }
        Some(c) if c.is_ascii_alphabetic() || *c == '_' => {
            let mut j = i + 1;
            while j < chars.len() && (chars[j].is_ascii_alphanumeric() || chars[j] == '_') {
                j += 1;
            }
            word.push(Part::Var(chars[i + 1..j].iter().collect()));
            j
        }
        _ => {
            match word.last_mut() {
                Some(Part::Lit(t)) => t.push('$'),
                _ => word.push(Part::Lit("$".into())),
            }
            i + 1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        tokens(line)
            .iter()
            .map(|t| match t {
                Token::Word(p) => written(p),
                Token::Op => ";".into(),
            })
            .collect()
    }

    #[test]
    fn words_quotes_and_expansions() {
        assert_eq!(
            words(r#"cmake -DX="a;b" -DY=${V} '$Z' "$(nproc)" # comment"#),
            ["cmake", "-DX=a;b", "-DY=${V}", "$Z", "$(nproc)"]
        );
        assert_eq!(words("a && b; c"), ["a", ";", "b", ";", "c"]);
    }

    #[test]
    fn continuations_join_and_heredocs_are_set_apart() {
        let s = Script::parse(
            "x.sh",
            "A=1\npip install \\\n    \"b==$A\"\ncat <<EOF\nB=2\nEOF\necho $B\n",
        );
        assert_eq!(s.lines.len(), 4);
        assert_eq!((s.lines[1].first, s.lines[1].last), (2, 3));
        assert_eq!(s.heredocs[0].0, 5);
        let (_, pip) = &s.commands("pip")[0];
        assert_eq!(s.resolve(pip[2]).unwrap().text, "b==1");
        let err = s.variable("B", 0).unwrap_err();
        assert!(err.contains("only inside a heredoc (line 5)"), "{err}");
    }

    #[test]
    fn what_is_not_a_plain_assignment_is_said() {
        let s = Script::parse("x.sh", "A=$(date)\nB=1\nB=2\nC=${D:-x}\nE=$E\n");
        assert!(
            s.variable("A", 0)
                .unwrap_err()
                .contains("set from a command")
        );
        assert!(
            s.variable("B", 0)
                .unwrap_err()
                .contains("different values (lines 2, 3)")
        );
        assert!(
            s.variable("C", 0)
                .unwrap_err()
                .contains("does not evaluate")
        );
        assert!(s.variable("E", 0).unwrap_err().contains("refers to itself"));
        assert!(s.variable("F", 0).unwrap_err().contains("not assigned"));
    }
}
