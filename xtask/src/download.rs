//! HTTP downloads of pinned inputs into the content-addressed [`Cache`].
//!
//! A verified cache entry means no network at all. Otherwise the file is downloaded to its
//! `partial/<hex>.part` (resumed with a `Range` request when a part is already there), retried
//! with exponential backoff on connection errors, stalls and 5xx answers, and handed to
//! [`Cache::admit`], which renames it into place only when its sha256 and size match the pin.
//! Different files download in parallel, one worker thread (and one HTTP client) per job.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{self, BufWriter, IsTerminal, Read, Write};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use reqwest::blocking::Client;
use reqwest::header::{CONTENT_RANGE, RANGE};
use reqwest::{StatusCode, Url, redirect};
use sha2::{Digest, Sha256};
use thiserror::Error;

use crate::cache::{self, Cache, CacheError, Pin};
use crate::units::human_size;

/// Read buffer for response bodies, and the write buffer in front of the part file.
const BUFFER: usize = 1 << 20;
/// First retry delay; doubled after every failure, up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(8);
/// Times in a row a server may answer a range request unusably before the download fails.
const MAX_RESTARTS: u32 = 3;
const MAX_REDIRECTS: usize = 10;

#[derive(Debug, Clone)]
pub struct Options {
    /// URL prefix → replacement; the longest matching prefix wins. The prefix
    /// [`ANY_HOST`] matches every URL not matched otherwise, and the replacement is followed
    /// by the URL's host and path (`https://h/p` → `<replacement>h/p`).
    pub mirrors: Vec<(String, String)>,
    /// Allow plain `http://` to any host (loopback hosts are always allowed).
    pub allow_http: bool,
    /// No network at all: everything must already be in the cache.
    pub offline: bool,
    /// Retries after the first attempt, per file.
    pub retries: u32,
    /// Files downloaded at the same time.
    pub jobs: usize,
    /// Progress bars when stderr is a terminal; otherwise (or when false) one plain line per
    /// file when it starts and when it finishes.
    pub progress: bool,
    /// How long connecting, or waiting for the next bytes, may take before the attempt fails;
    /// also the window in which at least [`MIN_BYTES_PER_WINDOW`] must arrive (a server that
    /// trickles a byte now and then never stalls a single read).
    pub timeout: Duration,
    /// The most an input with no pinned size may be: an endless body stops there.
    pub max_unpinned: u64,
}

/// Bytes that must arrive in every `timeout` window while a body is read.
pub const MIN_BYTES_PER_WINDOW: u64 = 1024;
/// [`Options::max_unpinned`] by default: more than any real input (the largest, the ROCm SDK
/// wheels, are under 2 GiB).
pub const MAX_UNPINNED_BYTES: u64 = 4 << 30;

impl Default for Options {
    fn default() -> Options {
        Options {
            mirrors: Vec::new(),
            allow_http: false,
            offline: false,
            retries: 4,
            jobs: 4,
            progress: true,
            timeout: Duration::from_secs(30),
            max_unpinned: MAX_UNPINNED_BYTES,
        }
    }
}

/// One pinned file to have in the cache, under the input name used in messages.
#[derive(Debug, Clone)]
pub struct Request {
    pub name: String,
    pub pin: Pin,
}

/// Where a request's file is, and whether this call downloaded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    pub name: String,
    /// The verified file in the cache.
    pub path: PathBuf,
    /// False when the cache already had it.
    pub downloaded: bool,
    /// The file's size.
    pub bytes: u64,
}

/// An input that offline mode could not find in the cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    pub name: String,
    /// After mirror rewriting.
    pub url: String,
    /// Where the file would have to be; `None` for an unpinned download.
    pub path: Option<PathBuf>,
}

#[derive(Debug, Error)]
pub enum FetchError {
    #[error(
        "{}refusing to download {url} over plain http (only loopback hosts may use http): use the https URL, add a mirror that rewrites it to https, or pass --allow-http (the sha256 pin still checks the file)",
        input(name)
    )]
    InsecureUrl { name: String, url: String },
    #[error("{}cannot download `{url}`: {reason}", input(name))]
    BadUrl {
        name: String,
        url: String,
        reason: String,
    },
    #[error("{}", offline_message(missing))]
    Offline { missing: Vec<Missing> },
    #[error("{}{url} answered HTTP {status}{}", input(name), status_hint(*status, *attempts))]
    Status {
        name: String,
        url: String,
        status: u16,
        attempts: u32,
    },
    #[error(
        "{}downloading {url} failed after {attempts} attempt(s): {message}\n  = check the network (and HTTPS_PROXY, if one is needed), then run again: the download resumes where it stopped",
        input(name)
    )]
    Network {
        name: String,
        url: String,
        attempts: u32,
        message: String,
    },
    #[error("{}{source}", input(name))]
    Cache {
        name: String,
        #[source]
        source: Box<CacheError>,
    },
    #[error("{}cannot {action} {}: {source}", input(name), path.display())]
    Io {
        name: String,
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot set up the HTTP client: {message}")]
    Client { message: String },
    #[error("{} inputs failed:\n{}", errors.len(), list_errors(errors))]
    Several { errors: Vec<FetchError> },
}

