//! Hostile patch files and source trees for `cargo xtask patch`: a symbolic link in the tree
//! is never followed (exit 2, nothing written), numbers in hunk headers never overflow, and
//! a few hundred random and mutated unified diffs (`CT2V_FUZZ_CASES`, default 300) are
//! parsed and applied to a small tree without a panic or a write outside it, and none whose
//! hunk bodies do not match their counts (a mutated count, a doubled line) is applied. A failing fuzz
//! case is printed with its mutations and saved under `target/tmp/patch-fuzz-failures/`.

use crate::common;

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use common::command_args::patch_gfx1010;
use common::fuzz::{self, Rng};
use common::{Run, Scratch};

const SERIES: &str = "patches/ctranslate2-4.7.1";
const FIRST: &str = "0001-hip-use-hipblasGemmEx_v2.patch";
const SECOND: &str = "0002-hip-6-define-syncwarp.patch";

/// `patch` for rocm-gfx1010 (whose 4.7.1 series is FIRST then SECOND) on `source`.
fn patch(scratch: &Scratch, source: &Path, check: bool) -> Run {
    let mut args = patch_gfx1010(&["--source", source.to_str().unwrap()]);
    if check {
        args.push("--check");
    }
    scratch.run(&args)
}

/// Every path under `dir` (links not followed) with its content or link target.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut seen = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let meta = fs::symlink_metadata(&path).unwrap();
            let what = if meta.file_type().is_symlink() {
                format!("-> {}", fs::read_link(&path).unwrap().display())
            } else if meta.is_dir() {
                todo.push(path.clone());
                "folder".to_string()
            } else {
                String::from_utf8_lossy(&fs::read(&path).unwrap()).into_owned()
            };
            seen.insert(path, what);
        }
    }
    seen
}

#[test]
fn a_symlink_on_the_way_out_of_the_source_is_refused_and_nothing_written() {
    let scratch = Scratch::new();
    let dir = tempfile::tempdir().unwrap();
    let (tree, outside) = (dir.path().join("tree"), dir.path().join("outside"));
    fs::create_dir_all(tree.join("src")).unwrap();
    fs::create_dir_all(outside.join("cuda")).unwrap();
    fs::write(tree.join("src/a.txt"), "one\n").unwrap();
    fs::write(outside.join("cuda/primitives.cu"), "old\n").unwrap();
    fs::write(outside.join("b.txt"), "b\n").unwrap();
    // The first patch applies; the second goes through a link, so neither may be written.
    let series = scratch.path().join(SERIES);
    fs::write(
        series.join(FIRST),
        "--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1 +1 @@\n-one\n+two\n",
    )
    .unwrap();
    let cases: [(&str, &str, &str, &str); 3] = [
        (
            "src/cuda",
            "../../outside/cuda",
            "src/cuda/primitives.cu",
            "modify",
        ),
        ("src/b.txt", "../../outside/b.txt", "src/b.txt", "modify"),
        ("src/new", "../../outside", "src/new/created.txt", "create"),
    ];
    for (link, target, file, how) in cases {
        symlink(target, tree.join(link)).unwrap();
        let text = match how {
            "create" => format!("--- /dev/null\n+++ b/{file}\n@@ -0,0 +1 @@\n+new\n"),
            _ => {
                let old = if file.ends_with(".cu") { "old" } else { "b" };
                format!("--- a/{file}\n+++ b/{file}\n@@ -1 +1 @@\n-{old}\n+new\n")
            }
        };
        fs::write(series.join(SECOND), text).unwrap();
        let before = (snapshot(&tree), snapshot(&outside));
        for check in [false, true] {
            let run = patch(&scratch, &tree, check);
            common::assert_exit(
                &run,
                2,
                &[
                    &format!("{SECOND}: refused to patch {file}: "),
                    &format!("{} is a symbolic link", tree.join(link).display()),
                    "nothing was changed",
                ],
            );
            assert_eq!(
                run.stderr.trim_end().lines().count(),
                1,
                "one line: {}",
                run.stderr
            );
            assert_eq!(
                (snapshot(&tree), snapshot(&outside)),
                before,
                "{file}: nothing written"
            );
        }
        fs::remove_file(tree.join(link)).unwrap();
    }
}

