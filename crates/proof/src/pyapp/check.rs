//! The release installed through a PyApp exe under wine (`verify-release --install
//! --pyapp`), as the consumer's users get it: the exe's first run unpacks its Python and installs the
//! app with PyPI's ctranslate2; `exe self pip install --force-reinstall --index-url …` (the
//! onboarding step) swaps in the variant's wheel; the app must then report the variant's
//! version and transcribe. A fresh wine prefix per variant (wine 8 drops variables with `-`
//! in their names, so PyApp's per-project install folder cannot be moved instead).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Result, bail};

use crate::pyapp;
use crate::release_install::{self as install, InstallRequest, InstallTarget};
use crate::serve::Server;
use crate::winpython::{STEP_LIMIT, prepare, wine::Wine};
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

pub fn run(
    workspace: &Workspace,
    request: &InstallRequest,
    targets: &[InstallTarget],
    server: &Server,
    work: &Path,
    reporter: &Reporter,
) -> Result<()> {
    let work = work.join("pyapp");
    std::fs::create_dir_all(&work)?;
    let log = work.join("pyapp.log");
    ct2v_support::fsx::write(&log, "")?;
    let spec = crate::winpython::pins::PythonPins::load(&workspace.root)?;
    let wheelhouse =
        ct2v_fetch::wheelhouse::dir(&workspace.cache_dir, request.platform, &request.python);
    let constraints = crate::interpreter::numpy_constraints(&work, &spec.numpy)?;
    let python = prepare::prepare(
        &workspace.root,
        &ct2v_fetch::cache::Cache::new(&workspace.cache_dir),
        &workspace.xtask_dir(),
        &request.download,
        &request.python,
    )?;
    let mut pip_args = vec![
        "--no-index".to_string(),
        "--find-links".into(),
        wheelhouse.display().to_string(),
    ];
    for dir in request.find_links {
        pip_args.extend(["--find-links".into(), dir.display().to_string()]);
    }
    pip_args.extend(["--constraint".into(), constraints.display().to_string()]);
    let baseline = targets[0].baseline.trim_start_matches("ctranslate2==");
    let exe = pyapp::build(
        workspace,
        &pyapp::ExeParts {
            python: &python,
            ctranslate2: baseline,
            pip_extra_args: &pip_args,
            work: &work,
            log: &log,
        },
        &request.download,
    )?;
    reporter.say(format_args!("built {}", exe.display()));
    for target in targets {
        let prefix = work.join(format!("prefix-{}", target.variant));
        let wine = Wine::start(workspace, &prefix, reporter)?;
        let run = |args: &[String]| -> Result<String> {
            let mut out = String::new();
            wine.run(
                &exe,
                args,
                &BTreeMap::new(),
                &log,
                STEP_LIMIT,
                &mut |line| {
                    out.push_str(line);
                    out.push('\n');
                },
            )?;
            Ok(out)
        };
        let reported = |out: &str| -> String {
            out.lines()
                .find_map(|l| l.strip_prefix("installed "))
                .and_then(|rest| rest.split_whitespace().next())
                .unwrap_or("nothing")
                .to_string()
        };
        let first = reported(&run(&[])?);
        if first != baseline {
            bail!(
                "the PyApp exe's first run reported ctranslate2 {first}, not PyPI's {baseline} (log: {})",
                log.display()
            );
        }
        reporter.say(format_args!(
            "{}: the PyApp exe's first run installed PyPI's ctranslate2 {first}",
            target.variant
        ));
        let mut onboarding: Vec<String> =
            ["self", "pip", "install", "--force-reinstall", "--index-url"]
                .map(String::from)
                .to_vec();
        onboarding.push(server.url(&format!(
            "/{}/{}",
            ct2v_pipeline::release::wheel_index::DIR,
            target.variant
        )));
        onboarding.extend(pip_args.iter().skip(1).cloned());
        onboarding.push(target.requirement.clone());
        reporter.say(format_args!(
            "  the consumer's onboarding: ct2-speech-app.exe {}",
            ct2v_support::diagnostic::escaped(&onboarding.join(" "))
        ));
        run(&onboarding)?;
        let requirements = workspace.root.join(crate::speech::TRANSCRIBE_REQUIREMENTS);
        let mut speech = ["self", "pip", "install", "--no-deps"]
            .map(String::from)
            .to_vec();
        speech.extend(pip_args.iter().cloned());
        speech.extend(["-r".into(), requirements.display().to_string()]);
        run(&speech)?;
        let after = reported(&run(&[])?);
        install::expect_version(&after, target, "the PyApp exe after onboarding")?;
        reporter.say(format_args!(
            "  the app reports ctranslate2 {}",
            ct2v_support::diagnostic::escaped(&after)
        ));
        if request.transcribe {
            let said = transcribe(workspace, request, target, &run, &work)?;
            reporter.say(said);
        }
    }
    Ok(())
}

/// The pinned clip transcribed by the app, checked against its reference; the line that
/// says how it went.
fn transcribe(
    workspace: &Workspace,
    request: &InstallRequest,
    target: &InstallTarget,
    run: &dyn Fn(&[String]) -> Result<String>,
    work: &Path,
) -> Result<String> {
    let spec = crate::speech::pins::SpeechPins::load(&workspace.root)?;
    let assets = crate::speech::assets::prepare(
        &spec,
        &ct2v_fetch::cache::Cache::new(&workspace.cache_dir),
        &workspace.xtask_dir(),
        &request.download,
    )?;
    let report = work.join(format!("transcribe-{}.json", target.variant));
    let job = crate::speech::transcriber::Job {
        model: assets.model,
        audio: assets.audio,
        device: "cpu".into(),
        compute_type: "default".into(),
        language: spec.audio.language.clone(),
        threads: 0,
    };
    run(&job.args(&report))?;
    let text = std::fs::read_to_string(&report)?;
    let outcome: crate::speech::outcome::Outcome = serde_json::from_str(&text)?;
    let wer =
        crate::speech::outcome::judge(&outcome, Some(&spec.audio.reference), spec.audio.max_wer)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(format!(
        "  the app transcribed: {}",
        crate::speech::summary(&outcome, wer)
    ))
}
