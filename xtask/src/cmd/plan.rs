//! `plan`: the ordered steps a build of one variant will run, without running them.

use std::process::ExitCode;

use anyhow::Result;

use super::{make_plan, print_plan};
use crate::cli::Selection;
use ct2v_support::workspace::Workspace;

pub fn run(workspace: &Workspace, selection: &Selection, json: bool) -> Result<ExitCode> {
    let plan = make_plan(workspace, selection)?;
    print_plan(&plan, json)?;
    if let Some(problem) = ct2v_pipeline::build::long_paths::problem(&plan) {
        eprintln!("warning: {problem}");
    }
    Ok(ExitCode::SUCCESS)
}
