//! A tag's run as GitHub would schedule it: the job graph (what can fail without compiling C++
//! fails first, listed whole), a re-tag of a commit main built (its native libraries reused
//! by run id), a re-run after the artifacts expired (rebuilt, not failed), and one speech check
//! per variant and platform. The scripts run here against a `gh` that answers as GitHub's API
//! does (through the real jq) and a stand-in `npm`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use crate::common;
use crate::workflows::{WORKFLOWS, jobs, run_of, step_named, steps, yaml};

fn build_yml() -> Value {
    yaml(&format!("{WORKFLOWS}/build.yml"))
}

fn needs_of(job: &Value) -> Vec<String> {
    match &job["needs"] {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a.iter().map(|n| n.as_str().unwrap().to_string()).collect(),
        _ => Vec::new(),
    }
}

/// Every job `name` waits for, directly or through others.
fn waits_for(workflow: &Value, name: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = needs_of(&workflow["jobs"][name]);
    while let Some(n) = todo.pop() {
        assert!(
            workflow["jobs"][&n].is_object(),
            "{name} needs {n}, which is no job"
        );
        if seen.insert(n.clone()) {
            todo.extend(needs_of(&workflow["jobs"][&n]));
        }
    }
    seen
}

/// A job that runs on Windows, or compiles C++ (a lane's native and wheel jobs, `xtask build`).
fn windows_or_cpp(job: &Value) -> Option<&'static str> {
    let runs_on = serde_json::to_string(&job["runs-on"]).unwrap();
    if runs_on.contains("windows") {
        return Some("runs on Windows");
    }
    if job["uses"] == "./.github/workflows/lane.yml" {
        return Some("builds a lane (C++)");
    }
    steps(job)
        .iter()
        .any(|s| run_of(s).contains("xtask build"))
        .then_some("runs xtask build")
}

#[test]
fn the_first_checks_wait_for_no_windows_build_and_every_build_waits_for_them() {
    let build = build_yml();
    let before = waits_for(&build, "checks");
    assert_eq!(before, BTreeSet::from(["tool-linux".to_string()]));
    for name in &before {
        let job = &build["jobs"][name];
        assert_eq!(windows_or_cpp(job), None, "checks waits for {name}");
        assert!(job.get("container").is_some() || job["runs-on"] == "ubuntu-24.04");
    }
    let run = run_of(step_named(steps(&build["jobs"]["checks"]), "First checks"));
    assert_eq!(run, ".github/scripts/first-checks");
    // Every job that builds anything native or runs on Windows waits for the checks; only the
    // tools' own builds run beside them.
    for (name, job) in jobs(&build) {
        if name.starts_with("tool-") || name == "checks" {
            continue;
        }
        assert!(
            waits_for(&build, name).contains("checks"),
            "{name} does not wait for checks"
        );
        if windows_or_cpp(job).is_some() {
            assert!(
                job["if"]
                    .as_str()
                    .unwrap_or("")
                    .contains("needs.checks.outputs")
            );
        }
    }
    let tools: Vec<&String> = jobs(&build)
        .into_iter()
        .map(|(n, _)| n)
        .filter(|n| n.starts_with("tool-"))
        .collect();
    assert_eq!(tools, ["tool-linux", "tool-windows"]);
    // The lanes' jobs need the Windows tool too (their Windows entries run it), but a Windows
    // tool that failed to build holds back no Linux entry: only the checks must have passed.
    for lane in ["main", "gpu"] {
        let job = &build["jobs"][lane];
        assert!(needs_of(job).contains(&"tool-windows".to_string()));
        let condition = job["if"].as_str().unwrap();
        assert!(
            condition.starts_with("${{ !cancelled() && needs.checks.result == 'success' && "),
            "{condition}"
        );
        assert!(!condition.contains("tool-windows"), "{condition}");
    }
    // The release: the Pages preflight beside the build, the publishing after it.
    let release = yaml(&format!("{WORKFLOWS}/release.yml"));
    assert!(needs_of(&release["jobs"]["preflight"]).is_empty());
    assert!(waits_for(&release, "release").contains("build"));
}

/// A folder with the stand-ins the scripts find on PATH: `xtask` (the real binary on a scratch
/// checkout, `upstream --check` answered by `UPSTREAM`), `npm` (exit `NPM`), and `gh`.
struct Bin {
    dir: tempfile::TempDir,
    scratch: common::Scratch,
}

