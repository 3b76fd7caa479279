//! NETWORK TEST: the Windows cpu variant's post-compile steps for real, with no Windows.
//!
//! Stand-in for the compile: the install prefix holds the official CTranslate2 4.7.1
//! win_amd64 wheel's ctranslate2.dll (PyPI), where `install-ctranslate2` would put ours.
//! Then, as `cargo xtask build --variant cpu --platform windows-x86_64` would, from the
//! plan itself: the pinned intel-openmp and msvc-runtime inputs are fetched and unpacked by
//! their plan steps, the `copy-dlls` step copies ctranslate2.dll and libiomp5md.dll into
//! `python/ctranslate2/`, a stand-in for `pip wheel` packs that folder as setup.py's
//! `package_data={"ctranslate2": ["*.dll"]}` does (the .py files and _ext.pyd come from the
//! official wheel), and `cargo xtask bundle --variant cpu` runs with no --assume-present.
//! The VC++ runtime must come from the msvc-runtime wheel, and wine must load ctranslate2.dll
//! from the fat wheel with the VC++ runtime forced native (so wine's own builtin copies
//! cannot stand in for missing ones).
//!
//! | fact | source |
//! |---|---|
//! | `*.dll` in python/ctranslate2 go into the wheel | OpenNMT/CTranslate2 v4.7.1 python/setup.py (package_data) |
//! | ctranslate2.dll and libiomp5md.dll are copied there first | python/tools/prepare_build_environment_windows.sh |
//! | the DLL folder is added with os.add_dll_directory | python/ctranslate2/__init__.py |
//!
//! Needs https to files.pythonhosted.org (the repository's cache keeps the downloads), and
//! mingw-w64 + wine; otherwise it prints why it is skipped and passes.

use crate::common;
use crate::needs_network;

use std::fs;
use std::path::Path;

use common::Scratch;
use common::mingw;
use common::wheel::{read_report, unzip};
use common::winwheels::{HOSTS, fat_wheel};
use serde_json::Value;

fn step<'a>(plan: &'a Value, id: &str) -> &'a Value {
    common::plan_step(plan, id)
}

fn sha256(path: &Path) -> String {
    ct2v_fetch::cache::sha256_file(path).unwrap().0
}

#[test]
fn windows_cpu_post_compile_steps_bundle_the_vc_runtime_and_load_under_wine() {
    needs_network!(HOSTS);
    if !mingw::available(true) {
        return;
    }
    let root = Scratch::new();
    let fat = fat_wheel(&root, "cpu");
    let plan = &fat.plan;
    let files: Vec<&str> = step(plan, "copy-dlls")["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        files[0].ends_with("prefix/ctranslate2/bin/ctranslate2.dll"),
        "{files:?}"
    );
    let names: Vec<String> = fat
        .copied
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["ctranslate2.dll", "libiomp5md.dll"]);
    // The intel-openmp pin carries the very libiomp5md.dll the official wheel ships.
    let dest = Path::new(step(plan, "copy-dlls")["dest"].as_str().unwrap());
    assert_eq!(
        sha256(&dest.join("libiomp5md.dll")),
        sha256(&fat.official.join("ctranslate2/libiomp5md.dll"))
    );
    let wheel = fat.wheel.clone();

    // The bundle step as the variant defines it: no --assume-present.
    let out = fat.out.clone();
    let report = read_report(&out);
    assert_eq!(
        report["assumed_present"],
        Value::Array(vec![]),
        "{report:#}"
    );
    let runtime_dir = Path::new(step(plan, "unpack-msvc-runtime")["dest"].as_str().unwrap())
        .join("msvc_runtime-14.51.36231.data/data/Scripts");
    let mut from_runtime: Vec<String> = Vec::new();
    for f in report["files"].as_array().unwrap() {
        let path = f["path"].as_str().unwrap();
        let name = path.rsplit('/').next().unwrap();
        assert!(path.starts_with("ctranslate2/"), "{f}");
        // The report names the package as its .dist-info does.
        if f["package"] == "msvc_runtime 14.51.36231" {
            assert_eq!(f["sha256"], sha256(&runtime_dir.join(name)).as_str(), "{f}");
            from_runtime.push(name.to_lowercase());
        }
    }
    from_runtime.sort();
    // Exactly the runtime DLLs the closure imports (ctranslate2.dll, _ext.pyd, libiomp5md.dll),
    // not the whole wheel (concrt140, msvcp140_1/_2, vcomp140 are left out).
    assert_eq!(
        from_runtime,
        ["msvcp140.dll", "vcruntime140.dll", "vcruntime140_1.dll"],
        "{report:#}"
    );
    let md = fs::read_to_string(out.join("provenance.md")).unwrap();
    assert!(md.contains("msvc_runtime 14.51.36231"), "{md}");

    // wine loads ctranslate2.dll from the unpacked fat wheel, its VC++ runtime forced native:
    // each of those DLLs must be the bundled one, found through the package folder.
    let site = root.path().join("site");
    unzip(&wheel, &site);
    let probe = mingw::build_probe(&root.path().join("probe"));
    let prefix = mingw::Prefix::new();
    let native = "mscoree,mshtml=;msvcp140,vcruntime140,vcruntime140_1=n";
    let dll = site.join("ctranslate2/ctranslate2.dll");
    let dirs = [site.join("ctranslate2")];
    let load = || mingw::wine_load_with(prefix.path(), &probe, &dll, &dirs, native);
    let loaded = load();
    assert!(loaded.loaded, "{}", loaded.output);
    assert!(loaded.missing.is_empty(), "{}", loaded.output);

    // Without the bundled runtime the same load fails and names it.
    fs::remove_file(site.join("ctranslate2/msvcp140.dll")).unwrap();
    let failed = load();
    assert!(!failed.loaded, "{}", failed.output);
    assert!(
        failed
            .missing
            .iter()
            .any(|m| m.eq_ignore_ascii_case("msvcp140.dll")),
        "{}",
        failed.output
    );
}
