//! `build`: one variant end to end, step by step, through the executor.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use super::{make_plan, pin_if_allowed, print_plan};
use crate::cli::{DownloadArgs, PartArgs, Selection};
use ct2v_fetch::cache::Cache;
use ct2v_pipeline::build::Runner;
use ct2v_pipeline::build::bundle_job;
use ct2v_pipeline::build::exec::Executor;
use ct2v_pipeline::plan;
use ct2v_support::workspace::Workspace;

pub fn run(
    workspace: &Workspace,
    selection: Selection,
    dry_run: bool,
    json: bool,
    download: DownloadArgs,
    part: PartArgs,
) -> Result<ExitCode> {
    let plan = make_plan(workspace, &selection)?;
    if let Some(until) = &part.until
        && !plan.steps.iter().any(|s| s.id == until.as_str())
    {
        let ids: Vec<&str> = plan.steps.iter().map(|s| s.id.as_str()).collect();
        return Err(ct2v_support::diagnostic::InputError::new(format!(
            "--until {until}: the plan of `{}` has no such step",
            plan.variant
        ))
        .allowed("", &ids)
        .into());
    }
    if dry_run {
        print_plan(&plan, json)?;
        return Ok(ExitCode::SUCCESS);
    }
    let plan = pin_if_allowed(workspace, &selection, plan, &download)?;
    if let Some(problem) = ct2v_pipeline::build::long_paths::problem(&plan) {
        anyhow::bail!("{problem}");
    }
    build(
        workspace,
        &plan,
        selection.sdk_dir.clone(),
        &download,
        &part,
    )
}

fn build(
    workspace: &Workspace,
    plan: &plan::Plan,
    sdk_root: Option<PathBuf>,
    download: &DownloadArgs,
    part: &PartArgs,
) -> Result<ExitCode> {
    eprintln!(
        "building {} for {} (Python {}): {} steps; logs in {}",
        plan.variant,
        plan.platform,
        plan.python,
        plan.steps.len(),
        workspace.log_dir(&plan.slot, plan.platform).display()
    );
    for note in &plan.notes {
        eprintln!("note: {note}");
    }
    let mut runner = Runner {
        cache: Cache::new(&workspace.cache_dir),
        download: download.options(),
        folders: bundle_job::Folders {
            sdk_root,
            toolchain: None,
            sdk_version: None,
        },
        sdk: ct2v_pipeline::build::sdk_env::SdkEnv {
            before_bundle: stops_before_bundle(plan, part.until.as_deref()),
            ..Default::default()
        },
        msvc: None,
        prebuilt_native: part.prebuilt_native,
    };
    let mut executor = Executor::new(
        plan,
        workspace.state_dir(&plan.slot, plan.platform, &plan.python),
        workspace.log_dir(&plan.slot, plan.platform),
    );
    executor.until = part.until.clone();
    executor.prebuilt_native = part.prebuilt_native;
    let report = executor.run(&mut runner)?;
    eprintln!(
        "done in {:.1} s: {} step(s) ran, {} up to date",
        report.seconds,
        report.ran.len(),
        report.skipped.len()
    );
    for (step, why) in &report.not_run {
        eprintln!("warning: step `{step}` did not run: {why}");
    }
    if let Some(until) = &part.until {
        eprintln!("stopped after step `{until}` (--until)");
        return Ok(ExitCode::SUCCESS);
    }
    for artifact in &plan.artifacts {
        println!("{artifact}");
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether `--until STEP` ends the run before the plan's bundle step.
fn stops_before_bundle(plan: &plan::Plan, until: Option<&str>) -> bool {
    let Some(until) = until else {
        return false;
    };
    let last = plan.steps.iter().position(|s| s.id == until);
    let bundle = plan
        .steps
        .iter()
        .position(|s| matches!(s.action, plan::Action::Bundle { .. }));
    matches!((last, bundle), (Some(last), Some(bundle)) if last < bundle)
}