impl FetchError {
    /// The inputs this error is about.
    pub fn input_names(&self) -> Vec<&str> {
        match self {
            FetchError::InsecureUrl { name, .. }
            | FetchError::BadUrl { name, .. }
            | FetchError::Status { name, .. }
            | FetchError::Network { name, .. }
            | FetchError::Cache { name, .. }
            | FetchError::Io { name, .. } => vec![name.as_str()],
            FetchError::Offline { missing } => missing.iter().map(|m| m.name.as_str()).collect(),
            FetchError::Several { errors } => {
                errors.iter().flat_map(FetchError::input_names).collect()
            }
            FetchError::Client { .. } => Vec::new(),
        }
    }
}

fn input(name: &str) -> String {
    if name.is_empty() {
        String::new()
    } else {
        format!("input `{name}`: ")
    }
}

fn status_hint(status: u16, attempts: u32) -> String {
    match status {
        404 | 410 => "; the file is not there: check the URL in the variant file, or add a mirror that has it".into(),
        401 | 403 => "; access was refused: the URL may need a login, or a mirror".into(),
        408 | 429 | 500..=599 => format!(
            "; the server failed {attempts} time(s) in a row: try again later, or add a mirror"
        ),
        _ => String::new(),
    }
}

fn offline_message(missing: &[Missing]) -> String {
    let mut text = format!("offline: {} input(s) are not in the cache:", missing.len());
    for m in missing {
        let _ = write!(text, "\n  {}  {}", m.name, m.url);
        if let Some(path) = &m.path {
            let _ = write!(text, "\n      would be {}", path.display());
        }
    }
    text.push_str(
        "\n  = run without --offline where the URLs can be reached (`cargo xtask fetch`), or put each file at the path shown",
    );
    text
}

fn list_errors(errors: &[FetchError]) -> String {
    let items: Vec<String> = errors.iter().map(|e| format!("- {e}")).collect();
    items.join("\n")
}

impl FetchError {
    /// The same error, naming `name` as the input it is about.
    fn for_input(mut self, input: &str) -> FetchError {
        match &mut self {
            FetchError::InsecureUrl { name, .. }
            | FetchError::BadUrl { name, .. }
            | FetchError::Status { name, .. }
            | FetchError::Network { name, .. }
            | FetchError::Cache { name, .. }
            | FetchError::Io { name, .. } => *name = input.to_string(),
            FetchError::Offline { .. } | FetchError::Client { .. } | FetchError::Several { .. } => {
            }
        }
        self
    }

    fn from_cache(name: &str, error: CacheError) -> FetchError {
        FetchError::Cache {
            name: name.to_string(),
            source: Box::new(error),
        }
    }
}

/// One error as itself; several as [`FetchError::Several`].
fn combine(mut errors: Vec<FetchError>) -> FetchError {
    if errors.len() == 1 {
        errors.pop().expect("one error")
    } else {
        FetchError::Several { errors }
    }
}

/// The mirror prefix that stands for every host: `--mirror URL` with no `FROM=`.
pub const ANY_HOST: &str = "*";

/// The URL actually downloaded: the longest matching mirror prefix replaced (else the
/// any-host mirror), then checked to be https, or http to a loopback host (or anywhere with
/// `allow_http`).
pub fn effective_url(url: &str, options: &Options) -> Result<String, FetchError> {
    let by_prefix = options
        .mirrors
        .iter()
        .filter(|(prefix, _)| {
            !prefix.is_empty() && prefix != ANY_HOST && url.starts_with(prefix.as_str())
        })
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(prefix, replacement)| format!("{replacement}{}", &url[prefix.len()..]));
    let any_host = || {
        let (_, replacement) = options.mirrors.iter().find(|(p, _)| p == ANY_HOST)?;
        let host_and_path = url.split_once("://")?.1;
        Some(format!(
            "{}/{host_and_path}",
            replacement.trim_end_matches('/')
        ))
    };
    let rewritten = by_prefix
        .or_else(any_host)
        .unwrap_or_else(|| url.to_string());
    let bad = |reason: &str| FetchError::BadUrl {
        name: String::new(),
        url: rewritten.clone(),
        reason: reason.to_string(),
    };
    let parsed = Url::parse(&rewritten).map_err(|e| bad(&format!("not a URL ({e})")))?;
    if parsed.host().is_none() {
        return Err(bad("the URL has no host"));
    }
    match parsed.scheme() {
        "https" => Ok(rewritten),
        "http" if options.allow_http || is_loopback(&parsed) => Ok(rewritten),
        "http" => Err(FetchError::InsecureUrl {
            name: String::new(),
            url: rewritten,
        }),
        other => Err(bad(&format!(
            "only https (and http to loopback hosts) can be downloaded, not `{other}`"
        ))),
    }
}

