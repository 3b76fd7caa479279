//! `install-sdk`: the variant's GPU SDK, installed unattended from its pinned installer.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;

use super::make_plan;
use crate::cli::{DownloadArgs, Selection};
use ct2v_fetch::cache::Cache;
use ct2v_pipeline::build::sdk_install::{Installed, install};
use ct2v_support::workspace::Workspace;

pub fn run(
    workspace: &Workspace,
    selection: &Selection,
    download: &DownloadArgs,
    force: bool,
    timeout: Option<u64>,
) -> Result<ExitCode> {
    let plan = make_plan(workspace, selection)?;
    let log = workspace
        .log_dir(&plan.slot, plan.platform)
        .join("install-sdk.log");
    let installed = install(
        &plan,
        &Cache::new(&workspace.cache_dir),
        &download.options(),
        &log,
        timeout.map(Duration::from_secs),
        force,
    )?;
    match installed {
        Installed::Already(found) => println!(
            "already installed: SDK {} at {} ({}); nothing ran (--force runs the installer)",
            found.version,
            found.root.display(),
            found.how
        ),
        Installed::Now { found, seconds } => println!(
            "installed in {seconds:.0} s: SDK {} at {} ({})",
            found.version,
            found.root.display(),
            found.how
        ),
    }
    Ok(ExitCode::SUCCESS)
}
