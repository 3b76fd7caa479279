//! `cargo xtask build --variant rocm` end to end against a stand-in for AMD's and GitHub's
//! hosts: a loopback server with their URL layout (`--mirror http://127.0.0.1:PORT/` serves
//! `https://HOST/PATH` as `/HOST/PATH`), serving wheels made here with the real names and
//! folder layout, whose DLLs are real PE files (mingw-w64) with the real import graph. The
//! outputs are then loaded by a real Windows loader (wine) with no SDK anywhere else.
//!
//! The SDK and VC++ runtime wheels are pinned in variants/ (to published digests, and to
//! PyPI's file); the stand-in's wheels are other files, so each test works on a scratch copy
//! of variants/ whose pins are those of the wheels made here: the pins stay checked.

use crate::common;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::Scratch;
use common::mingw;
use common::rocm::{
    CORE_DEST, CORE_PIN, CORE_WHEEL, DIST, INDEX, KERNEL_BYTES, LIBS_DEST, LIBS_PIN, LIBS_WHEEL,
    MSVC, MSVC_PIN, RELEASE, ROCM_VERSION_FILE, StandIn, WHEEL, build, build_args, repin,
    scratch_for, serve, sha256, stand_in,
};
use common::server::Server;
use common::wheel::{read_report, unzip, zip_names};
use common::windows_exe::{WinXtask, win};

/// The wheel's DLL folders, as CTranslate2's `__init__.py` adds them, below `site`.
fn dll_dirs(site: &Path) -> Vec<PathBuf> {
    vec![
        site.join("ctranslate2"),
        site.join(CORE_DEST),
        site.join(LIBS_DEST),
    ]
}

/// The kernel data in a wheel, as paths below `_rocm_sdk_libraries_custom/bin/`.
fn data_files(names: &BTreeSet<String>) -> BTreeSet<String> {
    names
        .iter()
        .filter(|n| n.contains("/library/"))
        .map(|n| n.trim_start_matches(&format!("{LIBS_DEST}/")).to_string())
        .collect()
}

/// What the stand-in's kernel data should leave in a wheel built for `targets`: rocBLAS's
/// flat gfx1030 files and per-architecture sub-folders, hipBLASLt's sub-folders (none for
/// gfx1030 or gfx1102, which TheRock does not build it for), and the manifest.
fn expected_data(targets: &[&str]) -> BTreeSet<String> {
    let mut files = BTreeSet::from(["rocblas/library/TensileManifest.txt".to_string()]);
    for t in targets {
        if *t == "gfx1030" {
            files.insert("rocblas/library/TensileLibrary_lazy_gfx1030.dat".to_string());
            files.insert("rocblas/library/Kernels.so-000-gfx1030.hsaco".to_string());
            continue;
        }
        files.insert(format!(
            "rocblas/library/{t}/TensileLibrary_lazy_{t}.dat.zlib"
        ));
        files.insert(format!("rocblas/library/{t}/Kernels.so-000-{t}.co"));
        if *t != "gfx1102" {
            files.insert(format!("hipblaslt/library/{t}/TensileLibrary_{t}.dat.zlib"));
            files.insert(format!("hipblaslt/library/{t}/extop_{t}.co"));
        }
    }
    files
}

const ALL_TARGETS: [&str; 8] = common::rocm::WHEEL_TARGETS;

