//! NETWORK TEST: the Windows wheels we ship, in a real Windows CPython (python.org's
//! embeddable 3.12.9, signatures checked) under wine 8: `verify --wheel … --transcribe`,
//! `smoke --frozen --wheel …`, the release installed from its index over loopback HTTP as the
//! consumer's app installs it, and through a PyApp exe.
//!
//! The wheels (tests/it/common/winwheels.rs, common/rocm.rs):
//! - cuda: the official CTranslate2 4.7.1 win_amd64 wheel (upstream's CUDA build) through the
//!   cuda variant's post-compile steps and bundle; its declared cuBLAS from a stand-in
//!   `nvidia-cublas-cu12` with the real wheel's name and layout (nothing loads it on the CPU);
//! - rocm: upstream's Python files and real `_ext` extension in front of a `ctranslate2.dll`
//!   that imports `amdhip64_7.dll` and `hipblas.dll` with TheRock's import graph behind them
//!   (mingw-built) and forwards to the official CPU library; built by `cargo xtask build
//!   --variant rocm` from a loopback mirror of the official ROCm zip and AMD's SDK wheels.
//!
//! Needs https to PyPI and crates.io, mingw-w64, wine and osslsigncode; without the network it
//! says why and passes, a missing tool fails under CI=true.

use ct2v_support::report::Reporter;
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::common::rocm::{DIST, WHEEL, build, scratch_for, serve, stand_in_with};
use crate::common::winwheels::{cublas_wheel, fat_wheel, official_wheel};
use crate::common::{self, Run, Scratch, assert_exit, mingw, skip};
use crate::needs_network;

const HOSTS: &[&str] = &[
    "pypi.org:443",
    "files.pythonhosted.org:443",
    "static.crates.io:443",
];
const LABEL: &str = "python 3.12.9 (Windows, under wine)";
const JFK: &str = "ask not what your country can do for you, ask what you can do for your country";

fn tools_present() -> bool {
    mingw::available(true)
        && !skip::missing_from_path("osslsigncode", "apt-get install osslsigncode")
}

/// The shared download cache (the model, the wheels, the interpreter: downloaded once).
fn cache() -> String {
    common::winwheels::cache_dir().display().to_string()
}

fn xtask(scratch: &Scratch, args: &[&str]) -> Run {
    let cache = cache();
    let mut all = vec!["--cache-dir", cache.as_str()];
    all.extend_from_slice(args);
    scratch.run(&all)
}

/// `smoke --frozen --wheel W` (int8): the frozen app from a fresh copy transcribes the JFK clip
/// as the wheel did. Returns its output with `/` separators (the DLLs it loaded, from where).
fn smoke_frozen(scratch: &Scratch, wheel: &Path) -> String {
    let run = xtask(
        scratch,
        &[
            "smoke",
            "--frozen",
            "--wheel",
            wheel.to_str().unwrap(),
            "--compute-type",
            "int8",
        ],
    );
    assert_exit(
        &run,
        0,
        &["the frozen app transcribed like the wheel", "WER 0.000"],
    );
    assert!(run.stdout.to_lowercase().contains(JFK), "{}", run.stdout);
    run.stdout.replace('\\', "/")
}

/// A copy of `wheel` relabelled `+label`, as `release` names it.
fn labelled(wheel: &Path, label: &str, dir: &Path) -> PathBuf {
    fs::create_dir_all(dir).unwrap();
    let name = ct2v_bundle::wheel::write_with_local_version(wheel, label, dir).unwrap();
    dir.join(name)
}

/// The official Windows wheel's ctranslate2/ unpacked (the rocm stand-in's CPU side).
fn official_unpacked(dir: &Path) -> PathBuf {
    let out = dir.join("official");
    common::wheel::unzip(&official_wheel(), &out);
    out
}

