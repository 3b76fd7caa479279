//! Resolving a variant for one platform and one Python version: stack the layers, then check
//! that everything required is there and every reference points at something that exists.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::download_url;
use super::layer::{
    self, BundleSpec, CMakeOptions, DataFilter, InputSpec, Layer, OpenMpRuntime, Output, Policy,
    SdkKind, SourceKind, SourceSpec,
};
use super::loc::Loc;
use super::template::{self, Placeholder};
use super::{Catalog, Files};
use crate::diagnostic::InputError;
use crate::gfx;
use crate::patches::Series;
use crate::platform::Platform;
use crate::safe_path;

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
    pub inputs: BTreeMap<String, Remote>,
    /// Things the plan should tell the reader (e.g. why this Python was chosen).
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Build {
    /// Configure, build and install CTranslate2 (and oneDNN), then build the wheel.
    FromSource(SourceBuild),
    /// Repackage an upstream wheel: no compiler runs. `wheel` is its path in `archive`.
    Repackage { archive: Remote, wheel: String },
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
    Archive(Remote),
    Git { url: String, rev: String },
    Path { path: PathBuf },
}

/// A remote file: `sha256`/`size` are `None` until `cargo xtask pin` fills them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Remote {
    pub name: String,
    pub url: String,
    pub sha256: Option<String>,
    pub size: Option<u64>,
    pub subdir: Option<String>,
    /// Paths the unpacked input must hold (a trailing `/`: a folder).
    pub expect: Vec<String>,
    pub package: Option<String>,
    pub sdk_folder: Option<String>,
    pub pin_source: Option<String>,
}

