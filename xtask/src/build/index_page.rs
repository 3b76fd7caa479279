//! A wheel found on a PEP 503 "simple" index page (`<index>/<project>/`): what `pin` reads
//! to turn an input given as `index` + `package` into a URL and a sha256, as pip does.
//! The page is HTML with one `<a href="URL#sha256=…">file</a>` per file (PEP 503); links
//! are relative to the page.

use crate::support::platform::Platform;
use crate::variant::wheel_name::{WheelName, normalize};

pub use crate::variant::wheel_name::project_page;

/// The platform tags a wheel for `platform` may carry, best first.
fn platform_tags(platform: Platform) -> &'static [&'static str] {
    match platform {
        Platform::WindowsX86_64 => &["win_amd64", "any"],
        Platform::LinuxX86_64 => &["linux_x86_64", "any"],
    }
}

/// A wheel link of the page: absolute URL (without fragment) and the sha256 the index gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub url: String,
    pub file: String,
    pub sha256: Option<String>,
}

/// The one wheel of `project` `version` for `platform` that the page at `page_url` links, or
/// why there is none (the files the page does have are named).
pub fn find_wheel(
    page_url: &str,
    html: &str,
    project: &str,
    version: &str,
    platform: Platform,
) -> Result<Link, String> {
    let links = links(page_url, html);
    let wanted = normalize(project);
    let mut candidates: Vec<(usize, Link)> = Vec::new();
    for link in &links {
        let Ok(name) = WheelName::parse(std::path::Path::new(&link.file)) else {
            continue;
        };
        if normalize(&name.project) != wanted || name.public_version != version {
            continue;
        }
        let tags = platform_tags(platform);
        let rank = name
            .platform_tag
            .split('.')
            .filter_map(|t| {
                tags.iter().position(|w| {
                    t == *w
                        || (t.starts_with("manylinux")
                            && t.ends_with("_x86_64")
                            && platform == Platform::LinuxX86_64)
                })
            })
            .min();
        if let Some(rank) = rank {
            candidates.push((rank, link.clone()));
        }
    }
    candidates.sort_by_key(|(rank, _)| *rank);
    match candidates.as_slice() {
        [(best, link), rest @ ..] if rest.first().is_none_or(|(r, _)| r > best) => Ok(link.clone()),
        [] => {
            let files: Vec<&str> = links.iter().map(|l| l.file.as_str()).take(12).collect();
            Err(format!(
                "{page_url} links no {project} {version} wheel for {} (files there: {})",
                platform.name(),
                if files.is_empty() {
                    "none".to_string()
                } else {
                    files.join(", ")
                }
            ))
        }
        several => Err(format!(
            "{page_url} links several {project} {version} wheels for {}: {}",
            platform.name(),
            several
                .iter()
                .map(|(_, l)| l.file.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// Every `href` of the page, resolved against it, with its `#sha256=` fragment.
pub fn links(page_url: &str, html: &str) -> Vec<Link> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find("href=") {
        rest = &rest[at + 5..];
        let Some(quote) = rest.chars().next().filter(|c| *c == '"' || *c == '\'') else {
            continue;
        };
        let Some(end) = rest[1..].find(quote) else {
            break;
        };
        let href = unescape(&rest[1..1 + end]);
        rest = &rest[1 + end..];
        let (target, fragment) = href.split_once('#').unwrap_or((&href, ""));
        let sha256 = fragment
            .strip_prefix("sha256=")
            .filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
            .map(str::to_ascii_lowercase);
        let url = resolve(page_url, target);
        let file =
            crate::support::paths::last_segment(url.split('?').next().unwrap_or(&url)).to_string();
        out.push(Link { url, file, sha256 });
    }
    out
}

fn unescape(text: &str) -> String {
    text.replace("&amp;", "&")
        .replace("&#43;", "+")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
}

/// `target` made absolute against `page` (an absolute URL ending in `/`).
fn resolve(page: &str, target: &str) -> String {
    if target.contains("://") {
        return target.to_string();
    }
    let scheme_end = page.find("://").map_or(0, |i| i + 3);
    if let Some(path) = target.strip_prefix('/') {
        let host_end = page[scheme_end..]
            .find('/')
            .map_or(page.len(), |i| scheme_end + i);
        return format!("{}/{path}", &page[..host_end]);
    }
    let mut base: Vec<&str> = page[scheme_end..].split('/').collect();
    base.pop(); // the page's own last segment (empty for a folder URL)
    for part in target.split('/') {
        match part {
            "." => {}
            ".." if base.len() > 1 => {
                base.pop();
            }
            ".." => {}
            other => base.push(other),
        }
    }
    format!("{}{}", &page[..scheme_end], base.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "https://stable.repo.amd.com/rocm/whl-next/rocm-sdk-core/";

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
        let link = find_wheel(
            PAGE,
            &html,
            "rocm-sdk-core",
            "10.0.0",
            Platform::WindowsX86_64,
        )
        .unwrap();
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
        let absolute = links(PAGE, &html);
        assert_eq!(
            absolute[2].url,
            "https://stable.repo.amd.com/other/rocm_sdk_core-9.9.0-py3-none-win_amd64.whl"
        );
    }

    #[test]
    fn a_missing_version_names_the_files_the_page_has() {
        let html = "<a href='rocm_sdk_core-9.0.0-py3-none-win_amd64.whl'>x</a>";
        let err = find_wheel(
            PAGE,
            html,
            "rocm-sdk-core",
            "10.0.0",
            Platform::WindowsX86_64,
        )
        .unwrap_err();
        assert!(
            err.contains("links no rocm-sdk-core 10.0.0 wheel for windows-x86_64"),
            "{err}"
        );
        assert!(
            err.contains("rocm_sdk_core-9.0.0-py3-none-win_amd64.whl"),
            "{err}"
        );
    }
}
