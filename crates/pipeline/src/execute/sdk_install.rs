//! `install-sdk`: a variant's GPU SDK installed unattended from its pinned installer, for a
//! machine nobody sets up by hand (a hosted CI runner). The installer is an input like any
//! other (URL, sha256, size, fetched into the cache and verified), run with the variant's
//! arguments and stopped after its time limit, the way ggml-org/llama.cpp's
//! `.github/actions/install-exe` runs AMD's HIP SDK installer (`-install`, a bounded
//! `WaitForExit`, the exit code checked). Afterwards the SDK must be found exactly as a build
//! finds it, else the install failed.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::plan::Plan;
use crate::sdk::{self, Found};
use ct2v_fetch::cache::Cache;
use ct2v_fetch::download::Options;
use ct2v_support::diagnostic::InputError;
use ct2v_support::platform::Platform;

/// What `install` did.
pub enum Installed {
    /// A fitting SDK was already there; nothing ran.
    Already(Found),
    /// The installer ran and the SDK is now found.
    Now { found: Found, seconds: f64 },
}

/// Installs the SDK `plan` needs (unless one that fits is found and `force` is off).
/// `timeout` overrides the variant's limit; the installer's output goes to `log`.
pub fn install(
    plan: &Plan,
    cache: &Cache,
    options: &Options,
    log: &Path,
    timeout: Option<Duration>,
    force: bool,
) -> Result<Installed> {
    let Some(sdk) = &plan.sdk else {
        return Err(InputError::new(format!(
            "variant `{}` needs no GPU SDK: nothing to install",
            plan.variant
        ))
        .into());
    };
    let (Some(installer), Some(input)) = (&sdk.installer, &plan.sdk_installer) else {
        let hint = sdk.install_hint.as_deref().unwrap_or("install it by hand");
        return Err(InputError::new(format!(
            "variant `{}` has no unattended installer for its SDK on {} ([sdk] installer)",
            plan.variant, plan.platform
        ))
        .note(hint.to_string())
        .into());
    };
    if Platform::host() != Some(plan.platform) {
        return Err(InputError::new(format!(
            "the {} SDK of `{}` installs on a {} machine, not here",
            plan.platform, plan.variant, plan.platform
        ))
        .into());
    }
    if !force && let Ok(found) = sdk::find(sdk, plan.platform, &[], None, &options.reporter) {
        return Ok(Installed::Already(found));
    }
    let file = crate::execute::input_download::fetch_one(cache, &plan.variant, input, options)?;
    let started = Instant::now();
    let program = runnable_copy(&file, &input.file_name, log)?;
    let limit = timeout.unwrap_or(Duration::from_secs(installer.minutes * 60));
    let outcome = run_bounded(&program, &installer.args, log, limit);
    let _ = fs::remove_file(&program);
    outcome?;
    let found = sdk::find(sdk, plan.platform, &[], None, &options.reporter).map_err(|e| {
        anyhow::anyhow!(
            "{} ran and exited 0, but no fitting SDK is found afterwards: {e:#}\n\
             (its output: {})",
            input.file_name,
            log.display()
        )
    })?;
    Ok(Installed::Now {
        found,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The cached installer under its own file name next to the log: the cache keeps files by
/// hash, and Windows runs a file only by an executable name (CreateProcess appends `.exe` to
/// a name without an extension).
fn runnable_copy(cached: &Path, file_name: &str, log: &Path) -> Result<PathBuf> {
    let dir = log.parent().context("the log has no folder")?;
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let program = dir.join(file_name);
    let _ = fs::remove_file(&program);
    if fs::hard_link(cached, &program).is_err() {
        ct2v_support::regular_file::copy(cached, &program).with_context(|| {
            format!("cannot copy {} to {}", cached.display(), program.display())
        })?;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&program, fs::Permissions::from_mode(0o755))
            .with_context(|| format!("cannot make {} executable", program.display()))?;
    }
    Ok(program)
}

/// Runs `program args`, output to `log`, and stops it after `limit`. A line a minute says it
/// is still running (an installer prints nothing for many minutes).
fn run_bounded(program: &Path, args: &[String], log: &Path, limit: Duration) -> Result<()> {
    let out = ct2v_support::regular_file::create(log)
        .with_context(|| format!("cannot write {}", log.display()))?;
    let err = out.try_clone()?;
    eprintln!(
        "running {} {} (up to {} min; output in {})",
        program.display(),
        args.join(" "),
        limit.as_secs().div_ceil(60),
        log.display()
    );
    let mut child = std::process::Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .with_context(|| format!("cannot start {}", program.display()))?;
    let started = Instant::now();
    let mut said = 0;
    loop {
        if let Some(status) = child.try_wait()? {
            if status.success() {
                return Ok(());
            }
            bail!(
                "{} failed ({status}) after {:.0} s; its output: {}",
                program.display(),
                started.elapsed().as_secs_f64(),
                log.display()
            );
        }
        let elapsed = started.elapsed();
        if elapsed >= limit {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "{} did not finish within {} s and was stopped (an installer that waits for \
                 input, or a hung sub-process); its output: {}",
                program.display(),
                limit.as_secs(),
                log.display()
            );
        }
        let minutes = elapsed.as_secs() / 60;
        if minutes > said {
            said = minutes;
            eprintln!("  still installing ({minutes} min)");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// `install-sdk`: the request's GPU SDK installed (or found), said on stdout.
pub fn install_and_say(
    workspace: &ct2v_support::workspace::Workspace,
    request: &crate::plan::request::PlanRequest,
    options: &Options,
    force: bool,
    timeout: Option<Duration>,
) -> Result<std::process::ExitCode> {
    let plan = request.plan(workspace, &options.reporter)?;
    let log = workspace
        .log_dir(&plan.slot, plan.platform)
        .join("install-sdk.log");
    let installed = install(
        &plan,
        &Cache::new(&workspace.cache_dir),
        options,
        &log,
        timeout,
        force,
    )?;
    match installed {
        Installed::Already(found) => ct2v_support::outln!(
            "already installed: SDK {} at {} ({}); nothing ran (--force runs the installer)",
            found.version,
            found.root.display(),
            found.how
        )?,
        Installed::Now { found, seconds } => ct2v_support::outln!(
            "installed in {seconds:.0} s: SDK {} at {} ({})",
            found.version,
            found.root.display(),
            found.how
        )?,
    }
    Ok(std::process::ExitCode::SUCCESS)
}
