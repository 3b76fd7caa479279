//! The command line's types (clap): what each command takes. `cmd/` does the work.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::support::platform::Platform;
use crate::{inputs::download, support::host};

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
pub struct Cli {
    /// The ct2-variants checkout (default: found from the current folder)
    #[arg(long, global = true, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// The download cache (default: target/xtask/cache, or $CT2V_CACHE_DIR)
    #[arg(long, global = true, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
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
        #[command(flatten)]
        part: PartArgs,
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
        after_help = "Examples:\n  cargo xtask doctor\n  cargo xtask doctor --json\n  \
                      cargo xtask doctor --variant cuda --python 3.12   # can this build run here?\n\n\
                      With --variant: only what that one build needs (the C++ compiler, the \
                      Python, the MSVC x64 environment for Windows source builds, the SDK and a \
                      CUDA that compiles with this MSVC, every input pinned); CI runs it after \
                      its installs.\n\n\
                      Exit codes: 0 the recommended variant (or the one given) can be built or \
                      used here, 1 not yet (the next steps say what is missing), 2 bad input."
    )]
    Doctor {
        /// Print the facts and the verdict as JSON
        #[arg(long)]
        json: bool,
        /// Check only what building this variant needs on this machine
        #[arg(long, value_name = "NAME")]
        variant: Option<String>,
        /// With --variant: the platform (default: this host)
        #[arg(long, value_name = "PLATFORM", requires = "variant")]
        platform: Option<PlatformArg>,
        /// With --variant: the Python version (default: the host's python3)
        #[arg(long, value_name = "X.Y", requires = "variant")]
        python: Option<String>,
        /// With --variant: the CTranslate2 version
        #[arg(long, value_name = "VERSION", requires = "variant")]
        ctranslate2: Option<String>,
        /// With --variant: the GPU SDK on disk to check instead of searching for one
        #[arg(long, value_name = "DIR", requires = "variant")]
        sdk_dir: Option<PathBuf>,
        /// With --variant: the C++ library comes from another run (`build --prebuilt-native`):
        /// no SDK is needed here unless the bundle copies files from it
        #[arg(long, requires = "variant")]
        prebuilt_native: bool,
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
    Patch(PatchArgs),
    /// Install a built wheel into a fresh venv and check that it imports and works
    #[command(
        long_about = "Install the wheel a build left in its output folder into a fresh venv (no \
                      LD_LIBRARY_PATH, no SDK on PATH) and check `import ctranslate2`, its \
                      version, and the compute types the variant promises for each device \
                      (variants/*.toml [verify.compute-types]). The same check is the build's \
                      `verify` step; this command reruns it on its own.\n\n\
                      --transcribe also installs the pinned faster-whisper (wheels/transcribe.txt, \
                      --no-deps, so the built ctranslate2 is the one imported) into that venv and \
                      transcribes real speech: by default the pinned Whisper base model and the \
                      11-second JFK clip (variants/speech/check.toml, fetched and cached like \
                      every input). It prints the transcript, the device and compute type \
                      CTranslate2 actually used, the real-time factor and the word error rate \
                      against the reference, and fails above the pinned maximum WER. Logs: \
                      target/xtask/logs/<variant>/<platform>/transcribe.log.",
        after_help = "Examples:\n  cargo xtask verify --variant cpu\n  cargo xtask verify --variant cpu --numerics\n  \
                      cargo xtask verify --variant cpu --transcribe\n  \
                      cargo xtask verify --variant cuda --transcribe --device cuda --compute-type int8_float16\n  \
                      cargo xtask verify --variant cpu --transcribe --audio me.wav --reference \"hello world\"\n\n\
                      Exit codes: 0 the wheel works, 1 it does not (or was not built), 2 bad input \
                      (a model folder that is no Whisper model, a corrupt model.bin, audio that \
                      cannot be decoded or is silent, --device cuda with no GPU)."
    )]
    Verify {
        #[command(flatten)]
        selection: CheckSelection,
        /// Also compare a tiny random Whisper model's encoder output with the official wheel's
        /// (needs network for torch, transformers and the official ctranslate2 from PyPI)
        #[arg(long)]
        numerics: bool,
        /// Also transcribe real speech with faster-whisper on the built wheel
        #[arg(long)]
        transcribe: bool,
        #[command(flatten)]
        speech: SpeechArgs,
    },
    /// Freeze a speech app with PyInstaller from the bundle's portable/ and run it with no SDK
    #[command(
        long_about = "Prove what ships: transcribe the clip in the verify venv (as `verify \
                      --transcribe`), then make a one-folder PyInstaller app from the built \
                      portable/ folder (the generated .spec is the one docs/frozen-apps.md tells \
                      an app to write; PyInstaller pinned in wheels/freeze.txt), copy it into a \
                      fresh folder as a user who unzipped it would have it, and run it there \
                      with a scrubbed environment: no LD_LIBRARY_PATH, PYTHONPATH, HIP_PATH, \
                      CUDA_PATH or virtualenv, PATH only the system's folders. It must print \
                      the same transcript, and no library it loads may come from outside the \
                      app and the system's folders (an SDK, a Python) unless --allow-outside \
                      names that folder. Prints the app's size and each bundled SDK library's.",
        after_help = "Examples:\n  cargo xtask smoke --variant cpu --frozen\n  \
                      cargo xtask smoke --variant cuda --frozen --device cuda --compute-type float16\n\n\
                      Exit codes: 0 the frozen app transcribes like the wheel, 1 it does not, 2 bad input."
    )]
    Smoke {
        #[command(flatten)]
        selection: CheckSelection,
        /// Freeze the app with PyInstaller and run the copy (the one smoke test so far)
        #[arg(long)]
        frozen: bool,
        /// A folder the frozen app may load libraries from although it is outside the app and
        /// the system's folders (repeatable), e.g. a CUDA toolkit on a machine where cuBLAS is
        /// not bundled; what loaded from there is listed
        #[arg(long, value_name = "DIR")]
        allow_outside: Vec<String>,
        #[command(flatten)]
        speech: SpeechArgs,
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
    Bench(BenchArgs),
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
    /// Install a variant's GPU SDK unattended from its pinned installer (hosted CI runners)
    #[command(
        long_about = "Install the GPU SDK a build needs, unattended, from the installer the \
                      variant names ([sdk] installer: an input pinned by sha256 and size like any \
                      other, never fetched by `build`). Nothing runs when a fitting SDK is \
                      already found (--force runs the installer anyway). The installer runs with \
                      the variant's arguments, its output in \
                      target/xtask/logs/<variant>/<platform>/install-sdk.log, and is stopped \
                      after the variant's time limit; afterwards the SDK must be found exactly \
                      as `build` finds it. Meant for hosted CI runners: on your own machine, \
                      install the SDK as its vendor documents (docs/gpu-setup.md).",
        after_help = "Example:\n  cargo xtask install-sdk --variant rocm-gfx1010 --platform windows-x86_64\n\n\
                      Exit codes: 0 the SDK is there (installed now or before), 1 the download, \
                      the installer or the check afterwards failed, 2 bad input (a variant with \
                      no installer, another platform)."
    )]
    InstallSdk {
        #[command(flatten)]
        selection: Selection,
        #[command(flatten)]
        download: DownloadArgs,
        /// Run the installer even when a fitting SDK is found
        #[arg(long)]
        force: bool,
        /// Stop the installer after this many seconds (default: the variant's
        /// `installer-minutes`)
        #[arg(long, value_name = "SECONDS")]
        installer_timeout: Option<u64>,
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
                      --force 'cublas*.dll' --search nvidia_cublas/nvidia/cublas/bin=. \\\n      \
                      --assume-present msvcp140.dll --out dist/cuda\n\n\
                      Exit codes: 0 bundled, 1 a library could not be found or a file not read \
                      (the message lists each missing library and who imports it), 2 bad input."
    )]
    Bundle(BundleArgs),
    /// Gather the built artifacts of the matrix into a release folder with checksums
    #[command(
        long_about = "Gather the artifacts of each selected variant × platform × Python (the \
                      wheel, the portable folder as a zip, the provenance reports) into one \
                      flat folder, target/dist/<version>/ (--out), as a GitHub release publishes \
                      them: wheels labelled with their variant's PEP 440 local version \
                      (+cpu, +cu12…), the other files prefixed with their entry, \
                      manifest.json (inputs, SDK, bundled libraries, sizes, sha256), \
                      RELEASE_NOTES.md, SHA256SUMS (`sha256sum -c SHA256SUMS` checks it) and a \
                      pip index per variant in whl/<variant>/. Every selected entry must have \
                      been built; a Linux wheel built outside the manylinux_2_28 image needs a \
                      newer glibc than manylinux_2_28 and is refused unless \
                      --allow-linux-tag (a local release for this machine only). The folder is \
                      written in a temp folder and renamed into place, and an existing release \
                      is never replaced.",
        after_help = "Examples:\n  cargo xtask release --variants cpu --platforms linux-x86_64 --pythons 3.11 --allow-linux-tag\n  \
                      cargo xtask release --from artifacts/   # CI: one folder per entry, \
                      named <variant>-<platform>-py<X.Y>\n\n\
                      Exit codes: 0 released, 1 something missing or inconsistent, 2 bad input."
    )]
    Release(ReleaseArgs),
    /// Write the pip index of every release as a static site (GitHub Pages)
    #[command(
        long_about = "Write the static site that serves the pip index of every release: \
                      whl/<variant>/ctranslate2/index.html links each wheel of that variant in \
                      this release and in the earlier ones (each a folder <tag>/ holding its \
                      manifest.json, as `gh release download TAG -p manifest.json` leaves it), \
                      by absolute URL to the release asset (<download-base><tag>/<file>) with \
                      its sha256. A Pages deployment replaces the whole site, so an older \
                      version stays installable only if the site lists it too.",
        after_help = "Example:\n  cargo xtask pages --release dist/4.7.1 --tag v4.7.1 --earlier earlier/ \\\n      \
                      --download-base https://github.com/OWNER/REPO/releases/download/ --out site\n\n\
                      Exit codes: 0 written, 1 failure, 2 bad input."
    )]
    Pages {
        /// This release's folder (its manifest.json)
        #[arg(long, value_name = "DIR")]
        release: PathBuf,
        /// This release's tag (the folder of its download URL)
        #[arg(long, value_name = "TAG")]
        tag: String,
        /// A folder of earlier releases: <tag>/manifest.json each
        #[arg(long, value_name = "DIR")]
        earlier: Option<PathBuf>,
        /// Where release assets are downloaded from, ending in `/`; the tag follows
        #[arg(long, value_name = "URL")]
        download_base: String,
        /// The site folder to write (new, or empty)
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
    /// Check a release folder: SHA256SUMS, every wheel's RECORD, the manifest; --install: as users install it
    #[command(
        long_about = "Check a release folder: SHA256SUMS, every wheel's RECORD, the manifest, \
                      the pip index. With --install, also install it the way its users do: the \
                      folder is served over loopback HTTP, a fresh Python that already has \
                      PyPI's ctranslate2==X runs `pip install --force-reinstall --index-url \
                      http://127.0.0.1:PORT/whl/<variant> \"ctranslate2==X+<local>\"` (the \
                      consumer's onboarding step), and the result must report X+<local>, import, \
                      and with --transcribe transcribe the pinned clip. A Windows release on a \
                      Linux host installs into python.org's Windows Python under wine; --pyapp \
                      does it through a PyApp exe as the consumer ships (Windows wheels).",
        after_help = "Examples:\n  cargo xtask verify-release target/dist/4.7.1\n  \
                      cargo xtask verify-release target/dist/4.7.1 --install --transcribe\n  \
                      cargo xtask verify-release target/dist/4.7.1 --install --platform windows-x86_64 --python 3.12 --variant cpu --pyapp\n\n\
                      Exit codes: 0 the release checks out (and installs), 1 it does not, 2 bad input."
    )]
    VerifyRelease {
        /// The release folder
        dir: PathBuf,
        #[command(flatten)]
        install: InstallArgs,
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
    /// Print the GitHub Actions matrix (variant × platform × Python). Entries that need a
    /// self-hosted runner or have inputs not pinned yet are left out unless asked; each one
    /// left out is named on stderr with why
    #[command(
        after_help = "Example (in a workflow; assign first, so that a failure stops the step):\n  \
                      matrix=$(cargo xtask matrix --json)\n  echo \"matrix=$matrix\" >> \"$GITHUB_OUTPUT\""
    )]
    Matrix {
        /// Print one line of JSON (for `fromJSON`) instead of a table
        #[arg(long)]
        json: bool,
        /// The native jobs instead: one per variant and platform that compiles, building the
        /// C++ library once for all its Pythons (`build --until install-ctranslate2`)
        #[arg(long)]
        native: bool,
        /// CTranslate2 versions to span, e.g. 4.7.1,4.8.4 (default: each variant's)
        #[arg(long, value_name = "LIST", value_delimiter = ',')]
        ctranslate2: Vec<String>,
        /// Only the entries of one lane: `gpu` (the native job compiles GPU kernels, hours
        /// for CUDA) or `main` (the rest); build.yml runs each lane's jobs apart
        #[arg(long, value_name = "LANE", value_parser = ["main", "gpu"])]
        lane: Option<String>,
        #[command(flatten)]
        include: IncludeArgs,
    },
}

