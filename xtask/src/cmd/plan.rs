//! `plan`: the ordered steps a build of one variant will run, without running them.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::flags::Selection;
use ct2v_pipeline::commands::plan::ShowPlan;
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

#[derive(Args)]
pub struct Plan {
    #[command(flatten)]
    pub selection: Selection,
    /// Print the plan as JSON (stable; see docs/plan-json.md)
    #[arg(long)]
    pub json: bool,
}

impl Plan {
    pub fn run(self, workspace: &Workspace, reporter: &Reporter) -> Result<ExitCode> {
        ShowPlan {
            plan: self.selection.request(),
            json: self.json,
        }
        .run(workspace, reporter)
    }
}
