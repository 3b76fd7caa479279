//! A tag's run as GitHub would schedule it: the job graph (what can fail without compiling C++
//! fails first, listed whole), a re-run after the artifacts expired (rebuilt, not failed), and
//! one speech check per variant and platform (a re-tag's reuse of main's native libraries:
//! `retag.rs`). The scripts run here with stand-ins on PATH (`Bin`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use crate::common;
use crate::workflows::{WORKFLOWS, jobs, run_of, step_named, steps, yaml};

pub(crate) fn build_yml() -> Value {
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
pub(crate) struct Bin {
    dir: tempfile::TempDir,
    pub(crate) scratch: common::Scratch,
}

impl Bin {
    pub(crate) fn new() -> Bin {
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

    pub(crate) fn file(&self, name: &str) -> std::path::PathBuf {
        self.dir.path().join(name)
    }

    pub(crate) fn script(&self, name: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
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

    pub(crate) fn read(&self, name: &str) -> String {
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
        "the release tag `v4.8.5` (--release-tag) is CTranslate2 4.8.5, but this build makes CTranslate2 4.7.1",
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
    // The tag check itself: exit 2 (bad input), naming the flag and what to tag instead.
    let run = common::xtask(&["matrix", "--release-tag", "v4.8.5"]);
    common::assert_exit(
        &run,
        2,
        &[
            "(--release-tag) is CTranslate2 4.8.5",
            "tag v<CTranslate2 version> (v4.7.1)",
        ],
    );

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
    let leftovers = step_named(wheel, "What a failed download left");
    assert_eq!(
        leftovers["if"],
        "steps.native-artifact.outcome == 'failure'"
    );
    assert_eq!(run_of(leftovers), "rm -rf -- \"$PREFIX\"");
    assert_eq!(
        leftovers["env"]["PREFIX"],
        "target/xtask/${{ matrix.slot }}/${{ matrix.platform }}/prefix"
    );
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
    // It may compile: its limit is the native job's, and its build step's too only then.
    assert_eq!(
        lane["jobs"]["build"]["timeout-minutes"],
        "${{ inputs.native-timeout }}"
    );
    assert_eq!(
        step_named(wheel, "Build")["timeout-minutes"],
        "${{ steps.native.outputs.prebuilt == 'false' && inputs.native-timeout || 60 }}"
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
    for job in ["release", "pip-index"] {
        let release_steps = steps(&release["jobs"][job]);
        assert_eq!(
            step_named(release_steps, "The tool this run built")["continue-on-error"],
            true,
            "{job}"
        );
        let rebuild = step_named(
            release_steps,
            "The tool, built here (this run's artifact is gone)",
        );
        assert_eq!(rebuild["if"], "steps.tool.outcome != 'success'", "{job}");
        assert_eq!(run_of(rebuild), ".github/scripts/tool-built-here", "{job}");
    }
    let script =
        std::fs::read_to_string(common::repo_root().join(".github/scripts/tool-built-here"))
            .unwrap();
    assert!(
        script.contains("cargo +stable build --locked -p xtask"),
        "{script}"
    );

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
        expiring, 5,
        "the tool (action, release, pip-index), native (native job, wheel job)"
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
