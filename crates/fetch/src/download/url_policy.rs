//! Which URL is downloaded: mirrors applied, then https only (http to loopback hosts, or
//! anywhere with `--allow-http`).

use url::Url;

use super::{FetchError, InputFailure, Options};
use ct2v_support::text_rules::is_loopback;

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
    let bad = |reason: &str| {
        InputFailure::BadUrl {
            url: rewritten.clone(),
            reason: reason.to_string(),
        }
        .of(String::new())
    };
    let parsed = Url::parse(&rewritten).map_err(|e| bad(&format!("not a URL ({e})")))?;
    if parsed.host().is_none() {
        return Err(bad("the URL has no host"));
    }
    match parsed.scheme() {
        "https" => Ok(rewritten),
        "http" if options.allow_http || is_loopback(&parsed) => Ok(rewritten),
        "http" => Err(InputFailure::InsecureUrl { url: rewritten }.of(String::new())),
        other => Err(bad(&format!(
            "only https (and http to loopback hosts) can be downloaded, not `{other}`"
        ))),
    }
}

/// Why a redirect to `to` is not followed, if it is not: the same rule as for the URLs
/// asked for, https, or http to a loopback host (anywhere with `allow_http`).
pub(super) fn redirect_refusal(to: &Url, allow_http: bool) -> Option<String> {
    match to.scheme() {
        "https" | "http" if to.host().is_none() => {
            Some("the URL has no host: check the URL in the variant file, or add a mirror".into())
        }
        "https" => None,
        "http" if allow_http || is_loopback(to) => None,
        "http" => Some(
            "plain http is followed only to loopback hosts: pass --allow-http to follow it (the \
             sha256 pin still checks the file), or add a mirror that serves it over https"
                .into(),
        ),
        _ => Some(
            "only https (and http to loopback hosts) are followed: check the URL in the variant \
             file, or add a mirror that serves the file over https"
                .into(),
        ),
    }
}
