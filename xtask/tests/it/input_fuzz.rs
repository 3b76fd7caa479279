//! Fuzzing the text inputs a maintainer or an attacker controls: variant files (TOML) and a
//! published pip index (HTML). The real files, damaged deterministically
//! ([`common::fuzz::damage`] plus fragments chosen to hit the parsers' and checks' edges);
//! `CT2V_FUZZ_CASES` cases each (default 300).
//!
//! Variant files: loading, resolving every variant for every platform and planning it must
//! never panic; an error names a variant file and stays one screen. Index pages: every change
//! to a page `release` wrote makes `verify-release` fail naming that page, never panic.

use crate::common::{self, fuzz};

use std::fs;

use ct2v_pipeline::variant::{Catalog, Choices};
use ct2v_support::platform::Platform;
use ct2v_support::workspace::Workspace;

/// An error longer than this is not "one screen".
const MAX_ERROR: usize = 4_000;

const TOML_FRAGMENTS: &[&[u8]] = &[
    b"\n[bundle]\nroots = [\"/etc/*\"]\n",
    b"\n[bundle]\nroots = [\"../../x/*.so\"]\n",
    b"\n[inputs.x]\nurl = \"file:///etc/passwd\"\n",
    b"\n[inputs.y]\nurl = \"https://h/y.zip\"\nsubdir = \"../..\"\nsize = 18446744073709551615\n",
    b"\nsize = -1\n",
    b"\nsha256 = \"zz\"\n",
    b"\nctranslate2 = \"../../../x\"\n",
    b"\npatches = \"/etc/passwd\"\n",
    b"\x1b[2J",
    b"\r",
    b"\0",
    b"\xff\xfe",
    b"\"",
    b"[[",
    b"= ",
    b"\n[source]\nkind = \"path\"\n",
    b"\n[sdk]\nkind = \"nope\"\n",
    b"\nlocal-version = \"CPU!\"\n",
    b"\npython = [\"3.99\"]\n",
    b"\ncuda-arch = \"sm_\xe2\x82\xac\"\n",
    b"\ngpu-targets = [\"gfx\", \"\"]\n",
    b"\n[verify]\ncompute-types = [1, 2]\n",
];

/// A deep value no human writes: the TOML parser's recursion limit, on one long line.
fn deep(rng: &mut fuzz::Rng) -> Vec<u8> {
    let n = 100 + rng.below(20_000);
    format!("\ndeep = {}{}\n", "[".repeat(n), "]".repeat(n)).into_bytes()
}

/// Loads every variant, resolves it for every platform and plans it: the errors.
fn load_all(workspace: &Workspace) -> Vec<String> {
    let catalog = match Catalog::load(&workspace.root, &[]) {
        Ok(catalog) => catalog,
        Err(e) => return vec![e.to_string()],
    };
    let names: Vec<String> = catalog.variant_names().map(str::to_string).collect();
    let mut errors = Vec::new();
    for name in &names {
        for platform in Platform::ALL {
            let choices = Choices {
                platform: Some(platform),
                python: Some("3.12".into()),
                ..Choices::default()
            };
            match catalog.resolve(name, &choices) {
                Ok(resolved) => {
                    let _ = ct2v_pipeline::plan::plan(workspace, &resolved);
                }
                Err(e) => errors.push(e.to_string()),
            }
        }
    }
    errors
}

#[test]
fn damaged_variant_files_never_panic_and_errors_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    common::copy_tree(
        &common::repo_root().join("variants"),
        &root.join("variants"),
    );
    common::copy_tree(&common::repo_root().join("patches"), &root.join("patches"));
    let workspace = Workspace::locate(Some(root.to_path_buf()), Some(root.join("cache"))).unwrap();
    let baseline = load_all(&workspace);
    let files = [
        "variants/defaults.toml",
        "variants/cpu.toml",
        "variants/cuda.toml",
        "variants/rocm.toml",
        "variants/rocm-gfx1010.toml",
        "variants/ctranslate2/4.7.1.toml",
        "variants/gpus.toml",
    ];
    let mut rng = fuzz::Rng::seeded("variant files");
    let mut failures = Vec::new();
    let cases = fuzz::cases(300);
    for case in 0..cases {
        let file = *rng.pick(&files);
        let path = root.join(file);
        let original = fs::read(&path).unwrap();
        let (bytes, what) = if rng.below(20) == 0 {
            let mut bytes = original.clone();
            bytes.extend(deep(&mut rng));
            (bytes, "a deep array appended".to_string())
        } else {
            fuzz::damage(&mut rng, &original, TOML_FRAGMENTS)
        };
        fs::write(&path, &bytes).unwrap();
        match fuzz::catch(|| load_all(&workspace)) {
            Err(panic) => failures.push(format!("case {case} ({file}: {what}): panicked: {panic}")),
            Ok(errors) => {
                for e in errors.iter().filter(|e| !baseline.contains(e)) {
                    if !e.contains("variants/") && !e.contains("patches/") {
                        failures.push(format!("case {case} ({file}: {what}): names no file: {e}"));
                    }
                    if e.len() > MAX_ERROR {
                        failures.push(format!(
                            "case {case} ({file}: {what}): a {} byte error",
                            e.len()
                        ));
                    }
                }
            }
        }
        fs::write(&path, &original).unwrap();
    }
    report(&failures, cases);
}

