//! One seam per command: a file of `xtask/src/cmd/` holds its flags and one call into the
//! file of the same name in a crate's `src/commands/`, which holds the request and all of the
//! command's output; the stages below return values and say progress through the `Reporter`
//! the command hands down, and print nothing themselves (docs/ARCHITECTURE.md, "One seam per
//! command").

use std::collections::BTreeMap;
use std::fs;

use crate::common::repo_root;
use crate::common::source_scan::{CodeLine, code_lines};

/// What prints, or reaches a standard stream, in code.
const PRINTS: [&str; 10] = [
    "println!",
    "eprintln!",
    "print!",
    "eprint!",
    "dbg!",
    "outln!",
    "out!",
    "stdout()",
    "stderr()",
    "Reporter::std()",
];

/// The one module below the commands that writes to the standard streams: the reporter.
const THE_REPORTER: &str = "crates/support/src/report.rs";

/// The binary's files that may print: its error messages (`main.rs`, where the one
/// `Reporter::std()` is made).
const THE_BINARY_PRINTS: [&str; 1] = ["xtask/src/main.rs"];

/// `token` in `line` as a name of its own (not the end of a longer one: `stdout()` is not
/// `child_stdout()` nor a method `probe.stdout()`, `out!` is not `layout!`), outside a string
/// literal.
fn names(line: &str, token: &str) -> bool {
    let code = line.split('"').step_by(2).collect::<Vec<_>>().join("\"\"");
    code.match_indices(token).any(|(at, _)| {
        code[..at]
            .chars()
            .last()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '.'))
    })
}

fn is_command_file(file: &str) -> bool {
    file.starts_with("crates/") && file.contains("/src/commands/")
}

fn printing(lines: &[CodeLine]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| !is_command_file(&l.file) && l.file != THE_REPORTER)
        .filter(|l| !THE_BINARY_PRINTS.contains(&l.file.as_str()))
        .filter_map(|l| {
            let token = PRINTS.iter().find(|t| names(&l.text, t))?;
            Some(format!(
                "{}:{}: {token}: {}",
                l.file,
                l.number,
                l.text.trim()
            ))
        })
        .collect()
}

#[test]
fn no_stage_module_prints() {
    let found = printing(&code_lines(&["crates", "xtask/src"]));
    assert!(
        found.is_empty(),
        "code below the commands that prints or reaches a standard stream: return the value \
         to the command (crates/<crate>/src/commands/<name>.rs) or say it through the \
         `&Reporter` it hands down:\n{}",
        found.join("\n")
    );
}

/// The scan itself: each form is found, and names that merely end alike, strings and test
/// modules are not.
#[test]
fn the_print_scan_finds_each_form_and_nothing_else() {
    let line = |file: &str, text: &str| CodeLine {
        file: file.into(),
        number: 1,
        text: text.into(),
    };
    let stage = "crates/pipeline/src/plan/x.rs";
    let caught: Vec<CodeLine> = [
        "println!(\"a\");",
        "    eprintln!(\"{x}\");",
        "print!(\"no newline\")",
        "eprint!(\"e\")",
        "dbg!(x);",
        "outln!(\"{}\", x)?;",
        "ct2v_support::out!(\"{x}\")?;",
        "let mut w = std::io::stdout();",
        "if io::stderr().is_terminal() {",
        "let r = Reporter::std();",
    ]
    .iter()
    .map(|t| line(stage, t))
    .collect();
    assert_eq!(
        printing(&caught).len(),
        PRINTS.len(),
        "{:?}",
        printing(&caught)
    );
    let passed: Vec<CodeLine> = [
        line(stage, "let layout!(x);"),
        line(stage, "child.child_stdout()"),
        line(stage, "let out = probe.stdout().map(str::to_string);"),
        line(stage, "cmd.stdout(Stdio::piped())"),
        line(stage, "let s = \"println!(no)\";"),
        line(stage, "reporter.say(format_args!(\"{x}\"));"),
        line(
            "crates/pipeline/src/commands/fetch.rs",
            "println!(\"ok here\")",
        ),
        line(THE_REPORTER, "writeln!(io::stderr().lock(), \"{line}\")"),
        line("xtask/src/main.rs", "Reporter::std()"),
    ]
    .into_iter()
    .collect();
    assert_eq!(printing(&passed), Vec::<String>::new());
}