/// 127.0.0.0/8, ::1 and `localhost`.
fn is_loopback(url: &Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    match bare.parse::<IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => bare
            .strip_suffix('.')
            .unwrap_or(bare)
            .eq_ignore_ascii_case("localhost"),
    }
}

/// Makes sure every request's file is in the cache, verified, downloading what is missing
/// (in parallel, `options.jobs` at a time). Requests with the same sha256 share one download.
/// On the first failure no further download starts and those under way stop (their part
/// files are kept for the next run); every failure is reported.
pub fn fetch_all(
    cache: &Cache,
    requests: &[Request],
    options: &Options,
) -> Result<Vec<Fetched>, FetchError> {
    let report = Report::new(options);

    // Every URL is checked before anything is looked up or downloaded.
    let mut urls = Vec::with_capacity(requests.len());
    let mut errors = Vec::new();
    for request in requests {
        match effective_url(&request.pin.url, options) {
            Ok(url) => urls.push(url),
            Err(e) => errors.push(e.for_input(&request.name)),
        }
    }
    if !errors.is_empty() {
        return Err(combine(errors));
    }

    let mut found: Vec<Option<PathBuf>> = Vec::with_capacity(requests.len());
    for request in requests {
        match cache.lookup(&request.pin) {
            Ok(path) => found.push(path),
            Err(e @ CacheError::Corrupt { .. }) => {
                report.line(&format!("warning: {}{e}", input(&request.name)));
                found.push(None);
            }
            Err(e) => {
                errors.push(FetchError::from_cache(&request.name, e));
                found.push(None);
            }
        }
    }
    if !errors.is_empty() {
        return Err(combine(errors));
    }

    // One job per missing sha256; `job_of[i]` is the job that provides request `i`.
    let mut jobs: Vec<Job> = Vec::new();
    let mut by_sha: HashMap<&str, usize> = HashMap::new();
    let mut job_of: Vec<Option<usize>> = vec![None; requests.len()];
    for (i, request) in requests.iter().enumerate() {
        if found[i].is_some() {
            continue;
        }
        let index = *by_sha
            .entry(request.pin.sha256.as_str())
            .or_insert_with(|| {
                jobs.push(Job {
                    name: &request.name,
                    url: &urls[i],
                    pin: &request.pin,
                });
                jobs.len() - 1
            });
        job_of[i] = Some(index);
    }

    if options.offline && !jobs.is_empty() {
        let missing = requests
            .iter()
            .zip(&urls)
            .zip(&found)
            .filter(|(_, path)| path.is_none())
            .map(|((request, url), _)| Missing {
                name: request.name.clone(),
                url: url.clone(),
                path: Some(cache.path_for(&request.pin.sha256)),
            })
            .collect();
        return Err(FetchError::Offline { missing });
    }

    let outcomes = run_jobs(cache, &jobs, options, &report)?;

    let mut fetched = Vec::with_capacity(requests.len());
    for (i, request) in requests.iter().enumerate() {
        let (path, downloaded) = match (&found[i], job_of[i]) {
            (Some(path), _) => (path.clone(), false),
            (None, Some(job)) => outcomes[job].clone(),
            (None, None) => unreachable!("a request is either found or has a job"),
        };
        let bytes = match request.pin.size {
            Some(size) => size,
            None => fs::metadata(&path).map(|m| m.len()).unwrap_or(0),
        };
        fetched.push(Fetched {
            name: request.name.clone(),
            path,
            downloaded,
            bytes,
        });
    }
    Ok(fetched)
}

