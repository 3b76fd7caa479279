//! The plan, the variant list and the matrix, through the real binary. Every variant ×
//! platform plan is a snapshot, so any change to a command line shows up in review.

use crate::common;

use common::command_args::cpu_job;
use common::{plan_args, repo_root, xtask};
use serde_json::Value;
use std::fs;

const PYTHON: &str = "3.12";

fn plan_json(variant: &str, platform: &str) -> Value {
    let run = xtask(&plan_args(variant, platform, PYTHON, &["--json"]));
    assert_eq!(run.code, 0, "{}", run.stderr);
    serde_json::from_str(&run.stdout).expect("plan --json is JSON")
}

fn portable(text: &str) -> String {
    text.replace(&repo_root().display().to_string(), "$ROOT")
}

fn step<'a>(plan: &'a Value, id: &str) -> &'a Value {
    common::plan_step(plan, id)
}

#[test]
fn variants_lists_every_variant_file() {
    let run = xtask(&["variants"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let names: Vec<&str> = run
        .stdout
        .lines()
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "cpu",
            "cuda",
            "rocm",
            "rocm-gfx1010",
            "rocm-gfx1012",
            "rocm-gfx1031",
            "rocm-gfx1032",
            "rocm-gfx1034",
            "rocm-gfx1103",
            "rocm-rdna1",
            "rocm-rdna2",
            "rocm-rdna3",
            "rocm-rdna35",
            "rocm-rdna4"
        ]
    );
    assert!(
        run.stdout.lines().all(|l| l.split_whitespace().count() > 3),
        "each has a description"
    );
}

#[test]
fn plan_snapshots_for_every_variant_and_platform() {
    let combos = [
        ("cpu", "linux-x86_64"),
        ("cpu", "windows-x86_64"),
        ("cuda", "linux-x86_64"),
        ("cuda", "windows-x86_64"),
        ("rocm", "windows-x86_64"),
        ("rocm-gfx1010", "linux-x86_64"),
        ("rocm-gfx1010", "windows-x86_64"),
        ("rocm-rdna1", "linux-x86_64"),
        ("rocm-rdna1", "windows-x86_64"),
        ("rocm-rdna2", "linux-x86_64"),
        ("rocm-rdna2", "windows-x86_64"),
        ("rocm-rdna3", "linux-x86_64"),
        ("rocm-rdna3", "windows-x86_64"),
        ("rocm-rdna35", "linux-x86_64"),
        ("rocm-rdna35", "windows-x86_64"),
        ("rocm-rdna4", "linux-x86_64"),
        ("rocm-rdna4", "windows-x86_64"),
    ];
    for (variant, platform) in combos {
        let json = serde_json::to_string_pretty(&plan_json(variant, platform)).unwrap();
        let text = xtask(&plan_args(variant, platform, PYTHON, &[]));
        assert_eq!(text.code, 0, "{}", text.stderr);
        snapshots().bind(|| {
            insta::assert_snapshot!(format!("plan__plan-{variant}-{platform}"), portable(&json));
            insta::assert_snapshot!(
                format!("plan__plan-{variant}-{platform}-text"),
                portable(&text.stdout)
            );
        });
        // The other CTranslate2 version's plan too (JSON: the text says the same).
        let args = plan_args(
            variant,
            platform,
            PYTHON,
            &["--json", "--ctranslate2", "4.8.4"],
        );
        let run = xtask(&args);
        assert_eq!(run.code, 0, "{}", run.stderr);
        snapshots().bind(|| {
            insta::assert_snapshot!(
                format!("plan__plan-{variant}-{platform}@4.8.4"),
                portable(&run.stdout)
            );
        });
    }
}

