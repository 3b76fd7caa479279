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
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::mingw;
use common::wheel::{read_report, unzip, zip_wheel};
use common::{Scratch, repo_root};
use serde_json::Value;
use xtask::cache::{Cache, Pin};
use xtask::download::{self, Options, Request};

const HOSTS: &[&str] = &["files.pythonhosted.org:443"];
const PYTHON: &str = "3.12";

/// The official wheel whose ctranslate2.dll stands in for ours (the one bundle_real.rs uses).
const CT2_URL: &str = "https://files.pythonhosted.org/packages/4a/f4/d23dbfb9c62cb642c114a30f05d753ba61d6ffbfd8a3a4012fe85a073bcb/ctranslate2-4.7.1-cp312-cp312-win_amd64.whl";
const CT2_SHA256: &str = "d0f734dc3757118094663bdaaf713f5090c55c1927fb330a76bb8b84173940e8";
const CT2_SIZE: u64 = 18_844_949;

fn s(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 temp path")
}

fn request(name: &str, url: &str, sha256: &str, size: u64) -> Request {
    Request {
        name: name.to_string(),
        pin: Pin {
            url: url.to_string(),
            sha256: sha256.to_string(),
            size: Some(size),
            file_name: url.rsplit('/').next().unwrap().to_string(),
        },
    }
}

fn step<'a>(plan: &'a Value, id: &str) -> &'a Value {
    common::plan_step(plan, id)
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("{value}"))
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

fn sha256(path: &Path) -> String {
    xtask::cache::sha256_file(path).unwrap().0
}

#[test]
fn windows_cpu_post_compile_steps_bundle_the_vc_runtime_and_load_under_wine() {
    needs_network!(HOSTS);
    if !mingw::available(true) {
        return;
    }
    let root = Scratch::new();
    let cache_dir = repo_root().join("target/xtask/cache");
    let cache = Cache::new(&cache_dir);
    let xtask = |args: &[&str]| {
        let mut all = vec!["--cache-dir", s(&cache_dir)];
        all.extend_from_slice(args);
        root.run(&all)
    };
    let variant = [
        "--variant",
        "cpu",
        "--platform",
        "windows-x86_64",
        "--python",
        PYTHON,
    ];
    let mut plan_args = vec!["plan"];
    plan_args.extend_from_slice(&variant);
    plan_args.extend(["--compiler-cache", "off", "--json"]);
    let run = xtask(&plan_args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let plan: Value = serde_json::from_str(&run.stdout).unwrap();

    // The inputs the bundle needs, fetched by their pins and unpacked by their plan steps.
    let mut requests = vec![request("ct2-official", CT2_URL, CT2_SHA256, CT2_SIZE)];
    for name in ["intel-openmp", "msvc-runtime"] {
        let input = plan["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["name"] == name)
            .unwrap_or_else(|| panic!("input {name}"));
        requests.push(request(
            name,
            input["url"].as_str().unwrap(),
            input["sha256"].as_str().unwrap(),
            input["size"].as_u64().unwrap(),
        ));
    }
    let options = Options {
        progress: false,
        timeout: Duration::from_secs(60),
        ..Options::default()
    };
    let fetched = download::fetch_all(&cache, &requests, &options)
        .unwrap_or_else(|e| panic!("downloading the wheels: {e}"));
    for (r, f) in requests.iter().zip(&fetched).skip(1) {
        let unpack = &step(&plan, &format!("unpack-{}", r.name))["dest"];
        xtask::unpack::unpack_input(
            &r.name,
            &f.path,
            &r.pin.file_name,
            None,
            Path::new(unpack.as_str().unwrap()),
        )
        .unwrap();
    }
    let official = root.path().join("official");
    unzip(&fetched[0].path, &official);

    // The stand-in install prefix, and the source tree's package folder.
    let copy = step(&plan, "copy-dlls");
    let files = strings(&copy["files"]);
    let dest = PathBuf::from(copy["dest"].as_str().unwrap());
    assert!(
        files[0].ends_with("prefix/ctranslate2/bin/ctranslate2.dll"),
        "{files:?}"
    );
    fs::create_dir_all(Path::new(&files[0]).parent().unwrap()).unwrap();
    fs::copy(official.join("ctranslate2/ctranslate2.dll"), &files[0]).unwrap();
    fs::create_dir_all(&dest).unwrap();
    let copied = xtask::copy_dlls::copy(&files, &dest).unwrap();
    let names: Vec<String> = copied
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["ctranslate2.dll", "libiomp5md.dll"]);
    // The intel-openmp pin carries the very libiomp5md.dll the official wheel ships.
    assert_eq!(
        sha256(&dest.join("libiomp5md.dll")),
        sha256(&official.join("ctranslate2/libiomp5md.dll"))
    );

    // The stand-in `pip wheel`: the official wheel's Python files and extension, and the
    // package folder's DLLs (exactly what copy-dlls put there).
    let tree = root.path().join("wheel-tree");
    unzip(&fetched[0].path, &tree);
    for entry in fs::read_dir(tree.join("ctranslate2")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "dll") {
            fs::remove_file(path).unwrap();
        }
    }
    fs::remove_file(tree.join("ctranslate2-4.7.1.dist-info/RECORD")).unwrap();
    for dll in &copied {
        fs::copy(dll, tree.join("ctranslate2").join(dll.file_name().unwrap())).unwrap();
    }
    let wheel = PathBuf::from(step(&plan, "bundle")["wheel"].as_str().unwrap());
    zip_wheel(&tree, &wheel);

    // The bundle step as the variant defines it: no --assume-present.
    let mut bundle_args = vec!["bundle"];
    bundle_args.extend_from_slice(&variant);
    let run = xtask(&bundle_args);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let out = PathBuf::from(step(&plan, "bundle")["out"].as_str().unwrap());
    let report = read_report(&out);
    assert_eq!(
        report["assumed_present"],
        Value::Array(vec![]),
        "{report:#}"
    );
    let runtime_dir = Path::new(step(&plan, "unpack-msvc-runtime")["dest"].as_str().unwrap())
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
    unzip(&out.join(wheel.file_name().unwrap()), &site);
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
