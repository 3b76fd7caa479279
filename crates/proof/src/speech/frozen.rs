//! The transcriber frozen by PyInstaller from the bundle's `portable/` folder (`smoke
//! --frozen`), copied to a fresh folder as a user who unzipped it would have it, and run
//! there with a scrubbed environment (see [`super::scrub`]).

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::outcome::Outcome;
use super::scrub::scrubbed;
use super::transcriber::{Job, Launch, SCRIPT};
use crate::interpreter::Interpreter;
use ct2v_support::platform::Platform;
use ct2v_support::process::run_logged;
use ct2v_support::report::Reporter;

pub(crate) const APP_NAME: &str = "ct2-speech-check";
const SPEC_TEMPLATE: &str = include_str!("../../python/speech_check.spec.in");
pub(crate) const FREEZE_REQUIREMENTS: &str = "wheels/freeze.txt";
/// The fresh folders the app is copied into, under `runs/`.
const RUN_PREFIX: &str = "unzipped-";

/// Where the app is made and run.
pub(crate) struct Frozen {
    /// The copy that ran.
    pub app: PathBuf,
    pub outcome: Outcome,
    pub(crate) dropped_env: Vec<String>,
}

/// The `.spec` for `portable` and `script` (Python string literals written as JSON strings,
/// which Python reads the same for any path), leaving out the modules `excludes` names
/// besides onnxruntime.
pub(crate) fn spec_text(portable: &Path, script: &Path, excludes: &[&str]) -> String {
    let literal =
        |p: &Path| serde_json::to_string(&p.display().to_string().replace('\\', "/")).unwrap();
    let excludes: Vec<&str> = std::iter::once("onnxruntime")
        .chain(excludes.iter().copied())
        .collect();
    SPEC_TEMPLATE
        .replace("@PORTABLE@", &literal(portable))
        .replace("@SCRIPT@", &literal(script))
        .replace("@NAME@", &serde_json::to_string(APP_NAME).unwrap())
        .replace("@EXCLUDES@", &serde_json::to_string(&excludes).unwrap())
}

pub struct FreezeParams<'a> {
    pub platform: Platform,
    pub root: &'a Path,
    /// The python with PyInstaller and faster-whisper installed (and no ctranslate2: the app
    /// takes it from `portable`).
    pub python: &'a Interpreter,
    /// Modules PyInstaller leaves out besides onnxruntime.
    pub(crate) excludes: &'a [&'a str],
    pub portable: &'a Path,
    pub work: &'a Path,
    pub log: &'a Path,
}

/// Freezes the transcriber; returns the one-folder app PyInstaller wrote.
pub fn freeze(inputs: &FreezeParams) -> Result<PathBuf> {
    let FreezeParams {
        root,
        python,
        excludes,
        portable,
        work,
        log,
        ..
    } = *inputs;
    if !portable.join("hook-ctranslate2.py").is_file() {
        bail!(
            "{} has no hook-ctranslate2.py: build the variant (its bundle writes portable/)",
            portable.display()
        );
    }
    fs::create_dir_all(work)?;
    let spec = work.join(format!("{APP_NAME}.spec"));
    ct2v_support::fsx::write(&spec, spec_text(portable, &root.join(SCRIPT), excludes))?;
    let dist = work.join("dist");
    let mut args: Vec<String> = [
        "-m",
        "PyInstaller",
        "--noconfirm",
        "--clean",
        "--log-level",
        "WARN",
    ]
    .map(String::from)
    .to_vec();
    args.extend(["--distpath".to_string(), dist.display().to_string()]);
    args.extend([
        "--workpath".to_string(),
        work.join("build").display().to_string(),
    ]);
    args.push(spec.display().to_string());
    let command = python.wrap(&python.python_path(), args);
    run_logged(&command.command(), &command.env, log, &mut |_| {})?;
    let app = dist.join(APP_NAME);
    if !app.join(inputs.platform.exe(APP_NAME)).is_file() {
        bail!(
            "PyInstaller wrote no {} (log: {})",
            app.display(),
            log.display()
        );
    }
    Ok(app)
}

