//! The GitHub Actions workflows as text: what actionlint (in `.ci/run`) does not check.

use crate::common;

/// Issue 29 item 8: no step hides a failing command as `echo "x=$(cmd)"`: `bash -e` (the
/// default shell of a `run:` step) does not stop when a command substitution inside another
/// command's arguments fails, so the output would be set to an empty value and the job go on.
#[test]
fn no_workflow_step_hides_a_failing_command_substitution() {
    let dir = common::repo_root().join(".github/workflows");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            let command = line.trim_start().trim_start_matches("run:").trim_start();
            if command.starts_with("echo ") && command.contains("$(") {
                found.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "assign the substitution to a variable first, then echo it:\n{}",
        found.join("\n")
    );
}

/// The text of the step named `name` in a workflow or action file, up to the next step at
/// the same indentation.
fn step_run(workflow: &str, name: &str) -> String {
    let start = workflow
        .find(&format!("- name: {name}"))
        .unwrap_or_else(|| panic!("no step `{name}`"));
    let indent = start - workflow[..start].rfind('\n').map_or(0, |n| n + 1);
    let rest = &workflow[start..];
    let next = format!("\n{}- ", " ".repeat(indent));
    let end = rest[1..].find(&next).map_or(rest.len(), |e| e + 1);
    rest[..end].to_string()
}

fn read(path: &str) -> String {
    std::fs::read_to_string(common::repo_root().join(path)).unwrap()
}

/// The setup both build stages share (CUDA installs, caches, doctor).
const SETUP: &str = ".github/actions/build-setup/action.yml";

/// Issue 29 items 1 and 2: the CUDA installs follow upstream v4.7.1 (12.8.1 and its
/// sub-packages), curl never gets `-n` (Git Bash's curl fails "(26) .netrc error"), the
/// Windows CUDA is one windows-2022's MSVC 19.44 can compile with, and Linux cuda jobs get
/// CUDA too.
#[test]
fn the_cuda_installs_follow_upstream_4_7_1_on_windows_and_linux() {
    let workflow = read(SETUP);
    let windows = step_run(&workflow, "Install CUDA 12.8 (Windows)");
    for needle in [
        "curl --netrc-optional",
        "cuda_12.8.1_572.61_windows.exe",
        "-s nvcc_12.8 cudart_12.8 cublas_dev_12.8 curand_dev_12.8",
        "CUDA\\v12.8",
    ] {
        assert!(windows.contains(needle), "`{needle}` in:\n{windows}");
    }
    for line in workflow.lines().filter(|l| l.contains("curl ")) {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert!(
            !words
                .iter()
                .any(|w| *w == "-n" || *w == "-nv" || *w == "--netrc"),
            "curl with a mandatory .netrc: {line}"
        );
    }
    let windows_2022_cl = "Microsoft (R) C/C++ Optimizing Compiler Version 19.44.35207 for x64";
    assert_eq!(
        xtask::sdk::cuda_msvc::problem("12.8", windows_2022_cl),
        None
    );
    assert!(xtask::sdk::cuda_msvc::problem("12.2", windows_2022_cl).is_some());

    let linux = step_run(&workflow, "Install CUDA 12.8 (Linux)");
    assert!(
        linux.contains("runner.os == 'Linux' && inputs.variant == 'cuda'"),
        "{linux}"
    );
    for package in [
        "cuda-nvcc-12-8-12.8.93-1",
        "cuda-cudart-devel-12-8-12.8.90-1",
        "libcurand-devel-12-8-10.3.9.90-1",
        "libcublas-devel-12-8-12.8.4.1-1",
    ] {
        assert!(linux.contains(package), "`{package}` in:\n{linux}");
    }
    assert!(linux.contains("CUDA_PATH=/usr/local/cuda-12.8"), "{linux}");

    // Issue 29 item 10: after the installs, the job checks what it needs, failing early.
    let doctor = workflow
        .find("- name: What this build needs (doctor)")
        .expect("a doctor step");
    assert!(doctor > workflow.find("- name: Install CUDA 12.8 (Linux)").unwrap());
    assert!(
        doctor
            > workflow
                .find("- name: Install CUDA 12.8 (Windows)")
                .unwrap()
    );
    assert!(step_run(&workflow, "What this build needs (doctor)").contains("doctor --variant"));
}

