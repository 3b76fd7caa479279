//! `verify`: install a built wheel (or `--wheel FILE`) into a fresh Python and check that it
//! imports and works; `--transcribe`: and that it transcribes real speech. A Windows wheel on
//! a Linux host is checked in python.org's Windows Python under wine.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::flags::{CheckSelection, SpeechArgs};
use ct2v_proof::commands::verify::{self, Checks};
use ct2v_support::diagnostic::InputError;
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

#[derive(Args)]
pub struct Verify {
    #[command(flatten)]
    pub selection: CheckSelection,
    /// Also compare a tiny random Whisper model's encoder output with the official wheel's
    /// (needs network for torch, transformers and the official ctranslate2 from PyPI)
    #[arg(long)]
    pub numerics: bool,
    /// Also transcribe real speech with faster-whisper on the built wheel
    #[arg(long)]
    pub transcribe: bool,
    #[command(flatten)]
    pub speech: SpeechArgs,
}

impl Verify {
    pub fn run(self, workspace: &Workspace, reporter: &Reporter) -> Result<ExitCode> {
        if !self.transcribe
            && let Some(option) = self.speech.given()
        {
            return Err(
                InputError::new(format!("{option} is an option of --transcribe"))
                    .note("add --transcribe to check speech")
                    .into(),
            );
        }
        let checks = Checks {
            numerics: self.numerics,
            transcribe: self.transcribe,
            speech: &self.speech.request(reporter),
        };
        verify::run(workspace, self.selection.query(), &checks, reporter)?;
        Ok(ExitCode::SUCCESS)
    }
}
