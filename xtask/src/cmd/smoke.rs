//! `smoke --frozen`: the clip transcribed by the wheel, then by a PyInstaller app made from
//! the bundle's portable/ folder and run from a fresh copy with a scrubbed environment.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};

use super::verify::{speech_request, transcribe_in_verify_venv};
use super::{CheckTarget, check_target};
use crate::flags::{CheckSelection, SpeechArgs};
use ct2v_bundle::bundle::run::{BINARIES_JSON, PORTABLE_DIR};
use ct2v_pipeline::plan::Plan;
use ct2v_proof::speech::{self, frozen, outcome};
use ct2v_support::diagnostic::InputError;
use ct2v_support::process::{Command, run_logged};
use ct2v_support::units::human_size;
use ct2v_support::workspace::Workspace;

pub fn run(
    workspace: &Workspace,
    selection: &CheckSelection,
    frozen_app: bool,
    allow_outside: &[String],
    speech_args: &SpeechArgs,
) -> Result<ExitCode> {
    if !frozen_app {
        return Err(InputError::new("smoke has one test: --frozen")
            .note("cargo xtask smoke --variant cpu --frozen")
            .into());
    }
    let CheckTarget { plan, wheel } = check_target(workspace, selection)?;
    speech::check_request(&plan, &speech_request(speech_args))?;
    let log_dir = workspace.log_dir(&plan.slot, plan.platform);
    std::fs::create_dir_all(&log_dir)?;
    let log = log_dir.join("smoke.log");
    std::fs::write(&log, "")?;
    let work = workspace
        .xtask_dir()
        .join("smoke")
        .join(format!("{}-{}-py{}", plan.slot, plan.platform, plan.python));
    let portable = match &wheel {
        Some(wheel) => portable_of_wheel(&plan, wheel, &work)?,
        None => built_portable(&plan)?,
    };
    if ct2v_proof::winpython::under_wine(plan.platform) {
        let wheel = match wheel {
            Some(w) => w,
            None => built_wheel(&plan)?,
        };
        return super::smoke_wine::run(
            workspace,
            &plan,
            &super::smoke_wine::Inputs {
                wheel: &wheel,
                portable: &portable,
                work: &work,
                log: &log,
            },
            allow_outside,
            speech_args,
        );
    }
    if let Some(wheel) = &wheel {
        super::verify::run_verify_step(&plan, wheel, &log_dir.join("verify.log"))?;
    }
    let (prepared, wheel) = transcribe_in_verify_venv(workspace, &plan, speech_args)?;
    let python = freeze_venv(workspace, &plan, &work, speech_args.download.offline, &log)?;
    eprintln!("freezing the app with PyInstaller (log: {})", log.display());
    let app = frozen::freeze(&frozen::FreezeInputs {
        platform: plan.platform,
        root: &workspace.root,
        python: &python,
        host: &frozen::Host::default(),
        excludes: &[],
        portable: &portable,
        work: &work,
        log: &log,
    })?;
    eprintln!(
        "running a fresh copy of {} with a scrubbed environment",
        app.display()
    );
    let run = frozen::run_copy(
        &app,
        &work.join("runs"),
        plan.platform,
        &frozen::Host::default(),
        &prepared.job,
        &log,
    )?;
    let app_seen = run.app.clone();
    judge(&run, &app_seen, &prepared, &wheel, allow_outside)?;
    print_sizes(&run.app, &portable)?;
    Ok(ExitCode::SUCCESS)
}

/// The frozen app's run judged: the same transcript as the wheel's, frozen, and no library
/// from outside the app and the system (`app_seen`: the app's folder as the app sees it).
pub fn judge(
    run: &frozen::Frozen,
    app_seen: &Path,
    prepared: &speech::Prepared,
    wheel: &outcome::Outcome,
    allow_outside: &[String],
) -> Result<()> {
    let notable: Vec<&str> = run
        .dropped_env
        .iter()
        .map(String::as_str)
        .filter(|v| speech::scrub::points_somewhere(v))
        .collect();
    eprintln!(
        "  {} variable(s) left out of its environment{}{}",
        run.dropped_env.len(),
        if notable.is_empty() {
            ""
        } else {
            ", among them "
        },
        notable.join(" ")
    );
    let wer = speech::verdict(&run.outcome, prepared)?;
    if !run.outcome.frozen {
        bail!(
            "the app that ran is not frozen (sys.frozen unset): {}",
            run.app.display()
        );
    }
    if run.outcome.text != wheel.text {
        bail!(
            "the frozen app heard something else than the wheel:\n  frozen: {}\n  wheel:  {}",
            run.outcome.text,
            wheel.text
        );
    }
    let (allowed, refused): (Vec<&str>, Vec<&str>) =
        outcome::from_elsewhere(&run.outcome, app_seen)
            .into_iter()
            .partition(|l| outcome::is_allowed(l, allow_outside));
    for library in &allowed {
        eprintln!("  loaded from an allowed folder outside the app: {library}");
    }
    if !refused.is_empty() {
        bail!(
            "the frozen app loaded {} librar{} from outside the app and the system's folders; a \
             user's machine would not have them:\n  {}\n(bundle them, or name the folder with \
             --allow-outside where that is the user's own install)",
            refused.len(),
            if refused.len() == 1 { "y" } else { "ies" },
            refused.join("\n  ")
        );
    }
    eprintln!(
        "the frozen app transcribed like the wheel: {}",
        speech::summary(&run.outcome, wer)
    );
    Ok(())
}