#[test]
fn a_cuda_windows_wheel_verifies_and_transcribes_in_the_windows_python() {
    needs_network!(HOSTS);
    if !tools_present() {
        return;
    }
    let scratch = Scratch::new();
    let fat = fat_wheel(&scratch, "cuda");
    let wheel = labelled(&fat.wheel, "cu12", &scratch.path().join("checked"));
    let run = xtask(
        &scratch,
        &[
            "verify",
            "--wheel",
            wheel.to_str().unwrap(),
            "--platform",
            "windows-x86_64",
            "--transcribe",
        ],
    );
    assert_exit(&run, 0, &[LABEL, "WER 0.000", "accommodations"]);
    assert!(run.stdout.to_lowercase().contains(JFK), "{}", run.stdout);
    assert!(run.stdout.contains("cpu compute types: "), "{}", run.stdout);
    // Frozen with PyInstaller under wine, run from a fresh copy: the same sentence, with
    // CTranslate2 loaded from the app's _internal folder.
    let loaded = smoke_frozen(&scratch, &wheel);
    assert!(
        loaded.contains("_internal/ctranslate2/ctranslate2.dll"),
        "{loaded}"
    );
    // Bad input: a cp312 wheel asked for as 3.11, and no variant for an unlabelled wheel.
    let wrong = xtask(
        &scratch,
        &[
            "verify",
            "--wheel",
            wheel.to_str().unwrap(),
            "--python",
            "3.11",
        ],
    );
    assert_exit(&wrong, 2, &["cp312", "--python 3.12"]);
    let unlabelled = xtask(
        &scratch,
        &["verify", "--wheel", fat.wheel.to_str().unwrap()],
    );
    assert_exit(&unlabelled, 2, &["no local version", "--variant"]);
    // The interpreter's provenance: every binary signed, by whom.
    let python = scratch.path().join("target/xtask/windows-python");
    let folder = fs::read_dir(&python)
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("cp312-"))
        .unwrap()
        .path();
    let provenance = fs::read_to_string(folder.join("provenance.md")).unwrap();
    assert!(
        provenance.contains("| python.exe | Python Software Foundation |"),
        "{provenance}"
    );
    assert!(
        provenance.contains("| vcruntime140.dll | Microsoft Corporation |"),
        "{provenance}"
    );
    assert!(
        provenance.contains("carries no signature of its own"),
        "{provenance}"
    );
}

/// The rocm stand-in built by the rocm variant from a loopback mirror, in a scratch whose pins
/// are the stand-in's; the real VC++ runtime wheel is served (the real `_ext` imports it).
fn rocm_build() -> (Scratch, PathBuf, tempfile::TempDir) {
    let work = tempfile::tempdir().unwrap();
    let mut s = stand_in_with(Some(&official_unpacked(work.path())));
    let msvc = real_msvc_runtime();
    s.msvc_wheel = msvc;
    let server = serve(&s, false);
    let scratch = scratch_for(&s);
    let run = build(&scratch, &server, &["--allow-unpinned"], &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let fat = scratch.path().join(DIST).join(WHEEL);
    assert!(fat.is_file());
    (scratch, fat, work)
}

fn real_msvc_runtime() -> Vec<u8> {
    let cache = ct2v_fetch::cache::Cache::new(common::winwheels::cache_dir());
    let request = common::winwheels::request(
        "msvc-runtime",
        "https://files.pythonhosted.org/packages/98/33/be9ef68901200813fc174a06758b4ae48ca4eb58fa783280dd879d5fd048/msvc_runtime-14.51.36231-cp312-cp312-win_amd64.whl",
        common::rocm::MSVC_PIN.0,
        common::rocm::MSVC_PIN.1,
    );
    let options = ct2v_fetch::download::Options {
        progress: false,
        ..Default::default()
    };
    let fetched = ct2v_fetch::download::fetch_all(&cache, &[request], &options).unwrap();
    fs::read(&fetched[0].path).unwrap()
}

/// `wheel` without the members whose name ends with `suffix`.
fn without(wheel: &Path, suffix: &str, out: &Path) {
    let mut zip = zip::ZipArchive::new(fs::File::open(wheel).unwrap()).unwrap();
    let mut writer = zip::ZipWriter::new(fs::File::create(out).unwrap());
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).unwrap();
        if entry.name().unwrap().ends_with(suffix) {
            continue;
        }
        let name = entry.name().unwrap().to_string();
        let mut data = Vec::new();
        entry.read_to_end(&mut data).unwrap();
        writer
            .start_file(name, zip::write::SimpleFileOptions::default())
            .unwrap();
        writer.write_all(&data).unwrap();
    }
    writer.finish().unwrap();
}