/// Downloads `url` without a pin (for `cargo xtask pin`), stores it in the cache under the
/// sha256 it turns out to have, and returns that sha256 and the size.
pub fn download_unpinned(
    cache: &Cache,
    name: &str,
    url: &str,
    options: &Options,
) -> Result<(String, u64), FetchError> {
    let url = effective_url(url, options).map_err(|e| e.for_input(name))?;
    if options.offline {
        return Err(FetchError::Offline {
            missing: vec![Missing {
                name: name.to_string(),
                url,
                path: None,
            }],
        });
    }
    let report = Report::new(options);
    let cancel = AtomicBool::new(false);
    let dir = cache.partial_dir();
    fs::create_dir_all(&dir).map_err(io_error(name, "create", &dir))?;
    let temp = tempfile::Builder::new()
        .prefix("unpinned-")
        .suffix(".part")
        .tempfile_in(&dir)
        .map_err(io_error(name, "create a file in", &dir))?
        .into_temp_path();
    let mut worker = Worker::new(options, &report, &cancel).map_err(Failure::into_error)?;
    let target = Target {
        name,
        url: &url,
        path: &temp,
        sha256: None,
        size: None,
        resume: false,
    };
    let (sha256, size) = worker.download(&target).map_err(Failure::into_error)?;
    let pin = Pin {
        url: url.clone(),
        sha256: sha256.clone(),
        size: Some(size),
        file_name: url.rsplit('/').next().unwrap_or_default().to_string(),
    };
    cache
        .admit_hashed(&temp, &pin, (sha256.clone(), size))
        .map_err(|e| FetchError::from_cache(name, e))?;
    Ok((sha256, size))
}

fn io_error<'a>(
    name: &'a str,
    action: &'static str,
    path: &'a Path,
) -> impl FnOnce(io::Error) -> FetchError + 'a {
    move |source| FetchError::Io {
        name: name.to_string(),
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// One file to download: the first request naming its sha256.
struct Job<'a> {
    name: &'a str,
    url: &'a str,
    pin: &'a Pin,
}

/// A finished job: the cached file and whether it was downloaded, or why it failed.
type JobResult = Result<(PathBuf, bool), Failure>;

/// Runs the jobs on `options.jobs` threads; returns each job's path and whether it was
/// downloaded (false when another process put it in the cache meanwhile).
fn run_jobs(
    cache: &Cache,
    jobs: &[Job],
    options: &Options,
    report: &Report,
) -> Result<Vec<(PathBuf, bool)>, FetchError> {
    if jobs.is_empty() {
        return Ok(Vec::new());
    }
    let next = AtomicUsize::new(0);
    let cancel = AtomicBool::new(false);
    let results: Vec<Mutex<Option<JobResult>>> = jobs.iter().map(|_| Mutex::new(None)).collect();
    let threads = options.jobs.clamp(1, jobs.len());
    thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut worker: Option<Worker> = None;
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= jobs.len() || cancel.load(Ordering::SeqCst) {
                        break;
                    }
                    let result = match &mut worker {
                        Some(w) => w.fetch_pinned(cache, &jobs[i]),
                        None => match Worker::new(options, report, &cancel) {
                            Ok(w) => worker.insert(w).fetch_pinned(cache, &jobs[i]),
                            Err(e) => Err(e),
                        },
                    };
                    if matches!(result, Err(Failure::Fatal(_))) {
                        cancel.store(true, Ordering::SeqCst);
                    }
                    *results[i].lock().expect("no worker panics holding it") = Some(result);
                }
            });
        }
    });
    let mut done = Vec::with_capacity(jobs.len());
    let mut errors = Vec::new();
    for result in results {
        match result.into_inner().expect("no worker panics holding it") {
            Some(Ok(outcome)) => done.push(outcome),
            Some(Err(Failure::Fatal(e))) => errors.push(e),
            // Stopped, or never started, because another job failed.
            Some(Err(Failure::Cancelled)) | None => {}
        }
    }
    if errors.is_empty() {
        Ok(done)
    } else {
        Err(combine(errors))
    }
}

/// How a download ended when it did not succeed.
enum Failure {
    Fatal(FetchError),
    /// Another download failed, so this one stopped; its part file is kept.
    Cancelled,
}

impl Failure {
    fn into_error(self) -> FetchError {
        match self {
            Failure::Fatal(e) => e,
            Failure::Cancelled => unreachable!("only fetch_all cancels"),
        }
    }
}

/// Why one attempt (one HTTP request) did not complete the file.
enum AttemptError {
    /// Worth another attempt: a connection error, a stall, a 5xx (status given).
    Retry {
        message: String,
        status: Option<u16>,
    },
    /// Not worth retrying: a 4xx, say.
    Status(u16),
    Fatal(FetchError),
    Cancelled,
}

/// What one attempt achieved.
enum Attempt {
    /// The whole body is in the part file, which has this sha256 and size.
    Complete((String, u64)),
    /// The server answered the range request unusably; the part was cleared, ask again.
    Restart,
}

/// The file one download writes and what it should come to.
struct Target<'a> {
    name: &'a str,
    url: &'a str,
    /// The part file.
    path: &'a Path,
    sha256: Option<&'a str>,
    size: Option<u64>,
    /// Continue from the part file's length with a range request.
    resume: bool,
}

/// A download thread: its own HTTP client (and so its own I/O thread) and buffer.
struct Worker<'a> {
    client: Client,
    options: &'a Options,
    report: &'a Report,
    cancel: &'a AtomicBool,
    buffer: Vec<u8>,
}

