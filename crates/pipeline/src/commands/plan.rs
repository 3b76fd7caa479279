//! `plan`: the ordered steps a build of one variant will run, without running them.

use std::process::ExitCode;

use anyhow::Result;

use crate::plan::{Plan, render_text, request::PlanRequest};
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

/// A plan as `cargo xtask plan` asks for it.
pub struct ShowPlan {
    pub plan: PlanRequest,
    /// As JSON (docs/plan-json.md) rather than as text.
    pub json: bool,
}

impl ShowPlan {
    pub fn run(&self, workspace: &Workspace, reporter: &Reporter) -> Result<ExitCode> {
        let plan = self.plan.plan(workspace, reporter)?;
        print(&plan, self.json, reporter)?;
        if let Some(problem) = crate::execute::long_paths::problem(&plan) {
            reporter.warn(problem);
        }
        Ok(ExitCode::SUCCESS)
    }
}

/// The plan on stdout, as text or as JSON (docs/plan-json.md); `build --dry-run` shows it too.
pub(crate) fn print(plan: &Plan, json: bool, reporter: &Reporter) -> Result<()> {
    if json {
        reporter.outln(serde_json::to_string_pretty(plan)?)?;
    } else {
        reporter.out(render_text(plan))?;
    }
    Ok(())
}