impl Bin {
    fn new() -> Bin {
        let dir = tempfile::tempdir().unwrap();
        let scratch = common::Scratch::new();
        std::fs::create_dir_all(dir.path().join("bin")).unwrap();
        common::write_script(
            &dir.path().join("bin/xtask"),
            &format!(
                "#!/bin/sh\nif [ \"$1\" = upstream ]; then printf '%b\\n' \"$UPSTREAM_SAYS\"; exit \"$UPSTREAM\"; fi\nexec \"{}\" --root \"{}\" \"$@\"\n",
                env!("CARGO_BIN_EXE_xtask"),
                scratch.path().display()
            ),
        );
        common::write_script(
            &dir.path().join("bin/npm"),
            "#!/bin/sh\necho \"actionlint: $NPM_SAYS\"\nexit \"$NPM\"\n",
        );
        Bin { dir, scratch }
    }

    fn file(&self, name: &str) -> std::path::PathBuf {
        self.dir.path().join(name)
    }

    fn script(&self, name: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
        let path = format!(
            "{}:{}",
            self.dir.path().join("bin").display(),
            std::env::var("PATH").unwrap()
        );
        let output = self.file("output");
        let summary = self.file("summary");
        for f in [&output, &summary] {
            std::fs::write(f, "").unwrap();
        }
        Command::new(common::repo_root().join(".github/scripts").join(name))
            .args(args)
            .env("PATH", path)
            .env("GITHUB_OUTPUT", &output)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("UPSTREAM", "0")
            .env("UPSTREAM_SAYS", "upstream --check: no drift")
            .env("NPM", "0")
            .env("NPM_SAYS", "all workflow files passed")
            .env_remove("GH_TOKEN")
            .envs(env.iter().copied())
            .output()
            .unwrap()
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.file(name)).unwrap()
    }
}

#[test]
fn the_first_checks_list_every_failure_at_once_and_hand_on_the_matrix() {
    let bin = Bin::new();
    let out = bin.script("first-checks", &[], &[("TAG", "v4.7.1")]);
    assert!(out.status.success(), "{}", common::stdout_and_stderr(&out));
    let summary = bin.read("summary");
    for row in [
        "| Version facts agree with upstream (xtask upstream --check) | passed |",
        "| The tag releases a version this build makes | passed |",
        "| Matrix of the main lane | passed |",
        "| Matrix of the gpu lane | passed |",
        "| The plan of every entry | passed |",
        "| Workflows lint (actionlint) | passed |",
    ] {
        assert!(summary.contains(row), "`{row}` in:\n{summary}");
    }
    // The unpinned and self-hosted entries are named, not failed.
    assert!(
        summary.contains("- rocm-rdna2 linux-x86_64 py3.12: inputs not pinned yet")
            && summary.contains("- rocm-gfx1010 linux-x86_64 py3.12: needs a self-hosted runner"),
        "{summary}"
    );
    let outputs = bin.read("output");
    let lines: BTreeMap<&str, Value> = outputs
        .lines()
        .map(|l| {
            let (k, v) = l.split_once('=').unwrap();
            (k, serde_json::from_str(v).unwrap())
        })
        .collect();
    let keys: Vec<&&str> = lines.keys().collect();
    assert_eq!(keys, [&"gpu", &"gpu-native", &"main", &"main-native"]);
    // Exactly what the tool prints for each lane, handed on whole.
    for (key, args) in [
        ("main", &["--lane", "main"][..]),
        ("gpu-native", &["--lane", "gpu", "--native"][..]),
    ] {
        let out = bin.scratch.run(&[&["matrix", "--json"][..], args].concat());
        let made: Value = serde_json::from_str(&out.stdout).unwrap();
        assert_eq!(lines[key], made, "{key}");
        assert!(!made["include"].as_array().unwrap().is_empty(), "{key}");
    }

    // Three things wrong at once: drift (with a line that would be a workflow command and an
    // escape sequence), a tag of a version not built, the lint. Every one is named with its
    // output; the matrix of the lanes still goes out.
    let out = bin.script(
        "first-checks",
        &[],
        &[
            ("TAG", "v4.8.5"),
            ("UPSTREAM", "1"),
            (
                "UPSTREAM_SAYS",
                "onednn.version  drift\\n::error::forged\\n\\033[2J",
            ),
            ("NPM", "1"),
            ("NPM_SAYS", "lane.yml:3:1: unexpected key"),
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        common::stdout_and_stderr(&out)
    );
    let summary = bin.read("summary");
    let failed: Vec<&str> = summary
        .lines()
        .filter(|l| l.ends_with("| **failed** |"))
        .collect();
    assert_eq!(failed.len(), 3, "{summary}");
    for needle in [
        "#### Version facts agree with upstream (xtask upstream --check)",
        "onednn.version  drift",
        "#### The tag releases a version this build makes",
        "the release tag `v4.8.5` is CTranslate2 4.8.5, but this build makes CTranslate2 4.7.1",
        "#### Workflows lint (actionlint)",
        "lane.yml:3:1: unexpected key",
        "| The plan of every entry | passed |",
    ] {
        assert!(summary.contains(needle), "`{needle}` in:\n{summary}");
    }
    assert!(
        !summary.contains('\u{1b}') && summary.contains("\\x1B[2J"),
        "escaped: {summary}"
    );
    // The output stays in the summary's code block: nothing from it reaches the log, where
    // the runner would read a line starting with `::` as a command.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("forged"), "{stdout}");
    assert_eq!(
        stdout.matches("::error title=First checks::").count(),
        3,
        "{stdout}"
    );
    assert!(bin.read("output").contains("main-native="));

    // A variant file the tool refuses: both lanes' matrices fail naming it, and the checks
    // after them still run.
    bin.scratch.edit(
        "variants/cuda.toml",
        "[sdk]",
        "[sdk]\nthis-key-is-unknown = 1",
    );
    let out = bin.script("first-checks", &[], &[]);
    assert_eq!(out.status.code(), Some(1));
    let summary = bin.read("summary");
    for needle in [
        "| Matrix of the main lane | **failed** |",
        "| Matrix of the gpu lane | **failed** |",
        "| Workflows lint (actionlint) | passed |",
        "this-key-is-unknown",
    ] {
        assert!(summary.contains(needle), "`{needle}` in:\n{summary}");
    }
}

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

/// The step of the wheel job that says where the C++ library comes from, run as GitHub would
/// with each outcome of the artifact download and the cache restore.
fn prebuilt(artifact: &str, cache: &str) -> String {
    let lane = yaml(&format!("{WORKFLOWS}/lane.yml"));
    let step = step_named(
        steps(&lane["jobs"]["build"]),
        "Where the C++ library comes from",
    )
    .clone();
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("output");
    let out = Command::new("bash")
        .args([
            "--noprofile",
            "--norc",
            "-eo",
            "pipefail",
            "-c",
            run_of(&step),
        ])
        .env("GITHUB_OUTPUT", &output)
        .env("ARTIFACT", artifact)
        .env("CACHE", cache)
        .env("NATIVE", "native-cpu-linux-x86_64")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::stdout_and_stderr(&out));
    std::fs::read_to_string(output).unwrap()
}

