//! `bump`: add a CTranslate2 version: its data file, pins, patch check.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::flags::{DownloadArgs, checked};
use ct2v_support::report::Reporter;
use ct2v_support::{text_rules, workspace::Workspace};
use ct2v_upkeep::commands::bump::BumpRequest;
use ct2v_upkeep::version_file::{FromTag, NewVersion};

#[derive(Args)]
pub struct Bump {
    /// The new CTranslate2 version
    #[arg(long, value_name = "VERSION", value_parser = checked(text_rules::ctranslate2_version))]
    pub ctranslate2: String,
    /// The version file to start from (default: the newest one below VERSION)
    #[arg(long, value_name = "VERSION", value_parser = checked(text_rules::ctranslate2_version))]
    pub from: Option<String>,
    /// The source archive with every submodule (e.g. a ct2rs crate on crates.io)
    #[arg(long, value_name = "URL", conflicts_with = "from_tag")]
    pub source: Option<String>,
    /// Take the source from this git tag of --repo instead: its GitHub archive and one
    /// archive per submodule (nested ones too), read through the GitHub API
    #[arg(long, value_name = "TAG", value_parser = checked(text_rules::git_tag))]
    pub from_tag: Option<String>,
    /// The GitHub repository of --from-tag
    #[arg(
        long,
        value_name = "OWNER/REPO",
        default_value = "OpenNMT/CTranslate2",
        requires = "from_tag"
    )]
    pub repo: String,
    /// The folder inside --source that holds CTranslate2 (found for ct2rs crates)
    #[arg(long, value_name = "DIR", conflicts_with = "from_tag")]
    pub subdir: Option<String>,
    /// Write the files only: no downloads, no patch check
    #[arg(long)]
    pub no_pin: bool,
    #[command(flatten)]
    pub download: DownloadArgs,
}

impl Bump {
    pub fn run(self, workspace: &Workspace, reporter: &Reporter) -> Result<ExitCode> {
        BumpRequest {
            new: NewVersion {
                version: self.ctranslate2,
                from: self.from,
                source: self.source,
                subdir: self.subdir,
                from_tag: self.from_tag.map(|tag| FromTag {
                    repo: self.repo,
                    tag,
                }),
            },
            no_pin: self.no_pin,
            download: self.download.options(reporter),
        }
        .run(workspace, reporter)
    }
}
