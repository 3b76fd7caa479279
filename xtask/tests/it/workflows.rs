//! The GitHub Actions workflows, read as YAML: what actionlint (in `.ci/run`) does not check.
//! Each test names a class of defect a first real run would hit, not today's exact text.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;
use yaml_rust2::{Yaml, YamlLoader};

use crate::common;

pub(crate) const WORKFLOWS: &str = ".github/workflows";
/// The setup both build stages share (SDK installs, caches, doctor).
pub(crate) const SETUP: &str = ".github/actions/build-setup/action.yml";

fn read(path: &str) -> String {
    std::fs::read_to_string(common::repo_root().join(path)).unwrap()
}

fn to_json(yaml: &Yaml) -> Value {
    match yaml {
        Yaml::Real(s) => s.parse::<f64>().map_or(Value::Null, Value::from),
        Yaml::Integer(i) => Value::from(*i),
        Yaml::String(s) => Value::from(s.as_str()),
        Yaml::Boolean(b) => Value::from(*b),
        Yaml::Array(items) => Value::Array(items.iter().map(to_json).collect()),
        Yaml::Hash(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let key = match k {
                        Yaml::String(s) => s.clone(),
                        Yaml::Boolean(b) => b.to_string(),
                        Yaml::Integer(i) => i.to_string(),
                        other => panic!("a key that is not a string: {other:?}"),
                    };
                    (key, to_json(v))
                })
                .collect(),
        ),
        Yaml::Null => Value::Null,
        other => panic!("unsupported YAML: {other:?}"),
    }
}

pub(crate) fn yaml(path: &str) -> Value {
    let text = read(path);
    let docs = YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    to_json(&docs[0])
}

/// What `xtask ARGS` prints as JSON in `scratch` (it must succeed).
pub(crate) fn json_of(scratch: &common::Scratch, args: &[&str]) -> Value {
    let out = scratch.run(args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    serde_json::from_str(&out.stdout).unwrap()
}

/// Every workflow file, by name.
pub(crate) fn workflows() -> Vec<(String, Value)> {
    let dir = common::repo_root().join(WORKFLOWS);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".yml"))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|n| {
            let doc = yaml(&format!("{WORKFLOWS}/{n}"));
            (n, doc)
        })
        .collect()
}

pub(crate) fn jobs(workflow: &Value) -> Vec<(&String, &Value)> {
    workflow["jobs"].as_object().unwrap().iter().collect()
}

pub(crate) fn steps(job: &Value) -> &[Value] {
    job["steps"].as_array().map_or(&[], Vec::as_slice)
}

pub(crate) fn step_named<'a>(steps: &'a [Value], name: &str) -> &'a Value {
    steps
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no step `{name}`"))
}

pub(crate) fn run_of(step: &Value) -> &str {
    step["run"].as_str().unwrap_or("")
}

/// The steps of the build-setup composite action.
pub(crate) fn setup_steps() -> Vec<Value> {
    yaml(SETUP)["runs"]["steps"].as_array().unwrap().clone()
}

