//! `verify`: install a built wheel (or `--wheel FILE`) into a fresh Python and check that it
//! imports and works; `--transcribe`: and that it transcribes real speech. A Windows wheel on
//! a Linux host is checked in python.org's Windows Python under wine.

use std::process::ExitCode;

use anyhow::Result;

use super::{CheckTarget, check_target};
use crate::flags::{CheckSelection, SpeechArgs};
use ct2v_proof::checks::verify::{self, Checks};
use ct2v_support::diagnostic::InputError;
use ct2v_support::workspace::Workspace;

pub fn run(
    workspace: &Workspace,
    selection: &CheckSelection,
    numerics: bool,
    transcribe: bool,
    speech: &SpeechArgs,
) -> Result<ExitCode> {
    if !transcribe && let Some(option) = speech.given() {
        return Err(
            InputError::new(format!("{option} is an option of --transcribe"))
                .note("add --transcribe to check speech")
                .into(),
        );
    }
    let CheckTarget { plan, wheel } = check_target(workspace, selection)?;
    let checks = Checks {
        numerics,
        transcribe,
        speech: &speech.request(),
    };
    verify::run(workspace, &plan, wheel, &checks)?;
    Ok(ExitCode::SUCCESS)
}
