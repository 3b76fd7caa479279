//! One download thread: its own HTTP client, the part file's lock, attempts with resume and
//! backoff. What one answer means is `response.rs`'s, reading its body `body.rs`'s.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use reqwest::blocking::Client;
use reqwest::header::RANGE;

use crate::cache::{Cache, CacheError, Pin};

use super::body::{BUFFER, Sink, Watch};
use super::error::{input, io_error};
use super::pace::Pace;
use super::progress::{Progress, ProgressSink};
use super::response::{self, Answer};
use super::{FetchError, InputFailure, Job, Options, describe, part, redirect};

/// First retry delay; doubled after every failure, up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(8);
/// Times in a row a server may answer a range request unusably before the download fails.
const MAX_RESTARTS: u32 = 3;

/// How a download ended when it did not succeed.
pub(super) enum Failure {
    Fatal(FetchError),
    /// Another download failed, so this one stopped; its part file is kept.
    Cancelled,
}

impl Failure {
    pub(super) fn into_error(self) -> FetchError {
        match self {
            Failure::Fatal(e) => e,
            Failure::Cancelled => unreachable!("only fetch_all cancels"),
        }
    }
}

/// Why one attempt (one HTTP request) did not complete the file.
pub(super) enum AttemptError {
    /// Worth another attempt: a connection error, a stall, a 5xx (status given).
    Retry {
        message: String,
        status: Option<u16>,
    },
    /// Worth another attempt too: a window of `--timeout` brought too few bytes.
    Slow(String),
    /// Not worth retrying: a 4xx, say.
    Status(u16),
    Fatal(FetchError),
    Cancelled,
}

/// What one attempt achieved.
pub(super) enum Attempt {
    /// The whole body is in the part file, which has this sha256 and size.
    Complete((String, u64)),
    /// The server answered the range request unusably; the part was cleared, ask again.
    Restart,
}

/// A failed attempt worth another: why, the HTTP status if it was one, and whether a window
/// brought too few bytes.
struct Retryable {
    message: String,
    status: Option<u16>,
    slow: bool,
}

/// The file one download writes and what it should come to.
pub(super) struct Target<'a> {
    pub(super) name: &'a str,
    pub(super) url: &'a str,
    /// The part file.
    pub(super) path: &'a Path,
    pub(super) sha256: Option<&'a str>,
    pub(super) size: Option<u64>,
    /// Continue from the part file's length with a range request.
    pub(super) resume: bool,
}

impl Target<'_> {
    /// An I/O error on the part file (`action`: "write", "hash"…), which ends the download.
    pub(super) fn io_fatal(&self, action: &'static str) -> impl Fn(io::Error) -> AttemptError {
        move |e| AttemptError::Fatal(io_error(self.name, action, self.path)(e))
    }
}

/// A download thread: its own HTTP client (and so its own I/O thread) and buffer.
pub(super) struct Worker<'a> {
    client: Client,
    options: &'a Options,
    report: &'a ProgressSink,
    cancel: &'a AtomicBool,
    buffer: Vec<u8>,
}

