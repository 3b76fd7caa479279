//! The actions the workflows use, and the jobs that must not end the wrong way: every action on
//! a Node 24 major pinned by commit, `pin.yml`'s gate red whenever the tool or a pin failed, and
//! no tag's release cancelled by another's.

use crate::common;

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::workflows::{SETUP, WORKFLOWS, jobs, run_of, step_named, steps, workflows, yaml};

/// The current major of each action, its tag's commit, and that its `action.yml` says
/// `runs.using: node24` (read from each repository at that tag, 2026-11-29; setup-python
/// from actions/setup-python v7.0.0's own action.yml, L42).
const NODE24: &[(&str, &str, &str)] = &[
    (
        "actions/checkout",
        "3d3c42e5aac5ba805825da76410c181273ba90b1",
        "v7.0.1",
    ),
    (
        "actions/cache",
        "27d5ce7f107fe9357f9df03efb73ab90386fccae",
        "v5.0.5",
    ),
    (
        "actions/upload-artifact",
        "bbbca2ddaa5d8feaa63e36b76fdaad77386f024f",
        "v7.0.0",
    ),
    (
        "actions/download-artifact",
        "3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c",
        "v8.0.1",
    ),
    (
        "actions/setup-python",
        "5fda3b95a4ea91299a34e894583c3862153e4b97",
        "v7.0.0",
    ),
    // v0.0.10 and later declare node24 (Mozilla-Actions/sccache-action#245; v0.0.11's
    // action.yml: `using: "node24"`).
    (
        "mozilla-actions/sccache-action",
        "fc920bf0ec8de6ee65d409111f7ec508035751ba",
        "v0.0.11",
    ),
    // A composite wrapper over actions/attest (no Node of its own).
    (
        "actions/attest-build-provenance",
        "a2bbfa25375fe432b6a289bc6b6cd05ecd0c4c32",
        "v4.1.0",
    ),
];

/// Actions not pinned by commit, each with why.
const BY_TAG: &[(&str, &str, &str)] = &[
    // Composite (no Node runtime); its refs are branches named after toolchains.
    ("dtolnay/rust-toolchain", "stable", "a branch per toolchain"),
];

/// Every workflow file and composite action: its path and text.
fn action_files() -> Vec<(String, String)> {
    let mut files: Vec<String> = workflows()
        .into_iter()
        .map(|(name, _)| format!("{WORKFLOWS}/{name}"))
        .collect();
    files.push(SETUP.to_string());
    files.push(".github/actions/tool/action.yml".to_string());
    files
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(common::repo_root().join(&f)).unwrap();
            (f, text)
        })
        .collect()
}

#[test]
fn every_action_is_a_node24_major_pinned_to_a_commit() {
    let mut seen = 0;
    for (file, text) in action_files() {
        for line in text.lines() {
            let Some(reference) = line.trim().trim_start_matches("- ").strip_prefix("uses: ")
            else {
                continue;
            };
            let (reference, comment) = reference.split_once(" # ").unwrap_or((reference, ""));
            if reference.starts_with("./") {
                continue;
            }
            seen += 1;
            let (action, rev) = reference.split_once('@').expect("action@ref");
            // `actions/cache/restore` is a folder of the `actions/cache` repository.
            let action = match action.match_indices('/').nth(1) {
                Some((second, _)) => &action[..second],
                None => action,
            };
            if let Some((_, tag, _)) = BY_TAG.iter().find(|(a, ..)| *a == action) {
                assert_eq!(rev, *tag, "{file}: {line}");
                continue;
            }
            let (_, sha, version) = NODE24
                .iter()
                .find(|(a, ..)| *a == action)
                .unwrap_or_else(|| panic!("{file}: {action} is not a known Node 24 major"));
            assert_eq!(
                rev, *sha,
                "{file}: {line}: not the commit of {action} {version}"
            );
            assert_eq!(
                comment, *version,
                "{file}: {line}: say which tag the commit is"
            );
        }
    }
    assert!(seen >= 25, "{seen}");
    // download-artifact 8 errors on a digest mismatch by default; nothing turns it down.
    for (file, text) in action_files() {
        assert!(!text.contains("digest-mismatch"), "{file}");
    }
}

/// A stand-in `cargo` for the pin job: `build` and `xtask variants` fail with exit 101 when
/// FAIL_BUILD is set (a tool that does not compile), `xtask pin` fails for FAIL_VARIANT and
/// leaves a file in the cache folder it was given (a download).
const FAKE_CARGO: &str = r#"#!/usr/bin/env bash
set -u
if [ -n "${FAIL_BUILD:-}" ]; then echo "error: could not compile xtask" >&2; exit 101; fi
case "$1 ${2:-}" in
  "build "*) exit 0 ;;
  "xtask variants") echo '{"variants":[{"name":"a"},{"name":"b"}]}' ;;
  "xtask pin")
    variant=$4
    [ -d "$CT2V_CACHE_DIR" ] || { echo "no cache folder" >&2; exit 3; }
    echo data > "$CT2V_CACHE_DIR/$variant.whl"
    echo "$CT2V_CACHE_DIR" >> "$CACHES"
    if [ "$variant" = "${FAIL_VARIANT:-}" ]; then echo "error: cannot pin $variant" >&2; exit 1; fi
    echo "$variant: pinned in variants/$variant.toml" ;;
  *) echo "unexpected cargo $*" >&2; exit 9 ;;
esac
"#;

