//! Downloads against a loopback server that misbehaves on purpose: dropped connections,
//! lies, 404, 5xx, stalls, a process killed mid-download. Whatever happens, nothing
//! unverified lands in the cache.

use crate::common;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use common::server::{Hit, Reply, Server};
use ct2v_fetch::cache::{Cache, Pin};
use ct2v_fetch::download::{self, FetchError, Fetched, InputFailure, Options, Request};
use sha2::{Digest, Sha256};

fn body(len: usize, seed: u8) -> Arc<Vec<u8>> {
    let mut state = u32::from(seed).wrapping_mul(2_654_435_761) | 1;
    Arc::new(
        (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                state as u8
            })
            .collect(),
    )
}

fn sha256(bytes: &[u8]) -> String {
    ct2v_fetch::cache::hex(&Sha256::digest(bytes))
}

fn request(name: &str, url: &str, bytes: &[u8]) -> Request {
    Request {
        name: name.to_string(),
        pin: Pin {
            url: url.to_string(),
            sha256: sha256(bytes),
            size: Some(bytes.len() as u64),
            file_name: url.rsplit('/').next().unwrap().to_string(),
        },
    }
}

fn options() -> Options {
    Options {
        progress: false,
        retries: 3,
        timeout: Duration::from_secs(2),
        ..Options::default()
    }
}

/// Names of the files under `dir` (recursively), for "nothing landed" checks.
fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&at) else {
            continue;
        };
        for entry in entries.flatten() {
            if entry.file_type().unwrap().is_dir() {
                stack.push(entry.path());
            } else {
                out.push(
                    entry
                        .path()
                        .strip_prefix(dir)
                        .unwrap()
                        .display()
                        .to_string(),
                );
            }
        }
    }
    out.sort();
    out
}

/// Cached files (not lock or part files).
fn verified_entries(cache: &Cache) -> Vec<String> {
    files_under(&cache.root().join("sha256"))
}

fn part_files(cache: &Cache) -> usize {
    files_under(&cache.partial_dir())
        .iter()
        .filter(|f| f.ends_with(".part"))
        .count()
}

/// A loopback server and an empty cache.
struct Case {
    server: Server,
    cache: Cache,
    _dir: tempfile::TempDir,
}

impl Case {
    fn new() -> Case {
        let dir = tempfile::tempdir().unwrap();
        Case {
            server: Server::start(),
            cache: Cache::new(dir.path()),
            _dir: dir,
        }
    }

    /// Fetches the file the server has at `path`, pinned to `pinned`, as input `path`.
    fn fetch(&self, path: &str, pinned: &[u8], options: &Options) -> Result<Fetched, FetchError> {
        let request = request(path, &self.server.url(path), pinned);
        download::fetch_all(&self.cache, &[request], options).map(|mut all| all.remove(0))
    }

    /// Fetches `path`, which must succeed with `data`; returns how many requests it took.
    fn fetch_ok(&self, path: &str, data: &[u8], options: &Options) -> usize {
        let fetched = self.fetch(path, data, options).unwrap();
        assert_eq!(std::fs::read(&fetched.path).unwrap(), data);
        assert_eq!(part_files(&self.cache), 0, "no part file is left");
        self.server.hits(path).len()
    }
}

/// Answers the first request with `first(reply)`, every later one with `reply`.
fn first_then(
    reply: Reply,
    first: impl Fn(Reply) -> Reply + Send + Sync + 'static,
) -> impl Fn(&Hit, usize) -> Reply + Send + Sync + 'static {
    move |_, nth| {
        if nth == 0 {
            first(reply.clone())
        } else {
            reply.clone()
        }
    }
}

fn with_timeout(millis: u64) -> Options {
    Options {
        timeout: Duration::from_millis(millis),
        ..options()
    }
}

#[test]
fn downloads_once_then_serves_from_the_cache() {
    let server = Server::start();
    let data = body(3 << 20, 1);
    server.serve("/a.whl", data.clone());
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::new(dir.path());
    let requests = [request("a", &server.url("/a.whl"), &data)];

    let first = download::fetch_all(&cache, &requests, &options()).unwrap();
    assert!(first[0].downloaded);
    assert_eq!(first[0].bytes, data.len() as u64);
    assert_eq!(std::fs::read(&first[0].path).unwrap(), *data);

    let second = download::fetch_all(&cache, &requests, &options()).unwrap();
    assert!(!second[0].downloaded);
    assert_eq!(second[0].path, first[0].path);
    assert_eq!(
        server.hits("/a.whl").len(),
        1,
        "the second fetch used no network"
    );
}