impl<'a> Worker<'a> {
    fn new(
        options: &'a Options,
        report: &'a Report,
        cancel: &'a AtomicBool,
    ) -> Result<Worker<'a>, Failure> {
        let allow_http = options.allow_http;
        let policy = redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() >= MAX_REDIRECTS {
                attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
            } else if attempt.url().scheme() == "http" && !allow_http && !is_loopback(attempt.url())
            {
                let to = attempt.url().to_string();
                attempt.error(format!(
                    "refused a redirect to plain http ({to}); pass --allow-http to follow it"
                ))
            } else {
                attempt.follow()
            }
        });
        // In the blocking client `timeout` bounds the wait for the response head and then
        // each read of the body: it is a stall timeout, not a limit on the whole download.
        let client = Client::builder()
            .user_agent(concat!("ct2-variants-xtask/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(options.timeout)
            .timeout(options.timeout)
            .redirect(policy)
            .build()
            .map_err(|e| {
                Failure::Fatal(FetchError::Client {
                    message: describe(&e),
                })
            })?;
        Ok(Worker {
            client,
            options,
            report,
            cancel,
            buffer: vec![0; BUFFER],
        })
    }

    fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::SeqCst)
    }

    /// The job's file in the cache: found there once the lock is held (another process may
    /// have fetched it), or downloaded and admitted.
    fn fetch_pinned(&mut self, cache: &Cache, job: &Job) -> Result<(PathBuf, bool), Failure> {
        let name = job.name;
        let fatal = Failure::Fatal;
        let dir = cache.partial_dir();
        fs::create_dir_all(&dir).map_err(|e| fatal(io_error(name, "create", &dir)(e)))?;
        let _lock = self.lock(&dir.join(format!("{}.lock", job.pin.sha256)), name)?;
        match cache.lookup(job.pin) {
            Ok(Some(path)) => return Ok((path, false)),
            Ok(None) => {}
            Err(e @ CacheError::Corrupt { .. }) => {
                self.report.line(&format!("warning: {}{e}", input(name)));
            }
            Err(e) => return Err(fatal(FetchError::from_cache(name, e))),
        }
        let part = cache.partial_path(&job.pin.sha256);
        self.clear_odd_part(&part, name)?;
        let target = Target {
            name,
            url: job.url,
            path: &part,
            sha256: Some(&job.pin.sha256),
            size: job.pin.size,
            resume: true,
        };
        let kept = file_len(&part);
        let digest = self.download(&target)?;
        // The pin with the URL actually used, so that a mismatch names it.
        let pin = Pin {
            url: job.url.to_string(),
            ..job.pin.clone()
        };
        match cache.admit_hashed(&part, &pin, digest) {
            Ok(path) => Ok((path, true)),
            // A part kept from an earlier run was resumed: its bytes, not the server's, may be
            // the wrong ones. The mismatch removed it; once more from the start, and only a
            // mismatch then is the server's.
            Err(CacheError::Mismatch { .. }) if kept > 0 => {
                self.report.line(&format!(
                    "warning: {}the {kept} bytes kept from an interrupted download were not the \
                     start of the pinned file; downloading it again from the start",
                    input(name)
                ));
                let digest = self.download(&target)?;
                cache
                    .admit_hashed(&part, &pin, digest)
                    .map(|path| (path, true))
                    .map_err(|e| fatal(FetchError::from_cache(name, e)))
            }
            Err(e) => Err(fatal(FetchError::from_cache(name, e))),
        }
    }

    /// Removes whatever is at the part file's place and is not a regular file (a symlink
    /// planted there would have the download written through it, wherever it points).
    fn clear_odd_part(&self, path: &Path, name: &str) -> Result<(), Failure> {
        match fs::symlink_metadata(path) {
            Ok(meta) if !meta.is_file() => {
                self.report.line(&format!(
                    "warning: {name}: {} is not a regular file (a symlink?); removed, not followed",
                    path.display()
                ));
                let removed = if meta.is_dir() {
                    fs::remove_dir_all(path)
                } else {
                    fs::remove_file(path)
                };
                removed.map_err(|e| Failure::Fatal(io_error(name, "remove", path)(e)))
            }
            _ => Ok(()),
        }
    }

    /// An exclusive lock on `path`, so that two processes never write one part file. Where
    /// the file system cannot lock, the download goes ahead unlocked.
    fn lock(&self, path: &Path, name: &str) -> Result<Option<File>, Failure> {
        self.clear_odd_part(path, name)?;
        let file = no_follow(OpenOptions::new().create(true).truncate(false).write(true))
            .open(path)
            .map_err(|e| Failure::Fatal(io_error(name, "open", path)(e)))?;
        match file.try_lock() {
            Ok(()) => Ok(Some(file)),
            Err(TryLockError::WouldBlock) => {
                self.report.line(&format!(
                    "{name}: waiting for another process downloading it (lock {})",
                    path.display()
                ));
                file.lock()
                    .map_err(|e| Failure::Fatal(io_error(name, "lock", path)(e)))?;
                Ok(Some(file))
            }
            Err(TryLockError::Error(_)) => Ok(None),
        }
    }

    /// Attempts until the part file holds the whole body, with backoff between failures.
    /// The failure count starts again whenever the part file grows past its longest yet.
    /// Returns the sha256 and size of the part file, hashed as it was written.
    fn download(&mut self, target: &Target) -> Result<(String, u64), Failure> {
        let retries = self.options.retries;
        let start_len = if target.resume {
            file_len(target.path)
        } else {
            0
        };
        let progress = self.report.start(target, start_len);
        let mut high_water = start_len;
        let mut failures = 0u32;
        let mut attempts = 0u32;
        let mut restarts = 0u32;
        loop {
            if self.cancelled() {
                progress.abandon();
                return Err(Failure::Cancelled);
            }
            attempts += 1;
            let error = match self.attempt(target, &progress) {
                Ok(Attempt::Complete(digest)) => {
                    progress.finish(digest.1);
                    return Ok(digest);
                }
                Ok(Attempt::Restart) => {
                    restarts += 1;
                    if restarts <= MAX_RESTARTS {
                        continue;
                    }
                    AttemptError::Fatal(FetchError::Network {
                        name: target.name.to_string(),
                        url: target.url.to_string(),
                        attempts,
                        message: "the server keeps answering range requests with the wrong bytes"
                            .into(),
                    })
                }
                Err(e) => e,
            };
            let (message, status) = match error {
                AttemptError::Retry { message, status } => (message, status),
                AttemptError::Status(status) => {
                    progress.abandon();
                    return Err(Failure::Fatal(FetchError::Status {
                        name: target.name.to_string(),
                        url: target.url.to_string(),
                        status,
                        attempts,
                    }));
                }
                AttemptError::Fatal(e) => {
                    progress.abandon();
                    return Err(Failure::Fatal(e));
                }
                AttemptError::Cancelled => {
                    progress.abandon();
                    return Err(Failure::Cancelled);
                }
            };
            let len = file_len(target.path);
            if target.resume && len > high_water {
                high_water = len;
                failures = 0;
            }
            failures += 1;
            if failures > retries {
                progress.abandon();
                let name = target.name.to_string();
                let url = target.url.to_string();
                return Err(Failure::Fatal(match status {
                    Some(status) => FetchError::Status {
                        name,
                        url,
                        status,
                        attempts,
                    },
                    None => FetchError::Network {
                        name,
                        url,
                        attempts,
                        message,
                    },
                }));
            }
            let delay = backoff(failures);
            progress.note(&format!(
                "warning: {}{message}; retrying in {:.1} s ({} of {retries} retries)",
                input(target.name),
                delay.as_secs_f64(),
                failures
            ));
            self.sleep(delay);
        }
    }

    /// Sleeps for `delay`, waking early when the downloads are cancelled.
    fn sleep(&self, delay: Duration) {
        let until = Instant::now() + delay;
        while !self.cancelled() {
            let now = Instant::now();
            if now >= until {
                break;
            }
            thread::sleep((until - now).min(Duration::from_millis(50)));
        }
    }

    /// One request: from the part file's length when resuming, else from zero.
    fn attempt(&mut self, target: &Target, progress: &Progress) -> Result<Attempt, AttemptError> {
        let io_fatal = |action: &'static str| {
            move |e: io::Error| AttemptError::Fatal(io_error(target.name, action, target.path)(e))
        };
        let mut offset = if target.resume {
            file_len(target.path)
        } else {
            0
        };
        if let Some(size) = target.size {
            if offset == size && size > 0 {
                // Interrupted after the last byte but before it was admitted.
                let digest = cache::sha256_file(target.path).map_err(io_fatal("hash"))?;
                return Ok(Attempt::Complete(digest));
            }
            if offset > size {
                truncate(target.path).map_err(io_fatal("truncate"))?;
                offset = 0;
            }
        }

        let mut request = self.client.get(target.url);
        if offset > 0 {
            request = request.header(RANGE, format!("bytes={offset}-"));
        }
        let mut response = request.send().map_err(|e| classify(&e))?;
        let status = response.status();
        let append = match status {
            StatusCode::PARTIAL_CONTENT if offset > 0 => {
                let start = response
                    .headers()
                    .get(CONTENT_RANGE)
                    .and_then(|v| v.to_str().ok())
                    .and_then(content_range_start);
                if start != Some(offset) {
                    progress.note(&format!(
                        "{}: the server answered the range request with other bytes; starting again from zero",
                        target.name
                    ));
                    truncate(target.path).map_err(io_fatal("truncate"))?;
                    return Ok(Attempt::Restart);
                }
                true
            }
            StatusCode::RANGE_NOT_SATISFIABLE if offset > 0 => {
                // The part may already be whole (its size was not pinned).
                let digest = cache::sha256_file(target.path).map_err(io_fatal("hash"))?;
                if target.sha256 == Some(digest.0.as_str()) {
                    return Ok(Attempt::Complete(digest));
                }
                truncate(target.path).map_err(io_fatal("truncate"))?;
                return Ok(Attempt::Restart);
            }
            s if s.is_success() => {
                if offset > 0 {
                    progress.note(&format!(
                        "{}: the server ignored the range request; starting again from zero",
                        target.name
                    ));
                }
                false
            }
            s if s == StatusCode::REQUEST_TIMEOUT
                || s == StatusCode::TOO_MANY_REQUESTS
                || s.is_server_error() =>
            {
                return Err(AttemptError::Retry {
                    message: format!("{} answered HTTP {}", target.url, s.as_u16()),
                    status: Some(s.as_u16()),
                });
            }
            s => return Err(AttemptError::Status(s.as_u16())),
        };

        let (mut hasher, mut written) = if append {
            cache::hash_file(target.path).map_err(io_fatal("hash"))?
        } else {
            (Sha256::new(), 0)
        };
        let file = if append {
            no_follow(OpenOptions::new().append(true)).open(target.path)
        } else {
            no_follow(OpenOptions::new().write(true).create(true).truncate(true)).open(target.path)
        }
        .map_err(io_fatal("write"))?;
        let mut file = BufWriter::with_capacity(BUFFER, file);
        // The whole body the server said it would send, if it said.
        let declared_end = response.content_length().map(|length| written + length);
        if let Some(end) = declared_end {
            progress.set_length(end);
        }
        progress.set_position(written);
        let mut window = (Instant::now(), 0u64);
        loop {
            if self.cancelled() {
                file.flush().map_err(io_fatal("write"))?;
                return Err(AttemptError::Cancelled);
            }
            let n = match response.read(&mut self.buffer) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    // Keep what arrived: the next attempt resumes after it.
                    file.flush().map_err(io_fatal("write"))?;
                    return Err(AttemptError::Retry {
                        message: describe(&e),
                        status: None,
                    });
                }
            };
            file.write_all(&self.buffer[..n])
                .map_err(io_fatal("write"))?;
            hasher.update(&self.buffer[..n]);
            written += n as u64;
            progress.set_position(written);
            if target.size.is_some_and(|size| written > size) {
                // Longer than pinned: no point reading on, the check will fail.
                break;
            }
            if target.size.is_none() && written > self.options.max_unpinned {
                file.flush().map_err(io_fatal("write"))?;
                return Err(AttemptError::Fatal(FetchError::BadUrl {
                    name: target.name.to_string(),
                    url: target.url.to_string(),
                    reason: format!(
                        "it sent more than {} and no size is pinned: stopped (an endless body?); \
                         pin the input's size, or fetch it from another server",
                        human_size(self.options.max_unpinned)
                    ),
                }));
            }
            window.1 += n as u64;
            if window.0.elapsed() >= self.options.timeout {
                if window.1 < MIN_BYTES_PER_WINDOW {
                    file.flush().map_err(io_fatal("write"))?;
                    return Err(AttemptError::Retry {
                        message: format!(
                            "only {} byte(s) arrived in {:.1} s (--timeout): the server trickles",
                            window.1,
                            window.0.elapsed().as_secs_f64()
                        ),
                        status: None,
                    });
                }
                window = (Instant::now(), 0);
            }
        }
        file.flush().map_err(io_fatal("write"))?;
        // Shorter than pinned but all the server declared: another file (whose sha256 check
        // says so, with both values), not a cut connection worth retrying.
        if let Some(size) = target.size
            && written < size
            && declared_end != Some(written)
        {
            return Err(AttemptError::Retry {
                message: format!("the connection closed after {written} of {size} bytes"),
                status: None,
            });
        }
        Ok(Attempt::Complete((cache::hex(&hasher.finalize()), written)))
    }
}

