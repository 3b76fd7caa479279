//! A wheel found on a PEP 503 "simple" index page (`<index>/<project>/`): what `pin` reads
//! to turn an input given as `index` + `package` into a URL and a sha256, as pip does.
//! The page is HTML with one `<a href="URL#sha256=…">file</a>` per file (PEP 503): each href
//! is a URL relative to the page, written with HTML's character references (`&amp;`,
//! `&#x2F;`). The wheel's link may lead to another host (PyPI's files are on
//! files.pythonhosted.org), but over https only: plain http only to a loopback host or the
//! page's own http host, and never `file:`, `data:` or `javascript:`.

use std::collections::HashSet;

use url::Url;

use crate::download::shown;
use crate::wheel_name::{WheelName, normalize};
use ct2v_support::platform::Platform;
use ct2v_support::text_rules::is_loopback;

pub use crate::wheel_name::project_page;

/// The most of a project page that is read: far more than the largest page on PyPI; a page
/// that goes on past it is not an index page.
pub const MAX_PAGE_BYTES: u64 = 32 << 20;

/// How many files or links a message lists before it says how many more there are.
const LISTED: usize = 12;

/// The platform tags a wheel for `platform` may carry, best first.
fn platform_tags(platform: Platform) -> &'static [&'static str] {
    match platform {
        Platform::WindowsX86_64 => &["win_amd64", "any"],
        Platform::LinuxX86_64 => &["linux_x86_64", "any"],
    }
}

/// A wheel link of the page: absolute URL (without fragment) and the sha256 the index gives.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Link {
    pub url: String,
    pub file: String,
    pub sha256: Option<String>,
}

/// The wheel the page wants, as [`find_wheel`] looks for it.
struct Wanted<'a> {
    project: String,
    version: &'a str,
    platform: Platform,
}

/// The one wheel of `project` `version` for `platform` that the page at `page_url` links, or
/// why there is none (the files the page does have are named). A link to that wheel that
/// cannot be taken (not https, a digest that is not one) is refused with the page and the
/// link named, not passed over.
pub fn find_wheel(
    page_url: &str,
    html: &str,
    project: &str,
    version: &str,
    platform: Platform,
) -> Result<Link, String> {
    let page = Url::parse(page_url).map_err(|e| format!("{page_url} is not a URL ({e})"))?;
    let wanted = Wanted {
        project: normalize(project),
        version,
        platform,
    };
    let mut files = Vec::new();
    let mut seen = HashSet::new();
    let mut candidates: Vec<(usize, Link)> = Vec::new();
    for href in hrefs(html) {
        let file = file_of(&href);
        if let Some(rank) = rank(&file, &wanted) {
            let link = link(&page, &href).map_err(|why| {
                format!(
                    "{page_url} links {} as `{}`, which is not taken: {why}",
                    shown(file.as_bytes()),
                    shown(href.as_bytes())
                )
            })?;
            if seen.insert(link.clone()) {
                candidates.push((rank, link));
            }
        }
        files.push(file);
    }
    candidates.sort_by_key(|(rank, _)| *rank);
    let best: Vec<&Link> = candidates
        .iter()
        .take_while(|(rank, _)| Some(*rank) == candidates.first().map(|(r, _)| *r))
        .map(|(_, link)| link)
        .collect();
    match best.as_slice() {
        [link] => Ok((*link).clone()),
        [] => Err(format!(
            "{page_url} links no {project} {version} wheel for {} (files there: {})",
            platform.name(),
            listed(&files, |file| shown(file.as_bytes()), "none")
        )),
        several => Err(format!(
            "{page_url} links several {project} {version} wheels for {}, at other URLs or with \
             other digests: {}",
            platform.name(),
            listed(
                several,
                |l| format!(
                    "{} (sha256 {})",
                    shown(l.url.as_bytes()),
                    l.sha256.as_deref().unwrap_or("not given")
                ),
                ""
            )
        )),
    }
}

/// How well the file `file` fits: the position of its platform tag among the platform's
/// (`None`: not the wanted project, version or platform, or not a wheel).
fn rank(file: &str, wanted: &Wanted) -> Option<usize> {
    let name = WheelName::parse(std::path::Path::new(file)).ok()?;
    if normalize(&name.project) != wanted.project || name.public_version != wanted.version {
        return None;
    }
    let tags = platform_tags(wanted.platform);
    name.platform_tag
        .split('.')
        .filter_map(|t| {
            tags.iter().position(|w| {
                t == *w
                    || (t.starts_with("manylinux")
                        && t.ends_with("_x86_64")
                        && wanted.platform == Platform::LinuxX86_64)
            })
        })
        .min()
}

