//! `bundle` on a synthetic ROCm SDK whose DLLs are real PE files (built with mingw-w64),
//! with the names and import graph of the ROCm 7.2 Windows packages; the fat wheel is then
//! unpacked and its ctranslate2.dll loaded by a real Windows loader (wine), with the DLL
//! folders CTranslate2's `__init__.py` adds with `os.add_dll_directory`.

use crate::common;

use std::fs;
use std::path::Path;
use std::time::Instant;

use common::mingw;
use common::rocm::{CORE_DEST, DATA_DEST, LIBS_DEST, MSVC_DIR, Rocm, WHEEL, rocm};
use common::wheel::{files_below, read_report, report_files, unzip, zip_names};

fn s(path: &Path) -> String {
    path.to_str().expect("a UTF-8 temp path").to_string()
}

/// The arguments of the ROCm bundle, with or without the libraries' search folder.
fn bundle_args(rocm: &Rocm, out: &Path, with_libs: bool) -> Vec<String> {
    let mut args = vec![
        "bundle".to_string(),
        "--wheel".into(),
        s(&rocm.wheel),
        "--out".into(),
        s(out),
        "--search".into(),
        format!("{}={CORE_DEST}", s(&rocm.core_bin)),
        "--search".into(),
        format!("{}=ctranslate2", s(&rocm.msvc_tree.join(MSVC_DIR))),
    ];
    if with_libs {
        args.extend([
            "--search".into(),
            format!("{}={LIBS_DEST}", s(&rocm.libs_bin)),
        ]);
    }
    args.extend([
        "--force".into(),
        "amd_comgr*.dll".into(),
        "--binary".into(),
        "ctranslate2/ctranslate2.dll".into(),
        "--binary".into(),
        "ctranslate2/_ext*.pyd".into(),
        "--data".into(),
        format!("{}/rocblas/library/*={DATA_DEST}", s(&rocm.libs_bin)),
        "--gpu-targets".into(),
        "gfx1030,gfx1100".into(),
    ]);
    args
}

fn bundle(rocm: &Rocm, out: &Path, with_libs: bool) -> common::Run {
    let args = bundle_args(rocm, out, with_libs);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    common::xtask(&args)
}

/// What the closure of ctranslate2.dll and the .pyd adds to the wheel (path, package, why),
/// in the report's order: libraries, then data files.
const ADDED: [(&str, &str, &str); 12] = [
    (
        "_rocm_sdk_core/bin/amd_comgr0702.dll",
        "rocm_sdk_core 7.2.0.dev0",
        "loaded at run time",
    ),
    (
        "_rocm_sdk_core/bin/amdhip64_7.dll",
        "rocm_sdk_core 7.2.0.dev0",
        "ctranslate2.dll, hipblas.dll, libhipblaslt.dll, rocblas.dll, rocsolver.dll",
    ),
    (
        "_rocm_sdk_libraries_custom/bin/hipblas.dll",
        "rocm_sdk_libraries_custom 7.2.0.dev0",
        "ctranslate2.dll",
    ),
    (
        "_rocm_sdk_libraries_custom/bin/libhipblaslt.dll",
        "rocm_sdk_libraries_custom 7.2.0.dev0",
        "rocblas.dll",
    ),
    (
        "_rocm_sdk_libraries_custom/bin/rocblas.dll",
        "rocm_sdk_libraries_custom 7.2.0.dev0",
        "hipblas.dll, rocsolver.dll",
    ),
    (
        "_rocm_sdk_libraries_custom/bin/rocsolver.dll",
        "rocm_sdk_libraries_custom 7.2.0.dev0",
        "hipblas.dll",
    ),
    (
        "ctranslate2/MSVCP140.dll",
        "msvc_runtime 14.51.36231",
        "_ext.cp312-win_amd64.pyd, ctranslate2.dll",
    ),
    (
        "_rocm_sdk_libraries_custom/bin/rocblas/library/Kernels.so-000-gfx1030.hsaco",
        "rocm_sdk_libraries_custom 7.2.0.dev0",
        "data: *",
    ),
    (
        "_rocm_sdk_libraries_custom/bin/rocblas/library/TensileLibrary_lazy_gfx1030.dat",
        "rocm_sdk_libraries_custom 7.2.0.dev0",
        "data: *",
    ),
    (
        "_rocm_sdk_libraries_custom/bin/rocblas/library/TensileManifest.txt",
        "rocm_sdk_libraries_custom 7.2.0.dev0",
        "data: *",
    ),
    (
        "_rocm_sdk_libraries_custom/bin/rocblas/library/gfx1100/Kernels.so-000-gfx1100.co",
        "rocm_sdk_libraries_custom 7.2.0.dev0",
        "data: *",
    ),
    (
        "_rocm_sdk_libraries_custom/bin/rocblas/library/gfx1100/TensileLibrary_lazy_gfx1100.dat.zlib",
        "rocm_sdk_libraries_custom 7.2.0.dev0",
        "data: *",
    ),
];

fn added() -> Vec<(&'static str, &'static str, &'static str)> {
    ADDED.to_vec()
}