/// Issue 29 item 10: the release job holds `contents: write` and `id-token: write`, so every
/// third-party action in it is pinned to a full commit SHA (with the tag in a comment), never
/// to a tag or branch that can be moved.
#[test]
fn the_release_job_pins_every_action_to_a_commit() {
    let text =
        std::fs::read_to_string(common::repo_root().join(".github/workflows/release.yml")).unwrap();
    let job = &text[text.find("\n  release:").expect("a release job")..];
    assert!(job.contains("contents: write") && job.contains("id-token: write"));
    let uses: Vec<&str> = job
        .lines()
        .filter_map(|l| {
            l.trim_start()
                .trim_start_matches("- ")
                .strip_prefix("uses: ")
        })
        .collect();
    assert!(uses.len() >= 5, "{uses:?}");
    for line in uses {
        let reference = line.split_whitespace().next().unwrap();
        if reference.starts_with("./") {
            continue;
        }
        let (_, rev) = reference.split_once('@').expect("an action@ref");
        assert!(
            rev.len() == 40 && rev.bytes().all(|b| b.is_ascii_hexdigit()),
            "{line}: not pinned to a commit"
        );
        assert!(line.contains(" # "), "{line}: say which tag the commit is");
    }
}

/// Issue 29 item 6: hosted Linux source builds run in the manylinux_2_28 image (the matrix
/// names it per entry), with that image's Python; Windows and repackaging jobs run on the
/// runner.
#[test]
fn hosted_linux_source_builds_run_in_the_manylinux_2_28_image() {
    let workflow =
        std::fs::read_to_string(common::repo_root().join(".github/workflows/build.yml")).unwrap();
    assert!(
        workflow.contains("    container: ${{ matrix.container }}"),
        "{workflow}"
    );
    assert_eq!(
        workflow
            .matches("\n    container: ${{ matrix.container }}")
            .count(),
        2
    );
    assert!(read(SETUP).contains("/opt/python/cp${PY/./}-cp${PY/./}/bin"));
    let scratch = common::Scratch::new();
    let out = scratch.run(&[
        "matrix",
        "--json",
        "--include-self-hosted",
        "--include-unpinned",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let matrix: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    for entry in matrix["include"].as_array().unwrap() {
        let hosted_linux_build = entry["platform"] == "linux-x86_64"
            && entry["compiles"] == true
            && entry["runs-on"].is_string();
        let expected = if hosted_linux_build {
            xtask::matrix::MANYLINUX_IMAGE
        } else {
            ""
        };
        assert_eq!(entry["container"], expected, "{entry}");
    }
}

/// Issue 29 item 7: the C++ library is compiled once per variant and platform (the native
/// job, `build --until install-ctranslate2`), and each Python's job builds only the wheel on
/// top of the install prefixes it downloads where the plan's install steps write them
/// (`--prebuilt-native`); both stages use the same setup; the release takes only the
/// entries' artifacts.
#[test]
fn the_cpp_library_is_built_once_per_variant_and_platform() {
    let workflow = read(".github/workflows/build.yml");
    let native = &workflow[workflow.find("\n  native:").expect("a native job")..];
    let native = &native[..native.find("\n  build:").expect("the build job after it")];
    assert!(
        native.contains("fromJSON(needs.matrix.outputs.native)"),
        "{native}"
    );
    assert!(native.contains("--until install-ctranslate2"), "{native}");
    assert!(
        native.contains("path: target/xtask/${{ matrix.slot }}/${{ matrix.platform }}/prefix/"),
        "{native}"
    );
    let build = &workflow[workflow.find("\n  build:").unwrap()..];
    assert!(build.contains("needs: [matrix, native]"), "{build}");
    let download = step_run(build, "The native job's C++ library");
    assert!(
        download.contains("name: ${{ matrix.native }}"),
        "{download}"
    );
    assert!(
        download.contains("path: target/xtask/${{ matrix.slot }}/${{ matrix.platform }}/prefix"),
        "{download}"
    );
    assert!(step_run(build, "Build").contains("--prebuilt-native"));
    for job in [native, build] {
        assert!(job.contains("uses: ./.github/actions/build-setup"), "{job}");
    }
    assert!(read(".github/workflows/release.yml").contains("pattern: \"*-py*\""));

    // Every source entry names a native job that exists, one per slot and platform, and the
    // prefix it uploads is where that entry's install steps write.
    let scratch = common::Scratch::new();
    let json = |args: &[&str]| -> serde_json::Value {
        let out = scratch.run(args);
        assert_eq!(out.code, 0, "{}", out.stderr);
        serde_json::from_str(&out.stdout).unwrap()
    };
    let all = ["--include-self-hosted", "--include-unpinned"];
    let entries = json(&[&["matrix", "--json"][..], &all].concat());
    let natives = json(&[&["matrix", "--json", "--native"][..], &all].concat());
    let natives = natives["include"].as_array().unwrap();
    let names: Vec<&str> = natives
        .iter()
        .map(|n| n["artifact"].as_str().unwrap())
        .collect();
    let mut unique = names.clone();
    unique.sort();
    unique.dedup();
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
