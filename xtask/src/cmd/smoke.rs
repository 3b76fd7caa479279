//! `smoke --frozen`: the clip transcribed by the wheel, then by a PyInstaller app made from
//! the bundle's portable/ folder and run from a fresh copy with a scrubbed environment.

use std::process::ExitCode;

use anyhow::Result;

use super::{CheckTarget, check_target};
use crate::flags::{CheckSelection, SpeechArgs};
use ct2v_support::diagnostic::InputError;
use ct2v_support::workspace::Workspace;

pub fn run(
    workspace: &Workspace,
    selection: &CheckSelection,
    frozen_app: bool,
    allow_outside: &[String],
    speech_args: &SpeechArgs,
) -> Result<ExitCode> {
    if !frozen_app {
        return Err(InputError::new("smoke has one test: --frozen")
            .note("cargo xtask smoke --variant cpu --frozen")
            .into());
    }
    let CheckTarget { plan, wheel } = check_target(workspace, selection)?;
    let request = speech_args.request();
    ct2v_proof::checks::smoke::run(workspace, &plan, wheel, allow_outside, &request)?;
    Ok(ExitCode::SUCCESS)
}