#[test]
fn rocm_closure_is_bundled_and_loads_under_wine() {
    if !mingw::available(true) {
        return;
    }
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let rocm = rocm(dir.path());
    let out = dir.path().join("out");
    let run = bundle(&rocm, &out, true);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);

    // The fat wheel: the input's files plus exactly the closure and the targeted data.
    let fat = out.join(WHEEL);
    let mut expected = rocm.wheel_files.clone();
    expected.extend(added().iter().map(|(p, _, _)| p.to_string()));
    assert_eq!(zip_names(&fat), expected);
    assert_eq!(
        ct2v_bundle::wheel::check_record(&fat).unwrap(),
        Vec::<String>::new()
    );

    // provenance.json: every added file with its package and why it is there.
    let report = read_report(&out);
    assert_eq!(report_files(&report), added());
    for f in report["files"].as_array().unwrap() {
        let source = match f["path"].as_str().unwrap() {
            p if p.starts_with(CORE_DEST) => rocm.core_bin.join(&p[CORE_DEST.len() + 1..]),
            p if p.starts_with("ctranslate2/") => rocm.msvc_tree.join(MSVC_DIR).join(&p[12..]),
            p => rocm.libs_bin.join(&p[LIBS_DEST.len() + 1..]),
        };
        assert_eq!(f["size"], fs::metadata(&source).unwrap().len(), "{f}");
        assert_eq!(f["sha256"].as_str().unwrap().len(), 64, "{f}");
    }
    let system: Vec<&str> = report["system"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for name in ["KERNEL32.dll", "msvcrt.dll", "python312.dll"] {
        assert!(system.contains(&name), "{name} in {system:?}");
    }
    let md = fs::read_to_string(out.join("provenance.md")).unwrap();
    assert!(
        md.contains(concat!(
            "| `_rocm_sdk_libraries_custom/bin/rocblas.dll` ",
            "| rocm_sdk_libraries_custom 7.2.0.dev0 |"
        )),
        "{md}"
    );

    // portable/: the wheel's package folders under _internal, and the .spec `binaries` pairs.
    let binaries: Vec<(String, String)> =
        serde_json::from_str(&fs::read_to_string(out.join("portable/binaries.json")).unwrap())
            .unwrap();
    let pairs: Vec<(String, String)> = added()
        .iter()
        .map(|(p, _, _)| {
            let (dest, _) = p.rsplit_once('/').unwrap();
            (format!("_internal/{p}"), dest.to_string())
        })
        .collect();
    assert_eq!(binaries, pairs);
    for (source, _) in &binaries {
        assert!(out.join("portable").join(source).is_file(), "{source}");
    }
    let internal = files_below(&out.join("portable/_internal"));
    assert!(
        internal.contains("ctranslate2/ctranslate2.dll"),
        "{internal:?}"
    );
    assert!(
        internal.iter().all(|f| !f.contains(".dist-info")),
        "{internal:?}"
    );
    let bundled = started.elapsed();

    // Load ctranslate2.dll from the unpacked fat wheel as CTranslate2's __init__.py does.
    let site = dir.path().join("site");
    unzip(&fat, &site);
    let probe = mingw::build_probe(&dir.path().join("probe"));
    let prefix = mingw::Prefix::new();
    let dll = site.join("ctranslate2/ctranslate2.dll");
    let dirs = [
        site.join("ctranslate2"),
        site.join(CORE_DEST),
        site.join(LIBS_DEST),
    ];
    let load = mingw::wine_load(prefix.path(), &probe, &dll, &dirs);
    assert!(load.loaded, "{}", load.output);
    assert!(load.missing.is_empty(), "{}", load.output);

    // Without the DLL folders added, the bundled libraries are not found: the search path
    // matters, and nothing is found by accident elsewhere.
    let load = mingw::wine_load(prefix.path(), &probe, &dll, &dirs[..1]);
    assert!(!load.loaded, "{}", load.output);
    assert_eq!(
        load.missing,
        ["amdhip64_7.dll", "hipblas.dll"],
        "{}",
        load.output
    );

    // An import missing from the bundle fails the load, and wine names it
    // ("Library rocblas.dll (which is needed by …hipblas.dll) not found").
    fs::remove_file(site.join(LIBS_DEST).join("rocblas.dll")).unwrap();
    let load = mingw::wine_load(prefix.path(), &probe, &dll, &dirs);
    assert!(!load.loaded, "{}", load.output);
    assert!(
        load.output.contains("FAILED LoadLibrary 126"),
        "ERROR_MOD_NOT_FOUND: {}",
        load.output
    );
    // hipblas.dll and rocsolver.dll, which import it, cannot load either.
    assert_eq!(
        load.missing,
        ["hipblas.dll", "rocblas.dll", "rocsolver.dll"],
        "{}",
        load.output
    );

    // A run-time load missing from the bundle: the DLL loads but the HIP runtime cannot
    // start, as amdhip64 without amd_comgr.
    fs::copy(
        rocm.libs_bin.join("rocblas.dll"),
        site.join(LIBS_DEST).join("rocblas.dll"),
    )
    .unwrap();
    fs::remove_file(site.join(CORE_DEST).join("amd_comgr0702.dll")).unwrap();
    let load = mingw::wine_load(prefix.path(), &probe, &dll, &dirs);
    assert!(!load.loaded, "{}", load.output);
    assert_eq!(load.missing, ["amd_comgr0702.dll"], "{}", load.output);
    eprintln!(
        "bundled in {:.1?}, loaded under wine in {:.1?}",
        bundled,
        started.elapsed() - bundled
    );
}

#[test]
fn a_missing_search_folder_names_the_missing_import_and_its_importer() {
    if !mingw::available(false) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rocm = rocm(dir.path());
    let out = dir.path().join("out");
    let run = bundle(&rocm, &out, false);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains(
            "1 imported library is found nowhere:\n  hipblas.dll  (imported by ctranslate2.dll)"
        ),
        "{}",
        run.stderr
    );
    assert!(!out.exists(), "nothing is written on failure");
}
