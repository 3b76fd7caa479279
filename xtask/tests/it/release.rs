//! `release` and `verify-release` on builds laid out as `build` leaves them (a tiny wheel
//! and a provenance report per entry), in a scratch checkout.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};

use common::command_args;
use common::windows_exe::{WinXtask, win};
use common::{Run, Scratch, assert_exit};

/// Puts a built-looking dist folder for `cpu linux-x86_64 py<python>` into the scratch.
pub(crate) fn fake_build(scratch: &Scratch, python: &str) -> PathBuf {
    fake_build_tagged(scratch, python, "manylinux_2_28_x86_64")
}

/// The same, with the fat wheel tagged `platform`.
fn fake_build_tagged(scratch: &Scratch, python: &str, platform: &str) -> PathBuf {
    let tag = format!("cp{}", python.replace('.', ""));
    let dist = scratch
        .path()
        .join(format!("target/xtask/cpu/linux-x86_64/dist/py{python}"));
    let tree = tempfile::tempdir().unwrap();
    fs::create_dir_all(tree.path().join("ctranslate2")).unwrap();
    fs::write(tree.path().join("ctranslate2/__init__.py"), "x = 1\n").unwrap();
    fs::write(
        tree.path().join("ctranslate2/libctranslate2.so.4"),
        b"\x7fELF fake",
    )
    .unwrap();
    let info = tree.path().join("ctranslate2-4.7.1.dist-info");
    fs::create_dir_all(&info).unwrap();
    fs::write(info.join("METADATA"), "Name: ctranslate2\nVersion: 4.7.1\n").unwrap();
    fs::write(info.join("WHEEL"), "Wheel-Version: 1.0\n").unwrap();
    let wheel = dist.join(format!("ctranslate2-4.7.1-{tag}-{tag}-{platform}.whl"));
    ct2v_bundle::wheel::write(tree.path(), &wheel).unwrap();
    fs::write(
        dist.join("provenance.json"),
        r#"{"files": [{"path": "ctranslate2/libgomp.so.1", "package": "the C++ compiler's runtime", "sha256": "ab", "size": 1, "reason": "x"}]}"#,
    )
    .unwrap();
    fs::write(dist.join("provenance.md"), "# report\n").unwrap();
    fs::write(
        dist.join("build-info.json"),
        r#"{"compiler": "c++ (Debian 12.2.0-14) 12.2.0", "cmake": "cmake version 3.31.10"}"#,
    )
    .unwrap();
    let portable = dist.join("portable/_internal/ctranslate2");
    fs::create_dir_all(&portable).unwrap();
    fs::write(portable.join("libctranslate2.so.4"), b"\x7fELF fake").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let so = portable.join("libctranslate2.so.4");
        fs::set_permissions(&so, fs::Permissions::from_mode(0o755)).unwrap();
    }
    fs::write(dist.join("portable/binaries.json"), "[]").unwrap();
    wheel
}

pub(crate) fn release(scratch: &Scratch, out: &Path, pythons: &str) -> Run {
    release_with(scratch, out, pythons, &[])
}

fn release_with(scratch: &Scratch, out: &Path, pythons: &str, extra: &[&str]) -> Run {
    let out = out.to_str().unwrap();
    scratch.run(&command_args::release(
        "cpu",
        "linux-x86_64",
        pythons,
        out,
        extra,
    ))
}

pub(crate) fn run_verify_release(scratch: &Scratch, out: &Path) -> Run {
    scratch.run(&["verify-release", out.to_str().unwrap()])
}

