//! The command line. Each subcommand is a few lines that call into the library.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use clap::{Args, Parser, Subcommand};

use xtask::bundle::{run as bundle_run, spec as bundle_spec};
use xtask::cache::Cache;
use xtask::diagnostic::InputError;
use xtask::exec::Executor;
use xtask::fetch::{self, PinAction};
use xtask::platform::Platform;
use xtask::runner::Runner;
use xtask::variant::{Catalog, Choices, Output, Policy};
use xtask::workspace::Workspace;
use xtask::{download, host, matrix, plan, safe_path};

// stdout through these, so that a closed pipe (`| head -n1`) becomes an error that `main`
// turns into a quiet exit 0 instead of std's panic.
macro_rules! println {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)?
    }};
}
macro_rules! print {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($arg)*)?
    }};
}

#[derive(Parser)]
#[command(
    name = "cargo xtask",
    bin_name = "cargo xtask",
    about = "Build, bundle and release every variant of CTranslate2",
    long_about = "Build, bundle and release every variant of CTranslate2 (cpu, cuda, rocm, \
                  rocm-gfx1010). Variants are described by variants/*.toml; `plan` shows what \
                  a build will do, step by step, before anything runs.",
    after_help = "Examples:\n  cargo xtask variants\n  cargo xtask plan --variant rocm-gfx1010 --platform windows-x86_64\n  cargo xtask build --variant cpu\n\nExit codes: 0 success, 1 failure, 2 bad input (a variant file, a flag)."
)]
struct Cli {
    /// The ct2-variants checkout (default: found from the current folder)
    #[arg(long, global = true, value_name = "DIR")]
    root: Option<PathBuf>,
    /// The download cache (default: target/xtask/cache, or $CT2V_CACHE_DIR)
    #[arg(long, global = true, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the variants with a one-line description each
    #[command(after_help = "Example:\n  cargo xtask variants")]
    Variants {
        /// Print JSON instead of text
        #[arg(long)]
        json: bool,
    },
    /// Show the ordered steps a build of one variant will run, without running them
    #[command(
        after_help = "Examples:\n  cargo xtask plan --variant cpu\n  cargo xtask plan --variant rocm --platform windows-x86_64 --json\n\n\
                            The JSON form is documented in docs/plan-json.md (schema_version 1)."
    )]
    Plan {
        #[command(flatten)]
        selection: Selection,
        /// Print the plan as JSON (stable; see docs/plan-json.md)
        #[arg(long)]
        json: bool,
    },
    /// Build one variant end to end (fetch, unpack, patch, compile, wheel, bundle, verify)
    #[command(
        after_help = "Examples:\n  cargo xtask build --variant cpu\n  cargo xtask build --variant cuda --cuda-arch 9.0 --dry-run"
    )]
    Build {
        #[command(flatten)]
        selection: Selection,
        /// Print the plan and stop
        #[arg(long)]
        dry_run: bool,
        /// With --dry-run: print the plan as JSON
        #[arg(long, requires = "dry_run")]
        json: bool,
        #[command(flatten)]
        download: DownloadArgs,
    },
    /// What this machine has for GPU acceleration, which variant fits it, and what to do next
    #[command(
        long_about = "Look at this machine: OS, compilers (MSVC, gcc, clang), CMake, ninja, \
                      Python, the CUDA toolkit, NVIDIA GPUs and their compute capability \
                      (nvidia-smi), AMD GPUs and their gfx target (rocminfo, or hipinfo on \
                      Windows), and every HIP SDK install (Windows: each \
                      %ProgramFiles%\\AMD\\ROCm\\<version>; Linux: /opt/rocm*) with its HIP \
                      runtime (amdhip64_6 vs _7), amd_comgr, and the GPU targets its rocBLAS \
                      kernels cover; whether HIP_PATH points at the install that fits. Then \
                      the verdict: the variant for this machine and the next steps \
                      (docs/gpu-setup.md explains them).",
        after_help = "Examples:\n  cargo xtask doctor\n  cargo xtask doctor --json\n\n\
                      Exit codes: 0 the recommended variant can be built or used here, 1 not yet \
                      (the next steps say what is missing)."
    )]
    Doctor {
        /// Print the facts and the verdict as JSON
        #[arg(long)]
        json: bool,
    },
    /// Check (or apply) a variant's patch series against CTranslate2's source
    #[command(
        long_about = "Check that the variant's patch series (patches/ctranslate2-<version>/series) \
                      applies, in order, to the pinned CTranslate2 source (fetched into the \
                      cache if needed) or to --source DIR, without building anything and without \
                      changing the tree. Without --check, apply it to --source DIR: all or \
                      nothing, and a tree that already has the series is left as it is. A patch \
                      that does not apply is reported with its file, hunk, the lines it expected \
                      and the lines the file has.",
        after_help = "Examples:\n  cargo xtask patch --check --variant rocm-gfx1010\n  \
                      cargo xtask patch --check --variant rocm-gfx1010 --source ~/src/CTranslate2\n  \
                      cargo xtask patch --variant rocm-gfx1010 --source ~/src/CTranslate2\n\n\
                      Exit codes: 0 the series applies (or was applied), 1 it does not, 2 bad input."
    )]
    Patch {
        /// The variant whose series is used
        #[arg(long, value_name = "NAME")]
        variant: String,
        /// The CTranslate2 version (default: the variant's)
        #[arg(long, value_name = "VERSION")]
        ctranslate2: Option<String>,
        /// The platform whose plan is used (default: this host)
        #[arg(long, value_name = "PLATFORM")]
        platform: Option<PlatformArg>,
        /// Only check: work on a copy, change nothing
        #[arg(long)]
        check: bool,
        /// A CTranslate2 source tree (default with --check: the pinned source)
        #[arg(long, value_name = "DIR", required_unless_present = "check")]
        source: Option<PathBuf>,
        #[command(flatten)]
        download: DownloadArgs,
    },
    /// Install a built wheel into a fresh venv and check that it imports and works
    #[command(
        long_about = "Install the wheel a build left in its output folder into a fresh venv (no \
                      LD_LIBRARY_PATH, no SDK on PATH) and check `import ctranslate2`, its \
                      version, and the compute types the variant promises for each device \
                      (variants/*.toml [verify.compute-types]). The same check is the build's \
                      `verify` step; this command reruns it on its own.",
        after_help = "Examples:\n  cargo xtask verify --variant cpu\n  cargo xtask verify --variant cpu --numerics\n\n\
                      Exit codes: 0 the wheel works, 1 it does not (or was not built), 2 bad input."
    )]
    Verify {
        #[command(flatten)]
        selection: Selection,
        /// Also compare a tiny random Whisper model's encoder output with the official wheel's
        /// (needs network for torch, transformers and the official ctranslate2 from PyPI)
        #[arg(long)]
        numerics: bool,
    },
    /// Time the built wheel against the official wheel of the same version, on the CPU
    #[command(
        long_about = "Time the built wheel (from the verify step's venv) against the official \
                      ctranslate2 wheel of the same version from PyPI (a venv of its own, \
                      installed from the wheelhouse `fetch` fills, or from PyPI), in one run, \
                      alternating which goes first, on a randomly initialised Whisper model \
                      written straight from ctranslate2's model spec (no torch, no downloads): \
                      encode of one 30 s window and a greedy generate with end-of-text \
                      suppressed, per compute type. Prints medians, bests and ratios \
                      (official / ours: above 1.0 = ours faster) and writes JSON.",
        after_help = "Examples:\n  cargo xtask bench --variant cpu\n  \
                      cargo xtask bench --variant cpu --threads 2 --rounds 5 --compute-types float32,int8,int16\n  \
                      cargo xtask bench --variant cpu --offline --env CT2_USE_MKL=0\n\n\
                      Exit codes: 0 measured, 1 a side failed (or was not built), 2 bad input."
    )]
    Bench {
        #[command(flatten)]
        selection: Selection,
        /// Whisper size of the random model: tiny, base, small, medium
        #[arg(long, value_name = "SIZE", default_value = "base")]
        size: String,
        /// Threads for both sides (intra_threads and OMP_NUM_THREADS; default: all CPUs)
        #[arg(long, value_name = "N")]
        threads: Option<usize>,
        /// Alternating rounds (one process per side per round)
        #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
        rounds: u32,
        /// Timed repetitions inside each process, after one warm-up
        #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
        repeat: u32,
        /// Tokens each greedy generate produces
        #[arg(long, value_name = "N", default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=200))]
        tokens: u32,
        /// Compute types to time (int16 needs a build with MKL on both sides)
        #[arg(
            long,
            value_name = "LIST",
            value_delimiter = ',',
            default_value = "float32,int8"
        )]
        compute_types: Vec<String>,
        /// An environment variable for both sides, e.g. CT2_USE_MKL=0 (repeatable)
        #[arg(long, value_name = "KEY=VALUE")]
        env: Vec<String>,
        /// Install the official wheel only from the wheelhouse in the cache (no network)
        #[arg(long)]
        offline: bool,
        /// Where to write the JSON report (default: target/xtask/bench/…/bench-<size>.json)
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
    },
    /// Download (or find in the cache) and verify every pinned input of one build
    #[command(
        long_about = "Download (or find in the cache) and verify every pinned input of one build: \
                      source archives, upstream wheels, SDK wheels. Files are stored by sha256 \
                      in the cache, re-verified on every use, resumed after an interruption and \
                      retried on transient errors. A file that does not match its pin is deleted \
                      and the command fails.",
        after_help = "Examples:\n  cargo xtask fetch --variant cpu\n  cargo xtask fetch --variant cpu --offline\n  cargo xtask fetch --variant rocm-gfx1010 --platform windows-x86_64 \\\n      --mirror https://github.com/=https://mirror.example.com/github/\n\n\
                      Exit codes: 0 all inputs verified, 1 a download or check failed (or --offline and \
                      something is missing), 2 bad input."
    )]
    Fetch {
        #[command(flatten)]
        selection: Selection,
        #[command(flatten)]
        download: DownloadArgs,
        /// Skip the pip wheels of the build tools and of the wheel's dependencies (fetched
        /// into <cache>/wheels/ so that `build --offline` works from a copied cache)
        #[arg(long)]
        no_wheels: bool,
    },
    /// Record the sha256 and size of inputs whose pin is missing or whose URL changed
    #[command(
        long_about = "Download every input of a variant (all platforms and Pythons) whose pin is \
                      missing, or whose URL changed since it was pinned, and write its sha256 and \
                      size back into the variant files (comments and order kept) and into \
                      variants/pins.lock, as `cargo update` does. Inputs the lock confirms are \
                      not downloaded.",
        after_help = "Example:\n  cargo xtask pin --variant cpu\n\n\
                      Exit codes: 0 every input pinned, 1 some input could not be downloaded (the \
                      others are still written), 2 bad input."
    )]
    Pin {
        /// The variant: a file variants/<name>.toml (see `cargo xtask variants`)
        #[arg(long, value_name = "NAME")]
        variant: String,
        /// The CTranslate2 version (default: the variant's)
        #[arg(long, value_name = "VERSION")]
        ctranslate2: Option<String>,
        #[command(flatten)]
        download: DownloadArgs,
    },
    /// Bundle the SDK libraries a wheel's binaries load: fat wheel, portable folder, report
    #[command(
        long_about = "Find exactly the libraries a wheel's binaries load (PE import and delay-import \
                      tables, ELF DT_NEEDED; transitively; libraries loaded at run time given as \
                      --force), skipping what the operating system provides (xtask/policy/), \
                      and write:\n  \
                      - a fat wheel: the input wheel with the libraries inside, RECORD rewritten, \
                      ELF RUNPATHs set to $ORIGIN-relative folders;\n  \
                      - portable/_internal/ (a PyInstaller one-folder layout) and \
                      portable/binaries.json (pairs for a .spec file's `binaries`);\n  \
                      - provenance.json and provenance.md: every bundled file, the package and \
                      version it came from, size, sha256, who imports it, bytes saved.\n\n\
                      Either --variant (the plan's bundle step, after a build) or --wheel with \
                      explicit search folders. The output folder is replaced only when \
                      everything succeeded.",
        after_help = "Examples:\n  \
                      cargo xtask bundle --variant rocm --platform windows-x86_64 --python 3.12\n  \
                      cargo xtask bundle --wheel ctranslate2-4.7.1-cp312-cp312-win_amd64.whl \\\n      \
                      --force 'cublas*.dll' --search nvidia_cublas/nvidia/cublas/bin \\\n      \
                      --assume-present msvcp140.dll --out dist/cuda\n\n\
                      Exit codes: 0 bundled, 1 a library could not be found or a file not read \
                      (the message lists each missing library and who imports it), 2 bad input."
    )]
    Bundle(BundleArgs),
    /// Gather the built artifacts of the matrix into a release folder with checksums
    #[command(
        long_about = "Gather the artifacts of each selected variant × platform × Python (the \
                      wheel, the portable folder as a zip, the provenance reports) into \
                      target/dist/<version>/<variant>/, with manifest.json (inputs, SDK, \
                      bundled libraries, sizes, sha256), RELEASE_NOTES.md and SHA256SUMS \
                      (`sha256sum -c SHA256SUMS` checks it). Every selected entry must have \
                      been built; the release folder is written in a temp folder and renamed \
                      into place, and an existing release is never replaced.",
        after_help = "Examples:\n  cargo xtask release --variants cpu --platforms linux-x86_64 --pythons 3.11\n  \
                      cargo xtask release --from artifacts/   # CI: one folder per entry, \
                      named <variant>-<platform>-py<X.Y>\n\n\
                      Exit codes: 0 released, 1 something missing or inconsistent, 2 bad input."
    )]
    Release {
        /// Variants to release (default: all)
        #[arg(long, value_name = "LIST", value_delimiter = ',')]
        variants: Vec<String>,
        /// Platforms to release (default: all the variants build for)
        #[arg(long, value_name = "LIST", value_delimiter = ',')]
        platforms: Vec<PlatformArg>,
        /// Python versions to release (default: all)
        #[arg(long, value_name = "LIST", value_delimiter = ',')]
        pythons: Vec<String>,
        /// Take each entry's artifacts from DIR/<variant>-<platform>-py<X.Y>/ (downloaded CI
        /// artifacts) instead of this checkout's build folders
        #[arg(long, value_name = "DIR")]
        from: Option<PathBuf>,
        /// The CTranslate2 version to release (default: each variant's)
        #[arg(long, value_name = "VERSION")]
        ctranslate2: Option<String>,
        /// The release's version label (default: the CTranslate2 version)
        #[arg(long, value_name = "VERSION")]
        version: Option<String>,
        /// The release folder (default: target/dist/<version>)
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Release Linux wheels tagged `linux_x86_64` (not proven manylinux; PyPI refuses
        /// them) instead of stopping
        #[arg(long)]
        allow_linux_tag: bool,
    },
    /// Check a release folder: SHA256SUMS, every wheel's RECORD, the manifest
    #[command(after_help = "Example:\n  cargo xtask verify-release target/dist/4.7.1")]
    VerifyRelease {
        /// The release folder
        dir: PathBuf,
    },
    /// Add a CTranslate2 version: its data file from the previous version's, pins, patch check
    #[command(
        long_about = "Start CTranslate2 VERSION from the previous version's file: write \
                      variants/ctranslate2/VERSION.toml with every URL and wheel path that names \
                      the old version renamed (their pins dropped) and [source] set to --source \
                      (a ct2rs crate's CTranslate2 folder is found by itself), copy each patch \
                      series to patches/ctranslate2-VERSION/, then pin every input that can be \
                      reached (as `pin` does), run `patch --check` for the variants with a series, \
                      and print what is left to do by hand. Nothing is replaced: an existing \
                      version file stops it.",
        after_help = "Examples:\n  cargo xtask bump --ctranslate2 4.8.5 \\\n      --source https://static.crates.io/crates/ct2rs/ct2rs-0.10.4.crate\n  \
                      cargo xtask bump --ctranslate2 4.9.0 --no-pin\n\n\
                      Exit codes: 0 the version is ready to build, 1 something is left to do by \
                      hand (listed), 2 bad input."
    )]
    Bump {
        /// The new CTranslate2 version
        #[arg(long, value_name = "VERSION")]
        ctranslate2: String,
        /// The version file to start from (default: the newest one below VERSION)
        #[arg(long, value_name = "VERSION")]
        from: Option<String>,
        /// The source archive with every submodule (e.g. a ct2rs crate on crates.io)
        #[arg(long, value_name = "URL")]
        source: Option<String>,
        /// The folder inside --source that holds CTranslate2 (found for ct2rs crates)
        #[arg(long, value_name = "DIR")]
        subdir: Option<String>,
        /// Write the files only: no downloads, no patch check
        #[arg(long)]
        no_pin: bool,
        #[command(flatten)]
        download: DownloadArgs,
    },
    /// Print the GitHub Actions matrix (variant × platform × Python)
    #[command(
        after_help = "Example (in a workflow):\n  echo \"matrix=$(cargo xtask matrix --json)\" >> \"$GITHUB_OUTPUT\""
    )]
    Matrix {
        /// Print one line of JSON (for `fromJSON`) instead of a table
        #[arg(long)]
        json: bool,
        /// CTranslate2 versions to span, e.g. 4.7.1,4.8.4 (default: each variant's)
        #[arg(long, value_name = "LIST", value_delimiter = ',')]
        ctranslate2: Vec<String>,
    },
}

