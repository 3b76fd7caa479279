//! `install-sdk`: the variant's GPU SDK, installed unattended from its pinned installer.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use clap::Args;

use crate::flags::{DownloadArgs, Selection};
use ct2v_pipeline::commands::install_sdk::InstallSdkRequest;
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

#[derive(Args)]
pub struct InstallSdk {
    #[command(flatten)]
    pub selection: Selection,
    #[command(flatten)]
    pub download: DownloadArgs,
    /// Run the installer even when a fitting SDK is found
    #[arg(long)]
    pub force: bool,
    /// Stop the installer after this many seconds (default: the variant's
    /// `installer-minutes`)
    #[arg(long, value_name = "SECONDS")]
    pub installer_timeout: Option<u64>,
}

impl InstallSdk {
    pub fn run(self, workspace: &Workspace, reporter: &Reporter) -> Result<ExitCode> {
        InstallSdkRequest {
            plan: self.selection.request(),
            download: self.download.options(reporter),
            force: self.force,
            timeout: self.installer_timeout.map(Duration::from_secs),
        }
        .run(workspace, reporter)
    }
}
