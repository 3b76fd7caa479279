//! Hostile flags, files and faults on the command line: nothing is written outside the output, nothing we did not create is deleted, a
//! closed stdout ends quietly, and bad input exits with 2.

use crate::common;
use ct2v_support::report::Reporter;

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::command_args::{self, cpu_job};
use common::{Run, Scratch, repo_root, xtask, xtask_in};

const WHEEL: &str = common::wheel::LINUX_WHEEL;

fn wheel(dir: &Path) -> PathBuf {
    common::wheel::linux_wheel(dir, &[])
}

fn bundle(wheel: &Path, out: &Path, extra: &[&str]) -> Run {
    xtask(&command_args::bundle(wheel, out, extra))
}

fn assert_code(run: &Run, code: i32, needles: &[&str]) {
    common::assert_exit(run, code, needles);
}

#[test]
fn bundle_flags_with_a_dest_outside_the_wheel_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let wheel = wheel(dir.path());
    let libs = dir.path().join("libs");
    fs::create_dir_all(&libs).unwrap();
    let out = dir.path().join("out");
    for (flag, value) in [
        ("--search", format!("{}=../../../../tmp/x", libs.display())),
        ("--search", format!("{}=/tmp/x", libs.display())),
        ("--data", format!("{}/*=../../x", libs.display())),
        ("--data", format!("{}/*=C:/x", libs.display())),
    ] {
        let run = bundle(&wheel, &out, &[flag, &value]);
        assert_code(&run, 2, &[flag, "not allowed"]);
        assert!(!out.exists(), "nothing written for {value}");
    }
}

#[test]
fn bundle_out_never_deletes_what_it_did_not_write() {
    let dir = tempfile::tempdir().unwrap();
    let wheel = wheel(dir.path());
    // A folder of the user's.
    let out = dir.path().join("mine");
    fs::create_dir_all(&out).unwrap();
    fs::write(out.join("thesis.txt"), "years of work").unwrap();
    let run = bundle(&wheel, &out, &[]);
    assert_code(&run, 2, &["--out", "not written by"]);
    assert_eq!(
        fs::read_to_string(out.join("thesis.txt")).unwrap(),
        "years of work"
    );
    // The wheel's own folder, and the wheel itself.
    let sibling = wheel.parent().unwrap().join("other.txt");
    fs::write(&sibling, "keep").unwrap();
    for out in [wheel.parent().unwrap().to_path_buf(), wheel.clone()] {
        let run = bundle(&wheel, &out, &[]);
        assert_code(&run, 2, &["--out"]);
        assert!(wheel.is_file() && sibling.is_file());
    }
    // An empty folder, then our own output, are replaced.
    let ours = dir.path().join("ours");
    fs::create_dir_all(&ours).unwrap();
    let run = bundle(&wheel, &ours, &[]);
    assert_code(&run, 0, &[]);
    let run = bundle(&wheel, &ours, &[]);
    assert_code(&run, 0, &[]);
    // The fat wheel (tagged with what this machine's gcc-built stand-in proves).
    let wheels = fs::read_dir(&ours)
        .unwrap()
        .filter(|e| {
            let name = e
                .as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .into_owned();
            name.starts_with("ctranslate2-4.7.1-cp312-cp312-manylinux_") && name.ends_with(".whl")
        })
        .count();
    assert_eq!(wheels, 1);
}

#[test]
fn stale_staging_folders_are_removed_by_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let wheel = wheel(dir.path());
    let out = dir.path().join("out");
    // What a bundle killed with -9 leaves: a staging folder owned by a process that is gone.
    // (its marker is what `staging::create` writes into every staging folder).
    let stale = dir.path().join(".bundle-999999999-a1B2c3");
    fs::create_dir_all(stale.join("wheel")).unwrap();
    fs::write(stale.join("wheel/big.bin"), vec![0u8; 1024]).unwrap();
    ct2v_support::staging::mark(&stale).unwrap();
    // And an old `out` a killed replace had moved aside (marked as ours to delete).
    let aside = dir.path().join(".out.old-999999999");
    fs::create_dir_all(&aside).unwrap();
    ct2v_support::staging::mark(&aside).unwrap();
    // Folders of the user's that merely look alike are left alone: another name, and our
    // very shapes with a dead pid but no marker.
    let lookalikes = [
        dir.path().join(".bundle-notes"),
        dir.path().join(".bundle-999999998-x"),
        dir.path().join(".out.old-999999998"),
    ];
    for l in &lookalikes {
        fs::create_dir_all(l).unwrap();
        fs::write(l.join("mine.txt"), "a user's file").unwrap();
    }
    let run = bundle(&wheel, &out, &[]);
    assert_code(&run, 0, &[]);
    assert!(!stale.exists() && !aside.exists(), "our leftovers removed");
    for removed in [&stale, &aside] {
        let name = removed.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            run.stderr.contains(&name) && run.stderr.contains("left by an interrupted run"),
            "each removal is said: {}",
            run.stderr
        );
    }
    for l in &lookalikes {
        assert!(l.join("mine.txt").is_file(), "{} kept", l.display());
    }
}

