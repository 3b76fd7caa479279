//! `verify`: a wheel installed into a fresh Python and checked to import and work; with
//! `--numerics`, compared against PyPI's; with `--transcribe`, real speech transcribed.

use anyhow::Result;

use crate::checks::target::{CheckTarget, TargetQuery};
use crate::checks::verify::{cuda_code, install_and_verify, transcribe_check};
use crate::checks::{interpreter_for, place, require_harness};
use crate::plan_outputs::wheel_to_check;
use crate::speech::{self, SpeechRequest};
use crate::winpython;
use ct2v_support::diagnostic::InputError;
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

/// What `verify` checks besides the install.
pub struct Checks<'a> {
    pub numerics: bool,
    pub transcribe: bool,
    /// The speech options (their download options serve every download of the check).
    pub speech: &'a SpeechRequest,
}

/// `verify` of the wheel `target` names (else the build's).
pub fn run(
    workspace: &Workspace,
    target: TargetQuery,
    checks: &Checks,
    reporter: &Reporter,
) -> Result<()> {
    let request = checks.speech;
    if checks.numerics && request.download.offline {
        return Err(InputError::new(
            "--numerics installs torch, transformers and the official ctranslate2 from PyPI, \
             which --offline refuses",
        )
        .note("drop --numerics to check offline, or --offline to compare numerics")
        .into());
    }
    let CheckTarget { plan, wheel } = target.resolve(workspace, reporter)?;
    let plan = &plan;
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
    let offline = request.download.offline;
    install_and_verify(&interpreter, plan, &wheel, offline, &log, reporter)?;
    reporter.say(format_args!(
        "verified {}{} (log: {})",
        wheel.display(),
        place(&interpreter),
        log.display()
    ));
    if let Some(line) = cuda_code(plan, &wheel)? {
        reporter.say(line);
    }
    if checks.numerics {
        let log = log_dir.join("numerics.log");
        ct2v_support::fsx::write(&log, "")?;
        crate::numerics::check(workspace, plan, &log, reporter)?;
        reporter.say(format_args!(
            "numerics match the official wheel (log: {})",
            log.display()
        ));
    }
    if let Some(prepared) = &prepared {
        transcribe_check(
            workspace,
            &interpreter,
            plan,
            prepared,
            offline,
            &wheel,
            reporter,
        )?;
    }
    Ok(())
}
