//! A release's wheels installed as its users install them, from its index served on
//! loopback, each checked to report its version and (when asked) to transcribe (the steps of
//! `verify-release --install`).

use std::path::Path;

use anyhow::Result;

use super::verify::{Files, transcribe};
use crate::interpreter::Interpreter;
use crate::release_install::{self as install, Install, InstallRequest, InstallTarget};
use crate::speech::{self, Prepared};
use crate::winpython;
use ct2v_pipeline::plan::Plan;
use ct2v_pipeline::release::Manifest;
use ct2v_support::diagnostic::{InputError, escaped};
use ct2v_support::platform::Platform;
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

/// The plan of a variant's build at a CTranslate2 version for a platform and Python (its
/// cache and Python, for the speech check).
pub(crate) type PlanFor<'a> = &'a dyn Fn(&str, Platform, &str, &str) -> Result<Plan>;

/// Each wheel of the release `request` names installed as its users install it, from the
/// release's index served on loopback (and through a PyApp exe with `pyapp`); progress said
/// through `reporter`.
pub(crate) fn install(
    workspace: &Workspace,
    request: &InstallRequest,
    manifest: &Manifest,
    pyapp: bool,
    plan_for: PlanFor,
    reporter: &Reporter,
) -> Result<()> {
    let dir = request.dir;
    let platform = request.platform;
    for folder in request.find_links {
        if !folder.is_dir() {
            return Err(InputError::new(format!(
                "--find-links {}: no such folder",
                folder.display()
            ))
            .into());
        }
    }
    let targets = install::targets(request, manifest)?;
    for target in &targets {
        install::check_index_is_local(dir, &target.variant)?;
    }
    let under_wine = winpython::under_wine(platform);
    if pyapp && !under_wine {
        return Err(InputError::new(
            "--pyapp builds a Windows PyApp exe and runs it under wine: give Windows wheels \
             (--platform windows-x86_64) on a Linux host",
        )
        .into());
    }
    if under_wine && !winpython::HARNESS {
        return Err(winpython::harness_missing(WINDOWS_INSTALL).into());
    }
    let server = install::serve(dir)?;
    reporter.say(format_args!(
        "serving {} at {}",
        dir.display(),
        server.url("/")
    ));
    let work = workspace
        .xtask_dir()
        .join("release-install")
        .join(format!("{platform}-py{}", request.python));
    std::fs::create_dir_all(&work)?;
    let log = work.join("install.log");
    ct2v_support::fsx::write(&log, "")?;
    let installs = Installs {
        workspace,
        request,
        targets: &targets,
        server: &server,
        work: &work,
        log: &log,
        plan_for,
        reporter,
    };
    installs.run()?;
    #[cfg(feature = "wine")]
    if pyapp {
        crate::pyapp::check::run(workspace, request, &targets, &server, &work, reporter)?;
    }
    Ok(())
}

/// The check that needs the wine harness, as its error names it.
const WINDOWS_INSTALL: &str = "--install of Windows wheels on a Linux host";

/// Every target installed and checked, in one Windows Python under wine, or natively each in
/// a venv of its own.
struct Installs<'a> {
    workspace: &'a Workspace,
    request: &'a InstallRequest<'a>,
    targets: &'a [InstallTarget],
    server: &'a crate::serve::Server,
    work: &'a Path,
    log: &'a Path,
    plan_for: PlanFor<'a>,
    reporter: &'a Reporter,
}

impl Installs<'_> {
    fn run(&self) -> Result<()> {
        let request = self.request;
        let shared = if winpython::under_wine(request.platform) {
            Some(Interpreter::wine(
                self.workspace,
                &request.python,
                &self.work.join("wine"),
                &request.download,
                WINDOWS_INSTALL,
            )?)
        } else {
            None
        };
        let numpy = shared.as_ref().and_then(Interpreter::numpy);
        let wheelhouse =
            install::wheelhouse(self.workspace, request, self.targets, numpy, self.log)?;
        let prepared = self.speech_assets()?;
        for target in self.targets {
            let own;
            let interpreter = match &shared {
                Some(shared) => shared,
                None => {
                    let venv = self.work.join(format!("venv-{}", target.variant));
                    let python =
                        install::native_venv(&request.python, &venv, self.log, self.reporter)?;
                    let label = format!("python {} ({})", request.python, venv.display());
                    own = Interpreter::venv(python, label);
                    &own
                }
            };
            let mut find_links = vec![wheelhouse.clone()];
            find_links.extend(request.find_links.iter().cloned());
            let install = Install {
                python: interpreter,
                index_url: self.server.url(&format!(
                    "/{}/{}",
                    ct2v_pipeline::release::wheel_index::DIR,
                    target.variant
                )),
                find_links,
                constraints: interpreter.constraints()?,
                log: self.log.to_path_buf(),
            };
            consumer_flow(&install, target, &interpreter.label(), self.reporter)?;
            if let Some(prepared) = &prepared {
                let plan = self.plan_for(target)?;
                let report = self
                    .work
                    .join(format!("transcribe-{}.json", target.variant));
                let files = Files {
                    report: &report,
                    log: self.log,
                };
                let outcome = transcribe(
                    self.workspace,
                    interpreter,
                    &plan,
                    prepared,
                    request.download.offline,
                    files,
                    self.reporter,
                )?;
                let wer = speech::verdict(&outcome, prepared)?;
                self.reporter.say(format_args!(
                    "  transcribed: {}",
                    speech::summary(&outcome, wer)
                ));
            }
        }
        Ok(())
    }

    /// The model and clip, when the installs are to transcribe.
    fn speech_assets(&self) -> Result<Option<Prepared>> {
        let Some(first) = self.targets.first().filter(|_| self.request.transcribe) else {
            return Ok(None);
        };
        let plan = self.plan_for(first)?;
        let speech_request = speech::SpeechRequest {
            model: None,
            audio: None,
            reference: None,
            device: "cpu".into(),
            compute_type: "default".into(),
            threads: 0,
            download: self.request.download.clone(),
        };
        Ok(Some(speech::prepare(
            self.workspace,
            &plan,
            &speech_request,
        )?))
    }

    fn plan_for(&self, target: &InstallTarget) -> Result<Plan> {
        let version = target.baseline.trim_start_matches("ctranslate2==");
        (self.plan_for)(
            &target.variant,
            self.request.platform,
            &self.request.python,
            version,
        )
    }
}

/// The app's baseline from PyPI, then the consumer's onboarding command, each checked.
fn consumer_flow(
    install: &Install,
    target: &InstallTarget,
    label: &str,
    reporter: &Reporter,
) -> Result<()> {
    reporter.say(format_args!(
        "{}: {label} with PyPI's {}",
        target.variant,
        escaped(&target.baseline)
    ));
    install.baseline(target)?;
    let baseline = target.baseline.trim_start_matches("ctranslate2==");
    let found = install.installed_version()?;
    if found != baseline {
        anyhow::bail!("the baseline install left ctranslate2 {found}, not {baseline}");
    }
    let args = install.onboarding_args(target);
    reporter.say(format_args!(
        "  the consumer's command: python {}",
        escaped(&args.join(" "))
    ));
    install.run(&args)?;
    let found = install.installed_version()?;
    install::expect_version(&found, target, "after the onboarding install")?;
    reporter.say(format_args!(
        "  installed {} ({}): reports {}",
        escaped(&target.file),
        target.variant,
        escaped(&found)
    ));
    Ok(())
}