/// Which build: the variant, and the choices that select one entry of its matrix.
#[derive(Args)]
struct Selection {
    /// The variant: a file variants/<name>.toml (see `cargo xtask variants`)
    #[arg(long, value_name = "NAME")]
    variant: String,
    /// The platform to build for (default: this host)
    #[arg(long, value_name = "PLATFORM")]
    platform: Option<PlatformArg>,
    /// The Python version (default: the host's python3 if the variant builds for it)
    #[arg(long, value_name = "X.Y")]
    python: Option<String>,
    /// The CTranslate2 version: a file variants/ctranslate2/<version>.toml (default: the
    /// variant's, else variants/defaults.toml's `ctranslate2`)
    #[arg(long, value_name = "VERSION")]
    ctranslate2: Option<String>,
    /// CUDA architectures for CUDA_ARCH_LIST, e.g. "9.0" for a quick H100-only build
    #[arg(long, value_name = "LIST")]
    cuda_arch: Option<String>,
    /// GPU targets for HIP builds and kernel data, e.g. gfx1100,gfx1101, or a TheRock family
    /// such as gfx110X-dgpu (gfx1100-1102), gfx120X-all or dgpu-all; `custom` is the
    /// variant's list (default: $ROCM_SDK_TARGET_FAMILY, else the variant's list)
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    gpu_targets: Option<Vec<String>>,
    /// Use the GPU SDK already on disk instead of downloading or discovering it: an installed
    /// SDK (CUDA toolkit, C:\Program Files\AMD\ROCm\<ver>, /opt/rocm) or a folder with the
    /// SDK wheels unpacked (site-packages with _rocm_sdk_core/)
    #[arg(long, value_name = "DIR", visible_aliases = ["sdk-root", "rocm-path"])]
    sdk_dir: Option<PathBuf>,
    /// Put a compiler cache in front of the compilers: auto uses ccache, else sccache, when
    /// one is on PATH
    #[arg(long, value_name = "CACHE", default_value = "auto")]
    compiler_cache: CompilerCacheArg,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum CompilerCacheArg {
    Auto,
    Off,
    Ccache,
    Sccache,
}

impl CompilerCacheArg {
    fn program(self) -> Option<String> {
        match self {
            CompilerCacheArg::Auto => host::compiler_cache(),
            CompilerCacheArg::Off => None,
            CompilerCacheArg::Ccache => Some("ccache".into()),
            CompilerCacheArg::Sccache => Some("sccache".into()),
        }
    }
}

/// `bundle`: a variant's bundle step, or a wheel with explicit folders.
#[derive(Args)]
struct BundleArgs {
    /// Bundle for this variant's plan (the wheel and folders a build left under target/xtask)
    #[arg(
        long,
        value_name = "NAME",
        conflicts_with = "wheel",
        required_unless_present = "wheel"
    )]
    variant: Option<String>,
    /// With --variant: the platform (default: this host)
    #[arg(long, value_name = "PLATFORM", requires = "variant")]
    platform: Option<PlatformArg>,
    /// With --variant: the Python version
    #[arg(long, value_name = "X.Y", requires = "variant")]
    python: Option<String>,
    /// With --variant: the CTranslate2 version (default: the variant's)
    #[arg(long, value_name = "VERSION", requires = "variant")]
    ctranslate2: Option<String>,
    /// With --variant: the GPU SDK on disk (as for `build --sdk-dir`)
    #[arg(long, value_name = "DIR", requires = "variant", visible_aliases = ["sdk-root", "rocm-path"])]
    sdk_dir: Option<PathBuf>,
    /// With --variant: the compiler runtime folder for `from = "toolchain"` sources
    #[arg(long, value_name = "DIR", requires = "variant")]
    toolchain_dir: Option<PathBuf>,
    /// The wheel to bundle for
    #[arg(long, value_name = "WHEEL", requires = "out")]
    wheel: Option<PathBuf>,
    /// A folder to find libraries in, in order; `=DEST` places its libraries in that folder of
    /// the wheel (default: the folder of the first --binary) (repeatable)
    #[arg(long = "search", value_name = "DIR[=DEST]", requires = "wheel")]
    search: Vec<String>,
    /// Root binaries whose imports are followed, `folder/pattern` inside the wheel (repeatable;
    /// default: every PE/ELF file in the wheel)
    #[arg(long = "binary", value_name = "GLOB", requires = "wheel")]
    roots: Vec<String>,
    /// A library loaded at run time (file-name glob, e.g. 'amd_comgr*.dll') (repeatable)
    #[arg(long = "force", value_name = "GLOB", requires = "wheel")]
    force: Vec<String>,
    /// A library the target system provides and that is never bundled (file-name glob)
    #[arg(long = "assume-present", value_name = "GLOB")]
    assume_present: Vec<String>,
    /// Data files, `DIR/PATTERN=DEST`, filtered by --gpu-targets when given (repeatable)
    #[arg(long = "data", value_name = "DIR/PATTERN=DEST", requires = "wheel")]
    data: Vec<String>,
    /// GPU targets whose data files are kept, e.g. gfx1010
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    gpu_targets: Option<Vec<String>>,
    /// System libraries that are never bundled (default: from the wheel's platform tag)
    #[arg(long, value_name = "POLICY", requires = "wheel")]
    policy: Option<PolicyArg>,
    /// What to write (repeatable; default: all three)
    #[arg(long = "output", value_name = "KIND", requires = "wheel")]
    outputs: Vec<OutputArg>,
    /// The output folder (replaced as a whole); with --variant it defaults to the plan's
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Linux, with --wheel: when the binaries do not prove the manylinux tag (symbol versions
    /// newer than the policy allows), write the wheel as `linux_x86_64` instead of stopping;
    /// for this machine only: PyPI refuses it, and `release` too unless --allow-linux-tag
    #[arg(long, requires = "wheel")]
    keep_linux_tag: bool,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum PolicyArg {
    #[value(name = "windows")]
    Windows,
    #[value(name = "manylinux_2_28")]
    Manylinux2_28,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum OutputArg {
    FatWheel,
    Portable,
    Report,
}

/// How downloads are made.
#[derive(Args)]
struct DownloadArgs {
    /// Use only the cache; fail with the list of missing inputs instead of downloading
    #[arg(long)]
    offline: bool,
    /// Rewrite a URL prefix, e.g. https://github.com/=http://127.0.0.1:8080/gh/ (repeatable;
    /// also $CT2V_MIRRORS, comma-separated); the longest matching prefix wins. A bare URL
    /// mirrors every host: https://HOST/PATH is fetched from URL/HOST/PATH
    #[arg(long = "mirror", value_name = "FROM=TO", env = "CT2V_MIRRORS", value_delimiter = ',', value_parser = parse_mirror)]
    mirrors: Vec<(String, String)>,
    /// Allow plain http:// to hosts other than loopback (the sha256 pin still checks files)
    #[arg(long)]
    allow_http: bool,
    /// Download inputs that have no sha256 pin yet and record the pin in the variant file, as
    /// `cargo xtask pin` does (without it, an unpinned input stops the build)
    #[arg(long)]
    allow_unpinned: bool,
    /// Files downloaded at the same time
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=64))]
    jobs: u16,
    /// Retries per file after a connection error, a stall or an HTTP 5xx
    #[arg(long, value_name = "N", default_value_t = 4)]
    retries: u32,
    /// Seconds to wait for a connection, or for the next bytes, before an attempt fails; at
    /// least 1 KiB must arrive in every such window. An input with no pinned size stops at
    /// 4 GiB
    #[arg(long, value_name = "SECONDS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    timeout: u64,
}