// `patch` (a struct, so that its command takes one value).
#[derive(Args)]
pub struct PatchArgs {
    /// The variant whose series is used
    #[arg(long, value_name = "NAME")]
    pub variant: String,
    /// The CTranslate2 version (default: the variant's)
    #[arg(long, value_name = "VERSION")]
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
    #[arg(long, value_name = "VERSION")]
    pub ctranslate2: Option<String>,
    /// The release's version label (default: the CTranslate2 version)
    #[arg(long, value_name = "VERSION")]
    pub version: Option<String>,
    /// The release folder (default: target/dist/<version>)
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Release Linux wheels tagged `linux_x86_64` (not proven manylinux; PyPI refuses
    /// them) instead of stopping
    #[arg(long)]
    pub allow_linux_tag: bool,
    /// Where the wheels are downloaded from, for the links of the pip index (`whl/<variant>/`),
    /// e.g. https://github.com/OWNER/REPO/releases/download/v4.7.1/ (default: links relative
    /// to the release folder, for hosting the folder as it is)
    #[arg(long, value_name = "URL")]
    pub index_base_url: Option<String>,
    #[command(flatten)]
    pub include: IncludeArgs,
}

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
    pub fn opt(self) -> crate::plan::matrix::Opt {
        crate::plan::matrix::Opt {
            self_hosted: self.include_self_hosted,
            unpinned: self.include_unpinned,
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
    #[arg(long, value_name = "VERSION")]
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
    #[arg(long, value_name = "DIR", visible_aliases = ["sdk-root", "rocm-path"])]
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
    /// for Linux)
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
    #[arg(long, value_name = "VERSION")]
    pub ctranslate2: Option<String>,
    /// CUDA architectures the build was made for (its folder does not depend on them)
    #[arg(long, value_name = "LIST")]
    pub cuda_arch: Option<String>,
}

impl Selection {
    /// A variant with every choice left to its default and no compiler cache (for commands
    /// that plan without building: patch, bump, bundle).
    pub fn only(variant: String) -> Selection {
        Selection {
            variant,
            platform: None,
            python: None,
            ctranslate2: None,
            cuda_arch: None,
            gpu_targets: None,
            sdk_dir: None,
            compiler_cache: CompilerCacheArg::Off,
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

/// `bundle`: a variant's bundle step, or a wheel with explicit folders.
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
    #[arg(long, value_name = "VERSION", requires = "variant")]
    pub ctranslate2: Option<String>,
    /// With --variant: the GPU SDK on disk (as for `build --sdk-dir`)
    #[arg(long, value_name = "DIR", requires = "variant", visible_aliases = ["sdk-root", "rocm-path"])]
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

/// How downloads are made.
#[derive(Args)]
pub struct DownloadArgs {
    /// Use only the cache; fail with the list of missing inputs instead of downloading
    #[arg(long)]
    pub offline: bool,
    /// Rewrite a URL prefix, e.g. https://github.com/=http://127.0.0.1:8080/gh/ (repeatable;
    /// also $CT2V_MIRRORS, comma-separated); the longest matching prefix wins. A bare URL
    /// mirrors every host: https://HOST/PATH is fetched from URL/HOST/PATH
    #[arg(long = "mirror", value_name = "FROM=TO", env = "CT2V_MIRRORS", value_delimiter = ',', value_parser = parse_mirror)]
    pub mirrors: Vec<(String, String)>,
    /// Allow plain http:// to hosts other than loopback (the sha256 pin still checks files)
    #[arg(long)]
    pub allow_http: bool,
    /// Download inputs that have no sha256 pin yet and record the pin in the variant file, as
    /// `cargo xtask pin` does (without it, an unpinned input stops the build)
    #[arg(long)]
    pub allow_unpinned: bool,
    /// Files downloaded at the same time
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub jobs: u16,
    /// Retries per file in a row after a connection error, a stall, a window of --timeout
    /// with less than 1 KiB, or an HTTP 5xx; real progress starts the count again
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub retries: u32,
    /// Seconds to wait for a connection, or for the next bytes, before an attempt fails; at
    /// least 1 KiB must arrive in every such window, across reconnects. An input with no
    /// pinned size stops at 4 GiB
    #[arg(long, value_name = "SECONDS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: u64,
}

impl DownloadArgs {
    pub fn options(&self) -> download::Options {
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

pub fn parse_mirror(text: &str) -> Result<(String, String), String> {
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

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        super::Cli::command().debug_assert();
    }
}