/// Fails with each distinct failure once (a case's errors repeat per variant and platform).
fn report(failures: &[String], cases: usize) {
    let mut distinct: Vec<&String> = Vec::new();
    for f in failures {
        if !distinct.contains(&f) {
            distinct.push(f);
        }
    }
    let shown: Vec<&str> = distinct.iter().take(10).map(|s| s.as_str()).collect();
    assert!(
        distinct.is_empty(),
        "{} failure(s) in {cases} cases:\n{}",
        distinct.len(),
        shown.join("\n")
    );
}

const HTML_FRAGMENTS: &[&[u8]] = &[
    b"<script>alert(1)</script>",
    b"<a href=\"https://evil.example/ctranslate2-4.7.1-cp312-cp312-manylinux_2_28_x86_64.whl\">x</a>",
    b"<a href='x.whl#sha256=00'>",
    b"#sha256=",
    b"&quot;",
    b"\"",
    b"'",
    b"<!--",
    b"\r\n",
    b"\n",
    b" ",
    b"\xef\xbb\xbf",
    b"\xff",
    b"\0",
];

/// Every changed byte of a page `release` wrote, and every page added, fails `verify-release`
/// naming the page; nothing panics or hangs.
#[test]
fn a_tampered_index_page_always_fails_verify_release_naming_the_page() {
    let scratch = common::Scratch::new();
    crate::release::fake_build(&scratch, "3.12");
    crate::release::fake_build(&scratch, "3.11");
    let out = scratch.path().join("dist");
    let run = crate::release::release(&scratch, &out, "3.11,3.12");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        ct2v_pipeline::release::recheck(&out).unwrap(),
        Vec::<String>::new()
    );
    let pages: Vec<String> = ct2v_support::fsx::files_below(&out.join("whl"))
        .unwrap()
        .into_iter()
        .map(|(name, _)| format!("whl/{name}"))
        .collect();
    assert!(pages.len() >= 2, "{pages:?}");
    let mut rng = fuzz::Rng::seeded("index pages");
    let mut failures = Vec::new();
    let mut tampered = 0;
    let cases = fuzz::cases(300);
    for case in 0..cases {
        let page = rng.pick(&pages).clone();
        let path = out.join(&page);
        let original = fs::read(&path).unwrap();
        let (target, bytes, what) = if rng.below(10) == 0 {
            let extra = format!("{}/extra-{case}.html", page.rsplit_once('/').unwrap().0);
            (
                extra,
                original.clone(),
                "a page added beside it".to_string(),
            )
        } else {
            let (bytes, what) = fuzz::damage(&mut rng, &original, HTML_FRAGMENTS);
            (page.clone(), bytes, what)
        };
        if target == page && bytes == original {
            continue;
        }
        let target_path = out.join(&target);
        fs::write(&target_path, &bytes).unwrap();
        tampered += 1;
        match fuzz::catch(|| ct2v_pipeline::release::recheck(&out)) {
            Err(panic) => failures.push(format!("case {case} ({page}: {what}): panicked: {panic}")),
            Ok(Ok(problems)) if problems.iter().any(|p| p.contains(&target)) => {}
            Ok(Ok(problems)) => failures.push(format!(
                "case {case} ({page}: {what}): not caught, or not named: {problems:?}"
            )),
            Ok(Err(e)) if format!("{e:#}").contains(&target) => {}
            Ok(Err(e)) => failures.push(format!("case {case} ({page}: {what}): {e:#}")),
        }
        if target == page {
            fs::write(&path, &original).unwrap();
        } else {
            fs::remove_file(&target_path).unwrap();
        }
    }
    assert!(
        tampered * 10 >= cases * 8,
        "only {tampered} of {cases} cases changed a page"
    );
    report(&failures, cases);
}
