//! The checks behind `verify`, `smoke --frozen` and `verify-release --install`, each written
//! once over an [`Interpreter`](crate::interpreter::Interpreter): a venv on this host, or the
//! Windows Python under wine for a Windows wheel on a Linux host.

#[cfg(feature = "wine")]
pub(crate) mod loaded;
pub mod release;
pub mod smoke;
pub mod target;
pub mod verify;

use std::path::Path;

use anyhow::Result;

use crate::interpreter::Interpreter;
use crate::winpython;
use ct2v_pipeline::plan::Plan;
use ct2v_support::workspace::Workspace;

/// Where a check of the plan's wheel runs: the build's verify venv, or (a Windows wheel on a
/// Linux host) a Windows Python under wine in `wine_work`.
pub(crate) fn interpreter_for(
    workspace: &Workspace,
    plan: &Plan,
    wine_work: &Path,
    options: &ct2v_fetch::download::Options,
) -> Result<Interpreter> {
    if winpython::under_wine(plan.platform) {
        return Interpreter::wine(workspace, &plan.python, wine_work, options, WINDOWS_WHEEL);
    }
    let job = crate::plan_outputs::verify_job(plan)?;
    Ok(Interpreter::venv(
        job.python.clone().into(),
        "the verify venv",
    ))
}

/// The check that needs the wine harness, as its error names it.
const WINDOWS_WHEEL: &str = "checking a Windows wheel on a Linux host";

/// Stops a check of a `plan` wheel before any work when it would run under wine and this
/// binary has no harness.
pub(crate) fn require_harness(plan: &Plan) -> Result<()> {
    if winpython::under_wine(plan.platform) && !winpython::HARNESS {
        return Err(winpython::harness_missing(WINDOWS_WHEEL).into());
    }
    Ok(())
}

/// ` in python 3.12.9 (Windows, under wine)` for a fresh interpreter; nothing for the verify
/// venv, which progress lines leave unnamed.
pub(crate) fn place(interpreter: &Interpreter) -> String {
    if interpreter.under_wine() {
        format!(" in {}", interpreter.label())
    } else {
        String::new()
    }
}
