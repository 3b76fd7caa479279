//! Each crate owns what it reads and what tests it: no crate reaches up into `xtask/` (the
//! binary) for a file, a script or a fixture (Cargo cannot see such an edge), and a test of a
//! crate's API that never runs the binary lives in that crate's `tests/`, so that
//! `cargo test -p <crate>` runs it.

use std::fs;

use crate::common::{repo_root, rust_files};

/// Files under `crates/` that name `xtask/` in code, the literal (a trailing `…`: one that
/// starts so), and why that is not a file they read.
const NAMES_OF_XTASK: [(&str, &str, &str); 3] = [
    (
        "crates/support/src/process.rs",
        "xtask/src",
        "a source scan of the whole workspace (every crate's code and the binary's), not data",
    ),
    (
        "crates/support/src/workspace.rs",
        "xtask",
        "the checkout is found as the folder holding variants/ and xtask/",
    ),
    (
        "crates/support/src/workspace.rs",
        "cannot find the ct2-variants checkout (a folder with variants/ and xtask/)…",
        "the error that says so",
    ),
];

/// The library tests that moved out of `xtask/tests/it`, and the crate whose `tests/it` holds
/// each now.
const MOVED_TESTS: [(&str, &str); 4] = [
    ("archive_fuzz.rs", "fetch"),
    ("cublas_loader.rs", "fetch"),
    ("download.rs", "fetch"),
    ("binary_fuzz.rs", "bundle"),
];

/// Tests under `xtask/tests/it` that call a crate's API without running the binary, and why
/// they stay.
const CRATE_API_WITHOUT_THE_BINARY: [(&str, &str); 2] = [
    (
        "gpu_machines.rs",
        "the selector script against doctor on xtask/tests/data/gpu_select, the table \
         gpu_select.rs (which runs the binary) and xtask/tests/python share",
    ),
    (
        "seam.rs",
        "a scan of the workspace's source: it names the crates only in the text it looks for",
    ),
];

/// The string literals of Rust source, comments left out: normal, byte and raw strings;
/// char literals (`'"'`) and lifetimes are stepped over.
fn string_literals(code: &str) -> Vec<String> {
    let chars: Vec<char> = code.chars().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '/' if chars.get(i + 1) == Some(&'/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if chars.get(i + 1) == Some(&'*') => {
                let mut depth = 0;
                while i < chars.len() {
                    if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                        depth += 1;
                        i += 2;
                    } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            '\'' => {
                // A char literal closes within four chars ('x', '\n', '\''); a lifetime does not.
                let close = (i + 2..(i + 5).min(chars.len()))
                    .find(|&j| chars[j] == '\'' && (chars[j - 1] != '\\' || chars[j - 2] == '\\'));
                i = close.map_or(i + 1, |j| j + 1);
            }
            'r' if matches!(chars.get(i + 1), Some('"' | '#'))
                && (i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')) =>
            {
                let hashes = chars[i + 1..].iter().take_while(|&&c| c == '#').count();
                let start = i + 1 + hashes + 1;
                if chars.get(start - 1) != Some(&'"') {
                    i += 1;
                    continue;
                }
                let closing: Vec<char> = std::iter::once('"')
                    .chain(std::iter::repeat_n('#', hashes))
                    .collect();
                let end = (start..chars.len())
                    .find(|&j| chars[j..].starts_with(&closing))
                    .unwrap_or(chars.len());
                found.push(chars[start..end].iter().collect());
                i = end + closing.len();
            }
            '"' => {
                let start = i + 1;
                let mut j = start;
                while j < chars.len() && chars[j] != '"' {
                    j += if chars[j] == '\\' { 2 } else { 1 };
                }
                found.push(chars[start..j.min(chars.len())].iter().collect());
                i = j + 1;
            }
            _ => i += 1,
        }
    }
    found
}

/// Whether a string literal names a path under the binary's folder `xtask/` (not the build
/// output `target/xtask/`, not a name ending in `xtask`). `previous` is the literal before it,
/// for `.join("target").join("xtask")`.
fn names_the_xtask_folder(literal: &str, previous: Option<&str>) -> bool {
    if literal == "xtask" {
        return previous != Some("target");
    }
    literal.match_indices("xtask/").any(|(at, _)| {
        let before = &literal[..at];
        let starts_a_name = before
            .chars()
            .last()
            .is_none_or(|c| !(c.is_alphanumeric() || "-_.".contains(c)));
        starts_a_name && !before.ends_with("target/")
    })
}