#[test]
fn resumes_with_a_range_request_after_the_connection_drops() {
    let case = Case::new();
    let data = body(4 << 20, 2);
    let half = data.len() / 2;
    case.server.route(
        "/big.tar.gz",
        first_then(Reply::ok(data.clone()), move |r| r.cut_after(half)),
    );
    assert_eq!(case.fetch_ok("/big.tar.gz", &data, &options()), 2);
    let hits = case.server.hits("/big.tar.gz");
    assert_eq!(hits[0].range_start, None);
    assert_eq!(
        hits[1].range_start,
        Some(half as u64),
        "resumed where it stopped"
    );
}

#[test]
fn a_server_ignoring_ranges_is_downloaded_again_from_zero() {
    let case = Case::new();
    let data = body(2 << 20, 3);
    let reply = Reply::ok(data.clone()).no_ranges();
    case.server
        .route("/x.zip", first_then(reply, |r| r.cut_after(1000)));
    assert_eq!(case.fetch_ok("/x.zip", &data, &options()), 2);
    assert_eq!(case.server.hits("/x.zip")[1].range_start, Some(1000));
}

#[test]
fn a_server_that_lies_is_caught_and_nothing_lands() {
    let case = Case::new();
    let pinned = body(1 << 20, 4);
    let served = body(1 << 20, 5);
    case.server.serve("/lie.crate", served.clone());
    let err = case.fetch("/lie.crate", &pinned, &options()).unwrap_err();
    let message = err.to_string();
    for needle in [
        "input `/lie.crate`",
        &case.server.url("/lie.crate"),
        &sha256(&pinned),
        &sha256(&served),
        "1048576 bytes",
        "cargo xtask pin",
    ] {
        assert!(message.contains(needle), "`{needle}` not in: {message}");
    }
    assert!(
        matches!(
            err,
            FetchError::Input {
                failure: InputFailure::Cache { .. },
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        case.server.hits("/lie.crate").len(),
        1,
        "a mismatch is not retried"
    );
    assert!(verified_entries(&case.cache).is_empty());
    assert_eq!(part_files(&case.cache), 0, "the bad download was deleted");
}

#[test]
fn not_found_fails_at_once_with_the_url() {
    let case = Case::new();
    let err = case.fetch("/missing.whl", b"x", &options()).unwrap_err();
    assert!(
        matches!(
            err,
            FetchError::Input {
                failure: InputFailure::Status { status: 404, .. },
                ..
            }
        ),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.contains(&case.server.url("/missing.whl")),
        "{message}"
    );
    assert!(
        message.contains("404") && message.contains("check the URL"),
        "{message}"
    );
    assert_eq!(
        case.server.hits("/missing.whl").len(),
        1,
        "a 404 is not retried"
    );
    assert!(verified_entries(&case.cache).is_empty());
}

#[test]
fn a_server_error_is_retried_until_it_succeeds() {
    let case = Case::new();
    let data = body(100_000, 6);
    let reply = Reply::ok(data.clone());
    case.server
        .route("/flaky.whl", first_then(reply, |_| Reply::status(500)));
    assert_eq!(case.fetch_ok("/flaky.whl", &data, &options()), 2);
}

#[test]
fn a_server_that_keeps_failing_is_given_up_after_the_retries() {
    let case = Case::new();
    case.server.route("/down.whl", |_, _| Reply::status(503));
    let options = Options {
        retries: 2,
        ..options()
    };
    let err = case.fetch("/down.whl", b"x", &options).unwrap_err();
    let gave_up = matches!(
        err,
        FetchError::Input {
            failure: InputFailure::Status {
                status: 503,
                attempts: 3,
                ..
            },
            ..
        }
    );
    assert!(gave_up, "{err:?}");
    assert!(err.to_string().contains("failed 3 time(s)"), "{err}");
    assert_eq!(case.server.hits("/down.whl").len(), 3);
}

#[test]
fn a_stalled_server_times_out_and_the_retry_succeeds() {
    let case = Case::new();
    let data = body(200_000, 7);
    let reply = Reply::ok(data.clone());
    let stall = |r: Reply| r.stall(Duration::from_secs(4));
    case.server.route("/stall.whl", first_then(reply, stall));
    assert_eq!(case.fetch_ok("/stall.whl", &data, &with_timeout(500)), 2);
}

#[test]
fn a_slow_but_steady_server_is_not_cut_off() {
    let case = Case::new();
    let data = body(512 << 10, 8);
    // 16 pieces 60 ms apart: ~1 s in all, longer than the 500 ms timeout, each gap shorter.
    let reply = Reply::ok(data.clone()).trickle(32 << 10, Duration::from_millis(60));
    case.server.route("/slow.whl", move |_, _| reply.clone());
    assert_eq!(case.fetch_ok("/slow.whl", &data, &with_timeout(500)), 1);
}

#[test]
fn a_corrupted_cache_entry_is_deleted_and_downloaded_again() {
    let server = Server::start();
    let data = body(300_000, 9);
    server.serve("/c.crate", data.clone());
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::new(dir.path());
    let requests = [request("c", &server.url("/c.crate"), &data)];
    let path = download::fetch_all(&cache, &requests, &options()).unwrap()[0]
        .path
        .clone();

    let mut bytes = std::fs::read(&path).unwrap();
    bytes[1234] ^= 0xff;
    std::fs::write(&path, bytes).unwrap();

    let again = download::fetch_all(&cache, &requests, &options()).unwrap();
    assert!(
        again[0].downloaded,
        "the corrupt file was replaced by a new download"
    );
    assert_eq!(std::fs::read(&again[0].path).unwrap(), *data);
    assert_eq!(server.hits("/c.crate").len(), 2);
}

#[test]
fn several_files_download_in_parallel_and_shared_pins_download_once() {
    let server = Server::start();
    let bodies: Vec<_> = (0..4).map(|i| body(256 << 10, 20 + i)).collect();
    let mut requests = Vec::new();
    for (i, data) in bodies.iter().enumerate() {
        let path = format!("/p{i}.whl");
        server.serve(&path, data.clone());
        requests.push(request(&format!("p{i}"), &server.url(&path), data));
    }
    // A second input with the same pin as p0 (the same file under another name).
    requests.push(request("p0-again", &server.url("/p0.whl"), &bodies[0]));
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::new(dir.path());
    let fetched = download::fetch_all(&cache, &requests, &options()).unwrap();
    assert_eq!(fetched.len(), 5);
    for (f, data) in fetched.iter().zip(bodies.iter().chain([&bodies[0]])) {
        assert_eq!(std::fs::read(&f.path).unwrap(), **data, "{}", f.name);
    }
    assert_eq!(
        server.hits("/p0.whl").len(),
        1,
        "one download for one sha256"
    );
    assert_eq!(verified_entries(&cache).len(), 4);
}

#[test]
fn offline_names_every_missing_input_and_touches_no_network() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::new(dir.path());
    let requests = [
        request("first", &server.url("/1.whl"), b"one"),
        request("second", &server.url("/2.whl"), b"two"),
    ];
    let options = Options {
        offline: true,
        ..options()
    };
    let err = download::fetch_all(&cache, &requests, &options).unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("2 input(s) are not in the cache"),
        "{message}"
    );
    assert!(
        message.contains("first") && message.contains("second"),
        "{message}"
    );
    assert!(
        message.contains(&sha256(b"one")),
        "names the cache path: {message}"
    );
    assert!(server.hits("/1.whl").is_empty() && server.hits("/2.whl").is_empty());
}