#[test]
fn the_rocm_stand_in_imports_with_no_sdk_names_a_missing_dll_and_runs_frozen() {
    needs_network!(HOSTS);
    if !tools_present() {
        return;
    }
    let (scratch, fat, _work) = rocm_build();
    let wheel = labelled(&fat, "rocm72", &scratch.path().join("checked"));
    let run = xtask(
        &scratch,
        &[
            "verify",
            "--wheel",
            wheel.to_str().unwrap(),
            "--transcribe",
            "--compute-type",
            "int8",
        ],
    );
    assert_exit(&run, 0, &[LABEL, "WER 0.000"]);
    assert!(run.stdout.contains("rocm72") || run.stderr.contains("rocm72"));

    // hipBLAS taken out: the loader's message names no DLL; ours does.
    let broken = scratch
        .path()
        .join("broken")
        .join(wheel.file_name().unwrap());
    fs::create_dir_all(broken.parent().unwrap()).unwrap();
    without(&wheel, "/hipblas.dll", &broken);
    let run = xtask(&scratch, &["verify", "--wheel", broken.to_str().unwrap()]);
    assert_exit(&run, 1, &["hipblas.dll, imported by ctranslate2.dll"]);

    // Frozen: PyInstaller's _internal\_rocm_sdk_core\bin is where the package's
    // importlib.resources.files() path leads (../_rocm_sdk_core/bin), with no SDK anywhere.
    let loaded = smoke_frozen(&scratch, &wheel);
    for dll in [
        "_internal/_rocm_sdk_core/bin/amdhip64_7.dll",
        "_internal/_rocm_sdk_libraries_custom/bin/hipblas.dll",
        "_internal/ctranslate2/ctranslate2_cpu.dll",
    ] {
        assert!(
            loaded.contains(dll),
            "{dll} not loaded from the app:\n{loaded}"
        );
    }
}

#[test]
fn a_release_installs_from_its_index_as_the_consumer_installs_it() {
    needs_network!(HOSTS);
    if !tools_present() {
        return;
    }
    let (scratch, _rocm, _work) = rocm_build();
    fat_wheel(&scratch, "cuda");
    let release = scratch.path().join("release");
    let run = xtask(
        &scratch,
        &common::command_args::release(
            "cuda,rocm",
            "windows-x86_64",
            "3.12",
            release.to_str().unwrap(),
            &[],
        ),
    );
    assert_exit(&run, 0, &[]);
    let cublas = cublas_wheel(scratch.path());
    // `verify-release --install` of the release's Windows wheels, plus `extra`.
    let install = |extra: &[&str]| {
        let mut args = vec![
            "verify-release",
            release.to_str().unwrap(),
            "--install",
            "--platform",
            "windows-x86_64",
        ];
        args.extend_from_slice(extra);
        xtask(&scratch, &args)
    };
    let run = install(&[
        "--find-links",
        cublas.to_str().unwrap(),
        "--transcribe",
        "--pyapp",
        "--variant",
        "cuda",
    ]);
    assert_exit(
        &run,
        0,
        &[
            "the consumer's command: python -m pip install --isolated --force-reinstall --index-url http://127.0.0.1:",
            "installed ctranslate2-4.7.1+cu12-cp312-cp312-win_amd64.whl (cuda): reports 4.7.1+cu12",
            "the PyApp exe's first run installed PyPI's ctranslate2 4.7.1",
            "the app reports ctranslate2 4.7.1+cu12",
            "the app transcribed: ",
        ],
    );
    let run = install(&["--variant", "rocm"]);
    assert_exit(&run, 0, &["reports 4.7.1+rocm72"]);
    // A variant the release does not have, and a release made for GitHub's URLs.
    let run = install(&["--variant", "cpu"]);
    assert_exit(
        &run,
        2,
        &["has no windows-x86_64 wheel for Python 3.12 of cpu"],
    );
}

