//! The readers on the real 4.8.4 and 4.7.1 files (crates/upkeep/tests/data/upstream/), on changed
//! shapes, and the comparison.

use std::collections::BTreeMap;

use super::drift::{self, Acceptance, OurData, OurRocm, OurWheel, Ours, Verdict};
use super::facts::{Fact, FactKind, Value};
use super::*;
use ct2v_support::platform::Platform;

fn tree(version: &str) -> BTreeMap<String, String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/upstream")
        .join(version);
    upstream_paths()
        .into_iter()
        .filter_map(|p| {
            let text = std::fs::read_to_string(dir.join(p)).ok()?;
            Some((p.to_string(), text))
        })
        .collect()
}

fn fact<'a>(facts: &'a UpstreamFacts, kind: FactKind, file_part: &str) -> &'a Fact {
    facts
        .of(kind)
        .find(|f| f.at.file.contains(file_part))
        .unwrap_or_else(|| panic!("no {kind} in {file_part}: {facts:#?}"))
}

const WIN_ROCM: &str = "python/tools/prepare_build_environment_windows_rocm.sh";

#[test]
fn the_real_4_8_4_files() {
    let facts = read_facts(&tree("4.8.4"));
    assert!(facts.unreadable.is_empty(), "{:#?}", facts.unreadable);

    let pin = fact(&facts, FactKind::Pybind11, "install_requirements");
    assert_eq!(pin.value, Value::Version("2.13.6".into()));
    assert_eq!(pin.at.to_string(), "python/install_requirements.txt:1");
    let pin = fact(&facts, FactKind::Pybind11, "pyproject");
    assert_eq!(pin.at.to_string(), "python/pyproject.toml:2");

    let onednn = fact(&facts, FactKind::OnednnVersion, "_linux.sh");
    assert_eq!(onednn.value, Value::Version("3.1.1".into()));
    assert_eq!(onednn.at.first, 44);
    let onednn = fact(&facts, FactKind::OnednnVersion, "_windows_rocm.sh");
    assert_eq!(onednn.value, Value::Version("3.10.2".into()));
    assert_eq!(onednn.at.to_string(), format!("{WIN_ROCM}:30"));
    assert_eq!(
        fact(&facts, FactKind::OnednnVersion, "_macos.sh").value,
        Value::Version("3.1.1".into())
    );

    let Value::Options(options) = &fact(&facts, FactKind::OnednnCmake, "_windows.sh").value else {
        panic!()
    };
    assert_eq!(options["ONEDNN_ENABLE_PRIMITIVE"], "CONVOLUTION;REORDER");
    assert_eq!(options["ONEDNN_BUILD_GRAPH"], "OFF");
    assert!(!options.contains_key("CMAKE_BUILD_TYPE"));
    // macOS's line is continued over 13 lines and has OpenMP flags from `$(brew …)`: only
    // oneDNN's own options are read, so it reads.
    let mac = fact(&facts, FactKind::OnednnCmake, "_macos.sh");
    assert_eq!((mac.at.first, mac.at.last), (44, 56));

    let cuda = fact(&facts, FactKind::CudaVersion, "_linux.sh");
    assert_eq!(cuda.value, Value::Version("12.8".into()));
    assert_eq!((cuda.at.first, cuda.at.last), (29, 36));
    let cuda = fact(&facts, FactKind::CudaVersion, "_windows.sh");
    assert_eq!(cuda.value, Value::Version("12.8.1".into()));
    assert_eq!(cuda.at.first, 7);

    let sdk = fact(&facts, FactKind::RocmSdk, "_windows_rocm.sh");
    assert_eq!(sdk.at.to_string(), format!("{WIN_ROCM}:6-7"));
    let Value::Rocm(rocm) = &sdk.value else {
        panic!()
    };
    assert_eq!(
        rocm.index.as_deref(),
        Some("https://stable.repo.amd.com/rocm/whl-next/")
    );
    assert_eq!(
        rocm.requirement.as_deref(),
        Some("rocm[libraries,devel]==10.0.0")
    );
    let runtime: Vec<(&str, &str)> = rocm
        .runtime
        .iter()
        .map(|w| (w.name.as_str(), w.version.as_str()))
        .collect();
    assert_eq!(
        runtime,
        [
            ("rocm-sdk-core", "10.0.0"),
            ("rocm-sdk-libraries", "10.0.0")
        ]
    );
    assert!(rocm.build_only.contains(&"rocm-sdk-devel".to_string()));

    let archs = fact(&facts, FactKind::HipArchitectures, "_windows_rocm.sh");
    assert_eq!(archs.at.to_string(), format!("{WIN_ROCM}:19"));
    let Value::List(archs) = &archs.value else {
        panic!()
    };
    assert_eq!(archs.len(), 8);
    assert_eq!(archs[0], "gfx1030");

    let dlls = fact(&facts, FactKind::DllFolders, "__init__.py");
    assert_eq!(dlls.at.to_string(), "python/ctranslate2/__init__.py:15-20");
    let Value::Folders(dlls) = &dlls.value else {
        panic!()
    };
    assert_eq!(
        dlls.folders,
        ["_rocm_sdk_core/bin", "_rocm_sdk_libraries*/bin"]
    );
    assert!(dlls.fallback.is_some());
}

