//! `verify`: install a built wheel (or `--wheel FILE`) into a fresh Python and check that it
//! imports and works; `--transcribe`: and that it transcribes real speech. A Windows wheel on
//! a Linux host is checked in python.org's Windows Python under wine.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;

use super::{CheckTarget, check_target};
use crate::flags::{CheckSelection, SpeechArgs};
use ct2v_pipeline::plan::{self, Plan};
use ct2v_proof::winpython::{self, Session, check};
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
    if transcribe {
        ct2v_proof::speech::check_request(&plan, &speech_request(speech))?;
    }
    let wheel = wheel_to_check(&plan, wheel)?;
    let log_dir = workspace.log_dir(&plan.slot, plan.platform);
    std::fs::create_dir_all(&log_dir)?;
    let log = log_dir.join("verify.log");
    std::fs::write(&log, "")?;
    if winpython::under_wine(plan.platform) {
        if numerics {
            return Err(InputError::new(
                "--numerics compares against PyTorch, which is not checked under wine",
            )
            .note("run it on Windows, or drop --numerics")
            .into());
        }
        return verify_under_wine(workspace, &plan, &wheel, transcribe, speech, &log);
    }
    run_verify_step(&plan, &wheel, &log)?;
    eprintln!("verified {} (log: {})", wheel.display(), log.display());
    if numerics {
        let log = log_dir.join("numerics.log");
        std::fs::write(&log, "")?;
        ct2v_proof::numerics::check(workspace, &plan, &log)?;
        eprintln!("numerics match the official wheel (log: {})", log.display());
    }
    if transcribe {
        transcribe_in_verify_venv(workspace, &plan, speech)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The plan's verify step (a fresh venv, the wheel installed, verify_wheel.py) with `wheel`
/// as its wheel.
pub fn run_verify_step(plan: &Plan, wheel: &Path, log: &Path) -> Result<()> {
    let step = verify_step(plan)?;
    let built = step.inputs.first().cloned().unwrap_or_default();
    for command in &step.commands {
        let mut command = command.clone();
        for arg in command.args.iter_mut().filter(|a| **a == built) {
            *arg = wheel.display().to_string();
        }
        ct2v_pipeline::build::exec::run_logged(&command, &step.env, log, &mut |line| {
            if !line.starts_with("Requirement already satisfied") {
                // A closed stdout only loses the echo; the log keeps every line.
                use std::io::Write as _;
                let _ = writeln!(std::io::stdout().lock(), "{line}");
            }
        })?;
    }
    Ok(())
}

fn verify_step(plan: &Plan) -> Result<&plan::Step> {
    Ok(plan
        .step(|a| matches!(a, plan::Action::Verify))
        .expect("every plan has a verify step"))
}

/// `--wheel`, else the wheel the build left (which must be there).
fn wheel_to_check(plan: &Plan, given: Option<PathBuf>) -> Result<PathBuf> {
    if let Some(wheel) = given {
        return Ok(ct2v_support::paths::canonical(&wheel)?);
    }
    let built = plan.outputs.fat_wheel.clone();
    if !Path::new(&built).is_file() {
        anyhow::bail!(
            "{built} is not there: build it first with `cargo xtask build --variant {} --platform \
             {} --python {}`, or check another wheel with --wheel FILE",
            plan.variant,
            plan.platform,
            plan.python
        );
    }
    Ok(PathBuf::from(built))
}

/// The whole check in a Windows Python under wine.
fn verify_under_wine(
    workspace: &Workspace,
    plan: &Plan,
    wheel: &Path,
    transcribe: bool,
    speech: &SpeechArgs,
    log: &Path,
) -> Result<ExitCode> {
    let request = speech_request(speech);
    let prepared = transcribe
        .then(|| ct2v_proof::speech::prepare(workspace, plan, &request))
        .transpose()?;
    let work = workspace
        .work_dir(&plan.slot, plan.platform)
        .join("wine")
        .join(format!("verify-py{}", plan.python));
    let session = Session::start(workspace, &plan.python, &work, &request.download)?;
    let wheelhouse = check::wheelhouse(&session, plan, request.download.offline, log)?;
    check::verify(&session, plan, wheel, &wheelhouse, log)?;
    eprintln!(
        "verified {} in {} (log: {})",
        wheel.display(),
        session.label(),
        log.display()
    );
    let Some(prepared) = prepared else {
        return Ok(ExitCode::SUCCESS);
    };
    let log_dir = workspace.log_dir(&plan.slot, plan.platform);
    let speech_log = log_dir.join("transcribe.log");
    std::fs::write(&speech_log, "")?;
    let report = log_dir.join("transcribe.json");
    eprintln!(
        "transcribing {} with {} in {}",
        prepared.job.audio.display(),
        prepared.job.model.display(),
        session.label()
    );
    let outcome = check::transcribe(
        workspace,
        &session,
        plan,
        &check::Speech {
            prepared: &prepared,
            wheelhouse: &wheelhouse,
            offline: request.download.offline,
            report: &report,
            log: &speech_log,
        },
    )?;
    let wer = ct2v_proof::speech::verdict(&outcome, &prepared)?;
    eprintln!(
        "transcribed with {} in {}: {} (report: {})",
        wheel.display(),
        session.label(),
        ct2v_proof::speech::summary(&outcome, wer),
        report.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// What the speech options ask for.
pub fn speech_request(args: &SpeechArgs) -> ct2v_proof::speech::SpeechRequest {
    ct2v_proof::speech::SpeechRequest {
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
) -> Result<(
    ct2v_proof::speech::Prepared,
    ct2v_proof::speech::outcome::Outcome,
)> {
    let request = speech_request(speech);
    let prepared = ct2v_proof::speech::prepare(workspace, plan, &request)?;
    let log_dir = workspace.log_dir(&plan.slot, plan.platform);
    let log = log_dir.join("transcribe.log");
    std::fs::write(&log, "")?;
    let venv = ct2v_proof::numerics::verify_venv(plan)?;
    eprintln!(
        "installing faster-whisper into the verify venv (log: {})",
        log.display()
    );
    ct2v_proof::speech::install(
        workspace,
        plan,
        &venv.python,
        &[ct2v_proof::speech::TRANSCRIBE_REQUIREMENTS],
        request.download.offline,
        &log,
    )?;
    eprintln!(
        "transcribing {} with {}",
        prepared.job.audio.display(),
        prepared.job.model.display()
    );
    let report = log_dir.join("transcribe.json");
    let outcome =
        ct2v_proof::speech::in_venv(&workspace.root, &venv.python, &prepared, &report, &log)?;
    let wer = ct2v_proof::speech::verdict(&outcome, &prepared)?;
    eprintln!(
        "transcribed with the built wheel: {} (report: {})",
        ct2v_proof::speech::summary(&outcome, wer),
        report.display()
    );
    Ok((prepared, outcome))
}
