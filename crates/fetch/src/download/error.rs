//! Why a download failed, said with the input's name and the next step.

use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::cache::CacheError;

use super::MIN_BYTES_PER_WINDOW;

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
    /// One input's download failed; `name` is the input's ("" until [`FetchError::for_input`]
    /// names it), said once before what went wrong.
    #[error("{}{failure}", input(name))]
    Input {
        name: String,
        #[source]
        failure: InputFailure,
    },
    #[error("{}", offline_message(missing))]
    Offline { missing: Vec<Missing> },
    #[error("cannot set up the HTTP client: {message}")]
    Client { message: String },
    #[error("{} inputs failed:\n{}", errors.len(), list_errors(errors))]
    Several { errors: Vec<FetchError> },
}

/// What went wrong with one input's download ([`FetchError::Input`] names the input).
#[derive(Debug, Error)]
pub enum InputFailure {
    #[error(
        "refusing to download {url} over plain http (only loopback hosts may use http): use the https URL, add a mirror that rewrites it to https, or pass --allow-http (the sha256 pin still checks the file)"
    )]
    InsecureUrl { url: String },
    #[error("cannot download `{url}`: {reason}")]
    BadUrl { url: String, reason: String },
    /// A redirect that is not followed: to another scheme, to plain http, a loop.
    #[error("{url} redirected to {to}: {reason}")]
    Redirect {
        /// The URL asked for.
        url: String,
        /// Where it pointed, as sent (escaped) when it is not a URL; after earlier redirects,
        /// followed by the URL that sent it there (see [`redirect_target`]).
        to: String,
        reason: String,
    },
    #[error(
        "downloading {url} made no real progress: the server sent {bytes} byte(s) in the last {:.1} s ({}), below {MIN_BYTES_PER_WINDOW} bytes per {:.1} s (--timeout): it trickles{}\n  = try again later, or add a mirror; on a slow link a longer --timeout lowers the rate needed, and more --retries allow more slow attempts in a row",
        seconds,
        attempts_text(*slow, *attempts),
        window_seconds,
        last.as_ref().map(|last| format!("; the last attempt ended: {last}")).unwrap_or_default()
    )]
    TooSlow {
        url: String,
        /// Bytes received since the last real progress, in `seconds` of request time.
        bytes: u64,
        seconds: f64,
        /// `--timeout`: each window of it must bring [`MIN_BYTES_PER_WINDOW`].
        window_seconds: f64,
        /// Failed attempts since the last real progress, and in all.
        slow: u32,
        attempts: u32,
        /// How the last attempt ended, when not by a slow window (a cut connection, say).
        last: Option<String>,
    },
    #[error("{url} answered HTTP {status}{}", status_hint(*status, *attempts))]
    Status {
        url: String,
        status: u16,
        attempts: u32,
    },
    #[error(
        "downloading {url} failed after {attempts} attempt(s): {message}\n  = check the network (and HTTPS_PROXY, if one is needed), then run again: the download resumes where it stopped"
    )]
    Network {
        url: String,
        attempts: u32,
        message: String,
    },
    #[error("{source}")]
    Cache {
        #[source]
        source: Box<CacheError>,
    },
    #[error(
        "cannot {action} {}: {source}{}",
        path.display(),
        crate::cache::disk_note(source)
    )]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl InputFailure {
    /// This failure of input `name`'s download.
    pub(super) fn of(self, name: impl Into<String>) -> FetchError {
        FetchError::Input {
            name: name.into(),
            failure: self,
        }
    }
}

impl FetchError {
    /// The inputs this error is about.
    pub fn input_names(&self) -> Vec<&str> {
        match self {
            FetchError::Input { name, .. } => vec![name.as_str()],
            FetchError::Offline { missing } => missing.iter().map(|m| m.name.as_str()).collect(),
            FetchError::Several { errors } => {
                errors.iter().flat_map(FetchError::input_names).collect()
            }
            FetchError::Client { .. } => Vec::new(),
        }
    }
}

pub(super) fn input(name: &str) -> String {
    if name.is_empty() {
        String::new()
    } else {
        format!("input `{name}`: ")
    }
}

fn attempts_text(slow: u32, attempts: u32) -> String {
    if slow == attempts {
        format!("{attempts} attempt(s)")
    } else {
        format!("the last {slow} of {attempts} attempts")
    }
}

/// [`InputFailure::Redirect`]'s `to`: where `from` pointed, and `from` too when it is not the
/// URL asked for.
pub(super) fn redirect_target(url: &str, from: &str, to: String) -> String {
    let asked = url::Url::parse(url).map_or_else(|_| url.to_string(), String::from);
    if asked == from {
        to
    } else {
        format!("{to} (by {from}, where it led)")
    }
}

/// Text from the server (a header value, a URL it named), for a message: escaped, and cut
/// when long.
pub fn shown(value: &[u8]) -> String {
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

fn status_hint(status: u16, attempts: u32) -> String {
    match status {
        300..=399 => "; a redirect with no Location to follow: check the URL in the variant file, or add a mirror".into(),
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
        match &m.path {
            Some(path) => {
                let _ = write!(text, "\n      would be {}", path.display());
            }
            None => {
                text.push_str("\n      (not pinned yet: the cache keeps files by their sha256)")
            }
        }
    }
    let placeable = missing.iter().any(|m| m.path.is_some());
    text.push_str(
        "\n  = run without --offline where the URLs can be reached (`cargo xtask fetch`, or `pin` for an unpinned one)",
    );
    if placeable {
        text.push_str(", or copy each file to the path shown");
    }
    text
}

fn list_errors(errors: &[FetchError]) -> String {
    let items: Vec<String> = errors.iter().map(|e| format!("- {e}")).collect();
    items.join("\n")
}

impl FetchError {
    /// The same error, naming `name` as the input it is about.
    pub(super) fn for_input(mut self, input: &str) -> FetchError {
        if let FetchError::Input { name, .. } = &mut self {
            *name = input.to_string();
        }
        self
    }

    pub(super) fn from_cache(name: &str, error: CacheError) -> FetchError {
        InputFailure::Cache {
            source: Box::new(error),
        }
        .of(name.to_string())
    }
}

/// One error as itself; several as [`FetchError::Several`].
pub(super) fn combine(mut errors: Vec<FetchError>) -> FetchError {
    if errors.len() == 1 {
        errors.pop().expect("one error")
    } else {
        FetchError::Several { errors }
    }
}

pub(super) fn io_error<'a>(
    name: &'a str,
    action: &'static str,
    path: &'a Path,
) -> impl FnOnce(io::Error) -> FetchError + 'a {
    move |source| {
        InputFailure::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
        .of(name.to_string())
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
