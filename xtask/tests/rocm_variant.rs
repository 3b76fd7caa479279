//! `cargo xtask build --variant rocm` end to end against a stand-in for AMD's and GitHub's
//! hosts: a loopback server with their URL layout (`--mirror http://127.0.0.1:PORT/` serves
//! `https://HOST/PATH` as `/HOST/PATH`), serving wheels made here with the real names and
//! folder layout, whose DLLs are real PE files (mingw-w64) with the real import graph. The
//! outputs are then loaded by a real Windows loader (wine) with no SDK anywhere else.

mod common;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::mingw;
use common::rocm::{CORE_DEST, LIBS_DEST, Rocm, WHEEL, rocm};
use common::server::Server;
use common::wheel::{read_report, unzip, zip_names, zip_wheel};
use common::{Run, Scratch};

const RELEASE: &str =
    "/github.com/OpenNMT/CTranslate2/releases/download/v4.7.1/rocm-python-wheels-Windows.zip";
const INDEX: &str = "/repo.radeon.com/rocm/windows/rocm-rel-7.2/";
const CORE_WHEEL: &str = "rocm_sdk_core-7.2.0.dev0-py3-none-win_amd64.whl";
const LIBS_WHEEL: &str = "rocm_sdk_libraries_custom-7.2.0.dev0-py3-none-win_amd64.whl";
const DIST: &str = "target/xtask/rocm/windows-x86_64/dist/py3.12";

/// The stand-in: the synthetic ROCm files, and the three downloads made from them.
struct StandIn {
    dir: tempfile::TempDir,
    rocm: Rocm,
    release_zip: Vec<u8>,
    core_wheel: Vec<u8>,
    libs_wheel: Vec<u8>,
}

fn stand_in() -> StandIn {
    let dir = tempfile::tempdir().unwrap();
    let rocm = rocm(dir.path());
    let core = dir.path().join("index").join(CORE_WHEEL);
    let libs = dir.path().join("index").join(LIBS_WHEEL);
    zip_wheel(&rocm.core_tree, &core);
    zip_wheel(&rocm.libs_tree, &libs);
    StandIn {
        release_zip: release_zip(&rocm.wheel),
        core_wheel: fs::read(core).unwrap(),
        libs_wheel: fs::read(libs).unwrap(),
        rocm,
        dir,
    }
}

/// The GitHub release asset: a zip of the wheels under `temp-windows/`.
fn release_zip(wheel: &Path) -> Vec<u8> {
    let mut bytes = std::io::Cursor::new(Vec::new());
    let mut zip = zip::ZipWriter::new(&mut bytes);
    zip.start_file(
        format!("temp-windows/{WHEEL}"),
        zip::write::SimpleFileOptions::default(),
    )
    .unwrap();
    zip.write_all(&fs::read(wheel).unwrap()).unwrap();
    zip.finish().unwrap();
    bytes.into_inner()
}

/// Serves the stand-in's files at their real hosts' paths; `without_libs` leaves
/// `rocm_sdk_libraries_custom` out of the index.
fn serve(s: &StandIn, without_libs: bool) -> Server {
    let server = Server::start();
    server.serve(RELEASE, Arc::new(s.release_zip.clone()));
    server.serve(
        &format!("{INDEX}{CORE_WHEEL}"),
        Arc::new(s.core_wheel.clone()),
    );
    if !without_libs {
        server.serve(
            &format!("{INDEX}{LIBS_WHEEL}"),
            Arc::new(s.libs_wheel.clone()),
        );
    }
    server
}

fn build(scratch: &Scratch, server: &Server, extra: &[&str], env: &[(&str, &str)]) -> Run {
    let mirror = format!("{}/", server.base());
    let cache = scratch.path().join("cache");
    let mut args = vec![
        "--cache-dir",
        cache.to_str().unwrap(),
        "build",
        "--variant",
        "rocm",
        "--platform",
        "windows-x86_64",
        "--python",
        "3.12",
        "--mirror",
        &mirror,
    ];
    args.extend_from_slice(extra);
    common::xtask_with_env(scratch.path(), &args, env, &["ROCM_SDK_TARGET_FAMILY"])
}

/// The wheel's DLL folders, as CTranslate2's `__init__.py` adds them, below `site`.
fn dll_dirs(site: &Path) -> Vec<PathBuf> {
    vec![
        site.join("ctranslate2"),
        site.join(CORE_DEST),
        site.join(LIBS_DEST),
    ]
}

fn data_files(names: &std::collections::BTreeSet<String>) -> Vec<&str> {
    names
        .iter()
        .filter(|n| n.contains("/library/"))
        .map(|n| n.rsplit('/').next().unwrap())
        .collect()
}