#[test]
fn impossible_line_numbers_in_a_patch_are_bad_input_not_a_panic() {
    let scratch = Scratch::new();
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    fs::create_dir_all(tree.join("src")).unwrap();
    fs::write(tree.join("src/a.txt"), "one\n").unwrap();
    let series = scratch.path().join(SERIES);
    fs::write(
        series.join(FIRST),
        "--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1 +1 @@\n-one\n+two\n",
    )
    .unwrap();
    for header in [
        "@@ -18446744073709551615 +1 @@",
        "@@ -1 +18446744073709551615,1 @@",
        "@@ -1,18446744073709551615 +1 @@",
        "@@ -99999999999999999999999 +1 @@",
    ] {
        fs::write(
            series.join(SECOND),
            format!("--- a/src/a.txt\n+++ b/src/a.txt\n{header}\n-two\n+three\n"),
        )
        .unwrap();
        for check in [false, true] {
            let run = patch(&scratch, &tree, check);
            common::assert_exit(
                &run,
                2,
                &[&format!("{SECOND}: line 3: "), "the hunk header"],
            );
        }
        assert_eq!(fs::read_to_string(tree.join("src/a.txt")).unwrap(), "one\n");
    }
}

// --- Fuzzing ---------------------------------------------------------------------------

/// The old side of each file a unified diff changes, hunk after hunk with filler lines
/// between, so that the diff applies to it (with offsets). Created files are left out.
fn old_sides(diff: &str) -> Vec<(String, String)> {
    let lines: Vec<&str> = diff.lines().collect();
    let mut files: Vec<(String, String)> = Vec::new();
    let mut creating = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some(old) = line.strip_prefix("--- ") {
            creating = old.starts_with("/dev/null");
        } else if let Some(new) = line.strip_prefix("+++ b/") {
            if !creating {
                files.push((new.to_string(), String::new()));
            }
        } else if line.starts_with("@@ ")
            && !creating
            && let Some((_, text)) = files.last_mut()
        {
            let count = |sign: char| -> usize {
                let word = line.split(' ').find(|w| w.starts_with(sign)).unwrap();
                word[1..]
                    .split(',')
                    .nth(1)
                    .map_or(1, |n| n.parse().unwrap())
            };
            let (mut old, mut new) = (count('-'), count('+'));
            text.push_str("// filler\n// filler\n");
            while old > 0 || new > 0 {
                i += 1;
                let body = lines[i];
                match body.chars().next() {
                    Some('\\') => {}
                    Some('+') => new -= 1,
                    Some('-') => {
                        old -= 1;
                        text.push_str(&format!("{}\n", &body[1..]));
                    }
                    _ => {
                        old -= 1;
                        new -= 1;
                        text.push_str(&format!("{}\n", body.get(1..).unwrap_or("")));
                    }
                }
            }
        }
        i += 1;
    }
    files
}

/// Diffs the fuzz starts from: the checkout's real patches, small ones on the tree's own
/// files (CRLF, no newline at the end, a new file, two hunks) and some through its links.
fn seeds() -> Vec<String> {
    let dir = common::repo_root().join(SERIES);
    let mut seeds: Vec<String> = [
        FIRST,
        SECOND,
        "0003-cuda-load-cublas-from-the-nvidia-wheel.patch",
    ]
    .iter()
    .map(|name| fs::read_to_string(dir.join(name)).unwrap())
    .collect();
    seeds.extend(
        [
            "--- a/src/a.txt\n+++ b/src/a.txt\n@@ -2,3 +2,3 @@\n two\n-three\n+THREE\n four\n",
            "--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1,2 +1,3 @@\n one\n+new\n two\n@@ -5 +6 @@\n-five\n+FIVE\n",
            "--- a/src/crlf.txt\n+++ b/src/crlf.txt\n@@ -1,2 +1,2 @@\n-x\n+X\n y\n",
            "--- a/src/nonl.txt\n+++ b/src/nonl.txt\n@@ -1 +1 @@\n-last\n\\ No newline at end of file\n+LAST\n\\ No newline at end of file\n",
            "--- /dev/null\n+++ b/src/sub/new.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n",
            // Through the tree's links (to a file outside that would match).
            "--- a/out/secret.txt\n+++ b/out/secret.txt\n@@ -1,2 +1,2 @@\n-one\n+ONE\n two\n",
            "--- a/src/inner/a.txt\n+++ b/src/inner/a.txt\n@@ -1 +1 @@\n-one\n+ONE\n",
            "--- /dev/null\n+++ b/out/new.txt\n@@ -0,0 +1 @@\n+hello\n",
        ]
        .map(str::to_string),
    );
    seeds
}

