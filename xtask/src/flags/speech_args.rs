//! The speech checks' arguments (verify --transcribe, smoke).

use std::path::PathBuf;

use clap::Args;

use super::DownloadArgs;
use ct2v_support::report::Reporter;

/// What the speech check transcribes, and how.
#[derive(Args)]
pub struct SpeechArgs {
    /// A faster-whisper (CTranslate2) Whisper model folder (default: the pinned Whisper base)
    #[arg(long, value_name = "DIR")]
    pub model: Option<PathBuf>,
    /// A recording to transcribe (default: the pinned JFK clip, with its reference text)
    #[arg(long, value_name = "FILE")]
    pub audio: Option<PathBuf>,
    /// What --audio says, for the word error rate (without it, only an empty transcript fails)
    #[arg(long, value_name = "TEXT")]
    pub reference: Option<String>,
    /// Where to run: auto takes the GPU when ctranslate2 sees one (cuda and rocm variants)
    #[arg(long, value_name = "DEVICE", default_value = "auto", value_parser = ["auto", "cpu", "cuda"])]
    pub device: String,
    /// CTranslate2 compute type: default, int8, float32, float16, int8_float16, …
    #[arg(long, value_name = "TYPE", default_value = "default")]
    pub compute_type: String,
    /// CPU threads (0: CTranslate2's default)
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub threads: usize,
    #[command(flatten)]
    pub download: DownloadArgs,
}

impl SpeechArgs {
    /// What the speech options ask for.
    pub fn request(&self, reporter: &Reporter) -> ct2v_proof::speech::SpeechRequest {
        ct2v_proof::speech::SpeechRequest {
            model: self.model.clone(),
            audio: self.audio.clone(),
            reference: self.reference.clone(),
            device: self.device.clone(),
            compute_type: self.compute_type.clone(),
            threads: self.threads,
            download: self.download.options(reporter),
        }
    }

    /// An option that only means something for the speech check, if one was given (the
    /// download options serve the install too: `--offline` installs from the cache alone).
    pub fn given(&self) -> Option<&'static str> {
        [
            (self.model.is_some(), "--model"),
            (self.audio.is_some(), "--audio"),
            (self.reference.is_some(), "--reference"),
            (self.device != "auto", "--device"),
            (self.compute_type != "default", "--compute-type"),
            (self.threads != 0, "--threads"),
        ]
        .into_iter()
        .find(|(given, _)| *given)
        .map(|(_, name)| name)
    }
}