#[test]
fn the_rocm_variant_is_built_from_the_stand_in_index_and_its_outputs_load_under_wine() {
    if !mingw::available(true) {
        return;
    }
    let s = stand_in();
    let server = serve(&s, false);
    let scratch = Scratch::new();

    // Unpinned inputs stop the build unless the user opts in.
    let run = build(&scratch, &server, &[], &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("are not pinned"), "{}", run.stderr);
    assert!(run.stderr.contains("--allow-unpinned"), "{}", run.stderr);

    let run = build(&scratch, &server, &["--allow-unpinned"], &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // The pins are recorded in the variant file, and the next build needs no opt-in.
    let variant = fs::read_to_string(scratch.path().join("variants/rocm.toml")).unwrap();
    assert_eq!(variant.matches("sha256 = ").count(), 3, "{variant}");
    assert!(
        run.stderr.contains("step `verify` did not run"),
        "a Windows wheel is not installed on Linux: {}",
        run.stderr
    );

    // 1. The fat wheel: the official wheel plus the closure and the targeted kernel data.
    let dist = scratch.path().join(DIST);
    let fat = dist.join(WHEEL);
    let names = zip_names(&fat);
    let mut expected = s.rocm.wheel_files.clone();
    // amd_comgr and hiprtc are loaded at run time: forced in by the variant.
    for dll in ["amd_comgr0702.dll", "amdhip64_7.dll", "hiprtc0702.dll"] {
        expected.insert(format!("{CORE_DEST}/{dll}"));
    }
    for dll in ["hipblas.dll", "rocblas.dll"] {
        expected.insert(format!("{LIBS_DEST}/{dll}"));
    }
    for data in [
        "Kernels.so-000-gfx1100.hsaco",
        "TensileLibrary_gfx1030.dat",
        "TensileLibrary_gfx1100.dat",
    ] {
        expected.insert(format!("{LIBS_DEST}/rocblas/library/{data}"));
    }
    for data in ["TensileLibrary_gfx1100.dat", "TensileLibrary_gfx1151.dat"] {
        expected.insert(format!("{LIBS_DEST}/hipblaslt/library/{data}"));
    }
    assert_eq!(
        names, expected,
        "gfx906/gfx942 kernels and decoys are left out"
    );
    assert_eq!(
        xtask::wheel::check_record(&fat).unwrap(),
        Vec::<String>::new()
    );

    // 2. The frozen-app layout and its PyInstaller `binaries`.
    let internal = dist.join("portable/_internal");
    for dll in ["amdhip64_7.dll", "amd_comgr0702.dll"] {
        assert!(internal.join(CORE_DEST).join(dll).is_file(), "{dll}");
    }
    assert!(internal.join(LIBS_DEST).join("hipblas.dll").is_file());
    let binaries = fs::read_to_string(dist.join("portable/binaries.json")).unwrap();
    assert!(
        binaries.contains("\"_internal/_rocm_sdk_core/bin/amdhip64_7.dll\""),
        "{binaries}"
    );

    // 3. The report: the minimum set, the package of each file, and the bytes saved.
    let report = read_report(&dist);
    let packages: Vec<&str> = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["package"].as_str().unwrap())
        .collect();
    assert!(packages.contains(&"rocm_sdk_core 7.2.0.dev0"), "{report}");
    assert!(
        packages.contains(&"rocm_sdk_libraries_custom 7.2.0.dev0"),
        "{report}"
    );
    let md = fs::read_to_string(dist.join("provenance.md")).unwrap();
    assert!(md.contains("saved"), "{md}");
    let sums = fs::read_to_string(dist.join("SHA256SUMS")).unwrap();
    assert!(sums.contains(WHEEL), "{sums}");

    // The fat wheel, unpacked as pip would, loads with only its own folders; so does the
    // frozen-app layout. No SDK is anywhere else.
    let site = s.dir.path().join("site");
    unzip(&fat, &site);
    let probe = mingw::build_probe(&s.dir.path().join("probe"));
    let prefix = mingw::Prefix::new();
    for root in [&site, &internal] {
        let dll = root.join("ctranslate2/ctranslate2.dll");
        let load = mingw::wine_load(prefix.path(), &probe, &dll, &dll_dirs(root));
        assert!(load.loaded, "{}: {}", root.display(), load.output);
    }

    // A second build downloads nothing and redoes nothing.
    let run = build(&scratch, &server, &[], &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("0 step(s) ran"), "{}", run.stderr);
    assert_eq!(server.hits(&format!("{INDEX}{CORE_WHEEL}")).len(), 1);

    // TheRock's target family narrows the kernel data.
    let run = build(
        &scratch,
        &server,
        &[],
        &[("ROCM_SDK_TARGET_FAMILY", "gfx110X-dgpu")],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("ROCM_SDK_TARGET_FAMILY"),
        "{}",
        run.stderr
    );
    assert_eq!(
        data_files(&zip_names(&fat)),
        [
            "TensileLibrary_gfx1100.dat",
            "Kernels.so-000-gfx1100.hsaco",
            "TensileLibrary_gfx1100.dat"
        ]
    );
}