/// The wheel the build left.
fn built_wheel(plan: &Plan) -> Result<PathBuf> {
    let wheel = PathBuf::from(&plan.outputs.fat_wheel);
    if !wheel.is_file() {
        bail!(
            "{} is not there: build the variant first with `cargo xtask build --variant {}`, or \
             check a wheel with --wheel FILE",
            wheel.display(),
            plan.variant
        );
    }
    Ok(wheel)
}

/// The build's portable/ folder, which must be there.
fn built_portable(plan: &Plan) -> Result<PathBuf> {
    let portable = portable_dir(plan)?;
    if !portable.join(BINARIES_JSON).is_file() {
        bail!(
            "{} is not there: build the variant first with `cargo xtask build --variant {}`, or \
             check a wheel with --wheel FILE",
            portable.display(),
            plan.variant
        );
    }
    Ok(portable)
}

/// portable/ laid out from a fat wheel, in `work`.
fn portable_of_wheel(plan: &Plan, wheel: &Path, work: &Path) -> Result<PathBuf> {
    portable_dir(plan)?;
    let folders = plan
        .bundle_job()
        .map(|b| b.destinations())
        .unwrap_or_default();
    std::fs::create_dir_all(work)?;
    ct2v_bundle::bundle::run::portable_of_fat_wheel(wheel, &folders, work)?;
    Ok(work.join(PORTABLE_DIR))
}

/// The bundle's portable folder for this build.
fn portable_dir(plan: &Plan) -> Result<PathBuf> {
    match &plan.outputs.portable {
        Some(portable) => Ok(PathBuf::from(portable)),
        None => Err(InputError::new(format!(
            "variant `{}` writes no portable/ folder",
            plan.variant
        ))
        .note("add \"portable\" to [bundle] outputs in its variant file")
        .into()),
    }
}

/// A venv of its own for PyInstaller: the verify venv's Python, ctranslate2's own
/// requirements, faster-whisper and PyInstaller, and no ctranslate2 (the app takes it from
/// portable/).
fn freeze_venv(
    workspace: &Workspace,
    plan: &Plan,
    work: &Path,
    offline: bool,
    log: &Path,
) -> Result<String> {
    let verify = ct2v_proof::numerics::verify_venv(plan)?;
    let venv = work.join("venv");
    let python = venv
        .join(plan.platform.venv_bin())
        .join(plan.platform.exe("python"))
        .display()
        .to_string();
    eprintln!(
        "making the PyInstaller venv {} (log: {})",
        venv.display(),
        log.display()
    );
    let create = Command::new(&verify.launcher[0])
        .args(verify.launcher[1..].iter().cloned())
        .args(["-m", "venv", "--clear"])
        .arg(venv.display().to_string());
    run_logged(&create, &Default::default(), log, &mut |_| {})?;
    let wheelhouse =
        ct2v_fetch::wheelhouse::dir(Path::new(&plan.cache_dir), plan.platform, &plan.python);
    let mut runtime = Command::new(&python)
        .args(["-m", "pip", "install", "--quiet", "--find-links"])
        .arg(wheelhouse.display().to_string());
    if offline {
        runtime = runtime.arg("--no-index");
    }
    run_logged(
        &runtime.args(ct2v_fetch::wheelhouse::RUNTIME_REQUIREMENTS),
        &Default::default(),
        log,
        &mut |_| {},
    )?;
    speech::install(
        workspace,
        plan,
        &python,
        &[speech::TRANSCRIBE_REQUIREMENTS, frozen::FREEZE_REQUIREMENTS],
        offline,
        log,
    )?;
    Ok(python)
}

/// The app's size, and each library the bundle placed (from portable/binaries.json).
pub fn print_sizes(app: &Path, portable: &Path) -> Result<()> {
    // Links (PyInstaller 6 links libraries between folders on Linux) count once, as files.
    let size = |p: &Path| {
        std::fs::symlink_metadata(p)
            .ok()
            .filter(|m| m.is_file())
            .map_or(0, |m| m.len())
    };
    let total: u64 = ct2v_support::fsx::files_below(app)?
        .iter()
        .map(|(_, p)| size(p))
        .sum();
    let text = std::fs::read_to_string(portable.join(BINARIES_JSON))?;
    let placed: Vec<(String, String)> = serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not a list of pairs",
            portable.join(BINARIES_JSON).display()
        )
    })?;
    let mut parts: Vec<(u64, &str)> = placed
        .iter()
        .map(|(source, _)| (size(&portable.join(source)), source.as_str()))
        .collect();
    parts.sort_by_key(|p| std::cmp::Reverse(p.0));
    let bundled: u64 = parts.iter().map(|(s, _)| s).sum();
    println!("frozen app: {} in {}", human_size(total), app.display());
    println!(
        "bundled libraries (SDK and runtime parts the bundle added): {} in {} file(s)",
        human_size(bundled),
        parts.len()
    );
    for (bytes, source) in parts {
        println!("  {:>10}  {source}", human_size(bytes));
    }
    Ok(())
}