/// The link `href` of the page `page`, resolved against it, or why it cannot be downloaded.
fn link(page: &Url, href: &str) -> Result<Link, String> {
    let (target, fragment) = href.split_once('#').unwrap_or((href, ""));
    let url = page
        .join(target)
        .map_err(|e| format!("it is not a URL ({e})"))?;
    if let Some(why) = refusal(page, &url) {
        return Err(why);
    }
    let file = file_of(url.path());
    if file != file_of(href) {
        return Err(format!("it leads to {url}, which is another file"));
    }
    if !file
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "._+!-".contains(c))
    {
        return Err("its file name has characters no wheel's name has".into());
    }
    let sha256 = match fragment.split_once('=') {
        Some((name, hex)) if name.eq_ignore_ascii_case("sha256") => {
            if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err("its `#sha256=` is not 64 hex digits".into());
            }
            Some(hex.to_ascii_lowercase())
        }
        _ => None,
    };
    Ok(Link {
        url: url.to_string(),
        file,
        sha256,
    })
}

/// Why the wheel is not downloaded from `link`: only https, or plain http to a loopback
/// host or to the page's own http host (an index the user gave as http).
fn refusal(page: &Url, link: &Url) -> Option<String> {
    let same_origin = || {
        page.scheme() == link.scheme()
            && page.host_str() == link.host_str()
            && page.port_or_known_default() == link.port_or_known_default()
    };
    match link.scheme() {
        "https" | "http" if link.host_str().is_none_or(str::is_empty) => {
            Some("it names no host".into())
        }
        "https" => None,
        "http" if is_loopback(link) || same_origin() => None,
        "http" => Some(
            "it is plain http to another host than the page's: a wheel is taken over https \
             (the index should link its https URL)"
                .into(),
        ),
        other => Some(format!(
            "`{other}:` is not a download: a wheel is taken from an https link"
        )),
    }
}

/// The file a link names: the last part of its path, percent-decoded (`%2B` is `+`).
fn file_of(href: &str) -> String {
    let path = href.split(['#', '?']).next().unwrap_or(href);
    ct2v_support::paths::percent_decoded(ct2v_support::paths::last_segment(path))
}

/// `items` shown one by one, the first [`LISTED`] of them and how many there are in all;
/// `none` when there are none.
fn listed<T>(items: &[T], show: impl Fn(&T) -> String, none: &str) -> String {
    if items.is_empty() {
        return none.to_string();
    }
    let mut text: Vec<String> = items.iter().take(LISTED).map(show).collect();
    if items.len() > LISTED {
        text.push(format!("… ({} in all)", items.len()));
    }
    text.join(", ")
}

/// The `href` of every `<a>` tag, in page order, with HTML's character references decoded;
/// comments are skipped, as a browser (and pip) skips them.
fn hrefs(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find('<') {
        rest = &rest[at + 1..];
        if let Some(after) = rest.strip_prefix("!--") {
            rest = after.find("-->").map_or("", |end| &after[end + 3..]);
            continue;
        }
        let name_len = rest
            .find(|c: char| c.is_ascii_whitespace() || c == '>' || c == '/')
            .unwrap_or(rest.len());
        let anchor = rest[..name_len].eq_ignore_ascii_case("a");
        let (href, after) = attributes(&rest[name_len..]);
        rest = after;
        if anchor && let Some(href) = href {
            out.push(decode_references(href));
        }
    }
    out
}

/// The `href` attribute of a tag whose attributes start `tag` (the first one, as HTML takes
/// it), and what follows the tag's `>`.
fn attributes(tag: &str) -> (Option<&str>, &str) {
    let is_space = |c: char| c.is_ascii_whitespace();
    let mut href = None;
    let mut rest = tag;
    loop {
        rest = rest.trim_start_matches(|c: char| is_space(c) || c == '/');
        let Some(first) = rest.chars().next() else {
            return (href, rest);
        };
        if first == '>' {
            return (href, &rest[1..]);
        }
        // A name is at least its first character (HTML takes a leading `=` into it).
        let name_len = rest
            .char_indices()
            .skip(1)
            .find(|(_, c)| is_space(*c) || "=>/".contains(*c))
            .map_or(rest.len(), |(i, _)| i);
        let name = &rest[..name_len];
        rest = rest[name_len..].trim_start_matches(is_space);
        let mut value = "";
        if let Some(after) = rest.strip_prefix('=') {
            (value, rest) = attribute_value(after.trim_start_matches(is_space));
        }
        if href.is_none() && name.eq_ignore_ascii_case("href") {
            href = Some(value);
        }
    }
}

