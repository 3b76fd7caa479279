//! `verify`: a wheel installed into a fresh Python and checked to import and work; with
//! `--numerics`, compared against PyPI's; with `--transcribe`, real speech transcribed.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::{interpreter_for, place, require_harness};
use crate::interpreter::Interpreter;
use crate::plan_outputs::{verify_step, wheel_to_check};
use crate::speech::{self, Prepared, SpeechRequest, outcome::Outcome, transcriber};
use crate::winpython;
use ct2v_pipeline::plan::Plan;
use ct2v_support::diagnostic::{InputError, escaped};
use ct2v_support::workspace::Workspace;

/// What `verify` checks besides the install.
pub struct Checks<'a> {
    pub numerics: bool,
    pub transcribe: bool,
    /// The speech options (their download options serve every download of the check).
    pub speech: &'a SpeechRequest,
}

/// `verify` of `wheel` (else the build's) of `plan`.
pub fn run(
    workspace: &Workspace,
    plan: &Plan,
    wheel: Option<PathBuf>,
    checks: &Checks,
) -> Result<()> {
    let request = checks.speech;
    if checks.transcribe {
        speech::check_request(plan, request)?;
    }
    let wheel = wheel_to_check(plan, wheel)?;
    let log_dir = workspace.log_dir(&plan.slot, plan.platform);
    std::fs::create_dir_all(&log_dir)?;
    let log = log_dir.join("verify.log");
    ct2v_support::fsx::write(&log, "")?;
    if winpython::under_wine(plan.platform) && checks.numerics {
        return Err(InputError::new(
            "--numerics compares against PyTorch, which is not checked under wine",
        )
        .note("run it on Windows, or drop --numerics")
        .into());
    }
    require_harness(plan)?;
    let prepared = checks
        .transcribe
        .then(|| speech::prepare(workspace, plan, request))
        .transpose()?;
    let work = workspace
        .work_dir(&plan.slot, plan.platform)
        .join("wine")
        .join(format!("verify-py{}", plan.python));
    let interpreter = interpreter_for(workspace, plan, &work, &request.download)?;
    install_and_verify(&interpreter, plan, &wheel, request.download.offline, &log)?;
    eprintln!(
        "verified {}{} (log: {})",
        wheel.display(),
        place(&interpreter),
        log.display()
    );
    check_cuda_code(plan, &wheel)?;
    if checks.numerics {
        let log = log_dir.join("numerics.log");
        ct2v_support::fsx::write(&log, "")?;
        crate::numerics::check(workspace, plan, &log)?;
        eprintln!("numerics match the official wheel (log: {})", log.display());
    }
    if let Some(prepared) = &prepared {
        transcribe_check(
            workspace,
            &interpreter,
            plan,
            prepared,
            request.download.offline,
            &wheel,
        )?;
    }
    Ok(())
}

/// A CUDA wheel's CTranslate2 library holds exactly the cubins and PTX of the
/// `CUDA_ARCH_LIST` its build recorded (`build-info.json` beside the wheel; the build itself
/// checks the same before writing it).
fn check_cuda_code(plan: &Plan, wheel: &Path) -> Result<()> {
    if plan.cuda_arch.is_none() {
        return Ok(());
    }
    let info = wheel.with_file_name("build-info.json");
    let recorded = std::fs::read_to_string(&info)
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|v| v["sdk"]["cuda_arch_list"].as_str().map(str::to_string));
    let Some(list) = recorded else {
        eprintln!(
            "CUDA code not checked: {} records no CUDA_ARCH_LIST (`cargo xtask build` writes it)",
            escaped(&info.display().to_string())
        );
        return Ok(());
    };
    let carried = ct2v_pipeline::sdk::cuda_code::check_wheel(wheel, &list)?;
    eprintln!("{}", escaped(&carried));
    Ok(())
}

/// The plan's verify job run in `interpreter` with `wheel` as its wheel.
pub(crate) fn install_and_verify(
    interpreter: &Interpreter,
    plan: &Plan,
    wheel: &Path,
    offline: bool,
    log: &Path,
) -> Result<()> {
    let (step, job) = verify_step(plan)?;
    let wheelhouse = runtime_wheelhouse(interpreter, plan, offline, log)?;
    interpreter.install_and_check(
        job,
        &wheel.display().to_string(),
        offline,
        &step.env,
        &wheelhouse,
        log,
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
) -> Result<Outcome> {
    let log_dir = workspace.log_dir(&plan.slot, plan.platform);
    let log = log_dir.join("transcribe.log");
    ct2v_support::fsx::write(&log, "")?;
    eprintln!(
        "installing faster-whisper into {} (log: {})",
        interpreter.label(),
        log.display()
    );
    eprintln!(
        "transcribing {} with {}{}",
        prepared.job.audio.display(),
        prepared.job.model.display(),
        place(interpreter)
    );
    let report = log_dir.join("transcribe.json");
    let outcome = transcribe(
        workspace,
        interpreter,
        plan,
        prepared,
        offline,
        &report,
        &log,
    )?;
    let wer = speech::verdict(&outcome, prepared)?;
    let by = if interpreter.under_wine() {
        wheel.display().to_string()
    } else {
        "the built wheel".to_string()
    };
    eprintln!(
        "transcribed with {by}{}: {} (report: {})",
        place(interpreter),
        speech::summary(&outcome, wer),
        report.display()
    );
    Ok(outcome)
}

/// faster-whisper installed into `interpreter` (`--no-deps`, so the wheel's ctranslate2 is
/// the one imported), the clip transcribed there.
pub fn transcribe(
    workspace: &Workspace,
    interpreter: &Interpreter,
    plan: &Plan,
    prepared: &Prepared,
    offline: bool,
    report: &Path,
    log: &Path,
) -> Result<Outcome> {
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
        || transcriber::run(&launch, &prepared.job, report, log),
        |limit| {
            format!(
                "the transcription did not finish within {} s under wine and was stopped (log: {})",
                limit.as_secs(),
                log.display()
            )
        },
    )
}