#[test]
fn bundle_refuses_a_tampered_input_wheel() {
    let dir = tempfile::tempdir().unwrap();
    let good = wheel(dir.path());
    let cases: &[(&str, &Change, &str)] = &[
        (
            "changed",
            &|name, data| name.ends_with("__init__.py").then(|| [data, b"x"].concat()),
            "__init__.py",
        ),
        (
            "garbage",
            &|name, _| {
                name.ends_with("RECORD")
                    .then(|| b"\xff\xfe garbage".to_vec())
            },
            "RECORD",
        ),
        (
            "no-record",
            &|name, _| name.ends_with("RECORD").then(Vec::new),
            "RECORD",
        ),
        (
            "no-wheel",
            &|name, _| name.ends_with("/WHEEL").then(Vec::new),
            "WHEEL",
        ),
    ];
    for (label, change, needle) in cases {
        let bad = dir.path().join(label).join(WHEEL);
        rewrite_zip(&good, &bad, change);
        let out = dir.path().join(format!("out-{label}"));
        let run = bundle(&bad, &out, &[]);
        assert_code(&run, 2, &[needle, WHEEL]);
        assert!(!out.exists());
    }
}

/// An entry's (name, data) → its new data, if it changes (empty: the entry is dropped).
type Change = dyn Fn(&str, &[u8]) -> Option<Vec<u8>>;

/// Copies a zip, replacing an entry's data where `change` says (an empty result drops it).
fn rewrite_zip(from: &Path, to: &Path, change: &Change) {
    use std::io::Write;
    fs::create_dir_all(to.parent().unwrap()).unwrap();
    let mut archive = zip::ZipArchive::new(fs::File::open(from).unwrap()).unwrap();
    let mut out = zip::ZipWriter::new(fs::File::create(to).unwrap());
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).unwrap();
        let name = entry.name().unwrap().to_string();
        let mut data = Vec::new();
        entry.read_to_end(&mut data).unwrap();
        let data = match change(&name, &data) {
            Some(new) if new.is_empty() => continue,
            Some(new) => new,
            None => data,
        };
        out.start_file(name, zip::write::SimpleFileOptions::default())
            .unwrap();
        out.write_all(&data).unwrap();
    }
    out.finish().unwrap();
}

