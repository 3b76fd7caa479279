//! `build`: one variant end to end, step by step, through the executor.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::flags::{DownloadArgs, PartArgs, Selection};
use ct2v_pipeline::commands::build::BuildRequest;
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

#[derive(Args)]
pub struct Build {
    #[command(flatten)]
    pub selection: Selection,
    /// Print the plan and stop
    #[arg(long)]
    pub dry_run: bool,
    /// With --dry-run: print the plan as JSON
    #[arg(long, requires = "dry_run")]
    pub json: bool,
    #[command(flatten)]
    pub download: DownloadArgs,
    #[command(flatten)]
    pub part: PartArgs,
}

impl Build {
    pub fn run(self, workspace: &Workspace, reporter: &Reporter) -> Result<ExitCode> {
        BuildRequest {
            plan: self.selection.request(),
            dry_run: self.dry_run,
            json: self.json,
            download: self.download.options(reporter),
            pinner: self.download.pinner(),
            until: self.part.until,
            prebuilt_native: self.part.prebuilt_native,
        }
        .run(workspace, reporter)
    }
}
