//! What a version, a git tag or a URL must be before it is written into a file, a link, a
//! path or a command: one rule each, which says why a value is refused and what would do.
//!
//! The command line checks its flags with these as it parses them (`cli::checked`), so a
//! refused value is bad input (exit 2) named with its flag before any work; the variant
//! files' URLs and the folders named by tags are checked with the same rules.

use std::fmt;
use std::net::IpAddr;

use url::Url;

use super::diagnostic::{InputError, quoted};

/// The longest release version taken (PEP 440 has no limit; a folder and a file name do).
pub(crate) const MAX_VERSION: usize = 64;
/// The longest git tag taken.
pub(crate) const MAX_TAG: usize = 128;
/// The longest URL taken.
pub(crate) const MAX_URL: usize = 2048;

/// Why a value was refused (a phrase that completes "… is not allowed: "), and what would
/// do instead (a phrase that completes "give …").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub why: String,
    pub instead: &'static str,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.why)
    }
}

impl std::error::Error for Refusal {}

/// The bad-input error for `flag`'s `value`, refused: the flag, the value (escaped, cut when
/// long), why, and what to give instead.
pub fn refused(flag: &str, value: &str, refusal: &Refusal) -> InputError {
    InputError::new(format!(
        "{flag} {} is not allowed: {}",
        quoted(value),
        refusal.why
    ))
    .note(format!("give {}", refusal.instead))
}

const CTRANSLATE2: &str = "a CTranslate2 version: numbers and dots, e.g. 4.8.4";
const VERSION: &str = "a PEP 440 version, e.g. 4.7.1, 4.7.1-2, 4.7.1rc1 or 4.7.1+rocm10.rdna2";
const LOCAL: &str = "a PEP 440 local version label: lower-case letters and digits, parts \
                     separated by dots (e.g. cpu, cu12, rocm10.rdna2)";
const TAG: &str = "a git tag name, e.g. v4.7.1";
const WEB_URL: &str = "an https:// URL, e.g. https://github.com/OWNER/REPO/releases/download/ \
                       (plain http:// only to 127.0.0.1, ::1 or localhost)";
const DOWNLOAD_URL: &str = "the http(s) URL of the file, e.g. https://host/path/x-1.0.tar.gz";

/// A CTranslate2 version, which names its data file (`variants/ctranslate2/<version>.toml`):
/// numbers and dots, at most 32 characters.
pub fn ctranslate2_version(text: &str) -> Result<(), Refusal> {
    let numbers_and_dots = text.len() <= 32
        && text
            .split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    if numbers_and_dots {
        Ok(())
    } else {
        Err(Refusal {
            why: "it is not a CTranslate2 version (numbers and dots)".into(),
            instead: CTRANSLATE2,
        })
    }
}

/// A release's version, as pip reads it (PEP 440): `4.7.1`, `4.7.1-2` (a post release),
/// `4.7.1rc1`, `1!4.7.1.dev3`, with a local label as the project writes them
/// (`4.7.1+rocm10.rdna2`).
pub fn release_version(text: &str) -> Result<(), Refusal> {
    let refuse = |why: String| Refusal {
        why,
        instead: VERSION,
    };
    one_line(text, MAX_VERSION).map_err(refuse)?;
    let (public, local) = match text.split_once('+') {
        Some((public, local)) => (public, Some(local)),
        None => (text, None),
    };
    if !is_public_version(&public.to_ascii_lowercase()) {
        return Err(refuse("it is not a PEP 440 version".into()));
    }
    match local {
        Some(local) => {
            local_version_label(local).map_err(|r| refuse(format!("its local label {}", r.why)))
        }
        None => Ok(()),
    }
}

/// A PEP 440 local version label as the project writes them, normalised: lower-case ASCII
/// letters and digits in parts separated by dots (`cpu`, `cu12`, `rocm10.rdna2`).
pub fn local_version_label(label: &str) -> Result<(), Refusal> {
    let part_ok = |p: &str| {
        !p.is_empty()
            && p.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    };
    if label.split('.').all(part_ok) {
        Ok(())
    } else {
        Err(Refusal {
            why: format!(
                "{} is not lower-case letters and digits in parts separated by dots",
                quoted(label)
            ),
            instead: LOCAL,
        })
    }
}

