//! PEP 503 "simple" index pages as files: a project's page, one link per wheel with
//! `#sha256=` (so that pip checks what it downloads), and the root page that lists the
//! projects; every text written into a page is escaped.

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

#[cfg(test)]
mod tests {
    use super::*;

    const PROJECT: &str = "ctranslate2";
    const RELATIVE_BASE: &str = "../../../";

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
