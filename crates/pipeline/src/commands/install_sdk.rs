//! `install-sdk`: the variant's GPU SDK, installed unattended from its pinned installer.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;

use crate::execute::sdk_install::{self, Installed};
use crate::plan::request::PlanRequest;
use ct2v_fetch::cache::Cache;
use ct2v_fetch::download::Options;
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

/// An SDK install as `cargo xtask install-sdk` asks for it.
pub struct InstallSdkRequest {
    pub plan: PlanRequest,
    pub download: Options,
    /// Run the installer even when a fitting SDK is found.
    pub force: bool,
    /// The installer's time limit (default: the variant's).
    pub timeout: Option<Duration>,
}

impl InstallSdkRequest {
    /// The request's GPU SDK installed (or found), said on stdout.
    pub fn run(&self, workspace: &Workspace, reporter: &Reporter) -> Result<ExitCode> {
        let plan = self.plan.plan(workspace, reporter)?;
        let log = workspace
            .log_dir(&plan.slot, plan.platform)
            .join("install-sdk.log");
        let installed = sdk_install::install(
            &plan,
            &Cache::new(&workspace.cache_dir),
            &self.download,
            &log,
            self.timeout,
            self.force,
            reporter,
        )?;
        match installed {
            Installed::Already(found) => reporter.outln(format_args!(
                "already installed: SDK {} at {} ({}); nothing ran (--force runs the installer)",
                found.version,
                found.root.display(),
                found.how
            ))?,
            Installed::Now { found, seconds } => reporter.outln(format_args!(
                "installed in {seconds:.0} s: SDK {} at {} ({})",
                found.version,
                found.root.display(),
                found.how
            ))?,
        }
        Ok(ExitCode::SUCCESS)
    }
}
