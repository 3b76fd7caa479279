//! `verify-release`: check a release folder's checksums, RECORDs and manifest; `--install`:
//! install it as its users do, from its index served on loopback.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::flags::InstallArgs;
use ct2v_proof::commands::verify_release;
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

#[derive(Args)]
pub struct VerifyRelease {
    /// The release folder
    pub dir: PathBuf,
    #[command(flatten)]
    pub install: InstallArgs,
}

impl VerifyRelease {
    pub fn run(self, workspace: &Workspace, reporter: &Reporter) -> Result<ExitCode> {
        verify_release::run(
            workspace,
            &self.dir,
            &self.install.options(reporter),
            reporter,
        )
    }
}
