//! The GitHub Actions build matrix: one entry per CTranslate2 version × variant × platform ×
//! Python, as the `include` list that `strategy.matrix` takes through `fromJSON`.

use std::path::Path;

use serde::Serialize;

use crate::variant::{Catalog, Choices};
use ct2v_support::diagnostic::InputError;
use ct2v_support::platform::Platform;
use ct2v_support::report::Reporter;

#[derive(Debug, Clone, Serialize)]
pub struct Matrix {
    pub include: Vec<Entry>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    /// A readable job name, e.g. `rocm windows-x86_64 py3.12` (with the CTranslate2 version
    /// when it is not the variant's default: `cpu 4.8.4 linux-x86_64 py3.12`).
    pub name: String,
    pub variant: String,
    pub ctranslate2: String,
    /// The build's folder under `target/xtask/`: the variant, or `<variant>@<version>`.
    pub slot: String,
    pub platform: Platform,
    pub python: String,
    /// The artifact name `release --from` expects: `<slot>-<platform>-py<X.Y>`.
    pub artifact: String,
    /// A hosted runner's name, or a self-hosted runner's labels (see [`runs_on`]).
    #[serde(rename = "runs-on")]
    pub(crate) runs_on: serde_json::Value,
    /// The image a hosted Linux source build runs in ([`MANYLINUX_IMAGE`]), else "" (no
    /// container: GitHub runs the job on the runner itself).
    pub container: String,
    /// Whether the job needs the compiler cache (source builds) or not (repackaging).
    pub compiles: bool,
    /// The artifact of the native job that compiled this entry's C++ library once for every
    /// Python (`native-<slot>-<platform>`); "" for repackaging entries.
    pub native: String,
    /// The GPU SDK's kind (`cuda`, `hip`), "" when the variant needs none.
    pub sdk: String,
    /// Whether this job needs the SDK installed: a native job compiles with it; a Python job
    /// on top of one needs it only where the bundle copies files from it (the library's
    /// record gives the version).
    #[serde(rename = "needs-sdk")]
    pub(crate) needs_sdk: bool,
    /// Whether `cargo xtask install-sdk` can install the SDK unattended (the variant names an
    /// installer for this platform).
    #[serde(rename = "sdk-installer")]
    pub sdk_installer: bool,
    /// The SDK as pip installs it (the variant's `[sdk] pip`), "" when it has none: the job
    /// installs it into a venv from `sdk-pip-index` and builds with `rocm-sdk path --root`.
    #[serde(rename = "sdk-pip")]
    pub(crate) sdk_pip: String,
    #[serde(rename = "sdk-pip-index")]
    pub(crate) sdk_pip_index: String,
    /// `gpu` when the native job compiles GPU kernels (nvcc for every CUDA architecture takes
    /// hours), else `main`: build.yml runs the lanes apart so that no cpu job waits for them.
    pub lane: &'static str,
    /// The key of the cache holding this build's C++ library (`plan::cache_key`): equal
    /// exactly when the same library would be compiled, so a run whose C++ inputs did not
    /// change restores it and compiles nothing. "" for repackaging entries.
    #[serde(rename = "native-key")]
    pub(crate) native_key: String,
    /// The key of the cache holding the installed GPU SDK: the installer's sha256 (one SDK,
    /// one cache entry, whichever variants install it), "" when the SDK has no installer or it
    /// is not pinned yet.
    #[serde(rename = "sdk-key")]
    pub(crate) sdk_key: String,
    /// Whether the plan downloads device wheels (ROCm 10: one per GPU target, ~380 MB each):
    /// the job frees the runner's disk first and keeps its downloads out of the Actions
    /// cache, whose 10 GB per repository a family's wheels would fill.
    #[serde(rename = "device-wheels")]
    pub(crate) device_wheels: bool,
    /// Whether this job checks the wheel with real speech and a frozen app on the Windows
    /// runner (minutes each): one job per slot and platform, its newest Python; the others'
    /// wheels are installed and imported by the build's own verify step.
    #[serde(rename = "speech-check")]
    pub speech_check: bool,
    /// The inputs without a sha256 pin: such a job stops at its first step.
    #[serde(skip)]
    pub unpinned: Vec<String>,
}

impl Entry {
    /// Whether the job needs a self-hosted runner (a HIP SDK build).
    pub fn self_hosted(&self) -> bool {
        self.runs_on.is_array()
    }
}

/// Which entries a workflow runs: those that can run on a hosted runner with every input
/// pinned, and the others only when asked (a self-hosted label no runner has
/// queues its job for 24 hours and the release after it never runs; GitHub advises against
/// self-hosted runners for pull requests from forks; an unpinned input stops the job).
#[derive(Debug, Clone, Copy, Default)]
pub struct Opt {
    pub self_hosted: bool,
    pub unpinned: bool,
}