#[test]
fn a_release_is_complete_checkable_and_never_replaced() {
    let scratch = Scratch::new();
    fake_build(&scratch, "3.11");
    fake_build(&scratch, "3.12");
    let out = scratch.path().join("target/dist/4.7.1");
    let run = release(&scratch, &out, "3.11,3.12");
    assert_eq!(run.code, 0, "{}", run.stderr);
    // Only what was asked for is said: a cpu release says nothing of the other variants.
    assert!(!run.stderr.contains("rocm-gfx1010"), "{}", run.stderr);

    let files = common::wheel::files_below(&out);
    for name in [
        "SHA256SUMS",
        "manifest.json",
        "RELEASE_NOTES.md",
        "ctranslate2-4.7.1+cpu-cp311-cp311-manylinux_2_28_x86_64.whl",
        "ctranslate2-4.7.1+cpu-cp312-cp312-manylinux_2_28_x86_64.whl",
        "cpu-linux-x86_64-py3.12-provenance.json",
        "cpu-linux-x86_64-py3.12-provenance.md",
        "cpu-linux-x86_64-py3.12-portable.zip",
    ] {
        assert!(files.contains(name), "{name} in {files:?}");
    }
    // The same builds released again give byte-identical files (sorted zip entries, fixed
    // times and modes).
    let second = scratch.path().join("target/dist/second");
    let run = release(&scratch, &second, "3.11,3.12");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        fs::read(out.join("SHA256SUMS")).unwrap(),
        fs::read(second.join("SHA256SUMS")).unwrap()
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["schema_version"], 1);
    let wheel = manifest["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["path"] == "ctranslate2-4.7.1+cpu-cp312-cp312-manylinux_2_28_x86_64.whl")
        .unwrap();
    assert_eq!(wheel["python"], "3.12");
    assert_eq!(wheel["inputs"][0]["name"], "ctranslate2-source");
    assert_eq!(wheel["bundled"][0]["path"], "ctranslate2/libgomp.so.1");
    assert_eq!(wheel["toolchain"]["cmake"], "cmake version 3.31.10");
    let notes = fs::read_to_string(out.join("RELEASE_NOTES.md")).unwrap();
    assert!(
        notes.contains("## `cpu`") && notes.contains("pip install"),
        "{notes}"
    );
    assert!(notes.contains("What users need: nothing else"), "{notes}");

    if common::installed("sha256sum") {
        let check = std::process::Command::new("sha256sum")
            .args(["-c", "--strict", "SHA256SUMS"])
            .current_dir(&out)
            .output()
            .unwrap();
        assert!(
            check.status.success(),
            "{}",
            String::from_utf8_lossy(&check.stdout)
        );
    }
    let ok = run_verify_release(&scratch, &out);
    assert_eq!(ok.code, 0, "{}", ok.stderr);

    // A second release into the same folder is refused and changes nothing.
    let before = fs::read(out.join("SHA256SUMS")).unwrap();
    let again = release(&scratch, &out, "3.11,3.12");
    assert_eq!(again.code, 2);
    assert!(
        again.stderr.contains("releases are never replaced"),
        "{}",
        again.stderr
    );
    assert_eq!(fs::read(out.join("SHA256SUMS")).unwrap(), before);

    // One changed byte is caught, naming the file.
    let target = out.join("cpu-linux-x86_64-py3.12-provenance.md");
    fs::write(&target, "# tampered\n").unwrap();
    let bad = run_verify_release(&scratch, &out);
    assert_exit(&bad, 1, &["cpu-linux-x86_64-py3.12-provenance.md: sha256"]);
}

#[test]
fn missing_builds_and_bad_wheels_stop_the_release_before_anything_is_written() {
    let scratch = Scratch::new();
    fake_build(&scratch, "3.12");
    let out = scratch.path().join("target/dist/4.7.1");
    let run = release(&scratch, &out, "3.11,3.12");
    assert_exit(
        &run,
        1,
        &[
            "1 matrix entry has no artifacts",
            "cpu linux-x86_64 py3.11",
            "cargo xtask build --variant cpu",
        ],
    );
    assert!(!out.exists());

    // A wheel whose RECORD lies about a file.
    let wheel = fake_build(&scratch, "3.11");
    let tampered = tempfile::tempdir().unwrap();
    common::wheel::unzip(&wheel, tampered.path());
    fs::write(tampered.path().join("ctranslate2/__init__.py"), "x = 2\n").unwrap();
    let record = tampered.path().join("ctranslate2-4.7.1.dist-info/RECORD");
    let text = fs::read_to_string(&record).unwrap();
    fs::remove_file(&wheel).unwrap();
    // Zip it again with the old RECORD (not rewritten).
    let mut zip = zip::ZipWriter::new(fs::File::create(&wheel).unwrap());
    for name in common::wheel::files_below(tampered.path()) {
        zip.start_file(name.as_str(), zip::write::SimpleFileOptions::default())
            .unwrap();
        let data = if name.ends_with("RECORD") {
            text.clone().into_bytes()
        } else {
            fs::read(tampered.path().join(&name)).unwrap()
        };
        std::io::Write::write_all(&mut zip, &data).unwrap();
    }
    zip.finish().unwrap();
    let run = release(&scratch, &out, "3.11,3.12");
    assert_exit(&run, 1, &["RECORD does not match"]);
    assert!(!out.exists(), "nothing half-written");
}

