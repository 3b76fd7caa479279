//! A re-tag of a commit main built: `.github/scripts/main-natives` against a `gh` that answers
//! the Actions API as GitHub does (through the real jq) decides which native libraries come
//! from main's run, and the native job takes them by run id, then the cache, then compiles.

use std::collections::BTreeMap;
use std::process::Output;

use serde_json::Value;

use crate::common;
use crate::tag_run::{Bin, build_yml};
use crate::workflows::{WORKFLOWS, jobs, run_of, step_named, steps, yaml};

/// A `gh` that answers the two Actions API calls of main-natives from `answers` (a file per
/// path: `runs.json`, `artifacts-<run>.json`) through the real jq, as `gh api --jq` does; a
/// path with no answer is GitHub's 404. Every call is logged.
fn fake_gh(bin: &Bin, answers: &BTreeMap<String, Value>) {
    let dir = bin.file("api");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (name, json) in answers {
        std::fs::write(dir.join(name), json.to_string()).unwrap();
    }
    common::write_script(
        &bin.file("bin/gh"),
        &format!(
            r#"#!/bin/bash
printf '%s\n' "$*" >> "{log}"
path='' jq=''
while [ $# -gt 0 ]; do
  case $1 in
    api) ;;
    -X|-f) shift ;;
    --paginate) ;;
    --jq) jq=$2; shift ;;
    *) path=$1 ;;
  esac
  shift