/// `(crate, command file stem)` of every `crates/*/src/commands/*.rs`.
fn command_files() -> Vec<(String, String)> {
    let mut found = Vec::new();
    for krate in fs::read_dir(repo_root().join("crates")).unwrap().flatten() {
        let Ok(files) = fs::read_dir(krate.path().join("src/commands")) else {
            continue;
        };
        for file in files.flatten() {
            let name = file.file_name().to_string_lossy().into_owned();
            if let Some(stem) = name.strip_suffix(".rs").filter(|s| *s != "mod") {
                found.push((
                    krate.file_name().to_string_lossy().into_owned(),
                    stem.into(),
                ));
            }
        }
    }
    found
}

#[test]
fn every_command_has_its_commands_file_of_the_same_name_and_no_other() {
    let mut cmds: Vec<String> = fs::read_dir(repo_root().join("xtask/src/cmd"))
        .unwrap()
        .flatten()
        .filter_map(|f| {
            let name = f.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".rs")
                .filter(|s| *s != "mod")
                .map(str::to_string)
        })
        .collect();
    cmds.sort();
    assert!(cmds.len() >= 18, "{cmds:?}");
    let mut crates_of: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (krate, stem) in command_files() {
        crates_of.entry(stem).or_default().push(krate);
    }
    let problems: Vec<String> = cmds
        .iter()
        .filter_map(|cmd| match crates_of.get(cmd).map(Vec::as_slice) {
            Some([_]) => None,
            None => Some(format!(
                "xtask/src/cmd/{cmd}.rs has no crates/*/src/commands/{cmd}.rs"
            )),
            Some(many) => Some(format!(
                "`{cmd}` is in the commands/ of {}",
                many.join(", ")
            )),
        })
        .chain(
            crates_of
                .keys()
                .filter(|stem| !cmds.contains(stem))
                .map(|stem| format!("commands/{stem}.rs has no xtask/src/cmd/{stem}.rs")),
        )
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A command's file calls into its crate's `commands/` by the same name, and says first what
/// the command is; no stage file's first line says it is a command.
#[test]
fn each_binary_command_calls_its_commands_file_and_only_that_file_says_it_is_the_command() {
    let mut problems = Vec::new();
    for (krate, stem) in command_files() {
        let cmd = fs::read_to_string(repo_root().join(format!("xtask/src/cmd/{stem}.rs")))
            .unwrap_or_default();
        let path = format!("ct2v_{krate}::commands::{stem}");
        if !cmd.contains(&path) {
            problems.push(format!("xtask/src/cmd/{stem}.rs does not call {path}"));
        }
        let own = format!("crates/{krate}/src/commands/{stem}.rs");
        let text = fs::read_to_string(repo_root().join(&own)).unwrap();
        let shown = stem.replace('_', "-");
        let says = |head: String| text.starts_with(&head);
        if !says(format!("//! `{shown}`")) && !says(format!("//! `{shown} ")) {
            problems.push(format!("{own} does not start with \"//! `{shown}`\""));
        }
    }
    let stems: Vec<String> = command_files()
        .into_iter()
        .map(|(_, s)| s.replace('_', "-"))
        .collect();
    for line in first_lines_of_stage_files() {
        let said = stems.iter().find(|s| {
            line.text.starts_with(&format!("//! `{s}`:"))
                || line.text.starts_with(&format!("//! `cargo xtask {s}`"))
        });
        if let Some(said) = said {
            problems.push(format!(
                "{}: its first line says it is `{said}`; that is commands/, say what this stage does",
                line.file
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The first line of every stage file below `crates/` (not commands/, not tests).
fn first_lines_of_stage_files() -> Vec<CodeLine> {
    let mut files = Vec::new();
    crate::common::rust_files(&repo_root().join("crates"), &mut files);
    files
        .into_iter()
        .filter_map(|path| {
            let file = path
                .strip_prefix(repo_root())
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let stage = !is_command_file(&file) && !file.contains("/tests/");
            let first = fs::read_to_string(&path).ok()?.lines().next()?.to_string();
            stage.then_some(CodeLine {
                file,
                number: 1,
                text: first,
            })
        })
        .collect()
}
