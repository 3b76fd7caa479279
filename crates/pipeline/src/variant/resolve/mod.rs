//! Resolving a variant for one platform and one Python version: stack the layers, then check
//! that everything required is there and every reference points at something that exists.
//!
//! `resolve` goes through the keys in order, each part in a file of its own: `targets` (the
//! platform, the Python version, GPU targets, CUDA architectures), `inputs` (the downloads),
//! `source` (what is built, or the wheel repackaged), `sdk`, `bundle`; `checks` holds the
//! validators they share.

mod bundle;
mod checks;
mod github_tag;
mod inputs;
mod sdk;
mod source;
mod targets;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use super::Catalog;
use super::download_url;
use super::layer::{DataFilter, OpenMpRuntime, Output, Policy, SdkKind};
use ct2v_fetch::patch::series::Series;
use ct2v_support::diagnostic::InputError;
use ct2v_support::platform::Platform;

pub use inputs::DEVICE_INPUT_PREFIX;
pub(crate) use sdk::{SDK_MAJOR, declared_majors, sdk_major};

/// What the user chose on the command line.
#[derive(Debug, Clone, Default)]
pub struct Choices {
    pub platform: Option<Platform>,
    /// The host's glibc, for the manylinux tag of a Linux build made here.
    pub host_glibc: Option<(u32, u32)>,
    pub python: Option<String>,
    /// The host's `python3` version, used when `python` is not given and the variant has it.
    pub host_python: Option<String>,
    pub cuda_arch: Option<String>,
    pub gpu_targets: Option<Vec<String>>,
    /// `$ROCM_SDK_TARGET_FAMILY` (TheRock's): used for variants with GPU targets when
    /// `gpu_targets` is not given.
    pub target_family: Option<String>,
    /// `ccache` or `sccache`: put in front of every compiler (CMAKE_<LANG>_COMPILER_LAUNCHER).
    pub compiler_cache: Option<String>,
    /// SDK folders already on disk (`--sdk-dir`): they replace the inputs that have an
    /// `sdk-folder`, and are the SDK for `from = "sdk"` sources.
    pub sdk_dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Resolved {
    pub name: String,
    /// The folder under `target/xtask/` for this build: the variant's name for its default
    /// CTranslate2 version, `<name>@<version>` for another.
    pub slot: String,
    pub description: String,
    pub platform: Platform,
    pub python: String,
    pub ctranslate2: String,
    pub build: Build,
    pub bundle: Bundle,
    pub gpu_targets: Vec<String>,
    pub cuda_arch: Option<String>,
    /// See `Layer::local_version`.
    pub local_version: Option<String>,
    pub compiler_cache: Option<String>,
    /// `--sdk-dir`, checked to be a folder.
    pub sdk_dir: Option<PathBuf>,
    pub sdk: Option<Sdk>,
    pub env: BTreeMap<String, String>,
    /// Device → compute types the verify step requires.
    pub verify: Verify,
    /// Every named input the variant declares for this platform.
    pub inputs: BTreeMap<String, Input>,
    /// The build-tools venv's requirements (`build-tools`), relative to the repository root.
    pub build_tools: String,
    /// Things the plan should tell the reader (e.g. why this Python was chosen).
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Build {
    /// Configure, build and install CTranslate2 (and oneDNN), then build the wheel.
    FromSource(SourceBuild),
    /// Repackage an upstream wheel: no compiler runs. `wheel` is its path in `archive`.
    Repackage { archive: Input, wheel: String },
}

#[derive(Debug, Clone, Serialize)]
pub struct SourceBuild {
    pub source: Source,
    pub onednn: Option<OneDnn>,
    pub openmp: OpenMp,
    pub mkl: Option<Box<Mkl>>,
    /// CTranslate2's `-D` options, placeholders not yet expanded.
    pub cmake: BTreeMap<String, String>,
    pub patches: Option<Series>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Source {
    Archive(Input),
    Git {
        url: String,
        rev: String,
    },
    Path {
        path: PathBuf,
    },
    /// A git tag's archive and its submodules' archives, assembled into one tree.
    GithubTag(Box<GithubTag>),
}

#[derive(Debug, Clone, Serialize)]
pub struct GithubTag {
    /// The tag's archive (`subdir`: its top folder).
    pub archive: Input,
    /// The commit the tag points at: the archive's pax header must name it.
    pub commit: String,
    /// Every submodule, nested ones too, in the order of their paths.
    pub submodules: Vec<Submodule>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Submodule {
    /// The full path in the assembled tree.
    pub path: String,
    /// The gitlink: the commit its archive's pax header must name.
    pub commit: String,
    /// Its commit archive (`subdir`: its top folder).
    pub input: Input,
}

/// A download the build needs (a `[inputs.NAME]`, or the `[source]` archive): `sha256`/`size`
/// are `None` until `cargo xtask pin` fills them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Input {
    pub name: String,
    pub url: String,
    pub sha256: Option<String>,
    pub size: Option<u64>,
    pub subdir: Option<String>,
    /// Paths the unpacked input must hold (a trailing `/`: a folder).
    pub expect: Vec<String>,
    pub package: Option<String>,
    pub sdk_folder: Option<String>,
    pub(crate) pin_source: Option<String>,
    /// Where `pin` looks the file up when it is a wheel on a PEP 503 index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<Box<IndexedWheel>>,
}

/// A wheel named by project and version on a PEP 503 index, for one platform.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IndexedWheel {
    pub index: String,
    pub project: String,
    pub version: String,
    pub platform: Platform,
}

impl Input {
    /// The file name the download is stored and unpacked under (the URL's last segment).
    pub fn file_name(&self) -> &str {
        download_url::file_name(&self.url)
    }

    /// What the plan calls the file: its name, or for a wheel not yet found on its index,
    /// the package it will be.
    pub(crate) fn shown_name(&self) -> String {
        match (&self.index, self.file_name()) {
            (Some(w), "") => format!("the {} {} wheel from {}", w.project, w.version, w.index),
            (_, name) => name.to_string(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct OneDnn {
    pub input: String,
    pub cmake: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct OpenMp {
    pub runtime: OpenMpRuntime,
    /// For `INTEL`: the input holding the runtime, and the folder in it for `INTEL_ROOT`.
    pub input: Option<String>,
    pub root: Option<String>,
}

/// Intel MKL: the unpacked inputs and the folders in them for MKL_ROOT and MKL_INCLUDE_DIR.
#[derive(Debug, Clone, Serialize)]
pub struct Mkl {
    pub input: String,
    pub root: Option<String>,
    pub(crate) include_input: String,
    pub include: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Sdk {
    pub kind: SdkKind,
    pub version: String,
    pub runtime: Option<String>,
    pub requires: Vec<String>,
    pub(crate) install_hint: Option<String>,
    /// How `install-sdk` installs it unattended, where the variant says.
    pub installer: Option<SdkInstaller>,
    /// The SDK from a PEP 503 index with pip: (index, requirement).
    pub pip: Option<(String, String)>,
}

/// The SDK's installer: an input of the variant (pinned like any other, never fetched by a
/// build), run with `args` and stopped after `minutes`.
#[derive(Debug, Clone, Serialize)]
pub struct SdkInstaller {
    pub input: String,
    pub args: Vec<String>,
    pub minutes: u64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Verify {
    pub compute_types: BTreeMap<String, Vec<String>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Bundle {
    pub policy: Policy,
    /// Linux: the manylinux policy the fat wheel is tagged for (the variant's, or a newer one
    /// where this host's glibc is newer; see `bundle::manylinux::target_for`).
    pub manylinux: Option<String>,
    pub roots: Vec<String>,
    pub force: Vec<String>,
    /// Provided by the user's machine (the driver's HIP runtime): never bundled.
    pub assume_present: Vec<String>,
    pub search: Vec<Search>,
    pub data: Vec<Data>,
    pub outputs: Vec<Output>,
    /// `Requires-Dist` lines of the bundled wheel, by the SDK's major version.
    pub requires_dist: BTreeMap<String, Vec<String>>,
    /// Library → those of the variant's GPU targets its SDK's TheRock release does not build it
    /// for (the table's exclusions): the bundle expects no kernel files for them.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub not_built: BTreeMap<String, Vec<String>>,
}

impl Bundle {
    /// Whether the bundle copies libraries or data from the SDK itself.
    pub(crate) fn takes_from_sdk(&self) -> bool {
        self.search.iter().any(|s| s.from == LibrarySource::Sdk)
            || self.data.iter().any(|d| d.from == LibrarySource::Sdk)
    }
}

/// Where libraries come from when the bundler resolves an import.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "name")]
pub enum LibrarySource {
    /// The wheel being bundled.
    Wheel,
    /// The CTranslate2 install prefix.
    Prefix,
    /// The compiler's runtime libraries (e.g. libgomp).
    Toolchain,
    /// The CUDA toolkit or HIP SDK found at build time.
    Sdk,
    /// An unpacked input, by name.
    Input(String),
}

impl LibrarySource {
    /// As a variant file writes it: a keyword, or the input's name.
    pub fn name(&self) -> &str {
        match self {
            LibrarySource::Wheel => "wheel",
            LibrarySource::Prefix => "prefix",
            LibrarySource::Toolchain => "toolchain",
            LibrarySource::Sdk => "sdk",
            LibrarySource::Input(name) => name,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Search {
    pub from: LibrarySource,
    pub dir: String,
    pub dest: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Data {
    pub from: LibrarySource,
    pub glob: String,
    pub dest: String,
    pub filter: Option<DataFilter>,
}

/// The checks run in this order and the first error is returned, so a file with several
/// mistakes is reported the same way every time.
pub(super) fn resolve(
    catalog: &Catalog,
    name: &str,
    choices: &Choices,
) -> Result<Resolved, InputError> {
    let files = &catalog.files;
    checks::check_description(catalog, name)?;
    let platform = targets::platform(catalog, name, choices.platform)?;
    let layer = catalog.stacked(name, platform.name());
    let mut notes = Vec::new();
    let python = targets::python(files, name, &layer, choices, &mut notes)?;
    let mut inputs = inputs::declared(files, &layer, platform)?;
    let build = source::build(catalog, name, &layer, &python, &inputs)?;
    let compiles = matches!(build, Build::FromSource(_));
    let table = targets::sdk_table(catalog, &layer);
    let gpu_targets = targets::gpu_targets(files, &layer, table, choices, compiles, &mut notes)?;
    // Device wheels: one per kept target, `pin` writing each its own table once found (which
    // then stands for the generated one); a table for a target not kept is left out.
    if layer.device_wheels.is_some() {
        inputs.retain(|name, _| {
            name.strip_prefix(inputs::DEVICE_INPUT_PREFIX)
                .is_none_or(|t| gpu_targets.iter().any(|k| k == t))
        });
    }
    for (name, input) in inputs::device_wheels(files, &layer, platform, &gpu_targets)? {
        inputs.entry(name).or_insert(input);
    }
    let sdk = sdk::sdk(files, name, layer.sdk.as_ref(), &inputs)?;
    let sdk_dir = match &choices.sdk_dir {
        Some(dir) => Some(sdk::sdk_dir(name, dir, sdk.is_some(), &inputs)?),
        None => None,
    };
    let cuda_arch = targets::cuda_arch(files, &layer, choices)?;
    let env = checks::env(files, &layer.env, sdk.is_some())?;
    let verify = checks::verify_settings(files, layer.verify.clone())?;
    // The host's glibc says something only about a build made on this host.
    let host_glibc = choices
        .host_glibc
        .filter(|_| Some(platform) == Platform::host());
    let mut bundle = bundle::bundle(
        files,
        name,
        layer.bundle.as_ref(),
        &inputs,
        table,
        host_glibc,
        &mut notes,
    )?;
    bundle.not_built = table.excluded_for(&gpu_targets);
    let local_version = sdk::local_version(files, layer.local_version.as_ref())?;
    let build_tools = checks::build_tools(catalog, layer.build_tools.as_ref())?;
    let version = catalog.version_of(name);
    Ok(Resolved {
        name: name.to_string(),
        slot: if catalog.is_default_version(name) {
            name.to_string()
        } else {
            format!("{name}@{version}")
        },
        description: layer.description.clone().unwrap_or_default(),
        platform,
        python,
        ctranslate2: version.to_string(),
        build,
        bundle,
        gpu_targets,
        cuda_arch,
        local_version,
        compiler_cache: choices.compiler_cache.clone(),
        sdk_dir,
        sdk,
        env,
        verify,
        inputs,
        build_tools,
        notes,
    })
}