/// An entry's folder holding a second wheel (a left-over older build, a copy) is bad input
/// named with both files, not a silent pick in directory order; nothing is written.
#[test]
fn two_wheels_for_one_entry_are_refused_with_both_named() {
    let scratch = Scratch::new();
    let wheel = fake_build(&scratch, "3.12");
    let second = wheel.with_file_name("ctranslate2-4.7.0-cp312-cp312-manylinux_2_28_x86_64.whl");
    fs::copy(&wheel, &second).unwrap();
    let out = scratch.path().join("target/dist/4.7.1");
    let run = release(&scratch, &out, "3.12");
    assert_eq!(run.code, 2, "{}", run.stderr);
    for needle in [
        "cpu linux-x86_64 py3.12 has 2 wheels, where a build leaves one",
        &wheel.display().to_string(),
        &second.display().to_string(),
        "remove the ones that are not this entry's build",
    ] {
        assert!(run.stderr.contains(needle), "`{needle}` in {}", run.stderr);
    }
    assert!(!out.exists(), "nothing written");
    assert!(wheel.is_file() && second.is_file(), "nothing deleted");
}

#[test]
fn linux_tagged_wheels_are_refused_unless_asked_and_zips_keep_exec_bits() {
    let scratch = Scratch::new();
    fake_build_tagged(&scratch, "3.12", "linux_x86_64");
    let out = scratch.path().join("target/dist/linux");
    let refused = release(&scratch, &out, "3.12");
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains("tagged linux_x86_64, not manylinux")
            && refused.stderr.contains("--allow-linux-tag"),
        "{}",
        refused.stderr
    );
    assert!(!out.exists(), "nothing written");

    let run = release_with(&scratch, &out, "3.12", &["--allow-linux-tag"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let zip = out.join("cpu-linux-x86_64-py3.12-portable.zip");
    let mut archive = zip::ZipArchive::new(fs::File::open(&zip).unwrap()).unwrap();
    let mode = |archive: &mut zip::ZipArchive<fs::File>, name: &str| {
        archive.by_name(name).unwrap().unix_mode().unwrap() & 0o777
    };
    assert_eq!(
        mode(&mut archive, "_internal/ctranslate2/libctranslate2.so.4"),
        0o755
    );
    assert_eq!(mode(&mut archive, "binaries.json"), 0o644);
    // The tool users have agrees: `unzip -Z` lists the shared library as -rwxr-xr-x.
    if common::installed("unzip") {
        let listing = std::process::Command::new("unzip")
            .arg("-Z")
            .arg(&zip)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&listing.stdout);
        let line = text
            .lines()
            .find(|l| l.ends_with("libctranslate2.so.4"))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(line.starts_with("-rwxr-xr-x"), "{text}");
    } else {
        eprintln!("unzip not installed: checked the zip's modes with the zip crate only");
    }
}

/// A symlink in an artifact folder is refused with its path, never followed.
#[test]
fn symlinks_in_artifact_folders_are_refused_with_their_path() {
    for (label, target) in [("file", "/etc/passwd"), ("folder", "/etc")] {
        let scratch = Scratch::new();
        let wheel = fake_build(&scratch, "3.11");
        let link = wheel
            .parent()
            .unwrap()
            .join("portable/_internal/ctranslate2/evil");
        std::os::unix::fs::symlink(target, &link).unwrap();
        let out = scratch.path().join("target/dist/4.7.1");
        let run = release(&scratch, &out, "3.11");
        assert_eq!(run.code, 1, "{label}: {}", run.stderr);
        assert!(run.stderr.contains("symlink"), "{label}: {}", run.stderr);
        assert!(run.stderr.contains("evil"), "{label}: {}", run.stderr);
        assert!(!out.exists(), "{label}: nothing written");
    }
}

