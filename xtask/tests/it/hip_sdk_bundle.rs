//! The Windows bundles of the variants built against HIP SDK 6.2 (`rocm-gfx1010` and those
//! that extend it), through each variant's own bundle step, on a stand-in for what a build
//! leaves and for a stock HIP SDK 6.2: real PE DLLs (mingw-w64) with the HIP 6 names and import
//! graph, the SDK's rocBLAS with kernels for other targets only (as 6.2 ships), the variant's
//! community rocBLAS as a `.7z` written by 7-Zip (common/community_rocblas.rs) and unpacked by
//! the unpack step's code, Intel OpenMP from the `intel-openmp` wheel's folder. The fat wheel
//! is then loaded by wine from the package folder alone, as CTranslate2's `__init__.py` adds
//! it, with the HIP runtime in System32 as the display driver installs it.

use crate::common;
use ct2v_support::report::Reporter;

use std::fs;
use std::path::Path;

use common::Scratch;
use common::community_rocblas::{self, Asset};
use common::mingw::{self, Dll};
use common::wheel::{ct2_dist_info, read_report, unzip, zip_names, zip_wheel};

const WHEEL: &str = "ctranslate2-4.7.1-cp312-cp312-win_amd64.whl";
const EXT: &str = "_ext.cp312-win_amd64.pyd";

fn place(from: &Path, name: &str, to: &Path) {
    fs::create_dir_all(to).unwrap();
    fs::copy(from.join(name), to.join(name)).unwrap();
}

/// A variant built against HIP SDK 6.2, as the bundle test takes it.
struct Case {
    variant: &'static str,
    targets: &'static [&'static str],
    asset: &'static Asset,
    /// The `package` of its community-rocblas input.
    package: &'static str,
}

/// What [`bundle`] leaves for more checks.
struct Bundled {
    scratch: Scratch,
    /// The report's package of the community files (`<package>, from <asset>`).
    community: String,
}