/// Every variant that `extends` rocm-gfx1010 plans exactly as rocm-gfx1010 does, step for step
/// and flag for flag, but for its own GPU targets, community rocBLAS and labels.
#[test]
fn the_hip_sdk_builds_plan_as_rocm_gfx1010_for_their_own_targets_and_rocblas() {
    let derived = [
        ("rocm-gfx1012", "gfx1011;gfx1012", None),
        (
            "rocm-gfx1031",
            "gfx1031",
            Some("rocm.gfx1031.for.hip.sdk.6.2.4.littlewu.s.logic.7z"),
        ),
        (
            "rocm-gfx1032",
            "gfx1032",
            Some("rocm.gfx1032.for.hip.sdk.6.2.4.navi21.logic.7z"),
        ),
        (
            "rocm-gfx1034",
            "gfx1034;gfx1035;gfx1036",
            Some("rocm.gfx1034-gfx1035-gfx1036.for.hip.sdk.6.2.4.7z"),
        ),
        (
            "rocm-gfx1103",
            "gfx1103",
            Some("rocm.gfx1103.AMD.780M.phoenix.V5.0.for.hip.sdk.6.2.4.7z"),
        ),
    ];
    for platform in ["windows-x86_64", "linux-x86_64"] {
        let base = plan_json("rocm-gfx1010", platform);
        for (name, targets, rocblas) in derived {
            let plan = plan_json(name, platform);
            let quoted: Vec<String> = targets.split(';').map(|t| format!("\"{t}\"")).collect();
            let expected = serde_json::to_string(&base)
                .unwrap()
                .replace("rocm-gfx1010", name)
                .replace("=gfx1010\"", &format!("={targets}\""))
                .replace("[\"gfx1010\"]", &format!("[{}]", quoted.join(",")));
            let mut expected: Value = serde_json::from_str(&expected).unwrap();
            let mut plan = plan.clone();
            for p in [&mut expected, &mut plan] {
                comparable(p);
            }
            for (got, want) in plan["steps"]
                .as_array()
                .unwrap()
                .iter()
                .zip(expected["steps"].as_array().unwrap())
            {
                assert_eq!(got, want, "{name} on {platform}: step {}", want["id"]);
            }
            assert_eq!(plan, expected, "{name} on {platform}");
            let rocblas_url = plan_json(name, platform)["inputs"]
                .as_array()
                .unwrap()
                .iter()
                .find(|i| i["name"] == "community-rocblas")
                .map(|i| i["url"].as_str().unwrap().to_string());
            match (platform, rocblas) {
                ("windows-x86_64", Some(asset)) => {
                    let url = rocblas_url.unwrap();
                    assert!(
                        url.ends_with(&format!("/v0.6.2.4/{asset}")),
                        "{name}: {url}"
                    )
                }
                ("windows-x86_64", None) => assert!(
                    rocblas_url
                        .unwrap()
                        .contains("gfx1010-xnack-gfx1011-xnack-gfx1012-xnack-"),
                    "{name}: rocm-gfx1010's asset serves gfx1011 and gfx1012 too"
                ),
                _ => assert_eq!(rocblas_url, None, "{name} on Linux: rocBLAS is the SDK's"),
            }
        }
    }
}

/// A plan as [`the_hip_sdk_builds_plan_as_rocm_gfx1010_for_their_own_targets_and_rocblas`]
/// compares it: without what names the variant in words and the fingerprints, the community
/// rocBLAS input's URL, file name and package as placeholders wherever they are said.
fn comparable(plan: &mut Value) {
    let object = plan.as_object_mut().unwrap();
    for key in ["description", "local_version", "notes"] {
        object.remove(key);
    }
    let inputs = object["inputs"].as_array_mut().unwrap();
    let rocblas = inputs
        .iter()
        .position(|i| i["name"] == "community-rocblas")
        .map(|at| inputs.remove(at));
    for step in object["steps"].as_array_mut().unwrap() {
        // What the SDK's TheRock table leaves out is per target (7.2 leaves hipBLASLt out for
        // gfx1010 and declares no gfx1031): the bundle's `not_built` differs by design.
        for key in ["fingerprint", "not_built"] {
            step.as_object_mut().unwrap().remove(key);
        }
    }
    if let Some(rocblas) = rocblas {
        for key in ["url", "file_name", "package"] {
            let text = rocblas[key].as_str().unwrap();
            replace_strings(plan, text, &format!("<community-rocblas {key}>"));
        }
    }
}

fn replace_strings(value: &mut Value, from: &str, to: &str) {
    match value {
        Value::String(s) => *s = s.replace(from, to),
        Value::Array(items) => items.iter_mut().for_each(|v| replace_strings(v, from, to)),
        Value::Object(map) => map.values_mut().for_each(|v| replace_strings(v, from, to)),
        _ => {}
    }
}

/// The snapshots keep the names and the folder they had when this file was a test binary of
/// its own (`tests/snapshots/plan__*.snap`).
fn snapshots() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings
}

