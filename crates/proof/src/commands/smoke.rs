//! `smoke --frozen`: the clip transcribed by the wheel, then by a PyInstaller app made from
//! the bundle's portable/ folder and run from a fresh copy with a scrubbed environment. A
//! Windows wheel on a Linux host: all of it in python.org's Windows Python under wine, whose
//! loader (`WINEDEBUG=+loaddll`) says which DLL came from where.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::checks::smoke::{freezing_python, judge, sizes, under};
use crate::checks::target::{CheckTarget, TargetQuery};
use crate::checks::verify::{install_and_verify, transcribe_check};
use crate::checks::{interpreter_for, require_harness};
use crate::interpreter::Interpreter;
use crate::plan_outputs::{built_portable, built_wheel, built_wheel_path, portable_of_wheel};
use crate::speech::outcome::Outcome;
use crate::speech::{self, Prepared, SpeechRequest, frozen};
use ct2v_pipeline::plan::Plan;
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

/// `smoke --frozen` of the wheel `target` names (else the build's); `allow_outside`: folders
/// outside the app the frozen app may load libraries from.
pub fn run(
    workspace: &Workspace,
    target: TargetQuery,
    allow_outside: &[String],
    request: &SpeechRequest,
    reporter: &Reporter,
) -> Result<()> {
    let CheckTarget { plan, wheel } = target.resolve(workspace, reporter)?;
    let plan = &plan;
    speech::check_request(plan, request)?;
    require_harness(plan)?;
    let offline = request.download.offline;
    let log_dir = workspace.log_dir(&plan.slot, plan.platform);
    std::fs::create_dir_all(&log_dir)?;
    let log = log_dir.join("smoke.log");
    ct2v_support::fsx::write(&log, "")?;
    let work = workspace
        .xtask_dir()
        .join("smoke")
        .join(format!("{}-{}-py{}", plan.slot, plan.platform, plan.python));
    let portable = match &wheel {
        Some(wheel) => portable_of_wheel(plan, wheel, &work, reporter)?,
        None => built_portable(plan)?,
    };
    let prepared = speech::prepare(workspace, plan, request)?;
    let interpreter = interpreter_for(workspace, plan, &work.join("wine"), &request.download)?;
    // The build's verify venv has its wheel; another wheel, or a fresh interpreter, needs
    // the install first.
    let wheel = match wheel {
        None if interpreter.under_wine() => Some(built_wheel(plan)?),
        wheel => wheel,
    };
    if let Some(wheel) = &wheel {
        install_and_verify(
            &interpreter,
            plan,
            wheel,
            offline,
            &log_dir.join("verify.log"),
            reporter,
        )?;
    }
    let wheel = wheel.unwrap_or_else(|| built_wheel_path(plan).into());
    let by_wheel = transcribe_check(
        workspace,
        &interpreter,
        plan,
        &prepared,
        offline,
        &wheel,
        reporter,
    )?;

    let smoke = Smoke {
        workspace,
        plan,
        interpreter,
        work,
        log,
        offline,
        reporter,
    };
    let app = smoke.freeze(&portable)?;
    smoke.run_app(&app, &portable, &prepared, &by_wheel, allow_outside)
}

/// Where one smoke run works, and what every step of its frozen half needs.
struct Smoke<'a> {
    workspace: &'a Workspace,
    plan: &'a Plan,
    interpreter: Interpreter,
    work: PathBuf,
    log: PathBuf,
    offline: bool,
    reporter: &'a Reporter,
}

impl Smoke<'_> {
    /// The app frozen by PyInstaller from `portable` (natively in a venv of its own); its
    /// folder.
    fn freeze(&self, portable: &Path) -> Result<PathBuf> {
        let Smoke {
            workspace,
            plan,
            interpreter,
            work,
            log,
            ..
        } = self;
        let freezer = freezing_python(
            workspace,
            plan,
            interpreter,
            work,
            self.offline,
            log,
            self.reporter,
        )?;
        self.reporter.say(format_args!(
            "freezing the app with PyInstaller{} (log: {})",
            under(interpreter),
            log.display()
        ));
        interpreter.bounded(
            || {
                frozen::freeze(&frozen::FreezeParams {
                    platform: plan.platform,
                    root: &workspace.root,
                    python: freezer.as_ref().unwrap_or(interpreter),
                    excludes: interpreter.freeze_excludes(),
                    portable,
                    work,
                    log,
                })
            },
            |_| {
                format!(
                    "PyInstaller did not finish under wine in time (log: {})",
                    log.display()
                )
            },
        )
    }

    /// A fresh copy of `app` run with a scrubbed environment and judged against the wheel's
    /// transcript; then the result: what it loaded (under wine) and its sizes.
    fn run_app(
        &self,
        app: &Path,
        portable: &Path,
        prepared: &Prepared,
        by_wheel: &Outcome,
        allow_outside: &[String],
    ) -> Result<()> {
        let (interpreter, log, reporter) = (&self.interpreter, &self.log, self.reporter);
        reporter.say(format_args!(
            "running a fresh copy of {}{} with a scrubbed environment",
            app.display(),
            under(interpreter)
        ));
        let log_start = std::fs::metadata(log).map_or(0, |m| m.len());
        let place = frozen::RunPlace {
            interpreter,
            platform: self.plan.platform,
            env: interpreter.loader_trace_env(),
        };
        let runs = self.work.join("runs");
        let run = frozen::run_copy(app, &runs, &place, &prepared.job, log, reporter)?;
        let seen = interpreter.seen_path(&run.app);
        judge(&run, &seen, prepared, by_wheel, allow_outside, reporter)?;
        #[cfg(feature = "wine")]
        if interpreter.under_wine() {
            for line in crate::checks::loaded::loaded(log, log_start, &seen)? {
                reporter.outln(line)?;
            }
        }
        let _ = log_start;
        for line in sizes(&run.app, portable)? {
            reporter.outln(line)?;
        }
        Ok(())
    }
}