/// Verify-release hashes only in-tree regular files named in SHA256SUMS, and
/// reads `sha256sum -b` lines (`<hex> *<name>`).
#[test]
fn verify_release_hashes_only_files_inside_the_release() {
    let scratch = Scratch::new();
    fake_build(&scratch, "3.11");
    let out = scratch.path().join("target/dist/4.7.1");
    assert_eq!(release(&scratch, &out, "3.11").code, 0);
    let sums_path = out.join("SHA256SUMS");
    let sums = fs::read_to_string(&sums_path).unwrap();
    // Binary-mode lines, as `sha256sum -b` writes them, are fine.
    let binary: String = sums
        .lines()
        .map(|l| format!("{}\n", l.replacen("  ", " *", 1)))
        .collect();
    fs::write(&sums_path, &binary).unwrap();
    let run = run_verify_release(&scratch, &out);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // Absolute paths, `..` and symlinks named in SHA256SUMS are problems, never read.
    std::os::unix::fs::symlink("/etc/passwd", out.join("link")).unwrap();
    let zero = "0".repeat(64);
    let mut hostile = binary.clone();
    for name in ["/etc/passwd", "../../../etc/passwd", "link"] {
        hostile.push_str(&format!("{zero}  {name}\n"));
    }
    fs::write(&sums_path, &hostile).unwrap();
    let run = run_verify_release(&scratch, &out);
    assert_eq!(run.code, 1, "{}", run.stderr);
    for needle in [
        "/etc/passwd: not a path inside",
        "../../../etc/passwd: not a path inside",
        "link: a symlink",
    ] {
        assert!(
            run.stderr.contains(needle),
            "`{needle}` not in {}",
            run.stderr
        );
    }
    assert!(
        !run.stderr.contains("sha256 "),
        "nothing outside was hashed: {}",
        run.stderr
    );
}

/// A `.release-*` staging folder left by a killed run is removed by the next.
#[test]
fn a_killed_release_staging_folder_is_removed_by_the_next_release() {
    let scratch = Scratch::new();
    fake_build(&scratch, "3.11");
    let dist = scratch.path().join("target/dist");
    let stale = dist.join(".release-999999999-k1ll3d");
    fs::create_dir_all(stale.join("cpu")).unwrap();
    ct2v_support::staging::mark(&stale).unwrap();
    let lookalike = dist.join(".release-999999998-notmine");
    fs::create_dir_all(&lookalike).unwrap();
    let run = release(&scratch, &dist.join("4.7.1"), "3.11");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!stale.exists(), "stale staging folder removed");
    assert!(
        run.stderr.contains(".release-999999999-k1ll3d"),
        "{}",
        run.stderr
    );
    assert!(lookalike.exists(), "no marker: not ours");
    assert!(
        !dist
            .join("4.7.1")
            .join(ct2v_support::staging::MARKER)
            .exists(),
        "the marker is not published"
    );
}