#[test]
fn the_hip_6_2_closure_with_gfx1010_kernels_only_is_bundled_and_loads_under_wine() {
    let Some(Bundled { scratch, community }) = bundle(&Case {
        variant: "rocm-gfx1010",
        targets: &["gfx1010"],
        asset: &community_rocblas::RDNA1,
        package: "ROCmLibs v0.6.2.4 rocBLAS for gfx1010, gfx1011, gfx1012 (community build for HIP SDK 6.2.4, xnack-)",
    }) else {
        return;
    };
    // The release names the archive, its URL and its pin for those files.
    let out = scratch.path().join("target/dist/4.7.1");
    let release = scratch.run(&[
        "release",
        "--variants",
        "rocm-gfx1010",
        "--platforms",
        "windows-x86_64",
        "--pythons",
        "3.12",
        "--out",
        out.to_str().unwrap(),
        "--include-self-hosted",
        "--include-unpinned",
    ]);
    assert_eq!(release.code, 0, "{}", release.stderr);
    let notes = fs::read_to_string(out.join("RELEASE_NOTES.md")).unwrap();
    assert!(
        notes.contains(&format!(
            "bundles `_rocm_sdk_core/bin/rocblas.dll` from {} \
             (`https://github.com/likelovewant/ROCmLibs-for-gfx1103-AMD780M-APU/releases/download/v0.6.2.4/{}`, \
             sha256 not pinned)",
            ct2v_support::markdown::text(&community),
            community_rocblas::RDNA1.name
        )),
        "{notes}"
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    let wheel = manifest["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["kind"] == "wheel")
        .unwrap();
    let rocblas = wheel["bundled"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["path"] == "_rocm_sdk_core/bin/rocblas.dll")
        .unwrap();
    assert_eq!(rocblas["input"], "community-rocblas");
}

/// `rocm-gfx1012` shares rocm-gfx1010's asset and keeps the other two targets' kernels.
#[test]
fn rdna1_navi_14_and_12_take_their_kernels_from_the_shared_asset() {
    bundle(&Case {
        variant: "rocm-gfx1012",
        targets: &["gfx1011", "gfx1012"],
        asset: &community_rocblas::RDNA1,
        package: "ROCmLibs v0.6.2.4 rocBLAS for gfx1010, gfx1011, gfx1012 (community build for HIP SDK 6.2.4, xnack-)",
    });
}

#[test]
fn rdna2_navi_23_takes_its_own_asset() {
    bundle(&Case {
        variant: "rocm-gfx1032",
        targets: &["gfx1032"],
        asset: &community_rocblas::GFX1032,
        package: "ROCmLibs v0.6.2.4 rocBLAS for gfx1032 (community build for HIP SDK 6.2.4, Navi 21's Tensile logic)",
    });
}

/// One asset and one wheel for three targets, two of them iGPUs.
#[test]
fn rdna2_navi_24_and_its_igpus_share_one_asset() {
    bundle(&Case {
        variant: "rocm-gfx1034",
        targets: &["gfx1034", "gfx1035", "gfx1036"],
        asset: &community_rocblas::GFX1034,
        package: "ROCmLibs v0.6.2.4 rocBLAS for gfx1034, gfx1035, gfx1036 (community build for HIP SDK 6.2.4)",
    });
}

/// Bundles `case`'s variant from the stand-ins with `cargo xtask bundle`, checks the fat wheel,
/// the frozen-app layout and the report, and loads the result under wine; `None` where a tool
/// is missing (the test is skipped, or fails under CI).
fn bundle(case: &Case) -> Option<Bundled> {
    if !mingw::available(true) {
        return None;
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
    let work = scratch
        .path()
        .join(format!("target/xtask/{}/windows-x86_64", case.variant));
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

    // The community rocBLAS, unpacked as the variant's unpack step does (same code, same
    // input definition: subdir and expect from the variant file).
    let asset = case
        .asset
        .write_7z(dir.path(), &built.join("rocblas.dll"))?;
    let community = work.join("deps/community-rocblas");
    ct2v_fetch::unpack::unpack_input(
        &ct2v_fetch::unpack::CachedInput {
            name: "community-rocblas",
            archive: &asset,
            file_name: case.asset.name,
            url: "https://github.com/…",
        },
        Some(ct2v_fetch::unpack::ANY_TOP_FOLDER),
        &community,
        ct2v_fetch::unpack::Kept::Recorded,
        &Reporter::captured(),
    )
    .unwrap();
    ct2v_fetch::unpack::check_expected(
        case.asset.name,
        "https://github.com/…",
        Some(ct2v_fetch::unpack::ANY_TOP_FOLDER),
        &community,
        &["rocblas.dll".to_string(), "library/".to_string()],
    )
    .unwrap();

    // HIP SDK 6.2 as installed: everything in bin\, kernels in bin\rocblas\library, but
    // none for the variant's targets (the stock SDK's rocBLAS), and a rocblas.dll other than
    // the community one.
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
    let mut stock = fs::read(sdk.join("bin/rocblas.dll")).unwrap();
    stock.extend_from_slice(b"stock HIP SDK 6.2 rocBLAS");
    fs::write(sdk.join("bin/rocblas.dll"), &stock).unwrap();
    let library = sdk.join("bin/rocblas/library");
    fs::create_dir_all(&library).unwrap();
    for name in [
        "TensileLibrary_lazy_gfx1030.dat",
        "TensileLibrary_lazy_gfx1100.dat",
        "TensileManifest.txt",
    ] {
        fs::write(library.join(name), format!("stock {name}")).unwrap();
    }

    let run = scratch.run(&[
        "bundle",
        "--variant",
        case.variant,
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
        "_rocm_sdk_core/bin/hipblas.dll",
        "_rocm_sdk_core/bin/rocblas.dll",
        "_rocm_sdk_core/bin/amd_comgr_2.dll",
    ] {
        assert!(names.contains(name), "{name} in {names:?}");
    }
    // Exactly the community build's kernels for the variant's targets (with their `-xnack-`
    // code objects and the fallback library every arch needs), nothing of the SDK's.
    let kernels: Vec<&str> = names
        .iter()
        .filter_map(|n| n.strip_prefix("_rocm_sdk_core/bin/rocblas/library/"))
        .collect();
    let kept = case.asset.kept(case.targets);
    assert!(
        kept.len() > 2,
        "{kept:?}: the stand-in has kernels for each target"
    );
    assert_eq!(kernels, kept, "{}", case.variant);
    let site = dir.path().join("site");
    unzip(&fat, &site);
    assert_eq!(
        fs::read(site.join("_rocm_sdk_core/bin/rocblas.dll")).unwrap(),
        fs::read(built.join("rocblas.dll")).unwrap(),
        "the community rocblas.dll, not the SDK's"
    );
    assert_eq!(
        fs::read(site.join("_rocm_sdk_core/bin/rocblas/library/TensileManifest.txt")).unwrap(),
        "TensileManifest.txt".repeat(200).into_bytes(),
        "the community manifest, not the SDK's"
    );
    assert!(
        !names.contains("_rocm_sdk_core/bin/amdhip64_6.dll"),
        "the HIP runtime is the driver's: {names:?}"
    );
    // The frozen-app layout holds the same rocBLAS and kernels.
    let portable = dist.join("portable/_internal/_rocm_sdk_core/bin");
    assert_eq!(
        fs::read(portable.join("rocblas.dll")).unwrap(),
        fs::read(built.join("rocblas.dll")).unwrap()
    );
    let mut in_portable: Vec<String> = fs::read_dir(portable.join("rocblas/library"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    in_portable.sort();
    assert_eq!(in_portable, kept);
    assert!(!portable.join("amdhip64_6.dll").exists());
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
    let package_of = |path: &str| {
        report["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == path)
            .unwrap_or_else(|| panic!("{path} in {report:#}"))["package"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        package_of("_rocm_sdk_core/bin/amd_comgr_2.dll"),
        "HIP SDK 6.2"
    );
    assert_eq!(package_of("_rocm_sdk_core/bin/hipblas.dll"), "HIP SDK 6.2");
    // The report names the archive each of those files came from.
    let community = format!("{}, from {}", case.package, case.asset.name);
    assert_eq!(
        package_of("_rocm_sdk_core/bin/rocblas.dll"),
        community.as_str()
    );
    for kernel in &kept {
        assert_eq!(
            package_of(&format!("_rocm_sdk_core/bin/rocblas/library/{kernel}")),
            community.as_str()
        );
    }
    assert_eq!(
        report["assumed_present"],
        serde_json::json!(["amdhip64_6.dll"])
    );

    // Loaded with the folders CTranslate2's __init__.py adds with os.add_dll_directory
    // (ctranslate2/ and ../_rocm_sdk_core/bin), the HIP runtime in System32 as the driver
    // installs it: the runtime's run-time load of amd_comgr succeeds too.
    let probe = mingw::build_probe(&dir.path().join("probe"));
    let prefix = mingw::Prefix::new();
    mingw::install_in_system32(prefix.path(), &built.join("amdhip64_6.dll"));
    let package = site.join("ctranslate2");
    let load = mingw::wine_load(
        prefix.path(),
        &probe,
        &package.join("ctranslate2.dll"),
        &[package.clone(), site.join("_rocm_sdk_core/bin")],
    );
    assert!(load.loaded, "{}", load.output);
    Some(Bundled { scratch, community })
}
