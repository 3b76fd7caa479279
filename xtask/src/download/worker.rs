//! One download thread: its own HTTP client, the part file's lock, attempts with resume and
//! backoff, and the stall and size checks while a body is read.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use reqwest::blocking::Client;
use reqwest::blocking::Response;
use reqwest::header::{CONTENT_RANGE, HeaderValue, LOCATION, RANGE};
use reqwest::{StatusCode, Url, redirect};
use sha2::{Digest, Sha256};

use crate::cache::{self, Cache, CacheError, Pin};
use crate::units::human_size;

use super::error::{input, io_error, redirect_target};
use super::progress::{Progress, Report};
use super::url_policy::redirect_refusal;
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
    /// Worth another attempt too: a window of `--timeout` brought too few bytes.
    Slow(String),
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
        // Locations that are not http(s) URLs never get here: the client hands the 3xx back,
        // and `attempt` explains it.
        let policy = redirect::Policy::custom(move |attempt| {
            let reason = if attempt.previous().len() >= MAX_REDIRECTS {
                Some(format!(
                    "more than {MAX_REDIRECTS} redirects in a row (a loop?): check the URL in the \
                     variant file, or add a mirror"
                ))
            } else {
                redirect_refusal(attempt.url(), allow_http)
            };
            match reason {
                Some(reason) => {
                    let refused = RefusedRedirect {
                        from: attempt
                            .previous()
                            .last()
                            .map(Url::to_string)
                            .unwrap_or_default(),
                        to: shown(attempt.url().as_str().as_bytes()),
                        reason,
                    };
                    attempt.error(refused)
                }
                None => attempt.follow(),
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
    /// The failure count starts again only after real progress (see [`Pace`]). Returns the
    /// sha256 and size of the part file, hashed as it was written.
    pub(super) fn download(&mut self, target: &Target) -> Result<(String, u64), Failure> {
        let retries = self.options.retries;
        let start_len = if target.resume {
            file_len(target.path)
        } else {
            0
        };
        let progress = self.report.start(target, start_len);
        // Without resume every attempt starts from zero: bytes are no progress towards the end.
        let mut pace = Pace::new(self.options.timeout, target.resume);
        let mut attempts = 0u32;
        let mut restarts = 0u32;
        loop {
            if self.cancelled() {
                progress.abandon();
                return Err(Failure::Cancelled);
            }
            attempts += 1;
            pace.start();
            let outcome = self.attempt(target, &progress, &mut pace);
            pace.stop();
            let error = match outcome {
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
            let (message, status, slow) = match error {
                AttemptError::Retry { message, status } => (message, status, false),
                AttemptError::Slow(message) => (message, None, true),
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
            let failures = pace.failed();
            if failures > retries {
                progress.abandon();
                let name = target.name.to_string();
                let url = target.url.to_string();
                let (bytes, elapsed) = pace.behind();
                return Err(Failure::Fatal(match status {
                    Some(status) => FetchError::Status {
                        name,
                        url,
                        status,
                        attempts,
                    },
                    // A few bytes per attempt: the attempts failed, but the server is what
                    // to blame.
                    None if slow || (target.resume && bytes > 0) => FetchError::TooSlow {
                        name,
                        url,
                        bytes,
                        seconds: elapsed.as_secs_f64(),
                        window_seconds: self.options.timeout.as_secs_f64(),
                        slow: failures,
                        attempts,
                        last: (!slow).then_some(message),
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
    fn attempt(
        &mut self,
        target: &Target,
        progress: &Progress,
        pace: &mut Pace,
    ) -> Result<Attempt, AttemptError> {
        let io_fatal = |action: &'static str| {
            move |e: io::Error| AttemptError::Fatal(io_error(target.name, action, target.path)(e))
        };
        // The server's answer does not add up: the part goes, so that the next run does not
        // ask for the same range again.
        let unusable = |reason: String| -> AttemptError {
            if let Err(e) = fs::remove_file(target.path)
                && e.kind() != io::ErrorKind::NotFound
            {
                return io_fatal("remove")(e);
            }
            AttemptError::Fatal(FetchError::BadUrl {
                name: target.name.to_string(),
                url: target.url.to_string(),
                reason: format!(
                    "{reason}; the partial download was removed, so that the next run starts \
                     from the beginning; if it happens again, add a mirror"
                ),
            })
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
        let mut response = request.send().map_err(|e| classify(&e, target))?;
        let status = response.status();
        let append = match status {
            StatusCode::PARTIAL_CONTENT if offset > 0 => {
                let Some(header) = response.headers().get(CONTENT_RANGE) else {
                    return Err(unusable(format!(
                        "it answered the request for bytes {offset}- with 206 and no Content-Range"
                    )));
                };
                let range = content_range(header).map_err(|why| {
                    unusable(format!(
                        "it answered the request for bytes {offset}- with Content-Range `{}`, \
                         which is {why}",
                        shown(header.as_bytes())
                    ))
                })?;
                // Only with a total of `*` can the last byte be u64::MAX, and this overflow.
                let length = (range.last - range.first).checked_add(1);
                if let Some(declared) = response.content_length()
                    && length != Some(declared)
                {
                    return Err(unusable(format!(
                        "it answered the request for bytes {offset}- with Content-Length \
                         {declared} and Content-Range `{}`, which do not agree",
                        shown(header.as_bytes())
                    )));
                }
                if range.first != offset {
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
            s if s.is_redirection() => {
                return Err(unfollowed_redirect(
                    &response,
                    target,
                    self.options.allow_http,
                ));
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
        let declared_end = match response.content_length() {
            None => None,
            Some(length) => match written.checked_add(length) {
                Some(end) => Some(end),
                None => {
                    return Err(unusable(format!(
                        "it declared Content-Length {length} after the {written} bytes kept, \
                         more than any file can hold"
                    )));
                }
            },
        };
        if let Some(end) = declared_end {
            progress.set_length(end);
        }
        progress.set_position(written);
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
            written = written.saturating_add(n as u64);
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
            if let Err(message) = pace.received(n as u64) {
                file.flush().map_err(io_fatal("write"))?;
                return Err(AttemptError::Slow(message));
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

/// A redirect the policy refused, with where it came from and went.
#[derive(Debug)]
struct RefusedRedirect {
    from: String,
    to: String,
    reason: String,
}

impl std::fmt::Display for RefusedRedirect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} redirected to {}: {}",
            self.from, self.to, self.reason
        )
    }
}

impl std::error::Error for RefusedRedirect {}

/// A request that failed before any answer: a redirect we refused is final; anything else
/// (connecting, TLS, a stall) may work next time.
fn classify(error: &reqwest::Error, target: &Target) -> AttemptError {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = cause {
        if let Some(refused) = e.downcast_ref::<RefusedRedirect>() {
            return AttemptError::Fatal(FetchError::Redirect {
                name: target.name.to_string(),
                url: target.url.to_string(),
                to: redirect_target(target.url, &refused.from, refused.to.clone()),
                reason: refused.reason.clone(),
            });
        }
        cause = e.source();
    }
    if error.is_redirect() || error.is_builder() {
        AttemptError::Fatal(FetchError::BadUrl {
            name: target.name.to_string(),
            url: error
                .url()
                .map_or_else(|| target.url.to_string(), Url::to_string),
            reason: describe(error),
        })
    } else {
        AttemptError::Retry {
            message: describe(error),
            status: None,
        }
    }
}

/// A 3xx the client did not follow: its Location is not an http(s) URL (`file://` cannot
/// even be handed to the redirect policy), is missing, or the status is not a redirect the
/// client follows.
fn unfollowed_redirect(response: &Response, target: &Target, allow_http: bool) -> AttemptError {
    let status = response.status().as_u16();
    let Some(location) = response.headers().get(LOCATION) else {
        return AttemptError::Status(status);
    };
    let from = response.url();
    let (to, reason) = match location.to_str().map(|text| from.join(text.trim())) {
        Ok(Ok(to)) => {
            let reason = redirect_refusal(&to, allow_http).unwrap_or_else(|| {
                format!(
                    "HTTP {status} is not a redirect that is followed: pin the URL it names \
                     instead, or add a mirror"
                )
            });
            (shown(to.as_str().as_bytes()), reason)
        }
        Ok(Err(e)) => (
            shown(location.as_bytes()),
            format!("not a URL ({e}): check the URL in the variant file, or add a mirror"),
        ),
        Err(_) => (
            shown(location.as_bytes()),
            "not a URL (it is not plain text): check the URL in the variant file, or add a mirror"
                .into(),
        ),
    };
    AttemptError::Fatal(FetchError::Redirect {
        name: target.name.to_string(),
        url: target.url.to_string(),
        to: redirect_target(target.url, from.as_str(), to),
        reason,
    })
}

/// Text from the server (a header value, a URL it named), for a message: escaped, and cut
/// when long.
fn shown(value: &[u8]) -> String {
    const MOST: usize = 200;
    let text = String::from_utf8_lossy(value);
    let mut shown: String = text
        .chars()
        .take(MOST)
        .flat_map(char::escape_debug)
        .collect();
    if text.chars().count() > MOST {
        shown.push('…');
    }
    shown
}

/// `Content-Range: bytes FIRST-LAST/TOTAL`, where TOTAL may be `*`.
#[derive(Debug, PartialEq, Eq)]
struct ContentRange {
    first: u64,
    last: u64,
    total: Option<u64>,
}

/// Parses and checks a Content-Range: `LAST >= FIRST`, `TOTAL > LAST`. The error says what
/// is wrong with it.
fn content_range(value: &HeaderValue) -> Result<ContentRange, &'static str> {
    let malformed = "not `bytes FIRST-LAST/TOTAL`";
    let text = value.to_str().map_err(|_| malformed)?.trim();
    let (unit, rest) = text.split_once(' ').ok_or(malformed)?;
    if !unit.eq_ignore_ascii_case("bytes") {
        return Err("not in bytes");
    }
    let (span, total) = rest.trim().split_once('/').ok_or(malformed)?;
    let (first, last) = span.split_once('-').ok_or(malformed)?;
    let number = |text: &str| -> Result<u64, &'static str> {
        let text = text.trim();
        if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(malformed);
        }
        text.parse().map_err(|_| "a number too large for any file")
    };
    let range = ContentRange {
        first: number(first)?,
        last: number(last)?,
        total: match total.trim() {
            "*" => None,
            total => Some(number(total)?),
        },
    };
    if range.last < range.first {
        return Err("impossible: its last byte comes before its first");
    }
    if range.total.is_some_and(|total| total <= range.last) {
        return Err("impossible: its last byte is past the file's end");
    }
    Ok(range)
}

/// Whether a download is getting anywhere: every `--timeout` window of request time must
/// bring [`MIN_BYTES_PER_WINDOW`], counted across reconnects. Counting failed attempts alone
/// is not enough: a server that sends a few bytes per connection and then stalls or cuts it
/// would make each resume look like progress, and be asked again forever.
struct Pace {
    window: Duration,
    /// Whether bytes received are progress at all (not when every attempt starts from zero).
    resumable: bool,
    /// Request time of the finished attempts, and bytes received in all.
    spent: Duration,
    received: u64,
    /// When the running attempt started.
    running: Option<Instant>,
    /// `(request time, bytes received)` when the open window started, and at the last real
    /// progress.
    window_start: (Duration, u64),
    progress_at: (Duration, u64),
    /// Failed attempts since the last real progress.
    failures: u32,
}

impl Pace {
    fn new(window: Duration, resumable: bool) -> Pace {
        Pace {
            window,
            resumable,
            spent: Duration::ZERO,
            received: 0,
            running: None,
            window_start: (Duration::ZERO, 0),
            progress_at: (Duration::ZERO, 0),
            failures: 0,
        }
    }

    fn start(&mut self) {
        self.running = Some(Instant::now());
    }

    fn stop(&mut self) {
        if let Some(started) = self.running.take() {
            self.spent += started.elapsed();
        }
    }

    fn now(&self) -> (Duration, u64) {
        let running = self
            .running
            .map_or(Duration::ZERO, |started| started.elapsed());
        (self.spent + running, self.received)
    }

    /// Request time and bytes in the open window.
    fn in_window(&self) -> (Duration, u64) {
        let (time, bytes) = self.now();
        (time - self.window_start.0, bytes - self.window_start.1)
    }

    /// Counts bytes that arrived; when they close a window that brought too few, says so.
    fn received(&mut self, bytes: u64) -> Result<(), String> {
        self.received = self.received.saturating_add(bytes);
        let (elapsed, bytes) = self.in_window();
        if elapsed < self.window {
            return Ok(());
        }
        if bytes < MIN_BYTES_PER_WINDOW {
            return Err(format!(
                "the server sent {bytes} byte(s) in {:.1} s, below {MIN_BYTES_PER_WINDOW} per \
                 {:.1} s (--timeout): it trickles",
                elapsed.as_secs_f64(),
                self.window.as_secs_f64()
            ));
        }
        self.progressed();
        Ok(())
    }

    fn progressed(&mut self) {
        let now = self.now();
        self.window_start = now;
        if self.resumable {
            self.progress_at = now;
            self.failures = 0;
        }
    }

    /// Counts a failed attempt; returns the failures since the last real progress. An
    /// attempt cut short still counts as progress when its window already has enough bytes;
    /// a window that is over starts again, one that is not goes on into the next attempt.
    fn failed(&mut self) -> u32 {
        let (elapsed, bytes) = self.in_window();
        if bytes >= MIN_BYTES_PER_WINDOW {
            self.progressed();
        } else if elapsed >= self.window {
            self.window_start = self.now();
        }
        self.failures += 1;
        self.failures
    }

    /// Bytes received and request time since the last real progress.
    fn behind(&self) -> (u64, Duration) {
        let (time, bytes) = self.now();
        (bytes - self.progress_at.1, time - self.progress_at.0)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ContentRange, &'static str> {
        content_range(&HeaderValue::from_str(text).unwrap())
    }

    #[test]
    fn a_content_range_is_checked_not_trusted() {
        let range = |first, last, total| ContentRange { first, last, total };
        assert_eq!(parse("bytes 0-9/10"), Ok(range(0, 9, Some(10))));
        assert_eq!(parse(" Bytes 5-9/* "), Ok(range(5, 9, None)));
        let max = u64::MAX;
        assert_eq!(
            parse(&format!("bytes {}-{}/{max}", max - 1, max - 1)),
            Ok(range(max - 1, max - 1, Some(max)))
        );
        for (text, why) in [
            ("bytes 18446744073709551615-0/5", "before its first"),
            ("bytes 10-9/20", "before its first"),
            ("bytes 0-9/9", "past the file's end"),
            (
                "bytes 18446744073709551615-18446744073709551615/18446744073709551615",
                "past",
            ),
            ("bytes 18446744073709551616-1/2", "too large"),
            ("bytes 0-1/18446744073709551616", "too large"),
            ("bytes -1-5/10", "not `bytes"),
            ("bytes +1-5/10", "not `bytes"),
            ("bytes 0-9", "not `bytes"),
            ("bytes */10", "not `bytes"),
            ("bytes", "not `bytes"),
            ("items 0-9/10", "not in bytes"),
        ] {
            let error = parse(text).unwrap_err();
            assert!(error.contains(why), "{text}: {error}");
        }
    }

    #[test]
    fn a_window_with_too_few_bytes_is_slow_and_progress_resets_the_failures() {
        let window = Duration::from_millis(20);
        let mut pace = Pace::new(window, true);
        // A quick attempt with a few bytes: a failure, the window stays open.
        pace.start();
        assert!(pace.received(10).is_ok());
        pace.stop();
        assert_eq!(pace.failed(), 1);
        // The next one fills the window: real progress, the count starts again.
        pace.start();
        assert!(pace.received(MIN_BYTES_PER_WINDOW).is_ok());
        pace.stop();
        assert_eq!(pace.failed(), 1);
        assert_eq!(pace.behind().0, 0);
        // A whole window with one byte in it is slow.
        pace.start();
        thread::sleep(window * 2);
        let slow = pace.received(1).unwrap_err();
        assert!(slow.contains("the server sent 1 byte(s)"), "{slow}");
        pace.stop();
        assert_eq!(pace.failed(), 2);
        assert_eq!(pace.behind().0, 1);

        // Without resume, bytes are no progress: the count only grows.
        let mut pace = Pace::new(window, false);
        for failures in 1..=3 {
            pace.start();
            assert!(pace.received(MIN_BYTES_PER_WINDOW * 10).is_ok());
            pace.stop();
            assert_eq!(pace.failed(), failures);
        }
    }
}