/// PEP 440's public version in every spelling pip normalises (packaging's
/// `VERSION_PATTERN`, lower case): an optional `v` and epoch `N!`, the release numbers, then
/// optional pre (`a`, `b`, `rc`…), post (`-N`, `.postN`…) and dev (`.devN`) parts.
fn is_public_version(text: &str) -> bool {
    let mut rest = text.strip_prefix('v').unwrap_or(text);
    if let Some((epoch, after)) = rest.split_once('!') {
        if numbers(epoch) != Some("") {
            return false;
        }
        rest = after;
    }
    let Some(mut rest) = numbers(rest) else {
        return false;
    };
    while let Some(after) = rest.strip_prefix('.').and_then(numbers) {
        rest = after;
    }
    const PRE: [&str; 8] = ["alpha", "a", "beta", "b", "preview", "pre", "c", "rc"];
    rest = labelled(rest, &PRE).unwrap_or(rest);
    rest = rest
        .strip_prefix('-')
        .and_then(numbers)
        .or_else(|| labelled(rest, &["post", "rev", "r"]))
        .unwrap_or(rest);
    rest = labelled(rest, &["dev"]).unwrap_or(rest);
    rest.is_empty()
}

/// What follows the leading digits of `text`; `None` when it starts with none.
fn numbers(text: &str) -> Option<&str> {
    let after = text.trim_start_matches(|c: char| c.is_ascii_digit());
    (after.len() < text.len()).then_some(after)
}

/// What follows a PEP 440 part `[-_.]?<label>[-_.]?[0-9]*` at the start of `text` (the
/// labels longest first where one begins another); `None` when it does not start with one.
fn labelled<'a>(text: &'a str, labels: &[&str]) -> Option<&'a str> {
    let separator = |t: &'a str| t.strip_prefix(['-', '_', '.']).unwrap_or(t);
    let after = labels
        .iter()
        .find_map(|label| separator(text).strip_prefix(label))?;
    let after = separator(after);
    Some(numbers(after).unwrap_or(after))
}

/// The longest wheel file name taken.
pub(crate) const MAX_WHEEL_NAME: usize = 255;
const WHEEL: &str = "a wheel file name as PEP 427 writes it, \
                     NAME-VERSION(-BUILD)-PYTHON-ABI-PLATFORM.whl, \
                     e.g. ctranslate2-4.7.1+cpu-cp312-cp312-win_amd64.whl";

/// A wheel's file name as PEP 427 (the binary distribution format) writes it:
/// `{name}-{version}(-{build})?-{python}-{abi}-{platform}.whl`, the name letters, digits, `_`
/// and `.`, the version a [`release_version`] (PEP 440), the build tag a digit then letters,
/// digits, `_` or `.`, each tag letters, digits, `_` and `.` (a compressed tag set).
pub fn wheel_file_name(text: &str) -> Result<(), Refusal> {
    let refuse = |why: String| Refusal {
        why,
        instead: WHEEL,
    };
    one_line(text, MAX_WHEEL_NAME).map_err(refuse)?;
    let Some(stem) = text.strip_suffix(".whl") else {
        return Err(refuse("it does not end with `.whl`".into()));
    };
    let parts: Vec<&str> = stem.split('-').collect();
    let tag_like = |p: &str| {
        !p.is_empty()
            && p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
    };
    let (name, version, tags) = match parts.as_slice() {
        [name, version, tags @ ..] if tags.len() == 3 || tags.len() == 4 => (*name, *version, tags),
        _ => {
            return Err(refuse(format!(
                "it has {} `-`-separated parts, where a wheel's name has 5 or 6",
                parts.len()
            )));
        }
    };
    if !tag_like(name)
        || !name.starts_with(|c: char| c.is_ascii_alphanumeric())
        || !name.ends_with(|c: char| c.is_ascii_alphanumeric())
    {
        return Err(refuse(format!(
            "its project name {} is not letters, digits, `_` and `.`",
            quoted(name)
        )));
    }
    release_version(version)
        .map_err(|r| refuse(format!("its version {}: {}", quoted(version), r.why)))?;
    if tags.len() == 4 && !(tag_like(tags[0]) && tags[0].starts_with(|c: char| c.is_ascii_digit()))
    {
        return Err(refuse(format!(
            "its build tag {} is not a digit followed by letters, digits, `_` or `.`",
            quoted(tags[0])
        )));
    }
    if let Some(bad) = tags.iter().find(|t| !tag_like(t)) {
        return Err(refuse(format!(
            "its tag {} is not letters, digits, `_` and `.`",
            quoted(bad)
        )));
    }
    Ok(())
}

