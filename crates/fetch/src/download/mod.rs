//! HTTP downloads of pinned inputs into the content-addressed [`Cache`].
//!
//! A verified cache entry means no network at all. Otherwise the file is downloaded to its
//! `partial/<hex>.part` (resumed with a `Range` request when a part is already there), retried
//! with exponential backoff on connection errors, stalls, trickles and 5xx answers, and handed to
//! [`Cache::admit`], which renames it into place only when its sha256 and size match the pin.
//! Different files download in parallel, one worker thread (and one HTTP client) per job.
//!
//! - `mod.rs`: the requests, `fetch_all` (cache lookups, one job per sha256, threads) and
//!   `download_unpinned`
//! - `url_policy.rs`: mirrors, and which URLs may be downloaded at all
//! - `worker.rs`: one download thread: its client, attempts, retries with backoff
//! - `part.rs`: the part file: its lock, where a request resumes from, no links followed
//! - `response.rs`: what an answer means (status, Content-Range, Content-Length)
//! - `redirect.rs`: the redirect policy, and the 3xx answers not followed
//! - `body.rs`: a body into the part file: hashed as written, size caps, cancellation
//! - `pace.rs`: whether a download is getting anywhere, across its attempts
//! - `progress.rs`: bars on a terminal, plain lines otherwise
//! - `error.rs`: `FetchError` (one input's `InputFailure`, said with its name once) with its
//!   hints, and `describe` for any error chain
//! - `small.rs`: small answers (API JSON, index pages) read into memory under the same URL
//!   policy, with a cap

mod body;
mod error;
mod pace;
mod part;
mod progress;
mod redirect;
mod response;
mod small;
mod url_policy;
mod worker;

use std::collections::HashMap;
use std::fs;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::Duration;

use crate::cache::{Cache, CacheError, Pin};

use error::{combine, input, io_error};
use progress::ProgressSink;
use worker::{Failure, Target, Worker};

pub use error::{FetchError, InputFailure, Missing, describe, shown};
pub use small::get_small;
pub use url_policy::{ANY_HOST, effective_url};

use ct2v_support::report::Reporter;

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
    /// Retries after the first attempt, per file, in a row: real progress (see `timeout`)
    /// starts the count again.
    pub retries: u32,
    /// Files downloaded at the same time.
    pub jobs: usize,
    /// Progress bars when stderr is a terminal; otherwise (or when false) one plain line per
    /// file when it starts and when it finishes.
    pub progress: bool,
    /// How long connecting, or waiting for the next bytes, may take before the attempt fails;
    /// also the window in which at least [`MIN_BYTES_PER_WINDOW`] must arrive, counted across
    /// reconnects (a server that trickles a byte now and then never stalls a single read, and
    /// one that sends a few bytes per connection makes no real progress). A window that brings
    /// less is a failed attempt; `retries` of them in a row end the download.
    pub timeout: Duration,
    /// The most an input with no pinned size may be: an endless body stops there.
    pub max_unpinned: u64,
    /// Where progress goes: the command's reporter ([`Options::default`] keeps it in memory).
    pub reporter: Reporter,
}

/// Bytes that must arrive in every `timeout` window while a body is read.
pub(crate) const MIN_BYTES_PER_WINDOW: u64 = 1024;
/// [`Options::max_unpinned`] by default: more than any real input (the largest, the ROCm SDK
/// wheels, are under 2 GiB).
pub(crate) const MAX_UNPINNED_BYTES: u64 = 4 << 30;

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
            reporter: Reporter::captured(),
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

/// Makes sure every request's file is in the cache, verified, downloading what is missing
/// (in parallel, `options.jobs` at a time). Requests with the same sha256 share one download.
/// On the first failure no further download starts and those under way stop (their part
/// files are kept for the next run); every failure is reported.
pub fn fetch_all(
    cache: &Cache,
    requests: &[Request],
    options: &Options,
) -> Result<Vec<Fetched>, FetchError> {
    let report = ProgressSink::new(options);

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

    let found = look_up(cache, requests, &report)?;
    let (jobs, job_of) = jobs_for(requests, &urls, &found);

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

/// Each request's verified file in the cache, if it is there. A corrupt entry is a warning
/// (it will be downloaded again); any other cache error fails them all.
fn look_up(
    cache: &Cache,
    requests: &[Request],
    report: &ProgressSink,
) -> Result<Vec<Option<PathBuf>>, FetchError> {
    let mut found: Vec<Option<PathBuf>> = Vec::with_capacity(requests.len());
    let mut errors = Vec::new();
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
    if errors.is_empty() {
        Ok(found)
    } else {
        Err(combine(errors))
    }
}

/// One job per missing sha256, and for each request the job that provides it.
fn jobs_for<'a>(
    requests: &'a [Request],
    urls: &'a [String],
    found: &[Option<PathBuf>],
) -> (Vec<Job<'a>>, Vec<Option<usize>>) {
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
    (jobs, job_of)
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
    let report = ProgressSink::new(options);
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
        file_name: ct2v_support::paths::last_segment(&url).to_string(),
    };
    cache
        .admit_hashed(&temp, &pin, (sha256.clone(), size))
        .map_err(|e| FetchError::from_cache(name, e))?;
    Ok((sha256, size))
}

/// One file to download: the first request naming its sha256.
struct Job<'a> {
    pub(super) name: &'a str,
    pub(super) url: &'a str,
    pub(super) pin: &'a Pin,
}

/// A finished job: the cached file and whether it was downloaded, or why it failed.
type JobResult = Result<(PathBuf, bool), Failure>;

/// Runs the jobs on `options.jobs` threads; returns each job's path and whether it was
/// downloaded (false when another process put it in the cache meanwhile).
fn run_jobs(
    cache: &Cache,
    jobs: &[Job],
    options: &Options,
    report: &ProgressSink,
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