#[test]
fn gfx1010_on_windows_patches_and_configures_for_hip() {
    let plan = plan_json("rocm-gfx1010", "windows-x86_64");
    assert_eq!(plan["schema_version"], 2);
    let patch = step(&plan, "patch");
    assert_eq!(patch["kind"], "patch");
    let patches = patch["patches"].as_array().unwrap();
    assert!(
        patches[0]
            .as_str()
            .unwrap()
            .ends_with("0001-hip-use-hipblasGemmEx_v2.patch")
    );
    let args = common::args_of(step(&plan, "configure-ctranslate2"));
    for flag in [
        "-DWITH_HIP=ON",
        "-DCMAKE_HIP_ARCHITECTURES=gfx1010",
        "-DWITH_DNNL=ON",
        "-DOPENMP_RUNTIME=INTEL",
        "-DWITH_MKL=OFF",
        "-DBUILD_CLI=OFF",
    ] {
        assert!(
            args.contains(&flag.to_string()),
            "{flag} missing from {args:?}"
        );
    }
    assert!(args.iter().any(|a| a.starts_with("-DINTEL_ROOT=")
        && a.ends_with("intel_openmp-2025.3.0.data/data/Library")));
    let ids: Vec<&str> = common::field_of_each(&plan["steps"], "id");
    let at = |id: &str| ids.iter().position(|s| *s == id).unwrap();
    assert!(at("patch") < at("configure-ctranslate2"));
    assert!(at("install-onednn") < at("configure-ctranslate2"));
}

#[test]
fn rocm_on_windows_repackages_into_the_sdk_folders() {
    let plan = plan_json("rocm", "windows-x86_64");
    assert_eq!(plan["build"], "repackage");
    let kinds: Vec<&str> = common::field_of_each(&plan["steps"], "kind");
    for compile in ["venv", "configure", "build", "install", "wheel"] {
        assert!(
            !kinds.contains(&compile),
            "a repackaging has no {compile} step: {kinds:?}"
        );
    }
    let bundle = step(&plan, "bundle");
    let destinations: Vec<Value> = ["search", "data"]
        .iter()
        .flat_map(|list| bundle[list].as_array().unwrap())
        .map(|entry| entry["dest"].clone())
        .collect();
    for dest in ["_rocm_sdk_core/bin", "_rocm_sdk_libraries_custom/bin"] {
        assert!(
            destinations.iter().any(|d| d == dest),
            "{dest} not in {destinations:?}"
        );
    }
    let urls: Vec<&str> = common::field_of_each(&plan["inputs"], "url");
    assert!(urls.contains(&"https://repo.radeon.com/rocm/windows/rocm-rel-7.2/rocm_sdk_core-7.2.0.dev0-py3-none-win_amd64.whl"));
}

#[test]
fn cpu_on_linux_uses_the_compilers_openmp_and_pinned_sources() {
    let plan = plan_json("cpu", "linux-x86_64");
    let args = common::args_of(step(&plan, "configure-ctranslate2"));
    assert!(args.contains(&"-DOPENMP_RUNTIME=COMP".to_string()));
    assert!(!args.iter().any(|a| a.starts_with("-DINTEL_ROOT")));
    let onednn = common::args_of(step(&plan, "configure-onednn"));
    assert!(onednn.contains(&"-DONEDNN_ENABLE_PRIMITIVE=CONVOLUTION;REORDER".to_string()));
    assert!(onednn.contains(&"-DONEDNN_LIBRARY_TYPE=STATIC".to_string()));
    for input in plan["inputs"].as_array().unwrap() {
        assert_eq!(input["sha256"].as_str().map(str::len), Some(64), "{input}");
        assert!(input["size"].as_u64().is_some(), "{input}");
    }
}