impl<'a> Worker<'a> {
    pub(super) fn new(
        options: &'a Options,
        report: &'a ProgressSink,
        cancel: &'a AtomicBool,
    ) -> Result<Worker<'a>, Failure> {
        let client = redirect::client(options).map_err(|e| {
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
    pub(super) fn fetch_pinned(
        &mut self,
        cache: &Cache,
        job: &Job,
    ) -> Result<(PathBuf, bool), Failure> {
        let name = job.name;
        let fatal = Failure::Fatal;
        let dir = cache.partial_dir();
        std::fs::create_dir_all(&dir).map_err(|e| fatal(io_error(name, "create", &dir)(e)))?;
        let lock = dir.join(format!("{}.lock", job.pin.sha256));
        let _lock = part::lock(self.report, &lock, name)?;
        match cache.lookup(job.pin) {
            Ok(Some(path)) => return Ok((path, false)),
            Ok(None) => {}
            Err(e @ CacheError::Corrupt { .. }) => {
                self.report.line(&format!("warning: {}{e}", input(name)));
            }
            Err(e) => return Err(fatal(FetchError::from_cache(name, e))),
        }
        let part = cache.partial_path(&job.pin.sha256);
        part::clear_odd(self.report, &part, name)?;
        let target = Target {
            name,
            url: job.url,
            path: &part,
            sha256: Some(&job.pin.sha256),
            size: job.pin.size,
            resume: true,
        };
        let kept = part::len(&part);
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

    /// The part file holding the whole body, with its progress shown: finished, or abandoned
    /// however the download failed. Returns the sha256 and size of the part file, hashed as it
    /// was written.
    pub(super) fn download(&mut self, target: &Target) -> Result<(String, u64), Failure> {
        let start_len = if target.resume {
            part::len(target.path)
        } else {
            0
        };
        let progress = self.report.start(target, start_len);
        let outcome = self.attempts(target, &progress);
        match &outcome {
            Ok((_, size)) => progress.finish(*size),
            Err(_) => progress.abandon(),
        }
        outcome
    }

    /// Attempts until the part file holds the whole body, with backoff between failures.
    /// The failure count starts again only after real progress (see [`Pace`]).
    fn attempts(&mut self, target: &Target, progress: &Progress) -> Result<(String, u64), Failure> {
        let retries = self.options.retries;
        // Without resume every attempt starts from zero: bytes are no progress towards the end.
        let mut pace = Pace::new(self.options.timeout, target.resume);
        let mut attempts = 0u32;
        let mut restarts = 0u32;
        loop {
            if self.cancelled() {
                return Err(Failure::Cancelled);
            }
            attempts += 1;
            pace.start();
            let outcome = self.attempt(target, progress, &mut pace);
            pace.stop();
            let error = match outcome {
                Ok(Attempt::Complete(digest)) => return Ok(digest),
                Ok(Attempt::Restart) => {
                    restarts += 1;
                    if restarts <= MAX_RESTARTS {
                        continue;
                    }
                    AttemptError::Fatal(
                        InputFailure::Network {
                            url: target.url.to_string(),
                            attempts,
                            message:
                                "the server keeps answering range requests with the wrong bytes"
                                    .into(),
                        }
                        .of(target.name.to_string()),
                    )
                }
                Err(e) => e,
            };
            let retry = retryable(error, target, attempts)?;
            let failures = pace.failed();
            if failures > retries {
                return Err(Failure::Fatal(
                    self.exhausted(target, &pace, attempts, failures, retry),
                ));
            }
            let delay = backoff(failures);
            progress.note(&format!(
                "warning: {}{}; retrying in {:.1} s ({} of {retries} retries)",
                input(target.name),
                retry.message,
                delay.as_secs_f64(),
                failures
            ));
            self.sleep(delay);
        }
    }

    /// The error once `failures` attempts in a row failed, the last as `last` says.
    fn exhausted(
        &self,
        target: &Target,
        pace: &Pace,
        attempts: u32,
        failures: u32,
        last: Retryable,
    ) -> FetchError {
        let name = target.name.to_string();
        let url = target.url.to_string();
        let (bytes, elapsed) = pace.behind();
        match last.status {
            Some(status) => InputFailure::Status {
                url,
                status,
                attempts,
            }
            .of(name),
            // A few bytes per attempt: the attempts failed, but the server is what to blame.
            None if last.slow || (target.resume && bytes > 0) => InputFailure::TooSlow {
                url,
                bytes,
                seconds: elapsed.as_secs_f64(),
                window_seconds: self.options.timeout.as_secs_f64(),
                slow: failures,
                attempts,
                last: (!last.slow).then_some(last.message),
            }
            .of(name),
            None => InputFailure::Network {
                url,
                attempts,
                message: last.message,
            }
            .of(name),
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
    fn attempt(
        &mut self,
        target: &Target,
        progress: &Progress,
        pace: &mut Pace,
    ) -> Result<Attempt, AttemptError> {
        let offset = part::resume_offset(target)?;
        if offset > 0 && target.size == Some(offset) {
            // Interrupted after the last byte but before it was admitted.
            return part::digest(target).map(Attempt::Complete);
        }
        let mut request = self.client.get(target.url);
        if offset > 0 {
            request = request.header(RANGE, format!("bytes={offset}-"));
        }
        let mut response = request.send().map_err(|e| response::classify(&e, target))?;
        let append = match response::interpret(
            &response,
            offset,
            target,
            progress,
            self.options.allow_http,
        )? {
            Answer::Append => true,
            Answer::Overwrite => false,
            Answer::Done(attempt) => return Ok(attempt),
        };
        let mut sink = Sink::open(target, append, self.options.max_unpinned)?;
        let declared_end = response::declared_end(&response, sink.written(), target)?;
        if let Some(end) = declared_end {
            progress.set_length(end);
        }
        progress.set_position(sink.written());
        let mut watch = Watch {
            progress,
            pace,
            cancel: self.cancel,
        };
        sink.fill(&mut response, &mut self.buffer, &mut watch)?;
        sink.finish(declared_end)
    }
}

/// A failed attempt as one worth retrying, or the download's end.
fn retryable(error: AttemptError, target: &Target, attempts: u32) -> Result<Retryable, Failure> {
    match error {
        AttemptError::Retry { message, status } => Ok(Retryable {
            message,
            status,
            slow: false,
        }),
        AttemptError::Slow(message) => Ok(Retryable {
            message,
            status: None,
            slow: true,
        }),
        AttemptError::Status(status) => Err(Failure::Fatal(
            InputFailure::Status {
                url: target.url.to_string(),
                status,
                attempts,
            }
            .of(target.name.to_string()),
        )),
        AttemptError::Fatal(e) => Err(Failure::Fatal(e)),
        AttemptError::Cancelled => Err(Failure::Cancelled),
    }
}

/// 0.5 s, 1 s, 2 s… up to 8 s, for the `failures`-th failure in a row.
fn backoff(failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(16);
    FIRST_BACKOFF
        .saturating_mul(1 << doublings)
        .min(MAX_BACKOFF)
}