/// A request that failed before any answer: a redirect we refused is final; anything else
/// (connecting, TLS, a stall) may work next time.
fn classify(error: &reqwest::Error) -> AttemptError {
    if error.is_redirect() || error.is_builder() {
        AttemptError::Fatal(FetchError::BadUrl {
            name: String::new(),
            url: error.url().map(Url::to_string).unwrap_or_default(),
            reason: describe(error),
        })
    } else {
        AttemptError::Retry {
            message: describe(error),
            status: None,
        }
    }
}

/// An error with its causes, `a: b: c`, skipping causes the text already includes (many
/// errors show their source in their own message).
pub fn describe(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = cause.source();
    }
    text
}

/// The first byte of `bytes N-M/T`.
fn content_range_start(value: &str) -> Option<u64> {
    let range = value.trim().strip_prefix("bytes")?.trim_start();
    range.split('-').next()?.trim().parse().ok()
}

/// 0.5 s, 1 s, 2 s… up to 8 s, for the `failures`-th failure in a row.
fn backoff(failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(16);
    FIRST_BACKOFF
        .saturating_mul(1 << doublings)
        .min(MAX_BACKOFF)
}

fn file_len(path: &Path) -> u64 {
    fs::metadata(path).map_or(0, |m| m.len())
}

fn truncate(path: &Path) -> io::Result<()> {
    no_follow(OpenOptions::new().write(true).create(true).truncate(true))
        .open(path)
        .map(drop)
}

