//! The `rocm-gfx1010` Windows bundle, through the variant's own bundle step, on a stand-in
//! for what a build leaves and for HIP SDK 6.2: real PE DLLs (mingw-w64) with the HIP 6
//! names and import graph, rocBLAS kernels for several targets, Intel OpenMP from the
//! `intel-openmp` wheel's folder. The fat wheel is then loaded by wine from the package
//! folder alone, as CTranslate2's `__init__.py` adds it.

use crate::common;

use std::fs;
use std::path::Path;

use common::Scratch;
use common::mingw::{self, Dll};
use common::wheel::{ct2_dist_info, read_report, unzip, zip_names, zip_wheel};

const WHEEL: &str = "ctranslate2-4.7.1-cp312-cp312-win_amd64.whl";
const EXT: &str = "_ext.cp312-win_amd64.pyd";
const WORK: &str = "target/xtask/rocm-gfx1010/windows-x86_64";

fn place(from: &Path, name: &str, to: &Path) {
    fs::create_dir_all(to).unwrap();
    fs::copy(from.join(name), to.join(name)).unwrap();
}

#[test]
fn the_hip_6_2_closure_with_gfx1010_kernels_only_is_bundled_and_loads_under_wine() {
    if !mingw::available(true) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let built = dir.path().join("dlls");
    let dll = |name, imports, loads| Dll {
        name,
        imports,
        loads,
    };
    mingw::build(
        &built,
        &[
            dll("amd_comgr_2.dll", &[], &[]),
            // HIP 6's runtime loads the code-object manager when it starts.
            dll("amdhip64_6.dll", &[], &["amd_comgr_2.dll"]),
            dll("rocblas.dll", &["amdhip64_6.dll"], &[]),
            dll("hipblas.dll", &["rocblas.dll", "amdhip64_6.dll"], &[]),
            dll("hiprtc0602.dll", &["amdhip64_6.dll"], &[]),
            dll("libiomp5md.dll", &[], &[]),
            dll("MSVCP140.dll", &[], &[]),
            dll("python312.dll", &[], &[]),
            dll(
                "ctranslate2.dll",
                &[
                    "amdhip64_6.dll",
                    "hipblas.dll",
                    "libiomp5md.dll",
                    "MSVCP140.dll",
                ],
                &[],
            ),
            dll(EXT, &["ctranslate2.dll", "python312.dll"], &[]),
        ],
    );

    // What the build leaves: the wheel CTranslate2's python/ makes, and the prefix.
    let scratch = Scratch::new();
    let work = scratch.path().join(WORK);
    let tree = dir.path().join("wheel-tree");
    place(&built, "ctranslate2.dll", &tree.join("ctranslate2"));
    place(&built, EXT, &tree.join("ctranslate2"));
    fs::write(tree.join("ctranslate2/__init__.py"), "").unwrap();
    ct2_dist_info(&tree, Some("cp312-cp312-win_amd64"));
    zip_wheel(&tree, &work.join("wheel/py3.12").join(WHEEL));
    place(
        &built,
        "ctranslate2.dll",
        &work.join("prefix/ctranslate2/bin"),
    );
    place(
        &built,
        "libiomp5md.dll",
        &work.join("deps/intel-openmp/intel_openmp-2025.3.0.data/data/Library/bin"),
    );
    place(
        &built,
        "MSVCP140.dll",
        &work.join("deps/msvc-runtime/msvc_runtime-14.51.36231.data/data/Scripts"),
    );

    // HIP SDK 6.2 as installed: everything in bin\, kernels in bin\rocblas\library.
    let sdk = dir.path().join("AMD/ROCm/6.2");
    for name in [
        "amdhip64_6.dll",
        "amd_comgr_2.dll",
        "rocblas.dll",
        "hipblas.dll",
        "hiprtc0602.dll",
    ] {
        place(&built, name, &sdk.join("bin"));
    }
    let library = sdk.join("bin/rocblas/library");
    fs::create_dir_all(&library).unwrap();
    for name in [
        "TensileLibrary_lazy_gfx1010.dat",
        "Kernels.so-000-gfx1010-xnack-.hsaco",
        "TensileLibrary_lazy_gfx1030.dat",
        "TensileLibrary_lazy_gfx1100.dat",
        "TensileManifest.txt",
    ] {
        fs::write(library.join(name), name.repeat(100)).unwrap();
    }

    let run = scratch.run(&[
        "bundle",
        "--variant",
        "rocm-gfx1010",
        "--platform",
        "windows-x86_64",
        "--python",
        "3.12",
        "--sdk-dir",
        sdk.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);

    let dist = work.join("dist/py3.12");
    let fat = dist.join(WHEEL);
    let names = zip_names(&fat);
    // The SDK's DLLs in the folder __init__.py adds as a DLL directory; in ctranslate2/
    // (each DLL of which __init__.py loads at import) only what CTranslate2 itself needs.
    for name in [
        "ctranslate2/ctranslate2.dll",
        "ctranslate2/libiomp5md.dll",
        "ctranslate2/MSVCP140.dll",
        "_rocm_sdk_core/bin/amdhip64_6.dll",
        "_rocm_sdk_core/bin/hipblas.dll",
        "_rocm_sdk_core/bin/rocblas.dll",
        "_rocm_sdk_core/bin/amd_comgr_2.dll",
        "_rocm_sdk_core/bin/rocblas/library/TensileLibrary_lazy_gfx1010.dat",
        "_rocm_sdk_core/bin/rocblas/library/Kernels.so-000-gfx1010-xnack-.hsaco",
        "_rocm_sdk_core/bin/rocblas/library/TensileManifest.txt",
    ] {
        assert!(names.contains(name), "{name} in {names:?}");
    }
    let in_package: Vec<&String> = names
        .iter()
        .filter(|n| n.starts_with("ctranslate2/") && n.ends_with(".dll"))
        .collect();
    assert_eq!(
        in_package,
        [
            "ctranslate2/MSVCP140.dll",
            "ctranslate2/ctranslate2.dll",
            "ctranslate2/libiomp5md.dll"
        ],
        "no SDK DLL is loaded by `import ctranslate2`"
    );
    for left_out in [
        "_rocm_sdk_core/bin/rocblas/library/TensileLibrary_lazy_gfx1030.dat",
        "_rocm_sdk_core/bin/rocblas/library/TensileLibrary_lazy_gfx1100.dat",
        "_rocm_sdk_core/bin/hiprtc0602.dll",
        "ctranslate2/python312.dll",
    ] {
        assert!(!names.contains(left_out), "{left_out} left out: {names:?}");
    }
    let report = read_report(&dist);
    let comgr = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "_rocm_sdk_core/bin/amd_comgr_2.dll")
        .unwrap()
        .clone();
    assert_eq!(comgr["package"], "HIP SDK 6.2", "{comgr}");

    // Loaded with the folders CTranslate2's __init__.py adds with os.add_dll_directory
    // (ctranslate2/ and ../_rocm_sdk_core/bin): the HIP runtime's run-time load of
    // amd_comgr succeeds too.
    let site = dir.path().join("site");
    unzip(&fat, &site);
    let probe = mingw::build_probe(&dir.path().join("probe"));
    let prefix = mingw::Prefix::new();
    let package = site.join("ctranslate2");
    let load = mingw::wine_load(
        prefix.path(),
        &probe,
        &package.join("ctranslate2.dll"),
        &[package.clone(), site.join("_rocm_sdk_core/bin")],
    );
    assert!(load.loaded, "{}", load.output);
}
