//! A PyApp exe as the consumer ships theirs (GitHub PinW/whisper-key-local: one PyApp exe
//! with Python 3.12, GPU support pip-installed into its own environment at run time), built
//! here for `x86_64-pc-windows-gnu` with mingw from PyApp's pinned crate: the embeddable
//! Windows Python (pip inside) as its distribution, and a small app wheel that requires
//! PyPI's ctranslate2 and transcribes with whichever ctranslate2 is installed.
//!
//! PyApp's build options are environment variables read by its build.rs (ofek/pyapp
//! `build.rs`, docs/config): `PYAPP_PROJECT_PATH` (the app wheel, embedded),
//! `PYAPP_DISTRIBUTION_PATH` (the Python zip, embedded) with `…_PYTHON_PATH` and
//! `…_SITE_PACKAGES_PATH`, `PYAPP_DISTRIBUTION_PIP_AVAILABLE`, `PYAPP_FULL_ISOLATION` (the
//! embeddable Python has no `venv` module, so the default virtual environment cannot be
//! made), `PYAPP_EXEC_MODULE`, and `PYAPP_PIP_EXTRA_ARGS` (split on spaces by PyApp: no
//! path with a space). Its build script does not rerun when they change, so build.rs is
//! touched before each build.

pub mod check;

use std::collections::BTreeMap;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::winpython::WindowsPython;
use crate::winpython::pins::PythonPins;
use ct2v_fetch::unpack;
use ct2v_support::diagnostic::InputError;
use ct2v_support::process::{CommandLine, run_logged};
use ct2v_support::workspace::Workspace;

/// The app's module (what PyApp runs: `python -m ct2_speech_app`).
pub(crate) const APP_MODULE: &str = "ct2_speech_app";

/// What the exe is made of.
pub struct ExeParts<'a> {
    pub python: &'a WindowsPython,
    /// The ctranslate2 the app requires, as PyPI has it (`4.7.1`).
    pub ctranslate2: &'a str,
    /// PyApp's pip arguments for its first install (where the wheels are).
    pub(crate) pip_extra_args: &'a [String],
    pub work: &'a Path,
    pub log: &'a Path,
}

/// Builds the exe; returns its path.
pub fn build(
    workspace: &Workspace,
    inputs: &ExeParts,
    options: &ct2v_fetch::download::Options,
) -> Result<PathBuf> {
    for arg in inputs.pip_extra_args {
        if arg.contains(' ') {
            return Err(InputError::new(format!(
                "PyApp splits PYAPP_PIP_EXTRA_ARGS on spaces, so `{arg}` would break: use a \
                 checkout and cache path without spaces"
            ))
            .into());
        }
    }
    let spec = PythonPins::load(&workspace.root)?;
    let cache = ct2v_fetch::cache::Cache::new(&workspace.cache_dir);
    let request = spec.request("pyapp");
    let fetched = ct2v_fetch::download::fetch_all(&cache, std::slice::from_ref(&request), options)
        .map_err(|e| anyhow::anyhow!("{}", ct2v_fetch::download::describe(&e)))?;
    let crate_file = &fetched[0].path;
    let source_parent = inputs.work.join("pyapp-src");
    if source_parent.exists() {
        fs::remove_dir_all(&source_parent)?;
    }
    unpack::unpack_input(
        &unpack::CachedInput {
            name: &request.name,
            archive: crate_file,
            file_name: &request.pin.file_name,
            url: &request.pin.url,
        },
        None,
        &source_parent,
        unpack::Kept::Unrecorded,
        &options.reporter,
    )?;
    let source = only_folder(&source_parent)?;
    let dist = inputs.work.join("python-dist.zip");
    zip_folder(&inputs.python.dir, &dist)?;
    let app_wheel = app_wheel(workspace, inputs.ctranslate2, inputs.work)?;

    let mut env: BTreeMap<String, String> = BTreeMap::new();
    let set = |env: &mut BTreeMap<String, String>, k: &str, v: String| {
        env.insert(k.to_string(), v);
    };
    set(
        &mut env,
        "PYAPP_PROJECT_PATH",
        app_wheel.display().to_string(),
    );
    set(
        &mut env,
        "PYAPP_DISTRIBUTION_PATH",
        dist.display().to_string(),
    );
    set(
        &mut env,
        "PYAPP_DISTRIBUTION_PYTHON_PATH",
        "python.exe".into(),
    );
    set(
        &mut env,
        "PYAPP_DISTRIBUTION_SITE_PACKAGES_PATH",
        "Lib\\site-packages".into(),
    );
    set(&mut env, "PYAPP_DISTRIBUTION_PIP_AVAILABLE", "1".into());
    set(&mut env, "PYAPP_FULL_ISOLATION", "1".into());
    set(&mut env, "PYAPP_EXEC_MODULE", APP_MODULE.into());
    set(
        &mut env,
        "PYAPP_PIP_EXTRA_ARGS",
        inputs.pip_extra_args.join(" "),
    );
    set(
        &mut env,
        "CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER",
        "x86_64-w64-mingw32-gcc".into(),
    );
    // Its own workspace: the unpacked crate may lie below this checkout's (target/).
    let manifest = source.join("Cargo.toml");
    let mut text = fs::read_to_string(&manifest)?;
    if !text.contains("\n[workspace]") {
        text.push_str("\n[workspace]\n");
        ct2v_support::fsx::write(&manifest, text)?;
    }
    // PyApp reads these at build time only: a fresh build.rs makes cargo run it again.
    let build_rs = source.join("build.rs");
    let text = fs::read(&build_rs)?;
    ct2v_support::fsx::write(&build_rs, text)?;
    let target_dir = inputs.work.join("pyapp-target");
    let command = CommandLine::new("cargo")
        .args([
            "build",
            "--locked",
            "--target",
            "x86_64-pc-windows-gnu",
            "--manifest-path",
        ])
        .arg(source.join("Cargo.toml").display().to_string())
        .arg("--target-dir")
        .arg(target_dir.display().to_string());
    options.reporter.say(format_args!(
        "building the PyApp exe ({}; log: {})",
        spec.inputs["pyapp"].package,
        inputs.log.display()
    ));
    run_logged(&command, &env, inputs.log, &mut |_| {})
        .context("building PyApp for x86_64-pc-windows-gnu (rustup target add x86_64-pc-windows-gnu; mingw-w64)")?;
    let built = target_dir.join("x86_64-pc-windows-gnu/debug/pyapp.exe");
    let exe = inputs.work.join("ct2-speech-app.exe");
    ct2v_support::regular_file::copy(&built, &exe)
        .with_context(|| format!("PyApp wrote no {}", built.display()))?;
    Ok(exe)
}

