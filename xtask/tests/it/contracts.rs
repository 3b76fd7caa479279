//! The JSON contracts and the paths the code's comments name: every `--help` that names a
//! schema version names the one its JSON carries (`ct2v_support::contracts`), the JSON carries
//! it, docs/json-contracts.md lists each contract as the module does, and every repository
//! path a doc comment or a workflow comment names is there.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::{repo_root, xtask};
use ct2v_support::contracts::{ALL, Contract};

/// The subcommands `--help` lists.
fn commands() -> Vec<String> {
    let help = xtask(&["--help"]).stdout;
    help.lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

/// Every `schema_version N` a text names.
fn versions_named(text: &str) -> Vec<u32> {
    text.match_indices("schema_version ")
        .filter_map(|(at, word)| {
            let digits: String = text[at + word.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().ok()
        })
        .collect()
}

#[test]
fn every_help_naming_a_schema_version_names_the_one_its_json_carries() {
    let mut checked = 0;
    for command in commands() {
        let contracts: Vec<&Contract> = ALL
            .iter()
            .filter(|c| c.help_of.contains(&command.as_str()))
            .collect();
        for flag in ["--help", "-h"] {
            let help = xtask(&[command.as_str(), flag]).stdout;
            let named = versions_named(&help);
            if contracts.is_empty() {
                assert!(
                    named.is_empty(),
                    "`{command} {flag}` names a schema version of no contract: {named:?}"
                );
                continue;
            }
            assert!(
                !named.is_empty(),
                "`{command} {flag}` no longer names its schema version"
            );
            for version in named {
                assert!(
                    contracts.iter().any(|c| c.schema_version == version),
                    "`{command} {flag}` says schema_version {version}; it writes {:?}",
                    contracts
                        .iter()
                        .map(|c| c.schema_version)
                        .collect::<Vec<_>>()
                );
                checked += 1;
            }
        }
    }
    assert!(
        checked >= 4,
        "only {checked} versions were found in the help texts"
    );
}

#[test]
fn the_json_of_plan_and_variants_carries_the_contracts_version() {
    let plan_args = "plan --variant cpu --platform linux-x86_64 --python 3.12 --json";
    let plan = xtask(&plan_args.split(' ').collect::<Vec<_>>());
    let variants = xtask(&["variants", "--json"]);
    for (run, version) in [
        (plan, ct2v_support::contracts::PLAN),
        (variants, ct2v_support::contracts::VARIANTS),
    ] {
        assert_eq!(run.code, 0, "{}", run.stderr);
        let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        assert_eq!(json["schema_version"], version);
    }
}

/// docs/json-contracts.md's table, row by row, as `contracts::ALL` has it.
#[test]
fn the_contracts_page_lists_each_contract_as_the_module_does() {
    let root = repo_root();
    let page = fs::read_to_string(root.join("docs/json-contracts.md")).unwrap();
    let rows: Vec<Vec<String>> = page
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| contract"))
        .map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect();
    assert_eq!(rows.len(), ALL.len(), "{rows:?}");
    for (row, contract) in rows.iter().zip(ALL) {
        let carried = if contract.carried { "yes" } else { "no" };
        let doc = if contract.doc == "docs/json-contracts.md" {
            "below"
        } else {
            contract.doc
        };
        assert_eq!(
            row,
            &[
                contract.name,
                contract.written_by,
                &contract.schema_version.to_string(),
                carried,
                doc
            ],
        );
        assert!(root.join(contract.doc).is_file(), "{}", contract.doc);
    }
}

/// The folders a path of this repository starts with.
const TOP: [&str; 7] = [
    "crates/",
    "xtask/",
    "docs/",
    ".github/",
    "variants/",
    "patches/",
    "scripts/",
];

/// Every path of this repository that `comment` names (`before`: the comment line above): a
/// word starting with one of [`TOP`], less a pattern (`*`, `{…}`, `<…>`) and one cited from
/// another repository: an `owner/repo` among the three words before it, the way the code
/// cites upstream sources (`OpenNMT/CTranslate2 v4.7.1 .github/workflows/ci.yml`).
fn paths_named(comment: &str, before: &str) -> Vec<String> {
    let is_path_char = |c: char| c.is_ascii_alphanumeric() || "_./-".contains(c);
    let mut found = Vec::new();
    for (at, _) in comment.char_indices() {
        let rest = &comment[at..];
        let starts = TOP.iter().any(|t| rest.starts_with(t));
        let joined = comment[..at].chars().next_back().is_some_and(is_path_char);
        if !starts || joined {
            continue;
        }
        let word: String = rest
            .chars()
            .take_while(|c| is_path_char(*c) || "*{}<>".contains(*c))
            .collect();
        let path = word.trim_end_matches(['.', ',', ':', ';']);
        let lead = format!("{before} {}", &comment[..at]);
        let words: Vec<&str> = lead.split_whitespace().collect();
        let cited = cites_another_repository(&words[words.len().saturating_sub(3)..].join(" "));
        if !cited && !path.contains(['*', '{', '}', '<', '>']) {
            found.push(path.to_string());
        }
    }
    found
}

/// Whether `text` names a GitHub repository (`owner/name`) that is not a folder here.
fn cites_another_repository(text: &str) -> bool {
    text.split(|c: char| c.is_whitespace() || "`()'\",".contains(c))
        .any(|word| {
            let word = word
                .trim_end_matches(['.', ':', ';'])
                .trim_end_matches("'s");
            let mut parts = word.split('/');
            let (Some(owner), Some(name), None) = (parts.next(), parts.next(), parts.next()) else {
                return false;
            };
            let part = |p: &str| {
                !p.is_empty()
                    && p.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
            };
            part(owner)
                && part(name)
                && owner
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic())
                && !TOP.iter().any(|t| word.starts_with(t))
                && !repo_root().join(word).exists()
        })
}

fn files_below(dir: &Path, ext: &[&str], into: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() && name != "target" && !name.starts_with('.') || name == ".github" {
            files_below(&path, ext, into);
        } else if ext.iter().any(|e| name.ends_with(e)) {
            into.push(path);
        }
    }
}

