//! Where the links of a release's pip index pages lead: each `href` resolved against its
//! page's place in the release folder, as pip resolves it against the page's URL. A link
//! stays inside the release, or is an absolute http(s):// or file:// URL (what
//! `release --index-base-url` writes); anything else (`javascript:`, `file:` without a host,
//! `//host/`, `/path`, `..` past the release folder) leads out of it.

/// Where a link leads, when it is one release may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// A relative link to a place inside the release folder.
    Inside,
    /// An absolute http(s):// or file:// URL, as `--index-base-url` writes.
    Absolute,
}

/// Every link of `text`, the page at `page` (relative to the release folder, `/`-separated):
/// its `href` (entities decoded) and where it leads, or why it leads out of the release.
pub fn links(page: &str, text: &str) -> Vec<(String, Result<Target, String>)> {
    hrefs(text)
        .into_iter()
        .map(|href| {
            let target = target(page, &href);
            (href, target)
        })
        .collect()
}

/// The `href` values of an HTML page, quoted or not, with the entities
/// [`ct2v_fetch::pep503::html_escape`] writes decoded.
fn hrefs(text: &str) -> Vec<String> {
    // ASCII lower-casing keeps every byte offset.
    let lower = text.to_ascii_lowercase();
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(found) = lower[at..].find("href=") {
        let start = at + found + "href=".len();
        let rest = &text[start..];
        let value = match rest.chars().next() {
            Some(quote @ ('"' | '\'')) => rest[1..].split(quote).next().unwrap_or_default(),
            _ => rest
                .split(|c: char| c.is_whitespace() || c == '>')
                .next()
                .unwrap_or_default(),
        };
        out.push(html_unescape(value));
        at = start;
    }
    out
}

/// `text` with the entities [`ct2v_fetch::pep503::html_escape`] writes decoded.
pub fn html_unescape(text: &str) -> String {
    text.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// Where `href` on the page at `page` leads; `Err` says how it leads out of the release.
fn target(page: &str, href: &str) -> Result<Target, String> {
    if href.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(
            "holds a blank or control character (a browser or pip drops it, and the \
                    link leads elsewhere)"
                .into(),
        );
    }
    if has_scheme(href) || href.starts_with("//") {
        let url = href.split('#').next().unwrap_or_default();
        return ct2v_support::text_rules::web_url(url)
            .map(|()| Target::Absolute)
            .map_err(|why| format!("leads out of the release: {why}"));
    }
    if href.starts_with('/') {
        return Err("leads out of the release: a path from the server's root".into());
    }
    let path =
        ct2v_support::paths::percent_decoded(href.split(['#', '?']).next().unwrap_or_default());
    if path.contains('\\') {
        return Err("holds a `\\`, which some servers take for a folder separator".into());
    }
    let mut depth = page.split('/').count() - 1;
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if depth == 0 => {
                return Err(
                    "leads out of the release: its `..` go above the release folder".into(),
                );
            }
            ".." => depth -= 1,
            _ => depth += 1,
        }
    }
    Ok(Target::Inside)
}

/// Whether `href` starts with a URL scheme (`https:`, `javascript:`, `file:`), RFC 3986's
/// letter followed by letters, digits, `+`, `-` or `.` before the first `:`.
fn has_scheme(href: &str) -> bool {
    let Some(end) = href.find([':', '/', '?', '#']) else {
        return false;
    };
    let scheme = &href[..end];
    href[end..].starts_with(':')
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "whl/cpu/ctranslate2/index.html";

    #[test]
    fn links_inside_the_release_or_to_a_base_url_are_the_ones_release_writes() {
        for href in [
            "../../../ctranslate2-4.7.1%2Bcpu-cp312-cp312-win_amd64.whl#sha256=ab",
            "ctranslate2/",
            "./x/../y",
        ] {
            assert_eq!(target(PAGE, href), Ok(Target::Inside), "{href}");
        }
        for href in [
            "https://github.com/o/r/releases/download/v4.7.1/x.whl#sha256=ab",
            "http://127.0.0.1:8000/x.whl",
        ] {
            assert_eq!(target(PAGE, href), Ok(Target::Absolute), "{href}");
        }
    }

    #[test]
    fn every_other_link_leads_out_of_the_release() {
        for href in [
            "../../../../x.whl",
            "..%2F..%2F..%2F..%2Fx.whl",
            "%2E%2E/%2E%2E/%2E%2E/%2E%2E/x.whl",
            "/etc/x.whl",
            "//evil.example/x.whl",
            "javascript:alert(1)",
            "JavaScript:alert(1)",
            "file:/etc/x.whl",
            "file:///srv/release/x.whl",
            "http://example.com/x.whl",
            "data:text/html,x",
            "java\tscript:alert(1)",
            " https://x/y",
            "..\\..\\..\\..\\x.whl",
        ] {
            assert!(target(PAGE, href).is_err(), "{href}");
        }
    }

    #[test]
    fn hrefs_are_read_quoted_or_not_with_entities_decoded() {
        let page = "<a href=\"a&amp;b\">x</a><A HREF='c'>y</A><a href=d>z</a><base href=\"e\">";
        let found: Vec<String> = links("p.html", page).into_iter().map(|(h, _)| h).collect();
        assert_eq!(found, ["a&b", "c", "d", "e"]);
    }
}
