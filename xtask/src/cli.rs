//! The command line (clap): the top-level flags, the table of commands with their help, and
//! the dispatch, one line per command. Each command's flags and its `run` are in `cmd/`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

use crate::cmd;
use ct2v_support::diagnostic::InputError;
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

#[derive(Parser)]
#[command(
    name = "cargo xtask",
    bin_name = "cargo xtask",
    // `--version`/`-V`: the xtask crate's version (CARGO_PKG_VERSION, clap's default); no
    // build script asks git for the commit, which would make every build slower.
    version,
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
    pub command: Cmd,
}

#[derive(Subcommand)]
pub enum Cmd {
    /// List the variants with a one-line description each
    #[command(
        after_help = "Examples:\n  cargo xtask variants\n  cargo xtask variants --json\n  cargo xtask variants --markdown\n\n\
                      --json prints which GPUs each variant serves (schema_version 1): per local \
                      version its platforms, NVIDIA compute capabilities and minimum driver per \
                      CUDA major or AMD gfx targets, the consumer cards table and the AMD PCI IDs. \
                      `release` writes the same as variants.json."
    )]
    Variants(cmd::variants::Variants),
    /// Show the ordered steps a build of one variant will run, without running them
    #[command(
        after_help = "Examples:\n  cargo xtask plan --variant cpu\n  cargo xtask plan --variant rocm --platform windows-x86_64 --json\n\n\
                            The JSON form is documented in docs/plan-json.md (schema_version 2)."
    )]
    Plan(cmd::plan::Plan),
    /// Build one variant end to end (fetch, unpack, patch, compile, wheel, bundle, verify)
    #[command(
        after_help = "Examples:\n  cargo xtask build --variant cpu\n  cargo xtask build --variant cuda --cuda-arch 9.0 --dry-run"
    )]
    Build(cmd::build::Build),
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
    Doctor(cmd::doctor::Doctor),
    /// Check (or apply) a variant's patch series against CTranslate2's source
    #[command(
        long_about = "Check that the variant's patch series (patches/ctranslate2-<version>/series) \
                      applies, in order, to the pinned CTranslate2 source (fetched into the \
                      cache if needed) or to --source DIR, without building anything and without \
                      changing the tree. Without --check, apply it to --source DIR: all or \
                      nothing, and a tree that already has the series is left as it is. A patch \
                      that does not apply is reported with its file, hunk, the lines it expected \
                      and the lines the file has. A patch that is no well-formed unified diff (a \
                      hunk whose body does not match the counts in its header, a file with no \
                      hunk, a hunk that changes nothing) is bad input naming its file and line, \
                      refused before anything is fetched or changed.",
        after_help = "Examples:\n  cargo xtask patch --check --variant rocm-gfx1010\n  \
                      cargo xtask patch --check --variant rocm-gfx1010 --source ~/src/CTranslate2\n  \
                      cargo xtask patch --variant rocm-gfx1010 --source ~/src/CTranslate2\n\n\
                      Exit codes: 0 the series applies (or was applied), 1 it does not, 2 bad input."
    )]
    Patch(cmd::patch::Patch),
    /// Install a built wheel into a fresh venv and check that it imports and works
    #[command(
        long_about = "Install the wheel a build left in its output folder into a fresh venv (no \
                      LD_LIBRARY_PATH, no SDK on PATH) and check `import ctranslate2`, its \
                      version, and the compute types the variant promises for each device \
                      (variants/*.toml [verify.compute-types]). The same check is the build's \
                      `verify` step; this command reruns it on its own. With --offline every \
                      pip install is from the cache's wheelhouse alone (--isolated --no-index: \
                      no index is asked).\n\n\
                      --transcribe also installs the pinned faster-whisper (wheels/transcribe.txt, \
                      --no-deps, so the built ctranslate2 is the one imported) into that venv and \
                      transcribes real speech: by default the pinned Whisper base model and the \
                      11-second JFK clip (variants/speech/check.toml, fetched and cached like \
                      every input). It prints the transcript, the device and compute type \
                      CTranslate2 actually used, the real-time factor and the word error rate \
                      against the reference, and fails above the pinned maximum WER. Logs: \
                      target/xtask/logs/<variant>/<platform>/transcribe.log.",
        after_help = "Examples:\n  cargo xtask verify --variant cpu\n  cargo xtask verify --variant cpu --offline\n  \
                      cargo xtask verify --variant cpu --numerics\n  \
                      cargo xtask verify --variant cpu --transcribe\n  \
                      cargo xtask verify --variant cuda --transcribe --device cuda --compute-type int8_float16\n  \
                      cargo xtask verify --variant cpu --transcribe --audio me.wav --reference \"hello world\"\n\n\
                      Exit codes: 0 the wheel works, 1 it does not (or was not built), 2 bad input \
                      (a model folder that is no Whisper model, a corrupt model.bin, audio that \
                      cannot be decoded or is silent, --device cuda with no GPU)."
    )]
    Verify(cmd::verify::Verify),
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
    Smoke(cmd::smoke::Smoke),
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
    Bench(cmd::bench::Bench),
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
    Fetch(cmd::fetch::Fetch),
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
    InstallSdk(cmd::install_sdk::InstallSdk),
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
    Pin(cmd::pin::Pin),
    /// Bundle the SDK libraries a wheel's binaries load: fat wheel, portable folder, report
    #[command(
        long_about = "Find exactly the libraries a wheel's binaries load (PE import and delay-import \
                      tables, ELF DT_NEEDED; transitively; libraries loaded at run time given as \
                      --force), skipping what the operating system provides (crates/bundle/policy/), \
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
    Bundle(cmd::bundle::Bundle),
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
    Release(cmd::release::Release),
    /// Write the pip index of every release as a static site (GitHub Pages)
    #[command(
        long_about = "Write the static site that serves the pip index of every release: \
                      whl/<variant>/ctranslate2/index.html links each wheel of that variant in \
                      this release and in the earlier ones (each a folder <tag>/ holding its \
                      manifest.json, as `gh release download TAG -p manifest.json` leaves it), \
                      by absolute URL to the release asset (<download-base><tag>/<file>) with \
                      its sha256. A Pages deployment replaces the whole site, so an older \
                      version stays installable only if the site lists it too. The front page, \
                      index.html, says which variant serves which GPU (the card table of this \
                      release's variants.json; without one, no table) and, per variant, the pip, \
                      uv and PyApp commands and its wheels; then every release, newest first. \
                      An empty .nojekyll keeps GitHub Pages from dropping files named _*.",
        after_help = "Example:\n  cargo xtask pages --release dist/4.7.1 --tag v4.7.1 --earlier earlier/ \\\n      \
                      --download-base https://github.com/OWNER/REPO/releases/download/ \\\n      \
                      --site-url https://OWNER.github.io/REPO --out site\n\n\
                      Exit codes: 0 written, 1 failure, 2 bad input."
    )]
    Pages(cmd::pages::Pages),
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
    VerifyRelease(cmd::verify_release::VerifyRelease),
    /// Add a CTranslate2 version: its data file from the previous version's, pins, patch check
    #[command(
        long_about = "Start CTranslate2 VERSION from the previous version's file: write \
                      variants/ctranslate2/VERSION.toml with every URL and wheel path that names \
                      the old version renamed (their pins dropped) and [source] set to --source \
                      (a ct2rs crate's CTranslate2 folder is found by itself) or, with --from-tag, \
                      to the tag's GitHub archive plus one archive per submodule at the commit the \
                      tag records (read through GitHub's API), copy each patch series to \
                      patches/ctranslate2-VERSION/, then pin every input that can be reached (as \
                      `pin` does), run `patch --check` for the variants with a series, print the \
                      facts the new version's own tree declares next to ours (as `upstream \
                      --check` does), and print what is left to do by hand. Nothing is replaced: \
                      an existing version file stops it.",
        after_help = "Examples:\n  cargo xtask bump --ctranslate2 4.8.5 --from-tag v4.8.5\n  \
                      cargo xtask bump --ctranslate2 4.8.5 \\\n      --source https://static.crates.io/crates/ct2rs/ct2rs-0.10.4.crate\n  \
                      cargo xtask bump --ctranslate2 4.9.0 --no-pin\n\n\
                      Exit codes: 0 the version is ready to build, 1 something is left to do by \
                      hand (listed), 2 bad input."
    )]
    Bump(cmd::bump::Bump),
    /// Read the version facts CTranslate2's own tree declares and compare them with our data
    #[command(
        long_about = "Read, from each CTranslate2 version's [source] archive (the download cache; \
                      --offline uses only the cache), what upstream declares: the pybind11 pin \
                      (python/install_requirements.txt, python/pyproject.toml), per \
                      python/tools/prepare_build_environment_*.sh the oneDNN version and its \
                      CMake options, the CUDA version, the Windows ROCm SDK wheels (index URL, \
                      requirement) and the HIP architectures, and the DLL folders \
                      python/ctranslate2/__init__.py adds on Windows. Each is printed with the \
                      file and line it was read from, our value with its file and line, and a \
                      verdict: same, DRIFT, accepted ([upstream.accepted] in \
                      variants/defaults.toml or the version file, with its reason), or not \
                      compared. A file whose shape the reader does not know is reported as \
                      \"could not read <fact> in <file>:<line>: <why>\", never guessed.",
        after_help = "Examples:\n  cargo xtask upstream --check\n  \
                      cargo xtask upstream --check --ctranslate2 4.8.4 --offline\n  \
                      cargo xtask upstream --ctranslate2 4.7.1 --json\n\n\
                      Exit codes: 0 nothing drifts, 1 with --check: a fact drifts or an \
                      acceptance is stale (each named with its file and line), or the source \
                      could not be downloaded, 2 bad input (an unknown version; with --check, \
                      an upstream file that could not be read: every such fact is listed)."
    )]
    Upstream(cmd::upstream::Upstream),
    /// Print the GitHub Actions matrix (variant × platform × Python). Entries that need a
    /// self-hosted runner or have inputs not pinned yet are left out unless asked; each one
    /// left out is named on stderr with why
    #[command(
        after_help = "Example (in a workflow; assign first, so that a failure stops the step):\n  \
                      matrix=$(cargo xtask matrix --json)\n  echo \"matrix=$matrix\" >> \"$GITHUB_OUTPUT\""
    )]
    Matrix(cmd::matrix::Matrix),
}