#[test]
fn the_real_4_7_1_files() {
    let facts = read_facts(&tree("4.7.1"));
    assert!(facts.unreadable.is_empty(), "{:#?}", facts.unreadable);
    assert_eq!(
        fact(&facts, FactKind::Pybind11, "install_requirements").value,
        Value::Version("2.11.1".into())
    );
    let sdk = fact(&facts, FactKind::RocmSdk, "_windows_rocm.sh");
    assert_eq!((sdk.at.first, sdk.at.last), (6, 10));
    let Value::Rocm(rocm) = &sdk.value else {
        panic!()
    };
    assert_eq!(rocm.index, None);
    let runtime: Vec<&str> = rocm.runtime.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(runtime, ["rocm-sdk-core", "rocm-sdk-libraries-custom"]);
    assert!(rocm.runtime.iter().all(|w| w.version == "7.2.0.dev0"));
    assert_eq!(
        rocm.runtime[0].url.as_deref(),
        Some(
            "https://repo.radeon.com/rocm/windows/rocm-rel-7.2/rocm_sdk_core-7.2.0.dev0-py3-none-win_amd64.whl"
        )
    );
    let Value::Folders(dlls) = &fact(&facts, FactKind::DllFolders, "__init__.py").value else {
        panic!()
    };
    assert_eq!(
        dlls.folders,
        ["_rocm_sdk_core/bin", "_rocm_sdk_libraries_custom/bin"]
    );
    assert_eq!(dlls.fallback, None);
}

/// The 4.8.4 tree with one script's text changed (`from` must occur once).
fn changed(file: &str, from: &str, to: &str) -> UpstreamFacts {
    let mut files = tree("4.8.4");
    let text = files.get_mut(file).unwrap();
    assert_eq!(text.matches(from).count(), 1, "{from}");
    *text = text.replace(from, to);
    read_facts(&files)
}

fn only_unreadable(facts: &UpstreamFacts) -> String {
    assert_eq!(facts.unreadable.len(), 1, "{:#?}", facts.unreadable);
    facts.unreadable[0].to_string()
}

#[test]
fn a_renamed_variable_is_not_guessed() {
    let facts = changed(WIN_ROCM, "ONEDNN_VERSION=3.10.2", "DNNL_VERSION=3.10.2");
    let message = only_unreadable(&facts);
    assert!(
        message.starts_with(&format!(
            "could not read the oneDNN version (onednn.version) in {WIN_ROCM}:32:"
        )),
        "{message}"
    );
    assert!(
        message.contains("`$ONEDNN_VERSION` is not assigned in this script"),
        "{message}"
    );
}

