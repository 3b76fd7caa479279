//! One download thread: its own HTTP client, the part file's lock, attempts with resume and
//! backoff, and the stall and size checks while a body is read.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use reqwest::blocking::Client;
use reqwest::header::{CONTENT_RANGE, RANGE};
use reqwest::{StatusCode, Url, redirect};
use sha2::{Digest, Sha256};

use crate::cache::{self, Cache, CacheError, Pin};
use crate::units::human_size;

use super::error::{input, io_error};
use super::progress::{Progress, Report};
use super::url_policy::is_loopback;
use super::{FetchError, Job, MIN_BYTES_PER_WINDOW, Options, describe};

/// Read buffer for response bodies, and the write buffer in front of the part file.
const BUFFER: usize = 1 << 20;
/// First retry delay; doubled after every failure, up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(8);
/// Times in a row a server may answer a range request unusably before the download fails.
const MAX_RESTARTS: u32 = 3;
const MAX_REDIRECTS: usize = 10;

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

/// A download thread: its own HTTP client (and so its own I/O thread) and buffer.
pub(super) struct Worker<'a> {
    client: Client,
    options: &'a Options,
    report: &'a Report,
    cancel: &'a AtomicBool,
    buffer: Vec<u8>,
}

impl<'a> Worker<'a> {
    pub(super) fn new(
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
    pub(super) fn fetch_pinned(
        &mut self,
        cache: &Cache,
        job: &Job,
    ) -> Result<(PathBuf, bool), Failure> {
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
    pub(super) fn download(&mut self, target: &Target) -> Result<(String, u64), Failure> {
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
