//! `pages`: the pip index of every release, as a static site (GitHub Pages).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use crate::release::pages;
use ct2v_support::diagnostic::escaped;
use ct2v_support::out_folder;
use ct2v_support::report::Reporter;

/// The site `pages` writes: this release, the earlier ones, and where they are served from.
pub struct PagesRequest {
    /// This release's folder (its manifest.json).
    pub release: PathBuf,
    /// This release's tag.
    pub tag: String,
    /// A folder of earlier releases: `<tag>/manifest.json` each.
    pub earlier: Option<PathBuf>,
    pub download_base: String,
    pub site_url: Option<String>,
    /// The site folder to write (new, or empty).
    pub out: PathBuf,
}

impl PagesRequest {
    pub fn run(&self, reporter: &Reporter) -> Result<ExitCode> {
        let (release, tag, out) = (&self.release, self.tag.as_str(), &self.out);
        out_folder::check_out("--out", out, out_folder::Existing::EmptyOrSame)?;
        out_folder::check_in("--release", release)?;
        if let Some(earlier) = &self.earlier {
            out_folder::check_in("--earlier", earlier)?;
        }
        let mut releases = match &self.earlier {
            Some(dir) => pages::read_earlier(dir)?,
            None => Vec::new(),
        };
        releases.retain(|r| r.tag != tag);
        releases.push(pages::read_release(release, tag)?);
        let site_url = self.site_url.as_deref();
        let site = pages::write_site(&releases, &self.download_base, site_url, out, reporter)?;
        if site_url.is_none() {
            reporter.say(format_args!(
                "no --site-url: the front page's install commands name the index at {}/whl/<variant>; \
                 give the site's URL to write it",
                pages::SITE_PLACEHOLDER
            ));
        }
        if releases.last().is_some_and(|r| r.coverage.is_none()) {
            reporter.say(format_args!(
                "{} has no {}: the front page has no card table",
                escaped(&release.display().to_string()),
                crate::release::SELECTOR_DATA
            ));
        }
        for (variant, wheels) in &site.variants {
            reporter.outln(format_args!(
                "{}/whl/{variant}/  {wheels} wheel(s)",
                escaped(&out.display().to_string())
            ))?;
        }
        reporter.say(format_args!(
            "{} release(s): {}",
            releases.len(),
            releases
                .iter()
                .map(|r| escaped(&r.tag))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        Ok(ExitCode::SUCCESS)
    }
}