/// A git tag name, as `git check-ref-format` takes `refs/tags/<name>` and `git tag` takes it
/// (no leading `-`), at most [`MAX_TAG`] characters.
pub fn git_tag(text: &str) -> Result<(), Refusal> {
    let refuse = |why: String| Refusal { why, instead: TAG };
    one_line(text, MAX_TAG).map_err(refuse)?;
    if let Some(c) = text.chars().find(|c| "~^:?*[\\".contains(*c)) {
        return Err(refuse(format!(
            "it has `{c}`, which git does not allow in a tag"
        )));
    }
    let why = if text.starts_with('-') {
        "it starts with `-`, which git reads as an option"
    } else if text == "@" {
        "`@` alone names HEAD to git"
    } else if text.contains("..") {
        "it has `..`, which git reads as a range"
    } else if text.contains("@{") {
        "it has `@{`, which git reads as a reflog"
    } else if text.split('/').any(str::is_empty) {
        "it starts or ends with `/`, or has `//`"
    } else if text.split('/').any(|part| part.starts_with('.')) {
        "a part of it starts with `.`"
    } else if text.split('/').any(|part| part.ends_with(".lock")) {
        "a part of it ends with `.lock`, which git keeps for its lock files"
    } else if text.ends_with('.') {
        "it ends with `.`"
    } else {
        return Ok(());
    };
    Err(refuse(why.into()))
}

/// A URL written into a published page or a command, that paths are appended to (a site's
/// URL): `https://`, or `http://` to a loopback host; no user name or password, query or
/// fragment; only characters that need no escaping in HTML or a shell.
pub fn web_url(text: &str) -> Result<(), Refusal> {
    let refuse = |why: String| Refusal {
        why,
        instead: WEB_URL,
    };
    one_line(text, MAX_URL).map_err(refuse)?;
    if !(text.starts_with("https://") || text.starts_with("http://")) {
        return Err(refuse("it is not an https:// URL".into()));
    }
    if let Some(c) = text.chars().find(|c| !web_url_char(*c)) {
        return Err(refuse(format!(
            "it has `{}`, which is not written into links and commands as it is (percent-encode it)",
            c.escape_default()
        )));
    }
    if text.contains(['?', '#']) {
        return Err(refuse(
            "it has a query or fragment (`?`, `#`), which what is appended to it would fall into"
                .into(),
        ));
    }
    let url = parsed(text).map_err(refuse)?;
    if url.scheme() == "http" && !is_loopback(&url) {
        return Err(refuse(
            "it is plain http:// to a host that is not loopback: published links are https://"
                .into(),
        ));
    }
    Ok(())
}

/// A [`web_url`] that file names are appended to as they are (`<base><tag>/<file>`): it
/// ends with `/`.
pub fn base_url(text: &str) -> Result<(), Refusal> {
    web_url(text)?;
    if !text.ends_with('/') {
        return Err(Refusal {
            why: "it must end with `/`: what follows is appended to it as it is".into(),
            instead: WEB_URL,
        });
    }
    Ok(())
}

/// A URL downloaded from (a variant file's input or index, `bump --source`): `http://` or
/// `https://` (which hosts plain http may reach is the download's rule, `--allow-http`),
/// with a host, no user name or password, and no character a URL cannot hold unescaped.
pub fn download_url(text: &str) -> Result<(), Refusal> {
    let refuse = |why: String| Refusal {
        why,
        instead: DOWNLOAD_URL,
    };
    one_line(text, MAX_URL).map_err(refuse)?;
    if !(text.starts_with("https://") || text.starts_with("http://")) {
        return Err(refuse("it is not an http(s) URL".into()));
    }
    if let Some(c) = text.chars().find(|c| "\"<>\\^`{|}".contains(*c)) {
        return Err(refuse(format!(
            "it has `{c}`, which a URL cannot hold unescaped"
        )));
    }
    parsed(text).map(drop).map_err(refuse)
}