/// The native jobs of `entries`: one per variant slot and platform that compiles, with the
/// first of its Pythons (the C++ library does not depend on it; only the build-tools venv
/// needs one), named and uploaded as the entries' `native` artifact (otherwise the Python
/// jobs of one variant and platform would build oneDNN and CTranslate2 five times at once).
pub fn native(entries: &[Entry]) -> Vec<Entry> {
    let mut seen = std::collections::BTreeSet::new();
    entries
        .iter()
        .filter(|e| e.compiles && seen.insert((e.slot.clone(), e.platform)))
        .map(|e| Entry {
            name: format!(
                "{} native",
                e.name
                    .rsplit_once(" py")
                    .map_or(e.name.as_str(), |(n, _)| n)
            ),
            artifact: e.native.clone(),
            needs_sdk: !e.sdk.is_empty(),
            speech_check: false,
            ..e.clone()
        })
        .collect()
}

/// `entries` split into those `opt` runs and, for the rest, a line each saying why not.
pub fn select(entries: Vec<Entry>, opt: Opt) -> (Vec<Entry>, Vec<String>) {
    let mut kept = Vec::new();
    let mut left_out = Vec::new();
    for entry in entries {
        if entry.self_hosted() && !opt.self_hosted {
            left_out.push(format!(
                "{}: needs a self-hosted runner labelled {} (ask with --include-self-hosted)",
                entry.name, entry.runs_on
            ));
        } else if !entry.unpinned.is_empty() && !opt.unpinned {
            left_out.push(format!(
                "{}: inputs not pinned yet: {} (run `cargo xtask pin --variant {}` and commit; \
                 or ask with --include-unpinned)",
                entry.name,
                entry.unpinned.join(", "),
                entry.variant
            ));
        } else {
            kept.push(entry);
        }
    }
    (kept, left_out)
}

