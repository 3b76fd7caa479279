//! What a download URL must be, for an input in a variant file and for `bump --source`.

use ct2v_support::diagnostic::quoted;
use ct2v_support::{safe_path, text_rules};

/// Why `url` cannot be downloaded as an input, with the note that says what would do;
/// `runnable` inputs (an SDK installer) may have any file name, the others must be archives.
pub fn problem(url: &str, runnable: bool) -> Option<(String, &'static str)> {
    if let Err(refusal) = text_rules::download_url(url) {
        return Some((
            format!("{} is not allowed: {}", quoted(url), refusal.why),
            "an http(s) URL (inputs are downloaded; for a tree on disk use [source] kind = \"path\")",
        ));
    }
    let name = file_name(url);
    if safe_path::check_name(name).is_err() {
        return Some((
            format!("`{url}` has no file name at its end"),
            "the URL's last part names the file, e.g. https://host/path/x-1.0.tar.gz",
        ));
    }
    if !runnable && ct2v_fetch::unpack::ArchiveFormat::from_name(name).is_none() {
        return Some((
            format!("`{name}` is not an archive xtask can unpack"),
            "inputs are .tar.gz, .tgz, .crate, .zip, .whl or .7z files",
        ));
    }
    None
}

/// Why `url` cannot be a PEP 503 index (the `index` of an input), with what would do.
pub(crate) fn index_problem(url: &str) -> Option<(String, &'static str)> {
    let why = match text_rules::download_url(url) {
        Err(refusal) => refusal.why,
        Ok(()) if url.contains(['?', '#']) => "it has a query or fragment".into(),
        Ok(()) => return None,
    };
    Some((
        format!("{} is not an http(s) index URL: {why}", quoted(url)),
        "an index is the URL pip takes as --index-url, e.g. https://pypi.org/simple/",
    ))
}

/// The last part of the URL's path: the name the download is kept under.
pub fn file_name(url: &str) -> &str {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    ct2v_support::paths::last_segment(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_http_archive_urls_with_a_file_name_pass() {
        assert!(
            problem(
                "https://static.crates.io/crates/ct2rs/ct2rs-0.10.3.crate",
                false
            )
            .is_none()
        );
        assert!(problem("http://127.0.0.1:8080/x-1.0.tar.gz?x=1", false).is_none());
        assert!(problem("https://host/setup.exe", true).is_none());
        for bad in [
            "file:///etc/x.tar.gz",
            "ftp://host/x.zip",
            "https://host/",
            "https://host/..",
            "https://host/page.html",
            "../..",
            "https://user:pw@host/x.zip",
            "https://host/x\u{1b}[2J.zip",
            "https://host/x y.zip",
        ] {
            assert!(problem(bad, false).is_some(), "{bad}");
        }
        assert!(index_problem("https://pypi.org/simple/").is_none());
        assert!(index_problem("http://127.0.0.1:8080/simple/").is_none());
        for bad in [
            "https://pypi.org/simple/?x",
            "https://u:p@pypi.org/simple/",
            "https://pypi.org/sim ple/",
            "file:///simple/",
        ] {
            assert!(index_problem(bad).is_some(), "{bad}");
        }
    }
}
