//! `verify-release`: a release folder's checksums, RECORDs and manifest; with `--install`,
//! each of its wheels installed as its users install it, from its index served on loopback.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;

use crate::interpreter::Interpreter;
use crate::release_install::{self as install, Install, InstallRequest, InstallTarget};
use crate::speech::{self, Prepared};
use crate::winpython;
use ct2v_pipeline::plan::Plan;
use ct2v_support::diagnostic::{InputError, escaped};
use ct2v_support::platform::Platform;
use ct2v_support::workspace::Workspace;

/// `--install` and its options.
pub struct InstallOptions {
    pub install: bool,
    pub platform: Option<Platform>,
    pub python: Option<String>,
    pub variants: Vec<String>,
    pub find_links: Vec<PathBuf>,
    pub transcribe: bool,
    pub pyapp: bool,
    pub download: ct2v_fetch::download::Options,
}

/// The plan of a variant's build at a CTranslate2 version for a platform and Python (its
/// cache and Python, for the speech check).
pub(crate) type PlanFor<'a> = &'a dyn Fn(&str, Platform, &str, &str) -> Result<Plan>;

pub fn run(
    workspace: &Workspace,
    dir: &Path,
    options: &InstallOptions,
    plan_for: PlanFor,
) -> Result<ExitCode> {
    if !dir.is_dir() {
        return Err(
            InputError::new(format!("{}: no such folder", dir.display()))
                .note("give the folder `cargo xtask release` wrote, e.g. target/dist/4.7.1")
                .into(),
        );
    }
    let problems = ct2v_pipeline::release::recheck(dir)?;
    if !problems.is_empty() {
        for p in &problems {
            eprintln!("error: {p}");
        }
        eprintln!("{} problem(s) in {}", problems.len(), dir.display());
        return Ok(ExitCode::FAILURE);
    }
    eprintln!(
        "{}: every checksum, RECORD and manifest entry agrees",
        dir.display()
    );
    say_left_out(&ct2v_pipeline::release::Manifest::read(dir)?);
    if options.install {
        install_release(workspace, dir, options, plan_for)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// What a `--partial` release leaves out, per variant and platform, on stderr: it verifies,
/// and is still not whole.
fn say_left_out(manifest: &ct2v_pipeline::release::Manifest) {
    let sets: std::collections::BTreeSet<String> = manifest
        .left_out
        .iter()
        .map(|l| match l.platform.as_str() {
            "" => l.variant.clone(),
            platform => format!("{} on {platform}", l.variant),
        })
        .collect();
    if !sets.is_empty() {
        eprintln!(
            "note: a partial release: it leaves out {} ({} matrix entries; RELEASE_NOTES.md, \
             \"Not in this release\", says why)",
            escaped(&sets.into_iter().collect::<Vec<_>>().join(", ")),
            manifest.left_out.len()
        );
    }
}

fn install_release(
    workspace: &Workspace,
    dir: &Path,
    options: &InstallOptions,
    plan_for: PlanFor,
) -> Result<()> {
    let platform = options
        .platform
        .or_else(Platform::host)
        .unwrap_or(Platform::LinuxX86_64);
    let manifest = ct2v_pipeline::release::Manifest::read(dir)?;
    let python = match &options.python {
        Some(p) => p.clone(),
        None => {
            let preferred = if platform.is_windows() {
                winpython::pins::PythonPins::load(&workspace.root)?.default
            } else {
                ct2v_support::host::python_version(&ct2v_support::report::Reporter::std())
                    .unwrap_or_else(|| "3.12".into())
            };
            install::default_python(&manifest, platform, &options.variants, preferred)
        }
    };
    let request = InstallRequest {
        dir,
        variants: &options.variants,
        platform,
        python,
        find_links: &options.find_links,
        transcribe: options.transcribe,
        download: options.download.clone(),
    };
    for folder in request.find_links {
        if !folder.is_dir() {
            return Err(InputError::new(format!(
                "--find-links {}: no such folder",
                folder.display()
            ))
            .into());
        }
    }
    let targets = install::targets(&request, &manifest)?;
    for target in &targets {
        install::check_index_is_local(dir, &target.variant)?;
    }
    let under_wine = winpython::under_wine(platform);
    if options.pyapp && !under_wine {
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
    eprintln!("serving {} at {}", dir.display(), server.url("/"));
    let work = workspace
        .xtask_dir()
        .join("release-install")
        .join(format!("{platform}-py{}", request.python));
    std::fs::create_dir_all(&work)?;
    let log = work.join("install.log");
    ct2v_support::fsx::write(&log, "")?;
    let installs = Installs {
        workspace,
        request: &request,
        targets: &targets,
        server: &server,
        work: &work,
        log: &log,
        plan_for,
    };
    installs.run()?;
    #[cfg(feature = "wine")]
    if options.pyapp {
        crate::pyapp::check::run(workspace, &request, &targets, &server, &work)?;
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
                    let python = install::native_venv(&request.python, &venv, self.log)?;
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
            consumer_flow(&install, target, &interpreter.label())?;
            if let Some(prepared) = &prepared {
                let plan = self.plan_for(target)?;
                let report = self
                    .work
                    .join(format!("transcribe-{}.json", target.variant));
                let outcome = super::verify::transcribe(
                    self.workspace,
                    interpreter,
                    &plan,
                    prepared,
                    request.download.offline,
                    &report,
                    self.log,
                )?;
                let wer = speech::verdict(&outcome, prepared)?;
                eprintln!("  transcribed: {}", speech::summary(&outcome, wer));
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
fn consumer_flow(install: &Install, target: &InstallTarget, label: &str) -> Result<()> {
    eprintln!(
        "{}: {label} with PyPI's {}",
        target.variant,
        escaped(&target.baseline)
    );
    install.baseline(target)?;
    let baseline = target.baseline.trim_start_matches("ctranslate2==");
    let found = install.installed_version()?;
    if found != baseline {
        anyhow::bail!("the baseline install left ctranslate2 {found}, not {baseline}");
    }
    let args = install.onboarding_args(target);
    eprintln!(
        "  the consumer's command: python {}",
        escaped(&args.join(" "))
    );
    install.run(&args)?;
    let found = install.installed_version()?;
    install::expect_version(&found, target, "after the onboarding install")?;
    eprintln!(
        "  installed {} ({}): reports {}",
        escaped(&target.file),
        target.variant,
        escaped(&found)
    );
    Ok(())
}
