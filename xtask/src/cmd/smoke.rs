//! `smoke --frozen`: the clip transcribed by the wheel, then by a PyInstaller app made from
//! the bundle's portable/ folder and run from a fresh copy with a scrubbed environment.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::flags::{CheckSelection, SpeechArgs};
use ct2v_proof::commands::smoke;
use ct2v_support::diagnostic::InputError;
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

#[derive(Args)]
pub struct Smoke {
    #[command(flatten)]
    pub selection: CheckSelection,
    /// Freeze the app with PyInstaller and run the copy (the one smoke test so far)
    #[arg(long)]
    pub frozen: bool,
    /// A folder the frozen app may load libraries from although it is outside the app and
    /// the system's folders (repeatable), e.g. a CUDA toolkit on a machine where cuBLAS is
    /// not bundled; what loaded from there is listed
    #[arg(long, value_name = "DIR")]
    pub allow_outside: Vec<String>,
    #[command(flatten)]
    pub speech: SpeechArgs,
}

impl Smoke {
    pub fn run(self, workspace: &Workspace, reporter: &Reporter) -> Result<ExitCode> {
        if !self.frozen {
            return Err(InputError::new("smoke has one test: --frozen")
                .note("cargo xtask smoke --variant cpu --frozen")
                .into());
        }
        let speech = self.speech.request(reporter);
        smoke::run(
            workspace,
            self.selection.query(),
            &self.allow_outside,
            &speech,
            reporter,
        )?;
        Ok(ExitCode::SUCCESS)
    }
}
