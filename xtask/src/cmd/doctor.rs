//! `doctor`: what this machine has for GPU acceleration and which variant fits it.

use std::process::ExitCode;

use anyhow::Result;

pub fn run(workspace: &ct2v_support::workspace::Workspace, json: bool) -> Result<ExitCode> {
    let catalog = ct2v_pipeline::variant::Catalog::load(&workspace.root, &[])?;
    let coverage = ct2v_pipeline::variant::coverage::of_catalog(&catalog)?;
    let report = ct2v_pipeline::doctor::examine(&coverage);
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.text());
    }
    Ok(if report.verdict.ready {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `doctor --variant V`: what that build needs here, each missing thing on a line.
pub fn run_for_build(
    workspace: &ct2v_support::workspace::Workspace,
    prebuilt_native: bool,
    selection: &crate::cli::Selection,
) -> Result<ExitCode> {
    let plan = super::make_plan(workspace, selection)?;
    let problems = ct2v_pipeline::build::readiness::problems(
        &plan,
        selection.sdk_dir.clone(),
        prebuilt_native,
    );
    let what = format!(
        "{} for {} (Python {})",
        plan.variant, plan.platform, plan.python
    );
    if problems.is_empty() {
        println!("ready: this machine has what building {what} needs");
        return Ok(ExitCode::SUCCESS);
    }
    println!("not ready to build {what}:");
    for problem in &problems {
        println!("  - {}", problem.replace('\n', "\n    "));
    }
    Ok(ExitCode::FAILURE)
}
