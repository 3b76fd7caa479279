//! `xtask.exe` (the Windows build, cross-built with mingw-w64) driven under wine
//! over the cases the Linux suite drives. What wine cannot stand in for is said where it
//! matters (no Windows Python, no MSVC, no junctions in wine 8). The rocm build, fetch with
//! kill and resume, `bundle --wheel` of the official wheel and `release` also run under wine
//! in their own modules (rocm_variant.rs, fetch_pin.rs, bundle_real.rs, release.rs).

use crate::common;
use crate::needs_network;

use std::fs;
use std::path::Path;

use common::mingw::{self, Dll};
use common::windows_exe::{WinXtask, mixed_separators, verbatim_paths, win};
use common::{Run, Scratch, plan_args, repo_root};

/// No `\\?\` path and no path with both separators in what the Windows binary printed.
fn assert_no_verbatim(run: &Run) {
    for text in [&run.stdout, &run.stderr] {
        let found = verbatim_paths(text);
        assert!(found.is_empty(), "verbatim paths: {found:#?}");
        let mixed = mixed_separators(text);
        assert!(mixed.is_empty(), "mixed separators: {mixed:#?}");
    }
}

#[test]
fn plans_of_every_variant_are_the_linux_binarys_and_hold_no_verbatim_path() {
    let Some(wine) = WinXtask::new() else {
        return;
    };
    let root = repo_root();
    let unix = root.display().to_string();
    for variant in ["cpu", "cuda", "rocm", "rocm-gfx1010"] {
        let args = plan_args(variant, "windows-x86_64", "3.12", &["--json"]);
        let windows = wine.run(&root, &args, &[]);
        assert_eq!(windows.code, 0, "{variant}: {}", windows.stderr);
        assert_no_verbatim(&windows);
        let json: serde_json::Value = serde_json::from_str(&windows.stdout).unwrap();
        let shown_root = json["root"].as_str().unwrap().to_string();
        assert_eq!(
            shown_root,
            format!("Z:{unix}"),
            "{variant}: the root as given"
        );
        let linux = common::xtask(&args);
        assert_eq!(
            windows.stdout.replace(&shown_root, &unix),
            linux.stdout,
            "{variant}: the same plan apart from the root"
        );
        let text = wine.run(
            &root,
            &plan_args(variant, "windows-x86_64", "3.12", &[]),
            &[],
        );
        assert_eq!(text.code, 0, "{}", text.stderr);
        assert_no_verbatim(&text);
        assert!(
            text.stdout.contains(&format!("  root:  Z:{unix}\n")),
            "{}",
            text.stdout
        );
    }
}

/// `<drive_c>/Program Files/AMD/ROCm/<version>/bin` with `files` and rocBLAS kernels.
fn hip_sdk(drive_c: &Path, version: &str, files: &[&str], targets: &[&str]) {
    let bin = drive_c
        .join("Program Files/AMD/ROCm")
        .join(version)
        .join("bin");
    fs::create_dir_all(bin.join("rocblas/library")).unwrap();
    for f in files {
        fs::write(bin.join(f), "MZ").unwrap();
    }
    for t in targets {
        fs::write(
            bin.join(format!("rocblas/library/TensileLibrary_lazy_{t}.dat")),
            "k",
        )
        .unwrap();
    }
}