impl Cli {
    /// Runs the parsed command line in the checkout it names (or the one around the current
    /// folder).
    pub fn run(self, reporter: &Reporter) -> Result<ExitCode> {
        if let Some(dir) = &self.cache_dir
            && dir.exists()
            && !dir.is_dir()
        {
            return Err(
                InputError::new(format!("--cache-dir {} is not a folder", dir.display()))
                    .note("give a folder (it is created when missing)")
                    .into(),
            );
        }
        let workspace = &Workspace::locate(self.root, self.cache_dir)?;
        match self.command {
            Cmd::Variants(flags) => flags.run(workspace, reporter),
            Cmd::Plan(flags) => flags.run(workspace, reporter),
            Cmd::Build(flags) => flags.run(workspace, reporter),
            Cmd::Doctor(flags) => flags.run(workspace, reporter),
            Cmd::Patch(flags) => flags.run(workspace, reporter),
            Cmd::Verify(flags) => flags.run(workspace, reporter),
            Cmd::Smoke(flags) => flags.run(workspace, reporter),
            Cmd::Bench(flags) => flags.run(workspace, reporter),
            Cmd::Fetch(flags) => flags.run(workspace, reporter),
            Cmd::InstallSdk(flags) => flags.run(workspace, reporter),
            Cmd::Pin(flags) => flags.run(workspace, reporter),
            Cmd::Bundle(flags) => flags.run(workspace, reporter),
            Cmd::Release(flags) => flags.run(workspace, reporter),
            Cmd::Pages(flags) => flags.run(reporter),
            Cmd::VerifyRelease(flags) => flags.run(workspace, reporter),
            Cmd::Bump(flags) => flags.run(workspace, reporter),
            Cmd::Upstream(flags) => flags.run(workspace, reporter),
            Cmd::Matrix(flags) => flags.run(workspace, reporter),
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