#[test]
fn the_rocm_variant_is_built_from_the_stand_in_index_and_its_outputs_load_under_wine() {
    if !mingw::available(true) {
        return;
    }
    let s = stand_in();
    let server = serve(&s, false);
    let scratch = scratch_for(&s);

    // The release zip has no published digest: unpinned, it stops the build unless the
    // user opts in.
    let run = build(&scratch, &server, &[], &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("are not pinned"), "{}", run.stderr);
    assert!(run.stderr.contains("--allow-unpinned"), "{}", run.stderr);

    let run = build(&scratch, &server, &["--allow-unpinned"], &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // The pin is recorded in the variant file, and the next build needs no opt-in.
    let variant = fs::read_to_string(scratch.path().join(ROCM_VERSION_FILE)).unwrap();
    // The source archive's, the release zip's and the two SDK wheels'.
    assert_eq!(variant.matches("sha256 = ").count(), 4, "{variant}");
    assert!(
        run.stderr.contains("step `verify` did not run"),
        "a Windows wheel is not installed on Linux: {}",
        run.stderr
    );

    // 1. The fat wheel: the official wheel plus the closure, the VC++ runtime it imports,
    //    and the targeted kernel data with its per-architecture sub-folders.
    let dist = scratch.path().join(DIST);
    let fat = dist.join(WHEEL);
    let names = zip_names(&fat);
    let mut expected = s.rocm.wheel_files.clone();
    // amd_comgr is loaded at run time: forced in by the variant; hiprtc is not needed.
    for dll in ["amd_comgr0702.dll", "amdhip64_7.dll"] {
        expected.insert(format!("{CORE_DEST}/{dll}"));
    }
    for dll in [
        "hipblas.dll",
        "rocblas.dll",
        "rocsolver.dll",
        "libhipblaslt.dll",
    ] {
        expected.insert(format!("{LIBS_DEST}/{dll}"));
    }
    expected.insert("ctranslate2/MSVCP140.dll".to_string());
    for data in expected_data(&ALL_TARGETS) {
        expected.insert(format!("{LIBS_DEST}/{data}"));
    }
    assert_eq!(
        names, expected,
        "gfx906/gfx942/gfx1103 kernels, hiprtc, hipsparse and decoys are left out"
    );
    assert_eq!(
        ct2v_bundle::wheel::check_record(&fat).unwrap(),
        Vec::<String>::new()
    );

    // 2. The frozen-app layout and its PyInstaller `binaries`.
    let internal = dist.join("portable/_internal");
    for dll in ["amdhip64_7.dll", "amd_comgr0702.dll"] {
        assert!(internal.join(CORE_DEST).join(dll).is_file(), "{dll}");
    }
    assert!(internal.join(LIBS_DEST).join("hipblas.dll").is_file());
    assert!(
        internal
            .join(LIBS_DEST)
            .join("rocblas/library/gfx1100/TensileLibrary_lazy_gfx1100.dat.zlib")
            .is_file()
    );
    let binaries = fs::read_to_string(dist.join("portable/binaries.json")).unwrap();
    assert!(
        binaries.contains("\"_internal/_rocm_sdk_core/bin/amdhip64_7.dll\""),
        "{binaries}"
    );
    assert!(
        binaries.contains("\"_rocm_sdk_libraries_custom/bin/rocblas/library/gfx1100\""),
        "a sub-folder's files go to that sub-folder: {binaries}"
    );

    // 3. The report: the minimum set, the package of each file, the bytes saved and the
    //    kernel bytes per target.
    let report = read_report(&dist);
    let packages: Vec<&str> = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["package"].as_str().unwrap())
        .collect();
    for package in [
        "rocm_sdk_core 7.2.0.dev0",
        "rocm_sdk_libraries_custom 7.2.0.dev0",
        "msvc_runtime 14.51.36231",
    ] {
        assert!(packages.contains(&package), "{package} in {report}");
    }
    let kernels = &report["kernel_bytes"];
    let per_file = KERNEL_BYTES as u64;
    assert!(
        kernels["gfx1100"].as_u64().unwrap() >= 4 * per_file,
        "{kernels}"
    );
    assert!(
        kernels["gfx1102"].as_u64().unwrap() < kernels["gfx1100"].as_u64().unwrap(),
        "no hipBLASLt kernels for gfx1102: {kernels}"
    );
    assert!(kernels.get("gfx1103").is_none(), "{kernels}");
    let md = fs::read_to_string(dist.join("provenance.md")).unwrap();
    assert!(md.contains("saved"), "{md}");
    assert!(md.contains("Kernel data per GPU target: gfx1030 "), "{md}");
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

    // TheRock's target family narrows the kernel data: gfx110X-dgpu is gfx1100, gfx1101
    // and gfx1102, not gfx1103 (gfx110X-igpu), though the SDK has gfx1103 kernels.
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
    let kept = data_files(&zip_names(&fat));
    assert_eq!(kept, expected_data(&["gfx1100", "gfx1101", "gfx1102"]));
    assert!(!kept.iter().any(|f| f.contains("gfx1103")), "{kept:?}");
}