/// The inputs of `resolved` that have no sha256 pin yet.
fn unpinned(resolved: &crate::variant::Resolved) -> Vec<String> {
    let mut remotes: Vec<&crate::variant::Input> = resolved.inputs.values().collect();
    match &resolved.build {
        crate::variant::Build::Repackage { archive, .. } => remotes.push(archive),
        crate::variant::Build::FromSource(b) => match &b.source {
            crate::variant::Source::Archive(r) => remotes.push(r),
            crate::variant::Source::GithubTag(tag) => {
                remotes.push(&tag.archive);
                remotes.extend(tag.submodules.iter().map(|s| &s.input));
            }
            _ => {}
        },
    }
    let mut names: Vec<String> = remotes
        .into_iter()
        .filter(|r| r.sha256.is_none())
        .map(|r| r.name.clone())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Hosted runners have no HIP SDK: a source build against one runs on a hosted runner only
/// where the variant names an unattended installer for that platform (`install-sdk`, as
/// ggml-org/llama.cpp installs AMD's on windows-2022) or the pip wheels it comes as (ROCm 10,
/// as CTranslate2 4.8.4 builds its Windows ROCm wheel), else on a self-hosted runner labelled
/// with the SDK it has, e.g. `hip-sdk-6.2`.
fn runs_on(resolved: &crate::variant::Resolved, platform: Platform) -> serde_json::Value {
    match (&resolved.build, &resolved.sdk) {
        (crate::variant::Build::FromSource(_), Some(sdk))
            if sdk.kind == crate::variant::SdkKind::Hip
                && sdk.installer.is_none()
                && sdk.pip.is_none() =>
        {
            let os = if platform.is_windows() {
                "windows"
            } else {
                "linux"
            };
            serde_json::json!(["self-hosted", os, "x64", format!("hip-sdk-{}", sdk.version)])
        }
        _ => serde_json::Value::from(platform.runner()),
    }
}

/// Linux wheels are built where CTranslate2's own are, so that they need no newer glibc than
/// manylinux_2_28 (OpenNMT/CTranslate2 `.github/workflows/ci.yml`, `CIBW_MANYLINUX_X86_64_IMAGE`;
/// python/tools/prepare_build_environment_linux.sh installs CUDA there with dnf): a build on
/// the runner's Ubuntu 24.04 would come out manylinux_2_39.
pub const MANYLINUX_IMAGE: &str = "quay.io/pypa/manylinux_2_28_x86_64";

/// The container of a job: the manylinux image for a hosted Linux source build.
fn container(runs_on: &serde_json::Value, platform: Platform, compiles: bool) -> String {
    if platform.is_windows() || !compiles || runs_on.is_array() {
        return String::new();
    }
    MANYLINUX_IMAGE.to_string()
}

/// The matrix of each CTranslate2 version in `versions` (each variant's default when empty).
/// A variant that has nothing for a version (no source in its version file) is left out of
/// that version's entries, and said through `reporter`.
pub fn matrix(root: &Path, versions: &[String], reporter: &Reporter) -> Result<Matrix, InputError> {
    let mut include = Vec::new();
    if versions.is_empty() {
        include.extend(entries(&Catalog::load(root, &[])?, reporter)?);
    }
    for version in versions {
        include.extend(entries(
            &Catalog::load_for(root, &[], Some(version))?,
            reporter,
        )?);
    }
    Ok(Matrix { include })
}

/// The entries of the variants a catalog holds, each for the version it was loaded for; a
/// platform a variant has no source for is said through `reporter` and left out.
pub fn entries(catalog: &Catalog, reporter: &Reporter) -> Result<Vec<Entry>, InputError> {
    let workspace = ct2v_support::workspace::Workspace {
        root: catalog.root.clone(),
        cache_dir: catalog.root.join("target").join("xtask").join("cache"),
    };
    let mut include = Vec::new();
    for name in catalog.variant_names() {
        let mut listed = false;
        for platform in Platform::ALL {
            listed |= catalog.pythons_for(name, platform)?.is_some();
        }
        if !listed {
            return Err(InputError::new(format!(
                "variant `{name}` lists no platform, so the matrix would drop it silently"
            ))
            .allowed("", &Platform::names())
            .note(format!("set `platforms` in variants/{name}.toml")));
        }
        for platform in Platform::ALL {
            let Some(pythons) = catalog.pythons_for(name, platform)? else {
                continue;
            };
            if !catalog.has_source(name, platform) {
                reporter.say(format_args!(
                    "note: {name} has no source for CTranslate2 {} on {platform}: left out of the matrix",
                    catalog.version_of(name)
                ));
                continue;
            }
            for python in pythons {
                let resolved = catalog.resolve(
                    name,
                    &Choices {
                        platform: Some(platform),
                        python: Some(python.clone()),
                        ..Choices::default()
                    },
                )?;
                let version = if catalog.is_default_version(name) {
                    String::new()
                } else {
                    format!(" {}", resolved.ctranslate2)
                };
                let runs_on = runs_on(&resolved, platform);
                let compiles = matches!(resolved.build, crate::variant::Build::FromSource(_));
                let unpinned = unpinned(&resolved);
                let container = container(&runs_on, platform, compiles);
                let native = if compiles {
                    format!("native-{}-{platform}", resolved.slot)
                } else {
                    String::new()
                };
                let plan = crate::plan::plan(&workspace, &resolved);
                let native_key = crate::plan::cache_key::native_key(&plan)
                    .map_err(|e| InputError::new(format!("{name} {platform}: {e:#}")))?
                    .unwrap_or_default();
                let sdk_key = plan
                    .sdk_installer
                    .as_ref()
                    .and_then(|i| i.sha256.clone())
                    .unwrap_or_default();
                let device_wheels = plan
                    .inputs
                    .iter()
                    .any(|i| i.name.starts_with(crate::variant::DEVICE_INPUT_PREFIX));
                let sdk = resolved.sdk.as_ref();
                let needs_sdk = sdk.is_some() && (!compiles || resolved.bundle.takes_from_sdk());
                include.push(Entry {
                    name: format!("{name}{version} {platform} py{python}"),
                    variant: name.to_string(),
                    artifact: format!("{}-{platform}-py{python}", resolved.slot),
                    ctranslate2: resolved.ctranslate2,
                    slot: resolved.slot,
                    platform,
                    python,
                    runs_on,
                    container,
                    native,
                    sdk: sdk.map_or(String::new(), |s| match s.kind {
                        crate::variant::SdkKind::Cuda => "cuda".into(),
                        crate::variant::SdkKind::Hip => "hip".into(),
                    }),
                    needs_sdk,
                    sdk_installer: sdk.is_some_and(|s| s.installer.is_some()),
                    sdk_pip: sdk
                        .and_then(|s| s.pip.as_ref())
                        .map_or(String::new(), |(_, r)| r.clone()),
                    sdk_pip_index: sdk
                        .and_then(|s| s.pip.as_ref())
                        .map_or(String::new(), |(i, _)| i.clone()),
                    lane: if compiles && sdk.is_some() {
                        "gpu"
                    } else {
                        "main"
                    },
                    compiles,
                    native_key,
                    sdk_key,
                    device_wheels,
                    speech_check: false,
                    unpinned,
                });
            }
        }
    }
    mark_speech_checks(&mut include);
    Ok(include)
}

/// Marks the newest Python of each Windows slot for the speech check.
fn mark_speech_checks(entries: &mut [Entry]) {
    let mut newest: std::collections::BTreeMap<(String, Platform), usize> = Default::default();
    for (i, e) in entries.iter().enumerate() {
        if !e.platform.is_windows() {
            continue;
        }
        let at = newest.entry((e.slot.clone(), e.platform)).or_insert(i);
        if python_key(&e.python) > python_key(&entries[*at].python) {
            *at = i;
        }
    }
    for i in newest.into_values() {
        entries[i].speech_check = true;
    }
}

/// `3.14` as (3, 14), so that 3.14 sorts after 3.9.
fn python_key(python: &str) -> Vec<u32> {
    python.split('.').map(|p| p.parse().unwrap_or(0)).collect()
}