/// A quoted or unquoted attribute value at the start of `text`, and what follows it.
fn attribute_value(text: &str) -> (&str, &str) {
    match text.chars().next() {
        Some(quote @ ('"' | '\'')) => {
            let body = &text[1..];
            match body.find(quote) {
                Some(end) => (&body[..end], &body[end + 1..]),
                None => (body, ""),
            }
        }
        _ => {
            let end = text
                .find(|c: char| c.is_ascii_whitespace() || c == '>')
                .unwrap_or(text.len());
            (&text[..end], &text[end..])
        }
    }
}

/// HTML's character references in an attribute value (`&amp;`, `&lt;`, `&gt;`, `&quot;`,
/// `&apos;`, `&#43;`, `&#x2F;`); anything else is kept as it is written.
fn decode_references(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at + 1..];
        // A reference is short: looking further for its `;` would make a page of `&`s slow.
        let decoded = rest
            .bytes()
            .take(12)
            .position(|b| b == b';')
            .and_then(|end| Some((reference(&rest[..end])?, end + 1)));
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => out.push('&'),
        }
    }
    out.push_str(rest);
    out
}

fn reference(name: &str) -> Option<char> {
    match name {
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "quot" => Some('"'),
        "apos" => Some('\''),
        _ => {
            let number = name.strip_prefix('#')?;
            let code = match number.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => number.parse().ok()?,
            };
            char::from_u32(code).filter(|c| *c != '\0')
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "https://stable.repo.amd.com/rocm/whl-next/rocm-sdk-core/";

    fn find(html: &str, platform: Platform) -> Result<Link, String> {
        find_wheel(PAGE, html, "rocm-sdk-core", "10.0.0", platform)
    }

    #[test]
    fn the_windows_wheel_of_the_version_is_found_with_its_digest() {
        let sha = "ab".repeat(32);
        let html = format!(
            "<html><body>\
             <a href=\"rocm_sdk_core-10.0.0-py3-none-linux_x86_64.whl#sha256={sha}\">l</a>\
             <a href=\"../../core/rocm_sdk_core-10.0.0-py3-none-win_amd64.whl#sha256={sha}\">w</a>\
             <a href=\"/other/rocm_sdk_core-9.9.0-py3-none-win_amd64.whl\">old</a>\
             </body></html>"
        );
        let link = find(&html, Platform::WindowsX86_64).unwrap();
        assert_eq!(
            link.url,
            "https://stable.repo.amd.com/rocm/core/rocm_sdk_core-10.0.0-py3-none-win_amd64.whl"
        );
        assert_eq!(link.sha256.as_deref(), Some(sha.as_str()));
        let linux = find_wheel(
            PAGE,
            &html,
            "rocm_sdk_core",
            "10.0.0",
            Platform::LinuxX86_64,
        )
        .unwrap();
        assert_eq!(
            linux.url,
            format!("{PAGE}rocm_sdk_core-10.0.0-py3-none-linux_x86_64.whl")
        );
    }

    #[test]
    fn a_missing_version_names_the_files_the_page_has() {
        let html = "<a href='rocm_sdk_core-9.0.0-py3-none-win_amd64.whl'>x</a>";
        let err = find(html, Platform::WindowsX86_64).unwrap_err();
        assert!(
            err.contains("links no rocm-sdk-core 10.0.0 wheel for windows-x86_64"),
            "{err}"
        );
        assert!(
            err.contains("rocm_sdk_core-9.0.0-py3-none-win_amd64.whl"),
            "{err}"
        );
    }

    /// Absolute paths, other hosts, scheme-relative links, character references and
    /// percent-escapes resolve as a browser resolves them.
    #[test]
    fn hrefs_resolve_against_the_page_as_a_browser_resolves_them() {
        let file = "rocm_sdk_core-10.0.0-py3-none-win_amd64.whl";
        for (href, url) in [
            (
                format!("/other/{file}"),
                format!("https://stable.repo.amd.com/other/{file}"),
            ),
            (
                format!("//files.example.org/f/{file}"),
                format!("https://files.example.org/f/{file}"),
            ),
            (
                format!("https://files.example.org/f/{file}"),
                format!("https://files.example.org/f/{file}"),
            ),
            (
                format!("..&#x2F;..&#47;core&#X2f;{file}?a=1&amp;b=2"),
                format!("https://stable.repo.amd.com/rocm/core/{file}?a=1&b=2"),
            ),
            (
                "rocm_sdk_core-10.0.0%2Blocal-py3-none-win_amd64.whl".into(),
                format!("{PAGE}rocm_sdk_core-10.0.0%2Blocal-py3-none-win_amd64.whl"),
            ),
        ] {
            let html = format!("<A class=x HREF = '{href}' >x</A>");
            let link = find(&html, Platform::WindowsX86_64).unwrap();
            assert_eq!(link.url, url, "{href}");
        }
        let html = format!(
            "<!-- <a href=\"evil/{file}\"> --><a data-href=\"evil/{file}\" href={file}>x</a>"
        );
        let link = find(&html, Platform::WindowsX86_64).unwrap();
        assert_eq!(link.url, format!("{PAGE}{file}"));
        assert_eq!(
            decode_references("&amp;&lt;&#0;&bogus;&#x110000;&"),
            "&<&#0;&bogus;&#x110000;&"
        );
    }

    /// The wanted wheel linked where it cannot be downloaded from is refused with the page
    /// and the link named, whatever else the page links.
    #[test]
    fn a_wheel_linked_outside_https_is_refused_naming_the_page_and_the_link() {
        let file = "rocm_sdk_core-10.0.0-py3-none-win_amd64.whl";
        for (href, why) in [
            (
                format!("javascript:alert(1)//{file}"),
                "`javascript:` is not a download",
            ),
            (format!("file:///srv/{file}"), "`file:` is not a download"),
            (
                format!("data:text/plain,/{file}"),
                "`data:` is not a download",
            ),
            (format!("http://files.example.org/{file}"), "plain http"),
            (format!("{file}#sha256=abc"), "not 64 hex digits"),
            (
                "rocm_sdk_core-10.0.0-py3%1B-none-win_amd64.whl".to_string(),
                "characters",
            ),
        ] {
            let html = format!("<a href=\"{file}\">ok</a><a href=\"{href}\">x</a>");
            let err = find(&html, Platform::WindowsX86_64).unwrap_err();
            assert!(err.starts_with(PAGE), "{err}");
            assert!(err.contains(why), "{href}: {err}");
            assert!(!err.contains('\u{1b}'), "{err}");
        }
        let loopback = format!("<a href=\"http://127.0.0.1:8080/{file}\">x</a>");
        assert!(find(&loopback, Platform::WindowsX86_64).is_ok());
        // An index given as http may link its own files over http, not another host's.
        let page = "http://index.example/simple/rocm-sdk-core/";
        for (href, ok) in [
            (format!("/files/{file}"), true),
            (format!("http://other.example/{file}"), false),
        ] {
            let html = format!("<a href=\"{href}\">x</a>");
            let found = find_wheel(
                page,
                &html,
                "rocm-sdk-core",
                "10.0.0",
                Platform::WindowsX86_64,
            );
            assert_eq!(found.is_ok(), ok, "{href}: {found:?}");
        }
    }

    /// One file linked twice with other digests is ambiguous; the same link twice is not.
    #[test]
    fn one_file_linked_with_two_digests_is_refused_and_a_repeated_link_is_not() {
        let file = "rocm_sdk_core-10.0.0-py3-none-win_amd64.whl";
        let (a, b) = ("ab".repeat(32), "cd".repeat(32));
        let twice =
            format!("<a href=\"{file}#sha256={a}\">x</a><a href=\"{file}#sha256={a}\">x</a>");
        assert_eq!(
            find(&twice, Platform::WindowsX86_64).unwrap().sha256,
            Some(a.clone())
        );
        let other =
            format!("<a href=\"{file}#sha256={a}\">x</a><a href=\"{file}#sha256={b}\">x</a>");
        let err = find(&other, Platform::WindowsX86_64).unwrap_err();
        assert!(err.contains(&a) && err.contains(&b), "{err}");
    }

    /// 10,000 links are read in linear time and a message lists a few of them.
    #[test]
    fn ten_thousand_links_are_read_quickly_and_listed_briefly() {
        let started = std::time::Instant::now();
        let html: String = (0..10_000)
            .map(|i| format!("<a href=\"rocm_sdk_core-9.{i}.0-py3-none-win_amd64.whl\">x</a>\n"))
            .collect();
        let err = find(&html, Platform::WindowsX86_64).unwrap_err();
        assert!(err.contains("(10000 in all)"), "{err}");
        assert!(err.len() < 2000, "{err}");
        let clash: String = (0..10_000)
            .map(|i| format!("<a href=\"/{i}/rocm_sdk_core-10.0.0-py3-none-win_amd64.whl\">x</a>"))
            .collect();
        let err = find(&clash, Platform::WindowsX86_64).unwrap_err();
        assert!(err.contains("(10000 in all)") && err.len() < 4000, "{err}");
        let ampersands = "&".repeat(1 << 20);
        assert_eq!(decode_references(&ampersands).len(), 1 << 20);
        assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
    }
}
