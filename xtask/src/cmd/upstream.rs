//! `upstream`: the version facts CTranslate2's own tree declares, next to our data's
//! (`--check`: fail on drift).

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::flags::{DownloadArgs, checked};
use ct2v_support::report::Reporter;
use ct2v_support::text_rules;
use ct2v_support::workspace::Workspace;
use ct2v_upkeep::commands::upstream::UpstreamRequest;

#[derive(Args)]
pub struct Upstream {
    /// Fail (exit 1) when a fact drifts; exit 2 when one could not be read
    #[arg(long)]
    pub check: bool,
    /// Only this CTranslate2 version (default: every file in variants/ctranslate2/)
    #[arg(long, value_name = "VERSION", value_parser = checked(text_rules::ctranslate2_version))]
    pub ctranslate2: Option<String>,
    /// Print the facts and verdicts as JSON
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub download: DownloadArgs,
}

impl Upstream {
    pub fn run(self, workspace: &Workspace, reporter: &Reporter) -> Result<ExitCode> {
        UpstreamRequest {
            download: self.download.options(reporter),
            check: self.check,
            ctranslate2: self.ctranslate2,
            json: self.json,
        }
        .run(workspace, reporter)
    }
}
