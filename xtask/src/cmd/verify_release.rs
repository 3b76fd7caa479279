//! `verify-release`: check a release folder's checksums, RECORDs and manifest; `--install`:
//! install it as its users do, from its index served on loopback.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use super::make_plan;
use crate::flags::{InstallArgs, Selection};
use ct2v_proof::release_install::{
    self as install, Install, InstallRequest, InstallTarget, Python,
};
use ct2v_proof::speech::{self, Prepared};
use ct2v_proof::winpython::{self, Session, check};
use ct2v_support::diagnostic::escaped;
use ct2v_support::platform::Platform;
use ct2v_support::workspace::Workspace;

pub fn run(workspace: &Workspace, dir: &Path, args: &InstallArgs) -> Result<ExitCode> {
    if !dir.is_dir() {
        return Err(ct2v_support::diagnostic::InputError::new(format!(
            "{}: no such folder",
            dir.display()
        ))
        .note("give the folder `cargo xtask release` wrote, e.g. target/dist/4.7.1")
        .into());
    }
    let problems = ct2v_pipeline::release::verify(dir)?;
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
    if !args.install {
        return Ok(ExitCode::SUCCESS);
    }
    let platform = args
        .platform
        .map(Platform::from)
        .or_else(Platform::host)
        .unwrap_or(Platform::LinuxX86_64);
    let manifest = ct2v_pipeline::release::Manifest::read(dir)?;
    let python = match &args.python {
        Some(p) => p.clone(),
        None => {
            let preferred = if platform.is_windows() {
                ct2v_proof::winpython::spec::Spec::load(&workspace.root)?.default
            } else {
                ct2v_support::host::python_version().unwrap_or_else(|| "3.12".into())
            };
            install::default_python(&manifest, platform, &args.variants, preferred)
        }
    };
    let request = InstallRequest {
        dir,
        variants: &args.variants,
        platform,
        python,
        find_links: &args.find_links,
        transcribe: args.transcribe,
        download: args.download.options(),
    };
    for folder in request.find_links {
        if !folder.is_dir() {
            return Err(ct2v_support::diagnostic::InputError::new(format!(
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
    if args.pyapp && !winpython::under_wine(platform) {
        return Err(ct2v_support::diagnostic::InputError::new(
            "--pyapp builds a Windows PyApp exe and runs it under wine: give Windows wheels \
             (--platform windows-x86_64) on a Linux host",
        )
        .into());
    }
    let server = install::serve(dir)?;
    eprintln!("serving {} at {}", dir.display(), server.url("/"));
    let work = workspace
        .xtask_dir()
        .join("release-install")
        .join(format!("{platform}-py{}", request.python));
    std::fs::create_dir_all(&work)?;
    let log = work.join("install.log");
    std::fs::write(&log, "")?;
    if winpython::under_wine(platform) {
        under_wine(workspace, &request, &targets, &server, &work, &log)?;
        if args.pyapp {
            super::pyapp_check::run(workspace, &request, &targets, &server, &work)?;
        }
    } else {
        native(workspace, &request, &targets, &server, &work, &log)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn under_wine(
    workspace: &Workspace,
    request: &InstallRequest,
    targets: &[InstallTarget],
    server: &ct2v_proof::serve::Server,
    work: &Path,
    log: &Path,
) -> Result<()> {
    let session = Session::start(
        workspace,
        &request.python,
        &work.join("wine"),
        &request.download,
    )?;
    let wheelhouse = install::wheelhouse(workspace, request, targets, Some(&session.numpy), log)?;
    let prepared = speech_assets(workspace, request, targets)?;
    for target in targets {
        let mut links = vec![wheelhouse.clone()];
        links.extend(request.find_links.iter().cloned());
        let install = install::wine_install(&session, server, &target.variant, links, log)?;
        consumer_flow(&install, target, &session.label())?;
        if let Some(prepared) = &prepared {
            let plan = plan_for(workspace, request, target)?;
            let report = work.join(format!("transcribe-{}.json", target.variant));
            let outcome = check::transcribe(
                workspace,
                &session,
                &plan,
                &check::Speech {
                    prepared,
                    wheelhouse: &wheelhouse,
                    offline: request.download.offline,
                    report: &report,
                    log,
                },
            )?;
            let wer = speech::verdict(&outcome, prepared)?;
            eprintln!("  transcribed: {}", speech::summary(&outcome, wer));
        }
    }
    Ok(())
}

fn native(
    workspace: &Workspace,
    request: &InstallRequest,
    targets: &[InstallTarget],
    server: &ct2v_proof::serve::Server,
    work: &Path,
    log: &Path,
) -> Result<()> {
    let wheelhouse = install::wheelhouse(workspace, request, targets, None, log)?;
    let prepared = speech_assets(workspace, request, targets)?;
    for target in targets {
        let venv = work.join(format!("venv-{}", target.variant));
        let python = install::native_venv(&request.python, &venv, log)?;
        let mut find_links = vec![wheelhouse.clone()];
        find_links.extend(request.find_links.iter().cloned());
        let install = Install {
            python: Python::Native(python.clone()),
            index_url: server.url(&format!(
                "/{}/{}",
                ct2v_pipeline::release::pep503::DIR,
                target.variant
            )),
            find_links,
            constraints: None,
            log: log.to_path_buf(),
        };
        let label = format!("python {} ({})", request.python, venv.display());
        consumer_flow(&install, target, &label)?;
        if let Some(prepared) = &prepared {
            let plan = plan_for(workspace, request, target)?;
            let python = python.display().to_string();
            speech::install(
                workspace,
                &plan,
                &python,
                &[speech::TRANSCRIBE_REQUIREMENTS],
                request.download.offline,
                log,
            )?;
            let report = work.join(format!("transcribe-{}.json", target.variant));
            let outcome = speech::in_venv(&workspace.root, &python, prepared, &report, log)?;
            let wer = speech::verdict(&outcome, prepared)?;
            eprintln!("  transcribed: {}", speech::summary(&outcome, wer));
        }
    }
    Ok(())
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

/// The model and clip, when the installs are to transcribe.
fn speech_assets(
    workspace: &Workspace,
    request: &InstallRequest,
    targets: &[InstallTarget],
) -> Result<Option<Prepared>> {
    let Some(first) = targets.first().filter(|_| request.transcribe) else {
        return Ok(None);
    };
    let plan = plan_for(workspace, request, first)?;
    let speech_request = speech::SpeechRequest {
        model: None,
        audio: None,
        reference: None,
        device: "cpu".into(),
        compute_type: "default".into(),
        threads: 0,
        download: request.download.clone(),
    };
    Ok(Some(speech::prepare(workspace, &plan, &speech_request)?))
}

/// The plan of the variant's build for this platform and Python (its cache and Python).
fn plan_for(
    workspace: &Workspace,
    request: &InstallRequest,
    target: &InstallTarget,
) -> Result<ct2v_pipeline::plan::Plan> {
    let version = target.baseline.trim_start_matches("ctranslate2==");
    make_plan(
        workspace,
        &Selection {
            platform: Some(request.platform.into()),
            python: Some(request.python.clone()),
            ctranslate2: Some(version.to_string()),
            ..Selection::only(target.variant.clone())
        },
    )
}
