//! The checks of `verify` in a Windows Python under wine: the plan's own verify step (its pip
//! installs and `verify_wheel.py`, the same arguments as on Windows), then optionally the
//! speech check with faster-whisper, in one session.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::{STEP_LIMIT, Session};
use crate::speech::transcriber::{self, Launch};
use crate::speech::{Prepared, TRANSCRIBE_REQUIREMENTS, outcome::Outcome};
use ct2v_pipeline::plan::{Action, Plan};
use ct2v_support::workspace::Workspace;

/// The wheels this session installs from (the cache's wheelhouse for Windows and this
/// Python, filled from PyPI first unless `offline`).
pub fn wheelhouse(session: &Session, plan: &Plan, offline: bool, log: &Path) -> Result<PathBuf> {
    let cache = Path::new(&plan.cache_dir);
    let specs: Vec<String> = ct2v_fetch::wheelhouse::RUNTIME_REQUIREMENTS
        .iter()
        .map(|r| session.pinned(r))
        .collect();
    if offline {
        return Ok(ct2v_fetch::wheelhouse::dir(
            cache,
            plan.platform,
            &plan.python,
        ));
    }
    ct2v_fetch::wheelhouse::download_packages(cache, plan.platform, &plan.python, &specs, log)
}

/// The plan's verify step with `wheel` as its wheel: every command after the venv's creation,
/// pip's from the wheelhouse alone.
pub fn verify(
    session: &Session,
    plan: &Plan,
    wheel: &Path,
    wheelhouse: &Path,
    log: &Path,
) -> Result<()> {
    let step = plan
        .step(|a| matches!(a, Action::Verify))
        .context("the plan has no verify step")?;
    let built = step.inputs.first().map(String::as_str).unwrap_or_default();
    let wheel = wheel.display().to_string();
    for command in step.commands.iter().skip(1) {
        let args: Vec<String> = command
            .args
            .iter()
            .map(|a| if a == built { wheel.clone() } else { a.clone() })
            .collect();
        if args.starts_with(&["-m".into(), "pip".into(), "install".into()]) {
            let mut rest = Vec::new();
            let mut skip_next = false;
            for arg in &args[3..] {
                if skip_next {
                    skip_next = false;
                } else if arg == "--find-links" {
                    skip_next = true;
                } else {
                    rest.push(arg.clone());
                }
            }
            session.pip_install(wheelhouse, &rest, log)?;
        } else {
            let ran = session.python(&args, log, &mut |line| {
                // A closed stdout only loses the echo; the log keeps every line.
                use std::io::Write as _;
                let _ = writeln!(std::io::stdout().lock(), "{line}");
            });
            if let Err(e) = ran {
                return Err(
                    match super::diagnose::missing_dlls(&session.python.site_packages()) {
                        Some(missing) => e.context(format!(
                            "the installed wheel needs DLLs that the Windows loader finds nowhere \
                         (not in the folders ctranslate2/__init__.py adds, nor Windows' own): \
                         {missing}"
                        )),
                        None => e,
                    },
                );
            }
        }
    }
    Ok(())
}

/// What one transcription under wine needs.
pub struct Speech<'a> {
    pub prepared: &'a Prepared,
    pub wheelhouse: &'a Path,
    pub offline: bool,
    pub report: &'a Path,
    pub log: &'a Path,
}

/// faster-whisper installed into the session (`--no-deps`, as on every platform), the clip
/// transcribed by it under wine.
pub fn transcribe(
    workspace: &Workspace,
    session: &Session,
    plan: &Plan,
    speech: &Speech,
) -> Result<Outcome> {
    let Speech {
        prepared,
        wheelhouse,
        offline,
        report,
        log,
    } = *speech;
    let requirements = workspace.root.join(TRANSCRIBE_REQUIREMENTS);
    if !offline {
        ct2v_fetch::wheelhouse::download_listed(
            Path::new(&plan.cache_dir),
            plan.platform,
            &plan.python,
            &requirements,
            log,
        )?;
    }
    session.pip_install(
        wheelhouse,
        &[
            "--no-deps".into(),
            "-r".into(),
            requirements.display().to_string(),
        ],
        log,
    )?;
    let env = session.env();
    let launch = Launch {
        program: Path::new("wine"),
        leading: vec![
            session.python.python_exe().display().to_string(),
            workspace
                .root
                .join(transcriber::SCRIPT)
                .display()
                .to_string(),
        ],
        cwd: None,
        env: Some(&env),
    };
    let guard = session.wine.watchdog(STEP_LIMIT);
    let outcome = transcriber::run(&launch, &prepared.job, report, log);
    if guard.fired() {
        anyhow::bail!(
            "the transcription did not finish within {} s under wine and was stopped (log: {})",
            STEP_LIMIT.as_secs(),
            log.display()
        );
    }
    outcome
}
