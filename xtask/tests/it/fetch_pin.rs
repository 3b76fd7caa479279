//! `cargo xtask fetch` and `cargo xtask pin` as a maintainer runs them, against a loopback
//! server standing in for crates.io (through `--mirror`), on a scratch copy of the variants.

use crate::common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::server::{Reply, Server};
use common::windows_exe::{WinXtask, win};
use common::{Run, Scratch, fetch_cpu_args, xtask_in};
use sha2::{Digest, Sha256};

pub(crate) const CT2_URL_PATH: &str = "/crates/ct2rs/ct2rs-0.9.17.crate";
pub(crate) const ONEDNN_URL_PATH: &str = "/crates/onednn-src/onednn-src-0.1.0.crate";
const CT2_SHA: &str = "616201b950832f4dd5fe95fd34fb557e3187233641235a5bb98f9432fe513bb1";
const ONEDNN_SHA: &str = "c9422f8af979ab9dca0fc4b58677897208c591a7dddb34bd3bf3963aa4255f21";

pub(crate) fn bytes(len: usize, seed: u8) -> Arc<Vec<u8>> {
    Arc::new(
        (0..len)
            .map(|i| {
                (i as u32)
                    .wrapping_mul(2_654_435_761)
                    .rotate_left(u32::from(seed)) as u8
            })
            .collect(),
    )
}

/// A real `.crate` (a gzip-compressed tar) holding `data`: `pin` refuses anything else.
fn crate_of(data: &[u8]) -> Arc<Vec<u8>> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    let mut header = tar::Header::new_gnu();
    header.set_size(data.len() as u64);
    header.set_mode(0o644);
    tar.append_data(&mut header, "pkg/data.bin", data).unwrap();
    Arc::new(tar.into_inner().unwrap().finish().unwrap())
}

/// A real zip (a wheel, a release asset) holding `data`.
pub(crate) fn zip_of(data: &[u8]) -> Arc<Vec<u8>> {
    use std::io::Write;
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    zip.start_file("pkg/data.bin", options).unwrap();
    zip.write_all(data).unwrap();
    Arc::new(zip.finish().unwrap().into_inner())
}

/// A real wheel holding `data` as `pkg/data.bin`, with the RECORD that lists its files.
pub(crate) fn wheel_of(data: &[u8]) -> Arc<Vec<u8>> {
    Arc::new(wheel_with(&[("pkg/data.bin", data)], |_| {}))
}

/// A wheel of `files` and its RECORD, whose lines `edit` may change first.
pub(crate) fn wheel_with(files: &[(&str, &[u8])], edit: impl FnOnce(&mut Vec<String>)) -> Vec<u8> {
    use std::io::Write;
    let record = "pkg-1.0.dist-info/RECORD";
    let mut lines: Vec<String> = files
        .iter()
        .map(|(name, data)| {
            let hash = ct2v_bundle::wheel::record_hash(data);
            format!("{name},{hash},{}", data.len())
        })
        .collect();
    lines.push(format!("{record},,"));
    edit(&mut lines);
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    for (name, data) in files {
        zip.start_file(*name, options).unwrap();
        zip.write_all(data).unwrap();
    }
    zip.start_file(record, options).unwrap();
    zip.write_all((lines.join("\n") + "\n").as_bytes()).unwrap();
    zip.finish().unwrap().into_inner()
}

pub(crate) fn sha256(data: &[u8]) -> String {
    ct2v_fetch::cache::hex(&Sha256::digest(data))
}

/// The scratch variants with the crates.io pins replaced by those of synthetic files (and
/// without MKL, whose wheels come from PyPI, not from the loopback crates.io mirror).
pub(crate) fn scratch_pinned_to(ct2: &[u8], onednn: &[u8]) -> Scratch {
    let scratch = Scratch::new();
    scratch.edit(
        "variants/cpu.toml",
        "\nmkl.enabled = true",
        "\nmkl.enabled = false",
    );
    let defaults = "variants/defaults.toml";
    let version = "variants/ctranslate2/4.7.1.toml";
    scratch.edit(version, CT2_SHA, &sha256(ct2));
    scratch.edit(version, "size = 6151405", &format!("size = {}", ct2.len()));
    scratch.edit(defaults, ONEDNN_SHA, &sha256(onednn));
    scratch.edit(
        defaults,
        "size = 8205358",
        &format!("size = {}", onednn.len()),
    );
    scratch
}

pub(crate) fn mirror(server: &Server) -> String {
    format!("https://static.crates.io/crates/={}/crates/", server.base())
}

pub(crate) fn fetch_args<'a>(cache: &'a str, mirror: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = fetch_cpu_args(cache, "linux-x86_64", &["--mirror", mirror]);
    args.extend_from_slice(extra);
    args
}

