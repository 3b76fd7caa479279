//! `verify`: install a built wheel into a fresh venv and check that it imports and works.

use std::process::ExitCode;

use anyhow::Result;

use super::make_plan;
use crate::cli::Selection;
use crate::plan;
use crate::workspace::Workspace;

pub fn run(workspace: &Workspace, selection: &Selection, numerics: bool) -> Result<ExitCode> {
    let plan = make_plan(workspace, selection)?;
    let step = plan
        .step(|a| matches!(a, plan::Action::Verify))
        .expect("every plan has a verify step");
    for wheel in &step.inputs {
        if !std::path::Path::new(wheel).is_file() {
            anyhow::bail!(
                "{wheel} is not there: build it first with `cargo xtask build --variant {}`",
                plan.variant
            );
        }
    }
    let log_dir = workspace.log_dir(&plan.slot, plan.platform);
    std::fs::create_dir_all(&log_dir)?;
    let log = log_dir.join("verify.log");
    std::fs::write(&log, "")?;
    for command in &step.commands {
        crate::exec::run_logged(command, &step.env, &log, &mut |line| {
            if !line.starts_with("Requirement already satisfied") {
                // A closed stdout only loses the echo; the log keeps every line.
                use std::io::Write as _;
                let _ = writeln!(std::io::stdout().lock(), "{line}");
            }
        })?;
    }
    eprintln!(
        "verified {} (log: {})",
        step.inputs.join(", "),
        log.display()
    );
    if numerics {
        let log = log_dir.join("numerics.log");
        std::fs::write(&log, "")?;
        crate::numerics::check(workspace, &plan, &log)?;
        eprintln!("numerics match the official wheel (log: {})", log.display());
    }
    Ok(ExitCode::SUCCESS)
}