#[test]
fn a_linux_release_installs_from_its_index_with_linux_pip() {
    needs_network!(HOSTS);
    let scratch = Scratch::new();
    crate::speech::stand_in_build(&scratch);
    let python = ct2v_support::host::python_version(&Reporter::captured()).unwrap();
    let release = scratch.path().join("release");
    let run = xtask(
        &scratch,
        &common::command_args::release(
            "cpu",
            "linux-x86_64",
            &python,
            release.to_str().unwrap(),
            &["--allow-linux-tag"],
        ),
    );
    assert_exit(&run, 0, &[]);
    let run = xtask(
        &scratch,
        &[
            "verify-release",
            release.to_str().unwrap(),
            "--install",
            "--transcribe",
        ],
    );
    assert_exit(
        &run,
        0,
        &[
            "the consumer's command: python -m pip install",
            "reports 4.7.1+cpu",
            "WER 0.000",
        ],
    );
}

/// The embeddable Python's sdist with `edit` applied to its data.zip's files, served on
/// loopback and pinned in a scratch's variants/windows/python.toml.
fn tampered(edit: impl Fn(&str, &mut Vec<u8>) -> bool) -> (Scratch, common::server::Server) {
    let cache = ct2v_fetch::cache::Cache::new(common::winwheels::cache_dir());
    let spec = ct2v_proof::winpython::pins::PythonPins::load(&common::repo_root()).unwrap();
    let fetched = ct2v_fetch::download::fetch_all(
        &cache,
        &[spec.request("python-embed-3.12")],
        &ct2v_fetch::download::Options {
            progress: false,
            ..Default::default()
        },
    )
    .unwrap();
    let sdist = fs::read(&fetched[0].path).unwrap();
    let member = &spec.python["3.12"].member;
    // Rewrite the sdist: data.zip with the edit, everything else as it was.
    let mut out_tar = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(&sdist[..]));
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let path = entry.path().unwrap().to_string_lossy().into_owned();
        let mut data = Vec::new();
        entry.read_to_end(&mut data).unwrap();
        if path == *member {
            data = edit_zip(&data, &edit);
        }
        let mut header = entry.header().clone();
        header.set_size(data.len() as u64);
        header.set_cksum();
        out_tar.append_data(&mut header, &path, &data[..]).unwrap();
    }
    let bytes = out_tar.into_inner().unwrap().finish().unwrap();
    let server = common::server::Server::start();
    server.serve(
        "/python_embed-3.12.0.tar.gz",
        std::sync::Arc::new(bytes.clone()),
    );
    let scratch = Scratch::new();
    let original = &spec.inputs["python-embed-3.12"];
    scratch.edit(
        "variants/windows/python.toml",
        &original.url,
        &server.url("/python_embed-3.12.0.tar.gz"),
    );
    let digest = ct2v_fetch::cache::hex(&<sha2::Sha256 as sha2::Digest>::digest(&bytes));
    scratch.edit("variants/windows/python.toml", &original.sha256, &digest);
    scratch.edit(
        "variants/windows/python.toml",
        &format!("size = {}\n", original.size),
        &format!("size = {}\n", bytes.len()),
    );
    (scratch, server)
}