/// Runs xtask with stdout a pipe whose reading end is already closed, as `| head -n1` is
/// once head has its line.
fn with_closed_stdout(args: &[&str]) -> (i32, String) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let output = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("--root")
        .arg(repo_root())
        .args(args)
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    (
        common::exit_code(output.status),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_closed_stdout_ends_quietly_with_exit_0() {
    for args in [
        &["matrix"][..],
        &["matrix", "--json"],
        &["variants"],
        &cpu_job("plan", &["--json"]),
    ] {
        let (code, stderr) = with_closed_stdout(args);
        assert_eq!(code, 0, "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[test]
fn bad_flags_exit_2_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    fs::write(&file, "x").unwrap();
    let file = file.to_str().unwrap();
    let fetch = |extra: &[&str]| {
        let offline = ["--no-wheels", "--offline"];
        xtask(&cpu_job("fetch", &[&offline[..], extra].concat()))
    };
    assert_code(
        &fetch(&["--mirror", "https://x/=ftp://mirror/"]),
        2,
        &["ftp://"],
    );
    assert_code(
        &fetch(&["--mirror", "https://x/=file:///tmp/m/"]),
        2,
        &["file://"],
    );
    assert_code(
        &xtask(
            &[
                &["--cache-dir", file][..],
                &cpu_job("fetch", &["--offline"]),
            ]
            .concat(),
        ),
        2,
        &["--cache-dir", "not a folder"],
    );
    let wheel = wheel(dir.path());
    let out = dir.path().join("out");
    assert_code(
        &bundle(&wheel, &out, &["--data", "garbage"]),
        2,
        &["--data"],
    );
    assert_code(&bundle(&wheel, &out, &["--search", "=X"]), 2, &["--search"]);
    assert_code(
        &bundle(&wheel, &out, &["--search", "/etc/passwd=x"]),
        2,
        &["/etc/passwd", "not a folder"],
    );
    assert_code(
        &bundle(&dir.path().join("nope.whl"), &out, &[]),
        2,
        &["does not exist"],
    );
    assert_code(
        &xtask(&[
            "release",
            "--variants",
            "cpuu",
            "--out",
            dir.path().join("r").to_str().unwrap(),
        ]),
        2,
        &["cpuu", "did you mean `cpu`"],
    );
    assert_code(
        &xtask(&[
            "release",
            "--pythons",
            "9.9",
            "--out",
            dir.path().join("r").to_str().unwrap(),
        ]),
        2,
        &["9.9"],
    );
    for version in ["../../X", "/abs"] {
        assert_code(
            &xtask(&["release", "--version", version, "--variants", "cpu"]),
            2,
            &["--version"],
        );
    }
    assert!(!dir.path().join("r").exists());
}

#[test]
fn a_bad_pins_lock_is_refused_and_never_overwritten() {
    for (label, bytes) in [
        ("toml", &b"[pin\nbroken"[..]),
        ("utf8", &b"\xff\xfe\x00 not text"[..]),
    ] {
        let scratch = Scratch::new();
        let lock = scratch.path().join("variants/pins.lock");
        fs::write(&lock, bytes).unwrap();
        let run = scratch.run(&["pin", "--variant", "cpu", "--offline"]);
        assert_code(&run, 2, &["pins.lock"]);
        assert_eq!(fs::read(&lock).unwrap(), bytes, "{label}: pins.lock kept");
    }
}

#[test]
fn matrix_refuses_a_variant_with_no_platforms() {
    let scratch = Scratch::new();
    let path = scratch.path().join("variants/cpu.toml");
    let mut text = fs::read_to_string(&path).unwrap();
    text.push_str("platforms = []\n");
    fs::write(&path, text).unwrap();
    let run = xtask_in(scratch.path(), &["matrix"]);
    assert_code(&run, 2, &["cpu", "platforms"]);
}

/// An input wheel that is no zip, or that holds a member outside the tree
/// (`../x`, an absolute or a drive-letter name), is bad input: exit 2, nothing written.
#[test]
fn a_broken_or_hostile_input_wheel_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let not_zip = dir.path().join("not-zip").join(WHEEL);
    fs::create_dir_all(not_zip.parent().unwrap()).unwrap();
    fs::write(&not_zip, b"this is not a zip archive").unwrap();
    assert_code(
        &bundle(&not_zip, &out, &[]),
        2,
        &["as a zip archive", WHEEL],
    );
    assert!(!out.exists());
    for (label, member, said) in [
        ("traversal", "../x", "points outside the archive"),
        ("absolute", "/etc/x", "absolute path"),
        ("drive", "C:/x", "absolute path"),
    ] {
        let wheel = dir.path().join(label).join(WHEEL);
        fs::create_dir_all(wheel.parent().unwrap()).unwrap();
        let mut zip = zip::ZipWriter::new(fs::File::create(&wheel).unwrap());
        zip.start_file(member, zip::write::SimpleFileOptions::default())
            .unwrap();
        std::io::Write::write_all(&mut zip, b"x").unwrap();
        zip.finish().unwrap();
        assert_code(&bundle(&wheel, &out, &[]), 2, &[said, member]);
        assert!(!out.exists(), "{label}: nothing written");
        assert!(!dir.path().join("x").exists(), "{label}");
    }
}

/// An unpack killed mid-way leaves its staging folder, and a killed replace the old tree it
/// had moved aside (each marked as the tool's own when made): the next unpack of the same
/// destination removes both and says so; folders of those shapes without the marker stay.
#[test]
fn a_killed_unpacks_leftovers_are_removed_by_the_next_unpack_and_only_they() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    fs::create_dir_all(&src).unwrap();
    let archive = dir.path().join("in.zip");
    {
        let mut zip = zip::ZipWriter::new(fs::File::create(&archive).unwrap());
        zip.start_file("a.txt", zip::write::SimpleFileOptions::default())
            .unwrap();
        std::io::Write::write_all(&mut zip, b"a").unwrap();
        zip.finish().unwrap();
    }
    let dest = src.join("onednn");
    let staged = src.join(".onednn.unpack-999999999-Ab3");
    let aside = src.join(".onednn.old-999999999");
    for d in [&staged, &aside] {
        fs::create_dir_all(d.join("big")).unwrap();
        ct2v_support::staging::mark(d).unwrap();
    }
    let lookalike = src.join(".onednn.old-999999998");
    fs::create_dir_all(&lookalike).unwrap();
    let unpack = || {
        ct2v_fetch::unpack::unpack_into(
            &archive,
            ct2v_fetch::unpack::ArchiveFormat::Zip,
            None,
            &dest,
            &Default::default(),
            ct2v_fetch::unpack::Kept::Recorded,
            &Reporter::captured(),
        )
        .unwrap()
    };
    unpack();
    assert!(dest.join("a.txt").is_file());
    assert!(
        !dest.join(ct2v_support::staging::MARKER).exists(),
        "no marker in the tree"
    );
    assert!(!staged.exists() && !aside.exists());
    assert!(lookalike.exists());
    // A second unpack over the first replaces it and leaves nothing beside it.
    unpack();
    let mut left: Vec<String> = fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, [".onednn.old-999999998", "onednn"]);
}

