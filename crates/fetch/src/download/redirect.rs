//! Redirects: the policy the HTTP client follows them by, and the 3xx answers it hands back.

use reqwest::blocking::Response;
use reqwest::header::LOCATION;
use reqwest::{Url, redirect};

use super::InputFailure;
use super::error::{redirect_target, shown};
use super::url_policy::redirect_refusal;
use super::worker::{AttemptError, Target};

const MAX_REDIRECTS: usize = 10;

/// Follows redirects to URLs that [`redirect_refusal`] allows, at most [`MAX_REDIRECTS`] in a
/// row; a refused one fails the request with a [`RefusedRedirect`]. Locations that are not
/// http(s) URLs never get here: the client hands the 3xx back, and [`unfollowed`] explains it.
pub(super) fn policy(allow_http: bool) -> redirect::Policy {
    redirect::Policy::custom(move |attempt| {
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
    })
}

/// A redirect the policy refused, with where it came from and went.
#[derive(Debug)]
pub(super) struct RefusedRedirect {
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

impl RefusedRedirect {
    /// The final error of the attempt this redirect ended.
    pub(super) fn for_target(&self, target: &Target) -> AttemptError {
        AttemptError::Fatal(
            InputFailure::Redirect {
                url: target.url.to_string(),
                to: redirect_target(target.url, &self.from, self.to.clone()),
                reason: self.reason.clone(),
            }
            .of(target.name.to_string()),
        )
    }
}

/// A 3xx the client did not follow: its Location is not an http(s) URL (`file://` cannot
/// even be handed to the redirect policy), is missing, or the status is not a redirect the
/// client follows.
pub(super) fn unfollowed(response: &Response, target: &Target, allow_http: bool) -> AttemptError {
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
    AttemptError::Fatal(
        InputFailure::Redirect {
            url: target.url.to_string(),
            to: redirect_target(target.url, from.as_str(), to),
            reason,
        }
        .of(target.name.to_string()),
    )
}

/// The HTTP client every request uses: our user agent, `options.timeout` for the connection
/// and, in the blocking client, as a stall timeout (the wait for the response head and then
/// each read of the body, not a limit on the whole download), and the redirect policy.
pub(super) fn client(options: &super::Options) -> reqwest::Result<reqwest::blocking::Client> {
    reqwest::blocking::Client::builder()
        .user_agent(concat!("ct2-variants-xtask/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(options.timeout)
        .timeout(options.timeout)
        .redirect(policy(options.allow_http))
        .build()
}
