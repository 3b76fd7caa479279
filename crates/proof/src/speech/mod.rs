//! The speech check: real speech transcribed by faster-whisper on top of a built wheel
//! (`verify --transcribe`), and by a frozen app made from the bundle's `portable/` folder
//! and run with no SDK in reach (`smoke --frozen`). The pinned model and clip are in
//! `variants/speech/check.toml`; faster-whisper and PyInstaller are pinned in
//! `wheels/transcribe.txt` and `wheels/freeze.txt`.

pub mod assets;
pub mod frozen;
pub mod outcome;
pub mod pins;
pub(crate) mod scrub;
pub(crate) mod transcriber;
pub(crate) mod wer;

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use crate::interpreter::Interpreter;
use ct2v_fetch::cache::Cache;
use ct2v_fetch::download;
use ct2v_pipeline::plan::Plan;
use ct2v_support::diagnostic::InputError;
use ct2v_support::workspace::Workspace;
use outcome::Outcome;
use transcriber::Job;

pub(crate) const TRANSCRIBE_REQUIREMENTS: &str = "wheels/transcribe.txt";

/// What the user asked for.
pub struct SpeechRequest {
    pub model: Option<PathBuf>,
    pub audio: Option<PathBuf>,
    pub reference: Option<String>,
    pub device: String,
    pub compute_type: String,
    pub threads: usize,
    pub download: download::Options,
}

/// A job with what its transcript is judged against.
pub struct Prepared {
    pub job: Job,
    pub reference: Option<String>,
    pub(crate) max_wer: f64,
}

/// The request checked before any work: the Python version the pins need, the given model
/// folder and recording exist, `--reference` only with `--audio`.
pub(crate) fn check_request(plan: &Plan, request: &SpeechRequest) -> Result<(), InputError> {
    let minor: u32 = plan
        .python
        .split('.')
        .nth(1)
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    if minor < 11 {
        return Err(InputError::new(format!(
            "the speech check needs Python 3.11 or newer (the versions pinned in {TRANSCRIBE_REQUIREMENTS} do), not {}",
            plan.python
        ))
        .note("build and check with --python 3.11 (or newer)"));
    }
    if let Some(model) = &request.model
        && !model.is_dir()
    {
        return Err(InputError::new(format!("--model {}: no such folder", model.display()))
            .note("give a faster-whisper (CTranslate2) Whisper model folder, or leave --model out to use the pinned one"));
    }
    if let Some(audio) = &request.audio
        && !audio.is_file()
    {
        return Err(
            InputError::new(format!("--audio {}: no such file", audio.display())).note(
                "give a recording (WAV, FLAC, MP3…), or leave --audio out to use the pinned clip",
            ),
        );
    }
    if request.reference.is_some() && request.audio.is_none() {
        return Err(InputError::new(
            "--reference needs --audio: the pinned clip has its own",
        ));
    }
    Ok(())
}

/// The model and clip (the user's, or the pinned ones, fetched and assembled).
pub(crate) fn prepare(
    workspace: &Workspace,
    plan: &Plan,
    request: &SpeechRequest,
) -> Result<Prepared> {
    check_request(plan, request)?;
    let spec = pins::SpeechPins::load(&workspace.root)?;
    let pinned = if request.model.is_none() || request.audio.is_none() {
        Some(assets::prepare(
            &spec,
            &Cache::new(&workspace.cache_dir),
            &workspace.xtask_dir(),
            &request.download,
        )?)
    } else {
        None
    };
    let model = match (&request.model, &pinned) {
        (Some(m), _) => m.clone(),
        (None, Some(a)) => a.model.clone(),
        (None, None) => unreachable!("fetched when not given"),
    };
    let (audio, reference) = match (&request.audio, &pinned) {
        (Some(a), _) => (a.clone(), request.reference.clone()),
        (None, Some(p)) => (p.audio.clone(), Some(spec.audio.reference.clone())),
        (None, None) => unreachable!("fetched when not given"),
    };
    Ok(Prepared {
        job: Job {
            model: ct2v_support::paths::canonical(&model)?,
            audio: ct2v_support::paths::canonical(&audio)?,
            device: request.device.clone(),
            compute_type: request.compute_type.clone(),
            language: spec.audio.language.clone(),
            threads: request.threads,
        },
        reference,
        max_wer: spec.audio.max_wer,
    })
}

/// Installs the pinned faster-whisper (and `extra` requirement files) into `interpreter` with
/// `--no-deps`, from the cache's wheelhouse (filled from PyPI first unless offline), so that
/// the variant's own ctranslate2 is the one imported.
pub fn install(
    workspace: &Workspace,
    plan: &Plan,
    interpreter: &Interpreter,
    requirement_files: &[&str],
    offline: bool,
    log: &Path,
) -> Result<()> {
    let cache = Path::new(&plan.cache_dir);
    let wheelhouse = ct2v_fetch::wheelhouse::dir(cache, plan.platform, &plan.python);
    for file in requirement_files {
        let requirements = workspace.root.join(file);
        if !offline {
            ct2v_fetch::wheelhouse::download_listed(
                cache,
                plan.platform,
                &plan.python,
                &requirements,
                log,
            )?;
        }
        let args = [
            "--no-deps".into(),
            "-r".into(),
            requirements.display().to_string(),
        ];
        if let Err(e) = interpreter.pip_install(&wheelhouse, &args, log) {
            if offline {
                bail!(
                    "{e}\nthe wheelhouse {} lacks what {file} pins: run the same command once \
                     without --offline on a machine with network, and copy the cache",
                    wheelhouse.display()
                );
            }
            return Err(e);
        }
    }
    Ok(())
}

/// The transcript judged: `Ok(wer)` (None without a reference) or an error (exit 1).
pub fn verdict(outcome: &Outcome, prepared: &Prepared) -> Result<Option<f64>> {
    outcome::judge(outcome, prepared.reference.as_deref(), prepared.max_wer)
        .map_err(|e| anyhow::anyhow!("{e}"))
}

/// One line: the device, the compute type, the speed and the WER.
pub fn summary(outcome: &Outcome, wer: Option<f64>) -> String {
    let wer = wer.map_or("no reference given: WER not computed".to_string(), |w| {
        format!("WER {w:.3} against the reference")
    });
    format!(
        "device={} compute_type={}: {:.1} s of audio in {:.2} s (real-time factor {:.3}), {wer}",
        outcome.device,
        outcome.compute_type,
        outcome.audio_seconds,
        outcome.transcribe_seconds,
        outcome.real_time_factor
    )
}
