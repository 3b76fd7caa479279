//! The arguments of the checks that take a struct: bench, and the speech checks.

use std::path::PathBuf;

use clap::Args;

use super::{DownloadArgs, Selection};

// `bench` (a struct, so that its command takes one value).
#[derive(Args)]
pub struct BenchArgs {
    #[command(flatten)]
    pub selection: Selection,
    /// Whisper size of the random model: tiny, base, small, medium
    #[arg(long, value_name = "SIZE", default_value = "base")]
    pub size: String,
    /// Threads for both sides (intra_threads and OMP_NUM_THREADS; default: all CPUs)
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Alternating rounds (one process per side per round)
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub rounds: u32,
    /// Timed repetitions inside each process, after one warm-up
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,
    /// Tokens each greedy generate produces
    #[arg(long, value_name = "N", default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=200))]
    pub tokens: u32,
    /// Compute types to time (int16 needs a build with MKL on both sides)
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "float32,int8"
    )]
    pub compute_types: Vec<String>,
    /// An environment variable for both sides, e.g. CT2_USE_MKL=0 (repeatable)
    #[arg(long, value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// Install the official wheel only from the wheelhouse in the cache (no network)
    #[arg(long)]
    pub offline: bool,
    /// Where to write the JSON report (default: target/xtask/bench/…/bench-<size>.json)
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

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
    pub fn request(&self) -> ct2v_proof::speech::SpeechRequest {
        ct2v_proof::speech::SpeechRequest {
            model: self.model.clone(),
            audio: self.audio.clone(),
            reference: self.reference.clone(),
            device: self.device.clone(),
            compute_type: self.compute_type.clone(),
            threads: self.threads,
            download: self.download.options(),
        }
    }

    /// An option that only means something for the speech check, if one was given.
    pub fn given(&self) -> Option<&'static str> {
        [
            (self.model.is_some(), "--model"),
            (self.audio.is_some(), "--audio"),
            (self.reference.is_some(), "--reference"),
            (self.device != "auto", "--device"),
            (self.compute_type != "default", "--compute-type"),
            (self.threads != 0, "--threads"),
            (self.download.offline, "--offline"),
        ]
        .into_iter()
        .find(|(given, _)| *given)
        .map(|(_, name)| name)
    }
}