/// Writes the fuzz tree: the real patches' old sides (the first seeds), small files, and
/// links out of it and within.
fn make_tree(tree: &Path, seeds: &[String]) {
    fs::create_dir_all(tree.join("src")).unwrap();
    for seed in &seeds[..3] {
        for (file, text) in old_sides(seed) {
            let path = tree.join(&file);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }
    }
    fs::write(tree.join("src/crlf.txt"), "x\r\ny\r\n").unwrap();
    fs::write(tree.join("src/nonl.txt"), "last").unwrap();
    symlink("../outside", tree.join("out")).unwrap();
    symlink("../../outside/secret.txt", tree.join("src/link.txt")).unwrap();
    symlink("../src", tree.join("src/inner")).unwrap();
}

const NUMBERS: &[&str] = &[
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775807",
    "9223372036854775806",
    "4294967295",
    "0",
    "-1",
    "+1",
    "",
    "1e9",
    "99999999999999999999999",
    "00000000000000000000001",
];

const PATHS: &[&str] = &[
    "b/../outside/secret.txt",
    "b/out/secret.txt",
    "b/out/new.txt",
    "b/src/link.txt",
    "b/src/inner/a.txt",
    "b/src/inner/new.txt",
    "/etc/passwd",
    "/dev/null",
    "b/",
    "b",
    "",
    "b/src/a.txt/x",
    "b/src",
    "b/C:evil",
    "b/NUL",
    "b/src//a.txt",
    "b/./src/a.txt",
    "b/src/a.txt\ttimestamp",
];

const GARBAGE: &[&str] = &[
    "\0",
    "\r",
    "\u{1b}[2J",
    "é",
    "\u{feff}",
    "\\",
    " ",
    "-",
    "+",
    "@@ ",
    "--- ",
    "+++ ",
    ",",
    "\t",
    "\u{10ffff}",
    "@@ -1 +1 @@",
    "a",
];

/// One mutation of `lines` (a diff, one line each, ends kept), and what it did.
fn mutate(rng: &mut Rng, lines: &mut Vec<String>, seeds: &[String]) -> String {
    let at = rng.below(lines.len());
    match rng.below(11) {
        0 | 1 => {
            let headers: Vec<usize> = (0..lines.len())
                .filter(|&i| lines[i].starts_with("@@ "))
                .collect();
            let Some(&i) = headers.get(rng.below(headers.len())) else {
                return "no hunk header".into();
            };
            let mut words: Vec<String> = lines[i].split(' ').map(str::to_string).collect();
            let w = 1 + rng.below(2).min(words.len().saturating_sub(2));
            let Some(word) = words.get(w) else {
                return "short hunk header".into();
            };
            let (sign, rest) = word.split_at(word.chars().next().map_or(0, char::len_utf8));
            let mut parts: Vec<String> = rest.split(',').map(str::to_string).collect();
            let p = rng.below(parts.len() + 1).min(parts.len());
            let number = rng.pick(NUMBERS).to_string();
            if p == parts.len() {
                parts.push(number);
            } else {
                parts[p] = number;
            }
            words[w] = format!("{sign}{}", parts.join(","));
            lines[i] = words.join(" ");
            format!("header {i} -> {:?}", lines[i])
        }
        2 => {
            let text: String = lines.concat();
            let mut cut = rng.below(text.len() + 1);
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            *lines = text[..cut]
                .split_inclusive('\n')
                .map(str::to_string)
                .collect();
            format!("truncated at byte {cut}")
        }
        3 => {
            if !lines.is_empty() {
                lines.remove(at);
            }
            format!("line {at} removed")
        }
        4 => {
            if let Some(line) = lines.get(at).cloned() {
                lines.insert(at, line);
            }
            format!("line {at} doubled")
        }
        5 => {
            let mut line: String = (0..1 + rng.below(6)).map(|_| *rng.pick(GARBAGE)).collect();
            line.push('\n');
            lines.insert(at.min(lines.len()), line.clone());
            format!("inserted {line:?} at line {at}")
        }
        6 => {
            if rng.below(2) == 0 {
                for line in lines.iter_mut() {
                    if let Some(body) = line.strip_suffix('\n') {
                        *line = format!("{body}\r\n");
                    }
                }
                "CRLF".into()
            } else {
                let prefix = if rng.below(2) == 0 { "+++ " } else { "--- " };
                lines.retain(|l| !l.starts_with(prefix));
                format!("no {prefix:?} lines")
            }
        }
        7 => {
            let names: Vec<usize> = (0..lines.len())
                .filter(|&i| lines[i].starts_with("+++ ") || lines[i].starts_with("--- "))
                .collect();
            let Some(&i) = names.get(rng.below(names.len())) else {
                return "no file name".into();
            };
            let path = rng.pick(PATHS);
            lines[i] = format!("{}{path}\n", &lines[i][..4]);
            format!("name {i} -> {path:?}")
        }
        8 => {
            let other = rng.below(lines.len());
            if at < lines.len() {
                lines.swap(at, other);
            }
            format!("lines {at} and {other} swapped")
        }
        9 => {
            let seed = rng.pick(seeds);
            lines.extend(seed.split_inclusive('\n').map(str::to_string));
            "another diff appended".into()
        }
        _ => {
            let Some(line) = lines.get_mut(at) else {
                return "empty".into();
            };
            let mark = *rng.pick(&[" ", "-", "+", "\\", "", "@"]);
            let body = line.get(1..).unwrap_or("").to_string();
            *line = format!("{mark}{body}");
            format!("line {at} now starts with {mark:?}")
        }
    }
}