impl Remote {
    /// The file name the download is stored and unpacked under (the URL's last segment).
    pub fn file_name(&self) -> &str {
        download_url::file_name(&self.url)
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
    pub include_input: String,
    pub include: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Sdk {
    pub kind: SdkKind,
    pub version: String,
    pub runtime: Option<String>,
    pub requires: Vec<String>,
    pub install_hint: Option<String>,
    /// How `install-sdk` installs it unattended, where the variant says.
    pub installer: Option<SdkInstaller>,
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
}

impl Bundle {
    /// Whether the bundle copies libraries or data from the SDK itself.
    pub fn takes_from_sdk(&self) -> bool {
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

pub(super) fn resolve(
    catalog: &Catalog,
    name: &str,
    choices: &Choices,
) -> Result<Resolved, InputError> {
    let files = &catalog.files;
    let base = catalog.base(name);
    let missing = |key: &str| missing_key(files, name, key);
    if catalog.variants[name].description.is_none() {
        return Err(InputError::new(format!(
            "variants/{name}.toml has no `description`: every variant file says in one line what it builds"
        ))
        .note(format!("add `description = \"…\"` to variants/{name}.toml")));
    }

    let platforms = base.platforms.clone().ok_or_else(|| missing("platforms"))?;
    check_platform_names(
        files,
        &platforms,
        &catalog.defaults,
        &catalog.variants[name],
    )?;
    let platform = choose_platform(name, &platforms, choices.platform)?;
    let layer = catalog.stack(name, platform.name());

    let python_list = layer.python.clone().ok_or_else(|| missing("python"))?;
    for version in &python_list {
        check_python_version(files, version)?;
    }
    let mut notes = Vec::new();
    let python = choose_python(name, &python_list, choices, &mut notes)?;

    let inputs = layer
        .inputs
        .iter()
        .map(|(key, spec)| {
            let runnable = layer
                .sdk
                .as_ref()
                .and_then(|s| s.installer.as_ref())
                .is_some_and(|i| &i.value == key);
            Ok((key.clone(), remote(files, key, spec, runnable)?))
        })
        .collect::<Result<BTreeMap<_, _>, InputError>>()?;
    let version = catalog.version_of(name);
    let source_spec = layer.source.as_ref().ok_or_else(|| {
        InputError::new(format!(
            "variant `{name}` has no source for CTranslate2 {version}"
        ))
        .note(format!(
            "{}/{version}.toml names the source every variant builds ([source]) and what a \
             variant that repackages official wheels takes ([variant.{name}.platform.<platform>.source])",
            super::VERSIONS_DIR
        ))
    })?;
    let build = match source_spec.kind.value {
        SourceKind::Wheel => wheel_for_python(files, name, source_spec, &python)?,
        _ => Build::FromSource(source_build(catalog, name, &layer, source_spec, &inputs)?),
    };

    let compiles = matches!(build, Build::FromSource(_));
    let offered: Vec<String> = layer
        .gpu_targets
        .iter()
        .flatten()
        .map(|t| t.value.clone())
        .collect();
    let gpu_targets = match (&choices.gpu_targets, &choices.target_family) {
        (Some(targets), _) => {
            let list = gpu_targets(targets, &offered, compiles, &mut notes)
                .map_err(|e| e.note("from --gpu-targets"))?;
            if list.is_empty() {
                return Err(InputError::new("--gpu-targets is empty")
                    .note("name at least one target, e.g. --gpu-targets gfx1100"));
            }
            list
        }
        (None, Some(family)) if layer.gpu_targets.is_some() => {
            notes.push(format!("GPU targets from ROCM_SDK_TARGET_FAMILY={family}"));
            gpu_targets(std::slice::from_ref(family), &offered, compiles, &mut notes)?
        }
        _ => {
            for target in layer.gpu_targets.iter().flatten() {
                if !gfx::looks_like_target(&target.value) {
                    return Err(files.error_at(
                        target,
                        format!(
                            "`{}` is not a GPU target: expected e.g. gfx1100",
                            target.value
                        ),
                    ));
                }
            }
            offered
        }
    };
    let sdk = sdk(files, name, layer.sdk.as_ref(), &inputs)?;
    let sdk_dir = match &choices.sdk_dir {
        Some(dir) => Some(sdk_dir(name, dir, sdk.is_some(), &inputs)?),
        None => None,
    };
    if let Some(arch) = &choices.cuda_arch {
        check_cuda_arch(arch).map_err(|why| {
            InputError::new(format!(
                "--cuda-arch `{arch}` is not a CUDA_ARCH_LIST: {why}"
            ))
            .note("e.g. --cuda-arch 9.0, --cuda-arch \"8.6;9.0+PTX\", --cuda-arch Common")
        })?;
    }
    if let Some(arch) = &layer.cuda_arch {
        check_cuda_arch(&arch.value).map_err(|why| {
            files.error_at(
                arch,
                format!("`{}` is not a CUDA_ARCH_LIST: {why}", arch.value),
            )
        })?;
    }
    let cuda_arch = choices
        .cuda_arch
        .clone()
        .or_else(|| layer.cuda_arch.as_ref().map(|c| c.value.clone()));

    let env = layer
        .env
        .iter()
        .map(|(k, v)| {
            check_env(files, k, v)?;
            check_placeholders(files, v, &v.value)?;
            check_sdk_placeholder(files, v, &v.value, sdk.is_some())?;
            Ok((k.clone(), v.value.clone()))
        })
        .collect::<Result<_, InputError>>()?;
    let verify = layer.verify.clone().unwrap_or_default();
    for (device, types) in &verify.compute_types {
        check_compute_types(files, device, types)?;
    }

    Ok(Resolved {
        name: name.to_string(),
        description: layer.description.clone().unwrap_or_default(),
        platform,
        python,
        slot: if catalog.is_default_version(name) {
            name.to_string()
        } else {
            format!("{name}@{version}")
        },
        ctranslate2: version.to_string(),
        bundle: {
            let mut bundle = bundle(files, name, layer.bundle.as_ref(), &inputs)?;
            let host = choices
                .host_glibc
                .filter(|_| Some(platform) == Platform::host());
            bundle.manylinux = crate::bundle::manylinux::target_for(bundle.policy, host);
            if let (Some(tag), Some(policy)) = (
                &bundle.manylinux,
                crate::bundle::manylinux::target(bundle.policy),
            ) && tag != policy
            {
                let (major, minor) = host.unwrap_or_default();
                notes.push(format!(
                    "this machine has glibc {major}.{minor}, newer than {policy} allows: what is \
                     built here needs it, so the wheel is tagged {tag}_x86_64; a {policy} wheel \
                     is built in the quay.io/pypa/{policy}_x86_64 image (as CTranslate2's own)"
                ));
            }
            bundle
        },
        sdk,
        sdk_dir,
        build,
        gpu_targets,
        cuda_arch,
        local_version: match &layer.local_version {
            Some(label) => {
                check_local_version(&label.value.replace(SDK_MAJOR, "12")).map_err(|_| {
                    files.error_at(
                        label,
                        format!(
                            "local-version `{}` is not a PEP 440 local version label: \
                             lower-case letters and digits, parts separated by dots, \
                             `{SDK_MAJOR}` for the SDK's major version (e.g. cpu, cu{SDK_MAJOR}, rocm72)",
                            label.value
                        ),
                    )
                })?;
                Some(label.value.clone())
            }
            None => None,
        },
        compiler_cache: choices.compiler_cache.clone(),
        env,
        verify: Verify {
            compute_types: verify
                .compute_types
                .into_iter()
                .map(|(device, types)| (device, types.value))
                .collect(),
        },
        inputs,
        notes,
    })
}

/// GPU targets as given (`--gpu-targets` or `ROCM_SDK_TARGET_FAMILY`): exact targets
/// (`gfx1100`), TheRock's family names (`gfx110X-dgpu`, see [`crate::gfx`]), or `custom`
/// (TheRock's bundle name: the variant's own list). A variant that repackages a wheel can
/// only keep targets that wheel was built for (`offered`: the variant's `gpu-targets`); a
/// family keeps those of its targets the wheel has. A build compiles any target spelled
/// like one.
fn gpu_targets(
    given: &[String],
    offered: &[String],
    compiles: bool,
    notes: &mut Vec<String>,
) -> Result<Vec<String>, InputError> {
    let mut targets: Vec<String> = Vec::new();
    let offered_list = offered.join(", ");
    for text in given.iter().flat_map(|t| t.split([',', ';'])) {
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let picked: Vec<String> = if text == gfx::CUSTOM {
            offered.to_vec()
        } else if gfx::looks_like_target(text) {
            if !compiles && !offered.iter().any(|t| t == text) {
                let hint = gfx::closest(text, offered.iter().map(String::as_str))
                    .map_or(String::new(), |c| format!("; did you mean {c}?"));
                return Err(InputError::new(format!(
                    "the wheel was built for {offered_list}: it has no code for `{text}`{hint}"
                )));
            }
            vec![text.to_string()]
        } else if let Some(members) = gfx::family(text) {
            if compiles {
                members
            } else {
                let (kept, left): (Vec<String>, Vec<String>) =
                    members.into_iter().partition(|t| offered.contains(t));
                if kept.is_empty() {
                    return Err(InputError::new(format!(
                        "GPU target family `{text}` ({}) has no target the wheel was built for \
                         ({offered_list})",
                        left.join(", ")
                    )));
                }
                if !left.is_empty() && text != left.join(",") {
                    notes.push(format!(
                        "{text}: {} left out, the wheel has no code for {}",
                        left.join(", "),
                        if left.len() == 1 { "it" } else { "them" }
                    ));
                }
                kept
            }
        } else {
            let hint = gfx::closest(text, gfx::all_names())
                .map_or(String::new(), |c| format!("; did you mean {c}?"));
            return Err(InputError::new(format!(
                "`{text}` is not a GPU target or one of TheRock's target families \
                 (e.g. gfx1100, gfx110X-dgpu, gfx120X-all, dgpu-all, custom){hint}"
            )));
        };
        for t in picked {
            if !targets.contains(&t) {
                targets.push(t);
            }
        }
    }
    Ok(targets)
}

/// Checks `--sdk-dir`: a folder, for a variant that takes SDK folders.
fn sdk_dir(
    name: &str,
    dir: &Path,
    has_sdk: bool,
    inputs: &BTreeMap<String, Remote>,
) -> Result<PathBuf, InputError> {
    if !has_sdk && inputs.values().all(|r| r.sdk_folder.is_none()) {
        return Err(InputError::new(format!(
            "variant `{name}` uses no GPU SDK, so --sdk-dir {} has nothing to replace",
            dir.display()
        )));
    }
    if !dir.is_dir() {
        return Err(InputError::new(format!(
            "--sdk-dir {} is not a folder",
            dir.display()
        ))
        .note("give an installed SDK (e.g. C:\\Program Files\\AMD\\ROCm\\7.1) or a folder with the unpacked SDK wheels (site-packages)"));
    }
    Ok(std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf()))
}

fn python_list_note(name: &str) -> String {
    format!(
        "the list is `python` in variants/{name}.toml (or variants/{})",
        super::DEFAULTS_FILE
    )
}

fn missing_key(files: &Files, name: &str, key: &str) -> InputError {
    let defaults = files.root.join("variants").join(super::DEFAULTS_FILE);
    InputError::new(format!(
        "variant `{name}` does not say `{key}` (neither variants/{name}.toml nor variants/{} sets it)",
        super::DEFAULTS_FILE
    ))
    .note(format!(
        "add `{key} = …` to variants/{name}.toml, or a default to {}",
        defaults.display()
    ))
}

fn check_platform_names(
    files: &Files,
    listed: &[Loc<String>],
    defaults: &Layer,
    variant: &Layer,
) -> Result<(), InputError> {
    let known = Platform::names();
    let overlays = (defaults.platform.iter().chain(&variant.platform))
        .map(|(key, layer)| (key, layer.file, &layer.span));
    for (key, table) in defaults.platform.iter().chain(&variant.platform) {
        if let Some((inner, _)) = table.value.platform.iter().next() {
            return Err(files
                .error_at(table, format!("[platform.{key}.platform.{inner}]: a platform table cannot hold another platform table"))
                .note(format!("write [platform.{inner}] at the top level instead")));
        }
    }
    let lists = listed.iter().map(|l| (&l.value, l.file, &l.span));
    for (key, file, span) in overlays.chain(lists) {
        if !known.contains(&key.as_str()) {
            let at = Loc {
                value: (),
                file,
                span: span.clone(),
            };
            return Err(files
                .error_at(&at, format!("unknown platform `{key}`"))
                .allowed(key, &known));
        }
    }
    Ok(())
}

fn choose_platform(
    name: &str,
    listed: &[Loc<String>],
    wanted: Option<Platform>,
) -> Result<Platform, InputError> {
    let names: Vec<&str> = listed.iter().map(|p| p.value.as_str()).collect();
    let platform = match wanted.or_else(Platform::host) {
        Some(p) => p,
        None => {
            return Err(InputError::new(format!(
                "this host ({}-{}) is not a platform ct2-variants builds for; pass --platform",
                std::env::consts::OS,
                std::env::consts::ARCH
            ))
            .allowed("", &names));
        }
    };
    if !names.contains(&platform.name()) {
        return Err(InputError::new(format!(
            "variant `{name}` is not built for platform `{platform}`"
        ))
        .allowed(platform.name(), &names)
        .note(format!(
            "pass --platform {} (a build for another platform plans and fetches here; it \
             compiles and is verified there); the list is `platforms` in variants/{name}.toml",
            names[0]
        )));
    }
    Ok(platform)
}

fn check_python_version(files: &Files, version: &Loc<String>) -> Result<(), InputError> {
    let ok = version
        .value
        .split_once('.')
        .is_some_and(|(major, minor)| major == "3" && minor.parse::<u32>().is_ok());
    if ok {
        Ok(())
    } else {
        Err(files
            .error_at(
                version,
                format!("`{}` is not a Python version", version.value),
            )
            .note("write versions as \"3.12\""))
    }
}

fn choose_python(
    name: &str,
    listed: &[Loc<String>],
    choices: &Choices,
    notes: &mut Vec<String>,
) -> Result<String, InputError> {
    let names: Vec<&str> = listed.iter().map(|p| p.value.as_str()).collect();
    if let Some(wanted) = &choices.python {
        if names.contains(&wanted.as_str()) {
            return Ok(wanted.clone());
        }
        return Err(
            InputError::new(format!("variant `{name}` is not built for Python {wanted}"))
                .allowed(wanted, &names)
                .note(python_list_note(name)),
        );
    }
    let newest = names
        .iter()
        .max_by_key(|v| v.split_once('.').and_then(|(_, m)| m.parse::<u32>().ok()))
        .ok_or_else(|| {
            InputError::new(format!("variant `{name}` lists no Python versions"))
                .note(python_list_note(name))
        })?;
    match &choices.host_python {
        Some(host) if names.contains(&host.as_str()) => Ok(host.clone()),
        Some(host) => {
            notes.push(format!(
                "Python {newest} chosen: the host's python3 is {host}, which this variant does not build for (pass --python)"
            ));
            Ok(newest.to_string())
        }
        None => {
            notes.push(format!(
                "Python {newest} chosen: no python3 found on this host"
            ));
            Ok(newest.to_string())
        }
    }
}

/// `runnable`: the input is the SDK's installer, run rather than unpacked (any file name).
fn remote(
    files: &Files,
    name: &str,
    spec_loc: &Loc<InputSpec>,
    runnable: bool,
) -> Result<Remote, InputError> {
    if let Err(why) = safe_path::check_name(name) {
        return Err(files.error_at(
            spec_loc,
            format!("input name `{}` is not allowed: {why}", name.escape_debug()),
        ));
    }
    let spec = &spec_loc.value;
    let url = &spec.url;
    if let Some((why, note)) = download_url::problem(&url.value, runnable) {
        return Err(files
            .error_at(url, format!("input `{name}`: {why}"))
            .note(note));
    }
    if let Some(sha) = &spec.sha256 {
        check_sha256(files, sha)?;
    }
    if spec.size == Some(0) {
        return Err(files
            .error_at(
                spec_loc,
                format!("input `{name}`: `size = 0`; a download is never empty"),
            )
            .note("remove `size` and `sha256`, then `cargo xtask pin` fills them"));
    }
    let path = |v: &Option<Loc<String>>, key: &str| {
        v.as_ref()
            .map(|v| {
                checked(
                    files,
                    v,
                    &format!("input `{name}`: {key}"),
                    safe_path::check_nonempty,
                )
            })
            .transpose()
    };
    let remote = Remote {
        name: name.to_string(),
        url: url.value.clone(),
        sha256: spec.sha256.as_ref().map(|s| s.value.clone()),
        size: spec.size,
        subdir: path(&spec.subdir, "subdir")?,
        expect: spec
            .expect
            .iter()
            .flatten()
            .map(|e| {
                checked(
                    files,
                    e,
                    &format!("input `{name}`: expect"),
                    safe_path::check_nonempty,
                )
            })
            .collect::<Result<_, _>>()?,
        package: spec.package.clone(),
        sdk_folder: path(&spec.sdk_folder, "sdk-folder")?,
        pin_source: spec.pin_source.clone(),
    };
    Ok(remote)
}

fn check_sha256(files: &Files, sha: &Loc<String>) -> Result<(), InputError> {
    let v = &sha.value;
    if v.len() == 64
        && v.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        Ok(())
    } else {
        Err(files
            .error_at(sha, "a sha256 is 64 lowercase hex digits")
            .note("`cargo xtask pin --variant …` fills it from the download"))
    }
}

fn wheel_for_python(
    files: &Files,
    name: &str,
    spec: &SourceSpec,
    python: &str,
) -> Result<Build, InputError> {
    let wheel = spec.wheels.get(python).ok_or_else(|| {
        let have: Vec<&String> = spec.wheels.keys().collect();
        files
            .error_at(
                &spec.kind,
                format!("variant `{name}` has no upstream wheel for Python {python}"),
            )
            .allowed(python, &have)
            .note("add it under [source.wheels] for this platform")
    })?;
    Ok(Build::Repackage {
        archive: archive_input(files, spec, "ctranslate2-wheels")?,
        wheel: checked(files, wheel, "wheel path", safe_path::check_nonempty)?,
    })
}

/// The `url`/`sha256`/`size`/`subdir` of a `[source]` table as a remote input.
fn archive_input(files: &Files, spec: &SourceSpec, name: &str) -> Result<Remote, InputError> {
    let url = spec.url.clone().ok_or_else(|| {
        files.error_at(
            &spec.kind,
            format!("[source] of kind `{}` needs `url`", spec.kind_name()),
        )
    })?;
    let input = InputSpec {
        url,
        sha256: spec.sha256.clone(),
        size: spec.size,
        subdir: spec.subdir.clone(),
        expect: None,
        package: None,
        sdk_folder: None,
        pin_source: spec.pin_source.clone(),
    };
    let loc = Loc {
        value: input,
        file: spec.kind.file,
        span: spec.kind.span.clone(),
    };
    remote(files, name, &loc, false)
}

fn source_build(
    catalog: &Catalog,
    name: &str,
    layer: &Layer,
    spec: &SourceSpec,
    inputs: &BTreeMap<String, Remote>,
) -> Result<SourceBuild, InputError> {
    let files = &catalog.files;
    let source = source(files, spec)?;

    let onednn_spec = layer.onednn.clone().unwrap_or_default();
    let onednn = if onednn_spec.enabled.unwrap_or(true) {
        let input = onednn_spec.input.as_ref().ok_or_else(|| {
            missing_key(files, name, "onednn.input")
                .note("`input` names the oneDNN source input; or set `enabled = false` in [onednn]")
        })?;
        check_input_ref(files, input, inputs)?;
        check_sdk_placeholders(files, &onednn_spec.cmake, layer.sdk.as_ref())?;
        Some(OneDnn {
            input: input.value.clone(),
            cmake: cmake_options(files, &onednn_spec.cmake, &[])?,
        })
    } else {
        None
    };

    let openmp_spec = layer.openmp.clone().unwrap_or_default();
    let runtime = openmp_spec
        .runtime
        .as_ref()
        .map_or(OpenMpRuntime::Comp, |r| r.value);
    let openmp_input = match (&openmp_spec.input, runtime) {
        (Some(input), OpenMpRuntime::Intel) => {
            check_input_ref(files, input, inputs)?;
            Some(input.value.clone())
        }
        (None, OpenMpRuntime::Intel) => {
            let at = openmp_spec
                .runtime
                .as_ref()
                .expect("runtime was set to INTEL");
            return Err(files
                .error_at(
                    at,
                    "OpenMP runtime INTEL needs `input`: the intel-openmp wheel",
                )
                .note("add `input = \"intel-openmp\"` to this [openmp] table"));
        }
        _ => None,
    };

    let mkl_spec = layer.mkl.clone().unwrap_or_default();
    let mkl = if mkl_spec.enabled.unwrap_or(false) {
        let (Some(input), Some(include_input)) = (&mkl_spec.input, &mkl_spec.include_input) else {
            return Err(InputError::new(format!(
                "[mkl] of variant `{name}` is enabled but needs `input` (the mkl-static wheel) \
                 and `include-input` (the mkl-include wheel)"
            ))
            .note(format!(
                "set them in variants/{name}.toml or variants/{}, or set `enabled = false` in [mkl]",
                super::DEFAULTS_FILE
            )));
        };
        check_input_ref(files, input, inputs)?;
        check_input_ref(files, include_input, inputs)?;
        Some(Box::new(Mkl {
            input: input.value.clone(),
            root: mkl_spec.root.clone(),
            include_input: include_input.value.clone(),
            include: mkl_spec.include.clone(),
        }))
    } else {
        None
    };

    // OPENMP_RUNTIME and INTEL_ROOT follow from [openmp], the MKL options from [mkl]; saying
    // them twice invites drift.
    let derived = [
        "OPENMP_RUNTIME",
        "INTEL_ROOT",
        "WITH_MKL",
        "MKL_ROOT",
        "MKL_INCLUDE_DIR",
    ];
    let cmake = cmake_options(files, &layer.cmake, &derived)?;
    check_sdk_placeholders(files, &layer.cmake, layer.sdk.as_ref())?;
    let dnnl_on = cmake.get("WITH_DNNL").is_some_and(|v| v == "ON");
    if dnnl_on && onednn.is_none() {
        let at = &layer.cmake["WITH_DNNL"];
        return Err(files
            .error_at(at, "WITH_DNNL is ON but [onednn] is disabled")
            .note("enable [onednn] or set WITH_DNNL = false"));
    }

    let patches = match &layer.patches {
        Some(path) => Some(load_series(catalog, path)?),
        None => None,
    };

    Ok(SourceBuild {
        source,
        onednn,
        openmp: OpenMp {
            runtime,
            input: openmp_input,
            root: openmp_spec
                .root
                .as_ref()
                .map(|r| checked(files, r, "[openmp] root", safe_path::check_relative))
                .transpose()?,
        },
        mkl,
        cmake,
        patches,
    })
}

fn load_series(catalog: &Catalog, path: &Loc<String>) -> Result<Series, InputError> {
    checked(&catalog.files, path, "patches", safe_path::check_nonempty)?;
    let relative = PathBuf::from(&path.value);
    if !catalog.root.join(&relative).is_file() {
        return Err(catalog
            .files
            .error_at(path, format!("patch series `{}` does not exist", path.value))
            .note("the path is relative to the repository root, e.g. patches/ctranslate2-4.7.1/series"));
    }
    Series::load(&catalog.root, &relative)
}

fn source(files: &Files, spec: &SourceSpec) -> Result<Source, InputError> {
    let need = |value: &Option<Loc<String>>, key: &str| {
        value.clone().ok_or_else(|| {
            files.error_at(
                &spec.kind,
                format!("[source] of kind `{}` needs `{key}`", spec.kind_name()),
            )
        })
    };
    Ok(match spec.kind.value {
        SourceKind::Archive => Source::Archive(archive_input(files, spec, "ctranslate2-source")?),
        SourceKind::Git => Source::Git {
            url: need(&spec.url, "url")?.value,
            rev: need(&spec.rev, "rev")?.value,
        },
        SourceKind::Path => Source::Path {
            path: PathBuf::from(need(&spec.path, "path")?.value),
        },
        SourceKind::Wheel => unreachable!("wheel sources are repackaged, not built"),
    })
}

fn check_input_ref(
    files: &Files,
    reference: &Loc<String>,
    inputs: &BTreeMap<String, Remote>,
) -> Result<(), InputError> {
    if inputs.contains_key(&reference.value) {
        return Ok(());
    }
    let names: Vec<&String> = inputs.keys().collect();
    Err(files
        .error_at(reference, format!("no input named `{}`", reference.value))
        .allowed(&reference.value, &names)
        .note("inputs are declared as [inputs.NAME] tables"))
}

/// `-D` options as strings: booleans become ON/OFF; placeholders must be known names.
fn cmake_options(
    files: &Files,
    options: &CMakeOptions,
    derived: &[&str],
) -> Result<BTreeMap<String, String>, InputError> {
    let mut out = BTreeMap::new();
    for (key, value) in options {
        if derived.contains(&key.as_str()) {
            return Err(files
                .error_at(
                    value,
                    format!("`{key}` is set from the [openmp] or [mkl] table"),
                )
                .note("set `runtime` (and `input`) in [openmp], or `enabled` in [mkl], instead"));
        }
        let text = match &value.value {
            toml::Value::Boolean(true) => "ON".to_string(),
            toml::Value::Boolean(false) => "OFF".to_string(),
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(i) => i.to_string(),
            other => {
                return Err(files.error_at(
                    value,
                    format!(
                        "CMake option `{key}` must be a string, boolean or integer, not {}",
                        other.type_str()
                    ),
                ));
            }
        };
        check_placeholders(files, value, &text)?;
        out.insert(key.clone(), text);
    }
    Ok(out)
}

fn check_placeholders<T>(files: &Files, at: &Loc<T>, text: &str) -> Result<(), InputError> {
    if let Some(open) = template::unclosed(text) {
        return Err(files
            .error_at(at, format!("unclosed placeholder `{open}` in `{text}`"))
            .note("placeholders are written {name}, e.g. {onednn.prefix}"));
    }
    template::placeholders(text).map(|_| ()).map_err(|unknown| {
        files
            .error_at(at, format!("unknown placeholder `{{{unknown}}}`"))
            .allowed(&unknown, &Placeholder::names())
    })
}

fn sdk(
    files: &Files,
    name: &str,
    spec: Option<&layer::SdkSpec>,
    inputs: &BTreeMap<String, Remote>,
) -> Result<Option<Sdk>, InputError> {
    let Some(spec) = spec else { return Ok(None) };
    let Some(kind) = &spec.kind else {
        return Ok(None);
    };
    let version = spec.version.as_ref().ok_or_else(|| {
        files
            .error_at(kind, format!("[sdk] of variant `{name}` needs `version`"))
            .note("e.g. version = \"6.2\"")
    })?;
    Ok(Some(Sdk {
        kind: kind.value,
        version: version.value.clone(),
        runtime: spec.runtime.clone(),
        requires: spec.requires.clone().unwrap_or_default(),
        install_hint: spec.install_hint.clone(),
        installer: sdk_installer(files, name, spec, inputs)?,
    }))
}

/// An installer's input must be one of the variant's inputs for that platform.
fn sdk_installer(
    files: &Files,
    name: &str,
    spec: &layer::SdkSpec,
    inputs: &BTreeMap<String, Remote>,
) -> Result<Option<SdkInstaller>, InputError> {
    let Some(input) = &spec.installer else {
        return Ok(None);
    };
    if !inputs.contains_key(&input.value) {
        let names: Vec<&str> = inputs.keys().map(String::as_str).collect();
        return Err(files
            .error_at(
                input,
                format!(
                    "[sdk] installer of variant `{name}` names input `{}`, which this platform does not declare",
                    input.value
                ),
            )
            .allowed(&input.value, &names));
    }
    Ok(Some(SdkInstaller {
        input: input.value.clone(),
        args: spec.installer_args.clone().unwrap_or_default(),
        minutes: spec.installer_minutes.unwrap_or(30),
    }))
}

const SOURCE_KEYWORDS: [&str; 4] = ["wheel", "prefix", "toolchain", "sdk"];

fn library_source(
    files: &Files,
    from: &Loc<String>,
    inputs: &BTreeMap<String, Remote>,
) -> Result<LibrarySource, InputError> {
    Ok(match from.value.as_str() {
        "wheel" => LibrarySource::Wheel,
        "prefix" => LibrarySource::Prefix,
        "toolchain" => LibrarySource::Toolchain,
        "sdk" => LibrarySource::Sdk,
        other if inputs.contains_key(other) => LibrarySource::Input(other.to_string()),
        other => {
            let allowed: Vec<&str> = SOURCE_KEYWORDS
                .iter()
                .copied()
                .chain(inputs.keys().map(String::as_str))
                .collect();
            return Err(files
                .error_at(
                    from,
                    format!("`from = \"{other}\"` is neither a keyword nor an input"),
                )
                .allowed(other, &allowed));
        }
    })
}

fn bundle(
    files: &Files,
    name: &str,
    spec: Option<&BundleSpec>,
    inputs: &BTreeMap<String, Remote>,
) -> Result<Bundle, InputError> {
    let spec = spec.cloned().unwrap_or_default();
    let policy = spec
        .policy
        .ok_or_else(|| missing_key(files, name, "bundle.policy"))?;
    let roots = match &spec.roots {
        Some(roots) => {
            for root in &roots.value {
                crate::bundle::run::check_root(root).map_err(|e| {
                    files.error_at(roots, format!("[bundle] roots of variant `{name}`: {e}"))
                })?;
            }
            roots.value.clone()
        }
        None => Vec::new(),
    };
    Ok(Bundle {
        policy: policy.value,
        manylinux: None,
        roots,
        force: spec.force.unwrap_or_default(),
        assume_present: spec.assume_present.unwrap_or_default(),
        search: spec
            .search
            .unwrap_or_default()
            .iter()
            .map(|s| {
                Ok(Search {
                    from: library_source(files, &s.from, inputs)?,
                    dir: match &s.dir {
                        Some(dir) => checked(files, dir, "search dir", safe_path::check_relative)?,
                        None => String::new(),
                    },
                    dest: checked(files, &s.dest, "dest", safe_path::check_relative)?,
                })
            })
            .collect::<Result<_, InputError>>()?,
        data: spec
            .data
            .unwrap_or_default()
            .iter()
            .map(|d| {
                Ok(Data {
                    from: library_source(files, &d.from, inputs)?,
                    glob: checked(files, &d.glob, "data glob", safe_path::check_nonempty)?,
                    dest: checked(files, &d.dest, "dest", safe_path::check_relative)?,
                    filter: d.filter,
                })
            })
            .collect::<Result<_, InputError>>()?,
        outputs: match spec.outputs {
            Some(outputs) if outputs.value.is_empty() => {
                return Err(files
                    .error_at(&outputs, "[bundle] `outputs = []` asks for nothing")
                    .allowed("", &["fat-wheel", "portable", "report"]));
            }
            Some(outputs) => outputs.value,
            None => vec![Output::FatWheel, Output::Report],
        },
        requires_dist: match spec.requires_dist {
            Some(at) => requires_dist(files, &at)?,
            None => BTreeMap::new(),
        },
    })
}

/// `[bundle.requires-dist]`: keys are SDK major versions, values requirement lines that go
/// into METADATA as written (so nothing that would end or break a header line).
fn requires_dist(
    files: &Files,
    at: &Loc<BTreeMap<String, Vec<String>>>,
) -> Result<BTreeMap<String, Vec<String>>, InputError> {
    for (major, lines) in &at.value {
        if major.is_empty() || !major.bytes().all(|b| b.is_ascii_digit()) {
            return Err(files.error_at(
                at,
                format!(
                    "[bundle.requires-dist] key `{}` is not an SDK major version (\"12\", \"13\")",
                    major.escape_debug()
                ),
            ));
        }
        for line in lines {
            let bad = line.trim().is_empty()
                || line.contains(['\n', '\r', '\0'])
                || !line.starts_with(|c: char| c.is_ascii_alphanumeric());
            if bad {
                return Err(files.error_at(
                    at,
                    format!(
                        "[bundle.requires-dist] \"{major}\" has `{}`, which is no requirement \
                         (a package name first, on one line: \"nvidia-cublas-cu12>=12.8,<13\")",
                        line.escape_debug()
                    ),
                ));
            }
        }
    }
    Ok(at.value.clone())
}

/// `at.value` after one of the [`safe_path`] checks; the error points at the value.
fn checked(
    files: &Files,
    at: &Loc<String>,
    what: &str,
    check: fn(&str) -> Result<(), String>,
) -> Result<String, InputError> {
    check(&at.value).map_err(|why| {
        files.error_at(
            at,
            format!("{what} `{}` is not allowed: {why}", at.value.escape_debug()),
        )
    })?;
    Ok(at.value.clone())
}

/// An environment variable the build steps set: a name without `=` or NUL, a value without NUL
/// (neither can be passed to a process).
fn check_env(files: &Files, key: &str, value: &Loc<String>) -> Result<(), InputError> {
    let why = if key.is_empty() {
        Some("an empty name".to_string())
    } else if key.contains(['=', '\0']) {
        Some(format!(
            "the name `{}` has `=` or a NUL byte",
            key.escape_debug()
        ))
    } else if value.value.contains('\0') {
        Some(format!("the value of `{key}` has a NUL byte"))
    } else {
        None
    };
    match why {
        Some(why) => Err(files
            .error_at(value, format!("[env]: {why}"))
            .note("environment names are like CMAKE_BUILD_PARALLEL_LEVEL; values are text")),
        None => Ok(()),
    }
}

/// `{sdk.root}` and `{sdk.clang}` need an SDK to fill them.
fn check_sdk_placeholder<T>(
    files: &Files,
    at: &Loc<T>,
    text: &str,
    has_sdk: bool,
) -> Result<(), InputError> {
    let uses_sdk = template::placeholders(text)
        .unwrap_or_default()
        .iter()
        .any(|p| matches!(p, Placeholder::SdkRoot | Placeholder::SdkClang));
    if uses_sdk && !has_sdk {
        return Err(files
            .error_at(
                at,
                format!("`{text}` uses the SDK, but this variant has no [sdk]"),
            )
            .note(
                "add an [sdk] table with `kind` and `version`, or remove {sdk.root}/{sdk.clang}",
            ));
    }
    Ok(())
}

fn check_sdk_placeholders(
    files: &Files,
    options: &CMakeOptions,
    sdk: Option<&layer::SdkSpec>,
) -> Result<(), InputError> {
    let has_sdk = sdk.is_some_and(|s| s.kind.is_some());
    for value in options.values() {
        if let toml::Value::String(text) = &value.value {
            check_sdk_placeholder(files, value, text, has_sdk)?;
        }
    }
    Ok(())
}

/// CTranslate2's CUDA_ARCH_LIST, as its CMakeLists.txt passes it to
/// `cuda_select_nvcc_arch_flags` (FindCUDA/select_compute_arch.cmake): `Auto`, `Common`, `All`,
/// architecture names, or numbers such as `8.6`, `8.6+PTX`, `8.6(8.0)`, separated by spaces
/// or `;`.
/// The placeholder `local-version` may hold: the major version of the SDK the build found.
pub const SDK_MAJOR: &str = "{sdk-major}";

/// The major version of an SDK version (`12.8` -> `12`), what `{sdk-major}` and
/// `[bundle.requires-dist]`'s keys stand for; `None` when it does not start with digits.
pub fn sdk_major(version: &str) -> Option<&str> {
    version
        .split('.')
        .next()
        .filter(|m| !m.is_empty() && m.bytes().all(|b| b.is_ascii_digit()))
}

/// A PEP 440 local version label: ASCII letters and digits in parts separated by dots
/// (`cpu`, `cu12`, `rocm72`); lower case, as pip compares them normalised.
pub fn check_local_version(label: &str) -> Result<(), String> {
    let part_ok = |p: &str| {
        !p.is_empty()
            && p.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    };
    if label.split('.').all(part_ok) {
        Ok(())
    } else {
        Err(format!(
            "`{label}` is not a PEP 440 local version label: lower-case letters and digits, \
             parts separated by dots (e.g. cpu, cu12, rocm72)"
        ))
    }
}

fn check_cuda_arch(list: &str) -> Result<(), String> {
    const NAMES: [&str; 16] = [
        "Auto",
        "Common",
        "All",
        "Fermi",
        "Kepler",
        "Kepler+Tegra",
        "Kepler+Tesla",
        "Maxwell",
        "Maxwell+Tegra",
        "Pascal",
        "Volta",
        "Turing",
        "Ampere",
        "Ada",
        "Hopper",
        "Blackwell",
    ];
    let number = |s: &str| {
        s.split_once('.').is_some_and(|(a, b)| {
            !a.is_empty()
                && !b.is_empty()
                && (a.bytes().chain(b.bytes())).all(|c| c.is_ascii_digit())
        })
    };
    let mut any = false;
    for part in list.split([' ', ';', ',']).filter(|p| !p.is_empty()) {
        any = true;
        let arch = part.strip_suffix("+PTX").unwrap_or(part);
        let ok = NAMES.contains(&arch)
            || number(arch)
            || arch
                .split_once('(')
                .is_some_and(|(a, b)| number(a) && b.strip_suffix(')').is_some_and(number));
        if !ok {
            return Err(format!(
                "`{part}` is neither an architecture (8.6, 9.0+PTX) nor a name (Common, Hopper)"
            ));
        }
    }
    if any {
        Ok(())
    } else {
        Err("it is empty".into())
    }
}

/// The devices and compute types CTranslate2 knows (docs/quantization.md of
/// OpenNMT/CTranslate2: `compute_type` values; ROCm builds use the `cuda` device).
fn check_compute_types(
    files: &Files,
    device: &str,
    types: &Loc<Vec<String>>,
) -> Result<(), InputError> {
    const DEVICES: [&str; 2] = ["cpu", "cuda"];
    const TYPES: [&str; 8] = [
        "int8",
        "int8_float32",
        "int8_float16",
        "int8_bfloat16",
        "int16",
        "float16",
        "bfloat16",
        "float32",
    ];
    if !DEVICES.contains(&device) {
        return Err(files
            .error_at(
                types,
                format!("[verify.compute-types]: unknown device `{device}`"),
            )
            .allowed(device, &DEVICES));
    }
    for t in &types.value {
        if !TYPES.contains(&t.as_str()) {
            return Err(files
                .error_at(
                    types,
                    format!("[verify.compute-types]: unknown compute type `{t}`"),
                )
                .allowed(t, &TYPES));
        }
    }
    Ok(())
}