impl DownloadArgs {
    fn options(&self) -> download::Options {
        download::Options {
            mirrors: self.mirrors.clone(),
            allow_http: self.allow_http,
            offline: self.offline,
            retries: self.retries,
            jobs: usize::from(self.jobs),
            progress: true,
            timeout: Duration::from_secs(self.timeout),
            ..download::Options::default()
        }
    }
}

fn parse_mirror(text: &str) -> Result<(String, String), String> {
    let web = |url: &str| url.starts_with("http://") || url.starts_with("https://");
    match text.split_once('=') {
        Some((_, to)) if !to.is_empty() && !web(to) => Err(format!(
            "`{to}` is not an http:// or https:// URL: mirrors are web servers (ftp://, file:// \
             and other schemes are not downloaded from)"
        )),
        Some((from, to)) if !from.is_empty() && !to.is_empty() => {
            Ok((from.to_string(), to.to_string()))
        }
        None if text.starts_with("http://") || text.starts_with("https://") => {
            Ok((download::ANY_HOST.to_string(), text.to_string()))
        }
        _ => Err(format!(
            "`{text}` is neither FROM=TO (e.g. https://github.com/=https://mirror.example.com/github/) \
             nor a mirror URL for every host (e.g. http://127.0.0.1:8080/, which serves \
             https://github.com/a/b as http://127.0.0.1:8080/github.com/a/b)"
        )),
    }
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum PlatformArg {
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(err) if stdout_closed(&err) => ExitCode::SUCCESS,
        Err(err) => match err.downcast_ref::<InputError>() {
            Some(input) => {
                eprint!("error: {input}");
                ExitCode::from(2)
            }
            None => {
                eprintln!("error: {}", download::describe(err.as_ref()));
                ExitCode::from(1)
            }
        },
    }
}