#[test]
fn a_value_from_a_command_is_not_guessed() {
    let facts = changed(
        WIN_ROCM,
        "export PYTORCH_ROCM_ARCH=\"gfx1030;gfx1100;gfx1101;gfx1102;gfx1150;gfx1151;gfx1200;gfx1201\"",
        "export PYTORCH_ROCM_ARCH=$(python -c 'print(\"gfx1030\")')",
    );
    let message = only_unreadable(&facts);
    assert!(
        message.contains(&format!("(rocm.gpu-targets) in {WIN_ROCM}:41:")),
        "{message}"
    );
    assert!(
        message.contains("set from a command (line 19)"),
        "{message}"
    );
}

#[test]
fn a_heredoc_is_not_run() {
    let facts = changed(
        WIN_ROCM,
        "pip install --no-cache-dir --index-url https://stable.repo.amd.com/rocm/whl-next/ \\\n    \"rocm[libraries,devel]==10.0.0\"",
        "cat > install.sh <<'EOF'\npip install --no-cache-dir --index-url https://stable.repo.amd.com/rocm/whl-next/ \"rocm[libraries,devel]==10.0.0\"\nEOF\nbash install.sh",
    );
    let message = only_unreadable(&facts);
    assert!(
        message.contains(&format!("(rocm.sdk) in {WIN_ROCM}:7:")),
        "{message}"
    );
    assert!(message.contains("inside a heredoc"), "{message}");
}

#[test]
fn two_different_assignments_are_said() {
    let facts = changed(
        "python/tools/prepare_build_environment_linux.sh",
        "    ONEDNN_VERSION=3.1.1\n",
        "    ONEDNN_VERSION=3.1.1\n    ONEDNN_VERSION=3.2.0\n",
    );
    let message = only_unreadable(&facts);
    assert!(
        message.contains("assigned different values (lines 44, 45)"),
        "{message}"
    );
}

#[test]
fn continuations_are_joined_wherever_they_are() {
    // The requirement moved onto a third continued line, the index URL in a variable.
    let facts = changed(
        WIN_ROCM,
        "pip install --no-cache-dir --index-url https://stable.repo.amd.com/rocm/whl-next/ \\\n",
        "INDEX=https://stable.repo.amd.com/rocm/whl-next/\npip install --no-cache-dir \\\n    --index-url \"$INDEX\" \\\n",
    );
    assert!(facts.unreadable.is_empty(), "{:#?}", facts.unreadable);
    let sdk = fact(&facts, FactKind::RocmSdk, "_windows_rocm.sh");
    assert_eq!((sdk.at.first, sdk.at.last), (7, 9));
    let Value::Rocm(rocm) = &sdk.value else {
        panic!()
    };
    assert_eq!(
        rocm.index.as_deref(),
        Some("https://stable.repo.amd.com/rocm/whl-next/")
    );
}

#[test]
fn an_unknown_extra_or_a_missing_file_is_unreadable() {
    let facts = changed(
        WIN_ROCM,
        "rocm[libraries,devel]",
        "rocm[libraries,device-all]",
    );
    assert!(only_unreadable(&facts).contains("the extra `device-all`"));
    let mut files = tree("4.8.4");
    files.remove("python/install_requirements.txt");
    let facts = read_facts(&files);
    assert!(
        only_unreadable(&facts)
            .contains("python/install_requirements.txt:1: the file is not in the source tree")
    );
}

#[test]
fn init_py_in_another_shape_is_unreadable() {
    let mut files = tree("4.8.4");
    let text = files.get_mut("python/ctranslate2/__init__.py").unwrap();
    *text = text.replace(
        "os.path.join(site_dir, \"_rocm_sdk_core\", \"bin\")",
        "os.path.join(site_dir, CORE, \"bin\")",
    );
    let facts = read_facts(&files);
    let message = only_unreadable(&facts);
    assert!(
        message.contains(
            "python/ctranslate2/__init__.py:15: `CORE` in os.path.join is not a string literal"
        ),
        "{message}"
    );
}

