//! A static PEP 503 "simple" repository per variant, for the wheels of a release:
//! `whl/<variant>/index.html` (the project list) and `whl/<variant>/ctranslate2/index.html`
//! (one link per wheel, with `#sha256=` so that pip checks what it downloads), as PyTorch
//! serves `download.pytorch.org/whl/cu121/`. Host `whl/` anywhere static (GitHub Pages, or the
//! release folder itself) and `pip install --index-url <that>/whl/cpu ctranslate2`; links are
//! relative to the release folder unless a base URL (the release's download URL) is given.

use std::path::Path;

use anyhow::Result;

use crate::support::fsx;

pub const DIR: &str = "whl";
pub const PROJECT: &str = "ctranslate2";
/// The selector's pure-Python wheel, listed in every variant's index beside CTranslate2 so an
/// app installs it from the URL it installs CTranslate2 from.
pub const SELECTOR_PROJECT: &str = "ct2-variant-select";

/// One wheel of the index, downloaded from `base` + its file name (`base` ends in `/`: a
/// release's download URL, or a path relative to the project page).
pub struct Link {
    pub file: String,
    pub sha256: String,
    pub base: String,
}

/// `+` (a local version) escaped, as PyTorch's index writes it; the other characters of a
/// wheel name need no escaping.
pub fn href_name(file: &str) -> String {
    file.replace('+', "%2B")
}

/// `&`, `<`, `>`, `"` and `'` as entities.
pub fn html_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

pub fn project_page(project: &str, links: &[Link]) -> String {
    let mut html = format!(
        "<!DOCTYPE html>\n<html>\n<head><meta name=\"pypi:repository-version\" content=\"1.0\"><title>Links for {project}</title></head>\n<body>\n<h1>Links for {project}</h1>\n"
    );
    for link in links {
        html.push_str(&format!(
            "<a href=\"{}{}#sha256={}\">{}</a><br/>\n",
            html_escape(&link.base),
            html_escape(&href_name(&link.file)),
            html_escape(&link.sha256),
            html_escape(&link.file)
        ));
    }
    html.push_str("</body>\n</html>\n");
    html
}

pub fn root_page(projects: &[&str]) -> String {
    let mut html = String::from(
        "<!DOCTYPE html>\n<html>\n<head><meta name=\"pypi:repository-version\" content=\"1.0\"><title>Simple index</title></head>\n<body>\n",
    );
    for project in projects {
        html.push_str(&format!("<a href=\"{project}/\">{project}</a><br/>\n"));
    }
    html.push_str("</body>\n</html>\n");
    html
}

/// The base of a link to a wheel at the top of the folder that holds `whl/`.
pub const RELATIVE_BASE: &str = "../../../";

/// Writes the index of `variant` below `dir` (`dir/whl/<variant>/`): CTranslate2's `links`,
/// and the selector's wheels when there are any.
pub fn write(dir: &Path, variant: &str, links: &[Link], selector: &[Link]) -> Result<()> {
    let root = dir.join(DIR).join(variant);
    let mut projects = vec![(PROJECT, links)];
    if !selector.is_empty() {
        projects.push((SELECTOR_PROJECT, selector));
    }
    for (project, links) in &projects {
        let folder = root.join(project);
        fsx::create_dir_all(&folder)?;
        fsx::write(&folder.join("index.html"), project_page(project, links))?;
    }
    let names: Vec<&str> = projects.iter().map(|(p, _)| *p).collect();
    fsx::write(&root.join("index.html"), root_page(&names))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everything_written_into_a_page_is_escaped() {
        let links = [Link {
            file: "a\"b<c>.whl".into(),
            sha256: "ab".repeat(32),
            base: "https://x/\"><script>/".into(),
        }];
        let page = project_page(PROJECT, &links);
        assert!(
            !page.contains("<script>") && page.contains("&lt;script&gt;"),
            "{page}"
        );
        assert!(page.contains("a&quot;b&lt;c&gt;.whl"), "{page}");
    }

    #[test]
    fn a_project_page_links_each_wheel_with_its_hash_and_reads_back() {
        let links = [
            Link {
                file: "ctranslate2-4.7.1+cpu-cp312-cp312-win_amd64.whl".into(),
                sha256: "ab".repeat(32),
                base: RELATIVE_BASE.into(),
            },
            Link {
                file: "ctranslate2-4.7.1+cpu-cp311-cp311-win_amd64.whl".into(),
                sha256: "cd".repeat(32),
                base: "https://github.com/o/r/releases/download/v4.7.1/".into(),
            },
        ];
        let page = project_page(PROJECT, &links);
        assert!(page.contains(&format!(
            "<a href=\"../../../ctranslate2-4.7.1%2Bcpu-cp312-cp312-win_amd64.whl#sha256={}\">ctranslate2-4.7.1+cpu-cp312-cp312-win_amd64.whl</a>",
            "ab".repeat(32)
        )));
        assert_eq!(page.matches("<a href=").count(), 2);
        assert!(page.contains(
            "href=\"https://github.com/o/r/releases/download/v4.7.1/ctranslate2-4.7.1%2Bcpu-cp311"
        ));
        assert!(root_page(&[PROJECT]).contains("<a href=\"ctranslate2/\">"));
    }
}
