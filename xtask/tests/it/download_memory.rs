//! A large input costs disk, not memory: `pin` (a download with no pin yet, then the check of
//! what it is) and `fetch` (a pinned download) hash the body as it streams into the cache, so
//! the peak memory of the process is the same for a 1 MiB input as for a 256 MiB one. ROCm 10's
//! device wheels are ~380 MB each and `rocm-sdk-core` ~758 MB: a whole file read into memory
//! would cost that much RAM on a 16 GB runner.

use crate::common;

use std::process::Command;
use std::sync::Arc;

use common::server::Server;
use common::{Run, Scratch};

use crate::fetch_pin::{CT2_URL_PATH, mirror, scratch_pinned_to, sha256};

const MIB: usize = 1 << 20;
/// The body of the large input: far above every buffer the download uses (1 MiB each).
const LARGE: usize = 256 * MIB;
/// What the peak may grow from the small input's to the large one's: a fraction of the
/// large body, so that holding the file (or any large part of it) fails the test.
const GROWTH_ALLOWED_KIB: u64 = 48 * 1024;

/// Runs python3 as the parent of xtask: its `RUSAGE_CHILDREN` is xtask's own peak resident
/// size (Linux reports `ru_maxrss` in KiB, getrusage(2)), printed as the last stderr line.
const PEAK_OF_CHILD: &str = "import resource, subprocess, sys\n\
code = subprocess.run(sys.argv[1:]).returncode\n\
print('peak_rss_kib=%d' % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n\
sys.exit(code)\n";

/// `xtask ARGS` in `scratch`, and its peak resident size in KiB.
fn with_peak(scratch: &Scratch, args: &[&str]) -> (Run, u64) {
    let mut command = Command::new("python3");
    command
        .args(["-c", PEAK_OF_CHILD, env!("CARGO_BIN_EXE_xtask"), "--root"])
        .arg(scratch.path());
    let run = common::output_of(command, args, &[], &[]);
    let peak = run
        .stderr
        .lines()
        .last()
        .and_then(|l| l.strip_prefix("peak_rss_kib="))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no peak line:\n{}", run.stderr));
    (run, peak)
}

/// A `.crate` (gzip-compressed tar, stored: level 0 keeps it as large as its data) of `len`
/// bytes that do not repeat within a buffer.
fn large_crate(len: usize) -> Arc<Vec<u8>> {
    let data: Vec<u8> = (0..len as u64)
        .map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8)
        .collect();
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::none());
    let mut tar = tar::Builder::new(gz);
    let mut header = tar::Header::new_gnu();
    header.set_size(data.len() as u64);
    header.set_mode(0o644);
    tar.append_data(&mut header, "pkg/data.bin", data.as_slice())
        .unwrap();
    Arc::new(tar.into_inner().unwrap().finish().unwrap())
}

/// The peaks of `pin` (the input unpinned) and of `fetch` (pinned, empty cache) for a
/// CTranslate2 source of `body`.
fn peaks_for(body: Arc<Vec<u8>>) -> (u64, u64) {
    let onednn = large_crate(64 * 1024);
    let server = Server::start();
    server.serve(CT2_URL_PATH, body.clone());
    server.serve(crate::fetch_pin::ONEDNN_URL_PATH, onednn.clone());
    let mirror = mirror(&server);

    // pin: the source has no pin yet; it is downloaded, hashed and checked.
    let scratch = scratch_pinned_to(&body, &onednn);
    let version = "variants/ctranslate2/4.7.1.toml";
    scratch.edit(
        version,
        &format!("sha256 = \"{}\"\nsize = {}\n", sha256(&body), body.len()),
        "",
    );
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().to_str().unwrap();
    let args = [
        "--cache-dir",
        cache_dir,
        "pin",
        "--variant",
        "cpu",
        "--mirror",
        &mirror,
    ];
    let (pin, pin_peak) = with_peak(&scratch, &args);
    assert_eq!(pin.code, 0, "{}\n{}", pin.stdout, pin.stderr);
    let written = std::fs::read_to_string(scratch.path().join(version)).unwrap();
    assert!(written.contains(&sha256(&body)), "{written}");
    drop(cache);

    // fetch: the pinned download into an empty cache.
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().to_str().unwrap();
    let args = crate::fetch_pin::fetch_args(cache_dir, &mirror, &[]);
    let (fetch, fetch_peak) = with_peak(&scratch, &args);
    assert_eq!(fetch.code, 0, "{}\n{}", fetch.stdout, fetch.stderr);
    let cached = cache.path().join("sha256").join(sha256(&body));
    assert_eq!(std::fs::metadata(&cached).unwrap().len(), body.len() as u64);
    (pin_peak, fetch_peak)
}

#[test]
fn pin_and_fetch_hash_a_large_input_as_it_streams_in_bounded_memory() {
    let (small_pin, small_fetch) = peaks_for(large_crate(MIB));
    let (large_pin, large_fetch) = peaks_for(large_crate(LARGE));
    for (what, small, large) in [
        ("pin", small_pin, large_pin),
        ("fetch", small_fetch, large_fetch),
    ] {
        eprintln!("{what}: peak {small} KiB for 1 MiB, {large} KiB for 256 MiB");
        assert!(
            large < small + GROWTH_ALLOWED_KIB,
            "{what}: peak resident size {large} KiB for a 256 MiB input against {small} KiB \
             for 1 MiB: memory grows with the file"
        );
    }
}
