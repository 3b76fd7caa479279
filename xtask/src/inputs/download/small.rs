//! Small answers read into memory (the GitHub API's JSON for `bump --from-tag`): the same URL
//! policy, mirrors, redirect rules and retries as a download, with 404 told apart.

use std::io::Read;

use super::error::describe;
use super::{FetchError, Missing, Options, effective_url, redirect};

/// The body of `url` (after mirrors), at most `max_bytes`; `None` when the server answers
/// 404. Connection errors and 5xx answers are retried `options.retries` times.
pub fn get_small(
    url: &str,
    options: &Options,
    max_bytes: u64,
) -> Result<Option<Vec<u8>>, FetchError> {
    let name = crate::support::paths::last_segment(url.split('?').next().unwrap_or(url));
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
    let mut attempts = 0;
    loop {
        attempts += 1;
        let failed = match client
            .get(&actual)
            .header("Accept", "application/vnd.github+json")
            .send()
        {
            Ok(response) if response.status().as_u16() == 404 => return Ok(None),
            Ok(response) if response.status().is_success() => {
                let mut body = Vec::new();
                match response.take(max_bytes + 1).read_to_end(&mut body) {
                    Ok(_) if body.len() as u64 > max_bytes => {
                        return Err(FetchError::Network {
                            name: name.to_string(),
                            url: actual,
                            attempts,
                            message: format!("the answer is larger than {max_bytes} bytes"),
                        });
                    }
                    Ok(_) => return Ok(Some(body)),
                    Err(e) => e.to_string(),
                }
            }
            Ok(response) => {
                let status = response.status().as_u16();
                if !(status >= 500 || status == 429 || status == 408) || attempts > options.retries
                {
                    return Err(FetchError::Status {
                        name: name.to_string(),
                        url: actual,
                        status,
                        attempts,
                    });
                }
                format!("HTTP {status}")
            }
            Err(e) => describe(&e),
        };
        if attempts > options.retries {
            return Err(FetchError::Network {
                name: name.to_string(),
                url: actual,
                attempts,
                message: failed,
            });
        }
        std::thread::sleep(std::time::Duration::from_millis(250 << attempts.min(5)));
    }
}