/// Whether `err` is stdout's reader having gone away (`xtask matrix | head -n1`): what the
/// reader wanted has been written, so this is no failure (as for `ls | head`).
fn stdout_closed(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn run(cli: Cli) -> Result<ExitCode> {
    if let Some(dir) = &cli.cache_dir
        && dir.exists()
        && !dir.is_dir()
    {
        return Err(
            InputError::new(format!("--cache-dir {} is not a folder", dir.display()))
                .note("give a folder (it is created when missing)")
                .into(),
        );
    }
    let workspace = Workspace::locate(cli.root, cli.cache_dir)?;
    match cli.command {
        Command::Variants { json } => variants(&workspace, json),
        Command::Plan { selection, json } => {
            print_plan(&make_plan(&workspace, &selection)?, json)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Build {
            selection,
            dry_run,
            json,
            download,
        } => {
            let plan = make_plan(&workspace, &selection)?;
            if dry_run {
                print_plan(&plan, json)?;
                return Ok(ExitCode::SUCCESS);
            }
            let plan = pin_if_allowed(&workspace, &selection, plan, &download)?;
            build(&workspace, &plan, selection.sdk_dir.clone(), &download)
        }
        Command::Fetch {
            selection,
            download,
            no_wheels,
        } => {
            let plan = make_plan(&workspace, &selection)?;
            let plan = pin_if_allowed(&workspace, &selection, plan, &download)?;
            let cache = Cache::new(&workspace.cache_dir);
            let summary = fetch::fetch_plan(&cache, &plan, &download.options())?;
            for f in &summary.fetched {
                let how = if f.downloaded { "downloaded" } else { "cached" };
                println!("{:<28} {how:<10} {}", f.name, f.path.display());
            }
            eprintln!("{}", summary.line());
            if !download.offline
                && !no_wheels
                && let Some(requirements) = plan.venv_requirements()
            {
                let log_dir = workspace.log_dir(&plan.slot, plan.platform);
                std::fs::create_dir_all(&log_dir)?;
                let dir = xtask::wheelhouse::download(
                    &workspace.cache_dir,
                    plan.platform,
                    &plan.python,
                    &requirements,
                    &[format!("ctranslate2=={}", plan.ctranslate2)],
                    &log_dir.join("wheelhouse.log"),
                )?;
                eprintln!("build-tool and runtime wheels in {}", dir.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Pin {
            variant,
            ctranslate2,
            download,
        } => pin(&workspace, &variant, ctranslate2.as_deref(), &download),
        Command::Doctor { json } => {
            let report = xtask::doctor::examine();
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                print!("{}", report.text());
            }
            Ok(if report.verdict.ready {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Command::Patch {
            variant,
            ctranslate2,
            platform,
            check,
            source,
            download,
        } => {
            let selection = Selection {
                variant,
                platform,
                python: None,
                ctranslate2,
                cuda_arch: None,
                gpu_targets: None,
                sdk_dir: None,
                compiler_cache: CompilerCacheArg::Off,
            };
            let plan = make_plan(&workspace, &selection)?;
            patch_command(&workspace, &plan, check, source, &download)
        }
        Command::Verify {
            selection,
            numerics,
        } => verify(&workspace, &selection, numerics),
        Command::Bench {
            selection,
            size,
            threads,
            rounds,
            repeat,
            tokens,
            compute_types,
            env,
            offline,
            json,
        } => {
            let plan = make_plan(&workspace, &selection)?;
            let options = xtask::bench::Options {
                size,
                threads: threads
                    .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from)),
                rounds,
                repeat,
                tokens,
                compute_types,
                env,
                offline,
                json,
            };
            let log_dir = workspace.log_dir(&plan.variant, plan.platform);
            std::fs::create_dir_all(&log_dir)?;
            let log = log_dir.join("bench.log");
            std::fs::write(&log, "")?;
            let json = xtask::bench::run(&workspace, &plan, &options, &log)?;
            eprintln!("report: {} (log: {})", json.display(), log.display());
            Ok(ExitCode::SUCCESS)
        }
        Command::Bundle(args) => bundle(&workspace, &args),
        Command::Release {
            variants,
            platforms,
            pythons,
            from,
            ctranslate2,
            version,
            out,
            allow_linux_tag,
        } => {
            let platforms: Vec<Platform> = platforms.into_iter().map(Platform::from).collect();
            if let Some(version) = &version {
                safe_path::check_name(version).map_err(|why| {
                    InputError::new(format!("--version `{version}` is not allowed: {why}"))
                        .note("a version label names one folder, e.g. --version 4.7.1-1")
                })?;
            }
            let catalog = Catalog::load_for(&workspace.root, &[], ctranslate2.as_deref())?;
            let names: Vec<&str> = catalog.variant_names().collect();
            for v in &variants {
                if !names.contains(&v.as_str()) {
                    return Err(
                        InputError::new(format!("--variants: unknown variant `{v}`"))
                            .allowed(v, &names)
                            .into(),
                    );
                }
            }
            let versions: Vec<String> = ctranslate2.into_iter().collect();
            let all = matrix::matrix(&workspace.root, &versions)?.include;
            for p in &pythons {
                if !all.iter().any(|e| &e.python == p) {
                    let known: std::collections::BTreeSet<&str> =
                        all.iter().map(|e| e.python.as_str()).collect();
                    let known: Vec<&str> = known.into_iter().collect();
                    return Err(InputError::new(format!(
                        "--pythons: no variant builds for Python {p}"
                    ))
                    .allowed(p, &known)
                    .into());
                }
            }
            let mut built = Vec::new();
            for entry in all {
                let selected = (variants.is_empty() || variants.contains(&entry.variant))
                    && (platforms.is_empty() || platforms.contains(&entry.platform))
                    && (pythons.is_empty() || pythons.contains(&entry.python));
                if !selected {
                    continue;
                }
                let choices = Choices {
                    platform: Some(entry.platform),
                    python: Some(entry.python.clone()),
                    ..Choices::default()
                };
                let plan = plan::plan(&workspace, &catalog.resolve(&entry.variant, &choices)?);
                let dist = match &from {
                    Some(dir) => dir.join(&entry.artifact),
                    None => workspace
                        .work_dir(&entry.slot, entry.platform)
                        .join("dist")
                        .join(format!("py{}", entry.python)),
                };
                built.push(xtask::release::Built { plan, dist });
            }
            let Some(first) = built.first() else {
                anyhow::bail!("no matrix entry matches the --variants/--platforms/--pythons given");
            };
            let version = version.unwrap_or_else(|| first.plan.ctranslate2.clone());
            let out = out.unwrap_or_else(|| workspace.root.join("target/dist").join(&version));
            let manifest = xtask::release::release(&built, &version, &out, allow_linux_tag)?;
            for a in &manifest.artifacts {
                println!("{}  {}", a.sha256, a.path);
            }
            eprintln!(
                "released {} artifact(s) of {} build(s) into {}",
                manifest.artifacts.len(),
                built.len(),
                out.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::VerifyRelease { dir } => {
            let problems = xtask::release::verify(&dir)?;
            if problems.is_empty() {
                eprintln!(
                    "{}: every checksum, RECORD and manifest entry agrees",
                    dir.display()
                );
                Ok(ExitCode::SUCCESS)
            } else {
                for p in &problems {
                    eprintln!("error: {p}");
                }
                eprintln!("{} problem(s) in {}", problems.len(), dir.display());
                Ok(ExitCode::FAILURE)
            }
        }
        Command::Bump {
            ctranslate2,
            from,
            source,
            subdir,
            no_pin,
            download,
        } => {
            let request = xtask::bump::Request {
                version: ctranslate2,
                from,
                source,
                subdir,
            };
            bump(&workspace, &request, no_pin, &download)
        }
        Command::Matrix { json, ctranslate2 } => {
            let matrix = matrix::matrix(&workspace.root, &ctranslate2)?;
            if json {
                println!("{}", serde_json::to_string(&matrix)?);
            } else {
                for entry in &matrix.include {
                    println!(
                        "{:<14} {:<8} {:<16} py{:<6} {}",
                        entry.variant,
                        entry.ctranslate2,
                        entry.platform,
                        entry.python,
                        entry.runs_on
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn build(
    workspace: &Workspace,
    plan: &plan::Plan,
    sdk_root: Option<PathBuf>,
    download: &DownloadArgs,
) -> Result<ExitCode> {
    eprintln!(
        "building {} for {} (Python {}): {} steps; logs in {}",
        plan.variant,
        plan.platform,
        plan.python,
        plan.steps.len(),
        workspace.log_dir(&plan.slot, plan.platform).display()
    );
    for note in &plan.notes {
        eprintln!("note: {note}");
    }
    let mut runner = Runner {
        cache: Cache::new(&workspace.cache_dir),
        download: download.options(),
        found: bundle_spec::Found {
            sdk_root,
            toolchain: None,
            sdk_version: None,
        },
        sdk_found: None,
        msvc: None,
        cuda_arch: None,
    };
    let mut executor = Executor::new(
        plan,
        workspace.state_dir(&plan.slot, plan.platform, &plan.python),
        workspace.log_dir(&plan.slot, plan.platform),
    );
    let report = executor.run(&mut runner)?;
    eprintln!(
        "done in {:.1} s: {} step(s) ran, {} up to date",
        report.seconds,
        report.ran.len(),
        report.skipped.len()
    );
    for (step, why) in &report.not_run {
        eprintln!("warning: step `{step}` did not run: {why}");
    }
    for artifact in &plan.artifacts {
        println!("{artifact}");
    }
    Ok(ExitCode::SUCCESS)
}

fn verify(workspace: &Workspace, selection: &Selection, numerics: bool) -> Result<ExitCode> {
    let plan = make_plan(workspace, selection)?;
    let step = plan
        .steps
        .iter()
        .find(|s| matches!(s.action, plan::Action::Verify))
        .expect("every plan has a verify step");
    for wheel in &step.inputs {
        if !std::path::Path::new(wheel).is_file() {
            anyhow::bail!(
                "{wheel} is not there: build it first with `cargo xtask build --variant {}`",
                plan.variant
            );
        }
    }
    let log_dir = workspace.log_dir(&plan.slot, plan.platform);
    std::fs::create_dir_all(&log_dir)?;
    let log = log_dir.join("verify.log");
    std::fs::write(&log, "")?;
    for command in &step.commands {
        xtask::exec::run_logged(command, &step.env, &log, &mut |line| {
            if !line.starts_with("Requirement already satisfied") {
                // A closed stdout only loses the echo; the log keeps every line.
                use std::io::Write as _;
                let _ = writeln!(std::io::stdout().lock(), "{line}");
            }
        })?;
    }
    eprintln!(
        "verified {} (log: {})",
        step.inputs.join(", "),
        log.display()
    );
    if numerics {
        let log = log_dir.join("numerics.log");
        std::fs::write(&log, "")?;
        xtask::numerics::check(workspace, &plan, &log)?;
        eprintln!("numerics match the official wheel (log: {})", log.display());
    }
    Ok(ExitCode::SUCCESS)
}

fn patch_command(
    workspace: &Workspace,
    plan: &plan::Plan,
    check: bool,
    source: Option<PathBuf>,
    download: &DownloadArgs,
) -> Result<ExitCode> {
    let Some((series, patches)) = plan.steps.iter().find_map(|s| match &s.action {
        plan::Action::Patch {
            series, patches, ..
        } => Some((series.clone(), patches.clone())),
        _ => None,
    }) else {
        return Err(xtask::diagnostic::InputError::new(format!(
            "variant `{}` has no patch series (`patches = \"…/series\"` in its variant file)",
            plan.variant
        ))
        .into());
    };
    let patches: Vec<PathBuf> = patches.iter().map(PathBuf::from).collect();
    let log_dir = workspace.log_dir(&plan.slot, plan.platform);
    std::fs::create_dir_all(&log_dir)?;
    let log = log_dir.join("patch-check.log");
    std::fs::write(&log, "")?;
    let unpacked;
    let tree = match source {
        Some(dir) if dir.is_dir() => dir,
        Some(dir) => anyhow::bail!("--source {} is not a folder", dir.display()),
        None => {
            unpacked = pinned_source(workspace, plan, download)?;
            unpacked.path().join("ctranslate2")
        }
    };
    if !check {
        xtask::patch::apply_series(&patches, &tree, &log)?;
        println!("{} is patched with {series}", tree.display());
        return Ok(ExitCode::SUCCESS);
    }
    let outcomes = xtask::patch::check_series(&patches, &tree, &log)?;
    for (p, outcome) in patches.iter().zip(&outcomes) {
        let name = p.file_name().unwrap_or_default().to_string_lossy();
        let said = match outcome {
            xtask::patch::Check::AlreadyThere => "already in the tree",
            _ => "applies",
        };
        println!("{name}: {said}");
    }
    eprintln!(
        "{series}: {} patch(es) apply in order to {}; nothing was changed",
        patches.len(),
        tree.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The plan's pinned CTranslate2 source, fetched if needed and unpacked into a temp folder.
fn pinned_source(
    workspace: &Workspace,
    plan: &plan::Plan,
    download: &DownloadArgs,
) -> Result<tempfile::TempDir> {
    let Some(input) = plan
        .inputs
        .iter()
        .find(|i| i.name == plan::SOURCE_INPUT)
        .cloned()
    else {
        anyhow::bail!(
            "variant `{}` takes its source from no pinned archive: pass --source DIR",
            plan.variant
        );
    };
    let only_source = plan::Plan {
        inputs: vec![input.clone()],
        ..plan.clone()
    };
    fetch::fetch_plan(
        &Cache::new(&workspace.cache_dir),
        &only_source,
        &download.options(),
    )?;
    let subdir = plan.steps.iter().find_map(|s| match &s.action {
        plan::Action::Unpack {
            input: i, subdir, ..
        } if i == &input.name => subdir.clone(),
        _ => None,
    });
    let dir = tempfile::tempdir()?;
    let tree = dir.path().join("ctranslate2");
    eprintln!("unpacking {} into {}", input.file_name, tree.display());
    let archive = PathBuf::from(input.cache_path.as_deref().unwrap_or_default());
    xtask::unpack::unpack_input(
        &input.name,
        &archive,
        &input.file_name,
        subdir.as_deref(),
        &tree,
    )?;
    Ok(dir)
}

fn bump(
    workspace: &Workspace,
    request: &xtask::bump::Request,
    no_pin: bool,
    download: &DownloadArgs,
) -> Result<ExitCode> {
    let version = request.version.as_str();
    let mut bumped = xtask::bump::bump(&workspace.root, request)?;
    println!("wrote {} (from {})", bumped.file.display(), bumped.from);
    for (from, to) in &bumped.series {
        println!("copied {} to {}", from.display(), to.display());
    }
    for url in &bumped.renamed {
        println!("renamed, to pin: {url}");
    }
    for note in &bumped.notes {
        println!("note: {note}");
    }
    if no_pin {
        bumped.by_hand.push(format!(
            "pin the inputs: `cargo xtask pin --variant V --ctranslate2 {version}` for each variant"
        ));
    } else {
        for variant in Catalog::names(&workspace.root)? {
            let catalog = Catalog::load_for(&workspace.root, &[variant.as_str()], Some(version))?;
            if Platform::ALL
                .iter()
                .all(|p| !catalog.has_source(&variant, *p))
            {
                bumped.by_hand.push(format!(
                    "{variant}: no source for CTranslate2 {version} yet"
                ));
                continue;
            }
            println!("== pin {variant}");
            if pin(workspace, &variant, Some(version), download)? != ExitCode::SUCCESS {
                bumped.by_hand.push(format!(
                    "{variant}: some inputs could not be downloaded from here (above); pin them \
                     where a network reaches them: `cargo xtask pin --variant {variant} --ctranslate2 {version}`"
                ));
            }
        }
        for variant in Catalog::names(&workspace.root)? {
            let selection = Selection {
                variant: variant.clone(),
                platform: None,
                python: None,
                ctranslate2: Some(version.to_string()),
                cuda_arch: None,
                gpu_targets: None,
                sdk_dir: None,
                compiler_cache: CompilerCacheArg::Off,
            };
            let Ok(plan) = make_plan(workspace, &selection) else {
                continue;
            };
            if !plan
                .steps
                .iter()
                .any(|s| matches!(s.action, plan::Action::Patch { .. }))
            {
                continue;
            }
            println!("== patch --check {variant}");
            if let Err(e) = patch_command(workspace, &plan, true, None, download) {
                eprintln!("error: {e:#}");
                bumped.by_hand.push(format!(
                    "{variant}: the patch series does not apply to {version} (above): refresh it \
                     in patches/ctranslate2-{version}/ and run `cargo xtask patch --check --variant \
                     {variant} --ctranslate2 {version}`"
                ));
            }
        }
    }
    if bumped.by_hand.is_empty() {
        println!(
            "CTranslate2 {version} is ready: `cargo xtask build --variant cpu --ctranslate2 {version}`"
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!("left to do by hand:");
    for item in &bumped.by_hand {
        println!("  - {item}");
    }
    Ok(ExitCode::FAILURE)
}

fn pin(
    workspace: &Workspace,
    variant: &str,
    ctranslate2: Option<&str>,
    download: &DownloadArgs,
) -> Result<ExitCode> {
    let catalog = Catalog::load_for(&workspace.root, &[variant], ctranslate2)?;
    let plans = fetch::plans_of_variant(workspace, &catalog, variant)?;
    let cache = Cache::new(&workspace.cache_dir);
    let outcomes = fetch::pin_inputs(&catalog, &cache, &plans, &download.options())?;
    let mut failed = 0;
    for outcome in &outcomes {
        match &outcome.result {
            Ok(PinAction::Confirmed) => println!("{:<28} confirmed by the lock", outcome.name),
            Ok(PinAction::Verified) => println!("{:<28} verified, pin unchanged", outcome.name),
            Ok(PinAction::Written(files)) => {
                let names: Vec<String> = files
                    .iter()
                    .map(|f| {
                        f.strip_prefix(&workspace.root)
                            .unwrap_or(f)
                            .display()
                            .to_string()
                    })
                    .collect();
                println!("{:<28} pinned in {}", outcome.name, names.join(", "));
            }
            Err(e) => {
                failed += 1;
                eprintln!("error: {e:#}");
            }
        }
    }
    if failed > 0 {
        eprintln!(
            "{failed} of {} input(s) could not be pinned; the others were written",
            outcomes.len()
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

fn bundle(workspace: &Workspace, args: &BundleArgs) -> Result<ExitCode> {
    let mut spec = match &args.variant {
        Some(variant) => {
            let selection = Selection {
                variant: variant.clone(),
                platform: args.platform,
                python: args.python.clone(),
                ctranslate2: args.ctranslate2.clone(),
                cuda_arch: None,
                gpu_targets: args.gpu_targets.clone(),
                sdk_dir: args.sdk_dir.clone(),
                compiler_cache: CompilerCacheArg::Off,
            };
            let plan = make_plan(workspace, &selection)?;
            let spec_wheel = plan_wheel(&plan);
            if let Some(wheel) = spec_wheel.filter(|w| !w.is_file()) {
                anyhow::bail!(
                    "the wheel to bundle for, {}, is not there yet: build it first \
                     (`cargo xtask build --variant {variant}`), or bundle another wheel with --wheel",
                    wheel.display()
                );
            }
            let found = bundle_spec::Found {
                sdk_root: args.sdk_dir.clone(),
                toolchain: args.toolchain_dir.clone(),
                sdk_version: None,
            };
            bundle_spec::from_plan(&plan, &found)?
        }
        None => wheel_spec(args)?,
    };
    spec.assume_present
        .extend(args.assume_present.iter().cloned());
    if let Some(out) = &args.out {
        bundle_run::check_out(out)?;
        spec.out = out.clone();
    }
    let outcome = bundle_run::run(&spec)?;
    print!("{}", outcome.report.summary());
    for artifact in &outcome.artifacts {
        println!("wrote {}", spec.out.join(artifact).display());
    }
    Ok(ExitCode::SUCCESS)
}

/// The wheel a plan's bundle step starts from.
fn plan_wheel(plan: &plan::Plan) -> Option<PathBuf> {
    plan.steps.iter().find_map(|s| match &s.action {
        plan::Action::Bundle(b) => Some(PathBuf::from(&b.wheel)),
        _ => None,
    })
}

/// A DEST given in a flag: relative, inside the wheel (see `safe_path`).
fn flag_path(flag: &str, given: &str, dest: &str) -> Result<(), InputError> {
    safe_path::check_relative(dest).map_err(|why| {
        InputError::new(format!(
            "{flag} `{given}`: DEST `{}` is not allowed: {why}",
            dest.escape_debug()
        ))
        .note("DEST is a folder inside the wheel, e.g. ctranslate2")
    })
}

/// The spec of `bundle --wheel`: everything from flags.
fn wheel_spec(args: &BundleArgs) -> Result<bundle_run::Spec> {
    let wheel = args
        .wheel
        .clone()
        .expect("clap requires --wheel without --variant");
    if !wheel.is_file() {
        return Err(InputError::new(format!("--wheel {} does not exist", wheel.display())).into());
    }
    let name = wheel
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let policy = match args.policy {
        Some(PolicyArg::Windows) => Policy::Windows,
        Some(PolicyArg::Manylinux2_28) => Policy::Manylinux2_28,
        None if name.contains("win_amd64") || name.contains("win32") => Policy::Windows,
        None if name.contains("linux") => Policy::Manylinux2_28,
        None => anyhow::bail!(
            "cannot tell the platform of {name} from its tags: pass --policy windows or --policy manylinux_2_28"
        ),
    };
    let default_dest = args
        .roots
        .first()
        .and_then(|r| r.rsplit_once('/'))
        .map(|(dir, _)| dir.to_string());
    let mut search = Vec::new();
    for s in &args.search {
        let (dir, dest) = match s.rsplit_once('=') {
            Some((dir, dest)) => (dir, Some(dest.to_string())),
            None => (s.as_str(), None),
        };
        let dir = PathBuf::from(dir);
        if !dir.is_dir() {
            let why = if dir.as_os_str().is_empty() {
                "names no folder (DIR=DEST)"
            } else if dir.exists() {
                "is not a folder"
            } else {
                "does not exist"
            };
            return Err(
                InputError::new(format!("--search `{s}`: `{}` {why}", dir.display()))
                    .note("--search takes a folder of libraries, e.g. --search sdk/bin=ctranslate2")
                    .into(),
            );
        }
        let dest = dest.or_else(|| default_dest.clone()).unwrap_or_default();
        flag_path("--search", s, &dest)?;
        search.push(bundle_run::Search {
            dir: bundle_run::SearchDir::Dir(dir),
            dest,
            package: None,
            counts_as_sdk: true,
        });
    }
    let mut data = Vec::new();
    for d in &args.data {
        let Some((glob, dest)) = d.rsplit_once('=') else {
            return Err(
                InputError::new(format!("--data `{d}` is not DIR/PATTERN=DEST"))
                    .note("e.g. --data 'sdk/bin/rocblas/library/*=ctranslate2/rocblas/library'")
                    .into(),
            );
        };
        flag_path("--data", d, dest)?;
        let (dir, pattern) = glob.rsplit_once('/').unwrap_or((".", glob));
        data.push(bundle_run::Data {
            base: PathBuf::from(dir),
            glob: pattern.to_string(),
            dest: dest.to_string(),
            filter_gpu_targets: args.gpu_targets.is_some(),
        });
    }
    let outputs = if args.outputs.is_empty() {
        vec![Output::FatWheel, Output::Portable, Output::Report]
    } else {
        args.outputs
            .iter()
            .map(|o| match o {
                OutputArg::FatWheel => Output::FatWheel,
                OutputArg::Portable => Output::Portable,
                OutputArg::Report => Output::Report,
            })
            .collect()
    };
    Ok(bundle_run::Spec {
        wheel,
        policy,
        manylinux: xtask::bundle::manylinux::target(policy).map(str::to_string),
        // A wheel given by hand has no plan that fixed its name: when its binaries need a
        // newer glibc than the policy allows, it gets the tag they prove.
        manylinux_newer_ok: true,
        roots: args.roots.clone(),
        force: args.force.clone(),
        assume_present: Vec::new(),
        search,
        data,
        gpu_targets: args.gpu_targets.clone().unwrap_or_default(),
        outputs,
        out: args.out.clone().expect("clap requires --out with --wheel"),
        patchelf: None,
        variant: name.split('-').next().unwrap_or("wheel").to_string(),
        platform: match policy {
            Policy::Windows => "windows".into(),
            Policy::Manylinux2_28 => "linux".into(),
        },
        missing_hint: String::new(),
        keep_linux_tag: args.keep_linux_tag,
    })
}

fn variants(workspace: &Workspace, json: bool) -> Result<ExitCode> {
    let catalog = Catalog::load(&workspace.root, &[])?;
    let rows: Vec<(&str, &str)> = catalog
        .variant_names()
        .map(|n| (n, catalog.description(n)))
        .collect();
    if json {
        let list: Vec<_> = rows
            .iter()
            .map(
                |(name, description)| serde_json::json!({"name": name, "description": description}),
            )
            .collect();
        println!("{}", serde_json::to_string_pretty(&list)?);
    } else {
        let width = rows.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
        for (name, description) in rows {
            println!("{name:<width$}  {description}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn make_plan(workspace: &Workspace, selection: &Selection) -> Result<plan::Plan> {
    let catalog = Catalog::load_for(
        &workspace.root,
        &[selection.variant.as_str()],
        selection.ctranslate2.as_deref(),
    )?;
    let choices = Choices {
        platform: selection.platform.map(Platform::from),
        host_glibc: host::glibc_version(),
        host_python: if selection.python.is_none() {
            host::python_version()
        } else {
            None
        },
        python: selection.python.clone(),
        cuda_arch: selection.cuda_arch.clone(),
        gpu_targets: selection.gpu_targets.clone(),
        target_family: std::env::var("ROCM_SDK_TARGET_FAMILY")
            .ok()
            .filter(|f| !f.trim().is_empty()),
        compiler_cache: selection.compiler_cache.program(),
        sdk_dir: selection.sdk_dir.clone(),
    };
    let resolved = catalog.resolve(&selection.variant, &choices)?;
    Ok(plan::plan(workspace, &resolved))
}

/// With `--allow-unpinned`, downloads the plan's unpinned inputs, records their sha256 and
/// size in the variant files (as `pin` does) and plans again; otherwise the plan as it is.
fn pin_if_allowed(
    workspace: &Workspace,
    selection: &Selection,
    plan: plan::Plan,
    download: &DownloadArgs,
) -> Result<plan::Plan> {
    let unpinned = plan.inputs.iter().filter(|i| i.sha256.is_none()).count();
    if unpinned == 0 || !download.allow_unpinned {
        return Ok(plan);
    }
    eprintln!(
        "warning: --allow-unpinned: pinning {unpinned} input(s) of `{}` from what the network serves now; review and commit the variant file",
        plan.variant
    );
    let catalog = Catalog::load_for(
        &workspace.root,
        &[plan.variant.as_str()],
        Some(&plan.ctranslate2),
    )?;
    let cache = Cache::new(&workspace.cache_dir);
    let unpinned_plan = plan::Plan {
        inputs: plan
            .inputs
            .iter()
            .filter(|i| i.sha256.is_none())
            .cloned()
            .collect(),
        ..plan
    };
    let outcomes = fetch::pin_inputs(
        &catalog,
        &cache,
        std::slice::from_ref(&unpinned_plan),
        &download.options(),
    )?;
    let mut errors = Vec::new();
    for outcome in outcomes {
        match outcome.result {
            Ok(_) => eprintln!("pinned {} ({})", outcome.name, outcome.url),
            Err(e) => {
                let hints = fetch::package_hints(&unpinned_plan, &[outcome.name.as_str()]);
                errors.push(format!("{}{hints}", download::describe(e.as_ref())));
            }
        }
    }
    if !errors.is_empty() {
        anyhow::bail!("{}\nnothing was built", errors.join("\n"));
    }
    make_plan(workspace, selection)
}

fn print_plan(plan: &plan::Plan, json: bool) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(plan)?);
    } else {
        print!("{}", plan::render_text(plan));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        super::Cli::command().debug_assert();
    }
}