fn pin_cpu(scratch: &Scratch, cache: &str, mirror: &str) -> Run {
    let args = [
        "--cache-dir",
        cache,
        "pin",
        "--variant",
        "cpu",
        "--mirror",
        mirror,
    ];
    xtask_in(scratch.path(), &args)
}

fn assert_ok(run: &Run) {
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
}

/// The Windows program finished (its last line, the summary, is out) and then the Unix process
/// wine runs it in died of SIGSEGV (exit 139): a crash of wine's own code at process exit, which
/// a crash of the program could not cause (wine turns a Windows access violation into an exit
/// code, not a signal). Everything the fetch did is still checked after.
fn ended_by_wine_after_success(run: &Run) -> bool {
    run.code == 128 + 11
        && run
            .stderr
            .lines()
            .last()
            .is_some_and(|l| l.contains("input(s) verified"))
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

#[test]
fn a_fetch_killed_mid_download_resumes_on_the_next_run() {
    killed_fetch_resumes(None);
}

/// The same with `xtask.exe` under wine (the part file, the Range request and the
/// lock on Windows), the cache shared with nothing else.
#[test]
fn the_windows_binary_killed_mid_download_resumes_on_the_next_run() {
    let Some(wine) = WinXtask::new() else {
        return;
    };
    killed_fetch_resumes(Some(&wine));
}

/// Starts a fetch of a trickled 24 MiB input, kills it (SIGKILL: no cleanup runs) once 2 MiB
/// are in the part file, and fetches again: the download resumes with a Range request.
/// `wine`: the Windows binary runs both fetches.
fn killed_fetch_resumes(wine: Option<&WinXtask>) {
    let ct2 = bytes(24 << 20, 3);
    let onednn = bytes(100_000, 5);
    let scratch = scratch_pinned_to(&ct2, &onednn);
    let server = Server::start();
    let served = ct2.clone();
    // The first answer trickles (about 8 s for the whole file); later ones are fast.
    server.route(CT2_URL_PATH, move |_, nth| {
        let reply = Reply::ok(served.clone());
        if nth == 0 {
            reply.trickle(64 << 10, Duration::from_millis(20))
        } else {
            reply
        }
    });
    server.serve(ONEDNN_URL_PATH, onednn.clone());
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = match wine {
        Some(_) => win(cache.path()),
        None => cache.path().to_str().unwrap().to_string(),
    };
    let mirror = mirror(&server);
    let args = fetch_args(&cache_dir, &mirror, &[]);
    let (mut command, root) = match wine {
        Some(w) => (w.command(), win(scratch.path())),
        None => (
            Command::new(env!("CARGO_BIN_EXE_xtask")),
            scratch.path().to_str().unwrap().to_string(),
        ),
    };
    let mut child = command
        .arg("--root")
        .arg(&root)
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let part = cache
        .path()
        .join("partial")
        .join(format!("{}.part", sha256(&ct2)));
    let started = Instant::now();
    while file_len(&part) < 2 << 20 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the download never started"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "fetch ended before it was killed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL: no cleanup runs.
    child.wait().unwrap();
    let kept = file_len(&part);
    assert!(
        kept >= 2 << 20 && kept < ct2.len() as u64,
        "part file of {kept} bytes"
    );
    assert!(
        !cache.path().join("sha256").join(sha256(&ct2)).exists(),
        "nothing unverified is in the cache"
    );

    let run = match wine {
        Some(w) => w.run(scratch.path(), &args, &[]),
        None => xtask_in(scratch.path(), &args),
    };
    if wine.is_some() && ended_by_wine_after_success(&run) {
        eprintln!(
            "note: wine's own process ended by SIGSEGV after xtask.exe printed its summary \
             (seen twice in CI under load, never alone); the fetch itself is checked below"
        );
    } else {
        assert_ok(&run);
    }
    let hits = server.hits(CT2_URL_PATH);
    let resumed_at = hits.last().unwrap().range_start.expect("a range request");
    assert!(resumed_at >= 2 << 20, "resumed at {resumed_at}");
    let cached = cache.path().join("sha256").join(sha256(&ct2));
    assert_eq!(std::fs::read(cached).unwrap(), *ct2);
    assert!(run.stderr.contains("resumed at"), "{}", run.stderr);
    assert!(!part.exists());
}

#[test]
fn a_server_serving_other_bytes_fails_the_fetch_with_both_hashes() {
    let ct2 = bytes(200_000, 1);
    let onednn = bytes(100_000, 2);
    let scratch = scratch_pinned_to(&ct2, &onednn);
    let server = Server::start();
    let other = bytes(200_000, 9);
    server.serve(CT2_URL_PATH, other.clone());
    server.serve(ONEDNN_URL_PATH, onednn.clone());
    let cache = tempfile::tempdir().unwrap();
    let mirror = mirror(&server);
    let run = xtask_in(
        scratch.path(),
        &fetch_args(cache.path().to_str().unwrap(), &mirror, &[]),
    );
    common::assert_exit(
        &run,
        1,
        &[
            "ctranslate2-source",
            &sha256(&ct2),
            &sha256(&other),
            "does not match its pin",
        ],
    );
    assert!(!cache.path().join("sha256").join(sha256(&ct2)).exists());
    assert!(!cache.path().join("sha256").join(sha256(&other)).exists());
}

#[test]
fn offline_with_an_empty_cache_lists_what_is_missing_and_exits_1() {
    let cache = tempfile::tempdir().unwrap();
    let run = common::xtask(&fetch_cpu_args(
        cache.path().to_str().unwrap(),
        "windows-x86_64",
        &["--offline"],
    ));
    common::assert_exit(
        &run,
        1,
        &[
            "offline: 6 input(s) are not in the cache",
            "ctranslate2-source",
            "onednn",
            "intel-openmp",
            "mkl-static",
            "mkl-include",
            "msvc-runtime",
            "https://static.crates.io/crates/ct2rs/ct2rs-0.9.17.crate",
        ],
    );
    assert!(run.stdout.is_empty());
}

#[test]
fn plain_http_mirrors_to_other_hosts_are_refused() {
    let cache = tempfile::tempdir().unwrap();
    let run = common::xtask(&fetch_args(
        cache.path().to_str().unwrap(),
        "https://static.crates.io/=http://mirror.example.com/",
        &[],
    ));
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("over plain http"), "{}", run.stderr);
    assert!(run.stderr.contains("--allow-http"), "{}", run.stderr);
}