/// A root glob is matched inside the staged wheel only: an absolute or `..` glob would have
/// patchelf rewrite files wherever it pointed (as root: system libraries).
#[test]
fn a_root_glob_outside_the_wheel_is_refused_and_nothing_outside_is_touched() {
    let dir = tempfile::tempdir().unwrap();
    let wheel = wheel(dir.path());
    let outside = dir.path().join("system");
    fs::create_dir_all(&outside).unwrap();
    fs::copy("/bin/true", outside.join("libvictim.so")).unwrap();
    let before = fs::read(outside.join("libvictim.so")).unwrap();
    let out = dir.path().join("out");
    let absolute = format!("{}/*.so", outside.display());
    for glob in [
        absolute.as_str(),
        "../system/*.so",
        "ctranslate2/../../system/*.so",
    ] {
        let run = bundle(&wheel, &out, &["--binary", glob]);
        assert_code(&run, 2, &["--binary", "is not allowed"]);
        assert!(!out.exists());
    }
    assert_eq!(
        fs::read(outside.join("libvictim.so")).unwrap(),
        before,
        "untouched"
    );
}

/// `bump --source`/`--subdir` become a `[source]` table: a URL that is not an http(s) archive,
/// or a folder that leaves the archive, is refused before the version file or a patch series
/// is written.
#[test]
fn bump_refuses_a_bad_source_or_subdir_before_writing_anything() {
    let scratch = Scratch::new();
    let crate_url = "https://static.crates.io/crates/ct2rs/ct2rs-0.10.3.crate";
    for (flags, says) in [
        (
            vec!["--source", "file:///etc/passwd.tar.gz"],
            "not an http(s) URL",
        ),
        (
            vec!["--source", "https://github.com/OpenNMT/CTranslate2"],
            "not an archive",
        ),
        (vec!["--source", "https://example.org/"], "no file name"),
        (
            vec!["--source", crate_url, "--subdir", "../.."],
            "`..` leaves its folder",
        ),
        (vec!["--source", crate_url, "--subdir", "/etc"], "absolute"),
        (
            vec!["--subdir", "ct2rs-0.10.3/CTranslate2"],
            "--source, which is missing",
        ),
    ] {
        let mut args = vec!["bump", "--ctranslate2", "4.8.9", "--no-pin"];
        args.extend(flags);
        let run = scratch.run(&args);
        assert_code(&run, 2, &[says]);
        assert!(
            !scratch
                .path()
                .join("variants/ctranslate2/4.8.9.toml")
                .exists()
        );
        assert!(!scratch.path().join("patches/ctranslate2-4.8.9").exists());
    }
}