done
case $path in
  */actions/workflows/build.yml/runs) file=runs.json ;;
  */actions/runs/*/artifacts*) run=${{path#*/actions/runs/}}; file=artifacts-${{run%%/*}}.json ;;
  *) file=none ;;
esac
[ -f "{dir}/$file" ] || {{ echo 'gh: Not Found (HTTP 404)' >&2; exit 1; }}
jq -r "$jq" "{dir}/$file"
"#,
            log = bin.file("gh.log").display(),
            dir = dir.display()
        ),
    );
}

fn artifacts(list: &[(&str, bool)]) -> Value {
    let items: Vec<Value> = list
        .iter()
        .map(|(name, expired)| serde_json::json!({"name": name, "expired": expired, "size_in_bytes": 1}))
        .collect();
    serde_json::json!({"total_count": items.len(), "artifacts": items})
}

const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

/// What main-natives hands the native jobs, and so which of `natives` a re-tag compiles.
fn natives_reused(bin: &Bin, answers: &BTreeMap<String, Value>) -> (Output, Value) {
    fake_gh(bin, answers);
    let file = bin.file("reuse.json");
    let out = bin.script(
        "main-natives",
        &[SHA, file.to_str().unwrap()],
        &[("GITHUB_REPOSITORY", "owner/repo")],
    );
    let reuse = std::fs::read_to_string(&file).unwrap_or_default();
    let reuse = serde_json::from_str(&reuse)
        .unwrap_or_else(|e| panic!("{e}: {reuse}\n{}", common::stdout_and_stderr(&out)));
    (out, reuse)
}

fn native_artifacts() -> Vec<String> {
    let out = common::xtask(&["matrix", "--json", "--native"]);
    let natives: Value = serde_json::from_str(&out.stdout).unwrap();
    natives["include"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["artifact"].as_str().unwrap().to_string())
        .collect()
}

fn compiled<'a>(natives: &'a [String], reuse: &Value) -> Vec<&'a str> {
    natives
        .iter()
        .filter(|n| reuse[n.as_str()].as_str().is_none_or(str::is_empty))
        .map(String::as_str)
        .collect()
}

#[test]
fn a_retag_of_a_commit_main_built_downloads_its_native_libraries_and_compiles_none() {
    let natives = native_artifacts();
    assert_eq!(natives.len(), 4, "{natives:?}");
    let mut all: Vec<(&str, bool)> = natives.iter().map(|n| (n.as_str(), false)).collect();
    all.extend([("xtask-Linux", true), ("cpu-linux-x86_64-py3.12", false)]);
    let bin = Bin::new();
    let answers = BTreeMap::from([
        (
            "runs.json".to_string(),
            serde_json::json!({"total_count": 1, "workflow_runs": [{"id": 42, "head_sha": SHA}]}),
        ),
        ("artifacts-42.json".to_string(), artifacts(&all)),
    ]);
    let (out, reuse) = natives_reused(&bin, &answers);
    assert!(out.status.success(), "{}", common::stdout_and_stderr(&out));
    assert_eq!(compiled(&natives, &reuse), Vec::<&str>::new(), "{reuse}");
    for n in &natives {
        assert_eq!(reuse[n], "42");
    }
    assert_eq!(
        reuse.as_object().unwrap().len(),
        natives.len(),
        "only native-*: {reuse}"
    );
    let log = bin.read("gh.log");
    for needle in [
        "repos/owner/repo/actions/workflows/build.yml/runs",
        "branch=main",
        "event=push",
        &format!("head_sha={SHA}"),
        "repos/owner/repo/actions/runs/42/artifacts",
    ] {
        assert!(log.contains(needle), "`{needle}` in:\n{log}");
    }

    // Two runs of main for the commit: the newest has the cpu libraries, an older one the
    // Linux cuda one; the Windows cuda one expired. Only that one compiles.
    let cpu: Vec<(&str, bool)> = natives
        .iter()
        .filter(|n| n.starts_with("native-cpu-"))
        .map(|n| (n.as_str(), false))
        .collect();
    let answers = BTreeMap::from([
        (
            "runs.json".to_string(),
            serde_json::json!({"workflow_runs": [{"id": 50}, {"id": 41}]}),
        ),
        ("artifacts-50.json".to_string(), artifacts(&cpu)),
        (
            "artifacts-41.json".to_string(),
            artifacts(&[
                ("native-cuda-linux-x86_64", false),
                ("native-cuda-windows-x86_64", true),
                ("native-cpu-linux-x86_64", false),
            ]),
        ),
    ]);
    let (_, reuse) = natives_reused(&bin, &answers);
    assert_eq!(
        compiled(&natives, &reuse),
        ["native-cuda-windows-x86_64"],
        "{reuse}"
    );
    assert_eq!(
        reuse["native-cpu-linux-x86_64"], "50",
        "the newest run wins"
    );
    assert_eq!(reuse["native-cuda-linux-x86_64"], "41");

    // Names from the API are data: one that would break the JSON, the YAML or a log is left out.
    let hostile = artifacts(&[
        ("native-cpu-linux-x86_64\",\"x\":\"1", false),
        ("native-a b", false),
        ("native-x\n::error::forged", false),
        ("native-cpu-windows-x86_64", false),
    ]);
    let answers = BTreeMap::from([
        (
            "runs.json".to_string(),
            serde_json::json!({"workflow_runs": [{"id": 7}]}),
        ),
        ("artifacts-7.json".to_string(), hostile),
    ]);
    let (_, reuse) = natives_reused(&bin, &answers);
    assert_eq!(reuse, serde_json::json!({"native-cpu-windows-x86_64": "7"}));

    // No run of main for the commit, or GitHub not answering: every native job goes on to the
    // cache, then compiles; the tag's run does not fail for it.
    let none = BTreeMap::from([(
        "runs.json".to_string(),
        serde_json::json!({"workflow_runs": []}),
    )]);
    let (out, reuse) = natives_reused(&bin, &none);
    assert!(out.status.success());
    assert_eq!(reuse, serde_json::json!({}));
    let (out, reuse) = natives_reused(&bin, &BTreeMap::new());
    assert!(out.status.success());
    assert_eq!(reuse, serde_json::json!({}));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("::warning title=Native libraries of main::cannot list main's build runs"),
        "{stdout}"
    );
    // A SHA that is not a full commit id is refused before GitHub is asked.
    std::fs::write(bin.file("gh.log"), "").unwrap();
    let out = bin.script(
        "main-natives",
        &["HEAD", "x.json"],
        &[("GITHUB_REPOSITORY", "o/r")],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(bin.read("gh.log"), "");
}

/// The native job takes main's library by run id, then the cache, then compiles; only runs
/// that are not pull requests save the cache; build.yml hands the lanes what main-natives found.
#[test]
fn the_native_job_reuses_mains_library_then_the_cache_and_pull_requests_only_restore() {
    let lane = yaml(&format!("{WORKFLOWS}/lane.yml"));
    let native = steps(&lane["jobs"]["native"]);
    let main_run = step_named(native, "The C++ library of main's run of this commit");
    assert_eq!(main_run["id"], "main-run");
    assert_eq!(main_run["continue-on-error"], true);
    assert_eq!(
        main_run["with"]["run-id"],
        "${{ fromJSON(inputs.reuse)[matrix.artifact] }}"
    );
    assert_eq!(main_run["with"]["github-token"], "${{ github.token }}");
    assert_eq!(main_run["with"]["name"], "${{ matrix.artifact }}");
    let leftovers = step_named(native, "What a failed download left");
    assert_eq!(leftovers["if"], "steps.main-run.outcome == 'failure'");
    let cache = step_named(native, "The C++ library of an earlier run");
    assert!(
        cache["uses"]
            .as_str()
            .unwrap()
            .starts_with("actions/cache/restore@")
    );
    assert_eq!(cache["if"], "steps.main-run.outcome != 'success'");
    let compile_if =
        "steps.main-run.outcome != 'success' && steps.native-cache.outputs.cache-hit != 'true'";
    assert_eq!(
        step_named(native, "Build the C++ library")["if"],
        compile_if
    );
    let setup = native
        .iter()
        .find(|s| s["uses"] == "./.github/actions/build-setup")
        .unwrap();
    assert_eq!(setup["if"], compile_if);
    let save = step_named(native, "The C++ library for later runs");
    assert!(
        save["uses"]
            .as_str()
            .unwrap()
            .starts_with("actions/cache/save@")
    );
    assert_eq!(save["with"]["key"], cache["with"]["key"]);
    assert!(
        save["if"]
            .as_str()
            .unwrap()
            .contains("github.event_name != 'pull_request'")
    );
    // No step anywhere saves a native cache otherwise (a plain actions/cache saves on success).
    for (name, workflow) in crate::workflows::workflows() {
        for (job_name, job) in jobs(&workflow) {
            for step in steps(job) {
                let uses = step["uses"].as_str().unwrap_or("");
                let key = step["with"]["key"].as_str().unwrap_or("");
                assert!(
                    !(key.starts_with("native-") && uses.starts_with("actions/cache@")),
                    "{name} {job_name}: {step}"
                );
            }
        }
    }
    // The tool's cache (its key changes on any crate edit) likewise.
    let tool = yaml(".github/actions/build-tool/action.yml");
    let tool = tool["runs"]["steps"].as_array().unwrap();
    let save = step_named(tool, "The tool's cache for later runs");
    assert!(
        save["if"]
            .as_str()
            .unwrap()
            .contains("github.event_name != 'pull_request'")
    );
    assert!(!tool.iter().any(|s| {
        s["uses"]
            .as_str()
            .is_some_and(|u| u.starts_with("actions/cache@"))
    }));
    let build = build_yml();
    let checks = &build["jobs"]["checks"];
    let lookup = step_named(
        steps(checks),
        "The native libraries main built for this commit",
    );
    assert_eq!(lookup["if"], "github.ref_type == 'tag'");
    assert!(run_of(lookup).contains(".github/scripts/main-natives \"$GITHUB_SHA\""));
    for lane in ["main", "gpu"] {
        assert_eq!(
            build["jobs"][lane]["with"]["reuse"],
            "${{ needs.checks.outputs.reuse }}"
        );
    }
    assert_eq!(build["permissions"]["actions"], "read");
    let release = yaml(&format!("{WORKFLOWS}/release.yml"));
    assert_eq!(release["jobs"]["build"]["permissions"]["actions"], "read");
}