#[test]
fn a_bad_mirror_flag_is_a_usage_error() {
    let run = common::xtask(&["fetch", "--variant", "cpu", "--mirror", "no-equals-sign"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("is neither FROM=TO"), "{}", run.stderr);
}

#[test]
fn pin_writes_a_missing_pin_into_the_variant_file_and_the_lock() {
    let scratch = Scratch::new();
    let defaults = "variants/ctranslate2/4.7.1.toml";
    scratch.edit(
        defaults,
        &format!("sha256 = \"{CT2_SHA}\"\nsize = 6151405\n"),
        "",
    );
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().to_str().unwrap();
    let server = Server::start();
    let ct2 = crate_of(&bytes(300_000, 7));
    server.serve(CT2_URL_PATH, ct2.clone());
    let mirror = mirror(&server);

    let unpinned = xtask_in(scratch.path(), &fetch_args(cache_dir, &mirror, &[]));
    assert_eq!(unpinned.code, 1, "{}", unpinned.stderr);
    assert!(
        unpinned.stderr.contains("not pinned")
            && unpinned.stderr.contains("cargo xtask pin --variant cpu"),
        "{}",
        unpinned.stderr
    );

    let run = pin_cpu(&scratch, cache_dir, &mirror);
    assert_ok(&run);
    assert!(run.stdout.contains("ctranslate2-source"), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("pinned in variants/ctranslate2/4.7.1.toml"),
        "{}",
        run.stdout
    );
    // The other inputs' pins were taken from their URLs already: no download.
    assert!(run.stdout.contains("onednn") && run.stdout.contains("confirmed by the lock"));

    let text = std::fs::read_to_string(scratch.path().join(defaults)).unwrap();
    let source_table = text
        .split("\n[source]\n")
        .nth(1)
        .unwrap()
        .split("\n[")
        .next()
        .unwrap();
    for line in [
        format!("sha256 = \"{}\"", sha256(&ct2)),
        format!("size = {}", ct2.len()),
    ] {
        assert!(
            source_table.contains(&line),
            "`{line}` in [source]:\n{text}"
        );
    }
    assert!(
        text.contains("# CTranslate2 4.7.1 with every submodule"),
        "comments kept"
    );
    let lock = std::fs::read_to_string(scratch.path().join("variants/pins.lock")).unwrap();
    assert!(lock.contains(&sha256(&ct2)), "{lock}");

    // Plans now carry the pin, and a second `pin` has nothing to do.
    let plan = xtask_in(scratch.path(), &["plan", "--variant", "cpu", "--json"]);
    assert_ok(&plan);
    assert!(plan.stdout.contains(&sha256(&ct2)), "{}", plan.stdout);
    let again = pin_cpu(&scratch, cache_dir, &mirror);
    assert_ok(&again);
    assert!(!again.stdout.contains("pinned in"), "{}", again.stdout);
    assert_eq!(
        server.hits(CT2_URL_PATH).len(),
        1,
        "pinned once, confirmed after"
    );
}

#[test]
fn pin_downloads_again_when_a_url_changes() {
    let scratch = Scratch::new();
    let defaults = "variants/defaults.toml";
    scratch.edit(defaults, "onednn-src-0.1.0.crate", "onednn-src-0.1.1.crate");
    let server = Server::start();
    let newer = crate_of(&bytes(150_000, 11));
    server.serve("/crates/onednn-src/onednn-src-0.1.1.crate", newer.clone());
    let cache = tempfile::tempdir().unwrap();
    let run = pin_cpu(&scratch, cache.path().to_str().unwrap(), &mirror(&server));
    assert_ok(&run);
    assert!(
        run.stderr.contains("onednn changed"),
        "the old pin is reported: {}",
        run.stderr
    );
    let text = std::fs::read_to_string(scratch.path().join(defaults)).unwrap();
    assert!(text.contains(&sha256(&newer)), "{text}");
    assert!(text.contains(&format!("size = {}", newer.len())), "{text}");
    assert!(!text.contains(ONEDNN_SHA), "{text}");
}

/// The loopback "repo.amd.com" and GitHub of the rocm 4.8.4 inputs: a PEP 503 page per SDK
/// project (links relative to the page, with `#sha256=` as TheRock's index pages give them)
/// and the official zip. Returns the server, the mirror flags and the two SDK wheels' bytes.
/// The server, the `--mirror` flags, and the bytes of the two SDK wheels.
pub(crate) type AmdIndex = (Server, Vec<String>, Arc<Vec<u8>>, Arc<Vec<u8>>);

/// The GPU targets of the rocm variant (variants/rocm.toml).
const ROCM_TARGETS: [&str; 8] = [
    "gfx1030", "gfx1100", "gfx1101", "gfx1102", "gfx1150", "gfx1151", "gfx1200", "gfx1201",
];

fn amd_index(core_digest: Option<&str>) -> AmdIndex {
    amd_index_serving(core_digest, |archive| archive)
}

/// [`amd_index`], each archive served as `served` makes it (the pages list what is served).
pub(crate) fn amd_index_serving(
    core_digest: Option<&str>,
    served: impl Fn(Arc<Vec<u8>>) -> Arc<Vec<u8>>,
) -> AmdIndex {
    let server = Server::start();
    let core = served(wheel_of(&bytes(120_000, 3)));
    let libraries = served(wheel_of(&bytes(90_000, 5)));
    let page = |file: &str, sha: &str, other: &str| {
        format!(
            "<!DOCTYPE html><html><body>\n\
             <a href=\"../../core/{other}\">{other}</a><br/>\n\
             <a href=\"../../core/{file}#sha256={sha}\">{file}</a><br/>\n\
             </body></html>\n"
        )
    };
    let core_sha = core_digest.map_or_else(|| sha256(&core), str::to_string);
    server.serve(
        "/amd/rocm/whl-next/rocm-sdk-core/",
        Arc::new(
            page(
                "rocm_sdk_core-10.0.0-py3-none-win_amd64.whl",
                &core_sha,
                "rocm_sdk_core-10.0.0-py3-none-linux_x86_64.whl",
            )
            .into_bytes(),
        ),
    );
    server.serve(
        "/amd/rocm/whl-next/rocm-sdk-libraries/",
        Arc::new(
            page(
                "rocm_sdk_libraries-10.0.0-py3-none-win_amd64.whl",
                &sha256(&libraries),
                "rocm_sdk_libraries-9.0.0-py3-none-win_amd64.whl",
            )
            .into_bytes(),
        ),
    );
    server.serve(
        "/amd/rocm/core/rocm_sdk_core-10.0.0-py3-none-win_amd64.whl",
        core.clone(),
    );
    server.serve(
        "/amd/rocm/core/rocm_sdk_libraries-10.0.0-py3-none-win_amd64.whl",
        libraries.clone(),
    );
    // One device wheel per target rocm keeps (`[variant.rocm.device-wheels]`).
    for target in ROCM_TARGETS {
        let file = format!("rocm_sdk_device_{target}-10.0.0-py3-none-win_amd64.whl");
        let wheel = served(wheel_of(target.as_bytes()));
        server.serve(
            &format!("/amd/rocm/whl-next/rocm-sdk-device-{target}/"),
            Arc::new(
                page(
                    &file,
                    &sha256(&wheel),
                    &format!("rocm_sdk_device_{target}-10.0.0-py3-none-linux_x86_64.whl"),
                )
                .into_bytes(),
            ),
        );
        server.serve(&format!("/amd/rocm/core/{file}"), wheel);
    }
    server.serve(
        "/github/OpenNMT/CTranslate2/releases/download/v4.8.4/rocm-python-wheels-Windows.zip",
        served(zip_of(&bytes(40_000, 9))),
    );
    let mirrors = vec![
        "--mirror".to_string(),
        format!("https://stable.repo.amd.com/={}/amd/", server.base()),
        "--mirror".to_string(),
        format!("https://github.com/={}/github/", server.base()),
    ];
    (server, mirrors, core, libraries)
}

pub(crate) fn pin_rocm_484(scratch: &Scratch, cache: &str, mirrors: &[String]) -> Run {
    let mut args = vec![
        "--cache-dir",
        cache,
        "pin",
        "--variant",
        "rocm",
        "--ctranslate2",
        "4.8.4",
    ];
    args.extend(mirrors.iter().map(String::as_str));
    xtask_in(scratch.path(), &args)
}

#[test]
fn pin_finds_an_sdk_wheel_on_its_index_and_writes_its_url_and_pin() {
    let scratch = Scratch::new();
    let cache = tempfile::tempdir().unwrap();
    let (server, mirrors, core, libraries) = amd_index(None);
    let version = "variants/ctranslate2/4.8.4.toml";
    let before = std::fs::read_to_string(scratch.path().join(version)).unwrap();
    let matrix = xtask_in(scratch.path(), &["matrix", "--ctranslate2", "4.8.4"]);
    assert!(
        matrix
            .stderr
            .contains("rocm 4.8.4 windows-x86_64 py3.12: inputs not pinned yet: ctranslate2-wheels, device-gfx1030, device-gfx1100, device-gfx1101, device-gfx1102, device-gfx1150, device-gfx1151, device-gfx1200, device-gfx1201, rocm-sdk-core, rocm-sdk-libraries"),
        "{}",
        matrix.stderr
    );

    let run = pin_rocm_484(&scratch, cache.path().to_str().unwrap(), &mirrors);
    assert_ok(&run);
    let text = std::fs::read_to_string(scratch.path().join(version)).unwrap();
    for (project, file, data) in [
        (
            "rocm-sdk-core",
            "rocm_sdk_core-10.0.0-py3-none-win_amd64.whl",
            &core,
        ),
        (
            "rocm-sdk-libraries",
            "rocm_sdk_libraries-10.0.0-py3-none-win_amd64.whl",
            &libraries,
        ),
    ] {
        let table = text
            .split(&format!("inputs.{project}]\n"))
            .nth(1)
            .unwrap()
            .split("\n[")
            .next()
            .unwrap();
        for line in [
            format!("url = \"https://stable.repo.amd.com/rocm/core/{file}\""),
            format!("sha256 = \"{}\"", sha256(data)),
            format!("size = {}", data.len()),
            "index = \"https://stable.repo.amd.com/rocm/whl-next/\"".to_string(),
        ] {
            assert!(table.contains(&line), "`{line}` in {project}:\n{table}");
        }
    }
    // Each device wheel got its own table beside [variant.rocm.device-wheels], for Windows.
    let doc: toml_edit::DocumentMut = text.parse().unwrap();
    for target in ROCM_TARGETS {
        let table = &doc["variant"]["rocm"]["platform"]["windows-x86_64"]["inputs"]
            [format!("device-{target}").as_str()];
        assert_eq!(
            table["url"].as_str(),
            Some(format!("https://stable.repo.amd.com/rocm/core/rocm_sdk_device_{target}-10.0.0-py3-none-win_amd64.whl").as_str()),
            "{text}"
        );
        assert_eq!(
            table["package"].as_str(),
            Some(format!("rocm-sdk-device-{target} 10.0.0").as_str())
        );
    }
    // Only pins were added: every line of the file before is still there, in order.
    let mut after = text.lines();
    for line in before.lines() {
        assert!(
            after.any(|l| l == line),
            "`{line}` is gone or moved:\n{text}"
        );
    }

    // The plan now names the wheels found, and the matrix takes rocm 4.8.4 in.
    let plan = xtask_in(
        scratch.path(),
        &[
            "plan",
            "--variant",
            "rocm",
            "--ctranslate2",
            "4.8.4",
            "--platform",
            "windows-x86_64",
        ],
    );
    assert_ok(&plan);
    assert!(
        plan.stdout
            .contains("Unpack rocm_sdk_core-10.0.0-py3-none-win_amd64.whl safely"),
        "{}",
        plan.stdout
    );
    let matrix = xtask_in(
        scratch.path(),
        &["matrix", "--ctranslate2", "4.8.4", "--json"],
    );
    assert_ok(&matrix);
    assert!(matrix.stdout.contains("\"rocm\""), "{}", matrix.stderr);
    assert_eq!(
        server
            .hits("/amd/rocm/core/rocm_sdk_core-10.0.0-py3-none-win_amd64.whl")
            .len(),
        1
    );
}

#[test]
fn an_index_whose_digest_differs_from_the_download_pins_nothing_for_that_wheel() {
    let scratch = Scratch::new();
    let cache = tempfile::tempdir().unwrap();
    let wrong = "cd".repeat(32);
    let (_server, mirrors, _, _) = amd_index(Some(&wrong));
    let version = "variants/ctranslate2/4.8.4.toml";
    let before = std::fs::read_to_string(scratch.path().join(version)).unwrap();
    let run = pin_rocm_484(&scratch, cache.path().to_str().unwrap(), &mirrors);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let all = format!("{}{}", run.stdout, run.stderr);
    assert!(
        all.contains(&format!("lists sha256 {wrong}"))
            && all.contains("rocm_sdk_core-10.0.0-py3-none-win_amd64.whl"),
        "{all}"
    );
    let after = std::fs::read_to_string(scratch.path().join(version)).unwrap();
    let core_table = after
        .split("inputs.rocm-sdk-core]\n")
        .nth(1)
        .unwrap()
        .split("\n[")
        .next()
        .unwrap();
    assert!(!core_table.contains("url ="), "{core_table}");
    assert!(after.len() >= before.len());
}

/// The variant files and the lock, byte for byte, to compare after a refused `pin`.
pub(crate) fn pinned_files(scratch: &Scratch) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for dir in ["variants", "variants/ctranslate2"] {
        for entry in std::fs::read_dir(scratch.path().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.is_file() {
                files.push((path.display().to_string(), std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

/// The scratch variants with the ct2rs crate's pin taken out, for `pin` to record.
fn scratch_without_the_crate_pin() -> Scratch {
    let scratch = Scratch::new();
    scratch.edit(
        "variants/ctranslate2/4.7.1.toml",
        &format!("sha256 = \"{CT2_SHA}\"\nsize = 6151405\n"),
        "",
    );
    scratch
}

#[test]
fn pin_refuses_a_page_served_as_the_file_and_writes_nothing() {
    let scratch = scratch_without_the_crate_pin();
    let before = pinned_files(&scratch);
    let server = Server::start();
    let page = "<!DOCTYPE html>\n<html><head><title>Service Unavailable</title></head></html>\n";
    let page = Arc::new(page.as_bytes().to_vec());
    server.route(CT2_URL_PATH, move |_, _| {
        Reply::ok(page.clone()).header("Content-Type", "text/html")
    });
    let cache = tempfile::tempdir().unwrap();
    let run = pin_cpu(&scratch, cache.path().to_str().unwrap(), &mirror(&server));
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains(
            "error: input `ctranslate2-source`: \
             https://static.crates.io/crates/ct2rs/ct2rs-0.9.17.crate answered with a page, \
             not the file: it starts with `<!DOCTYPE html>\\n<html>"
        ) && run.stderr.contains("nothing was written"),
        "{}",
        run.stderr
    );
    assert_eq!(server.hits(CT2_URL_PATH).len(), 1);
    assert!(
        pinned_files(&scratch) == before,
        "no variant file nor the lock changed"
    );
}

#[test]
fn pin_refuses_truncated_wheels_and_zips_and_writes_nothing() {
    let scratch = Scratch::new();
    let cache = tempfile::tempdir().unwrap();
    let cut = |archive: Arc<Vec<u8>>| Arc::new(archive[..archive.len() - 100].to_vec());
    let (_server, mirrors, core, _) = amd_index_serving(None, cut);
    let before = pinned_files(&scratch);
    let run = pin_rocm_484(&scratch, cache.path().to_str().unwrap(), &mirrors);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    for (input, url, kind) in [
        (
            "rocm-sdk-core",
            "https://stable.repo.amd.com/rocm/core/rocm_sdk_core-10.0.0-py3-none-win_amd64.whl",
            "a wheel (.whl)",
        ),
        (
            "rocm-sdk-libraries",
            "https://stable.repo.amd.com/rocm/core/rocm_sdk_libraries-10.0.0-py3-none-win_amd64.whl",
            "a wheel (.whl)",
        ),
        (
            "ctranslate2-wheels",
            "https://github.com/OpenNMT/CTranslate2/releases/download/v4.8.4/rocm-python-wheels-Windows.zip",
            "a zip archive (.zip)",
        ),
    ] {
        let line = format!("error: input `{input}`: {url} is not {kind}: ");
        assert!(run.stderr.contains(&line), "{line}\n{}", run.stderr);
    }
    let core_line = run
        .stderr
        .lines()
        .find(|l| l.starts_with("error: input `rocm-sdk-core`"))
        .unwrap();
    assert!(
        core_line.contains("zip directory does not read")
            && core_line.contains(&format!("({} bytes", core.len()))
            && core_line.contains("truncated or damaged download"),
        "{core_line}"
    );
    assert!(
        run.stderr
            .contains("input(s) could not be pinned; nothing was written"),
        "{}",
        run.stderr
    );
    assert!(
        pinned_files(&scratch) == before,
        "no variant file nor the lock changed"
    );
}

/// The scratch variants with rocm for one GPU target: one device wheel, a short `pin`.
pub(crate) fn one_target_scratch() -> Scratch {
    let scratch = Scratch::new();
    scratch.edit(
        "variants/rocm.toml",
        "gpu-targets = [\"gfx1030\", \"gfx1100\", \"gfx1101\", \"gfx1102\", \"gfx1150\", \"gfx1151\", \"gfx1200\", \"gfx1201\"]",
        "gpu-targets = [\"gfx1100\"]",
    );
    scratch
}

/// `pin` of rocm 4.8.4 for one GPU target, every archive the loopback index serves made by
/// `served` from the whole one.
fn pin_one_target_serving(served: impl Fn(Arc<Vec<u8>>) -> Arc<Vec<u8>>) -> (Run, Scratch) {
    let scratch = one_target_scratch();
    let cache = tempfile::tempdir().unwrap();
    let (_server, mirrors, _, _) = amd_index_serving(None, served);
    let run = pin_rocm_484(&scratch, cache.path().to_str().unwrap(), &mirrors);
    (run, scratch)
}

/// The first entry's data of a zip, with one byte in its middle flipped.
fn flipped_inside(archive: Arc<Vec<u8>>) -> Arc<Vec<u8>> {
    let mut bytes = archive.to_vec();
    let u16_at = |at: usize| usize::from(u16::from_le_bytes([bytes[at], bytes[at + 1]]));
    let start = 30 + u16_at(26) + u16_at(28);
    let size = u32::from_le_bytes(bytes[18..22].try_into().unwrap()) as usize;
    bytes[start + size / 2] ^= 0x40;
    Arc::new(bytes)
}

/// Each served wheel's data (`pkg/data.bin`) in a wheel whose RECORD `edit` changes; the
/// release zip as it is.
fn record_edited(edit: fn(&mut Vec<String>)) -> Box<Served> {
    Box::new(
        move |archive: Arc<Vec<u8>>| match archive.windows(6).any(|w| w == b"RECORD") {
            true => rewheeled(&archive, edit),
            false => archive,
        },
    )
}

/// The data a served wheel holds (`pkg/data.bin`), in a wheel whose RECORD `edit` changes.
fn rewheeled(archive: &[u8], edit: impl FnOnce(&mut Vec<String>)) -> Arc<Vec<u8>> {
    use std::io::Read;
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(archive)).unwrap();
    let mut data = Vec::new();
    zip.by_name("pkg/data.bin")
        .unwrap()
        .read_to_end(&mut data)
        .unwrap();
    Arc::new(wheel_with(&[("pkg/data.bin", &data)], edit))
}

/// RECORD's digest of no bytes.
const EMPTY_SHA256: &str = "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU";
const CORE_WHL: &str =
    "https://stable.repo.amd.com/rocm/core/rocm_sdk_core-10.0.0-py3-none-win_amd64.whl";
const RELEASE_ZIP: &str = "https://github.com/OpenNMT/CTranslate2/releases/download/v4.8.4/rocm-python-wheels-Windows.zip";

/// What the loopback index serves for an archive, made from the whole one.
type Served = dyn Fn(Arc<Vec<u8>>) -> Arc<Vec<u8>>;

/// A form of damage: its label, how it is served, and the lines (URL, what) it must get.
type DamageCase = (&'static str, Box<Served>, Vec<(&'static str, &'static str)>);

/// An archive damaged inside (an entry whose data fails its CRC or inflates to garbage, a
/// wheel whose RECORD leaves a file out, lists one that is not there, or gives another
/// digest or size) is refused with exit 2 naming the URL, the entry and what is wrong;
/// no variant file nor the lock changes.
#[test]
fn pin_refuses_archives_damaged_inside_naming_the_entry_and_writes_nothing() {
    let cases: Vec<DamageCase> = vec![
        (
            "a flipped byte",
            Box::new(flipped_inside),
            vec![
                (
                    CORE_WHL,
                    "is a damaged wheel: entry `pkg/data.bin`: its data does not read to its end",
                ),
                (
                    RELEASE_ZIP,
                    "is a damaged zip archive: entry `pkg/data.bin`: its data does not read to its end",
                ),
            ],
        ),
        (
            "a file RECORD leaves out",
            record_edited(|lines| {
                lines.remove(0);
            }),
            vec![(
                CORE_WHL,
                "is a damaged wheel: entry `pkg/data.bin`: `pkg/data.bin` is in the wheel but not in `pkg-1.0.dist-info/RECORD`",
            )],
        ),
        (
            "a file RECORD lists that is not there",
            record_edited(|lines| lines.push(format!("pkg/gone.dll,sha256={EMPTY_SHA256},0"))),
            vec![(
                CORE_WHL,
                "is a damaged wheel: `pkg-1.0.dist-info/RECORD` lists `pkg/gone.dll`, which is not in the wheel",
            )],
        ),
        (
            "another digest",
            record_edited(|lines| {
                let size = lines[0].rsplit(',').next().unwrap().to_string();
                lines[0] = format!("pkg/data.bin,sha256={EMPTY_SHA256},{size}");
            }),
            vec![(CORE_WHL, "entry `pkg/data.bin`: `pkg/data.bin` has sha256=")],
        ),
        (
            "another size",
            record_edited(|lines| lines[0].push('0')),
            vec![(
                CORE_WHL,
                "`pkg/data.bin` is 120000 bytes, where RECORD says 1200000",
            )],
        ),
    ];
    for (label, served, said) in cases {
        let (run, scratch) = pin_one_target_serving(served);
        let before_lock = scratch.path().join("variants/pins.lock");
        assert_eq!(run.code, 2, "{label}:\n{}\n{}", run.stdout, run.stderr);
        for (url, why) in said {
            let line = run
                .stderr
                .lines()
                .find(|l| l.contains(url) && l.contains(why))
                .unwrap_or_else(|| panic!("{label}: `{url}` `{why}` in\n{}", run.stderr));
            assert!(
                line.ends_with("Not pinned") && !line.contains("download it again"),
                "{label}: {line}"
            );
        }
        // The release zip, whole in all but the first case, is pinned beside them.
        assert!(
            run.stderr.contains("input(s) could not be pinned;"),
            "{label}: {}",
            run.stderr
        );
        let pinned =
            std::fs::read_to_string(scratch.path().join("variants/ctranslate2/4.8.4.toml"))
                .unwrap();
        assert!(!pinned.contains(CORE_WHL), "{label}: {pinned}");
        assert!(
            !before_lock.exists()
                || !std::fs::read_to_string(&before_lock)
                    .unwrap()
                    .contains(CORE_WHL),
            "{label}: the lock"
        );
    }
}

/// A 5 GiB archive bomb (a `.crate` of zeros, 5 MiB served) is refused as what it is,
/// after decoding no more than the unpacker's limit for its size, exit 2 and nothing
/// written (it was called "truncated or damaged, download it again").
#[test]
fn pin_names_an_archive_bomb_as_one_and_stops_at_the_limit() {
    let scratch = scratch_without_the_crate_pin();
    let before = pinned_files(&scratch);
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    let mut header = tar::Header::new_gnu();
    header.set_size(5 << 30);
    header.set_mode(0o644);
    let zeros = std::io::Read::take(std::io::repeat(0), 5 << 30);
    tar.append_data(&mut header, "pkg/zeros.bin", zeros)
        .unwrap();
    let bomb = Arc::new(tar.into_inner().unwrap().finish().unwrap());
    let server = Server::start();
    server.serve(CT2_URL_PATH, bomb.clone());
    let cache = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let run = pin_cpu(&scratch, cache.path().to_str().unwrap(), &mirror(&server));
    let took = started.elapsed();
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    let limit = (bomb.len() as u64 * 100).max(64 << 20);
    let said = format!(
        "error: input `ctranslate2-source`: https://static.crates.io/crates/ct2rs/ct2rs-0.9.17.crate \
         expands past the limit of {limit} bytes (stopped at entry `pkg/zeros.bin`): an archive \
         bomb or a larger archive than allowed"
    );
    assert!(run.stderr.contains(&said), "{said}\n{}", run.stderr);
    assert!(!run.stderr.contains("damaged"), "{}", run.stderr);
    assert!(
        pinned_files(&scratch) == before,
        "no variant file nor the lock changed"
    );
    eprintln!("a {} byte bomb of 5 GiB refused in {took:?}", bomb.len());
    assert!(took < Duration::from_secs(60), "{took:?}");
}