/// Runs the `run:` steps of pin.yml's job as GitHub would (bash -eo pipefail; a step without
/// `if:` only while every step before it passed), in a scratch repository with a stand-in
/// cargo and free-disk. Returns whether the job passed and the steps that ran.
fn pin_job(env: &[(&str, &str)]) -> (bool, Vec<String>, tempfile::TempDir) {
    let work = tempfile::tempdir().unwrap();
    let root = work.path();
    let bin = root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    common::write_script(&bin.join("cargo"), FAKE_CARGO);
    std::fs::create_dir_all(root.join("repo/.github/scripts")).unwrap();
    common::write_script(
        &root.join("repo/.github/scripts/free-disk"),
        "#!/bin/sh\nexit 0\n",
    );
    std::fs::create_dir_all(root.join("repo/variants/ctranslate2")).unwrap();
    for version in ["4.7.1", "4.8.4"] {
        std::fs::write(
            root.join(format!("repo/variants/ctranslate2/{version}.toml")),
            "",
        )
        .unwrap();
    }
    let git = |args: &[&str]| {
        common::run_ok(
            Command::new("git")
                .args(args)
                .current_dir(root.join("repo")),
        );
    };
    git(&["init", "-q"]);
    git(&["-c", "user.name=t", "-c", "user.email=t@t", "add", "."]);
    git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-qm",
        "base",
    ]);
    std::fs::create_dir_all(root.join("temp")).unwrap();

    let pin = yaml(&format!("{WORKFLOWS}/pin.yml"));
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let mut failed = false;
    let mut ran = Vec::new();
    for step in steps(&pin["jobs"]["pin"]) {
        let script = run_of(step);
        if script.is_empty() {
            continue;
        }
        let condition = step["if"].as_str().unwrap_or("success()");
        let runs = match condition {
            "success()" => !failed,
            c if c.contains("always()") || c.contains("!cancelled()") => true,
            c if c.contains("failure()") => failed,
            other => panic!("a condition this harness does not know: {other}"),
        };
        if !runs {
            continue;
        }
        ran.push(step["name"].as_str().unwrap_or(script).to_string());
        let out = Command::new("bash")
            .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
            .current_dir(root.join("repo"))
            .env("PATH", &path)
            .env("RUNNER_TEMP", root.join("temp"))
            .env("GITHUB_STEP_SUMMARY", root.join("summary.md"))
            .env("CACHES", root.join("caches.txt"))
            .envs(env.iter().copied())
            .output()
            .unwrap();
        if !out.status.success() {
            failed = true;
        }
    }
    (!failed, ran, work)
}

/// The caches the stand-in pin was given, and whether any is still there.
fn caches_left(work: &Path) -> (usize, Vec<String>) {
    let list = std::fs::read_to_string(work.join("caches.txt")).unwrap_or_default();
    let left = list
        .lines()
        .filter(|l| Path::new(l).exists())
        .map(str::to_string)
        .collect();
    (list.lines().count(), left)
}

#[test]
fn the_pin_gate_is_red_whenever_the_tool_or_a_pin_failed() {
    let (passed, ran, work) = pin_job(&[]);
    assert!(passed, "every pin passed: {ran:?}");
    let (given, left) = caches_left(work.path());
    assert_eq!(given, 4, "two variants × two versions, a cache folder each");
    assert!(left.is_empty(), "cache folders left: {left:?}");

    let (passed, ran, _work) = pin_job(&[("FAIL_BUILD", "1")]);
    assert!(!passed, "green after the tool failed to build: {ran:?}");

    let (passed, ran, work) = pin_job(&[("FAIL_VARIANT", "b")]);
    assert!(!passed, "green after a pin failed: {ran:?}");
    assert!(
        ran.iter().any(|s| s == "The pins as a patch"),
        "the patch and the log are still handed back: {ran:?}"
    );
    assert!(caches_left(work.path()).1.is_empty());
}

/// GitHub keeps one pending job per concurrency group and cancels an older pending one: the
/// group every tag shares is on the pip index job alone, which reads the releases when it
/// starts, after its own release is published; the release job shares no group across tags.
#[test]
fn a_third_tag_cannot_cancel_the_seconds_release() {
    let release = yaml(&format!("{WORKFLOWS}/release.yml"));
    let mut shared = Vec::new();
    for (name, job) in jobs(&release) {
        let group = job["concurrency"]["group"].as_str().unwrap_or("");
        if !group.is_empty() && !group.contains("github.ref") {
            shared.push(name.as_str());
            assert_eq!(job["concurrency"]["cancel-in-progress"], false, "{name}");
        }
    }
    assert_eq!(
        shared,
        ["pip-index"],
        "jobs waiting on a group every tag shares"
    );
    let workflow_group = release["concurrency"]["group"].as_str().unwrap();
    assert!(workflow_group.contains("github.ref"), "{workflow_group}");

    let index = &release["jobs"]["pip-index"];
    assert_eq!(index["needs"], "release");
    let condition = index["if"].as_str().unwrap();
    assert!(
        condition.contains("needs.release.result == 'success'"),
        "{condition}"
    );
    let all = steps(index);
    let position = |name: &str| all.iter().position(|s| s["name"] == name).unwrap();
    let this = run_of(step_named(
        all,
        "This release's manifest and coverage, as published",
    ));
    assert!(
        this.contains("gh release download \"$GITHUB_REF_NAME\" --pattern manifest.json --pattern variants.json"),
        "{this}"
    );
    assert!(
        position("This release's manifest and coverage, as published")
            < position("The pip index site (every release)")
    );
    assert!(
        position("The earlier releases' manifests")
            < position("The pip index site (every release)")
    );
    assert!(
        position("The pip index site (every release)")
            < position("Publish the pip index (gh-pages)")
    );
    let job: &Value = &release["jobs"]["release"];
    for step in steps(job) {
        assert!(
            !run_of(step).contains("publish-site"),
            "the release job pushes the index itself"
        );
    }
}