#[test]
fn mkl_is_on_where_the_variant_builds_its_own_cpu_side_and_links_the_pinned_wheels() {
    for (variant, platform, flag) in [
        ("cpu", "linux-x86_64", "-DWITH_MKL=ON"),
        ("cpu", "windows-x86_64", "-DWITH_MKL=ON"),
        ("cuda", "linux-x86_64", "-DWITH_MKL=ON"),
        ("cuda", "windows-x86_64", "-DWITH_MKL=ON"),
        ("rocm-gfx1010", "linux-x86_64", "-DWITH_MKL=OFF"),
        ("rocm-gfx1010", "windows-x86_64", "-DWITH_MKL=OFF"),
    ] {
        let plan = plan_json(variant, platform);
        let args = common::args_of(step(&plan, "configure-ctranslate2"));
        assert!(
            args.contains(&flag.to_string()),
            "{variant} {platform}: {flag}"
        );
    }

    for (platform, root, include, runtime) in [
        (
            "linux-x86_64",
            "mkl_static-2026.2.0.data/data",
            "mkl_include-2026.2.0.data/data/include",
            "-DOPENMP_RUNTIME=COMP",
        ),
        (
            "windows-x86_64",
            "mkl_static-2026.2.0.data/data/Library",
            "mkl_include-2026.2.0.data/data/Library/include",
            "-DOPENMP_RUNTIME=INTEL",
        ),
    ] {
        let plan = plan_json("cpu", platform);
        let configure = step(&plan, "configure-ctranslate2");
        let args = common::args_of(configure);
        for flag in ["-DWITH_MKL=ON", "-DWITH_DNNL=ON", runtime] {
            assert!(
                args.contains(&flag.to_string()),
                "{flag} missing from {args:?}"
            );
        }
        let value = |key: &str| {
            args.iter()
                .find_map(|a| a.strip_prefix(&format!("-D{key}=")))
                .unwrap_or_else(|| panic!("no -D{key} in {args:?}"))
                .to_string()
        };
        assert!(value("MKL_ROOT").ends_with(&format!("deps/mkl-static/{root}")));
        assert!(value("MKL_INCLUDE_DIR").ends_with(&format!("deps/mkl-include/{include}")));
        let after: Vec<&str> = configure["after"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert!(after.contains(&"unpack-mkl-static") && after.contains(&"unpack-mkl-include"));
        let names: Vec<&str> = common::field_of_each(&plan["inputs"], "name");
        assert!(
            names.contains(&"mkl-static") && names.contains(&"mkl-include"),
            "{names:?}"
        );
        for input in plan["inputs"].as_array().unwrap() {
            assert_eq!(input["sha256"].as_str().map(str::len), Some(64), "{input}");
            assert!(input["size"].as_u64().is_some(), "{input}");
        }
    }
}

#[test]
fn cuda_arch_flag_overrides_the_variant() {
    let run = xtask(&plan_args(
        "cuda",
        "linux-x86_64",
        PYTHON,
        &["--cuda-arch", "9.0", "--json"],
    ));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let plan: Value = serde_json::from_str(&run.stdout).unwrap();
    // The list is checked against the toolkit found when the build runs (cuda_arch.rs).
    assert_eq!(plan["cuda_arch"], "9.0");
    assert!(
        common::args_of(step(&plan, "configure-ctranslate2"))
            .contains(&"-DCUDA_ARCH_LIST={sdk.cuda-arch}".to_string())
    );
}

/// The cuda plan's SDK note says which toolkits a build takes: the CUDA majors the variant
/// declares its cuBLAS wheel for ([bundle.requires-dist]), not only the oldest (a build finds
/// CUDA 13 as readily as 12); a major added there shows in the note.
#[test]
fn the_cuda_note_names_every_cuda_major_the_build_takes() {
    let note_of = |plan: &Value| -> String {
        let notes = plan["notes"].as_array().unwrap();
        let note = notes
            .iter()
            .filter_map(Value::as_str)
            .find(|n| n.starts_with("CUDA toolkit"))
            .unwrap_or_else(|| panic!("a CUDA note in {notes:#?}"));
        note.to_string()
    };
    for platform in ["linux-x86_64", "windows-x86_64"] {
        let note = note_of(&plan_json("cuda", platform));
        assert!(
            note.starts_with("CUDA toolkit 12 or 13 is found when the build runs"),
            "{platform}: {note}"
        );
        assert!(note.contains("cu12, cu13"), "{platform}: {note}");
    }
    let scratch = common::Scratch::new();
    scratch.edit(
        "variants/cuda.toml",
        "\"13\" = [\"nvidia-cublas>=13.0,<14\"]",
        "\"13\" = [\"nvidia-cublas>=13.0,<14\"]\n\"14\" = [\"nvidia-cublas>=14.0,<15\"]",
    );
    let run = scratch.run(&plan_args("cuda", "linux-x86_64", PYTHON, &["--json"]));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let note = note_of(&serde_json::from_str(&run.stdout).unwrap());
    assert!(
        note.starts_with("CUDA toolkit 12, 13 or 14 is found"),
        "{note}"
    );
}

#[test]
fn windows_source_builds_run_in_msvc_and_copy_their_dlls_before_the_wheel() {
    for variant in ["cpu", "cuda", "rocm-gfx1010"] {
        let plan = plan_json(variant, "windows-x86_64");
        let msvc = &plan["msvc"];
        assert_eq!(msvc["target"], "x86_64-pc-windows-msvc", "{variant}");
        assert!(
            msvc["found_by"]
                .as_str()
                .unwrap()
                .starts_with("cc::windows_registry::find_tool"),
            "{variant}"
        );
        let in_msvc: Vec<&str> = msvc["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap())
            .collect();
        for id in ["configure-onednn", "build-ctranslate2", "wheel"] {
            assert!(in_msvc.contains(&id), "{variant}: {id}");
        }
        assert!(
            common::args_of(step(&plan, "configure-onednn"))
                .contains(&"-DCMAKE_CXX_COMPILER=cl".to_string()),
            "{variant}: oneDNN is built with cl"
        );
        let ids: Vec<&str> = common::field_of_each(&plan["steps"], "id");
        let copy = ids
            .iter()
            .position(|i| *i == "copy-dlls")
            .expect("copy-dlls");
        assert!(
            copy < ids.iter().position(|i| *i == "wheel").unwrap(),
            "{variant}"
        );
        let files = step(&plan, "copy-dlls")["files"].to_string();
        assert!(files.contains("/bin/ctranslate2.dll") && files.contains("libiomp5md.dll"));
        // rocm-gfx1010's own [bundle] search list gets the msvc-runtime line.
        if variant != "rocm-gfx1010" {
            assert!(
                plan["inputs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|i| i["name"] == "msvc-runtime"),
                "{variant}"
            );
        }
    }
    let linux = plan_json("cpu", "linux-x86_64");
    assert!(linux.get("msvc").is_none());
    assert!(linux["steps"].to_string().find("copy-dlls").is_none());
}

#[test]
fn fingerprints_chain_through_dependencies() {
    let plain = plan_json("cpu", "linux-x86_64");
    let run = xtask(&plan_args("cpu", "linux-x86_64", "3.11", &["--json"]));
    let other: Value = serde_json::from_str(&run.stdout).unwrap();
    // oneDNN does not depend on the Python version…
    assert_eq!(
        step(&plain, "unpack-onednn")["fingerprint"],
        step(&other, "unpack-onednn")["fingerprint"]
    );
    // …but the venv does, and so does everything after it.
    assert_ne!(
        step(&plain, "venv")["fingerprint"],
        step(&other, "venv")["fingerprint"]
    );
    assert_ne!(
        step(&plain, "configure-onednn")["fingerprint"],
        step(&other, "configure-onednn")["fingerprint"]
    );
}

#[test]
fn build_dry_run_prints_the_same_plan() {
    let args = [
        "--variant",
        "rocm",
        "--platform",
        "windows-x86_64",
        "--python",
        PYTHON,
        "--json",
    ];
    let plan = xtask(&[&["plan"][..], &args].concat());
    let dry = xtask(&[&["build", "--dry-run"][..], &args].concat());
    assert_eq!(dry.code, 0, "{}", dry.stderr);
    assert_eq!(plan.stdout, dry.stdout);
}

#[test]
fn build_runs_the_steps_and_stops_at_the_first_failure() {
    // A scratch checkout and an empty cache, offline: the first step (fetch) fails, naming
    // what is missing, and nothing after it runs.
    let scratch = common::Scratch::new();
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = ["--cache-dir", cache.path().to_str().unwrap()];
    let run = scratch.run(&[&cache_dir[..], &cpu_job("build", &["--offline"])].concat());
    common::assert_exit(
        &run,
        1,
        &[
            "[1/16] fetch",
            "step `fetch` failed",
            "offline: 4 input(s) are not in the cache",
            "fetch.log",
        ],
    );
    assert!(!run.stderr.contains("[2/16]"), "{}", run.stderr);
    assert!(!scratch.path().join("target/xtask/cpu").exists());
}

#[test]
fn matrix_has_one_entry_per_variant_platform_and_python() {
    // By default, only what hosted runners can build with every input pinned: the rocm
    // entries (the release zip is not pinned here) and the gfx1010 ones (a self-hosted
    // runner) are left out, each named with why and how to ask for it.
    let run = xtask(&["matrix", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let matrix: Value = serde_json::from_str(&run.stdout).unwrap();
    let variants = common::variants_of(&matrix);
    assert_eq!(variants, ["cpu", "cuda"].into_iter().collect());
    assert_eq!(matrix["include"].as_array().unwrap().len(), 2 * 2 * 5);
    for needle in [
        "note: left out of the matrix: rocm windows-x86_64 py3.12: inputs not pinned yet: ctranslate2-wheels",
        "--include-unpinned",
        "note: left out of the matrix: rocm-gfx1010 windows-x86_64 py3.12: inputs not pinned yet: community-rocblas, hip-sdk-installer",
        "note: left out of the matrix: rocm-gfx1010 linux-x86_64 py3.12: needs a self-hosted runner labelled",
        "--include-self-hosted",
    ] {
        assert!(run.stderr.contains(needle), "`{needle}` in {}", run.stderr);
    }

    let run = xtask(&[
        "matrix",
        "--json",
        "--include-self-hosted",
        "--include-unpinned",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout.trim().lines().count(),
        1,
        "one line, for $GITHUB_OUTPUT"
    );
    let matrix: Value = serde_json::from_str(&run.stdout).unwrap();
    let include = matrix["include"].as_array().unwrap();
    // cpu, cuda, the six HIP SDK builds (rocm-gfx*) and the five ROCm 10 families
    // (rocm-rdna*): 2 platforms × 5 Pythons; rocm: Windows × 5 Pythons.
    assert_eq!(include.len(), 13 * 2 * 5 + 5);
    let mut keys: Vec<String> = include
        .iter()
        .map(|e| format!("{} {} {}", e["variant"], e["platform"], e["python"]))
        .collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), include.len(), "entries are unique");
    // Hosted runners by name; HIP source builds on a self-hosted runner with that SDK, except
    // where the variant installs the SDK unattended (Windows).
    for e in include {
        let hip_sdk_build = e["variant"].as_str().unwrap().starts_with("rocm-gfx");
        if hip_sdk_build && e["platform"] == "linux-x86_64" {
            assert_eq!(e["runs-on"][0], "self-hosted", "{e}");
            assert_eq!(e["runs-on"][3], "hip-sdk-6.2", "{e}");
        } else {
            assert!(e["runs-on"].is_string(), "{e}");
        }
        // The ROCm 10 families build on hosted runners, the SDK from pip.
        if e["variant"].as_str().unwrap().starts_with("rocm-rdna") {
            let hosted = if e["platform"] == "linux-x86_64" {
                "ubuntu-24.04"
            } else {
                "windows-2022"
            };
            assert_eq!(e["runs-on"], hosted, "{e}");
            assert_eq!(e["sdk-pip"], "rocm[libraries,devel]==10.0.0", "{e}");
        }
    }
    snapshots().bind(|| {
        insta::assert_snapshot!(
            "plan__matrix",
            serde_json::to_string_pretty(&matrix).unwrap()
        );
    });
}

/// A Git for Windows checkout (`core.autocrlf=true`) keeps the bytes that
/// are hashed, applied and run (.gitattributes): patches, variant files, pinned lists and
/// scripts are as committed, while a file the attributes leave alone (Cargo.lock) does turn
/// CRLF, so the conversion was on. A plan from that checkout is the plan from this one.
#[test]
fn a_crlf_checkout_keeps_the_hashed_bytes_and_plans_the_same() {
    if common::skip::missing("git", "apt-get install git") {
        return;
    }
    let root = repo_root();
    let dir = tempfile::tempdir().unwrap();
    let clone = dir.path().join("clone");
    common::run_ok(
        std::process::Command::new("git")
            .args(["clone", "--quiet", "-c", "core.autocrlf=true"])
            .arg(&root)
            .arg(&clone),
    );
    let committed = |path: &str| {
        common::run_ok(
            std::process::Command::new("git")
                .args(["show", &format!("HEAD:{path}")])
                .current_dir(&root),
        )
        .stdout
    };
    let listed = common::run_ok(
        std::process::Command::new("git")
            .args([
                "ls-files", "patches", "variants", "wheels", "scripts", ".ci",
            ])
            .current_dir(&clone),
    );
    let files: Vec<String> = String::from_utf8(listed.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert!(files.iter().any(|f| f.ends_with(".patch")), "{files:?}");
    for file in &files {
        assert!(
            fs::read(clone.join(file)).unwrap() == committed(file),
            "{file} changed in a core.autocrlf=true checkout"
        );
    }
    let lock = fs::read_to_string(clone.join("Cargo.lock")).unwrap();
    assert!(
        lock.contains("\r\n"),
        "autocrlf converted the files left to it"
    );

    // A checkout made without these attributes (or edited on Windows): CRLF variant files
    // still plan the same.
    let scratch = common::Scratch::new();
    for entry in common::wheel::files_below(&scratch.path().join("variants")) {
        let path = scratch.path().join("variants").join(entry);
        let text = fs::read_to_string(&path).unwrap();
        fs::write(&path, text.replace('\n', "\r\n")).unwrap();
    }
    for variant in ["cpu", "rocm-gfx1010"] {
        let args = common::plan_args(variant, "windows-x86_64", "3.12", &["--json"]);
        let lf = common::xtask(&args);
        let crlf = scratch.run(&args);
        assert_eq!(crlf.code, 0, "{}", crlf.stderr);
        let unix = root.display().to_string();
        let scratch_root = scratch.path().display().to_string();
        assert_eq!(
            crlf.stdout.replace(&scratch_root, &unix),
            lf.stdout,
            "{variant}: CRLF variant files plan as LF ones"
        );
    }
}

/// The native jobs' cache keys, by job name.
fn native_keys(scratch: &common::Scratch) -> std::collections::BTreeMap<String, String> {
    let run = scratch.run(&["matrix", "--json", "--native"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let matrix: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    matrix["include"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let key = e["native-key"].as_str().unwrap().to_string();
            assert_eq!(key.len(), 32, "{e}");
            (e["name"].as_str().unwrap().to_string(), key)
        })
        .collect()
}

/// CI restores a native job's C++ library by its key: a change to what the C++ library is
/// compiled from (a CMake flag, a patch's content, the build-tools pins) changes the key of
/// exactly the builds it affects; a change to nothing compiled (a README, the speech-check
/// pins) keeps every key, so a re-tag compiles no C++.
#[test]
fn the_native_cache_key_follows_the_cpp_inputs_and_nothing_else() {
    let scratch = common::Scratch::new();
    let before = native_keys(&scratch);
    assert!(before.len() >= 4, "{before:#?}");

    std::fs::write(scratch.path().join("README.md"), "# edited\n").unwrap();
    let docs = scratch.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("ci.md"), "edited\n").unwrap();
    let transcribe = scratch.path().join("wheels/transcribe.txt");
    let text = std::fs::read_to_string(&transcribe).unwrap();
    std::fs::write(&transcribe, format!("{text}\n# a comment\n")).unwrap();
    assert_eq!(native_keys(&scratch), before, "nothing compiled changed");

    // A oneDNN flag: every build that compiles oneDNN (all of them) gets a new key.
    scratch.edit(
        "variants/defaults.toml",
        "ONEDNN_BUILD_GRAPH = false",
        "ONEDNN_BUILD_GRAPH = false\nONEDNN_VERBOSE = false",
    );
    let flag = native_keys(&scratch);
    for (job, key) in &flag {
        assert_ne!(key, &before[job], "{job}");
    }

    // A patch's content (same file name): only the cuda builds apply that series.
    let patch = scratch
        .path()
        .join("patches/ctranslate2-4.7.1/0003-cuda-load-cublas-from-the-nvidia-wheel.patch");
    let text = std::fs::read_to_string(&patch).unwrap();
    std::fs::write(&patch, format!("A changed description line.\n{text}")).unwrap();
    let patched = native_keys(&scratch);
    for (job, key) in &patched {
        assert_eq!(key != &flag[job], job.starts_with("cuda "), "{job}");
    }

    // The build-tools pins (CMake, ninja) of the native job's venv.
    let tools = scratch.path().join("wheels/build-tools.txt");
    let text = std::fs::read_to_string(&tools).unwrap();
    std::fs::write(&tools, format!("{text}\n# another pin set\n")).unwrap();
    let retooled = native_keys(&scratch);
    assert!(
        retooled.iter().all(|(job, key)| key != &patched[job]),
        "{retooled:#?}"
    );
}
