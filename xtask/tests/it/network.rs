//! NETWORK TESTS: the real pins of the default variants, downloaded from the real registries
//! this project can reach (crates.io, PyPI), verified, and unpacked.
//!
//! They need https to static.crates.io and files.pythonhosted.org. Without it (or with
//! `CT2V_SKIP_NETWORK_TESTS=1`) each test is skipped and counted; under `CI=true` an unreachable
//! host fails it (common/network.rs).

use crate::common;
use crate::needs_network;
use ct2v_support::report::Reporter;

use std::path::Path;

use common::{fetch_cpu_args, xtask_in};
use ct2v_bundle::binary;
use ct2v_fetch::unpack::{self, ArchiveFormat, Limits};

/// The hosts the tests of this file download from.
const HOSTS: &[&str] = &["static.crates.io:443", "files.pythonhosted.org:443"];

fn cached(cache: &Path, sha256: &str) -> std::path::PathBuf {
    cache.join("sha256").join(sha256)
}

#[test]
fn the_real_cpu_pins_download_verify_and_unpack() {
    needs_network!(HOSTS);
    let cache = tempfile::tempdir().unwrap();
    let args = fetch_cpu_args(cache.path().to_str().unwrap(), "windows-x86_64", &[]);
    let run = xtask_in(&common::repo_root(), &args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("6 input(s) verified: 6 downloaded"),
        "{}",
        run.stderr
    );

    let again = xtask_in(&common::repo_root(), &args);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(
        again
            .stderr
            .contains("0 downloaded (0 B), 6 from the cache"),
        "{}",
        again.stderr
    );

    let out = tempfile::tempdir().unwrap();
    let ct2 = out.path().join("ctranslate2");
    unpack::unpack(
        &cached(
            cache.path(),
            "616201b950832f4dd5fe95fd34fb557e3187233641235a5bb98f9432fe513bb1",
        ),
        ArchiveFormat::TarGz,
        Some("ct2rs-0.9.17/CTranslate2"),
        &ct2,
        &Limits::default(),
        &Reporter::captured(),
    )
    .unwrap();
    for file in [
        "CMakeLists.txt",
        "include/ctranslate2/translator.h",
        "src/cuda/primitives.cu",
        "python/setup.py",
        "third_party/cpu_features/CMakeLists.txt",
        "third_party/spdlog/CMakeLists.txt",
        "third_party/ruy/CMakeLists.txt",
    ] {
        assert!(
            ct2.join(file).is_file(),
            "CTranslate2 4.7.1 source has {file}"
        );
    }
    let version = std::fs::read_to_string(ct2.join("python/ctranslate2/version.py")).unwrap();
    assert!(version.contains("4.7.1"), "{version}");

    let onednn = out.path().join("onednn");
    unpack::unpack(
        &cached(
            cache.path(),
            "c9422f8af979ab9dca0fc4b58677897208c591a7dddb34bd3bf3963aa4255f21",
        ),
        ArchiveFormat::TarGz,
        Some("onednn-src-0.1.0/oneDNN"),
        &onednn,
        &Limits::default(),
        &Reporter::captured(),
    )
    .unwrap();
    let cmake = std::fs::read_to_string(onednn.join("CMakeLists.txt")).unwrap();
    assert!(cmake.contains("DNNL"), "oneDNN's CMakeLists.txt");

    let openmp = out.path().join("openmp");
    unpack::unpack(
        &cached(
            cache.path(),
            "8ff899d01a41b92ffe0e618b221ea633127d16df726086082d381c431c31339d",
        ),
        ArchiveFormat::Zip,
        Some("intel_openmp-2025.3.0.data/data/Library"),
        &openmp,
        &Limits::default(),
        &Reporter::captured(),
    )
    .unwrap();
    assert!(openmp.join("lib/libiomp5md.lib").is_file());
    let dll = binary::read(&openmp.join("bin/libiomp5md.dll")).unwrap();
    assert!(dll.is_dll, "{dll:?}");
    assert_eq!(dll.machine, "x86_64");
    assert!(
        dll.imports
            .iter()
            .any(|i| i.eq_ignore_ascii_case("KERNEL32.dll")),
        "{:?}",
        dll.imports
    );

    // What CTranslate2's CMakeLists.txt links from MKL_ROOT/lib with MSVC (WITH_MKL,
    // OPENMP_RUNTIME=INTEL: mkl_core, mkl_intel_ilp64, mkl_intel_thread) and the header it looks
    // for in MKL_INCLUDE_DIR, at the roots defaults.toml gives; read from the zip's directory.
    for (sha256, members) in [
        (
            "df7274c5b5ccee7f9544f9744bb80b8e4b9801becd522c7972534053da36418f",
            &[
                "mkl_static-2026.2.0.data/data/Library/lib/mkl_core.lib",
                "mkl_static-2026.2.0.data/data/Library/lib/mkl_intel_ilp64.lib",
                "mkl_static-2026.2.0.data/data/Library/lib/mkl_intel_thread.lib",
            ][..],
        ),
        (
            "e07acc96c043de9e8c72ddfd624455ce58f077d6bd95db7854ab2bc4f7c323f5",
            &["mkl_include-2026.2.0.data/data/Library/include/mkl.h"][..],
        ),
    ] {
        let names = common::wheel::zip_names(&cached(cache.path(), sha256));
        for member in members {
            assert!(names.contains(*member), "{member} not in {sha256}");
        }
    }
}