/// Where progress goes: bars on a terminal, plain lines otherwise.
enum Report {
    Bars(MultiProgress),
    Lines,
}

impl Report {
    fn new(options: &Options) -> Report {
        if options.progress && io::stderr().is_terminal() {
            Report::Bars(MultiProgress::with_draw_target(ProgressDrawTarget::stderr()))
        } else {
            Report::Lines
        }
    }

    /// A line that stays (above the bars, when there are bars).
    fn line(&self, text: &str) {
        match self {
            Report::Bars(multi) => {
                if multi.println(text).is_err() {
                    eprintln!("{text}");
                }
            }
            Report::Lines => eprintln!("{text}"),
        }
    }

    fn start(&self, target: &Target, offset: u64) -> Progress<'_> {
        let size = target
            .size
            .map_or_else(|| "size unknown".into(), human_size);
        let bar = match self {
            Report::Bars(multi) => {
                let bar = match target.size {
                    Some(size) => ProgressBar::new(size).with_style(bar_style()),
                    None => ProgressBar::no_length().with_style(spinner_style()),
                };
                let bar = multi.add(bar.with_prefix(target.name.to_string()));
                bar.set_position(offset);
                bar.reset_eta();
                bar.enable_steady_tick(Duration::from_millis(200));
                Some(bar)
            }
            Report::Lines => {
                if offset > 0 {
                    self.line(&format!(
                        "resuming {} at {} of {size}: {}",
                        target.name,
                        human_size(offset),
                        target.url
                    ));
                } else {
                    self.line(&format!(
                        "downloading {} ({size}): {}",
                        target.name, target.url
                    ));
                }
                None
            }
        };
        Progress {
            report: self,
            bar,
            name: target.name.to_string(),
            started: Instant::now(),
            offset,
        }
    }
}