/// One fuzz case: its patch bytes and what was done to make them.
fn case(rng: &mut Rng, seeds: &[String]) -> (Vec<u8>, String) {
    let seed = rng.below(seeds.len());
    let mut lines: Vec<String> = seeds[seed]
        .split_inclusive('\n')
        .map(str::to_string)
        .collect();
    let mut said = vec![format!("seed {seed}")];
    // Some seeds stay whole, so that a good share of the cases apply.
    for _ in 0..rng.below(4) {
        said.push(mutate(rng, &mut lines, seeds));
    }
    let mut bytes = lines.concat().into_bytes();
    if rng.below(12) == 0 {
        let at = rng.below(bytes.len() + 1);
        let junk: Vec<u8> = (0..1 + rng.below(16)).map(|_| rng.next() as u8).collect();
        said.push(format!("bytes {junk:?} at {at}"));
        bytes.splice(at..at, junk);
    }
    (bytes, said.join("; "))
}

/// The first hunk of `text` whose body does not match the counts in its header, read as git
/// reads one: by the counts it must not end early, and after them (blank lines and `\ No
/// newline` aside) it must not go on with a ` `, `+` or `-` line, unless that is a file
/// header's `--- ` or the `-- ` of a `git format-patch` signature.
fn count_mismatch(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().map(|l| l.trim_end_matches('\r')).collect();
    for (at, header) in lines.iter().enumerate() {
        if !header.starts_with("@@ ") {
            continue;
        }
        let count = |sign: char| -> Option<usize> {
            let word = header.split(' ').find_map(|w| w.strip_prefix(sign))?;
            word.split(',').nth(1).map_or(Some(1), |n| n.parse().ok())
        };
        let (Some(mut old), Some(mut new)) = (count('-'), count('+')) else {
            return Some(format!("line {}: `{header}` has no counts", at + 1));
        };
        let mut i = at + 1;
        while old + new > 0 {
            match lines.get(i).map(|l| l.chars().next()) {
                Some(None | Some(' ')) if old > 0 && new > 0 => (old, new) = (old - 1, new - 1),
                Some(Some('-')) if old > 0 => old -= 1,
                Some(Some('+')) if new > 0 => new -= 1,
                Some(Some('\\')) => {}
                _ => return Some(format!("line {}: `{header}` ends early", at + 1)),
            }
            i += 1;
        }
        let next = (i..lines.len()).find(|&n| !lines[n].is_empty() && !lines[n].starts_with('\\'));
        if let Some(n) = next {
            let line = lines[n];
            let file_header =
                line.starts_with("--- ") && lines.get(n + 1).is_some_and(|l| l.starts_with("+++ "));
            let more = line.starts_with([' ', '+'])
                || (line.starts_with('-') && !file_header && line != "-- ");
            if more {
                return Some(format!(
                    "line {}: `{header}` goes on at line {}",
                    at + 1,
                    n + 1
                ));
            }
        }
    }
    None
}