/// A warm `fetch` (inputs and wheelhouse in the cache) touches no network:
/// run again in a network namespace of its own, with no interface up, it succeeds.
#[test]
fn a_warm_fetch_needs_no_network() {
    needs_network!(&[
        "static.crates.io:443",
        "files.pythonhosted.org:443",
        "pypi.org:443"
    ]);
    if common::skip::missing("unshare", "apt-get install util-linux (and run as root)") {
        return;
    }
    let args = ["fetch", "--variant", "cpu", "--python", "3.11"];
    let warm = common::xtask(&args);
    assert_eq!(warm.code, 0, "{}", warm.stderr);
    let output = std::process::Command::new("unshare")
        .arg("-n")
        .arg(env!("CARGO_BIN_EXE_xtask"))
        .arg("--root")
        .arg(common::repo_root())
        .args(args)
        .env_remove("CT2V_CACHE_DIR")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    if stderr.contains("unshare failed") {
        // Not root, or namespaces switched off: recorded as skipped (a failure under CI).
        let ci = std::env::var("CI").is_ok_and(|v| v == "true");
        common::skip::missing_in(
            "a network namespace (unshare -n)",
            "run the tests as root",
            ci,
            &common::skip::record_file(),
        );
        return;
    }
    assert!(output.status.success(), "offline: {stderr}");
}

/// A loopback "package index" that answers 404 to everything and counts the requests it got.
struct RecordingIndex {
    url: String,
    requests: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl RecordingIndex {
    fn start() -> RecordingIndex {
        use std::io::{BufRead, BufReader, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/simple/", listener.local_addr().unwrap());
        let requests = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut line = String::new();
                let _ = BufReader::new(&stream).read_line(&mut line);
                seen.lock().unwrap().push(line.trim_end().to_string());
                let _ = (&stream).write_all(
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
            }
        });
        RecordingIndex { url, requests }
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

/// `verify --offline` installs only from the cache's wheelhouse: with an index named the way
/// pip is otherwise pointed at one (PIP_INDEX_URL, PIP_EXTRA_INDEX_URL), a loopback server
/// standing in for it gets no request, and the check still passes from the cache (the
/// official 4.7.1 wheel standing in for a cpu build, as in speech.rs). `--numerics`, which
/// needs PyPI, is refused with `--offline` before any work.
#[test]
fn an_offline_verify_asks_no_index_and_passes_from_the_cache() {
    needs_network!(&["pypi.org:443", "files.pythonhosted.org:443"]);
    let scratch = common::Scratch::new();
    crate::speech::stand_in_build(&scratch);
    let python = format!("3.{}", crate::speech::python_minor());
    // What `fetch` puts into the wheelhouse for the verify venv (the wheel's runtime
    // requirements), downloaded here alone rather than with every cpu input.
    let wheelhouse = ct2v_fetch::wheelhouse::dir(
        &scratch.path().join("target/xtask/cache"),
        ct2v_support::platform::Platform::LinuxX86_64,
        &python,
    );
    common::run_ok(
        std::process::Command::new("python3")
            .args([
                "-m",
                "pip",
                "download",
                "--quiet",
                "--only-binary=:all:",
                "-d",
            ])
            .arg(&wheelhouse)
            .args(ct2v_fetch::wheelhouse::RUNTIME_REQUIREMENTS),
    );
    let index = RecordingIndex::start();
    // Every way this host's pip is pointed at an index: its variables, an http find-links and
    // a config file.
    let config = scratch.path().join("pip.conf");
    std::fs::write(
        &config,
        format!(
            "[global]\nindex-url = {0}\nextra-index-url = {0}\n",
            index.url
        ),
    )
    .unwrap();
    let env = [
        ("PIP_INDEX_URL", index.url.as_str()),
        ("PIP_EXTRA_INDEX_URL", index.url.as_str()),
        ("PIP_FIND_LINKS", index.url.as_str()),
        ("PIP_CONFIG_FILE", config.to_str().unwrap()),
        ("PIP_RETRIES", "0"),
        ("PIP_TIMEOUT", "5"),
    ];
    let verify = |extra: &[&str]| {
        let mut args = vec![
            "verify",
            "--variant",
            "cpu",
            "--python",
            &python,
            "--offline",
        ];
        args.extend_from_slice(extra);
        common::xtask_with_env(scratch.path(), &args, &env, &[])
    };
    let numerics = verify(&["--numerics"]);
    common::assert_exit(&numerics, 2, &["--numerics", "--offline"]);

    let run = verify(&[]);
    assert_eq!(
        index.requests(),
        Vec::<String>::new(),
        "the index was asked:\n{}",
        run.stderr
    );
    common::assert_exit(&run, 0, &["verified"]);
    assert!(run.stdout.contains("cpu compute types: "), "{}", run.stdout);
    assert_eq!(index.requests(), Vec::<String>::new());
}