#[test]
fn a_published_digest_that_the_served_file_does_not_match_is_said_plainly() {
    if !mingw::available(false) {
        return;
    }
    let s = stand_in();
    let server = serve(&s, false);
    // rocm_sdk_core pinned to its published digest, as checked in; the stand-in's file
    // differs from AMD's.
    let scratch = Scratch::new();
    repin(&scratch, LIBS_PIN, &s.libs_wheel, ROCM_VERSION_FILE);
    repin(&scratch, MSVC_PIN, &s.msvc_wheel, "variants/defaults.toml");
    let run = build(&scratch, &server, &["--allow-unpinned"], &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    for needle in [
        "the published digest and the file served differ",
        "https://repo.radeon.com/rocm/windows/rocm-rel-7.2/rocm_sdk_core-7.2.0.dev0-py3-none-win_amd64.whl",
        CORE_PIN.0,
        &sha256(&s.core_wheel),
    ] {
        assert!(
            run.stderr.contains(needle),
            "`{needle}` in:\n{}",
            run.stderr
        );
    }
    assert!(!scratch.path().join(DIST).exists(), "nothing built");
}

#[test]
fn a_package_missing_from_the_index_is_named_with_its_url_and_the_fix() {
    if !mingw::available(false) {
        return;
    }
    let s = stand_in();
    let server = serve(&s, true);
    let scratch = scratch_for(&s);
    let run = build(&scratch, &server, &["--allow-unpinned"], &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let url = format!("https:/{INDEX}{LIBS_WHEEL}");
    for needle in [
        "rocm-sdk-libraries-custom",
        "HTTP 404",
        &format!("the wheel rocm_sdk_libraries_custom 7.2.0.dev0, from {url}"),
        &format!("pip download --no-deps \"{url}\""),
        "--find-links https://repo.radeon.com/rocm/windows/rocm-rel-7.2/ \"rocm_sdk_libraries_custom==7.2.0.dev0\"",
        "--sdk-dir DIR",
    ] {
        assert!(
            run.stderr.contains(needle),
            "`{needle}` in:\n{}",
            run.stderr
        );
    }
    assert!(!run.stderr.contains("--index-url"), "{}", run.stderr);
    assert!(!scratch.path().join(DIST).exists(), "nothing half-built");
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
fn an_installed_sdk_stands_in_for_the_sdk_wheels_and_a_wrong_version_or_missing_kernels_are_named()
{
    if !mingw::available(false) {
        return;
    }
    let s = stand_in();
    // No SDK wheels served: --sdk-dir must not need them.
    let server = Server::start();
    server.serve(RELEASE, Arc::new(s.release_zip.clone()));
    server.serve(MSVC, Arc::new(s.msvc_wheel.clone()));
    let scratch = scratch_for(&s);
    let sdk = s.dir.path().join("ROCm/7.2");
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
            "{LIBS_DEST}/rocblas/library/gfx1101/TensileLibrary_lazy_gfx1101.dat.zlib"
        )),
        "{names:?}"
    );
    assert!(server.hits(&format!("{INDEX}{CORE_WHEEL}")).is_empty());

    // The kernels of one requested target are gone: the build stops, naming the target and
    // the library, and writes nothing.
    let gfx1101 = sdk.join("bin/rocblas/library/gfx1101");
    let aside = s.dir.path().join("gfx1101-aside");
    fs::rename(&gfx1101, &aside).unwrap();
    fs::remove_dir_all(scratch.path().join(DIST)).unwrap();
    let run = build(&scratch, &server, &["--sdk-dir", sdk_arg], &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    for needle in [
        "rocblas has no kernel files for the requested GPU target gfx1101",
        "would fail on a gfx1101 GPU",
    ] {
        assert!(
            run.stderr.contains(needle),
            "`{needle}` in:\n{}",
            run.stderr
        );
    }
    assert!(!scratch.path().join(DIST).exists(), "nothing half-built");
    // Without gfx1101 among the targets, the same SDK builds.
    let run = build(
        &scratch,
        &server,
        &["--sdk-dir", sdk_arg, "--gpu-targets", "gfx1100,gfx1201"],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    fs::rename(&aside, &gfx1101).unwrap();
    fs::remove_dir_all(scratch.path().join(DIST)).unwrap();

    // HIP SDK 7.1's layout, told by what it ships: libhipblas.dll, amd_comgr0701.dll.
    let bin = sdk.join("bin");
    fs::rename(bin.join("hipblas.dll"), bin.join("libhipblas.dll")).unwrap();
    let run = build(&scratch, &server, &["--sdk-dir", sdk_arg], &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    for needle in [
        "hipblas.dll  (imported by ctranslate2.dll)",
        "libhipblas.dll is there: another version of hipblas.dll",
        "HIP SDK 7.1 ships libhipblas.dll",
    ] {
        assert!(
            run.stderr.contains(needle),
            "`{needle}` in:\n{}",
            run.stderr
        );
    }
    fs::rename(bin.join("libhipblas.dll"), bin.join("hipblas.dll")).unwrap();
    fs::rename(bin.join("amd_comgr0702.dll"), bin.join("amd_comgr0701.dll")).unwrap();
    let run = build(&scratch, &server, &["--sdk-dir", sdk_arg], &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    for needle in [
        "forced library pattern `amd_comgr0702.dll` matches no file",
        "amd_comgr0701.dll is there: another version of amd_comgr0702.dll",
    ] {
        assert!(
            run.stderr.contains(needle),
            "`{needle}` in:\n{}",
            run.stderr
        );
    }
    fs::rename(bin.join("amd_comgr0701.dll"), bin.join("amd_comgr0702.dll")).unwrap();

    // An SDK of another major version: the HIP runtime is amdhip64_6.dll.
    fs::rename(bin.join("amdhip64_7.dll"), bin.join("amdhip64_6.dll")).unwrap();
    let run = build(&scratch, &server, &["--sdk-dir", sdk_arg], &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    for needle in [
        "amdhip64_7.dll  (imported by ",
        "ctranslate2.dll",
        "amdhip64_6.dll is there: another version of amdhip64_7.dll",
        "_rocm_sdk_core/bin is the package rocm_sdk_core 7.2.0.dev0, from https://repo.radeon.com/rocm/windows/rocm-rel-7.2/rocm_sdk_core-7.2.0.dev0-py3-none-win_amd64.whl",
        "pip install --no-deps --target DIR https://repo.radeon.com/",
    ] {
        assert!(
            run.stderr.contains(needle),
            "`{needle}` in:\n{}",
            run.stderr
        );
    }
    assert!(!scratch.path().join(DIST).exists(), "nothing half-built");
}

/// `xtask.exe` under wine builds the rocm variant from the same stand-in into the
/// same bytes as the Linux binary (fat wheel, portable folder, reports). It stops where the
/// Windows build goes on to the verify step, which needs a Windows Python (`py`) that wine
/// does not have; the Linux binary skips that step.
#[test]
fn the_windows_binary_under_wine_builds_the_same_bytes_as_the_linux_binary() {
    let Some(wine) = WinXtask::new() else {
        return;
    };
    let s = stand_in();
    let server = serve(&s, false);
    let (linux, windows) = (scratch_for(&s), scratch_for(&s));
    let run = build(&linux, &server, &["--allow-unpinned"], &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);

    let mirror = format!("{}/", server.base());
    let cache = win(&windows.path().join("cache"));
    let args = build_args(&cache, &mirror, &["--allow-unpinned"]);
    let run = wine.run(windows.path(), &args, &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("] bundle — done"), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("error: step `verify` failed: `py` (Python 3.12) cannot be started"),
        "{}",
        run.stderr
    );
    assert!(
        common::windows_exe::verbatim_paths(&run.stderr).is_empty()
            && common::windows_exe::mixed_separators(&run.stderr).is_empty(),
        "{}",
        run.stderr
    );

    let (ours, theirs) = (linux.path().join(DIST), windows.path().join(DIST));
    let compared: BTreeSet<String> = common::wheel::output_files(&ours)
        .into_iter()
        .filter(|f| !["SHA256SUMS", "build-info.json"].contains(&f.as_str()))
        .collect();
    assert!(compared.contains(WHEEL) && compared.contains("provenance.json"));
    assert!(
        compared
            .iter()
            .any(|f| f.starts_with("portable/_internal/"))
    );
    assert_eq!(
        common::wheel::output_files(&theirs),
        compared,
        "the same files (the Windows build has not reached SHA256SUMS and build-info.json)"
    );
    for file in &compared {
        let (a, b) = (
            fs::read(ours.join(file)).unwrap(),
            fs::read(theirs.join(file)).unwrap(),
        );
        if a != b {
            let keep = Path::new(env!("CARGO_TARGET_TMPDIR")).join("windows-vs-linux");
            fs::create_dir_all(&keep).unwrap();
            fs::write(keep.join("linux"), &a).unwrap();
            fs::write(keep.join("windows"), &b).unwrap();
            panic!(
                "{file} differs between the Linux and the Windows binary (both kept in {})",
                keep.display()
            );
        }
        if file.ends_with(".json") || file.ends_with(".md") {
            let text = String::from_utf8_lossy(&b);
            assert!(
                common::windows_exe::verbatim_paths(&text).is_empty() && !text.contains("Z:"),
                "{file} names a host path: {text}"
            );
        }
    }
}