/// Puts back what a failed case changed outside the tree (`after`, as `snapshot` says), so
/// that the next case starts from `before`.
fn restore(after: &BTreeMap<PathBuf, String>, before: &BTreeMap<PathBuf, String>) {
    for path in after.keys().filter(|p| !before.contains_key(*p)) {
        let _ = fs::remove_dir_all(path).or_else(|_| fs::remove_file(path));
    }
    for (path, what) in before {
        if what == "folder" {
            fs::create_dir_all(path).unwrap();
        } else {
            fs::write(path, what).unwrap();
        }
    }
}

#[test]
fn random_and_mutated_patches_never_panic_nor_write_outside_the_tree() {
    let cases = fuzz::cases(300);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (tree, outside, patches) = (
        root.join("tree"),
        root.join("outside"),
        root.join("patches"),
    );
    fs::create_dir_all(&outside).unwrap();
    fs::create_dir_all(&patches).unwrap();
    fs::write(outside.join("secret.txt"), "one\ntwo\nthree\nfour\nfive\n").unwrap();
    fs::write(outside.join("a.txt"), "one\ntwo\nthree\nfour\nfive\n").unwrap();
    let seeds = seeds();
    let log = root.join("patch.log");
    let around = |root: &Path| {
        let mut all = snapshot(root);
        all.retain(|p, _| {
            !p.starts_with(root.join("tree")) && !p.starts_with(root.join("patches"))
        });
        all.remove(&root.join("patch.log"));
        all
    };
    let before = around(root);
    let mut rng = Rng::seeded("patch files");
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    for n in 0..cases {
        let (bytes, said) = case(&mut rng, &seeds);
        if tree.exists() {
            fs::remove_dir_all(&tree).unwrap();
        }
        make_tree(&tree, &seeds);
        fs::write(tree.join("src/a.txt"), "one\ntwo\nthree\nfour\nfive\n").unwrap();
        let name = format!("case-{n}.patch");
        let patch = patches.join(&name);
        fs::write(&patch, &bytes).unwrap();
        let outcome = fuzz::catch(|| {
            let checked = ct2v_fetch::patch::check(&patch, &tree, &log);
            let applied =
                ct2v_fetch::patch::apply_series(std::slice::from_ref(&patch), &tree, &log);
            (checked, applied)
        });
        let mut problems = Vec::new();
        match outcome {
            Err(panic) => problems.push(format!("panicked: {panic}")),
            Ok((checked, applied)) => {
                let kind = match (&checked, &applied) {
                    (_, Ok(())) => "applied",
                    (_, Err(e))
                        if e.downcast_ref::<ct2v_support::diagnostic::InputError>()
                            .is_some() =>
                    {
                        "bad input"
                    }
                    _ => "did not apply",
                };
                *counts.entry(kind).or_default() += 1;
                if kind == "applied"
                    && let Some(mismatch) = count_mismatch(&String::from_utf8_lossy(&bytes))
                {
                    problems.push(format!("applied, but {mismatch}"));
                }
                let errors = [checked.err(), applied.err()];
                for err in errors.iter().flatten() {
                    let shown = format!("{err:#}");
                    if !shown.contains(&name) {
                        problems.push(format!("an error that does not name the patch: {shown}"));
                    }
                }
            }
        }
        let after = around(root);
        if after != before {
            let changed: std::collections::BTreeSet<_> = after
                .keys()
                .chain(before.keys())
                .filter(|p| after.get(*p) != before.get(*p))
                .collect();
            problems.push(format!("wrote outside the tree: {changed:?}"));
            restore(&after, &before);
        }
        if !problems.is_empty() {
            let saved = Path::new(env!("CARGO_TARGET_TMPDIR")).join("patch-fuzz-failures");
            fs::create_dir_all(&saved).unwrap();
            fs::write(saved.join(&name), &bytes).unwrap();
            failures.push(format!("case {n} ({said}): {}", problems.join("; ")));
        }
    }
    eprintln!("{cases} fuzz cases: {counts:?}");
    assert!(
        failures.is_empty(),
        "{} of {cases} cases failed (inputs saved in target/tmp/patch-fuzz-failures/):\n{}",
        failures.len(),
        failures
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    if cases >= 100 {
        for kind in ["applied", "bad input", "did not apply"] {
            assert!(
                counts.get(kind).copied().unwrap_or(0) > 0,
                "no case {kind}: {counts:?}"
            );
        }
    }
}
