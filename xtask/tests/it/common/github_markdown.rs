//! Markdown as GitHub renders it: cmark-gfm (github/cmark-gfm), through PyPI's `cmarkgfm`,
//! which `.ci/run` installs into `target/ci-python`; the HTML read back by Python's
//! `html.parser`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `html.parser`'s view of cmark-gfm's HTML for a Markdown file, rendered with raw HTML let
/// through (`CMARK_OPT_UNSAFE`), so that markup the file lets in shows: every element, every
/// link's href, and the text outside `code` and `a` (where GitHub links `@mentions`).
const RENDER: &str = r#"
import json, sys, cmarkgfm
from cmarkgfm.cmark import Options
from html.parser import HTMLParser
html = cmarkgfm.github_flavored_markdown_to_html(
    open(sys.argv[1], encoding="utf-8").read(), options=Options.CMARK_OPT_UNSAFE)
class P(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.hrefs, self.text, self.inside = [], [], [], []
    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.hrefs += [v for k, v in attrs if k in ("href", "src")]
        if tag in ("code", "a", "pre"):
            self.inside.append(tag)
    def handle_endtag(self, tag):
        if self.inside and self.inside[-1] == tag:
            self.inside.pop()
    def handle_data(self, data):
        if not self.inside:
            self.text.append(data)
p = P()
p.feed(html)
print(json.dumps({"html": html, "tags": sorted(set(p.tags)), "hrefs": p.hrefs,
                  "text": " ".join(p.text)}))
"#;

/// The Python that has `cmarkgfm` (`.ci/run` installs it into `target/ci-python`); `None`
/// when it is not there (skipped, said; a failure under CI=true).
pub fn renderer() -> Option<PathBuf> {
    let python = super::repo_root().join("target/ci-python/bin/python");
    let ok = Command::new(&python)
        .args(["-c", "import cmarkgfm"])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return Some(python);
    }
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    super::skip::missing_in(
        "cmarkgfm (GitHub's cmark-gfm for Python)",
        "python3 -m venv target/ci-python && target/ci-python/bin/pip install cmarkgfm==2025.10.22",
        ci,
        &super::skip::record_file(),
    );
    None
}

/// What GitHub would show of a Markdown file: its elements, links and the text outside
/// code, as JSON.
pub fn rendered(python: &Path, file: &Path) -> serde_json::Value {
    let out = Command::new(python)
        .args(["-c", RENDER])
        .arg(file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", super::stdout_and_stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}