/// Where the app runs: in `interpreter`'s place (natively, or under wine), with `env` added
/// to the place's variables after the scrub.
pub(crate) struct RunPlace<'a> {
    pub(crate) interpreter: &'a Interpreter,
    pub platform: Platform,
    pub env: std::collections::BTreeMap<String, String>,
}

/// Copies `app` into a fresh folder under `runs` and runs it there with a scrubbed
/// environment (its output said through `reporter`).
pub(crate) fn run_copy(
    app: &Path,
    runs: &Path,
    place: &RunPlace,
    job: &Job,
    log: &Path,
    reporter: &Reporter,
) -> Result<Frozen> {
    fs::create_dir_all(runs)?;
    // Earlier copies (a few hundred MiB each) are this command's own: only the last is kept.
    for entry in fs::read_dir(runs)?.flatten() {
        if entry.file_name().to_string_lossy().starts_with(RUN_PREFIX) {
            fs::remove_dir_all(entry.path()).with_context(|| {
                format!("cannot remove the earlier run {}", entry.path().display())
            })?;
        }
    }
    let fresh = tempfile::Builder::new()
        .prefix(RUN_PREFIX)
        .tempdir_in(runs)
        .context("cannot make a fresh folder for the app")?;
    let copy = fresh.path().join(APP_NAME);
    copy_tree(app, &copy)?;
    let exe = copy.join(place.platform.exe(APP_NAME));
    let wrapped = place.interpreter.wrap(&exe, Vec::new());
    let scrub_for = place.interpreter.scrub_platform(place.platform);
    let mut scrub = scrubbed(scrub_for, std::env::vars());
    scrub.env.extend(wrapped.env.clone());
    scrub.env.extend(place.env.clone());
    let launch = Launch {
        program: &wrapped.program,
        leading: wrapped.args.clone(),
        cwd: Some(fresh.path()),
        env: Some(&scrub.env),
    };
    let report = fresh.path().join("report.json");
    let outcome = super::transcriber::run(&launch, job, &report, log, reporter)?;
    Ok(Frozen {
        app: fresh.keep().join(APP_NAME),
        outcome,
        dropped_env: scrub.dropped,
    })
}

/// Copies a PyInstaller one-folder app, keeping its symbolic links as links (PyInstaller 6
/// links shared libraries between folders on Linux), as unzipping it would.
fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from).with_context(|| format!("cannot list {}", from.display()))? {
        let entry = entry?;
        let (path, dest) = (entry.path(), to.join(entry.file_name()));
        let kind = fs::symlink_metadata(&path)?.file_type();
        if kind.is_symlink() {
            copy_link(&path, &dest)?;
        } else if kind.is_dir() {
            copy_tree(&path, &dest)?;
        } else {
            ct2v_support::regular_file::copy(&path, &dest)
                .with_context(|| format!("cannot copy {}", path.display()))?;
        }
    }
    Ok(())
}

#[cfg(unix)]
fn copy_link(path: &Path, dest: &Path) -> Result<()> {
    std::os::unix::fs::symlink(fs::read_link(path)?, dest)
        .with_context(|| format!("cannot link {}", dest.display()))
}

#[cfg(not(unix))]
fn copy_link(path: &Path, dest: &Path) -> Result<()> {
    ct2v_support::regular_file::copy(path, dest)
        .with_context(|| format!("cannot copy {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_names_the_portable_folder_the_script_and_the_hook_folder() {
        let text = spec_text(
            Path::new(r"C:\b\dist\portable"),
            Path::new("/r/crates/proof/python/transcribe.py"),
            &["_wmi"],
        );
        assert!(
            text.contains(r#"PORTABLE = "C:/b/dist/portable""#),
            "{text}"
        );
        assert!(text.contains(r#"["/r/crates/proof/python/transcribe.py"]"#));
        assert!(text.contains(r#"pathex=[PORTABLE + "/_internal"]"#));
        assert!(text.contains("hookspath=[PORTABLE]"));
        assert!(
            text.contains(r#"excludes=["onnxruntime","_wmi"]"#),
            "{text}"
        );
        assert!(!text.contains('@'), "every placeholder is filled: {text}");
    }
}