/// A folder flag that cannot be what it names (a file, a device, a full folder for a release,
/// a missing input folder) is exit 2 naming the flag and the path, before any work.
#[test]
fn folder_flags_that_name_a_file_a_device_or_nothing_are_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    fs::write(&file, "keep").unwrap();
    let full = dir.path().join("full");
    fs::create_dir(&full).unwrap();
    fs::write(full.join("kept"), "keep").unwrap();
    let missing = dir.path().join("missing");
    let d = |p: &Path| p.to_str().unwrap().to_string();
    let below_file = d(&file.join("x"));
    let nul = d(&dir.path().join("NUL"));
    let (file_s, full_s, missing_s, dir_s) = (d(&file), d(&full), d(&missing), d(dir.path()));
    let wheel = wheel(dir.path());
    let wheel_s = d(&wheel);
    let site = d(&dir.path().join("site"));
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["release", "--from", &dir_s, "--out", &file_s],
            "is a file",
        ),
        (
            vec!["release", "--from", &dir_s, "--out", &below_file],
            "no folder can be made",
        ),
        (
            vec!["release", "--from", &dir_s, "--out", &nul],
            "device name",
        ),
        (
            vec!["release", "--from", &dir_s, "--out", &full_s],
            "not empty",
        ),
        (vec!["release", "--from", &missing_s], "--from"),
        (vec!["release", "--from", &file_s], "not a folder"),
        (vec!["verify-release", &missing_s], "no such folder"),
        (vec!["verify-release", &file_s], "a-file"),
        (
            vec![
                "pages",
                "--release",
                &missing_s,
                "--tag",
                "v1",
                "--download-base",
                "https://x/",
                "--out",
                &site,
            ],
            "--release",
        ),
        (
            vec![
                "pages",
                "--release",
                &dir_s,
                "--tag",
                "v1",
                "--download-base",
                "https://x/",
                "--out",
                &file_s,
            ],
            "is a file",
        ),
        (
            vec!["bundle", "--wheel", &wheel_s, "--out", &file_s],
            "is a file",
        ),
        (
            vec!["bundle", "--wheel", &wheel_s, "--out", &nul],
            "device name",
        ),
    ];
    for (args, says) in cases {
        let run = xtask(&args);
        assert_code(&run, 2, &[says]);
        assert!(
            !run.stderr.contains("os error"),
            "a bare OS error: {}",
            run.stderr
        );
        assert_eq!(fs::read_to_string(&file).unwrap(), "keep");
        assert_eq!(fs::read_to_string(full.join("kept")).unwrap(), "keep");
        assert!(!dir.path().join("site").exists() && !dir.path().join("NUL").exists());
    }
}

/// `bundle --wheel` of a file whose name is no PEP 427 wheel name (another extension, too few
/// or too many parts, a platform that is neither Windows nor Linux) is bad input naming the
/// file and why, before any work, with `--policy` too; a FIFO given as the wheel is not
/// waited for.
#[test]
fn bundle_of_a_file_whose_name_is_no_wheel_name_is_bad_input_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let wheel = wheel(dir.path());
    let out = dir.path().join("out");
    let named = |name: &str| {
        let path = dir.path().join(name);
        fs::copy(&wheel, &path).unwrap();
        path
    };
    for (name, policy, why) in [
        ("some-file.zip", None, "not a wheel (.whl)"),
        ("some-file.zip", Some("windows"), "not a wheel (.whl)"),
        ("ctranslate2-4.7.1.whl", None, "not a wheel's file name"),
        (
            "a-1-2-3-4-5-6-7.whl",
            Some("manylinux_2_28"),
            "not a wheel's file name",
        ),
        (
            "ctranslate2-4.7.1-cp312-cp312-macosx_11_0_arm64.whl",
            None,
            "platform tag `macosx_11_0_arm64` is neither Windows nor Linux",
        ),
    ] {
        let path = named(name);
        let mut extra = Vec::new();
        if let Some(policy) = policy {
            extra.extend(["--policy", policy]);
        }
        let run = bundle(&path, &out, &extra);
        assert_code(&run, 2, &["--wheel", name, why]);
        assert!(!out.exists(), "{name}: nothing written");
        assert!(
            !run.stderr.contains("cannot tell the platform"),
            "{}",
            run.stderr
        );
    }
    #[cfg(unix)]
    {
        let fifo = dir.path().join("fifo-1.0-py3-none-linux_x86_64.whl");
        common::mkfifo(&fifo);
        let run = bundle(&fifo, &out, &[]);
        assert_code(&run, 2, &["--wheel", "is not a file"]);
    }
}

/// `--version` and `-V` print the tool's name and version (the xtask crate's, as Cargo.toml
/// says) on stdout and exit 0, from any folder: no checkout is needed to ask.
#[test]
fn version_flags_print_the_tool_version_and_exit_0() {
    let manifest = fs::read_to_string(repo_root().join("xtask/Cargo.toml")).unwrap();
    let version = manifest
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .and_then(|v| v.strip_suffix('"'))
        .unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    for flag in ["--version", "-V"] {
        for dir in [repo_root(), elsewhere.path().to_path_buf()] {
            let run = xtask_in(&dir, &[flag]);
            assert_eq!(run.code, 0, "{flag}: {}", run.stderr);
            assert_eq!(run.stdout, format!("cargo xtask {version}\n"), "{flag}");
            assert_eq!(run.stderr, "", "{flag}");
        }
    }
}
