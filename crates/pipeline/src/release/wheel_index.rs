//! A release's pip index: a static PEP 503 "simple" repository per variant (its pages written
//! by `ct2v_fetch::pep503`, the format's one home), for the wheels of a release:
//! `whl/<variant>/index.html` (the project list) and `whl/<variant>/ctranslate2/index.html`
//! (one link per wheel, with `#sha256=` so that pip checks what it downloads), as PyTorch
//! serves `download.pytorch.org/whl/cu121/`. Host `whl/` anywhere static (GitHub Pages, or the
//! release folder itself) and `pip install --index-url <that>/whl/cpu ctranslate2`; links are
//! relative to the release folder unless a base URL (the release's download URL) is given.

use std::path::Path;

use anyhow::Result;

use ct2v_support::fsx;

use ct2v_fetch::pep503::{Link, project_page, root_page};

pub const DIR: &str = "whl";
pub const PROJECT: &str = "ctranslate2";
/// The selector's pure-Python wheel, listed in every variant's index beside CTranslate2 so an
/// app installs it from the URL it installs CTranslate2 from.
pub(crate) const SELECTOR_PROJECT: &str = "ct2-variant-select";

/// The base of a link to a wheel at the top of the folder that holds `whl/`.
pub(crate) const RELATIVE_BASE: &str = "../../../";

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