#[test]
fn a_rerun_after_the_artifacts_expired_rebuilds_what_is_gone() {
    // The wheel job: the artifact, else the cache, else it compiles the library itself.
    assert_eq!(prebuilt("success", ""), "prebuilt=true\n");
    assert_eq!(prebuilt("failure", "true"), "prebuilt=true\n");
    assert_eq!(prebuilt("failure", "false"), "prebuilt=false\n");
    assert_eq!(prebuilt("failure", ""), "prebuilt=false\n");
    let lane = yaml(&format!("{WORKFLOWS}/lane.yml"));
    let wheel = steps(&lane["jobs"]["build"]);
    let download = step_named(wheel, "The native job's C++ library");
    assert_eq!(download["continue-on-error"], true);
    let cache = step_named(
        wheel,
        "The C++ library from the cache (the artifact is gone)",
    );
    assert_eq!(
        cache["with"]["key"],
        step_named(
            steps(&lane["jobs"]["native"]),
            "The C++ library of an earlier run"
        )["with"]["key"]
    );
    let build = run_of(step_named(wheel, "Build"));
    assert!(
        build.contains(
            "${{ steps.native.outputs.prebuilt == 'true' && '--prebuilt-native' || '' }}"
        ),
        "{build}"
    );
    let setup = wheel
        .iter()
        .find(|s| s["uses"] == "./.github/actions/build-setup")
        .unwrap();
    assert_eq!(
        setup["with"]["stage"],
        "${{ steps.native.outputs.prebuilt == 'false' && 'native' || 'wheel' }}"
    );
    assert!(
        setup["with"]["needs-sdk"]
            .as_str()
            .unwrap()
            .contains("matrix.sdk != ''")
    );
    // It may compile: its limit is the native job's.
    assert_eq!(
        lane["jobs"]["build"]["timeout-minutes"],
        "${{ inputs.native-timeout }}"
    );

    // The tool: every job's download of it (the action, release.yml) goes on when it fails,
    // and the tool is then built where the job runs.
    let action = yaml(".github/actions/tool/action.yml");
    let tool = action["runs"]["steps"].as_array().unwrap();
    let got = step_named(tool, "The tool this run built");
    assert_eq!(got["continue-on-error"], true);
    assert_eq!(got["with"]["name"], "xtask-${{ runner.os }}");
    let rebuild = step_named(tool, "The tool, built here (this run's artifact is gone)");
    assert_eq!(rebuild["uses"], "./.github/actions/build-tool");
    assert_eq!(rebuild["if"], "steps.artifact.outcome != 'success'");
    let built = yaml(".github/actions/build-tool/action.yml");
    let built_steps = built["runs"]["steps"].as_array().unwrap();
    assert_eq!(
        run_of(step_named(built_steps, "Build the tool")),
        "cargo build --locked -p xtask"
    );
    let release = yaml(&format!("{WORKFLOWS}/release.yml"));
    let release_steps = steps(&release["jobs"]["release"]);
    assert_eq!(
        step_named(release_steps, "The tool this run built")["continue-on-error"],
        true
    );
    let rebuild = step_named(
        release_steps,
        "The tool, built here (this run's artifact is gone)",
    );
    assert_eq!(rebuild["if"], "steps.tool.outcome != 'success'");
    assert!(run_of(rebuild).contains("cargo +stable build --locked -p xtask"));

    // What a re-run cannot rebuild, the entries' wheels, keeps the repository's retention
    // (90 days by default), not 7.
    for step in wheel {
        if step["with"]["name"] == "${{ matrix.artifact }}" {
            assert!(step["with"]["retention-days"].is_null(), "{step}");
        }
    }
    // Every download of an artifact that expires in 7 days has a way on when it is gone.
    let mut expiring = 0;
    let files = [
        format!("{WORKFLOWS}/lane.yml"),
        format!("{WORKFLOWS}/release.yml"),
        format!("{WORKFLOWS}/build.yml"),
    ];
    let mut all_steps: Vec<Value> = tool.clone();
    for f in &files {
        for (_, job) in jobs(&yaml(f)) {
            all_steps.extend(steps(job).iter().cloned());
        }
    }
    for step in &all_steps {
        let uses = step["uses"].as_str().unwrap_or("");
        let name = step["with"]["name"].as_str().unwrap_or("");
        let expires = name.starts_with("xtask-")
            || name == "${{ matrix.native }}"
            || step["id"] == "main-run";
        if uses.starts_with("actions/download-artifact@") && expires {
            expiring += 1;
            assert_eq!(step["continue-on-error"], true, "{step}");
        }
    }
    assert_eq!(
        expiring, 4,
        "the tool (action, release), native (native job, wheel job)"
    );
    assert!(
        Path::new(&common::repo_root().join(".github/actions/build-tool/action.yml")).is_file()
    );
}