/// 127.0.0.0/8, ::1 and `localhost`.
pub fn is_loopback(url: &Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    match bare.parse::<IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => bare
            .strip_suffix('.')
            .unwrap_or(bare)
            .eq_ignore_ascii_case("localhost"),
    }
}

/// Letters, digits and the URL characters no HTML attribute or shell word needs escaped.
fn web_url_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-._~:/?#[]@%+,=".contains(c)
}

/// `text` parsed, with a host and no user name or password (a published URL would show it).
fn parsed(text: &str) -> Result<Url, String> {
    // A URL parser takes `https:///x` as `https://x/`; what is written must say the host.
    let authority = text.split_once("://").map_or("", |(_, rest)| rest);
    if authority.is_empty() || authority.starts_with('/') {
        return Err("it has no host".into());
    }
    let url = Url::parse(text).map_err(|e| format!("it is not an absolute URL ({e})"))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(
            "it holds a user name or password (`user:pw@`), which would be published".into(),
        );
    }
    Ok(url)
}

/// Not empty, at most `max` characters, no control character or whitespace.
fn one_line(text: &str, max: usize) -> Result<(), String> {
    let length = text.chars().count();
    if length == 0 {
        return Err("it is empty".into());
    }
    if length > max {
        return Err(format!("it is {length} characters long (at most {max})"));
    }
    if let Some(c) = text.chars().find(|c| c.is_control()) {
        return Err(format!(
            "it has the control character `{}`",
            c.escape_default()
        ));
    }
    if let Some(c) = text.chars().find(|c| c.is_whitespace()) {
        return Err(format!("it has whitespace (`{}`)", c.escape_default()));
    }
    // Git's refname rules allow these (only ASCII control characters are refused), but
    // printed or published they reorder or hide what is around them: `v1\u{202e}1.4v` shows
    // as `v1v4.1`.
    if let Some(c) = text.chars().find(|c| super::diagnostic::hidden(*c)) {
        return Err(format!(
            "it has the invisible character `{}`, which reorders or hides text where it is shown",
            c.escape_default()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_versions_are_pep_440_with_the_projects_local_labels() {
        for good in [
            "4.7.1",
            "4.7.1-2",
            "4.7.1.post2",
            "4.7.1rc1",
            "4.7.1.RC1",
            "4.7.1a",
            "4.7.1.dev3",
            "4.7.1-1.dev0",
            "1!4.7.1",
            "v4.7.1",
            "4.7.1+cpu",
            "4.7.1+cu12",
            "4.8.4+rocm10.rdna2",
            "4.7.1.post1+gfx1010",
        ] {
            assert_eq!(release_version(good), Ok(()), "{good}");
        }
        for (bad, why) in [
            ("", "empty"),
            ("4.7.1\n", "control character `\\n`"),
            ("4.7.1\u{1b}[2J", "control character `\\u{1b}`"),
            ("4.7.1 beta", "whitespace"),
            (&"4".repeat(5_000), "5000 characters long"),
            ("../../x", "not a PEP 440 version"),
            ("/abs", "not a PEP 440 version"),
            ("4.7.1..2", "not a PEP 440 version"),
            ("4.7.1-", "not a PEP 440 version"),
            ("4.7.1.x", "not a PEP 440 version"),
            ("latest", "not a PEP 440 version"),
            ("4.7.1+", "local label"),
            ("4.7.1+Rocm", "local label"),
            ("4.7.1+a..b", "local label"),
            ("4.7.1+a/b", "local label"),
        ] {
            let refusal = release_version(bad).unwrap_err();
            assert!(refusal.why.contains(why), "{bad:?}: {}", refusal.why);
        }
    }

    #[test]
    fn wheel_file_names_are_pep_427_with_a_pep_440_version() {
        for good in [
            "ctranslate2-4.7.1+cpu-cp312-cp312-win_amd64.whl",
            "ctranslate2-4.7.1-cp311-cp311-manylinux_2_28_x86_64.whl",
            "ctranslate2-4.8.4+rocm10.rdna2-1-cp312-cp312-win_amd64.whl",
            "ct2_variant_select-4.7.1.post2-py3-none-any.whl",
            "numpy-1.26.4-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        ] {
            assert_eq!(wheel_file_name(good), Ok(()), "{good}");
        }
        for (bad, why) in [
            (
                "ctranslate2-4.7.1+$(touch x)-cp312-cp312-win_amd64.whl",
                "whitespace",
            ),
            (
                "ctranslate2-4.7.1+$(id)-cp312-cp312-win_amd64.whl",
                "local label",
            ),
            (
                "ctranslate2-4.7.1+`id`-cp312-cp312-win_amd64.whl",
                "local label",
            ),
            (
                "ctranslate2-4.7.1\"x-cp312-cp312-win_amd64.whl",
                "not a PEP 440 version",
            ),
            (
                "ctranslate2-4.7.1'x-cp312-cp312-win_amd64.whl",
                "not a PEP 440 version",
            ),
            (
                "ctranslate2-4.7.1+%PATH%-cp312-cp312-win_amd64.whl",
                "local label",
            ),
            (
                "ctranslate2-4.7.1!-cp312-cp312-win_amd64.whl",
                "not a PEP 440 version",
            ),
            (
                "ctranslate2-4.7.1\n-cp312-cp312-win_amd64.whl",
                "control character",
            ),
            (
                "ctranslate2-4.7.1-cp312-cp312-win_amd64\u{202e}lhw.whl",
                "invisible character",
            ),
            (
                "ctranslate2-4.7.1-cp312-cp312-win;id.whl",
                "its tag `win;id`",
            ),
            ("ctr$x-4.7.1-cp312-cp312-win_amd64.whl", "project name"),
            (
                "ctranslate2-4.7.1-x1-cp312-cp312-win_amd64.whl",
                "build tag",
            ),
            (
                "ctranslate2-4.7.1-cp312-win_amd64.whl",
                "4 `-`-separated parts",
            ),
            ("ctranslate2-4.7.1-cp312-cp312-win_amd64.zip", "`.whl`"),
        ] {
            let refusal = wheel_file_name(bad).unwrap_err();
            assert!(refusal.why.contains(why), "{bad:?}: {}", refusal.why);
        }
    }

    #[test]
    fn ctranslate2_versions_are_numbers_and_dots() {
        for good in ["4.7.1", "4.8.4", "10"] {
            assert_eq!(ctranslate2_version(good), Ok(()), "{good}");
        }
        for bad in [
            "",
            "4.8.4/../4.7.1",
            "../x",
            "4..8",
            "4.8.",
            "4.8.4\n",
            &"1".repeat(33),
        ] {
            assert!(ctranslate2_version(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn git_tags_follow_check_ref_format() {
        for good in ["v4.7.1", "v4.7.1-2", "release/v1", "v1+build", "ünï"] {
            assert_eq!(git_tag(good), Ok(()), "{good}");
        }
        for (bad, why) in [
            ("", "empty"),
            ("v1\u{1b}", "control character"),
            ("v1\n", "control character"),
            ("v1\u{202e}1.4v", "invisible character `\\u{202e}`"),
            ("v4.7.1\u{200b}", "invisible character"),
            ("\u{2066}v4.7.1\u{2069}", "invisible character"),
            ("\u{feff}v4.7.1", "invisible character"),
            ("v 1", "whitespace"),
            ("v1\u{a0}", "whitespace"),
            (&"v".repeat(129), "129 characters"),
            ("v1..2", "`..`"),
            ("v1~1", "`~`"),
            ("v1^", "`^`"),
            ("a:b", "`:`"),
            ("v1?", "`?`"),
            ("v*", "`*`"),
            ("v[1", "`[`"),
            ("v\\1", "`\\`"),
            ("-v1", "starts with `-`"),
            ("@", "HEAD"),
            ("v@{1}", "`@{`"),
            ("/v1", "`/`"),
            ("v1/", "`/`"),
            ("a//b", "`//`"),
            (".v1", "starts with `.`"),
            ("a/.b", "starts with `.`"),
            ("v1.lock", "`.lock`"),
            ("a.lock/b", "`.lock`"),
            ("v1.", "ends with `.`"),
        ] {
            let refusal = git_tag(bad).unwrap_err();
            assert!(refusal.why.contains(why), "{bad:?}: {}", refusal.why);
        }
    }

    #[test]
    fn published_urls_are_https_or_loopback_http_with_nothing_to_escape() {
        for good in [
            "https://github.com/o/r/releases/download/",
            "https://o.github.io/r",
            "http://127.0.0.1:8080/x/",
            "http://127.1.2.3/",
            "http://[::1]:9/x/",
            "http://localhost/",
            "http://LOCALHOST./",
            "https://host/a%20b/",
        ] {
            assert_eq!(web_url(good), Ok(()), "{good}");
        }
        for (bad, why) in [
            ("", "empty"),
            ("file:///x", "not an https:// URL"),
            ("javascript:alert(1)", "not an https:// URL"),
            ("ftp://host/", "not an https:// URL"),
            ("HTTPS://host/", "not an https:// URL"),
            ("github.com/o/r/", "not an https:// URL"),
            ("http://example.com/", "not loopback"),
            ("http://localhost.example.com/", "not loopback"),
            ("http://127.0.0.1.example.com/", "not loopback"),
            ("https://user:pw@host/", "user name or password"),
            ("https://user@host/", "user name or password"),
            ("https://host/a b/", "whitespace"),
            ("https://host/\n", "control character"),
            ("https://host/\"><script>/", "`\\\"`"),
            ("https://host/$(id)/", "`$`"),
            ("https://host/a'b/", "`\\'`"),
            ("https://host/é/", "percent-encode"),
            ("https://host/?a=b", "query or fragment"),
            ("https://host/#x", "query or fragment"),
            ("https:///x", "no host"),
            ("https://", "no host"),
            ("https://:8080/", "absolute URL"),
        ] {
            let refusal = web_url(bad).unwrap_err();
            assert!(refusal.why.contains(why), "{bad:?}: {}", refusal.why);
        }
        assert_eq!(
            base_url("https://github.com/o/r/releases/download/"),
            Ok(())
        );
        let refusal = base_url("https://github.com/o/r/releases/download").unwrap_err();
        assert!(refusal.why.contains("must end with `/`"), "{}", refusal.why);
        assert!(base_url("file:///x/").is_err());
    }

    #[test]
    fn download_urls_are_http_with_a_host_and_no_credentials() {
        for good in [
            "https://static.crates.io/crates/ct2rs/ct2rs-0.10.3.crate",
            "http://127.0.0.1:8080/x-1.0.tar.gz?x=1",
            "http://mirror.example.com/x.whl",
            "https://host/ctranslate2-4.7.1%2Bcpu-cp312-cp312-win_amd64.whl",
        ] {
            assert_eq!(download_url(good), Ok(()), "{good}");
        }
        for (bad, why) in [
            ("file:///etc/x.tar.gz", "not an http(s) URL"),
            ("ftp://host/x.zip", "not an http(s) URL"),
            ("https://u:p@host/x.zip", "user name or password"),
            ("https://host/a\u{1b}.zip", "control character"),
            ("https://host/a b.zip", "whitespace"),
            ("https://host/<a>.zip", "`<`"),
        ] {
            let refusal = download_url(bad).unwrap_err();
            assert!(refusal.why.contains(why), "{bad:?}: {}", refusal.why);
        }
    }

    #[test]
    fn a_refused_flag_names_the_flag_the_escaped_cut_value_and_what_to_give() {
        let value = format!("4.7.1\u{1b}[2J{}", "x".repeat(5_000));
        let refusal = release_version(&value).unwrap_err();
        let shown = refused("--version", &value, &refusal).to_string();
        assert!(shown.starts_with("--version `4.7.1\\u{1b}[2Jxx"), "{shown}");
        assert!(!shown.contains('\u{1b}') && shown.len() < 400, "{shown}");
        assert!(shown.contains("give a PEP 440 version"), "{shown}");
    }
}