fn edit_zip(data: &[u8], edit: &impl Fn(&str, &mut Vec<u8>) -> bool) -> Vec<u8> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(data)).unwrap();
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let mut names = Vec::new();
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).unwrap();
        let name = entry.name().unwrap().to_string();
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).unwrap();
        if edit(&name, &mut bytes) {
            out.start_file(name.clone(), zip::write::SimpleFileOptions::default())
                .unwrap();
            out.write_all(&bytes).unwrap();
        }
        names.push(name);
    }
    let mut extra = Vec::new();
    if edit("cp312/extra.dll", &mut extra) {
        out.start_file("cp312/extra.dll", zip::write::SimpleFileOptions::default())
            .unwrap();
        out.write_all(&extra).unwrap();
    }
    out.finish().unwrap().into_inner()
}

#[test]
fn a_tampered_or_unsigned_interpreter_binary_is_refused_by_name() {
    needs_network!(HOSTS);
    if !tools_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let named = dir
        .path()
        .join(common::winwheels::CT2_URL.rsplit('/').next().unwrap());
    fs::copy(official_wheel(), &named).unwrap();
    let wheel = labelled(&named, "cpu", &dir.path().join("labelled"));
    // One byte of python.exe's code changed: its signature no longer verifies.
    let (scratch, _server) = tampered(|name, bytes| {
        if name == "cp312/python.exe" {
            let at = bytes.len() / 2;
            bytes[at] ^= 0xff;
        }
        name != "cp312/extra.dll"
    });
    let args = ["verify", "--wheel", wheel.to_str().unwrap()];
    let run = xtask(&scratch, &args);
    assert_exit(
        &run,
        2,
        &[
            "python.exe in python-embed 3.12.0",
            "do not match the digest it was signed with",
            "python.toml",
        ],
    );
    assert!(
        !scratch
            .path()
            .join("target/xtask/windows-python")
            .read_dir()
            .unwrap()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("cp312-"))
    );
    // An unsigned DLL added next to python.exe.
    let (scratch, _server) = tampered(|name, bytes| {
        if name == "cp312/extra.dll" {
            bytes.extend_from_slice(b"MZ not signed");
        }
        true
    });
    let run = xtask(&scratch, &args);
    assert_exit(
        &run,
        2,
        &[
            "extra.dll in python-embed 3.12.0 (sdist: python.org's embeddable CPython 3.12.9): it carries no valid Authenticode signature",
        ],
    );
}

#[test]
fn wine_missing_or_a_folder_that_is_not_ours_stops_before_any_work() {
    if !tools_present() {
        return;
    }
    let scratch = Scratch::new();
    let dir = tempfile::tempdir().unwrap();
    let wheel = dir
        .path()
        .join("ctranslate2-4.7.1+cpu-cp312-cp312-win_amd64.whl");
    fs::write(&wheel, "not opened before the checks").unwrap();
    // A PATH with python3 only: no wine.
    let bin = dir.path().join("bin");
    fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(
        ct2v_support::host::which("python3").unwrap(),
        bin.join("python3"),
    )
    .unwrap();
    let run = common::xtask_with_env(
        scratch.path(),
        &["verify", "--wheel", wheel.to_str().unwrap()],
        &[("PATH", bin.to_str().unwrap())],
        &[],
    );
    assert_exit(
        &run,
        1,
        &["`wine` is not installed", "apt-get install wine"],
    );
    // A folder where the check's wine prefix goes that this tool did not make: refused, kept.
    let prefix = scratch
        .path()
        .join("target/xtask/cpu/windows-x86_64/wine/verify-py3.12/prefix");
    fs::create_dir_all(&prefix).unwrap();
    fs::write(prefix.join("mine.txt"), "a user's file").unwrap();
    let run = xtask(&scratch, &["verify", "--wheel", wheel.to_str().unwrap()]);
    assert_exit(
        &run,
        2,
        &[
            "is not a wine prefix this tool made",
            "verify-py3.12/prefix",
        ],
    );
    assert_eq!(
        fs::read_to_string(prefix.join("mine.txt")).unwrap(),
        "a user's file"
    );
}

