//! A wheel installed into an interpreter as the plan's verify step installs it and checked
//! there, its CUDA code compared with its build's record, and real speech transcribed on it
//! (the steps of `verify`; `smoke` and `verify-release` share the last two).

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::place;
use crate::interpreter::{Interpreter, PackageSource};
use crate::plan_outputs::verify_step;
use crate::speech::{self, Prepared, outcome::Outcome, transcriber};
use ct2v_pipeline::plan::Plan;
use ct2v_support::diagnostic::escaped;
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

/// A CUDA wheel's CTranslate2 library holds exactly the cubins and PTX of the
/// `CUDA_ARCH_LIST` its build recorded (`build-info.json` beside the wheel; the build itself
/// checks the same before writing it). The line that says what it found, `None` for a wheel
/// without CUDA.
pub(crate) fn cuda_code(plan: &Plan, wheel: &Path) -> Result<Option<String>> {
    if plan.cuda_arch.is_none() {
        return Ok(None);
    }
    let info = wheel.with_file_name("build-info.json");
    let recorded = std::fs::read_to_string(&info)
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|v| v["sdk"]["cuda_arch_list"].as_str().map(str::to_string));
    let Some(list) = recorded else {
        return Ok(Some(format!(
            "CUDA code not checked: {} records no CUDA_ARCH_LIST (`cargo xtask build` writes it)",
            escaped(&info.display().to_string())
        )));
    };
    let carried = ct2v_pipeline::sdk::cuda_code::check_wheel(wheel, &list)?;
    Ok(Some(escaped(&carried).into_owned()))
}

/// The plan's verify job run in `interpreter` with `wheel` as its wheel (its output echoed
/// through `reporter`).
pub(crate) fn install_and_verify(
    interpreter: &Interpreter,
    plan: &Plan,
    wheel: &Path,
    offline: bool,
    log: &Path,
    reporter: &Reporter,
) -> Result<()> {
    let (step, job) = verify_step(plan)?;
    let wheelhouse = runtime_wheelhouse(interpreter, plan, offline, log)?;
    let from = PackageSource {
        offline,
        wheelhouse: &wheelhouse,
    };
    interpreter.install_and_check(
        job,
        &wheel.display().to_string(),
        &step.env,
        from,
        log,
        reporter,
    )
}

/// The cache's wheelhouse for the plan's platform and Python; a fresh interpreter's first
/// fills it with the wheel's runtime requirements (pinned as it needs) unless `offline`.
fn runtime_wheelhouse(
    interpreter: &Interpreter,
    plan: &Plan,
    offline: bool,
    log: &Path,
) -> Result<PathBuf> {
    let cache = Path::new(&plan.cache_dir);
    if offline || !interpreter.under_wine() {
        return Ok(ct2v_fetch::wheelhouse::dir(
            cache,
            plan.platform,
            &plan.python,
        ));
    }
    let specs: Vec<String> = ct2v_fetch::wheelhouse::RUNTIME_REQUIREMENTS
        .iter()
        .map(|r| crate::release_install::pin_numpy(r, interpreter.numpy()))
        .collect();
    ct2v_fetch::wheelhouse::download_packages(cache, plan.platform, &plan.python, &specs, log)
}

/// `--transcribe` (also the first half of `smoke --frozen`): faster-whisper installed next to
/// the wheel, the clip transcribed and judged.
pub(crate) fn transcribe_check(
    workspace: &Workspace,
    interpreter: &Interpreter,
    plan: &Plan,
    prepared: &Prepared,
    offline: bool,
    wheel: &Path,
    reporter: &Reporter,
) -> Result<Outcome> {
    let log_dir = workspace.log_dir(&plan.slot, plan.platform);
    let log = log_dir.join("transcribe.log");
    ct2v_support::fsx::write(&log, "")?;
    reporter.say(format_args!(
        "installing faster-whisper into {} (log: {})",
        interpreter.label(),
        log.display()
    ));
    reporter.say(format_args!(
        "transcribing {} with {}{}",
        prepared.job.audio.display(),
        prepared.job.model.display(),
        place(interpreter)
    ));
    let report = log_dir.join("transcribe.json");
    let outcome = transcribe(
        workspace,
        interpreter,
        plan,
        prepared,
        offline,
        Files {
            report: &report,
            log: &log,
        },
        reporter,
    )?;
    let wer = speech::verdict(&outcome, prepared)?;
    let by = if interpreter.under_wine() {
        wheel.display().to_string()
    } else {
        "the built wheel".to_string()
    };
    reporter.say(format_args!(
        "transcribed with {by}{}: {} (report: {})",
        place(interpreter),
        speech::summary(&outcome, wer),
        report.display()
    ));
    Ok(outcome)
}

/// Where a transcription writes: the transcriber's JSON report, and the log of the installs
/// and the run.
#[derive(Clone, Copy)]
pub struct Files<'a> {
    pub report: &'a Path,
    pub log: &'a Path,
}

/// faster-whisper installed into `interpreter` (`--no-deps`, so the wheel's ctranslate2 is
/// the one imported), the clip transcribed there (the transcriber's output said through
/// `reporter`).
pub fn transcribe(
    workspace: &Workspace,
    interpreter: &Interpreter,
    plan: &Plan,
    prepared: &Prepared,
    offline: bool,
    files: Files,
    reporter: &Reporter,
) -> Result<Outcome> {
    let Files { report, log } = files;
    speech::install(
        workspace,
        plan,
        interpreter,
        &[speech::TRANSCRIBE_REQUIREMENTS],
        offline,
        log,
    )?;
    let script = workspace.root.join(transcriber::SCRIPT);
    let wrapped = interpreter.wrap(
        &interpreter.python_path(),
        vec![script.display().to_string()],
    );
    let env = wrapped.full_env();
    let launch = transcriber::Launch {
        program: &wrapped.program,
        leading: wrapped.args.clone(),
        cwd: None,
        env: env.as_ref(),
    };
    interpreter.bounded(
        || transcriber::run(&launch, &prepared.job, report, log, reporter),
        |limit| {
            format!(
                "the transcription did not finish within {} s under wine and was stopped (log: {})",
                limit.as_secs(),
                log.display()
            )
        },
    )
}
