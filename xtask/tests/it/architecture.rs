//! docs/ARCHITECTURE.md held to the tree (the way rust-analyzer's tidy keeps its docs honest):
//! its file list is every source file of the workspace (`crates/*/src`, `xtask/src`) with the
//! first sentence of its module doc, between the `files: begin`/`files: end` markers
//! (`CT2V_UPDATE_ARCHITECTURE=1` rewrites it from the tree); its crate table has a row per
//! workspace member whose "uses" column is that member's `ct2v-*` dependencies; and every
//! repository path its prose names (`crates/…`, `xtask/…`, `docs/…`, `scripts/…`) exists.

use std::fs;
use std::path::Path;

use crate::common::repo_root;

const BEGIN: &str = "<!-- files: begin -->\n";
const END: &str = "<!-- files: end -->";
/// Room for a description on one line of the list.
const DESCRIPTION: usize = 88;

/// Every `.rs` file below `dir`, as paths relative to `src`, sorted (a folder's `mod.rs`, a
/// crate's `lib.rs` first).
fn sources(src: &Path, dir: &Path, out: &mut Vec<String>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort_by_key(|p| {
        let name = p.file_name().unwrap();
        (name != "mod.rs" && name != "lib.rs", p.is_dir(), p.clone())
    });
    for path in entries {
        if path.is_dir() {
            sources(src, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(
                path.strip_prefix(src)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/"),
            );
        }
    }
}

/// The first sentence of a file's `//!` doc, on one line and cut to fit.
fn summary(text: &str) -> String {
    let doc: Vec<&str> = text
        .lines()
        .take_while(|l| l.starts_with("//!"))
        .map(|l| l.trim_start_matches("//!").trim())
        .take_while(|l| !l.is_empty())
        .collect();
    let doc = doc.join(" ");
    let end = doc.find(". ").map_or(doc.len(), |i| i + 1);
    let sentence = doc[..end].trim_end_matches('.');
    if sentence.chars().count() <= DESCRIPTION {
        sentence.to_string()
    } else {
        let cut: String = sentence.chars().take(DESCRIPTION - 1).collect();
        format!("{}…", cut.trim_end())
    }
}

/// The source folders of the workspace: each crate's `src`, the binary's last.
fn source_roots() -> Vec<String> {
    let mut crates: Vec<String> = fs::read_dir(repo_root().join("crates"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("src").is_dir())
        .map(|e| format!("crates/{}/src", e.file_name().to_string_lossy()))
        .collect();
    crates.sort();
    crates.push("xtask/src".to_string());
    crates
}

/// The list as the tree says it should be: paths from the repository root.
fn expected() -> (Vec<String>, String) {
    let mut all = Vec::new();
    let mut block = String::from("```\n");
    for root in source_roots() {
        let src = repo_root().join(&root);
        let mut files = Vec::new();
        sources(&src, &src, &mut files);
        block.push_str(&format!("{root}/\n"));
        let mut folder = String::new();
        for file in &files {
            let (dir, name) = file.rsplit_once('/').unwrap_or(("", file));
            if dir != folder {
                let depth = dir.matches('/').count();
                block.push_str(&format!(
                    "{}{}/\n",
                    "  ".repeat(depth + 1),
                    dir.rsplit('/').next().unwrap()
                ));
                folder = dir.to_string();
            }
            let indent = "  ".repeat(if dir.is_empty() {
                1
            } else {
                dir.matches('/').count() + 2
            });
            let text = fs::read_to_string(src.join(file)).unwrap();
            block.push_str(&format!(
                "{:<30} {}\n",
                format!("{indent}{name}"),
                summary(&text)
            ));
            all.push(format!("{root}/{file}"));
        }
    }
    block.push_str("```\n");
    (all, block)
}

/// The files the document lists, by path from the repository root (a line without indent
/// names a source folder, `crates/fetch/src/`).
fn listed(block: &str) -> Vec<String> {
    let mut root = String::new();
    let mut folders: Vec<String> = Vec::new();
    let mut files = Vec::new();
    for line in block.lines() {
        if !line.starts_with("  ") {
            if let Some(dir) = line.trim().strip_suffix('/') {
                root = dir.to_string();
                folders.clear();
            }
            continue;
        }
        let depth = (line.len() - line.trim_start().len()) / 2 - 1;
        let name = line.split_whitespace().next().unwrap_or_default();
        folders.truncate(depth);
        if let Some(folder) = name.strip_suffix('/') {
            folders.push(folder.to_string());
        } else if name.ends_with(".rs") {
            let mut path = root.clone();
            for folder in &folders {
                path.push('/');
                path.push_str(folder);
            }
            files.push(format!("{path}/{name}"));
        }
    }
    files
}

#[test]
fn the_architecture_file_list_is_the_source_tree() {
    let doc_path = repo_root().join("docs/ARCHITECTURE.md");
    let doc = fs::read_to_string(&doc_path).unwrap();
    let start = doc
        .find(BEGIN)
        .expect("docs/ARCHITECTURE.md has its files: begin marker")
        + BEGIN.len();
    let end = doc[start..].find(END).expect("and its files: end marker") + start;
    let (files, block) = expected();
    if std::env::var_os("CT2V_UPDATE_ARCHITECTURE").is_some() {
        fs::write(
            &doc_path,
            format!("{}{block}{}", &doc[..start], &doc[end..]),
        )
        .unwrap();
        return;
    }
    let have = listed(&doc[start..end]);
    let missing: Vec<&String> = files.iter().filter(|f| !have.contains(f)).collect();
    let gone: Vec<&String> = have.iter().filter(|f| !files.contains(f)).collect();
    assert!(
        missing.is_empty() && gone.is_empty(),
        "docs/ARCHITECTURE.md's file list is not the tree: not listed {missing:?}, listed but \
         not there {gone:?}; run CT2V_UPDATE_ARCHITECTURE=1 cargo test -p xtask --test it -- \
         architecture, then read the new list"
    );
}

/// The `ct2v-*` crates a member's Cargo.toml depends on (normal dependencies), sorted.
fn workspace_dependencies(manifest: &Path) -> Vec<String> {
    let text = fs::read_to_string(manifest).unwrap();
    let doc: toml_edit::DocumentMut = text.parse().unwrap();
    let mut names: Vec<String> = doc["dependencies"]
        .as_table()
        .map(|deps| {
            deps.iter()
                .map(|(name, _)| name.to_string())
                .filter(|name| name.starts_with("ct2v-"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The rows of the table between `<!-- crates: begin -->` and `<!-- crates: end -->`:
/// (crate, folder, the crates its "uses" column names).
fn crate_table(doc: &str) -> Vec<(String, String, Vec<String>)> {
    let start = doc
        .find("<!-- crates: begin -->")
        .expect("docs/ARCHITECTURE.md has its crates: begin marker");
    let end = doc[start..]
        .find("<!-- crates: end -->")
        .expect("and its crates: end marker")
        + start;
    let cell = |c: &str| c.trim().trim_matches('`').to_string();
    doc[start..end]
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|row| {
            let cells: Vec<&str> = row.trim_matches('|').split('|').collect();
            let uses = cells.last().unwrap();
            let mut used: Vec<String> = uses
                .split(',')
                .map(cell)
                .filter(|c| c.starts_with("ct2v-"))
                .collect();
            used.sort();
            (cell(cells[0]), cell(cells[1]), used)
        })
        .collect()
}

#[test]
fn the_crate_table_is_the_workspace_and_its_dependencies() {
    let doc = fs::read_to_string(repo_root().join("docs/ARCHITECTURE.md")).unwrap();
    let rows = crate_table(&doc);
    let mut members: Vec<String> = source_roots()
        .iter()
        .map(|src| src.trim_end_matches("/src").to_string())
        .collect();
    members.sort();
    let mut folders: Vec<String> = rows
        .iter()
        .map(|(_, folder, _)| folder.trim_end_matches('/').to_string())
        .collect();
    folders.sort();
    assert_eq!(
        folders, members,
        "docs/ARCHITECTURE.md's crate table has a row per workspace member"
    );
    for (name, folder, uses) in &rows {
        let manifest = repo_root().join(folder).join("Cargo.toml");
        let package = fs::read_to_string(&manifest).unwrap();
        assert!(
            package.contains(&format!("name = \"{name}\"")),
            "{folder}/Cargo.toml is the package {name}, as the crate table says"
        );
        assert_eq!(
            uses,
            &workspace_dependencies(&manifest),
            "the crate table's uses column for {name} is its Cargo.toml's ct2v-* dependencies"
        );
    }
}

/// Every path the prose names (a backticked word with a `/` that names a file or folder of
/// the repository, outside the generated file list) exists.
#[test]
fn the_paths_the_architecture_prose_names_exist() {
    let doc = fs::read_to_string(repo_root().join("docs/ARCHITECTURE.md")).unwrap();
    let start = doc.find(BEGIN).unwrap();
    let end = doc.find(END).unwrap();
    let prose = format!("{}{}", &doc[..start], &doc[end..]);
    let mut missing = Vec::new();
    for (i, piece) in prose.split('`').enumerate() {
        let looks_like_a_path = i % 2 == 1
            && piece.contains('/')
            && !piece.contains(' ')
            && !piece.contains('<')
            && !piece.contains('{')
            && !piece.contains("::")
            && (piece.ends_with(".rs") || piece.ends_with('/') || piece.ends_with(".md"))
            && (piece.starts_with("crates/")
                || piece.starts_with("xtask/")
                || piece.starts_with("docs/")
                || piece.starts_with("scripts/"));
        if looks_like_a_path && !repo_root().join(piece).exists() {
            missing.push(piece.to_string());
        }
    }
    assert!(
        missing.is_empty(),
        "docs/ARCHITECTURE.md names paths that do not exist: {missing:?}"
    );
}