#[test]
fn plain_http_is_refused_except_for_loopback_or_an_opt_in() {
    let plain = "http://mirror.example.com/a.whl";
    let err = download::effective_url(plain, &options()).unwrap_err();
    assert!(
        matches!(
            err,
            FetchError::Input {
                failure: InputFailure::InsecureUrl { .. },
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("--allow-http"), "{err}");

    let allowed = Options {
        allow_http: true,
        ..options()
    };
    assert_eq!(download::effective_url(plain, &allowed).unwrap(), plain);
    for loopback in [
        "http://127.0.0.1:8080/a",
        "http://localhost/a",
        "http://[::1]:1/a",
    ] {
        assert_eq!(
            download::effective_url(loopback, &options()).unwrap(),
            loopback
        );
    }
    let err = download::effective_url("ftp://example.com/a", &options()).unwrap_err();
    assert!(err.to_string().contains("only https"), "{err}");
}

#[test]
fn mirrors_rewrite_the_longest_matching_prefix() {
    let options = Options {
        mirrors: vec![
            (
                "https://github.com/".into(),
                "https://mirror.example/gh/".into(),
            ),
            (
                "https://github.com/OpenNMT/".into(),
                "http://127.0.0.1:9/opennmt/".into(),
            ),
        ],
        ..options()
    };
    assert_eq!(
        download::effective_url("https://github.com/OpenNMT/CTranslate2/x.zip", &options).unwrap(),
        "http://127.0.0.1:9/opennmt/CTranslate2/x.zip"
    );
    assert_eq!(
        download::effective_url("https://github.com/other/y.zip", &options).unwrap(),
        "https://mirror.example/gh/other/y.zip"
    );
    assert_eq!(
        download::effective_url("https://pypi.org/z.whl", &options).unwrap(),
        "https://pypi.org/z.whl"
    );
}

#[test]
fn a_bare_mirror_serves_every_host_under_its_name_and_prefixes_still_win() {
    let options = Options {
        mirrors: vec![
            (download::ANY_HOST.into(), "http://127.0.0.1:9/".into()),
            (
                "https://github.com/OpenNMT/".into(),
                "http://127.0.0.1:9/opennmt/".into(),
            ),
        ],
        ..options()
    };
    assert_eq!(
        download::effective_url(
            "https://repo.radeon.com/rocm/windows/rocm-rel-7.2/a.whl",
            &options
        )
        .unwrap(),
        "http://127.0.0.1:9/repo.radeon.com/rocm/windows/rocm-rel-7.2/a.whl"
    );
    assert_eq!(
        download::effective_url("https://github.com/OpenNMT/CTranslate2/x.zip", &options).unwrap(),
        "http://127.0.0.1:9/opennmt/CTranslate2/x.zip"
    );
}

/// A server that sends a byte now and then never stalls a single read, but
/// trips `--timeout` as a minimum rate.
#[test]
fn a_trickling_server_trips_the_timeout() {
    let case = Case::new();
    let data = body(4096, 21);
    let reply = Reply::ok(data.clone()).trickle(1, Duration::from_millis(1500));
    case.server.route("/trickle.whl", move |_, _| reply.clone());
    let options = Options {
        retries: 0,
        ..with_timeout(2000)
    };
    let started = std::time::Instant::now();
    let err = case.fetch("/trickle.whl", &data, &options).unwrap_err();
    assert!(err.to_string().contains("trickles"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(verified_entries(&case.cache).is_empty());
}

/// An input with no pin stops at the size cap with a clear error.
#[test]
fn an_endless_unpinned_body_stops_at_the_cap() {
    let case = Case::new();
    case.server.serve("/endless.tar.gz", body(3 << 20, 22));
    let options = Options {
        max_unpinned: 1 << 20,
        retries: 0,
        ..options()
    };
    let err = download::download_unpinned(
        &case.cache,
        "endless",
        &case.server.url("/endless.tar.gz"),
        &options,
    )
    .unwrap_err();
    assert!(err.to_string().contains("no size is pinned"), "{err}");
    assert!(verified_entries(&case.cache).is_empty());
    assert_eq!(part_files(&case.cache), 0, "no part left");
}

/// Symlinks planted in the cache are removed, never written through, and
/// what is admitted is a regular file.
#[test]
fn symlinks_in_the_cache_are_never_followed() {
    let case = Case::new();
    let data = body(100_000, 23);
    case.server.serve("/s.crate", data.clone());
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    std::fs::write(&victim, b"precious").unwrap();
    let sha = sha256(&data);
    let part = case.cache.partial_path(&sha);
    std::fs::create_dir_all(part.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&victim, &part).unwrap();
    let fetched = case.fetch("/s.crate", &data, &options()).unwrap();
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    let meta = std::fs::symlink_metadata(&fetched.path).unwrap();
    assert!(meta.is_file(), "the cached file is a regular file");

    // A symlink standing in for the cached file itself is replaced by the real file.
    std::fs::remove_file(&fetched.path).unwrap();
    std::os::unix::fs::symlink(&victim, &fetched.path).unwrap();
    let again = case.fetch("/s.crate", &data, &options()).unwrap();
    assert!(std::fs::symlink_metadata(&again.path).unwrap().is_file());
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
}

/// A part file kept from an interrupted run whose bytes were damaged
/// is not the server's fault: the download starts again from zero once, and succeeds.
#[test]
fn a_corrupt_part_file_is_downloaded_again_not_blamed_on_the_server() {
    let server = Server::start();
    let data = body(600_000, 12);
    server.serve("/p.crate", data.clone());
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::new(dir.path());
    // Half the file, as an interrupted run leaves it, with one byte damaged since.
    let part = cache.partial_path(&sha256(&data));
    std::fs::create_dir_all(part.parent().unwrap()).unwrap();
    let mut kept = data[..300_000].to_vec();
    kept[1000] ^= 0xff;
    std::fs::write(&part, &kept).unwrap();

    let requests = [request("p", &server.url("/p.crate"), &data)];
    let fetched = download::fetch_all(&cache, &requests, &options()).unwrap();
    assert_eq!(std::fs::read(&fetched[0].path).unwrap(), *data);
    let hits = server.hits("/p.crate");
    assert_eq!(hits.len(), 2, "resumed once, then once from the start");
    assert_eq!(hits[0].range_start, Some(300_000));
    assert_eq!(hits[1].range_start, None);
    assert_eq!(part_files(&cache), 0);
}

/// Fetches `path` on a thread of its own and waits at most `bound` for it: a download that
/// would go on retrying fails the test instead of hanging it (its thread is left behind).
/// Returns the result and how long it took.
fn fetch_within(
    case: &Case,
    path: &str,
    pinned: &[u8],
    options: &Options,
    bound: Duration,
) -> (Result<Fetched, FetchError>, Duration) {
    let request = request(path, &case.server.url(path), pinned);
    let (cache, options) = (case.cache.clone(), options.clone());
    let (send, receive) = std::sync::mpsc::channel();
    let started = std::time::Instant::now();
    std::thread::spawn(move || {
        let result = download::fetch_all(&cache, &[request], &options).map(|mut all| all.remove(0));
        let _ = send.send(result);
    });
    match receive.recv_timeout(bound) {
        Ok(result) => (result, started.elapsed()),
        Err(_) => panic!(
            "{path}: still downloading after {bound:?} ({} requests so far)",
            case.server.hits(path).len()
        ),
    }
}

/// `path` answered by `reply` and fetched with 2 retries: given up within 10 s after the
/// first attempt and 2 retries, its message naming every needle. The requests it made.
fn given_up_after_two_retries(
    case: &Case,
    path: &str,
    data: &[u8],
    reply: Reply,
    options: Options,
    needles: &[&str],
) -> Vec<Hit> {
    case.server.route(path, move |_, _| reply.clone());
    let options = Options {
        retries: 2,
        ..options
    };
    let (result, took) = fetch_within(case, path, data, &options, Duration::from_secs(30));
    let err = result.unwrap_err();
    assert!(
        took < Duration::from_secs(10),
        "gave up only after {took:?}"
    );
    let message = err.to_string();
    for needle in needles {
        assert!(message.contains(needle), "`{needle}` not in: {message}");
    }
    let hits = case.server.hits(path);
    assert_eq!(hits.len(), 3, "the first attempt and 2 retries");
    hits
}

/// Puts the first `kept` bytes of `data` where an interrupted download of it leaves them.
fn keep_part(case: &Case, data: &[u8], kept: usize) -> std::path::PathBuf {
    let part = case.cache.partial_path(&sha256(data));
    std::fs::create_dir_all(part.parent().unwrap()).unwrap();
    std::fs::write(&part, &data[..kept]).unwrap();
    part
}

#[test]
fn a_server_trickling_a_few_bytes_per_resume_is_given_up_after_the_retries() {
    let case = Case::new();
    // A byte every 50 ms: every resume moves a few bytes, never the 1 KiB a window needs.
    let data = body(1 << 20, 30);
    let reply = Reply::ok(data.clone()).trickle(1, Duration::from_millis(50));
    // Three slow windows of ~0.3 s and the backoff between them (0.5 s, 1 s): ~2.5 s; the
    // bound leaves room for a loaded machine, and is far below the hours the trickle takes.
    given_up_after_two_retries(
        &case,
        "/drip.whl",
        &data,
        reply,
        with_timeout(300),
        &[
            "input `/drip.whl`",
            &case.server.url("/drip.whl"),
            "trickles",
            "in the last",
            "below 1024 bytes per 0.3 s",
            "--timeout",
            "--retries",
            "mirror",
        ],
    );
    assert!(verified_entries(&case.cache).is_empty());
}

#[test]
fn a_server_cutting_every_connection_after_a_few_bytes_is_given_up_after_the_retries() {
    let case = Case::new();
    let data = body(1 << 20, 31);
    let reply = Reply::ok(data.clone()).cut_after(10);
    // Two backoffs (0.5 s, 1 s) and three quick requests.
    let hits = given_up_after_two_retries(
        &case,
        "/cut.whl",
        &data,
        reply,
        options(),
        &[
            "input `/cut.whl`",
            &case.server.url("/cut.whl"),
            "the server sent 30 byte(s) in the last",
            "below 1024 bytes per 2.0 s",
            "--retries",
        ],
    );
    assert_eq!(hits[2].range_start, Some(20), "each attempt resumed");
}

#[test]
fn a_server_dropping_every_connection_but_making_progress_finishes() {
    let case = Case::new();
    // Eight connections of 64 KiB each: more failed attempts than --retries, each one real
    // progress.
    let data = body(512 << 10, 32);
    let reply = Reply::ok(data.clone()).cut_after(64 << 10);
    case.server.route("/steps.whl", move |_, _| reply.clone());
    let options = Options {
        retries: 1,
        ..with_timeout(500)
    };
    let (result, _) = fetch_within(
        &case,
        "/steps.whl",
        &data,
        &options,
        Duration::from_secs(60),
    );
    assert_eq!(std::fs::read(result.unwrap().path).unwrap(), *data);
    assert_eq!(case.server.hits("/steps.whl").len(), 8);
}

#[test]
fn a_slow_but_steady_trickle_across_reconnects_finishes() {
    let case = Case::new();
    // 2 KiB every 20 ms (~30 KiB per 300 ms window), cut every 16 KiB.
    let data = body(96 << 10, 33);
    let reply = Reply::ok(data.clone())
        .trickle(2 << 10, Duration::from_millis(20))
        .cut_after(16 << 10);
    case.server.route("/steady.whl", move |_, _| reply.clone());
    let options = Options {
        retries: 1,
        ..with_timeout(300)
    };
    let (result, _) = fetch_within(
        &case,
        "/steady.whl",
        &data,
        &options,
        Duration::from_secs(60),
    );
    assert_eq!(std::fs::read(result.unwrap().path).unwrap(), *data);
}

#[test]
fn a_redirect_to_a_refused_url_names_where_it_went_and_why() {
    let case = Case::new();
    let cases = [
        (
            "file:///etc/passwd",
            "only https (and http to loopback hosts) are followed",
        ),
        (
            "ftp://example.com/r.whl",
            "only https (and http to loopback hosts) are followed",
        ),
        (
            "gopher://example.com/r.whl",
            "only https (and http to loopback hosts) are followed",
        ),
        ("http://example.com/r.whl", "--allow-http"),
    ];
    for (i, (location, why)) in cases.into_iter().enumerate() {
        let path = format!("/r{i}.whl");
        case.server.route(&path, move |_, _| {
            Reply::status(302).header("Location", location)
        });
        let err = case.fetch(&path, b"x", &options()).unwrap_err();
        assert!(
            matches!(
                err,
                FetchError::Input {
                    failure: InputFailure::Redirect { .. },
                    ..
                }
            ),
            "{location}: {err:?}"
        );
        let message = err.to_string();
        let redirected = format!("{} redirected to {location}", case.server.url(&path));
        for needle in [&format!("input `{path}`"), &redirected, why] {
            assert!(message.contains(needle), "`{needle}` not in: {message}");
        }
        assert!(!message.contains("HTTP 302"), "{message}");
        assert_eq!(case.server.hits(&path).len(), 1, "{location}: not retried");
    }

    // After a redirect that is followed, the message names the URL that sent it on.
    case.server.route("/first.whl", |_, _| {
        Reply::status(301).header("Location", "/r0.whl")
    });
    let err = case.fetch("/first.whl", b"x", &options()).unwrap_err();
    let message = err.to_string();
    let needle = format!(
        "{} redirected to file:///etc/passwd (by {}, where it led)",
        case.server.url("/first.whl"),
        case.server.url("/r0.whl")
    );
    assert!(message.contains(&needle), "`{needle}` not in: {message}");
}

#[test]
fn a_redirect_without_a_usable_location_says_so() {
    let case = Case::new();
    case.server.route("/none.whl", |_, _| Reply::status(302));
    let err = case.fetch("/none.whl", b"x", &options()).unwrap_err();
    let message = err.to_string();
    for needle in [&case.server.url("/none.whl"), "HTTP 302", "no Location"] {
        assert!(message.contains(needle), "`{needle}` not in: {message}");
    }

    case.server.route("/bad.whl", |_, _| {
        Reply::status(302).header("Location", "http://[::bad/x")
    });
    let err = case.fetch("/bad.whl", b"x", &options()).unwrap_err();
    let message = err.to_string();
    for needle in [
        &format!(
            "{} redirected to http://[::bad/x",
            case.server.url("/bad.whl")
        ),
        "not a URL",
    ] {
        assert!(message.contains(needle), "`{needle}` not in: {message}");
    }
}

#[test]
fn a_redirect_loop_is_cut_and_named() {
    let case = Case::new();
    let url = case.server.url("/loop.whl");
    let target = url.clone();
    case.server.route("/loop.whl", move |_, _| {
        Reply::status(302).header("Location", &target)
    });
    let err = case.fetch("/loop.whl", b"x", &options()).unwrap_err();
    let message = err.to_string();
    for needle in [&format!("redirected to {url}"), "more than 10 redirects"] {
        assert!(message.contains(needle), "`{needle}` not in: {message}");
    }
}

#[test]
fn a_redirect_to_an_allowed_url_is_followed() {
    let case = Case::new();
    let data = body(10_000, 34);
    case.server.serve("/real.whl", data.clone());
    case.server.route("/moved.whl", |_, _| {
        Reply::status(302).header("Location", "/real.whl")
    });
    let fetched = case.fetch("/moved.whl", &data, &options()).unwrap();
    assert_eq!(std::fs::read(fetched.path).unwrap(), *data);
}

#[test]
fn an_impossible_content_range_is_an_error_not_a_panic() {
    let case = Case::new();
    let data = body(4096, 35);
    for value in [
        "bytes 18446744073709551615-0/5",
        "bytes 1000-999/4096",
        "bytes 1000-4095/10",
        "bytes 1000-18446744073709551615/*",
        "bytes 99999999999999999999-4095/4096",
        "bytes 1000-4095/99999999999999999999",
        "pages 1000-4095/4096",
        "bytes 1000",
    ] {
        let part = keep_part(&case, &data, 1000);
        let reply = Reply::ok(data.clone()).header("Content-Range", value);
        case.server.route("/range.whl", move |_, _| reply.clone());
        let err = case.fetch("/range.whl", &data, &options()).unwrap_err();
        let message = err.to_string();
        for needle in [
            "input `/range.whl`",
            &case.server.url("/range.whl"),
            &format!("Content-Range `{value}`"),
            "mirror",
        ] {
            assert!(
                message.contains(needle),
                "{value}: `{needle}` not in: {message}"
            );
        }
        assert!(
            !part.exists(),
            "{value}: the part is removed, the next run starts over"
        );
        assert!(verified_entries(&case.cache).is_empty());
    }
}

#[test]
fn a_content_length_past_the_end_of_numbers_is_an_error_not_a_panic() {
    let case = Case::new();
    let data = body(4096, 36);
    keep_part(&case, &data, 1000);
    // The largest length the HTTP client accepts; added to the 1000 bytes kept it overflows.
    let reply = Reply::ok(data.clone()).header("Content-Length", "18446744073709551613");
    case.server.route("/long.whl", move |_, _| reply.clone());
    let err = case.fetch("/long.whl", &data, &options()).unwrap_err();
    let message = err.to_string();
    for needle in [
        "input `/long.whl`",
        &case.server.url("/long.whl"),
        "Content-Length 18446744073709551613",
    ] {
        assert!(message.contains(needle), "`{needle}` not in: {message}");
    }
    assert!(verified_entries(&case.cache).is_empty());
}