/// Every `crates/…`, `xtask/…`, `docs/…`, `.github/…`, `variants/…`, `patches/…` or
/// `scripts/…` path a Rust doc comment (`//!`, `///`) or a workflow's comment names is there.
#[test]
fn every_path_a_doc_comment_or_workflow_comment_names_exists() {
    let root = repo_root();
    let mut files = Vec::new();
    files_below(&root.join("crates"), &[".rs"], &mut files);
    files_below(&root.join("xtask"), &[".rs"], &mut files);
    files_below(&root.join(".github"), &[".yml", ".yaml"], &mut files);
    let mut missing = Vec::new();
    let mut named = 0;
    for file in &files {
        let rust = file.extension().is_some_and(|e| e == "rs");
        let text = fs::read_to_string(file).unwrap();
        let mut before = String::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim_start();
            let comment = match rust {
                true => line
                    .strip_prefix("//!")
                    .or_else(|| line.strip_prefix("///")),
                false => line.strip_prefix('#'),
            };
            let Some(comment) = comment else {
                before.clear();
                continue;
            };
            for path in paths_named(comment, &before) {
                named += 1;
                if !root.join(&path).exists() {
                    let at = file.strip_prefix(&root).unwrap().display();
                    missing.push(format!("{at}:{}: {path}", n + 1));
                }
            }
            before = comment.to_string();
        }
    }
    assert!(named > 100, "only {named} paths found: the scan is broken");
    assert!(
        missing.is_empty(),
        "paths named in comments that are not there:\n{}",
        missing.join("\n")
    );
}

#[test]
fn a_path_cited_from_another_repository_is_not_ours_to_hold() {
    assert_eq!(
        paths_named(" see crates/support/src/lib.rs.", ""),
        ["crates/support/src/lib.rs"]
    );
    assert_eq!(
        paths_named(" (OpenNMT/CTranslate2 `.github/workflows/ci.yml`)", ""),
        Vec::<String>::new()
    );
    assert_eq!(
        paths_named(
            " `.github/actions/install-exe` runs",
            " as ggml-org/llama.cpp's"
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        paths_named(" target/xtask/cache and docs/{a,b}.md", ""),
        Vec::<String>::new()
    );
    assert_eq!(
        paths_named(
            " crates/pipeline/src/sdk/install.rs",
            " each variant/platform pair has its folder, see"
        ),
        ["crates/pipeline/src/sdk/install.rs"]
    );
}
