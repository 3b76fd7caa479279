//! What a server's answer means for the part file: its status, Content-Range and
//! Content-Length checked (never trusted) and turned into what to do next, or why not.

use reqwest::StatusCode;
use reqwest::Url;
use reqwest::blocking::Response;
use reqwest::header::{CONTENT_RANGE, HeaderValue};

use super::error::shown;
use super::progress::Progress;
use super::redirect::{self, RefusedRedirect};
use super::worker::{Attempt, AttemptError, Target};
use super::{InputFailure, describe, part};

/// What to do with a response's body.
pub(super) enum Answer {
    /// Write it after the part file's bytes: the server sent the range asked for.
    Append,
    /// Write it from the start: the server sent the whole file.
    Overwrite,
    /// Nothing to read: the attempt ended so.
    Done(Attempt),
}

/// A request that failed before any answer: a redirect we refused is final; anything else
/// (connecting, TLS, a stall) may work next time.
pub(super) fn classify(error: &reqwest::Error, target: &Target) -> AttemptError {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = cause {
        if let Some(refused) = e.downcast_ref::<RefusedRedirect>() {
            return refused.for_target(target);
        }
        cause = e.source();
    }
    if error.is_redirect() || error.is_builder() {
        AttemptError::Fatal(
            InputFailure::BadUrl {
                url: error
                    .url()
                    .map_or_else(|| target.url.to_string(), Url::to_string),
                reason: describe(error),
            }
            .of(target.name.to_string()),
        )
    } else {
        AttemptError::Retry {
            message: describe(error),
            status: None,
        }
    }
}

/// The answer to a request for the bytes from `offset` (from the start when 0).
pub(super) fn interpret(
    response: &Response,
    offset: u64,
    target: &Target,
    progress: &Progress,
    allow_http: bool,
) -> Result<Answer, AttemptError> {
    match response.status() {
        StatusCode::PARTIAL_CONTENT if offset > 0 => {
            partial_content(response, offset, target, progress)
        }
        StatusCode::RANGE_NOT_SATISFIABLE if offset > 0 => {
            // The part may already be whole (its size was not pinned).
            let digest = part::digest(target)?;
            if target.sha256 == Some(digest.0.as_str()) {
                return Ok(Answer::Done(Attempt::Complete(digest)));
            }
            restart(target)
        }
        s if s.is_success() => {
            if offset > 0 {
                progress.note(&format!(
                    "{}: the server ignored the range request; starting again from zero",
                    target.name
                ));
            }
            Ok(Answer::Overwrite)
        }
        s if s.is_redirection() => Err(redirect::unfollowed(response, target, allow_http)),
        s if s == StatusCode::REQUEST_TIMEOUT
            || s == StatusCode::TOO_MANY_REQUESTS
            || s.is_server_error() =>
        {
            Err(AttemptError::Retry {
                message: format!("{} answered HTTP {}", target.url, s.as_u16()),
                status: Some(s.as_u16()),
            })
        }
        s => Err(AttemptError::Status(s.as_u16())),
    }
}

/// A 206 to a range request: appended only when its Content-Range starts at `offset` and
/// agrees with its Content-Length.
fn partial_content(
    response: &Response,
    offset: u64,
    target: &Target,
    progress: &Progress,
) -> Result<Answer, AttemptError> {
    let Some(header) = response.headers().get(CONTENT_RANGE) else {
        return Err(unusable(
            target,
            format!("it answered the request for bytes {offset}- with 206 and no Content-Range"),
        ));
    };
    let range = content_range(header).map_err(|why| {
        unusable(
            target,
            format!(
                "it answered the request for bytes {offset}- with Content-Range `{}`, which is \
                 {why}",
                shown(header.as_bytes())
            ),
        )
    })?;
    // Only with a total of `*` can the last byte be u64::MAX, and this overflow.
    let length = (range.last - range.first).checked_add(1);
    if let Some(declared) = response.content_length()
        && length != Some(declared)
    {
        return Err(unusable(
            target,
            format!(
                "it answered the request for bytes {offset}- with Content-Length {declared} and \
                 Content-Range `{}`, which do not agree",
                shown(header.as_bytes())
            ),
        ));
    }
    if range.first != offset {
        progress.note(&format!(
            "{}: the server answered the range request with other bytes; starting again from zero",
            target.name
        ));
        return restart(target);
    }
    Ok(Answer::Append)
}

/// The part file emptied, and the range asked for again from zero.
fn restart(target: &Target) -> Result<Answer, AttemptError> {
    part::clear(target)?;
    Ok(Answer::Done(Attempt::Restart))
}

/// Where the whole body ends when `written` bytes are already in the part file, if the
/// server declared its length.
pub(super) fn declared_end(
    response: &Response,
    written: u64,
    target: &Target,
) -> Result<Option<u64>, AttemptError> {
    let Some(length) = response.content_length() else {
        return Ok(None);
    };
    match written.checked_add(length) {
        Some(end) => Ok(Some(end)),
        None => Err(unusable(
            target,
            format!(
                "it declared Content-Length {length} after the {written} bytes kept, more than \
                 any file can hold"
            ),
        )),
    }
}

/// The server's answer does not add up: the part goes, so that the next run does not ask for
/// the same range again.
fn unusable(target: &Target, reason: String) -> AttemptError {
    if let Err(e) = part::remove(target) {
        return e;
    }
    AttemptError::Fatal(
        InputFailure::BadUrl {
            url: target.url.to_string(),
            reason: format!(
                "{reason}; the partial download was removed, so that the next run starts from the \
             beginning; if it happens again, add a mirror"
            ),
        }
        .of(target.name.to_string()),
    )
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
}