#[test]
fn doctor_finds_hip_sdk_6_2_in_program_files_distrusts_hip_path_and_reads_long_paths() {
    let Some(wine) = WinXtask::new() else {
        return;
    };
    let root = repo_root();
    // The first run makes the prefix (and its C: drive).
    assert_eq!(wine.run(&root, &["variants"], &[]).code, 0);
    let c = wine.drive_c();
    hip_sdk(
        &c,
        "6.2",
        &[
            "amdhip64_6.dll",
            "amd_comgr_2.dll",
            "hipblas.dll",
            "rocblas.dll",
        ],
        &["gfx1010", "gfx1030"],
    );
    hip_sdk(
        &c,
        "7.1",
        &["amdhip64_7.dll", "amd_comgr0701.dll", "hipblas.dll"],
        &["gfx1100"],
    );
    // The display driver's HIP runtime, where the driver installs it.
    mingw::build_versioned(
        &c.join("windows/system32"),
        "amdhip64_6.dll",
        [6, 4, 43482, 7],
    );
    let hip_path = [("HIP_PATH", r"C:\Program Files\AMD\ROCm\7.1\")];
    let run = wine.run(&root, &["doctor"], &hip_path);
    assert_no_verbatim(&run);
    for needle in [
        "  windows x86_64\n",
        r"  long paths: LongPathsEnabled is not set (HKLM\SYSTEM\CurrentControlSet\Control\FileSystem)",
        r"HIP SDK C:\Program Files\AMD\ROCm\6.2 (6.2)",
        "    runtime: amdhip64_6.dll\n    amd_comgr: amd_comgr_2.dll\n    rocBLAS kernels for: gfx1010, gfx1030",
        r"HIP SDK C:\Program Files\AMD\ROCm\7.1 (7.1)",
        "    rocBLAS kernels for: gfx1100",
        r"HIP_PATH = C:\Program Files\AMD\ROCm\7.1\",
        r"HIP runtime of the display driver: C:\windows\System32\amdhip64_6.dll (6.4.43482.7)",
    ] {
        assert!(
            run.stdout.contains(needle),
            "`{needle}` in:\n{}",
            run.stdout
        );
    }
    let json = wine.run(&root, &["doctor", "--json"], &hip_path);
    let facts: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(facts["facts"]["hip_installs"].as_array().unwrap().len(), 2);
    assert_eq!(facts["facts"]["long_paths"], false);

    // Long paths switched on, as the advice says (wine's own reg.exe).
    wine.enable_long_paths();
    let run = wine.run(&root, &["doctor"], &hip_path);
    assert!(
        run.stdout.contains("  long paths: LongPathsEnabled = 1 ("),
        "{}",
        run.stdout
    );
}

/// Builds that compile on Windows get, under wine, through fetch (the real pinned inputs, and
/// for rocm-gfx1010 the community rocBLAS `.7z` from a loopback server), unpack (the `.7z`
/// too) and, for rocm-gfx1010, the patch series with no `patch` program anywhere, to the
/// first thing wine lacks: a Windows Python (`py`) for the tools venv. (MSVC comes after it,
/// and the MSVC discovery is tested on a stand-in registry-less tree in sdk/msvc.rs.)
#[test]
fn cpu_and_rocm_gfx1010_builds_get_past_patch_to_the_missing_windows_python() {
    needs_network!(&["static.crates.io:443", "files.pythonhosted.org:443"]);
    let Some(wine) = WinXtask::new() else {
        return;
    };
    let scratch = Scratch::new();
    let cache = win(&repo_root().join("target/xtask/cache"));
    // The community rocBLAS the gfx1010 variant takes, from GitHub's path on a loopback
    // server (no digest is published: --allow-unpinned pins it in the scratch variant file).
    let dir = tempfile::tempdir().unwrap();
    let rocblas = mingw::build(
        &dir.path().join("dll"),
        &[Dll {
            name: "rocblas.dll",
            imports: &[],
            loads: &[],
        }],
    );
    let rdna1 = &common::community_rocblas::RDNA1;
    let Some(asset) = rdna1.write_7z(dir.path(), &rocblas[0]) else {
        return;
    };
    let server = common::server::Server::start();
    server.serve(
        &format!("{}{}", common::community_rocblas::ASSET_PATH, rdna1.name),
        std::sync::Arc::new(fs::read(&asset).unwrap()),
    );
    let mirror = format!("https://github.com/={}/github.com/", server.base());
    for variant in ["rocm-gfx1010", "cpu"] {
        let run = wine.run(
            scratch.path(),
            &[
                "--cache-dir",
                &cache,
                "build",
                "--variant",
                variant,
                "--platform",
                "windows-x86_64",
                "--python",
                "3.12",
                "--compiler-cache",
                "off",
                "--mirror",
                &mirror,
                "--allow-unpinned",
            ],
            &[],
        );
        assert_no_verbatim(&run);
        assert_eq!(run.code, 1, "{variant}: {}", run.stderr);
        let patch_done = run.stderr.contains("] patch — done");
        assert_eq!(
            patch_done,
            variant == "rocm-gfx1010",
            "{variant}: {}",
            run.stderr
        );
        for needle in [
            "error: step `venv` failed: `py` (Python 3.12) cannot be started",
            "the python.org installer, which provides the `py` launcher",
        ] {
            assert!(
                run.stderr.contains(needle),
                "{variant}: `{needle}` in {}",
                run.stderr
            );
        }
        assert!(!run.stderr.contains("cannot run `patch`"), "{}", run.stderr);
        assert!(!run.stderr.contains("\\.\\"), "`.` parts: {}", run.stderr);
    }
    let patched = scratch
        .path()
        .join("target/xtask/rocm-gfx1010/windows-x86_64/src/ctranslate2/src/cuda/primitives.cu");
    let text = fs::read_to_string(&patched).unwrap();
    assert!(text.contains("hipblasGemmEx_v2"), "the series was applied");
    // The community rocBLAS: fetched, pinned, unpacked from its folder inside the .7z.
    let unpacked = scratch
        .path()
        .join("target/xtask/rocm-gfx1010/windows-x86_64/deps/community-rocblas");
    assert!(unpacked.join("rocblas.dll").is_file());
    assert!(
        unpacked
            .join("library/TensileLibrary_lazy_gfx1010.dat")
            .is_file()
    );
    let variant = fs::read_to_string(scratch.path().join("variants/rocm-gfx1010.toml")).unwrap();
    let digest = ct2v_fetch::cache::sha256_file(&asset).unwrap().0;
    assert!(
        variant.contains(&format!("sha256 = \"{digest}\"")),
        "pinned: {variant}"
    );
    assert!(
        scratch
            .path()
            .join("target/xtask/rocm-gfx1010/windows-x86_64/src/ctranslate2/.ct2v-patches")
            .is_file()
    );
}

/// A Windows wheel: one real PE DLL (mingw-w64) and a RECORD, with `extra` members (name,
/// bytes) as an archive made elsewhere might hold.
fn windows_wheel(dir: &Path, extra: &[(&str, &[u8])]) -> std::path::PathBuf {
    let tree = dir.join("tree");
    let _ = fs::remove_dir_all(&tree);
    mingw::build(
        &tree.join("ctranslate2"),
        &[Dll {
            name: "ctranslate2.dll",
            imports: &[],
            loads: &[],
        }],
    );
    fs::write(tree.join("ctranslate2/__init__.py"), "").unwrap();
    common::wheel::ct2_dist_info(&tree, Some("cp312-cp312-win_amd64"));
    let out = dir
        .join("in")
        .join("ctranslate2-4.7.1-cp312-cp312-win_amd64.whl");
    common::wheel::zip_wheel(&tree, &out);
    if !extra.is_empty() {
        let file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&out)
            .unwrap();
        let mut zip = zip::ZipWriter::new_append(file).unwrap();
        for (name, bytes) in extra {
            zip.start_file(*name, zip::write::SimpleFileOptions::default())
                .unwrap();
            std::io::Write::write_all(&mut zip, bytes).unwrap();
        }
        zip.finish().unwrap();
    }
    out
}

fn bundle(wine: &WinXtask, wheel: &Path, out: &Path, extra: &[&str]) -> Run {
    let (wheel, out) = (win(wheel), win(out));
    let mut args = vec!["bundle", "--wheel", &wheel, "--out", &out];
    args.extend_from_slice(extra);
    wine.run(&repo_root(), &args, &[])
}

fn leftovers(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect()
}

#[test]
fn hostile_archive_members_and_dest_values_are_refused_by_the_windows_binary() {
    let Some(wine) = WinXtask::new() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let good = windows_wheel(dir.path(), &[]);
    let run = bundle(&wine, &good, &out, &[]);
    assert_eq!(run.code, 0, "a plain wheel bundles: {}", run.stderr);
    assert_no_verbatim(&run);
    fs::remove_dir_all(&out).unwrap();

    for (members, said) in [
        (&[("ctranslate2/CON", &b"x"[..])][..], "device name"),
        (&[("ctranslate2/AUX", b"x")], "device name"),
        (&[("ctranslate2/NUL", b"x")], "device name"),
        (&[("ctranslate2/COM1", b"x")], "device name"),
        (&[("ctranslate2/con.txt", b"x")], "device name"),
        (&[("ctranslate2/a.", b"x")], "ends with a dot or a space"),
        (&[("ctranslate2/a ", b"x")], "ends with a dot or a space"),
        (
            &[
                ("ctranslate2/Readme.txt", b"a"),
                ("ctranslate2/README.TXT", b"b"),
            ],
            "differs only in case from `ctranslate2/Readme.txt`",
        ),
        (
            &[("ctranslate2\\..\\..\\evil.txt", b"x")],
            "outside the archive",
        ),
    ] {
        let wheel = windows_wheel(dir.path(), members);
        let run = bundle(&wine, &wheel, &out, &[]);
        assert_ne!(run.code, 0, "{members:?}: {}", run.stderr);
        assert!(
            run.stderr.contains(said),
            "{members:?}: `{said}` in {}",
            run.stderr
        );
        assert!(!out.exists(), "{members:?}: nothing written");
        assert!(!dir.path().join("evil.txt").exists());
        assert_eq!(leftovers(dir.path()), Vec::<String>::new(), "{members:?}");
    }

    let libs = dir.path().join("libs");
    fs::create_dir_all(&libs).unwrap();
    for dest in ["CON", "x/NUL", "aux.txt", r"..\..\x", "C:x"] {
        let value = format!("{}={dest}", win(&libs));
        let run = bundle(&wine, &good, &out, &["--search", &value]);
        assert_eq!(run.code, 2, "{dest}: {}", run.stderr);
        assert!(run.stderr.contains("not allowed"), "{dest}: {}", run.stderr);
        assert!(!out.exists());
    }

    // `--out …\NUL` opens the null device on Windows: refused before any work.
    let nul = format!(r"{}\NUL", win(dir.path()));
    let run = wine.run(
        &repo_root(),
        &["bundle", "--wheel", &win(&good), "--out", &nul],
        &[],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("device name"), "{}", run.stderr);
    let run = wine.run(
        &repo_root(),
        &["release", "--from", &win(dir.path()), "--out", &nul],
        &[],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("--out") && run.stderr.contains("device name"),
        "{}",
        run.stderr
    );
}

/// Windows refuses to move a file or folder another process holds open without
/// FILE_SHARE_DELETE (wine 8 too: ERROR_SHARING_VIOLATION for a folder, ERROR_ACCESS_DENIED
/// for a file replaced). A bundle over an old output held open that way fails clearly, keeps
/// the old output whole, and leaves no staging folder.
#[test]
fn an_output_held_open_by_another_process_is_not_lost() {
    let Some(wine) = WinXtask::new() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let wheel = windows_wheel(dir.path(), &[]);
    assert_eq!(bundle(&wine, &wheel, &out, &[]).code, 0);
    let before = fs::read(out.join("provenance.json")).unwrap();
    let holder = build_holder(dir.path());
    let ready = dir.path().join("held");
    let mut child = wine
        .command_for(&holder)
        .arg(win(&out))
        .arg(win(&ready))
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !ready.exists() {
        assert!(
            started.elapsed().as_secs() < 60,
            "the holder never opened the file"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let run = bundle(&wine, &wheel, &out, &[]);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(&win(&out)),
        "names the output: {}",
        run.stderr
    );
    assert_eq!(
        fs::read(out.join("provenance.json")).unwrap(),
        before,
        "the old output is whole"
    );
    assert!(out.join("portable").is_dir());
    assert_eq!(leftovers(dir.path()), Vec::<String>::new());
}

/// A Windows program that opens its first argument (a file or a folder) as a terminal whose
/// current folder it is, or an Explorer window, does: readers and writers may share it, no
/// one may move or delete it. It creates its second argument as a sign, and waits.
fn build_holder(dir: &Path) -> std::path::PathBuf {
    let c = dir.join("holder.c");
    fs::write(
        &c,
        "#include <windows.h>\n\
         int wmain(int argc, wchar_t **argv) {\n\
           HANDLE h = CreateFileW(argv[1], GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL, OPEN_EXISTING,\n\
             FILE_FLAG_BACKUP_SEMANTICS, NULL);\n\
           if (h == INVALID_HANDLE_VALUE) return 2;\n\
           CloseHandle(CreateFileW(argv[2], GENERIC_WRITE, 0, NULL, CREATE_NEW, 0, NULL));\n\
           Sleep(120000);\n\
           return 0;\n\
         }\n",
    )
    .unwrap();
    let exe = dir.join("holder.exe");
    common::run_ok(
        std::process::Command::new("x86_64-w64-mingw32-gcc")
            .args(["-municode", "-O1", "-o"])
            .arg(&exe)
            .arg(&c),
    );
    exe
}

/// Defect 4: in a checkout whose path is long, with long paths off (wine's registry, as a
/// fresh Windows), `plan` warns and `build` stops before its first step, both naming the
/// deepest file (CUTLASS in CTranslate2's third_party) and the two fixes; with
/// `LongPathsEnabled = 1`, neither does.
#[test]
fn a_long_checkout_path_is_caught_before_the_build_starts() {
    needs_network!(&["static.crates.io:443", "files.pythonhosted.org:443"]);
    let Some(wine) = WinXtask::new() else {
        return;
    };
    // The source archive in the shared cache (what `plan` reads the names from).
    let fetch = common::xtask(&[
        "fetch",
        "--variant",
        "cpu",
        "--platform",
        "windows-x86_64",
        "--python",
        "3.12",
        "--no-wheels",
    ]);
    assert_eq!(fetch.code, 0, "{}", fetch.stderr);
    let scratch = Scratch::under(&"a-long-folder-name-".repeat(4));
    let cache = win(&repo_root().join("target/xtask/cache"));
    let args = |command: &'static str| {
        vec![
            "--cache-dir".to_string(),
            cache.clone(),
            command.to_string(),
            "--variant".into(),
            "cpu".into(),
            "--platform".into(),
            "windows-x86_64".into(),
            "--python".into(),
            "3.12".into(),
        ]
    };
    let run = |command| {
        let args = args(command);
        wine.run(
            scratch.path(),
            &args.iter().map(String::as_str).collect::<Vec<_>>(),
            &[],
        )
    };
    let plan = run("plan");
    assert_eq!(plan.code, 0, "{}", plan.stderr);
    let build = run("build");
    assert_eq!(build.code, 1, "{}", build.stderr);
    for text in [&plan.stderr, &build.stderr] {
        for needle in [
            r"\src\ctranslate2\third_party\cutlass\include\cutlass\conv\threadblock\depthwise_fprop",
            "characters, and Windows stops at 260 while long paths are off",
            r"reg add HKLM\SYSTEM\CurrentControlSet\Control\FileSystem /v LongPathsEnabled",
            "characters shorter",
        ] {
            assert!(text.contains(needle), "`{needle}` in:\n{text}");
        }
    }
    assert!(
        !build.stderr.contains("[1/"),
        "no step ran: {}",
        build.stderr
    );
    assert!(!scratch.path().join("target/xtask/cpu").exists());

    wine.enable_long_paths();
    let plan = run("plan");
    assert_eq!(plan.code, 0, "{}", plan.stderr);
    assert!(!plan.stderr.contains("LongPathsEnabled"), "{}", plan.stderr);
}