#[test]
fn a_package_missing_from_the_index_is_named_with_the_index_and_the_fix() {
    if !mingw::available(false) {
        return;
    }
    let s = stand_in();
    let server = serve(&s, true);
    let scratch = Scratch::new();
    let run = build(&scratch, &server, &["--allow-unpinned"], &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    for needle in [
        "rocm-sdk-libraries-custom",
        "HTTP 404",
        "rocm_sdk_libraries_custom 7.2.0.dev0 from the package index https://repo.radeon.com/rocm/windows/rocm-rel-7.2/",
        "pip download --no-deps --index-url https://repo.radeon.com/rocm/windows/rocm-rel-7.2/ \"rocm_sdk_libraries_custom==7.2.0.dev0\"",
        "--sdk-dir DIR",
        "nothing was built",
    ] {
        assert!(
            run.stderr.contains(needle),
            "`{needle}` in:\n{}",
            run.stderr
        );
    }
    assert!(!scratch.path().join(DIST).exists(), "nothing half-built");
    // The inputs that were downloaded are pinned; the missing one is not.
    let variant = fs::read_to_string(scratch.path().join("variants/rocm.toml")).unwrap();
    assert_eq!(variant.matches("sha256 = ").count(), 2, "{variant}");
}

/// An installed SDK's layout: every DLL in `bin/`, the kernels in `bin/*/library`.
fn installed_sdk(s: &StandIn, dir: &Path) {
    fn copy_tree(from: &Path, to: &Path) {
        fs::create_dir_all(to).unwrap();
        for entry in fs::read_dir(from).unwrap().flatten() {
            let target = to.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                copy_tree(&entry.path(), &target);
            } else {
                fs::copy(entry.path(), target).unwrap();
            }
        }
    }
    copy_tree(&s.rocm.core_bin, &dir.join("bin"));
    copy_tree(&s.rocm.libs_bin, &dir.join("bin"));
}

#[test]
fn an_installed_sdk_stands_in_for_the_sdk_wheels_and_a_wrong_major_version_is_named() {
    if !mingw::available(false) {
        return;
    }
    let s = stand_in();
    // The index has only the official wheel: --sdk-dir must not need the SDK wheels.
    let server = Server::start();
    server.serve(RELEASE, Arc::new(s.release_zip.clone()));
    let scratch = Scratch::new();
    let sdk = s.dir.path().join("ROCm/7.1");
    installed_sdk(&s, &sdk);
    let sdk_arg = sdk.to_str().unwrap();

    let run = build(
        &scratch,
        &server,
        &["--allow-unpinned", "--sdk-dir", sdk_arg],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let names = zip_names(&scratch.path().join(DIST).join(WHEEL));
    for dll in ["amdhip64_7.dll", "hipblas.dll", "amd_comgr0702.dll"] {
        assert!(
            names.contains(&format!("{CORE_DEST}/{dll}")),
            "{dll} in {names:?}"
        );
    }
    assert!(
        names.contains(&format!(
            "{LIBS_DEST}/rocblas/library/TensileLibrary_gfx1030.dat"
        )),
        "{names:?}"
    );
    assert!(server.hits(&format!("{INDEX}{CORE_WHEEL}")).is_empty());

    // An SDK of another major version: the HIP runtime is amdhip64_6.dll.
    fs::rename(
        sdk.join("bin/amdhip64_7.dll"),
        sdk.join("bin/amdhip64_6.dll"),
    )
    .unwrap();
    fs::remove_dir_all(scratch.path().join(DIST)).unwrap();
    let run = build(&scratch, &server, &["--sdk-dir", sdk_arg], &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    for needle in [
        "amdhip64_7.dll  (imported by ",
        "ctranslate2.dll",
        "amdhip64_6.dll is there: another version of amdhip64_7.dll",
        "_rocm_sdk_core/bin is the package rocm_sdk_core 7.2.0.dev0, from the index https://repo.radeon.com/rocm/windows/rocm-rel-7.2/",
        "pip install --no-deps --target DIR",
    ] {
        assert!(
            run.stderr.contains(needle),
            "`{needle}` in:\n{}",
            run.stderr
        );
    }
    assert!(!scratch.path().join(DIST).exists(), "nothing half-built");
}
