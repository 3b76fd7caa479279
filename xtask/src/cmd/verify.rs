//! `verify`: install a built wheel into a fresh venv and check that it imports and works;
//! `--transcribe`: and that it transcribes real speech.

use std::process::ExitCode;

use anyhow::Result;

use super::make_plan;
use crate::cli::{Selection, SpeechArgs};
use crate::diagnostic::InputError;
use crate::plan::{self, Plan};
use crate::workspace::Workspace;

pub fn run(
    workspace: &Workspace,
    selection: &Selection,
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
    let plan = make_plan(workspace, selection)?;
    if transcribe {
        crate::speech::check_request(&plan, &speech_request(speech))?;
    }
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
    if transcribe {
        transcribe_in_verify_venv(workspace, &plan, speech)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// What the speech options ask for.
pub fn speech_request(args: &SpeechArgs) -> crate::speech::Request {
    crate::speech::Request {
        model: args.model.clone(),
        audio: args.audio.clone(),
        reference: args.reference.clone(),
        device: args.device.clone(),
        compute_type: args.compute_type.clone(),
        threads: args.threads,
        download: args.download.options(),
    }
}

/// `--transcribe` (also the first half of `smoke --frozen`): faster-whisper into the verify
/// venv, the clip transcribed and judged.
pub fn transcribe_in_verify_venv(
    workspace: &Workspace,
    plan: &Plan,
    speech: &SpeechArgs,
) -> Result<(crate::speech::Prepared, crate::speech::outcome::Outcome)> {
    let request = speech_request(speech);
    let prepared = crate::speech::prepare(workspace, plan, &request)?;
    let log_dir = workspace.log_dir(&plan.slot, plan.platform);
    let log = log_dir.join("transcribe.log");
    std::fs::write(&log, "")?;
    let venv = crate::numerics::verify_venv(plan)?;
    eprintln!(
        "installing faster-whisper into the verify venv (log: {})",
        log.display()
    );
    crate::speech::install(
        workspace,
        plan,
        &venv.python,
        &[crate::speech::TRANSCRIBE_REQUIREMENTS],
        request.download.offline,
        &log,
    )?;
    eprintln!(
        "transcribing {} with {}",
        prepared.job.audio.display(),
        prepared.job.model.display()
    );
    let report = log_dir.join("transcribe.json");
    let outcome = crate::speech::in_venv(&workspace.root, &venv.python, &prepared, &report, &log)?;
    let wer = crate::speech::verdict(&outcome, &prepared)?;
    eprintln!(
        "transcribed with the built wheel: {} (report: {})",
        crate::speech::summary(&outcome, wer),
        report.display()
    );
    Ok((prepared, outcome))
}
