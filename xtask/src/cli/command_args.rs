//! The arguments of the commands that take a struct: patch, bench, release, bundle, and the
//! speech checks.

use std::path::PathBuf;

use clap::Args;

use super::{DownloadArgs, IncludeArgs, PlatformArg, Selection, checked};
use ct2v_support::text_rules;

// `patch` (a struct, so that its command takes one value).
#[derive(Args)]
pub struct PatchArgs {
    /// The variant whose series is used
    #[arg(long, value_name = "NAME")]
    pub variant: String,
    /// The CTranslate2 version (default: the variant's)
    #[arg(long, value_name = "VERSION", value_parser = checked(text_rules::ctranslate2_version))]
    pub ctranslate2: Option<String>,
    /// The platform whose plan is used (default: this host)
    #[arg(long, value_name = "PLATFORM")]
    pub platform: Option<PlatformArg>,
    /// Only check: work on a copy, change nothing
    #[arg(long)]
    pub check: bool,
    /// A CTranslate2 source tree (default with --check: the pinned source)
    #[arg(long, value_name = "DIR", required_unless_present = "check")]
    pub source: Option<PathBuf>,
    #[command(flatten)]
    pub download: DownloadArgs,
}

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

// `release` (a struct, so that its command takes one value).
#[derive(Args)]
pub struct ReleaseArgs {
    /// Variants to release (default: all)
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub variants: Vec<String>,
    /// Platforms to release (default: all the variants build for)
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub platforms: Vec<PlatformArg>,
    /// Python versions to release (default: all)
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub pythons: Vec<String>,
    /// Take each entry's artifacts from DIR/<variant>-<platform>-py<X.Y>/ (downloaded CI
    /// artifacts) instead of this checkout's build folders
    #[arg(long, value_name = "DIR")]
    pub from: Option<PathBuf>,
    /// The CTranslate2 version to release (default: each variant's)
    #[arg(long, value_name = "VERSION", value_parser = checked(text_rules::ctranslate2_version))]
    pub ctranslate2: Option<String>,
    /// The release's version, PEP 440 (default: the CTranslate2 version), e.g. 4.7.1-2
    #[arg(long, value_name = "VERSION", value_parser = checked(text_rules::release_version))]
    pub version: Option<String>,
    /// The release folder (default: target/dist/<version>)
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Release Linux wheels tagged `linux_x86_64` (not proven manylinux; PyPI refuses
    /// them) instead of stopping
    #[arg(long)]
    pub allow_linux_tag: bool,
    /// Where the wheels are downloaded from, for the links of the pip index (`whl/<variant>/`),
    /// ending in `/` (https; http only to loopback), e.g.
    /// https://github.com/OWNER/REPO/releases/download/v4.7.1/ (default: links relative to
    /// the release folder, for hosting the folder as it is)
    #[arg(long, value_name = "URL", value_parser = checked(text_rules::base_url))]
    pub index_base_url: Option<String>,
    /// Release the variants whose entries all have their artifacts and name the others (in
    /// the notes, the manifest and on stderr) instead of stopping; a variant with any entry
    /// missing is left out whole. For CI, where one failed job must not withhold the rest
    #[arg(long)]
    pub partial: bool,
    #[command(flatten)]
    pub include: IncludeArgs,
}

/// Which part of a build runs: CI compiles the C++ library once per variant and platform
/// (`--until install-ctranslate2`), and each Python's job builds only the wheel on top of it
/// (`--prebuilt-native`).

#[derive(Args)]
pub struct BundleArgs {
    /// Bundle for this variant's plan (the wheel and folders a build left under target/xtask)
    #[arg(
        long,
        value_name = "NAME",
        conflicts_with = "wheel",
        required_unless_present = "wheel"
    )]
    pub variant: Option<String>,
    /// With --variant: the platform (default: this host)
    #[arg(long, value_name = "PLATFORM", requires = "variant")]
    pub platform: Option<PlatformArg>,
    /// With --variant: the Python version
    #[arg(long, value_name = "X.Y", requires = "variant")]
    pub python: Option<String>,
    /// With --variant: the CTranslate2 version (default: the variant's)
    #[arg(long, value_name = "VERSION", requires = "variant", value_parser = checked(text_rules::ctranslate2_version))]
    pub ctranslate2: Option<String>,
    /// With --variant: the GPU SDK on disk (as for `build --sdk-dir`; also $CT2V_SDK_DIR)
    #[arg(long, value_name = "DIR", visible_aliases = ["sdk-root", "rocm-path"], env = "CT2V_SDK_DIR")]
    pub sdk_dir: Option<PathBuf>,
    /// With --variant: the compiler runtime folder for `from = "toolchain"` sources
    #[arg(long, value_name = "DIR", requires = "variant")]
    pub toolchain_dir: Option<PathBuf>,
    /// The wheel to bundle for
    #[arg(long, value_name = "WHEEL", requires = "out")]
    pub wheel: Option<PathBuf>,
    /// A folder to find libraries in, in order; `=DEST` places its libraries in that folder of
    /// the wheel (default: the folder of the first --binary) (repeatable)
    #[arg(long = "search", value_name = "DIR[=DEST]", requires = "wheel")]
    pub search: Vec<String>,
    /// Root binaries whose imports are followed, `folder/pattern` inside the wheel (repeatable;
    /// default: every PE/ELF file in the wheel)
    #[arg(long = "binary", value_name = "GLOB", requires = "wheel")]
    pub roots: Vec<String>,
    /// A library loaded at run time (file-name glob, e.g. 'amd_comgr*.dll') (repeatable)
    #[arg(long = "force", value_name = "GLOB", requires = "wheel")]
    pub force: Vec<String>,
    /// A library the target system provides and that is never bundled (file-name glob)
    #[arg(long = "assume-present", value_name = "GLOB")]
    pub assume_present: Vec<String>,
    /// Data files, `DIR/PATTERN=DEST`, filtered by --gpu-targets when given (repeatable)
    #[arg(long = "data", value_name = "DIR/PATTERN=DEST", requires = "wheel")]
    pub data: Vec<String>,
    /// GPU targets whose data files are kept, e.g. gfx1010
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub gpu_targets: Option<Vec<String>>,
    /// System libraries that are never bundled (default: from the wheel's platform tag)
    #[arg(long, value_name = "POLICY", requires = "wheel")]
    pub policy: Option<PolicyArg>,
    /// What to write (repeatable; default: all three)
    #[arg(long = "output", value_name = "KIND", requires = "wheel")]
    pub outputs: Vec<OutputArg>,
    /// The output folder (replaced as a whole); with --variant it defaults to the plan's
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Linux, with --wheel: when the binaries do not prove the manylinux tag (symbol versions
    /// newer than the policy allows), write the wheel as `linux_x86_64` instead of stopping;
    /// for this machine only: PyPI refuses it, and `release` too unless --allow-linux-tag
    #[arg(long, requires = "wheel")]
    pub keep_linux_tag: bool,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum PolicyArg {
    #[value(name = "windows")]
    Windows,
    #[value(name = "manylinux_2_28")]
    Manylinux2_28,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum OutputArg {
    FatWheel,
    Portable,
    Report,
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
