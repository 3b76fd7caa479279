//! `bench`: time the built wheel against the official wheel of the same version.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::flags::{BenchFlags, Selection};
use ct2v_proof::commands::bench;
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

#[derive(Args)]
pub struct Bench {
    #[command(flatten)]
    pub selection: Selection,
    #[command(flatten)]
    pub flags: BenchFlags,
}

impl Bench {
    pub fn run(self, workspace: &Workspace, reporter: &Reporter) -> Result<ExitCode> {
        let request = self.selection.request();
        let options: bench::Options = self.flags.options();
        options.run(workspace, &request, reporter)?;
        Ok(ExitCode::SUCCESS)
    }
}
