//! What a command works on: the variant, platform and Python, which part of a build runs,
//! and which matrix entries are included.

use std::path::PathBuf;

use clap::Args;

use ct2v_pipeline::plan::request::PlanRequest;
use ct2v_pipeline::release::select::Asked;
use ct2v_proof::checks::target::TargetQuery;
use ct2v_proof::commands::verify_release::InstallOptions;
use ct2v_support::host;
use ct2v_support::platform::Platform;
use ct2v_support::report::Reporter;

use super::{DownloadArgs, checked};
use ct2v_support::text_rules;

/// Which part of a build runs: CI compiles the C++ library once per variant and platform
/// (`--until install-ctranslate2`), and each Python's job builds only the wheel on top of it
/// (`--prebuilt-native`).
#[derive(Args, Clone, Default)]
pub struct PartArgs {
    /// Stop after this step (a step id of `cargo xtask plan`, e.g. install-ctranslate2)
    #[arg(long, value_name = "STEP")]
    pub until: Option<String>,
    /// The C++ library was built by another run (CI's native job): its configure, build and
    /// install steps are not run, and their outputs (the install prefixes under
    /// target/xtask/<variant>/<platform>/prefix/) must be in place
    #[arg(long)]
    pub prebuilt_native: bool,
}

/// Matrix entries that run only when asked (the workflow's `matrix` and `release` agree).
#[derive(Args, Clone, Copy)]
pub struct IncludeArgs {
    /// Also the entries that need a self-hosted runner (HIP SDK builds, labelled e.g.
    /// `hip-sdk-6.2`); never ask for them on pull requests from forks
    #[arg(long)]
    pub include_self_hosted: bool,
    /// Also the entries with inputs not pinned yet (their jobs stop at the fetch step unless
    /// they pin with --allow-unpinned)
    #[arg(long)]
    pub include_unpinned: bool,
}

impl IncludeArgs {
    pub fn opt(self) -> ct2v_pipeline::plan::matrix::Opt {
        ct2v_pipeline::plan::matrix::Opt {
            self_hosted: self.include_self_hosted,
            unpinned: self.include_unpinned,
        }
    }
}

/// `release`: which matrix entries, and where their artifacts are.
#[derive(Args)]
pub struct ReleaseEntries {
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
}

impl ReleaseEntries {
    pub fn asked(self, include: ct2v_pipeline::plan::matrix::Opt) -> Asked {
        Asked {
            variants: self.variants,
            platforms: self.platforms.into_iter().map(Platform::from).collect(),
            pythons: self.pythons,
            ctranslate2: self.ctranslate2,
            from: self.from,
            include,
        }
    }
}

/// Which build: the variant, and the choices that select one entry of its matrix.
#[derive(Args)]
pub struct Selection {
    /// The variant: a file variants/<name>.toml (see `cargo xtask variants`)
    #[arg(long, value_name = "NAME")]
    pub variant: String,
    /// The platform to build for (default: this host)
    #[arg(long, value_name = "PLATFORM")]
    pub platform: Option<PlatformArg>,
    /// The Python version (default: the host's python3 if the variant builds for it)
    #[arg(long, value_name = "X.Y")]
    pub python: Option<String>,
    /// The CTranslate2 version: a file variants/ctranslate2/<version>.toml (default: the
    /// variant's, else variants/defaults.toml's `ctranslate2`)
    #[arg(long, value_name = "VERSION", value_parser = checked(text_rules::ctranslate2_version))]
    pub ctranslate2: Option<String>,
    /// CUDA architectures for CUDA_ARCH_LIST, e.g. "9.0" for a quick H100-only build
    #[arg(long, value_name = "LIST")]
    pub cuda_arch: Option<String>,
    /// GPU targets for HIP builds and kernel data, e.g. gfx1100,gfx1101, or a TheRock family
    /// such as gfx110X-dgpu (gfx1100-1102), gfx120X-all or dgpu-all; `custom` is the
    /// variant's list (default: $ROCM_SDK_TARGET_FAMILY, else the variant's list)
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub gpu_targets: Option<Vec<String>>,
    /// Use the GPU SDK already on disk instead of downloading or discovering it: an installed
    /// SDK (CUDA toolkit, C:\Program Files\AMD\ROCm\<ver>, /opt/rocm) or a folder with the
    /// SDK wheels unpacked (site-packages with _rocm_sdk_core/)
    #[arg(long, value_name = "DIR", visible_aliases = ["sdk-root", "rocm-path"], env = "CT2V_SDK_DIR")]
    pub sdk_dir: Option<PathBuf>,
    /// Put a compiler cache in front of the compilers: auto uses ccache, else sccache, when
    /// one is on PATH
    #[arg(long, value_name = "CACHE", default_value = "auto")]
    pub compiler_cache: CompilerCacheArg,
}