fn ours_today_4_8_4() -> OurData {
    let wheel = |name: &str, package: &str, folder: &str| OurWheel {
        name: name.into(),
        package: Some(package.into()),
        location: format!("https://repo.radeon.com/rocm/windows/rocm-rel-7.2/{name}.whl"),
        sdk_folder: folder.into(),
        at: "variants/ctranslate2/4.8.4.toml:35".into(),
    };
    let ours = |value: &str| {
        Some(Ok(Ours {
            value: value.to_string(),
            at: "x:1".into(),
        }))
    };
    let mut data = OurData {
        pybind11: ours("2.11.1"),
        onednn_version: ours("3.9.1"),
        ..OurData::default()
    };
    data.rocm.insert(
        Platform::WindowsX86_64,
        OurRocm {
            wheels: vec![
                wheel(
                    "rocm-sdk-core",
                    "rocm_sdk_core 7.2.0.dev0",
                    "_rocm_sdk_core",
                ),
                wheel(
                    "rocm-sdk-libraries-custom",
                    "rocm_sdk_libraries_custom 7.2.0.dev0",
                    "_rocm_sdk_libraries_custom",
                ),
            ],
            gpu_targets: None,
        },
    );
    data
}

#[test]
fn drift_names_both_sides_and_acceptance_is_counted_once() {
    let facts = read_facts(&tree("4.8.4"));
    let mut rows = drift::compare(&facts, &ours_today_4_8_4());
    let drifted: Vec<String> = rows
        .iter()
        .filter(|r| r.verdict == Verdict::Drift)
        .flat_map(|r| {
            r.differences
                .iter()
                .map(move |d| format!("{}: {d}", r.fact))
        })
        .collect();
    let all = drifted.join("\n");
    assert!(all.contains("pybind11: upstream 2.13.6 (python/install_requirements.txt:1), the build tools install pybind11 2.11.1 (x:1)"), "{all}");
    assert!(all.contains(&format!("rocm.sdk: upstream's rocm[libraries,devel]==10.0.0 from https://stable.repo.amd.com/rocm/whl-next/ ({WIN_ROCM}:6-7) installs rocm-sdk-core 10.0.0")), "{all}");
    assert!(
        all.contains("not from upstream's index https://stable.repo.amd.com/rocm/whl-next/"),
        "{all}"
    );
    assert!(all.contains("sdk-folder `_rocm_sdk_libraries_custom`; upstream's wheels install _rocm_sdk_core and _rocm_sdk_libraries"), "{all}");
    // The DLL folders agree: the glob covers _rocm_sdk_libraries_custom.
    assert!(!all.contains("rocm.dll-folders"), "{all}");
    assert!(all.contains("onednn.version"), "{all}");

    let acceptance = |fact: &str| Acceptance {
        fact: fact.into(),
        reason: "why".into(),
        at: "variants/defaults.toml:9".into(),
    };
    let stale = drift::accept(
        &mut rows,
        &[acceptance("onednn.version"), acceptance("rocm.dll-folders")],
    );
    assert!(
        rows.iter()
            .filter(|r| r.fact == FactKind::OnednnVersion)
            .all(|r| r.verdict == Verdict::Accepted("why".into()))
    );
    assert_eq!(stale.len(), 1);
    assert_eq!(stale[0].fact, "rocm.dll-folders");
}

#[test]
fn the_4_7_1_sdk_matches_wheels_named_by_url() {
    let facts = read_facts(&tree("4.7.1"));
    let mut ours = ours_today_4_8_4();
    for wheel in &mut ours.rocm.get_mut(&Platform::WindowsX86_64).unwrap().wheels {
        let file = wheel.package.as_ref().unwrap().replace(' ', "-");
        wheel.location = format!(
            "https://repo.radeon.com/rocm/windows/rocm-rel-7.2/{file}-py3-none-win_amd64.whl"
        );
    }
    let rows = drift::compare(&facts, &ours);
    let sdk: Vec<_> = rows
        .iter()
        .filter(|r| r.fact == FactKind::RocmSdk)
        .collect();
    assert_eq!(sdk[0].verdict, Verdict::Same, "{:#?}", sdk[0].differences);
}
