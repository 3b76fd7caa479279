//! The frozen app's steps (of `smoke --frozen`): a Python to freeze with, the app's run
//! judged against the wheel's transcript, and the app's size. A Windows wheel on a Linux
//! host: all of it in python.org's Windows Python under wine, whose loader
//! (`WINEDEBUG=+loaddll`) says which DLL came from where.

use std::path::Path;

use anyhow::{Context, Result, bail};

use crate::interpreter::Interpreter;
use crate::speech::{self, frozen, outcome};
use ct2v_bundle::bundler::run::BINARIES_JSON;
use ct2v_pipeline::plan::Plan;
use ct2v_support::process::{CommandLine, run_logged};
use ct2v_support::report::Reporter;
use ct2v_support::units::human_size;
use ct2v_support::workspace::Workspace;

/// ` under wine` for a fresh (Windows) interpreter.
pub(crate) fn under(interpreter: &Interpreter) -> &'static str {
    if interpreter.under_wine() {
        " under wine"
    } else {
        ""
    }
}

/// The frozen app's run judged: the same transcript as the wheel's, frozen, and no library
/// from outside the app and the system (`app_seen`: the app's folder as the app sees it).
pub(crate) fn judge(
    run: &frozen::Frozen,
    app_seen: &Path,
    prepared: &speech::Prepared,
    wheel: &outcome::Outcome,
    allow_outside: &[String],
    reporter: &Reporter,
) -> Result<()> {
    let notable: Vec<&str> = run
        .dropped_env
        .iter()
        .map(String::as_str)
        .filter(|v| speech::scrub::points_somewhere(v))
        .collect();
    reporter.say(format_args!(
        "  {} variable(s) left out of its environment{}{}",
        run.dropped_env.len(),
        if notable.is_empty() {
            ""
        } else {
            ", among them "
        },
        notable.join(" ")
    ));
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
        reporter.say(format_args!(
            "  loaded from an allowed folder outside the app: {library}"
        ));
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
    reporter.say(format_args!(
        "the frozen app transcribed like the wheel: {}",
        speech::summary(&run.outcome, wer)
    ));
    Ok(())
}

/// A Python with faster-whisper and PyInstaller and no ctranslate2 (the app takes it from
/// portable/). Natively a venv of its own beside the verify venv (`Some`); a fresh
/// interpreter is changed in place (`None`: use it).
pub(crate) fn freezing_python(
    workspace: &Workspace,
    plan: &Plan,
    interpreter: &Interpreter,
    work: &Path,
    offline: bool,
    log: &Path,
    reporter: &Reporter,
) -> Result<Option<Interpreter>> {
    if !interpreter.under_wine() {
        return freeze_venv(workspace, plan, work, offline, log, reporter).map(Some);
    }
    speech::install(
        workspace,
        plan,
        interpreter,
        &[frozen::FREEZE_REQUIREMENTS],
        offline,
        log,
    )?;
    interpreter.python(
        &["-m", "pip", "uninstall", "--yes", "ctranslate2"].map(String::from),
        log,
        &mut |_| {},
    )?;
    Ok(None)
}

/// A venv of its own for PyInstaller: the verify venv's Python, ctranslate2's own
/// requirements, faster-whisper and PyInstaller.
fn freeze_venv(
    workspace: &Workspace,
    plan: &Plan,
    work: &Path,
    offline: bool,
    log: &Path,
    reporter: &Reporter,
) -> Result<Interpreter> {
    let verify = crate::plan_outputs::verify_job(plan)?;
    let venv = work.join("venv");
    let python = venv
        .join(plan.platform.venv_bin())
        .join(plan.platform.exe("python"));
    reporter.say(format_args!(
        "making the PyInstaller venv {} (log: {})",
        venv.display(),
        log.display()
    ));
    let create = verify.venv_at(&venv.display().to_string());
    run_logged(&create, &Default::default(), log, &mut |_| {})?;
    let wheelhouse =
        ct2v_fetch::wheelhouse::dir(Path::new(&plan.cache_dir), plan.platform, &plan.python);
    let mut runtime = CommandLine::new(python.display().to_string())
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
    let freezer = Interpreter::venv(python, "the PyInstaller venv");
    speech::install(
        workspace,
        plan,
        &freezer,
        &[speech::TRANSCRIBE_REQUIREMENTS, frozen::FREEZE_REQUIREMENTS],
        offline,
        log,
    )?;
    Ok(freezer)
}

/// The app's size, and each library the bundle placed (from portable/binaries.json): the
/// lines of `smoke`'s result.
pub(crate) fn sizes(app: &Path, portable: &Path) -> Result<Vec<String>> {
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
    let mut lines = vec![
        format!("frozen app: {} in {}", human_size(total), app.display()),
        format!(
            "bundled libraries (SDK and runtime parts the bundle added): {} in {} file(s)",
            human_size(bundled),
            parts.len()
        ),
    ];
    lines.extend(
        parts
            .into_iter()
            .map(|(bytes, source)| format!("  {:>10}  {source}", human_size(bytes))),
    );
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sizes_name_the_app_then_each_placed_library_largest_first() {
        let dir = tempfile::tempdir().unwrap();
        let (app, portable) = (dir.path().join("app"), dir.path().join("portable"));
        std::fs::create_dir_all(&app).unwrap();
        std::fs::create_dir_all(portable.join("libs")).unwrap();
        ct2v_support::fsx::write(&app.join("run"), vec![0u8; 3000]).unwrap();
        ct2v_support::fsx::write(&portable.join("libs/small.so"), vec![0u8; 10]).unwrap();
        ct2v_support::fsx::write(&portable.join("libs/large.so"), vec![0u8; 2048]).unwrap();
        ct2v_support::fsx::write(
            &portable.join(BINARIES_JSON),
            r#"[["libs/small.so", "a"], ["libs/large.so", "b"]]"#,
        )
        .unwrap();
        let lines = sizes(&app, &portable).unwrap();
        assert_eq!(lines.len(), 4, "{lines:?}");
        assert_eq!(
            lines[0],
            format!("frozen app: {} in {}", human_size(3000), app.display())
        );
        assert_eq!(
            lines[1],
            format!(
                "bundled libraries (SDK and runtime parts the bundle added): {} in 2 file(s)",
                human_size(2058)
            )
        );
        assert!(lines[2].ends_with("  libs/large.so"), "{lines:?}");
        assert!(lines[3].ends_with("  libs/small.so"), "{lines:?}");
    }
}
