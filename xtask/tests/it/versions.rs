//! More than one CTranslate2 version: variants/ctranslate2/<version>.toml and --ctranslate2.

use crate::common;

use common::{Scratch, plan_args, xtask};
use serde_json::Value;

fn plan_json(args: &[&str]) -> Value {
    let run = xtask(args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    serde_json::from_str(&run.stdout).expect("plan --json is JSON")
}

#[test]
fn cpu_for_4_8_4_builds_ct2rs_0_10_3_in_a_folder_of_its_own() {
    let args = plan_args(
        "cpu",
        "linux-x86_64",
        "3.12",
        &["--json", "--ctranslate2", "4.8.4"],
    );
    let plan = plan_json(&args);
    assert_eq!(plan["ctranslate2"], "4.8.4");
    let files: Vec<&str> = common::field_of_each(&plan["inputs"], "file_name");
    assert!(files.contains(&"ct2rs-0.10.3.crate"), "{files:?}");
    assert!(!files.contains(&"ct2rs-0.9.17.crate"), "{files:?}");
    let work = plan["work_dir"].as_str().unwrap();
    assert!(
        work.ends_with("/target/xtask/cpu@4.8.4/linux-x86_64"),
        "{work}"
    );

    // Without the flag: the default version, in the variant's own folder.
    let plan = plan_json(&plan_args("cpu", "linux-x86_64", "3.12", &["--json"]));
    assert_eq!(plan["ctranslate2"], "4.7.1");
    assert!(
        plan["work_dir"]
            .as_str()
            .unwrap()
            .ends_with("/target/xtask/cpu/linux-x86_64")
    );
}

/// Each version's tools venv takes the pybind11 its own python/install_requirements.txt pins
/// (4.7.1: 2.11.1; 4.8.4: 2.13.6), hash-pinned, in a venv of its own.
#[test]
fn each_version_builds_with_the_pybind11_it_pins() {
    for (version, pybind11) in [("4.7.1", "2.11.1"), ("4.8.4", "2.13.6")] {
        for platform in ["linux-x86_64", "windows-x86_64"] {
            let args = plan_args(
                "cpu",
                platform,
                "3.12",
                &["--json", "--ctranslate2", version],
            );
            let plan = plan_json(&args);
            let venv = common::plan_step(&plan, "venv");
            let requirements = venv["requirements"].as_str().unwrap();
            let text = std::fs::read_to_string(requirements).unwrap();
            assert!(
                text.contains(&format!("pybind11=={pybind11} \\")),
                "{version} {platform}: {requirements} pins pybind11 {pybind11}"
            );
            assert!(
                text.contains("--hash=sha256:"),
                "{requirements} is hash-pinned"
            );
        }
    }
}

#[test]
fn rocm_gfx1010_takes_the_series_of_its_version() {
    for (version, series) in [
        ("4.7.1", "patches/ctranslate2-4.7.1/series"),
        ("4.8.4", "patches/ctranslate2-4.8.4/series"),
    ] {
        let args = plan_args(
            "rocm-gfx1010",
            "linux-x86_64",
            "3.12",
            &["--ctranslate2", version],
        );
        let run = xtask(&args);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(run.stdout.contains(series), "{version}: {}", run.stdout);
    }
}

#[test]
fn an_unknown_version_lists_the_known_ones_and_the_bump_command() {
    let args = plan_args("cpu", "linux-x86_64", "3.12", &["--ctranslate2", "4.8.5"]);
    let run = xtask(&args);
    assert_eq!(run.code, 2, "{}", run.stderr);
    for needle in [
        "no data for CTranslate2 4.8.5",
        "variants/ctranslate2/4.8.5.toml does not exist",
        "4.8.4",
        "cargo xtask bump --ctranslate2 4.8.5",
    ] {
        assert!(run.stderr.contains(needle), "{needle}: {}", run.stderr);
    }
}

#[test]
fn a_version_that_is_a_path_is_refused() {
    for bad in ["../../x", "/abs", "4.8.4/../4.7.1", ""] {
        let args = plan_args("cpu", "linux-x86_64", "3.12", &["--ctranslate2", bad]);
        let run = xtask(&args);
        assert_eq!(run.code, 2, "{bad}: {}", run.stderr);
        assert!(
            run.stderr.contains("is not a CTranslate2 version"),
            "{bad}: {}",
            run.stderr
        );
    }
}

#[test]
fn variant_tables_only_belong_in_version_files() {
    let scratch = Scratch::new();
    std::fs::write(
        scratch.path().join("variants/cpu.toml"),
        "description = \"cpu\"\n\n[variant.cuda]\ncuda-arch = \"9.0\"\n",
    )
    .unwrap();
    let run = scratch.run(&plan_args("cpu", "linux-x86_64", "3.12", &[]));
    common::assert_exit(
        &run,
        2,
        &[
            "[variant.…] tables belong in a CTranslate2 version file",
            "variants/cpu.toml:",
        ],
    );
}

#[test]
fn a_version_file_names_only_existing_variants_and_not_its_own_version() {
    let scratch = Scratch::new();
    scratch.edit(
        "variants/ctranslate2/4.8.4.toml",
        "[variant.rocm-gfx1010]",
        "[variant.rocm-gfx101]",
    );
    let args = plan_args("cpu", "linux-x86_64", "3.12", &["--ctranslate2", "4.8.4"]);
    let run = scratch.run(&args);
    common::assert_exit(
        &run,
        2,
        &[
            "there is no variant `rocm-gfx101`",
            "did you mean `rocm-gfx1010`?",
        ],
    );

    let scratch = Scratch::new();
    scratch.edit(
        "variants/ctranslate2/4.8.4.toml",
        "[source]",
        "ctranslate2 = \"4.8.4\"\n\n[source]",
    );
    let run = scratch.run(&args);
    common::assert_exit(&run, 2, &["its file name is the version"]);
}

#[test]
fn the_matrix_spans_versions_and_names_artifacts_by_slot() {
    let run = xtask(&["matrix", "--json", "--ctranslate2", "4.7.1,4.8.4"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let matrix: Value = serde_json::from_str(&run.stdout).unwrap();
    let entries = matrix["include"].as_array().unwrap();
    let find = |variant: &str, version: &str| {
        entries.iter().find(|e| {
            e["variant"] == variant
                && e["ctranslate2"] == version
                && e["platform"] == "linux-x86_64"
                && e["python"] == "3.12"
        })
    };
    let old = find("cpu", "4.7.1").expect("cpu 4.7.1");
    assert_eq!(old["artifact"], "cpu-linux-x86_64-py3.12");
    let new = find("cpu", "4.8.4").expect("cpu 4.8.4");
    assert_eq!(new["artifact"], "cpu@4.8.4-linux-x86_64-py3.12");
    assert_eq!(new["slot"], "cpu@4.8.4");
    assert_eq!(new["name"], "cpu 4.8.4 linux-x86_64 py3.12");
}

/// A Linux build on a host whose glibc is newer than manylinux_2_28 allows cannot prove
/// manylinux_2_28 (its binaries need the host's symbol versions): the plan names the wheel
/// for the oldest policy that allows the host's glibc, and says why.
#[test]
fn a_newer_host_glibc_names_the_manylinux_tag_it_can_prove() {
    let args = plan_args("cpu", "linux-x86_64", "3.12", &["--json"]);
    let run = common::xtask_with_env(
        &common::repo_root(),
        &args,
        &[("CT2V_HOST_GLIBC", "2.36")],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let plan: Value = serde_json::from_str(&run.stdout).unwrap();
    let artifacts = plan["artifacts"].to_string();
    assert!(
        artifacts.contains("-manylinux_2_36_x86_64.whl"),
        "{artifacts}"
    );
    assert!(
        plan["notes"].to_string().contains("glibc 2.36"),
        "{}",
        plan["notes"]
    );
    let run = common::xtask_with_env(
        &common::repo_root(),
        &args,
        &[("CT2V_HOST_GLIBC", "2.17")],
        &[],
    );
    let plan: Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(
        plan["artifacts"]
            .to_string()
            .contains("-manylinux_2_28_x86_64.whl")
    );
}

#[test]
fn rocm_repackages_the_official_zip_of_its_version() {
    for (version, pinned) in [("4.7.1", false), ("4.8.2", true), ("4.8.4", false)] {
        let args = plan_args(
            "rocm",
            "windows-x86_64",
            "3.12",
            &["--json", "--ctranslate2", version],
        );
        let plan = plan_json(&args);
        let zip = plan["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["name"] == "ctranslate2-wheels")
            .expect("the official zip");
        let url = format!(
            "https://github.com/OpenNMT/CTranslate2/releases/download/v{version}/rocm-python-wheels-Windows.zip"
        );
        assert_eq!(zip["url"], url.as_str());
        assert_eq!(zip["sha256"].is_string(), pinned, "{version}: {zip}");
        let text = plan.to_string();
        assert!(
            text.contains(&format!(
                "temp-windows/ctranslate2-{version}-cp312-cp312-win_amd64.whl"
            )),
            "{version}"
        );
        // The SDK wheels are the ones each version's Windows ROCm script installs, in the
        // folders its __init__.py adds: ROCm 7.2's (pinned to their published digests) up to
        // 4.8.2, TheRock's 10.0.0 from the whl-next index (found there by `pin`) for 4.8.4.
        if version == "4.8.4" {
            assert!(
                text.contains("\"package\":\"rocm-sdk-core 10.0.0\""),
                "{text}"
            );
            assert!(text.contains("\"index\":\"https://stable.repo.amd.com/rocm/whl-next/\""));
            assert!(text.contains("_rocm_sdk_libraries/bin"));
            assert!(!text.contains("_rocm_sdk_libraries_custom"));
        } else {
            assert!(
                text.contains("f8dac46ea54d570dd73a694e9f6793e80889a8168dd484be57b0d2f65079dde3")
            );
            assert!(text.contains("_rocm_sdk_libraries_custom/bin"));
        }
    }
}

#[test]
fn a_version_with_only_some_variants_leaves_the_others_out_of_the_matrix() {
    let run = xtask(&["matrix", "--json", "--ctranslate2", "4.8.2"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let matrix: Value = serde_json::from_str(&run.stdout).unwrap();
    let variants = common::variants_of(&matrix);
    assert_eq!(variants.into_iter().collect::<Vec<_>>(), ["rocm"]);
    assert!(
        run.stderr
            .contains("cpu has no source for CTranslate2 4.8.2"),
        "{}",
        run.stderr
    );
    // A build of such a variant says what is missing.
    let args = plan_args("cpu", "linux-x86_64", "3.12", &["--ctranslate2", "4.8.2"]);
    let run = xtask(&args);
    common::assert_exit(
        &run,
        2,
        &["variant `cpu` has no source for CTranslate2 4.8.2"],
    );
}
