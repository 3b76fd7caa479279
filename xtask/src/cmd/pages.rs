//! `pages`: the pip index of every release, as a static site.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::flags::checked;
use ct2v_pipeline::commands::pages::PagesRequest;
use ct2v_support::report::Reporter;
use ct2v_support::text_rules;

#[derive(Args)]
pub struct Pages {
    /// This release's folder (its manifest.json)
    #[arg(long, value_name = "DIR")]
    pub release: PathBuf,
    /// This release's tag (the folder of its download URL)
    #[arg(long, value_name = "TAG", value_parser = checked(text_rules::git_tag))]
    pub tag: String,
    /// A folder of earlier releases: <tag>/manifest.json each
    #[arg(long, value_name = "DIR")]
    pub earlier: Option<PathBuf>,
    /// Where release assets are downloaded from (https; http only to loopback), ending
    /// in `/`; the tag follows
    #[arg(long, value_name = "URL", value_parser = checked(text_rules::base_url))]
    pub download_base: String,
    /// The site's own URL (https; http only to loopback), written into the front page's
    /// install commands (`<URL>/whl/<variant>`); absent: https://OWNER.github.io/REPO
    #[arg(long, value_name = "URL", value_parser = checked(text_rules::web_url))]
    pub site_url: Option<String>,
    /// The site folder to write (new, or empty)
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

impl Pages {
    pub fn run(self, reporter: &Reporter) -> Result<ExitCode> {
        PagesRequest {
            release: self.release,
            tag: self.tag,
            earlier: self.earlier,
            download_base: self.download_base,
            site_url: self.site_url,
            out: self.out,
        }
        .run(reporter)
    }
}