/// `verify-release --install`: what to install from the release, and how.
#[derive(Args)]
pub struct InstallArgs {
    /// Install the release as its users do (see above)
    #[arg(long)]
    pub install: bool,
    /// With --install: the platform of the wheels (default: this host; windows-x86_64 on
    /// Linux runs under wine)
    #[arg(long, value_name = "PLATFORM", requires = "install")]
    pub platform: Option<PlatformArg>,
    /// With --install: the Python of the wheels (default: 3.12 for Windows, the host's python3
    /// for Linux; when the release has wheels for one other Python only, that one)
    #[arg(long, value_name = "X.Y", requires = "install")]
    pub python: Option<String>,
    /// With --install: only these variants (repeatable; default: every one the release has)
    #[arg(long = "variant", value_name = "NAME", requires = "install")]
    pub variants: Vec<String>,
    /// With --install: another folder of wheels the installs may take dependencies from
    /// (repeatable), e.g. NVIDIA's cuBLAS wheel
    #[arg(long = "find-links", value_name = "DIR", requires = "install")]
    pub find_links: Vec<PathBuf>,
    /// With --install: transcribe the pinned clip with each installed wheel
    #[arg(long, requires = "install")]
    pub transcribe: bool,
    /// With --install: also through a PyApp exe (Windows wheels), as the consumer ships
    #[arg(long, requires = "install")]
    pub pyapp: bool,
    #[command(flatten)]
    pub download: DownloadArgs,
}

/// Which wheel a check (`verify`, `smoke`) looks at: the one a build of the variant left, or
/// `--wheel FILE`.
#[derive(Args)]
pub struct CheckSelection {
    /// The variant: a file variants/<name>.toml (with --wheel, default: the variant whose
    /// local version the wheel carries, e.g. +cu12 for cuda)
    #[arg(long, value_name = "NAME", required_unless_present = "wheel")]
    pub variant: Option<String>,
    /// Check this wheel instead of the one `build` left (a release asset, a CI artifact):
    /// its file name gives the platform, the Python and the CTranslate2 version. A Windows
    /// wheel on Linux is checked in python.org's Windows Python under wine
    #[arg(long, value_name = "FILE")]
    pub wheel: Option<PathBuf>,
    /// The platform (default: the wheel's, else this host)
    #[arg(long, value_name = "PLATFORM")]
    pub platform: Option<PlatformArg>,
    /// The Python version (default: the wheel's, else the host's python3)
    #[arg(long, value_name = "X.Y")]
    pub python: Option<String>,
    /// The CTranslate2 version (default: the wheel's, else the variant's)
    #[arg(long, value_name = "VERSION", value_parser = checked(text_rules::ctranslate2_version))]
    pub ctranslate2: Option<String>,
    /// CUDA architectures the build was made for (its folder does not depend on them)
    #[arg(long, value_name = "LIST")]
    pub cuda_arch: Option<String>,
}

impl InstallArgs {
    /// What `verify-release --install` is asked to do.
    pub fn options(&self, reporter: &Reporter) -> InstallOptions {
        InstallOptions {
            install: self.install,
            platform: self.platform.map(Platform::from),
            python: self.python.clone(),
            variants: self.variants.clone(),
            find_links: self.find_links.clone(),
            transcribe: self.transcribe,
            pyapp: self.pyapp,
            download: self.download.options(reporter),
        }
    }
}

impl CheckSelection {
    /// The build the check is asked about, as the proof crate resolves it.
    pub fn query(&self) -> TargetQuery {
        TargetQuery {
            variant: self.variant.clone(),
            wheel: self.wheel.clone(),
            platform: self.platform.map(Platform::from),
            python: self.python.clone(),
            ctranslate2: self.ctranslate2.clone(),
            cuda_arch: self.cuda_arch.clone(),
        }
    }
}

impl Selection {
    /// The plan request these flags make (the compiler cache looked up on PATH for `auto`).
    pub fn request(&self) -> PlanRequest {
        PlanRequest {
            variant: self.variant.clone(),
            platform: self.platform.map(Platform::from),
            python: self.python.clone(),
            ctranslate2: self.ctranslate2.clone(),
            cuda_arch: self.cuda_arch.clone(),
            gpu_targets: self.gpu_targets.clone(),
            sdk_dir: self.sdk_dir.clone(),
            compiler_cache: self.compiler_cache.program(),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompilerCacheArg {
    Auto,
    Off,
    Ccache,
    Sccache,
}

impl CompilerCacheArg {
    pub fn program(self) -> Option<String> {
        match self {
            CompilerCacheArg::Auto => host::compiler_cache(),
            CompilerCacheArg::Off => None,
            CompilerCacheArg::Ccache => Some("ccache".into()),
            CompilerCacheArg::Sccache => Some("sccache".into()),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PlatformArg {
    #[value(name = "linux-x86_64")]
    Linux,
    #[value(name = "windows-x86_64")]
    Windows,
}

impl From<PlatformArg> for Platform {
    fn from(p: PlatformArg) -> Platform {
        match p {
            PlatformArg::Linux => Platform::LinuxX86_64,
            PlatformArg::Windows => Platform::WindowsX86_64,
        }
    }
}

impl From<Platform> for PlatformArg {
    fn from(p: Platform) -> PlatformArg {
        match p {
            Platform::LinuxX86_64 => PlatformArg::Linux,
            Platform::WindowsX86_64 => PlatformArg::Windows,
        }
    }
}
