//! `fetch`: download (or find in the cache) and verify every pinned input of one build.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::flags::{DownloadArgs, Selection};
use ct2v_pipeline::commands::fetch::FetchRequest;
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

#[derive(Args)]
pub struct Fetch {
    #[command(flatten)]
    pub selection: Selection,
    #[command(flatten)]
    pub download: DownloadArgs,
    /// Skip the pip wheels of the build tools and of the wheel's dependencies (fetched
    /// into <cache>/wheels/ so that `build --offline` works from a copied cache)
    #[arg(long)]
    pub no_wheels: bool,
}

impl Fetch {
    pub fn run(self, workspace: &Workspace, reporter: &Reporter) -> Result<ExitCode> {
        FetchRequest {
            plan: self.selection.request(),
            download: self.download.options(reporter),
            pinner: self.download.pinner(),
            no_wheels: self.no_wheels,
        }
        .run(workspace, reporter)
    }
}
