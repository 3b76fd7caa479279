//! `smoke --frozen` of a Windows wheel on a Linux host: in python.org's Windows Python under
//! wine, the clip transcribed by the wheel, then PyInstaller (run under wine) freezes the
//! app from portable/, and a fresh copy runs with a scrubbed environment; wine's loader
//! (`WINEDEBUG=+loaddll`) says which DLL came from where.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use super::smoke::{judge, print_sizes};
use super::verify::speech_request;
use crate::flags::SpeechArgs;
use ct2v_pipeline::plan::Plan;
use ct2v_proof::speech::{self, frozen};
use ct2v_proof::winpython::{Session, check, wine};
use ct2v_support::workspace::Workspace;

pub struct Inputs<'a> {
    pub wheel: &'a Path,
    pub portable: &'a Path,
    pub work: &'a Path,
    pub log: &'a Path,
}

pub fn run(
    workspace: &Workspace,
    plan: &Plan,
    inputs: &Inputs,
    allow_outside: &[String],
    speech_args: &SpeechArgs,
) -> Result<ExitCode> {
    let Inputs {
        wheel,
        portable,
        work,
        log,
    } = *inputs;
    let request = speech_request(speech_args);
    let prepared = speech::prepare(workspace, plan, &request)?;
    let offline = request.download.offline;
    let session = Session::start(
        workspace,
        &plan.python,
        &work.join("wine"),
        &request.download,
    )?;
    let wheelhouse = check::wheelhouse(&session, plan, offline, log)?;
    check::verify(&session, plan, wheel, &wheelhouse, log)?;
    let report = work.join("transcribe.json");
    let by_wheel = check::transcribe(
        workspace,
        &session,
        plan,
        &check::Speech {
            prepared: &prepared,
            wheelhouse: &wheelhouse,
            offline,
            report: &report,
            log,
        },
    )?;
    let wer = speech::verdict(&by_wheel, &prepared)?;
    eprintln!(
        "transcribed with {} in {}: {}",
        wheel.display(),
        session.label(),
        speech::summary(&by_wheel, wer)
    );

    // PyInstaller takes ctranslate2 from portable/ only, as in the venv without it natively.
    let requirements = workspace.root.join(frozen::FREEZE_REQUIREMENTS);
    if !offline {
        ct2v_fetch::wheelhouse::download_listed(
            Path::new(&plan.cache_dir),
            plan.platform,
            &plan.python,
            &requirements,
            log,
        )?;
    }
    let r = requirements.display().to_string();
    session.pip_install(&wheelhouse, &["--no-deps".into(), "-r".into(), r], log)?;
    session.python(
        &["-m", "pip", "uninstall", "--yes", "ctranslate2"].map(String::from),
        log,
        &mut |_| {},
    )?;
    eprintln!(
        "freezing the app with PyInstaller under wine (log: {})",
        log.display()
    );
    let host = frozen::Host {
        wrapper: Some("wine".into()),
        env: session.wine.env().clone(),
    };
    let python = session.python.python_exe().display().to_string();
    let guard = session.wine.watchdog(ct2v_proof::winpython::STEP_LIMIT);
    let app = frozen::freeze(&frozen::FreezeInputs {
        platform: plan.platform,
        root: &workspace.root,
        python: &python,
        host: &host,
        excludes: &["_wmi"],
        portable,
        work,
        log,
    });
    anyhow::ensure!(
        !guard.fired(),
        "PyInstaller did not finish under wine in time (log: {})",
        log.display()
    );
    drop(guard);
    let app = app?;

    eprintln!(
        "running a fresh copy of {} under wine with a scrubbed environment",
        app.display()
    );
    let mut env: BTreeMap<String, String> = session.wine.env().clone();
    env.insert("WINEDEBUG".into(), "+loaddll".into());
    let frozen_host = frozen::Host {
        wrapper: Some("wine".into()),
        env,
    };
    let log_start = std::fs::metadata(log).map_or(0, |m| m.len());
    let run = frozen::run_copy(
        &app,
        &work.join("runs"),
        plan.platform,
        &frozen_host,
        &prepared.job,
        log,
    )?;
    let seen = std::path::PathBuf::from(wine::windows_path(&run.app));
    judge(&run, &seen, &prepared, &by_wheel, allow_outside)?;
    print_loaded(log, log_start, &seen)?;
    print_sizes(&run.app, portable)?;
    Ok(ExitCode::SUCCESS)
}

/// The DLLs wine's loader loaded for the app (from the log, past `from`): the app's own, and
/// how many came from the system.
fn print_loaded(log: &Path, from: u64, app: &Path) -> Result<()> {
    let text = std::fs::read(log)?;
    let text = String::from_utf8_lossy(&text[(from as usize).min(text.len())..]).into_owned();
    let loaded = wine::loaded_dlls(&text);
    let app = app.display().to_string().to_lowercase();
    let (own, system): (Vec<_>, Vec<_>) = loaded
        .iter()
        .partition(|(path, _)| path.to_lowercase().starts_with(&app));
    let (modules, libraries): (Vec<_>, Vec<_>) = own
        .into_iter()
        .partition(|(path, _)| path.to_lowercase().ends_with(".pyd"));
    println!(
        "libraries the app loaded (WINEDEBUG=+loaddll): {} DLLs and {} extension modules from \
         the app, {} from the system",
        libraries.len(),
        modules.len(),
        system.len()
    );
    for (path, kind) in libraries {
        println!("  {kind:<8} {}", path.get(app.len()..).unwrap_or(path));
    }
    let (builtin, native): (Vec<_>, Vec<_>) =
        system.into_iter().partition(|(_, kind)| kind == "builtin");
    println!(
        "  and {} of wine's builtin system DLLs; native from the system:",
        builtin.len()
    );
    for (path, _) in native {
        println!("  native   {path}");
    }
    Ok(())
}