/// `release` and `verify-release` run by `xtask.exe` under wine give the bytes the
/// Linux binary gives (manifest, notes, sums, zips, wheels), and catch the same tampering.
#[test]
fn the_windows_binary_releases_the_same_bytes_and_verifies_them() {
    let Some(wine) = WinXtask::new() else {
        return;
    };
    let scratch = Scratch::new();
    fake_build(&scratch, "3.12");
    let linux = scratch.path().join("target/dist/linux");
    assert_eq!(release(&scratch, &linux, "3.12").code, 0);
    let windows = scratch.path().join("target/dist/windows");
    let out = win(&windows);
    let args = command_args::release_cpu(&out, "3.12", &[]);
    let run = wine.run(scratch.path(), &args, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let files = common::wheel::files_below(&linux);
    assert_eq!(common::wheel::files_below(&windows), files);
    for file in &files {
        assert!(
            fs::read(linux.join(file)).unwrap() == fs::read(windows.join(file)).unwrap(),
            "{file} differs between the Linux and the Windows binary:\n{}\n{}",
            String::from_utf8_lossy(&fs::read(linux.join(file)).unwrap()),
            String::from_utf8_lossy(&fs::read(windows.join(file)).unwrap())
        );
    }
    let check = wine.run(scratch.path(), &["verify-release", &win(&windows)], &[]);
    assert_eq!(check.code, 0, "{}", check.stderr);
    fs::write(
        windows.join("cpu-linux-x86_64-py3.12-provenance.md"),
        "# tampered\n",
    )
    .unwrap();
    let bad = wine.run(scratch.path(), &["verify-release", &win(&windows)], &[]);
    assert_exit(&bad, 1, &["cpu-linux-x86_64-py3.12-provenance.md: sha256"]);
}

/// A built-looking dist folder for one matrix entry (its slot, platform and Python), the wheel
/// tagged for the platform; cuda's build-info names the CUDA 12.8 it was built with.
pub(crate) fn fake_entry(scratch: &Scratch, entry: &serde_json::Value) {
    let (slot, platform, python) = (
        entry["slot"].as_str().unwrap(),
        entry["platform"].as_str().unwrap(),
        entry["python"].as_str().unwrap(),
    );
    let tag = format!("cp{}", python.replace('.', ""));
    let dist = scratch
        .path()
        .join(format!("target/xtask/{slot}/{platform}/dist/py{python}"));
    let tree = tempfile::tempdir().unwrap();
    fs::create_dir_all(tree.path().join("ctranslate2")).unwrap();
    fs::write(
        tree.path().join("ctranslate2/__init__.py"),
        format!("variant = {slot:?}\n"),
    )
    .unwrap();
    let info = tree.path().join("ctranslate2-4.7.1.dist-info");
    fs::create_dir_all(&info).unwrap();
    fs::write(
        info.join("METADATA"),
        "Metadata-Version: 2.1\nName: ctranslate2\nVersion: 4.7.1\n",
    )
    .unwrap();
    fs::write(
        info.join("WHEEL"),
        format!("Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: {tag}-{tag}-x\n"),
    )
    .unwrap();
    let platform_tag = if platform.starts_with("windows") {
        "win_amd64"
    } else {
        "manylinux_2_28_x86_64"
    };
    let wheel = dist.join(format!("ctranslate2-4.7.1-{tag}-{tag}-{platform_tag}.whl"));
    ct2v_bundle::wheel::write(tree.path(), &wheel).unwrap();
    fs::write(dist.join("provenance.json"), r#"{"files": []}"#).unwrap();
    fs::write(dist.join("provenance.md"), "# report\n").unwrap();
    let sdk = if slot == "cuda" {
        r#"{"version": "12.8", "root": "C:/CUDA", "found_by": "CUDA_PATH"}"#
    } else {
        "null"
    };
    fs::write(dist.join("build-info.json"), format!(r#"{{"sdk": {sdk}}}"#)).unwrap();
    fs::create_dir_all(dist.join("portable/_internal")).unwrap();
    fs::write(dist.join("portable/binaries.json"), "[]").unwrap();
}

/// Every variant of both platforms released at once publishes one flat folder
/// with no repeated name (GitHub refuses a second asset of a name), a SHA256SUMS that
/// `sha256sum -c` checks in a flat folder of downloads, and a pip index per variant from
/// which pip installs (file:// and HTTP) and resolves for Windows, by local version.
#[test]
fn every_variant_publishes_unique_names_a_flat_sha256sums_and_a_pip_index() {
    let scratch = Scratch::new();
    let all = ["--include-self-hosted", "--include-unpinned"];
    let matrix = scratch.run(&["matrix", "--json", all[0], all[1]]);
    assert_eq!(matrix.code, 0, "{}", matrix.stderr);
    let matrix: serde_json::Value = serde_json::from_str(&matrix.stdout).unwrap();
    let entries: Vec<&serde_json::Value> = matrix["include"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["python"] == "3.12")
        .collect();
    for entry in &entries {
        fake_entry(&scratch, entry);
    }
    let out = scratch.path().join("target/dist/4.7.1");
    let run = scratch.run(&[
        "release",
        "--pythons",
        "3.12",
        "--out",
        out.to_str().unwrap(),
        all[0],
        all[1],
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);

    // What the publish step uploads: the release folder's files, not its whl/ pages.
    let workflow =
        fs::read_to_string(common::repo_root().join(".github/workflows/release.yml")).unwrap();
    assert!(
        workflow.contains("-maxdepth 1 -type f"),
        "release.yml uploads the top-level files:\n{workflow}"
    );
    let mut published: Vec<String> = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    published.sort();
    let mut unique = published.clone();
    unique.dedup();
    assert_eq!(published, unique);
    // Four files per entry (wheel, portable zip, two reports), and the five of the release
    // (manifest, notes, SHA256SUMS, variants.json, the selector's wheel).
    assert_eq!(published.len(), entries.len() * 4 + 5, "{published:#?}");
    assert!(
        published.iter().any(|n| n == "variants.json"),
        "{published:#?}"
    );
    for label in ["+cpu-", "+cu12-", "+rocm72-", "+gfx1010-"] {
        assert!(
            published
                .iter()
                .any(|n| n.contains(label) && n.ends_with("win_amd64.whl")),
            "a Windows wheel labelled {label} in {published:#?}"
        );
    }

    // SHA256SUMS names the files as published: it checks in a flat folder of downloads.
    let downloads = tempfile::tempdir().unwrap();
    for name in &published {
        fs::copy(out.join(name), downloads.path().join(name)).unwrap();
    }
    fs::copy(out.join("SHA256SUMS"), downloads.path().join("SHA256SUMS")).unwrap();
    if !common::skip::missing("sha256sum", "apt-get install coreutils") {
        let check = std::process::Command::new("sha256sum")
            .args(["-c", "--strict", "SHA256SUMS"])
            .current_dir(downloads.path())
            .output()
            .unwrap();
        assert!(
            check.status.success(),
            "{}",
            common::stdout_and_stderr(&check)
        );
    }
    assert_eq!(run_verify_release(&scratch, &out).code, 0);

    pip_installs_from_the_index(&out);
}

/// pip (the host's, any Python) against the generated index.
fn pip_installs_from_the_index(out: &Path) {
    let pip = |args: &[&str]| {
        std::process::Command::new("python3")
            .args(["-m", "pip", "--disable-pip-version-check"])
            .args(args)
            .env("PIP_FIND_LINKS", "")
            .env("PIP_NO_INDEX", "")
            .output()
            .unwrap()
    };
    let target_args = |target: &Path| {
        vec![
            "install".to_string(),
            "--no-deps".into(),
            "--only-binary=:all:".into(),
            "--python-version".into(),
            "3.12".into(),
            "--platform".into(),
            "manylinux_2_28_x86_64".into(),
            "--target".into(),
            target.display().to_string(),
        ]
    };
    let import = |target: &Path| {
        let out = std::process::Command::new("python3")
            .args(["-c", "import ctranslate2, importlib.metadata as m; print(ctranslate2.variant, m.version('ctranslate2'))"])
            .env("PYTHONPATH", target)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };

    // file://, by local version: into a fresh folder, from the cpu index.
    let install_from_cpu_index = |requirement: &str| {
        let target = tempfile::tempdir().unwrap();
        let mut args = target_args(target.path());
        args.extend([
            "--index-url".into(),
            format!("file://{}/whl/cpu", out.display()),
            requirement.to_string(),
        ]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let installed = pip(&args);
        assert!(
            installed.status.success(),
            "{}",
            common::stdout_and_stderr(&installed)
        );
        target
    };
    let target = install_from_cpu_index("ctranslate2==4.7.1+cpu");
    assert_eq!(import(target.path()), "cpu 4.7.1+cpu");

    // The selector from the same index, as an app installs it, answering with this release's
    // variants only (its data block is the release's variants.json).
    let selector = install_from_cpu_index("ct2-variant-select==4.7.1");
    let answer = std::process::Command::new("python3")
        .args([
            "-c",
            "import ct2_variant_select as s; print(sorted(v['name'] for v in s.DATA['variants']))",
        ])
        .env("PYTHONPATH", selector.path())
        .output()
        .unwrap();
    let released: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("variants.json")).unwrap()).unwrap();
    let mut names: Vec<String> = released["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| format!("'{}'", v["name"].as_str().unwrap()))
        .collect();
    names.sort();
    assert_eq!(
        String::from_utf8_lossy(&answer.stdout).trim(),
        format!("[{}]", names.join(", ")),
        "{}",
        common::stdout_and_stderr(&answer)
    );

    // HTTP: the release folder served as it is.
    let server = common::HttpDir::serve(out);
    let port = server.port;
    let target = tempfile::tempdir().unwrap();
    let mut args = target_args(target.path());
    args.extend([
        "--index-url".into(),
        format!("http://127.0.0.1:{port}/whl/cuda"),
        "ctranslate2".into(),
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let installed = pip(&args);
    drop(server);
    assert!(
        installed.status.success(),
        "{}",
        common::stdout_and_stderr(&installed)
    );
    assert_eq!(import(target.path()), "cuda 4.7.1+cu12");

    // Every Windows variant resolves from its own index for win_amd64.
    for (variant, label) in [
        ("cpu", "cpu"),
        ("cuda", "cu12"),
        ("rocm", "rocm72"),
        ("rocm-gfx1010", "gfx1010"),
    ] {
        let dest = tempfile::tempdir().unwrap();
        let index = format!("file://{}/whl/{variant}", out.display());
        let got = pip(&[
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--platform",
            "win_amd64",
            "--python-version",
            "3.12",
            "--index-url",
            &index,
            "-d",
            dest.path().to_str().unwrap(),
            "ctranslate2",
        ]);
        assert!(
            got.status.success(),
            "{variant}: {}",
            common::stdout_and_stderr(&got)
        );
        let files: Vec<String> = fs::read_dir(dest.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            files,
            [format!(
                "ctranslate2-4.7.1+{label}-cp312-cp312-win_amd64.whl"
            )],
            "{variant}"
        );
    }
}

/// A Linux wheel that needs a newer glibc than its variant's policy
/// (manylinux_2_28, as CTranslate2's own wheels) is refused unless asked, naming both.
#[test]
fn a_linux_wheel_newer_than_the_policy_is_refused_unless_asked() {
    let scratch = Scratch::new();
    fake_build_tagged(&scratch, "3.12", "manylinux_2_36_x86_64");
    let out = scratch.path().join("target/dist/newer");
    let refused = release(&scratch, &out, "3.12");
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    for needle in [
        "need a newer glibc than their variant's manylinux policy",
        "manylinux_2_36, the variant's policy is manylinux_2_28",
        "quay.io/pypa/manylinux_2_28_x86_64",
        "--allow-linux-tag",
    ] {
        assert!(
            refused.stderr.contains(needle),
            "`{needle}` in {}",
            refused.stderr
        );
    }
    assert!(!out.exists(), "nothing written");
    let run = release_with(&scratch, &out, "3.12", &["--allow-linux-tag"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

/// A wheel of 256 MiB of zeros (a few hundred KB compressed) is read within the unpacker's
/// expansion limit: `release` refuses it by name instead of reading it whole into memory.
#[test]
fn a_wheel_that_expands_past_its_limit_is_refused_not_read_whole() {
    use std::io::Write;
    let scratch = Scratch::new();
    let wheel = fake_build(&scratch, "3.12");
    let file = fs::File::create(&wheel).unwrap();
    let mut zip = zip::ZipWriter::new(file);
    let deflated = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .large_file(true);
    zip.start_file("ctranslate2/zeros.bin", deflated).unwrap();
    let block = vec![0u8; 1 << 20];
    for _ in 0..256 {
        zip.write_all(&block).unwrap();
    }
    // A true RECORD, so that only the expansion can stop the release (a RECORD that leaves
    // files out is refused before any file is read).
    let zeros = vec![0u8; 256 << 20];
    let metadata = "Name: ctranslate2\nVersion: 4.7.1\n";
    let wheel_file = "Wheel-Version: 1.0\n";
    let line = |name: &str, data: &[u8]| {
        format!(
            "{name},{},{}\n",
            ct2v_bundle::wheel::record_hash(data),
            data.len()
        )
    };
    let record = line("ctranslate2/zeros.bin", &zeros)
        + &line("ctranslate2-4.7.1.dist-info/METADATA", metadata.as_bytes())
        + &line("ctranslate2-4.7.1.dist-info/WHEEL", wheel_file.as_bytes())
        + "ctranslate2-4.7.1.dist-info/RECORD,,\n";
    drop(zeros);
    for (name, text) in [
        ("ctranslate2-4.7.1.dist-info/METADATA", metadata),
        ("ctranslate2-4.7.1.dist-info/WHEEL", wheel_file),
        ("ctranslate2-4.7.1.dist-info/RECORD", record.as_str()),
    ] {
        zip.start_file(name, deflated).unwrap();
        zip.write_all(text.as_bytes()).unwrap();
    }
    zip.finish().unwrap();
    assert!(fs::metadata(&wheel).unwrap().len() < 2 << 20);
    let out = scratch.path().join("dist");
    let started = std::time::Instant::now();
    let run = release(&scratch, &out, "3.12");
    assert_ne!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("expands to more than"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("ctranslate2-4.7.1-cp312"),
        "{}",
        run.stderr
    );
    assert!(!out.exists(), "nothing released");
    assert!(started.elapsed().as_secs() < 60);
}

/// CI's artifacts folder (`release --from`): each given entry's dist folder copied under its
/// artifact name, as the download step lays them out.
pub(crate) fn artifacts_of(scratch: &Scratch, entries: &[&serde_json::Value], into: &Path) {
    for entry in entries {
        let dist = scratch.path().join(format!(
            "target/xtask/{}/{}/dist/py{}",
            entry["slot"].as_str().unwrap(),
            entry["platform"].as_str().unwrap(),
            entry["python"].as_str().unwrap()
        ));
        let to = into.join(entry["artifact"].as_str().unwrap());
        for name in common::wheel::files_below(&dist) {
            fs::create_dir_all(to.join(&name).parent().unwrap()).unwrap();
            fs::copy(dist.join(&name), to.join(&name)).unwrap();
        }
    }
}

/// GitHub refuses a release asset of 2 GiB or more ("each file … must be under 2 GiB", GitHub's
/// documentation, "About releases"): `release` refuses it first, exit 2, naming the file, its
/// size and the limit, before anything is written. The files are sparse (`set_len`): no 2 GiB
/// of data is ever written.
#[test]
fn an_asset_of_2_gib_or_more_is_refused_before_anything_is_written() {
    const LIMIT: u64 = 2_147_483_648;
    let cases: [(&str, u64); 3] = [
        ("wheel", LIMIT + LIMIT / 20), // 2.1 GiB
        ("provenance.json", LIMIT),    // exactly the limit: not under it
        ("provenance.md", LIMIT + 1),
    ];
    for (what, size) in cases {
        let scratch = Scratch::new();
        let wheel = fake_build(&scratch, "3.12");
        let dist = wheel.parent().unwrap().to_path_buf();
        let file = match what {
            "wheel" => wheel.clone(),
            name => dist.join(name),
        };
        fs::OpenOptions::new()
            .write(true)
            .open(&file)
            .unwrap()
            .set_len(size)
            .unwrap();
        let out = scratch.path().join("target/dist/4.7.1");
        let run = release(&scratch, &out, "3.12");
        assert_eq!(run.code, 2, "{what}: {}", run.stderr);
        for needle in [
            file.display().to_string(),
            format!("{size} bytes"),
            "2147483648 bytes".to_string(),
            "GitHub".to_string(),
        ] {
            assert!(
                run.stderr.contains(&needle),
                "{what}: `{needle}` in {}",
                run.stderr
            );
        }
        assert!(!out.exists(), "{what}: nothing written");
        let leftovers: Vec<_> = fs::read_dir(out.parent().unwrap())
            .map(|d| d.flatten().map(|e| e.file_name()).collect())
            .unwrap_or_default();
        assert!(
            leftovers.is_empty(),
            "{what}: no staging left: {leftovers:?}"
        );
        assert_eq!(
            fs::metadata(&file).unwrap().len(),
            size,
            "{what}: untouched"
        );
    }
}