#[test]
fn no_workflow_step_hides_a_failing_command_substitution() {
    // `bash -e` does not stop when a command substitution inside another command's arguments
    // fails (`echo "x=$(cmd)"`): the output would be empty and the job go on.
    let mut found = Vec::new();
    for (name, workflow) in workflows() {
        for (job_name, job) in jobs(&workflow) {
            for step in steps(job) {
                for line in run_of(step).lines() {
                    let line = line.trim();
                    if line.starts_with("echo ") && line.contains("$(") {
                        found.push(format!("{name} {job_name}: {line}"));
                    }
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "assign the substitution to a variable first, then echo it:\n{}",
        found.join("\n")
    );
}

/// The packages `.ci/run` installs with apt-get (its `missing="$missing PKG"` lines).
fn ci_run_packages() -> BTreeSet<String> {
    let text = read(".ci/run");
    let packages: BTreeSet<String> = text
        .lines()
        .filter_map(|l| l.split("missing=\"$missing ").nth(1))
        .flat_map(|rest| rest.trim_end_matches('"').split_whitespace())
        .map(str::to_string)
        .collect();
    assert!(packages.len() >= 8, "{packages:?}");
    packages
}

/// The packages a job's `apt-get install` lines name.
fn apt_packages(job: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for step in steps(job) {
        for line in run_of(step).lines() {
            if let Some((_, rest)) = line.split_once("apt-get install") {
                out.extend(
                    rest.split_whitespace()
                        .take_while(|w| !w.starts_with('&') && !w.starts_with('|'))
                        .filter(|w| !w.starts_with('-'))
                        .map(str::to_string),
                );
            }
        }
    }
    out
}

/// A job that runs the tests under `CI=true` fails on any tool `.ci/run` would have
/// installed (crates/fetch/tests/it/common/skip.rs): it must install every one of them.
#[test]
fn every_job_that_runs_the_tests_under_ci_installs_what_ci_run_installs() {
    let wanted = ci_run_packages();
    let mut checked = 0;
    for (name, workflow) in workflows() {
        for (job_name, job) in jobs(&workflow) {
            let ci_tests = steps(job).iter().any(|s| {
                run_of(s).contains("cargo test") && s["env"]["CI"].as_str() == Some("true")
            });
            if !ci_tests {
                continue;
            }
            checked += 1;
            // A job that runs only the tests driving the Windows binary (`-- windows`) needs
            // neither the browser (the Pages front page test) nor jq (the Pages scripts' test);
            // Ubuntu ships Chromium as a snap, which a runner's apt-get cannot install.
            let only_windows = steps(job)
                .iter()
                .any(|s| run_of(s).contains("cargo test") && run_of(s).ends_with("-- windows"));
            let installed = apt_packages(job);
            let missing: Vec<&String> = wanted
                .difference(&installed)
                .filter(|p| !(only_windows && ["chromium", "jq"].contains(&p.as_str())))
                .collect();
            assert!(
                missing.is_empty(),
                "{name} job {job_name} runs the tests with CI=true but does not install {missing:?} (.ci/run does)"
            );
        }
    }
    assert!(checked >= 1, "no job runs the tests under CI=true");
}

/// In a container job `${{ github.workspace }}` (and `runner.workspace`, `runner.temp`) is
/// the host's path, not the container's (actions/runner#2058): never in such a job's env or
/// inputs, nor in the composite action those jobs use.
#[test]
fn no_host_path_expression_reaches_a_container_job() {
    const HOST_PATHS: [&str; 3] = ["github.workspace", "runner.workspace", "runner.temp"];
    let mut found = Vec::new();
    let mut containers = 0;
    for (name, workflow) in workflows() {
        for (job_name, job) in jobs(&workflow) {
            if job.get("container").is_none() {
                continue;
            }
            containers += 1;
            let text = serde_json::to_string(job).unwrap();
            for expr in HOST_PATHS {
                if text.contains(&format!("${{{{ {expr}")) {
                    found.push(format!("{name} job {job_name}: {expr}"));
                }
            }
            if text.contains("./.github/actions/build-setup") {
                let setup = serde_json::to_string(&setup_steps()).unwrap();
                for expr in HOST_PATHS {
                    if setup.contains(&format!("${{{{ {expr}")) {
                        found.push(format!("{SETUP} (used by {name} job {job_name}): {expr}"));
                    }
                }
            }
        }
    }
    assert!(containers >= 2, "the container jobs moved?");
    assert!(
        found.is_empty(),
        "use $GITHUB_WORKSPACE in a run step:\n{}",
        found.join("\n")
    );
}

/// Every job stops at a stated limit, not GitHub's 6 hours, and the figure behind it is
/// written beside it (a comment just above).
#[test]
fn every_job_has_a_timeout_with_its_reason_beside_it() {
    for (name, workflow) in workflows() {
        let text = read(&format!("{WORKFLOWS}/{name}"));
        let lines: Vec<&str> = text.lines().collect();
        for (job_name, job) in jobs(&workflow) {
            if job.get("uses").is_some() {
                continue; // a reusable workflow's jobs carry their own
            }
            assert!(
                job.get("timeout-minutes").is_some(),
                "{name} job {job_name} has no timeout-minutes"
            );
        }
        for (n, line) in lines.iter().enumerate() {
            let trimmed = line.trim();
            let Some((key, value)) = trimmed.split_once(':') else {
                continue;
            };
            let limit = key == "timeout-minutes" || key == "native-timeout";
            if !limit || value.trim().parse::<u32>().is_err() && !value.contains("${{") {
                continue;
            }
            assert!(
                n > 0 && lines[n - 1].trim().starts_with('#'),
                "{name}:{}: `{trimmed}` has no comment above it saying where the figure comes from",
                n + 1
            );
        }
    }
}

/// A composite action's steps cannot take timeout-minutes: every install that downloads or
/// runs an installer bounds itself and fails with a line that names it.
#[test]
fn sdk_installs_are_bounded_and_fail_clearly() {
    let setup = setup_steps();
    let windows = step_named(&setup, "Install CUDA 12.8 (Windows)");
    let run = run_of(windows);
    for needle in [
        "curl --netrc-optional",
        "--retry",
        "--max-time",
        "cuda_12.8.1_572.61_windows.exe",
        "timeout 1800 ./cuda.exe -s nvcc_12.8 cudart_12.8 cublas_dev_12.8 curand_dev_12.8",
        "::error title=CUDA download::",
        "::error title=CUDA install::",
    ] {
        assert!(run.contains(needle), "`{needle}` in:\n{run}");
    }
    // Found after the install or the cache restore alike.
    let found = run_of(step_named(&setup, "CUDA 12.8 found (Windows)"));
    assert!(
        found.contains("CUDA_PATH=") && found.contains("::error"),
        "{found}"
    );
    // Upstream PR #1862/#1871: Git Bash's curl fails "(26) .netrc error" on `-n`.
    assert!(!run.contains(" -n "), "{run}");
    let linux = run_of(step_named(&setup, "Install CUDA 12.8 (Linux)"));
    for needle in [
        "timeout 1800 dnf install",
        "cuda-nvcc-12-8-12.8.93-1",
        "::error title=CUDA install::",
    ] {
        assert!(linux.contains(needle), "`{needle}` in:\n{linux}");
    }
    // CUDA 12.8 compiles with windows-2022's MSVC 19.44 (12.3 and older cannot).
    assert!(
        ct2v_pipeline::sdk::cuda_msvc::problem("12.8", "Version 19.44.35207 for x64").is_none()
    );
    // The unattended SDK install is the tool's (bounded there, tests/it/install_sdk.rs).
    let hip = step_named(&setup, "Install the GPU SDK (unattended)");
    assert!(run_of(hip).contains("xtask install-sdk"), "{hip}");
    assert_eq!(
        hip["if"],
        "inputs.needs-sdk == 'true' && inputs.sdk-installer == 'true'"
    );
}

/// A Python job on top of a native job's library does not install the SDK the library was
/// compiled with (3 GB for CUDA on Windows): only where the matrix says the job needs it.
#[test]
fn only_jobs_that_need_the_sdk_install_it() {
    for step in setup_steps() {
        let name = step["name"].as_str().unwrap_or("");
        if name.starts_with("Install CUDA") || name.starts_with("Install the GPU SDK") {
            let condition = step["if"].as_str().unwrap_or("");
            assert!(
                condition.contains("inputs.needs-sdk == 'true'"),
                "{name}: {condition}"
            );
        }
    }
    let doctor = step_named(&setup_steps(), "What this build needs (doctor)").clone();
    assert!(run_of(&doctor).contains("--prebuilt-native"), "{doctor}");

    let scratch = common::Scratch::new();
    let out = scratch.run(&["matrix", "--json", "--include-unpinned"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let matrix: Value = serde_json::from_str(&out.stdout).unwrap();
    let entry = |name: &str| {
        matrix["include"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == name)
            .unwrap_or_else(|| panic!("no entry {name}"))
            .clone()
    };
    // cuda: the bundle copies nothing from the toolkit.
    let cuda = entry("cuda windows-x86_64 py3.12");
    assert_eq!(
        (cuda["sdk"].as_str(), cuda["needs-sdk"].as_bool()),
        (Some("cuda"), Some(false))
    );
    // rocm-gfx1010: the bundle copies the SDK's DLLs, so its Python jobs install it too.
    let gfx = entry("rocm-gfx1010 windows-x86_64 py3.12");
    assert_eq!(gfx["needs-sdk"], true, "{gfx}");
    let cpu = entry("cpu linux-x86_64 py3.12");
    assert_eq!(
        (cpu["sdk"].as_str(), cpu["needs-sdk"].as_bool()),
        (Some(""), Some(false))
    );
    let native = scratch.run(&["matrix", "--json", "--native", "--include-unpinned"]);
    let native: Value = serde_json::from_str(&native.stdout).unwrap();
    for job in native["include"].as_array().unwrap() {
        assert_eq!(job["needs-sdk"], job["sdk"] != "", "{job}");
    }
}

/// The jobs that hold `contents: write`, `id-token: write` or `pages: write` run only actions
/// pinned to a full commit SHA (with the tag in a comment): a tag can be moved.
#[test]
fn privileged_jobs_pin_every_action_to_a_commit() {
    let text = read(&format!("{WORKFLOWS}/release.yml"));
    let release = yaml(&format!("{WORKFLOWS}/release.yml"));
    let mut checked = 0;
    for (job_name, job) in jobs(&release) {
        let permissions = serde_json::to_string(&job["permissions"]).unwrap();
        if !permissions.contains("write") {
            continue;
        }
        for step in steps(job) {
            let Some(reference) = step["uses"].as_str() else {
                continue;
            };
            checked += 1;
            if reference.starts_with("./") {
                continue;
            }
            let (_, rev) = reference.split_once('@').expect("an action@ref");
            assert!(
                rev.len() == 40 && rev.bytes().all(|b| b.is_ascii_hexdigit()),
                "job {job_name}: {reference} is not pinned to a commit"
            );
            let line = text
                .lines()
                .find(|l| l.contains(reference))
                .expect("the reference's line");
            assert!(line.contains(" # "), "{line}: say which tag the commit is");
        }
    }
    assert!(checked >= 5, "{checked}");
}

/// A re-run of a failed release must not trip over what the first run already did: nothing
/// is uploaded after the release is created but the pip index pushed to gh-pages (its pages
/// link to the assets, which must exist); creating is skipped when the release exists, and
/// then the notes are rewritten (a re-run adds the variants that were left out); every
/// artifact upload overwrites one of its name from an earlier attempt (no 409).
#[test]
fn nothing_is_uploaded_after_the_release_is_published() {
    let release = yaml(&format!("{WORKFLOWS}/release.yml"));
    let job = &release["jobs"]["release"];
    let all = steps(job);
    let publish = all
        .iter()
        .position(|s| run_of(s).contains("gh release create"))
        .expect("a publish step");
    let after: Vec<&str> = all[publish + 1..]
        .iter()
        .map(|s| s["name"].as_str().unwrap_or("?"))
        .collect();
    assert!(after.is_empty(), "after the publish: {after:?}");
    // The pip index (its pages link to the assets, which must exist) comes after the release.
    let index = &release["jobs"]["pip-index"];
    assert_eq!(index["needs"], "release");
    let run = run_of(&all[publish]);
    for needle in [
        "gh release view",
        "--clobber",
        "gh release edit \"$GITHUB_REF_NAME\" --notes-file",
        "find \"$dir\" -maxdepth 1 -type f | sort",
    ] {
        assert!(run.contains(needle), "`{needle}` in {run}");
    }
    let gather = run_of(step_named(all, "Gather the release"));
    assert!(
        gather.contains("xtask release --partial --from artifacts"),
        "{gather}"
    );
    let site = run_of(step_named(
        steps(index),
        "The pip index site (every release)",
    ));
    assert!(
        site.contains("xtask pages") && site.contains("--earlier"),
        "{site}"
    );
    // Every upload of an artifact in any workflow replaces one of its name (a re-run of a job
    // hits a 409 otherwise; pin.yml's too).
    let mut uploads = 0;
    for (path, workflow) in workflows() {
        for (job_name, job) in jobs(&workflow) {
            for step in steps(job) {
                if step["uses"]
                    .as_str()
                    .is_some_and(|u| u.starts_with("actions/upload-artifact@"))
                {
                    uploads += 1;
                    assert_eq!(step["with"]["overwrite"], true, "{path} {job_name}: {step}");
                }
            }
        }
    }
    assert!(uploads >= 6, "{uploads}");
}

/// Pages from a tag: no Pages artifact and no `github-pages` environment (which admits only
/// the default branch unless a tag rule is added: actions/deploy-pages#76); the site is pushed
/// to gh-pages, and a preflight job, the first of the run, checks the setting that needs. The
/// release job's Pages steps and the preflight are off together with `CT2V_PAGES=false`.
#[test]
fn the_index_goes_live_from_a_tag_and_the_pages_setting_is_checked_first() {
    let release = yaml(&format!("{WORKFLOWS}/release.yml"));
    for (job_name, job) in jobs(&release) {
        assert!(
            job["environment"].is_null(),
            "{job_name} deploys to an environment"
        );
        for step in steps(job) {
            let uses = step["uses"].as_str().unwrap_or("");
            for gone in ["deploy-pages", "upload-pages-artifact", "configure-pages"] {
                assert!(!uses.contains(gone), "{job_name} uses {uses}");
            }
        }
    }
    let preflight = &release["jobs"]["preflight"];
    assert!(preflight["needs"].is_null(), "the first job");
    assert_eq!(preflight["permissions"]["pages"], "read");
    assert_eq!(release["jobs"]["build"]["needs"], "preflight");
    let check = step_named(steps(preflight), "Pages publishes the gh-pages branch");
    assert!(run_of(check).starts_with(".github/scripts/pages-preflight "));
    assert_eq!(check["if"], "vars.CT2V_PAGES != 'false'");
    let index = &release["jobs"]["pip-index"];
    let push = step_named(steps(index), "Publish the pip index (gh-pages)");
    assert!(run_of(push).contains(".github/scripts/publish-site site "));
    assert!(
        index["if"]
            .as_str()
            .unwrap()
            .contains("vars.CT2V_PAGES != 'false'"),
        "{}",
        index["if"]
    );
    // docs/ci.md lists the one setting the preflight asks for.
    let ci = read("docs/ci.md");
    assert!(
        ci.contains("Source: **Deploy from a branch**") && ci.contains("`gh-pages`"),
        "docs/ci.md names the Pages setting"
    );
}

/// The release waits for the builds only: the tool's own test jobs gate pull requests in
/// their own workflow, so a flaky wine test cannot hold back a release.
#[test]
fn the_release_depends_on_the_builds_not_on_the_tools_tests() {
    let release = yaml(&format!("{WORKFLOWS}/release.yml"));
    assert_eq!(
        release["jobs"]["build"]["uses"],
        "./.github/workflows/build.yml"
    );
    assert_eq!(
        release["jobs"]["release"]["needs"],
        serde_json::json!(["preflight", "build"])
    );
    let called = [".github/workflows/build.yml", ".github/workflows/lane.yml"];
    for path in called {
        for (job_name, job) in jobs(&yaml(path)) {
            for step in steps(job) {
                assert!(
                    !run_of(step).contains("cargo test"),
                    "{path} job {job_name} runs the tool's tests: they belong in tool.yml"
                );
            }
        }
    }
    let tool = yaml(&format!("{WORKFLOWS}/tool.yml"));
    assert!(tool["jobs"]["xtask-windows-wine"].is_object());
    assert!(tool["on"]["pull_request"].is_null() && tool["on"].get("pull_request").is_some());
}

/// One run per ref: a new push to a pull request cancels the last (hours of Windows CUDA),
/// never a push to main or a tag; a called workflow's group differs from its caller's (the
/// same group cancels the caller: GitHub docs, "Reusing workflow configurations").
#[test]
fn runs_are_grouped_per_ref_and_pull_requests_cancel_the_previous_run() {
    let mut groups = BTreeSet::new();
    for (name, workflow) in workflows() {
        let triggers = &workflow["on"];
        let concurrency = &workflow["concurrency"];
        if triggers.get("workflow_call").is_some() && triggers.as_object().unwrap().len() == 1 {
            assert!(
                concurrency.is_null(),
                "{name}: a called-only workflow runs in its caller's group"
            );
            continue;
        }
        let group = concurrency["group"]
            .as_str()
            .unwrap_or_else(|| panic!("{name}: no concurrency group"));
        assert!(group.contains("${{ github.ref }}"), "{name}: {group}");
        assert!(!group.contains("github.workflow"), "{name}: {group}");
        assert!(
            groups.insert(group.to_string()),
            "{name}: group {group} shared"
        );
        if triggers.get("pull_request").is_some() {
            assert_eq!(
                concurrency["cancel-in-progress"], "${{ github.event_name == 'pull_request' }}",
                "{name}"
            );
        }
    }
    assert_eq!(
        yaml(&format!("{WORKFLOWS}/release.yml"))["concurrency"]["cancel-in-progress"],
        false
    );
}

/// Hosted Linux source builds run in the manylinux_2_28 image (the matrix names it per
/// entry), with that image's Python; Windows and repackaging jobs run on the runner.
#[test]
fn hosted_linux_source_builds_run_in_the_manylinux_2_28_image() {
    let lane = yaml(&format!("{WORKFLOWS}/lane.yml"));
    for job in ["native", "build"] {
        assert_eq!(
            lane["jobs"][job]["container"]["image"],
            "${{ matrix.container }}"
        );
    }
    let python = run_of(step_named(
        &setup_steps(),
        "Python ${{ inputs.python }} of the manylinux image",
    ))
    .to_string();
    assert!(
        python.contains("/opt/python/cp${PY/./}-cp${PY/./}/bin"),
        "{python}"
    );
    let scratch = common::Scratch::new();
    let out = scratch.run(&[
        "matrix",
        "--json",
        "--include-self-hosted",
        "--include-unpinned",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let matrix: Value = serde_json::from_str(&out.stdout).unwrap();
    for entry in matrix["include"].as_array().unwrap() {
        let hosted_linux_build = entry["platform"] == "linux-x86_64"
            && entry["compiles"] == true
            && entry["runs-on"].is_string();
        let expected = if hosted_linux_build {
            ct2v_pipeline::plan::matrix::MANYLINUX_IMAGE
        } else {
            ""
        };
        assert_eq!(entry["container"], expected, "{entry}");
    }
}

/// The lanes: each entry in exactly one, GPU-kernel native jobs apart from the rest, and
/// build.yml calls lane.yml once per lane with that lane's matrices.
#[test]
fn each_lane_builds_its_own_native_jobs_then_its_wheels() {
    let scratch = common::Scratch::new();
    let json = |args: &[&str]| json_of(&scratch, args);
    let all = ["--include-self-hosted", "--include-unpinned"];
    let every = json(&[&["matrix", "--json"][..], &all].concat());
    let mut names = BTreeSet::new();
    for lane in ["main", "gpu"] {
        let entries = json(&[&["matrix", "--json", "--lane", lane][..], &all].concat());
        for e in entries["include"].as_array().unwrap() {
            assert_eq!(e["lane"], lane);
            assert!(names.insert(e["name"].as_str().unwrap().to_string()), "{e}");
            let gpu_kernels = e["compiles"] == true && e["sdk"] != "";
            assert_eq!(lane == "gpu", gpu_kernels, "{e}");
        }
    }
    assert_eq!(names.len(), every["include"].as_array().unwrap().len());

    // The checks job makes both lanes' matrices (.github/scripts/first-checks, run in
    // tests/it/tag_run.rs), after the version facts are checked against upstream.
    let build = yaml(&format!("{WORKFLOWS}/build.yml"));
    let script = read(".github/scripts/first-checks");
    let at = |needle: &str| {
        script
            .find(needle)
            .unwrap_or_else(|| panic!("no `{needle}` in first-checks"))
    };
    assert!(at("check \"Version facts agree") < at("check \"Matrix of the main lane\""));
    assert!(script.contains("check \"Matrix of the gpu lane\" lane_matrix gpu"));
    for lane in ["main", "gpu"] {
        let job = &build["jobs"][lane];
        assert_eq!(job["uses"], "./.github/workflows/lane.yml");
        assert_eq!(
            job["with"]["matrix"],
            format!("${{{{ needs.checks.outputs.{lane} }}}}")
        );
        assert_eq!(
            job["with"]["native"],
            format!("${{{{ needs.checks.outputs.{lane}-native }}}}")
        );
        assert_eq!(
            build["jobs"]["checks"]["outputs"][format!("{lane}-native")],
            format!("${{{{ steps.checks.outputs.{lane}-native }}}}")
        );
    }
}

/// The C++ library is compiled once per variant and platform (the native job, `build --until
/// install-ctranslate2`), and each Python's job builds only the wheel on top of the install
/// prefixes it downloads where the plan's install steps write them (`--prebuilt-native`);
/// both stages use the same setup; the release takes only the entries' artifacts.
#[test]
fn the_cpp_library_is_built_once_per_variant_and_platform() {
    let lane = yaml(&format!("{WORKFLOWS}/lane.yml"));
    let native = &lane["jobs"]["native"];
    assert_eq!(
        native["strategy"]["matrix"],
        "${{ fromJSON(inputs.native) }}"
    );
    let build_step = run_of(step_named(steps(native), "Build the C++ library")).to_string();
    assert!(
        build_step.contains("--until install-ctranslate2"),
        "{build_step}"
    );
    let upload = steps(native).last().unwrap();
    assert_eq!(
        upload["with"]["path"],
        "target/xtask/${{ matrix.slot }}/${{ matrix.platform }}/prefix/"
    );
    let build = &lane["jobs"]["build"];
    assert_eq!(build["needs"], "native");
    let download = step_named(steps(build), "The native job's C++ library");
    assert_eq!(download["with"]["name"], "${{ matrix.native }}");
    assert_eq!(
        download["with"]["path"],
        "target/xtask/${{ matrix.slot }}/${{ matrix.platform }}/prefix"
    );
    assert!(run_of(step_named(steps(build), "Build")).contains("--prebuilt-native"));
    let wheel_stage = "${{ steps.native.outputs.prebuilt == 'false' && 'native' || 'wheel' }}";
    for (job, stage) in [(native, "native"), (build, wheel_stage)] {
        let setup = steps(job)
            .iter()
            .find(|s| s["uses"] == "./.github/actions/build-setup")
            .expect("build-setup");
        assert_eq!(setup["with"]["stage"], stage);
        for field in ["sdk", "sdk-installer"] {
            assert_eq!(setup["with"][field], format!("${{{{ matrix.{field} }}}}"));
        }
    }
    assert!(read(&format!("{WORKFLOWS}/release.yml")).contains("pattern: \"*-py*\""));

    // Every source entry names a native job that exists, one per slot and platform, and the
    // prefix it uploads is where that entry's install steps write.
    let scratch = common::Scratch::new();
    let json = |args: &[&str]| json_of(&scratch, args);
    let all = ["--include-self-hosted", "--include-unpinned"];
    let entries = json(&[&["matrix", "--json"][..], &all].concat());
    let natives = json(&[&["matrix", "--json", "--native"][..], &all].concat());
    let natives = natives["include"].as_array().unwrap();
    let names: Vec<&str> = natives
        .iter()
        .map(|n| n["artifact"].as_str().unwrap())
        .collect();
    let unique: BTreeSet<&str> = names.iter().copied().collect();
    assert_eq!(unique.len(), names.len(), "{names:?}");
    for entry in entries["include"].as_array().unwrap() {
        let wanted = entry["native"].as_str().unwrap();
        assert_eq!(entry["compiles"] == true, !wanted.is_empty(), "{entry}");
        if wanted.is_empty() {
            continue;
        }
        assert!(names.contains(&wanted), "{wanted} not in {names:?}");
        let plan = json(&[
            "plan",
            "--json",
            "--variant",
            entry["variant"].as_str().unwrap(),
            "--ctranslate2",
            entry["ctranslate2"].as_str().unwrap(),
            "--platform",
            entry["platform"].as_str().unwrap(),
            "--python",
            entry["python"].as_str().unwrap(),
        ]);
        let prefix = format!(
            "target/xtask/{}/{}/prefix/",
            entry["slot"].as_str().unwrap(),
            entry["platform"].as_str().unwrap()
        );
        for step in plan["steps"].as_array().unwrap() {
            if step["kind"] == "install" {
                for output in step["outputs"].as_array().unwrap() {
                    assert!(
                        output.as_str().unwrap().contains(&prefix),
                        "{output} is not below {prefix}"
                    );
                }
            }
        }
    }
}

/// rocm-gfx1010 on Windows builds on a hosted windows-2022 runner: the HIP SDK 6.2.4
/// installer is an input of the variant (the URL ollama's release workflow uses for ROCm 6.2),
/// installed by `install-sdk`; the entry is left out of the default matrix until the
/// installer and the community rocBLAS are pinned, which the pin workflow does.
#[test]
fn gfx1010_builds_on_a_hosted_windows_runner_once_pinned() {
    let scratch = common::Scratch::new();
    let json = |args: &[&str]| json_of(&scratch, args);
    let unpinned = json(&["matrix", "--json", "--include-unpinned"]);
    let gfx: Vec<&Value> = unpinned["include"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["variant"] == "rocm-gfx1010" && e["platform"] == "windows-x86_64")
        .collect();
    assert_eq!(gfx.len(), 5, "one per Python");
    for e in &gfx {
        assert_eq!(e["runs-on"], "windows-2022", "{e}");
        assert_eq!(e["sdk-installer"], true, "{e}");
    }
    let default = scratch.run(&["matrix", "--json"]);
    assert!(
        !default.stdout.contains("\"rocm-gfx1010\""),
        "unpinned inputs keep it out of the default matrix"
    );
    assert!(
        default.stderr.contains("hip-sdk-installer")
            && default.stderr.contains("community-rocblas"),
        "{}",
        default.stderr
    );
    let plan = json(&common::command_args::job(
        "plan",
        "rocm-gfx1010",
        "windows-x86_64",
        "3.12",
        &["--json"],
    ));
    let installer = &plan["sdk_installer"];
    assert_eq!(
        installer["url"],
        "https://download.amd.com/developer/eula/rocm-hub/AMD-Software-PRO-Edition-24.Q4-WinSvr2022-For-HIP.exe"
    );
    assert_eq!(
        plan["sdk"]["installer"]["args"],
        serde_json::json!(["-install"])
    );
    let fetched: Vec<&str> = plan["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert!(
        !fetched.contains(&"hip-sdk-installer"),
        "a build never fetches it: {fetched:?}"
    );

    // Once pinned (here: a made-up pin for both), the default matrix has it.
    let file = scratch.path().join("variants/rocm-gfx1010.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    let pin = format!("sha256 = \"{}\"\nsize = 1\n", "ab".repeat(32));
    let text: String = text
        .lines()
        .map(|line| {
            let input_url = line.starts_with("url = ")
                && (line.ends_with("-For-HIP.exe\"") || line.ends_with("hip.sdk.6.2.4.7z\""));
            if input_url {
                format!("{line}\n{pin}")
            } else {
                format!("{line}\n")
            }
        })
        .collect();
    std::fs::write(&file, text).unwrap();
    let pinned = json(&["matrix", "--json"]);
    assert!(
        pinned["include"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["variant"] == "rocm-gfx1010"),
        "{pinned}"
    );
}

/// The pin workflow: by hand on a hosted runner, `cargo xtask pin` for every variant and
/// every CTranslate2 version file, the change handed back as a patch (summary and artifact),
/// never pushed.
#[test]
fn the_pin_workflow_pins_every_variant_and_version_and_hands_back_a_patch() {
    let pin = yaml(&format!("{WORKFLOWS}/pin.yml"));
    assert!(pin["on"].get("workflow_dispatch").is_some());
    assert_eq!(pin["on"].as_object().unwrap().len(), 1, "only by hand");
    assert_eq!(pin["permissions"]["contents"], "read", "nothing is pushed");
    let job = &pin["jobs"]["pin"];
    let all = steps(job);
    let run: String = all.iter().map(run_of).collect::<Vec<_>>().join("\n");
    for needle in [
        "cargo xtask variants --json",
        "variants/ctranslate2/*.toml",
        "cargo xtask pin --variant \"$variant\" --ctranslate2 \"$version\"",
        "git diff > pins.patch",
        "GITHUB_STEP_SUMMARY",
    ] {
        assert!(run.contains(needle), "`{needle}` in:\n{run}");
    }
    let upload = all
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/upload-artifact@"))
        })
        .expect("an artifact");
    assert!(
        upload["with"]["path"]
            .as_str()
            .unwrap()
            .contains("pins.patch")
    );
    // Every variant the tool lists and every version file exists where the loop looks.
    let versions = std::fs::read_dir(common::repo_root().join("variants/ctranslate2"))
        .unwrap()
        .count();
    assert!(versions >= 2);
    assert!(Path::new(&common::repo_root().join(".github/workflows/pin.yml")).is_file());
}

/// The build job's Windows entries check the wheel where users run it: the runner's Python
/// transcribes with it and freezes it (the same commands that run it under wine on Linux).
#[test]
fn windows_wheel_jobs_transcribe_and_freeze_on_the_runner() {
    let lane = yaml(&format!("{WORKFLOWS}/lane.yml"));
    let step = step_named(steps(&lane["jobs"]["build"]), "Speech check (Windows)");
    assert_eq!(step["if"], "runner.os == 'Windows' && matrix.speech-check");
    let run = run_of(step);
    assert!(
        run.contains("xtask verify \"${args[@]}\" --transcribe --device cpu"),
        "{run}"
    );
    assert!(
        run.contains("xtask smoke \"${args[@]}\" --frozen --device cpu"),
        "{run}"
    );
}

/// An entry is uploaded under the name `release` takes only after every check passed; a
/// failed build or check uploads what it built and its logs under `failed-<artifact>`, which
/// `release` never takes but names (tests/it/release.rs). The same for a native job's logs.
#[test]
fn a_failed_check_keeps_its_entry_out_and_its_build_and_logs_for_a_look() {
    let lane = yaml(&format!("{WORKFLOWS}/lane.yml"));
    let all = steps(&lane["jobs"]["build"]);
    let position = |f: &dyn Fn(&Value) -> bool| all.iter().position(f);
    let check = position(&|s| s["name"] == "Speech check (Windows)").unwrap();
    let passed = position(&|s| {
        s["uses"]
            .as_str()
            .is_some_and(|u| u.starts_with("actions/upload-artifact@"))
            && s["with"]["name"] == "${{ matrix.artifact }}"
    })
    .expect("the entry's upload");
    assert!(check < passed, "the upload comes after the checks");
    assert!(
        all[passed]["if"].is_null(),
        "only when every step before passed"
    );
    let failed = &all[position(&|s| s["with"]["name"] == "failed-${{ matrix.artifact }}")
        .expect("the failed entry's upload")];
    assert_eq!(failed["if"], "failure()");
    let paths = failed["with"]["path"].as_str().unwrap();
    assert!(
        paths.contains("/dist/py${{ matrix.python }}/") && paths.contains("target/xtask/logs/"),
        "{paths}"
    );
    let native = steps(&lane["jobs"]["native"]);
    assert!(native.iter().any(|s| s["with"]["name"] == "failed-${{ matrix.artifact }}" && s["if"] == "failure()"));
    // release.yml downloads both kinds (`*-py*`); `release` takes only the passed ones.
    assert_eq!(ct2v_pipeline::release::select::FAILED_PREFIX, "failed-");
}

/// Every `run:` step runs in bash with pipefail: GitHub runs a step with no `shell:` as
/// `bash -e {0}`, where `cmd | tee -a log || status=1` never sets status (the pin gate could
/// not fail); `shell: bash` is `bash --noprofile --norc -eo pipefail {0}` (GitHub docs,
/// workflow syntax). A step that pipes must get it from the workflow's `defaults`, its job's,
/// or its own `shell: bash` (composite actions must name a shell on every step).
#[test]
fn every_step_that_pipes_runs_with_pipefail() {
    let pipes = |run: &str| {
        run.lines()
            .any(|l| l.replace("||", "").contains('|') && !l.trim_start().starts_with('#'))
    };
    let mut found = Vec::new();
    for (name, workflow) in workflows() {
        let default = &workflow["defaults"]["run"]["shell"];
        for (job_name, job) in jobs(&workflow) {
            let job_default = &job["defaults"]["run"]["shell"];
            for step in steps(job) {
                let shell = [&step["shell"], job_default, default]
                    .into_iter()
                    .find(|s| !s.is_null());
                let pipefail =
                    shell == Some(&Value::from("bash")) || run_of(step).contains("set -o pipefail");
                if step.get("run").is_some()
                    && !pipefail
                    && (pipes(run_of(step)) || shell.is_none())
                {
                    found.push(format!("{name} {job_name}: {}", step["name"]));
                }
            }
        }
    }
    for step in setup_steps() {
        if step.get("run").is_some() && step["shell"] != "bash" {
            found.push(format!("{SETUP}: {}", step["name"]));
        }
    }
    assert!(
        found.is_empty(),
        "steps without pipefail:\n{}",
        found.join("\n")
    );
}

/// A file written with a truncating redirect inside a loop keeps only the last round (the
/// matrix job's notes lost the first lane's left-out entries): append, or truncate once
/// before the loop.
#[test]
fn no_loop_truncates_a_file_it_writes_each_round() {
    let mut found = Vec::new();
    let mut scripts: Vec<(String, String)> = Vec::new();
    for (name, workflow) in workflows() {
        for (job_name, job) in jobs(&workflow) {
            for step in steps(job) {
                scripts.push((format!("{name} {job_name}"), run_of(step).to_string()));
            }
        }
    }
    for (at, run) in scripts {
        let mut depth = 0usize;
        for line in run.lines().map(str::trim) {
            if line.starts_with("for ") || line.starts_with("while ") {
                depth += 1;
            }
            if line == "done" || line.starts_with("done ") {
                depth = depth.saturating_sub(1);
            }
            if depth == 0 {
                continue;
            }
            let words = line.replace(">>", " ").replace(">&", " ");
            for (i, _) in words.match_indices('>') {
                let target = words[i + 1..].trim_start();
                let target = target.split_whitespace().next().unwrap_or("");
                if !target.is_empty() && !target.starts_with("/dev/") && !target.contains('$') {
                    found.push(format!("{at}: {line}"));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "truncated in a loop:\n{}",
        found.join("\n")
    );
}

/// Nothing native is rebuilt that an earlier run built: the native job restores its C++
/// library by the plan's `native-key` (tests/it/plan.rs: it follows the C++ inputs only)
/// before any SDK install, and skips both on a hit; the Windows CUDA toolkit is cached by its
/// installer (the URL's file and the sub-packages), the HIP SDK by the installer's sha256 (one
/// entry for every variant that installs it, not one per variant).
#[test]
fn native_libraries_and_sdks_are_cached_by_what_they_are_made_from() {
    let lane = yaml(&format!("{WORKFLOWS}/lane.yml"));
    let native = steps(&lane["jobs"]["native"]);
    let cache = step_named(native, "The C++ library of an earlier run");
    assert_eq!(
        cache["with"]["key"],
        "native-${{ matrix.slot }}-${{ matrix.platform }}-${{ matrix.native-key }}"
    );
    let hit =
        "steps.main-run.outcome != 'success' && steps.native-cache.outputs.cache-hit != 'true'";
    let setup = native
        .iter()
        .position(|s| s["uses"] == "./.github/actions/build-setup")
        .unwrap();
    let at = native
        .iter()
        .position(|s| s["id"] == "native-cache")
        .unwrap();
    assert!(at < setup);
    assert_eq!(native[setup]["if"], hit);
    assert_eq!(step_named(native, "Build the C++ library")["if"], hit);
    for job in ["native", "build"] {
        let setup = steps(&lane["jobs"][job])
            .iter()
            .find(|s| s["uses"] == "./.github/actions/build-setup")
            .unwrap();
        assert_eq!(setup["with"]["sdk-key"], "${{ matrix.sdk-key }}");
    }
    let setup = setup_steps();
    let cuda = step_named(&setup, "CUDA 12.8 of an earlier run (Windows)");
    let key = cuda["with"]["key"].as_str().unwrap();
    let install = run_of(step_named(&setup, "Install CUDA 12.8 (Windows)"));
    let installer = "cuda_12.8.1_572.61_windows.exe";
    assert!(
        key.contains(installer) && install.contains(installer),
        "{key}"
    );
    for package in ["nvcc", "cudart", "cublas_dev", "curand_dev"] {
        assert!(
            key.contains(package) && install.contains(&format!("{package}_12.8")),
            "{key}"
        );
    }
    assert!(
        step_named(&setup, "Install CUDA 12.8 (Windows)")["if"]
            .as_str()
            .unwrap()
            .contains("steps.cuda-cache.outputs.cache-hit != 'true'")
    );
    let hip = step_named(&setup, "GPU SDK cache");
    assert_eq!(
        hip["with"]["key"],
        "sdk-${{ inputs.platform }}-${{ inputs.sdk-key }}"
    );

    // The matrix gives every variant that installs the same SDK the same key: its installer's
    // sha256 (here a made-up pin of the HIP SDK installer every rocm-gfx* variant shares).
    let scratch = common::Scratch::new();
    let pin = format!("sha256 = \"{}\"\nsize = 1\n", "cd".repeat(32));
    scratch.edit(
        "variants/rocm-gfx1010.toml",
        "-For-HIP.exe\"\n",
        &format!("-For-HIP.exe\"\n{pin}"),
    );
    let matrix = json_of(&scratch, &["matrix", "--json", "--include-unpinned"]);
    let keys: BTreeSet<&str> = matrix["include"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["sdk-installer"] == true)
        .map(|e| e["sdk-key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, BTreeSet::from(["cd".repeat(32).as_str()]), "{matrix}");
}

/// The tool is compiled once per run and OS (build.yml's `tool-linux` and `tool-windows` jobs,
/// one composite action; Linux in the manylinux image so that the binary runs in it) and every
/// other job of a build or release runs that binary: none of them sets up Rust or runs cargo,
/// but for the step that builds the tool when this run's artifact is gone (tests/it/tag_run.rs).
#[test]
fn the_tool_is_built_once_per_run_and_handed_to_every_job() {
    let build = yaml(&format!("{WORKFLOWS}/build.yml"));
    for (job, container) in [
        (
            "tool-linux",
            Value::from("quay.io/pypa/manylinux_2_28_x86_64"),
        ),
        ("tool-windows", Value::Null),
    ] {
        let tool = &build["jobs"][job];
        assert_eq!(tool["container"], container, "{job}");
        assert!(
            steps(tool)
                .iter()
                .any(|s| s["uses"] == "./.github/actions/build-tool")
        );
        let os = if job == "tool-linux" {
            "Linux"
        } else {
            "Windows"
        };
        let upload = steps(tool).last().unwrap();
        assert_eq!(upload["with"]["name"], format!("xtask-{os}"));
    }
    assert_eq!(build["jobs"]["checks"]["needs"], "tool-linux");
    let mut files: Vec<(String, Value)> = ["build.yml", "lane.yml", "release.yml"]
        .iter()
        .map(|n| (n.to_string(), yaml(&format!("{WORKFLOWS}/{n}"))))
        .collect();
    files.push((
        SETUP.to_string(),
        serde_json::json!({"jobs": {"setup": {"steps": setup_steps()}}}),
    ));
    let rebuild = "The tool, built here (this run's artifact is gone)";
    for (name, workflow) in &files {
        for (job_name, job) in jobs(workflow) {
            for step in steps(job) {
                let uses = step["uses"].as_str().unwrap_or("");
                assert!(
                    !uses.starts_with("dtolnay/rust-toolchain"),
                    "{name} {job_name}"
                );
                assert!(
                    !run_of(step).contains("cargo ") || step["name"] == rebuild,
                    "{name} {job_name}: {step}"
                );
            }
        }
    }
    let action = read(".github/actions/tool/action.yml");
    assert!(action.contains("name: xtask-${{ runner.os }}"), "{action}");
}
