//! `pages`: the pip index of every release, as a static site.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use ct2v_pipeline::release::pages;
use ct2v_support::out_folder;

pub fn run(
    release: &Path,
    tag: &str,
    earlier: Option<&Path>,
    download_base: &str,
    site_url: Option<&str>,
    out: &Path,
) -> Result<ExitCode> {
    out_folder::check_out("--out", out, out_folder::Existing::MustBeEmpty)?;
    out_folder::check_in("--release", release)?;
    if let Some(earlier) = earlier {
        out_folder::check_in("--earlier", earlier)?;
    }
    let mut releases = match earlier {
        Some(dir) => pages::read_earlier(dir)?,
        None => Vec::new(),
    };
    releases.retain(|r| r.tag != tag);
    releases.push(pages::read_release(release, tag)?);
    let site = pages::write_site(&releases, download_base, site_url, out)?;
    if site_url.is_none() {
        eprintln!(
            "no --site-url: the front page's install commands name the index at {}/whl/<variant>; \
             give the site's URL to write it",
            pages::SITE_PLACEHOLDER
        );
    }
    if releases.last().is_some_and(|r| r.coverage.is_none()) {
        eprintln!(
            "{} has no {}: the front page has no card table",
            release.display(),
            ct2v_pipeline::release::SELECTOR_DATA
        );
    }
    for (variant, wheels) in &site.variants {
        println!("{}/whl/{variant}/  {wheels} wheel(s)", out.display());
    }
    eprintln!(
        "{} release(s): {}",
        releases.len(),
        releases
            .iter()
            .map(|r| r.tag.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(ExitCode::SUCCESS)
}
