//! Small answers read into memory (the GitHub API's JSON for `bump --from-tag`, an index's
//! project page for `pin`): the same URL policy, mirrors, redirect rules, retries and pace
//! as a download, a cap on the size, and 404 told apart.

use std::io::Read;
use std::path::Path;

use reqwest::blocking::Response;

use super::error::describe;
use super::pace::Pace;
use super::response::classify;
use super::worker::{AttemptError, Target};
use super::{FetchError, InputFailure, Missing, Options, effective_url, redirect};
use ct2v_support::units::human_size;

/// The body of `url` (after mirrors), asked for as `accept`, at most `max_bytes`; `None` when
/// the server answers 404. Connection errors, stalls, trickles and 5xx answers are retried
/// `options.retries` times; a redirect that is not followed (a loop, another scheme) and a
/// body past `max_bytes` are final.
pub fn get_small(
    url: &str,
    options: &Options,
    max_bytes: u64,
    accept: &str,
) -> Result<Option<Vec<u8>>, FetchError> {
    let name = ct2v_support::paths::last_segment(url.split('?').next().unwrap_or(url));
    let actual = effective_url(url, options).map_err(|e| e.for_input(name))?;
    if options.offline {
        return Err(FetchError::Offline {
            missing: vec![Missing {
                name: name.to_string(),
                url: actual,
                path: None,
            }],
        });
    }
    let client = redirect::client(options).map_err(|e| FetchError::Client {
        message: describe(&e),
    })?;
    // Only its name and URL are read: nothing is written to a part file.
    let target = Target {
        name,
        url: &actual,
        path: Path::new(""),
        sha256: None,
        size: None,
        resume: false,
    };
    let mut attempts = 0;
    loop {
        attempts += 1;
        let error = match client.get(&actual).header("Accept", accept).send() {
            Err(e) => classify(&e, &target),
            Ok(response) if response.status().as_u16() == 404 => return Ok(None),
            Ok(response) if response.status().is_success() => {
                match read_capped(response, &target, max_bytes, options) {
                    Ok(body) => return Ok(Some(body)),
                    Err(e) => e,
                }
            }
            Ok(response) if response.status().is_redirection() => {
                redirect::unfollowed(&response, &target, options.allow_http)
            }
            Ok(response) => match response.status().as_u16() {
                status @ (408 | 429 | 500..) => AttemptError::Retry {
                    message: format!("HTTP {status}"),
                    status: Some(status),
                },
                status => AttemptError::Status(status),
            },
        };
        let (message, status) = match error {
            AttemptError::Retry { message, status } => (message, status),
            AttemptError::Slow(message) => (message, None),
            AttemptError::Status(status) => {
                return Err(InputFailure::Status {
                    url: actual,
                    status,
                    attempts,
                }
                .of(name.to_string()));
            }
            AttemptError::Fatal(e) => return Err(e),
            AttemptError::Cancelled => unreachable!("nothing cancels a small answer"),
        };
        if attempts > options.retries {
            return Err(match status {
                Some(status) => InputFailure::Status {
                    url: actual,
                    status,
                    attempts,
                }
                .of(name.to_string()),
                None => InputFailure::Network {
                    url: actual,
                    attempts,
                    message,
                }
                .of(name.to_string()),
            });
        }
        std::thread::sleep(std::time::Duration::from_millis(250 << attempts.min(5)));
    }
}

/// The body, read while it keeps the pace of a download and stays within `max_bytes`.
fn read_capped(
    mut response: Response,
    target: &Target,
    max_bytes: u64,
    options: &Options,
) -> Result<Vec<u8>, AttemptError> {
    let too_large =
        || {
            AttemptError::Fatal(InputFailure::BadUrl {
            url: target.url.to_string(),
            reason: format!(
                "the answer is larger than {}, more than an answer read here may be: stopped",
                human_size(max_bytes)
            ),
        }.of(target.name.to_string()))
        };
    if response.content_length().is_some_and(|n| n > max_bytes) {
        return Err(too_large());
    }
    let mut pace = Pace::new(options.timeout, false);
    pace.start();
    let mut body = Vec::new();
    let mut buffer = vec![0; 64 << 10];
    loop {
        let n = match response.read(&mut buffer) {
            Ok(0) => return Ok(body),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(AttemptError::Retry {
                    message: describe(&e),
                    status: None,
                });
            }
        };
        if body.len() as u64 + n as u64 > max_bytes {
            return Err(too_large());
        }
        body.extend_from_slice(&buffer[..n]);
        pace.received(n as u64).map_err(AttemptError::Slow)?;
    }
}