fn only_folder(dir: &Path) -> Result<PathBuf> {
    let mut folders = fs::read_dir(dir)?
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path());
    match (folders.next(), folders.next()) {
        (Some(one), None) => Ok(one),
        _ => bail!("{} does not hold one folder", dir.display()),
    }
}

/// The interpreter folder as PyApp's distribution: a zip with python.exe at its root.
fn zip_folder(dir: &Path, out: &Path) -> Result<()> {
    let file = ct2v_support::regular_file::create(out)
        .with_context(|| format!("cannot write {}", out.display()))?;
    let mut zip = zip::ZipWriter::new(file);
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (relative, path) in ct2v_support::fsx::files_below(dir)? {
        zip.start_file(relative, options)?;
        zip.write_all(&fs::read(&path)?)?;
    }
    zip.finish()?;
    Ok(())
}

/// The app: `python -m ct2_speech_app` prints the installed ctranslate2's version, and with
/// arguments transcribes with them (crates/proof/python/transcribe.py, shipped inside; faster-whisper
/// is installed into the app's environment with `self pip`, as the consumer adds GPU support).
fn app_wheel(workspace: &Workspace, ctranslate2: &str, work: &Path) -> Result<PathBuf> {
    let tree = work.join("app-wheel");
    if tree.exists() {
        fs::remove_dir_all(&tree)?;
    }
    let package = tree.join(APP_MODULE);
    fs::create_dir_all(&package)?;
    ct2v_support::fsx::write(&package.join("__init__.py"), "")?;
    ct2v_support::regular_file::copy(
        workspace.root.join(crate::speech::transcriber::SCRIPT),
        package.join("transcribe.py"),
    )?;
    ct2v_support::fsx::write(
        &package.join("__main__.py"),
        "import importlib.metadata\nimport runpy\nimport sys\n\n\
         import ctranslate2\n\n\
         print(\"installed\", importlib.metadata.version(\"ctranslate2\"), ctranslate2.__version__, flush=True)\n\
         if len(sys.argv) > 1:\n    \
         runpy.run_module(\"ct2_speech_app.transcribe\", run_name=\"__main__\")\n",
    )?;
    let info = tree.join("ct2_speech_app-1.0.dist-info");
    fs::create_dir_all(&info)?;
    ct2v_support::fsx::write(
        &info.join("METADATA"),
        format!(
            "Metadata-Version: 2.1\nName: ct2-speech-app\nVersion: 1.0\n\
             Requires-Dist: ctranslate2=={ctranslate2}\n"
        ),
    )?;
    ct2v_support::fsx::write(
        &info.join("WHEEL"),
        "Wheel-Version: 1.0\nGenerator: ct2-variants\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    )?;
    let wheel = work.join("ct2_speech_app-1.0-py3-none-any.whl");
    ct2v_bundle::wheel::write(&tree, &wheel)?;
    Ok(wheel)
}
