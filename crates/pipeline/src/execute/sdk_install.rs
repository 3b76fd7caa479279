//! A variant's GPU SDK installed unattended from its pinned installer, for a machine nobody
//! sets up by hand (a hosted CI runner). The installer is an input like any
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

use crate::execute::input_download;
use crate::plan::Plan;
use crate::sdk::{self, Found};
use ct2v_fetch::cache::Cache;
use ct2v_fetch::download::Options;
use ct2v_support::diagnostic::InputError;
use ct2v_support::platform::Platform;
use ct2v_support::report::Reporter;

/// What `install` did.
pub enum Installed {
    /// A fitting SDK was already there; nothing ran.
    Already(Found),
    /// The installer ran and the SDK is now found.
    Now { found: Found, seconds: f64 },
}

/// Installs the SDK `plan` needs (unless one that fits is found and `force` is off).
/// `timeout` overrides the variant's limit; the installer's output goes to `log`, and what
/// is under way is said through `reporter`.
pub fn install(
    plan: &Plan,
    cache: &Cache,
    options: &Options,
    log: &Path,
    timeout: Option<Duration>,
    force: bool,
    reporter: &Reporter,
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
    let fetched = input_download::fetch_one(cache, &plan.variant, input, options)?;
    reporter.say(input_download::fetched_line(&fetched));
    let started = Instant::now();
    let program = runnable_copy(&fetched.path, &input.file_name, log)?;
    let limit = timeout.unwrap_or(Duration::from_secs(installer.minutes * 60));
    let outcome = run_bounded(&program, &installer.args, log, limit, reporter);
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
fn run_bounded(
    program: &Path,
    args: &[String],
    log: &Path,
    limit: Duration,
    reporter: &Reporter,
) -> Result<()> {
    let out = ct2v_support::regular_file::create(log)
        .with_context(|| format!("cannot write {}", log.display()))?;
    let err = out.try_clone()?;
    reporter.say(format_args!(
        "running {} {} (up to {} min; output in {})",
        program.display(),
        args.join(" "),
        limit.as_secs().div_ceil(60),
        log.display()
    ));
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
            reporter.say(format_args!("  still installing ({minutes} min)"));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_bounded_install_says_what_it_runs_and_where_its_output_goes() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("install-sdk.log");
        let reporter = Reporter::captured();
        let args = ["-c".to_string(), "echo installed".to_string()];
        run_bounded(
            Path::new("/bin/sh"),
            &args,
            &log,
            Duration::from_secs(90),
            &reporter,
        )
        .unwrap();
        let said = reporter.said();
        assert_eq!(said.out, "");
        assert_eq!(
            said.err,
            format!(
                "running /bin/sh -c echo installed (up to 2 min; output in {})\n",
                log.display()
            )
        );
        assert_eq!(fs::read_to_string(&log).unwrap(), "installed\n");
    }
}
