//! `variants`: the variants with a one-line description each; `--json` and `--markdown`: which
//! GPUs each serves.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use ct2v_pipeline::commands::variants::Listing;
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

#[derive(Args)]
pub struct Variants {
    /// Print JSON instead of text: the variants and the GPUs each serves
    #[arg(long, conflicts_with = "markdown")]
    pub json: bool,
    /// Print the README's table of consumer cards and the variant serving each
    #[arg(long)]
    pub markdown: bool,
}

impl Variants {
    pub fn run(self, workspace: &Workspace, reporter: &Reporter) -> Result<ExitCode> {
        match (self.json, self.markdown) {
            (true, _) => Listing::Json,
            (_, true) => Listing::Markdown,
            _ => Listing::Text,
        }
        .run(workspace, reporter)
    }
}