/// A wine prefix a killed check left (its marker names it) is stopped and removed, and said;
/// a copy of one elsewhere (the marker names another folder) is refused and kept.
#[test]
fn a_killed_checks_wine_prefix_is_removed_and_a_copy_of_one_is_not() {
    use ct2v_proof::winpython::wine::Wine;
    use ct2v_support::staging;
    if !tools_present() {
        return;
    }
    let scratch = Scratch::new();
    let workspace =
        ct2v_support::workspace::Workspace::locate(Some(scratch.path().to_path_buf()), None)
            .unwrap();
    let wine_dir = scratch.path().join("target/xtask/cpu/windows-x86_64/wine");
    let left = wine_dir.join("verify-py3.12/prefix");
    fs::create_dir_all(left.join("drive_c")).unwrap();
    staging::mark(&left).unwrap();
    fs::write(left.join("drive_c/half-made.txt"), "from the killed run").unwrap();
    let copy = wine_dir.join("copied/prefix");
    fs::create_dir_all(copy.parent().unwrap()).unwrap();
    ct2v_support::fsx::copy_tree(&left, &copy).unwrap();

    let reporter = Reporter::captured();
    let wine = Wine::start(&workspace, &left, &reporter).unwrap();
    assert!(
        !left.join("drive_c/half-made.txt").exists(),
        "the leftover is gone"
    );
    assert!(
        reporter.said().err.starts_with(&format!(
            "removing the wine prefix {}, left by an interrupted run\n",
            left.display()
        )),
        "{:?}",
        reporter.said()
    );
    assert!(staging::marked(&left), "the new prefix is marked as ours");
    assert!(
        left.join("drive_c/windows/system32/bcryptprimitives.dll")
            .is_file()
    );
    drop(wine);

    let refused = Wine::start(&workspace, &copy, &reporter)
        .err()
        .expect("a copy is not ours");
    assert!(
        format!("{refused:#}").contains("is not a wine prefix this tool made"),
        "{refused:#}"
    );
    assert_eq!(
        fs::read_to_string(copy.join("drive_c/half-made.txt")).unwrap(),
        "from the killed run",
        "kept"
    );
}

/// Wine 8's first boot of a prefix can fail on a loaded machine ("could not load kernel32.dll,
/// status c0000135", seen once in CI): the prefix is made again, once, and the check goes on.
#[test]
fn a_prefix_whose_first_boot_fails_is_made_again_once() {
    needs_network!(HOSTS);
    if !tools_present() {
        return;
    }
    let scratch = Scratch::new();
    let dir = tempfile::tempdir().unwrap();
    let failed_once = dir.path().join("failed-once");
    let bin = dir.path().join("bin");
    fs::create_dir_all(&bin).unwrap();
    let real = ct2v_support::host::which("wine").unwrap();
    common::write_script(
        &bin.join("wine"),
        &format!(
            "#!/bin/sh\n\
             if [ \"$1\" = wineboot ] && [ ! -e '{flag}' ]; then\n  \
               touch '{flag}'\n  \
               echo 'wine: could not load kernel32.dll, status c0000135' >&2\n  \
               exit 53\n\
             fi\n\
             exec '{real}' \"$@\"\n",
            flag = failed_once.display(),
            real = real.display()
        ),
    );
    let wheel = dir
        .path()
        .join("ctranslate2-4.7.1+cpu-cp312-cp312-win_amd64.whl");
    fs::write(&wheel, "not a zip: pip in the Windows Python refuses it").unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let cache = cache();
    let run = common::xtask_with_env(
        scratch.path(),
        &[
            "--cache-dir",
            &cache,
            "verify",
            "--wheel",
            wheel.to_str().unwrap(),
        ],
        &[("PATH", path.as_str())],
        &[],
    );
    assert_exit(
        &run,
        1,
        &[
            "could not load kernel32.dll",
            "trying once more in a new one",
            "is invalid",
        ],
    );
    assert!(failed_once.exists(), "the first boot was the failing one");
    assert!(
        !scratch
            .path()
            .join("target/xtask/cpu/windows-x86_64/wine/verify-py3.12/prefix")
            .exists(),
        "the prefix is removed when the check ends"
    );
}