/// The Windows speech check and frozen app (minutes each on the runner) run once per variant
/// and platform, on its newest Python; every other entry's wheel is installed and imported by
/// the build's own verify step. No Linux entry runs them.
#[test]
fn windows_speech_checks_run_once_per_variant_and_platform() {
    let out = common::xtask(&[
        "matrix",
        "--json",
        "--include-unpinned",
        "--include-self-hosted",
        "--ctranslate2",
        "4.7.1,4.8.4",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let matrix: Value = serde_json::from_str(&out.stdout).unwrap();
    let mut checked: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    let mut pythons: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for e in matrix["include"].as_array().unwrap() {
        let key = (
            e["slot"].as_str().unwrap().to_string(),
            e["platform"].as_str().unwrap().to_string(),
        );
        let python = e["python"].as_str().unwrap().to_string();
        pythons.entry(key.clone()).or_default().push(python.clone());
        if e["speech-check"] == true {
            checked.entry(key).or_default().push(python);
        } else {
            assert_eq!(e["speech-check"], false, "{e}");
        }
    }
    let windows: Vec<&(String, String)> = pythons
        .keys()
        .filter(|(_, p)| p == "windows-x86_64")
        .collect();
    assert!(windows.len() >= 10, "{windows:?}");
    for key in pythons.keys() {
        let newest = pythons[key]
            .iter()
            .max_by_key(|p| {
                p.split('.')
                    .map(|n| n.parse::<u32>().unwrap())
                    .collect::<Vec<_>>()
            })
            .unwrap();
        let expected = if key.1 == "windows-x86_64" {
            vec![newest.clone()]
        } else {
            Vec::new()
        };
        assert_eq!(
            checked.get(key).cloned().unwrap_or_default(),
            expected,
            "{key:?}"
        );
    }
    let lane = yaml(&format!("{WORKFLOWS}/lane.yml"));
    let step = step_named(steps(&lane["jobs"]["build"]), "Speech check (Windows)");
    assert_eq!(step["if"], "runner.os == 'Windows' && matrix.speech-check");
}