fn bar_style() -> ProgressStyle {
    ProgressStyle::with_template(
        "{prefix:>24.bold} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
    )
    .expect("valid template")
    .progress_chars("=> ")
}

fn spinner_style() -> ProgressStyle {
    ProgressStyle::with_template("{prefix:>24.bold} {spinner} {bytes} {bytes_per_sec}")
        .expect("valid template")
}

/// One file's progress.
struct Progress<'a> {
    report: &'a Report,
    bar: Option<ProgressBar>,
    name: String,
    started: Instant,
    /// The part file's length when the download started.
    offset: u64,
}

impl Progress<'_> {
    fn set_length(&self, length: u64) {
        if let Some(bar) = &self.bar
            && bar.length() != Some(length)
        {
            bar.set_style(bar_style());
            bar.set_length(length);
        }
    }

    fn set_position(&self, position: u64) {
        if let Some(bar) = &self.bar {
            bar.set_position(position);
        }
    }

    fn note(&self, text: &str) {
        self.report.line(text);
    }

    /// The closing line: size, time and the rate of what this run transferred.
    fn finish(&self, size: u64) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        let seconds = self.started.elapsed().as_secs_f64();
        let moved = size.saturating_sub(self.offset);
        let rate = if seconds > 0.0 {
            human_size((moved as f64 / seconds) as u64)
        } else {
            "-".into()
        };
        let resumed = if self.offset > 0 {
            format!(", resumed at {}", human_size(self.offset))
        } else {
            String::new()
        };
        self.report.line(&format!(
            "downloaded {}: {} in {seconds:.1} s ({rate}/s{resumed})",
            self.name,
            human_size(size)
        ));
    }

    fn abandon(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Opening never follows a symlink at the last part of the path (`O_NOFOLLOW`): a link
/// planted at a part file's place fails the open instead of being written through.
fn no_follow(options: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW);
    }
    options
}