#[test]
fn no_crate_reads_a_file_under_xtask() {
    let root = repo_root();
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    assert!(files.len() > 100, "{} files under crates/", files.len());
    let mut reads = Vec::new();
    for path in files {
        let relative = path
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let literals = string_literals(&fs::read_to_string(&path).unwrap());
        for (i, literal) in literals.iter().enumerate() {
            let previous = i.checked_sub(1).map(|p| literals[p].as_str());
            let allowed = NAMES_OF_XTASK.iter().any(|(file, named, _)| {
                *file == relative
                    && named
                        .strip_suffix('…')
                        .map_or(literal == named, |start| literal.starts_with(start))
            });
            if names_the_xtask_folder(literal, previous) && !allowed {
                reads.push(format!("{relative}: \"{literal}\""));
            }
        }
    }
    assert!(
        reads.is_empty(),
        "a crate names a file under xtask/ (the binary's folder): move the file to the crate \
         that reads it (crates/<crate>/policy, python/, tests/data):\n{}",
        reads.join("\n")
    );
}

/// The scan itself: what it must find and what it must leave alone.
#[test]
fn the_scan_finds_xtask_paths_in_code_and_not_in_comments() {
    let code = r####"
        // include_str!("../../xtask/python/a.py") in a comment
        /* "xtask/policy/x" in a block comment */
        const A: &str = include_str!("../../../../xtask/python/hook.py");
        #[path = "../../xtask/tests/it/common/binaries.rs"]
        let b = root.join("xtask/tests/data");
        let c = r#"$ROOT/xtask/python/verify_wheel.py"#;
        let d = root.join("xtask").join("python");
        let quote = '"'; let escaped = '\''; fn f<'a>(x: &'a str) {}
        let not_a_read = root.join("target/xtask/cache");
        let build = root.join("target").join("xtask");
        let agent = concat!("ct2-variants-xtask/", "1");
    "####;
    let literals = string_literals(code);
    let named: Vec<&str> = literals
        .iter()
        .enumerate()
        .filter(|(i, l)| names_the_xtask_folder(l, i.checked_sub(1).map(|p| literals[p].as_str())))
        .map(|(_, l)| l.as_str())
        .collect();
    assert_eq!(
        named,
        [
            "../../../../xtask/python/hook.py",
            "../../xtask/tests/it/common/binaries.rs",
            "xtask/tests/data",
            "$ROOT/xtask/python/verify_wheel.py",
            "xtask",
        ]
    );
}

#[test]
fn each_crates_library_tests_live_in_its_own_tests_folder() {
    let root = repo_root();
    let mut wrong = Vec::new();
    for (file, krate) in MOVED_TESTS {
        let module = file.trim_end_matches(".rs");
        let main = fs::read_to_string(root.join(format!("crates/{krate}/tests/it/main.rs")))
            .unwrap_or_default();
        if root.join("xtask/tests/it").join(file).exists()
            || !root
                .join(format!("crates/{krate}/tests/it/{file}"))
                .is_file()
            || !main.lines().any(|l| l == format!("mod {module};"))
        {
            wrong.push(format!(
                "{file}: expected in crates/{krate}/tests/it, declared in its main.rs"
            ));
        }
    }
    // Beyond the list: a test here that calls a crate's API must also run the binary.
    let runs_the_binary = [
        "xtask(",
        "xtask_in(",
        "xtask_with_env(",
        "Scratch::",
        "CARGO_BIN_EXE_xtask",
        "output_of(",
        "windows_exe::",
    ];
    for entry in fs::read_dir(root.join("xtask/tests/it")).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".rs") || name == "main.rs" {
            continue;
        }
        let code = fs::read_to_string(entry.path()).unwrap();
        let excused = CRATE_API_WITHOUT_THE_BINARY.iter().any(|(f, _)| *f == name);
        if code.contains("ct2v_") && !runs_the_binary.iter().any(|r| code.contains(r)) && !excused {
            wrong.push(format!(
                "xtask/tests/it/{name}: tests a crate's API without running the binary; move it \
                 to that crate's tests/it"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
