//! A release folder: the built artifacts of every selected matrix entry gathered into
//! `target/dist/<version>/` with a manifest, release notes and SHA256SUMS, staged in a temp
//! folder and renamed into place; and the check of such a folder (`recheck`).

mod asset_size;
mod complete;
pub mod links;
mod manifest_rules;
pub mod notes;
pub mod pages;
mod provenance;
mod recheck;
pub mod select;
pub(crate) mod selector_wheel;
pub mod wheel_index;

pub use recheck::recheck;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::plan::Plan;
use crate::variant::coverage::Coverage;
use ct2v_bundle::checksums;
use ct2v_support::diagnostic::escaped;
use ct2v_support::fsx::{self, files_below};
use ct2v_support::report::Reporter;

pub(crate) const SCHEMA_VERSION: u32 = ct2v_support::contracts::MANIFEST;
pub(crate) const MANIFEST: &str = "manifest.json";
pub(crate) const NOTES: &str = "RELEASE_NOTES.md";
/// Which GPUs each released build serves (`variant::coverage`, restricted to what was
/// released, with the wheels' sizes): the data `ct2_variant_select --data` reads.
pub(crate) const SELECTOR_DATA: &str = "variants.json";
/// The manifest's `kind` of [`SELECTOR_DATA`].
pub(crate) const SELECTOR_DATA_KIND: &str = "selector-data";
/// The manifest's `kind` of the selector's wheel (`selector_wheel`).
pub(crate) const SELECTOR_WHEEL_KIND: &str = "selector-wheel";

#[derive(Debug, Serialize, Deserialize)]
pub struct Manifest {
    pub schema_version: u32,
    pub version: String,
    pub artifacts: Vec<Artifact>,
    /// Where the pip index links the wheels (`--index-base-url`); absent: relative links.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_base_url: Option<String>,
    /// The matrix entries this release was asked for but does not hold (`--partial`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<LeftOut>,
}

/// A matrix entry a `--partial` release does not publish, and why.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct LeftOut {
    pub variant: String,
    /// The entry's platform: a release leaves out a variant's platform whole (its other
    /// platforms' wheels are published). Empty in a manifest of before that: the variant whole.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub platform: String,
    /// The entry's job name, as a CI run shows it.
    pub job: String,
    pub reason: String,
}

impl Manifest {
    /// The platforms of `variant` a `--partial` release left out, sorted (none for an entry
    /// of an older manifest, which names no platform).
    pub(crate) fn platforms_left_out(&self, variant: &str) -> Vec<&str> {
        let platforms: std::collections::BTreeSet<&str> = self
            .left_out
            .iter()
            .filter(|l| l.variant == variant && !l.platform.is_empty())
            .map(|l| l.platform.as_str())
            .collect();
        platforms.into_iter().collect()
    }

    /// `dir/manifest.json`, with the file named when it cannot be read or is not a manifest.
    pub fn read(dir: &Path) -> Result<Manifest> {
        let source = dir.join(MANIFEST);
        let text = fs::read_to_string(&source).map_err(|e| {
            ct2v_support::diagnostic::InputError::new(format!(
                "cannot read {}: {e}",
                source.display()
            ))
            .note("a release folder is what `cargo xtask release` wrote, with its manifest.json")
        })?;
        Ok(serde_json::from_str(&text).map_err(|e| {
            ct2v_support::diagnostic::InputError::new(format!(
                "{}: not a release manifest: {e}",
                source.display()
            ))
        })?)
    }
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Artifact {
    /// Relative to the release folder, `/`-separated.
    pub path: String,
    /// `wheel`, `portable` (a zip of the PyInstaller-style folder) or `provenance`.
    pub kind: String,
    pub variant: String,
    pub description: String,
    pub platform: String,
    pub python: String,
    pub ctranslate2: String,
    pub size: u64,
    pub sha256: String,
    /// Every pinned input of the build: name, URL, sha256.
    pub inputs: Vec<ManifestInput>,
    /// The GPU SDK the build needed, e.g. "cuda 12".
    pub sdk: Option<String>,
    /// The bundled libraries (from the build's provenance report): path, package, sha256.
    pub bundled: Vec<ManifestLibrary>,
    /// The tools that built it (the build's build-info.json: compiler, CMake, Python, SDK).
    pub toolchain: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ManifestInput {
    pub name: String,
    pub url: String,
    pub sha256: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ManifestLibrary {
    pub path: String,
    pub package: String,
    pub sha256: String,
    /// The pinned input the file came from, when its package is one the plan's bundle step
    /// names (the community rocBLAS `.7z`, the SDK wheels): its name, as in the artifact's
    /// `inputs` (URL, sha256).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
}

/// One matrix entry's build: its plan and the folder holding what it produced.
pub struct Built {
    pub plan: Plan,
    pub dist: PathBuf,
    /// The matrix entry's job name (what a CI run shows), for what a release leaves out.
    pub job: String,
    /// The matrix entry's artifact name (its folder in `--from`), for what a release leaves
    /// out: published, unlike where this machine keeps the folder.
    pub artifact: String,
    /// Where CI put the entry's build and logs when its check failed (`failed-<artifact>`
    /// beside the artifacts), if it is there.
    pub(crate) failed_check: Option<PathBuf>,
}

/// The release folder `dest` can be written: new or empty, never a release replaced.
pub(crate) fn check_dest(dest: &Path) -> Result<(), ct2v_support::diagnostic::InputError> {
    ct2v_support::out_folder::check_out(
        "--out",
        dest,
        ct2v_support::out_folder::Existing::MustBeEmpty,
    )
    .map_err(|e| {
        e.note("releases are never replaced: remove it, or release under another --version")
    })
}

/// Gathers `built` into `dest` (which must not exist or be empty). Returns the manifest.
/// A Linux wheel still tagged `linux_x86_64` is refused unless `allow_linux_tag`.
/// With `partial`, a variant's platform with any entry missing is left out whole (its index
/// would lack a Python there) and named in the manifest and notes, its other platforms
/// published; without it, any missing entry stops the release. What it leaves out, and the
/// staging folders it sweeps, are said through `reporter`.
pub fn release(
    built: &[Built],
    version: &str,
    dest: &Path,
    options: &ReleaseOptions,
    coverage: &Coverage,
    reporter: &Reporter,
) -> Result<Manifest> {
    let ReleaseOptions {
        allow_linux_tag,
        index_base_url,
        partial,
    } = *options;
    let _lock = ct2v_support::out_lock::hold(dest)
        .with_context(|| format!("cannot write {}", dest.display()))?;
    check_dest(dest)?;
    let (built, left_out) = complete::complete_sets(built, partial)?;
    for b in &built {
        check_dist(b)?;
    }
    for l in &left_out {
        reporter.say(format_args!(
            "note: left out of this release: {}: {}",
            escaped(&l.job),
            escaped(&l.reason)
        ));
    }

    let linux_tagged: Vec<String> = built
        .iter()
        .filter_map(|b| wheel_in(&b.dist))
        .filter(|w| w.to_string_lossy().ends_with("-linux_x86_64.whl"))
        .map(|w| format!("  {}", w.display()))
        .collect();
    if !linux_tagged.is_empty() && !allow_linux_tag {
        bail!(
            "{} wheel(s) are tagged linux_x86_64, not manylinux (PyPI refuses them, and pip \
             installs them only on a machine like the one that built them):\n{}\n\
             Rebuild them so the bundle proves the manylinux tag, or release them anyway with \
             --allow-linux-tag",
            linux_tagged.len(),
            linux_tagged.join("\n")
        );
    }
    let too_new: Vec<String> = built
        .iter()
        .copied()
        .filter_map(newer_than_policy)
        .collect();
    if !too_new.is_empty() && !allow_linux_tag {
        bail!(
            "{} wheel(s) need a newer glibc than their variant's manylinux policy (built on a \
             newer Linux than the manylinux_2_28 image CTranslate2's own wheels are built in):\n{}\n\
             pip installs them only where glibc is at least that new. Build them in \
             quay.io/pypa/manylinux_2_28_x86_64, or release them anyway with --allow-linux-tag",
            too_new.len(),
            too_new.join("\n")
        );
    }
    let staging = ct2v_support::out_folder::staging_beside(dest, ".release-", reporter)?;
    // The release is written into a folder of the staging folder, so that what is renamed
    // into place never holds the staging folder's marker, and a run killed at any point
    // leaves a marked staging folder the next run sweeps.
    let folder = staging.path().join("release");
    fsx::create_dir_all(&folder)?;
    let mut artifacts = Vec::new();
    for b in &built {
        artifacts.extend(copy_artifacts(b, &folder)?);
    }
    let released = released_coverage(coverage, &artifacts)?;
    let selector = folder.join(SELECTOR_DATA);
    fsx::write(&selector, serde_json::to_string_pretty(&released)? + "\n")?;
    artifacts.push(release_file(
        &folder,
        SELECTOR_DATA,
        SELECTOR_DATA_KIND,
        "which GPUs each released variant serves, for ct2_variant_select --data",
        version,
    )?);
    let ctranslate2 = built
        .first()
        .map_or(version, |b| b.plan.ctranslate2.as_str());
    let selector_wheel = selector_wheel::write(
        &fs::read_to_string(&selector)?,
        &selector_wheel::version_for(version, ctranslate2),
        &folder,
    )?;
    artifacts.push(release_file(
        &folder,
        &selector_wheel,
        SELECTOR_WHEEL_KIND,
        "the GPU selector with this release's variants.json: pip install ct2-variant-select from \
         any variant's index, then python -m ct2_variant_select",
        version,
    )?);
    write_indexes(&folder, &artifacts, index_base_url)?;
    let manifest = Manifest {
        schema_version: SCHEMA_VERSION,
        version: version.to_string(),
        artifacts,
        index_base_url: index_base_url.map(str::to_string),
        left_out,
    };
    fsx::write(
        &folder.join(MANIFEST),
        serde_json::to_string_pretty(&manifest)?,
    )?;
    fsx::write(&folder.join(NOTES), notes::notes(&manifest))?;
    write_checksums(&folder)?;
    // What is made here (the portable zips) is checked before it is put in place.
    for (_, path) in files_below(&folder)? {
        asset_size::check(&path)?;
    }
    ct2v_support::out_folder::put_in_place("--out", &folder, dest, reporter)?;
    Ok(manifest)
}

/// A file of the release itself (not of one entry), as its manifest row.
fn release_file(
    dir: &Path,
    name: &str,
    kind: &str,
    description: &str,
    version: &str,
) -> Result<Artifact> {
    let (sha256, size) = ct2v_fetch::cache::sha256_file(&dir.join(name))?;
    Ok(Artifact {
        path: name.to_string(),
        kind: kind.to_string(),
        variant: String::new(),
        description: description.to_string(),
        platform: String::new(),
        python: String::new(),
        ctranslate2: version.to_string(),
        size,
        sha256,
        inputs: Vec::new(),
        sdk: None,
        bundled: Vec::new(),
        toolchain: None,
    })
}

/// How `release` treats what it finds.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReleaseOptions<'a> {
    /// Release Linux wheels tagged `linux_x86_64` or newer than their policy.
    pub allow_linux_tag: bool,
    /// Where the pip index links the wheels; `None`: relative links.
    pub index_base_url: Option<&'a str>,
    /// Release each variant's platforms whose entries are all there, naming the rest.
    pub partial: bool,
}

/// The coverage of what `artifacts` released: per variant only the local versions that have
/// a wheel, on the platforms they were built for, with the released CTranslate2 version in the
/// requirement and the largest wheel per platform as the download size; the card table
/// recomputed over them.
fn released_coverage(coverage: &Coverage, artifacts: &[Artifact]) -> Result<Coverage> {
    let mut variants = Vec::new();
    for v in &coverage.variants {
        let mut builds = Vec::new();
        let mut platforms: Vec<String> = Vec::new();
        let mut ctranslate2 = v.ctranslate2.clone();
        for b in &v.builds {
            let mut build = b.clone();
            let mut any = false;
            for a in artifacts
                .iter()
                .filter(|a| a.kind == "wheel" && a.variant == v.name)
            {
                let name = ct2v_fetch::wheel_name::WheelName::parse(Path::new(&a.path))?;
                if name.local.as_deref() != Some(b.local_version.as_str()) {
                    continue;
                }
                any = true;
                ctranslate2 = a.ctranslate2.clone();
                build.requirement =
                    format!("ctranslate2=={}+{}", name.public_version, b.local_version);
                let size = build.download_size.entry(a.platform.clone()).or_insert(0);
                *size = (*size).max(a.size);
                if !platforms.contains(&a.platform) {
                    platforms.push(a.platform.clone());
                }
            }
            if any {
                builds.push(build);
            }
        }
        if builds.is_empty() {
            continue;
        }
        platforms.sort();
        variants.push(crate::variant::coverage::VariantCoverage {
            name: v.name.clone(),
            description: v.description.clone(),
            ctranslate2,
            platforms,
            builds,
        });
    }
    Ok(coverage.with_variants(variants))
}

/// `(2, 36)` of a `manylinux_2_36_x86_64` tag or policy name.
fn manylinux_glibc(text: &str) -> Option<(u32, u32)> {
    let rest = text.split("manylinux_").nth(1)?;
    let mut parts = rest.split('_');
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// The entry's wheel, when its manylinux tag is newer than the variant's bundle policy.
fn newer_than_policy(b: &Built) -> Option<String> {
    let wheel = wheel_in(&b.dist)?;
    let name = wheel.file_name()?.to_string_lossy().into_owned();
    let tag = manylinux_glibc(name.rsplit('-').next()?)?;
    let policy = serde_json::to_value(b.plan.bundle_job()?.policy).ok()?;
    let policy = policy.as_str()?;
    (tag > manylinux_glibc(policy)?).then(|| {
        format!(
            "  {} (manylinux_{}_{}, the variant's policy is {policy})",
            wheel.display(),
            tag.0,
            tag.1
        )
    })
}

pub(crate) fn wheel_in(dist: &Path) -> Option<PathBuf> {
    wheels_in(dist).into_iter().next()
}

/// Every `*.whl` entry in `dist`, sorted (a build leaves exactly one).
fn wheels_in(dist: &Path) -> Vec<PathBuf> {
    let mut wheels: Vec<PathBuf> = fs::read_dir(dist)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "whl"))
                .collect()
        })
        .unwrap_or_default();
    wheels.sort();
    wheels
}

/// What `release` takes from an entry's folder must be plain files: a FIFO, a device or a
/// folder where a file is expected would hang or mislead the read; a second wheel makes the
/// choice ambiguous.
fn check_dist(b: &Built) -> Result<(), ct2v_support::diagnostic::InputError> {
    let wheels = wheels_in(&b.dist);
    if wheels.len() > 1 {
        let names: Vec<String> = wheels.iter().map(|w| w.display().to_string()).collect();
        return Err(ct2v_support::diagnostic::InputError::new(format!(
            "{} {} py{} has {} wheels, where a build leaves one:\n  {}",
            b.plan.variant,
            b.plan.platform,
            b.plan.python,
            wheels.len(),
            names.join("\n  ")
        ))
        .note("remove the ones that are not this entry's build"));
    }
    // Its name is published (the manifest, the notes' pip command, the index) and read
    // back by `pages`, which refuses what PEP 427 does not allow: refused here first.
    for wheel in &wheels {
        let name = wheel
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Err(refusal) = ct2v_support::text_rules::wheel_file_name(&name) {
            return Err(ct2v_support::diagnostic::InputError::new(format!(
                "{}: the wheel {} is not named as PEP 427 names a wheel: {}",
                b.dist.display(),
                ct2v_support::diagnostic::quoted(&name),
                refusal.why
            ))
            .note(format!("give {}", refusal.instead)));
        }
    }
    for path in wheels.iter().cloned().chain(
        [
            "provenance.json",
            "provenance.md",
            crate::execute::BUILD_INFO,
        ]
        .map(|f| b.dist.join(f)),
    ) {
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        if !meta.is_file() && !meta.file_type().is_symlink() {
            return Err(ct2v_support::diagnostic::InputError::new(format!(
                "{} is not a regular file: release reads only files",
                path.display()
            )));
        }
        asset_size::check(&path)?;
    }
    Ok(())
}

/// Copies one entry's artifacts into `out` under names no other entry shares (the wheel with
/// the variant's local version, the rest prefixed with the entry's slot, platform and
/// Python), as they are published: one flat folder; returns their manifest rows.
fn copy_artifacts(b: &Built, out: &Path) -> Result<Vec<Artifact>> {
    let plan = &b.plan;
    let folder = out;
    let stem = format!("{}-{}-py{}", plan.slot, plan.platform, plan.python);
    let wheel = wheel_in(&b.dist).expect("checked before");
    refuse_symlink(&wheel)?;
    let problems = ct2v_bundle::wheel::check_record(&wheel)?;
    if !problems.is_empty() {
        bail!(
            "{}: its RECORD does not match its contents:\n  {}",
            wheel.display(),
            problems.join("\n  ")
        );
    }
    let toolchain: Option<serde_json::Value> =
        match fs::read_to_string(b.dist.join(crate::execute::BUILD_INFO)) {
            Ok(text) => Some(published_toolchain(
                serde_json::from_str(&text).with_context(|| {
                    format!(
                        "{} is not valid JSON",
                        b.dist.join(crate::execute::BUILD_INFO).display()
                    )
                })?,
            )),
            Err(_) => None,
        };
    let label = local_label(plan, toolchain.as_ref())?;
    let wheel_name = relabel(&wheel, &label, folder)?;
    let mut files = vec![("wheel", wheel_name.clone())];
    let portable = b.dist.join("portable");
    refuse_symlink(&portable)?;
    if portable.is_dir() {
        let name = format!("{stem}-portable.zip");
        refuse_taken(&folder.join(&name))?;
        zip_dir(&portable, &folder.join(&name))?;
        files.push(("portable", name));
    }
    let mut bundled = Vec::new();
    for ext in ["json", "md"] {
        let report = b.dist.join(format!("provenance.{ext}"));
        refuse_symlink(&report)?;
        if report.is_file() {
            let name = format!("{stem}-provenance.{ext}");
            copy_new(&report, &folder.join(&name))?;
            files.push(("provenance", name));
            if ext == "json" {
                bundled = provenance::bundled_of(&report)?;
            }
        }
    }
    for b in &mut bundled {
        b.input = input_of(plan, &b.package);
    }
    let inputs: Vec<ManifestInput> = plan
        .inputs
        .iter()
        .map(|i| ManifestInput {
            name: i.name.clone(),
            url: i.url.clone(),
            sha256: i.sha256.clone(),
        })
        .collect();
    let mut rows = Vec::new();
    for (kind, name) in files {
        let path = folder.join(&name);
        let (sha256, size) = ct2v_fetch::cache::sha256_file(&path)?;
        rows.push(Artifact {
            path: name.clone(),
            kind: kind.to_string(),
            variant: plan.variant.clone(),
            description: plan.description.clone(),
            platform: plan.platform.to_string(),
            python: plan.python.clone(),
            ctranslate2: plan.ctranslate2.clone(),
            size,
            sha256,
            inputs: inputs.clone(),
            sdk: plan
                .sdk
                .as_ref()
                .map(|s| format!("{:?} {}", s.kind, s.version).to_lowercase()),
            toolchain: toolchain.clone(),
            bundled: if kind == "wheel" {
                bundled.clone()
            } else {
                Vec::new()
            },
        });
    }
    Ok(rows)
}

/// A build's build-info.json as the manifest publishes it: without the SDK's folder on the
/// build machine (`sdk.root`), which is that machine's own path.
fn published_toolchain(mut info: serde_json::Value) -> serde_json::Value {
    if let Some(sdk) = info.get_mut("sdk").and_then(|s| s.as_object_mut()) {
        sdk.remove("root");
    }
    info
}

/// The input whose bundle search folder or data entry gives `package` its name (the
/// variant's `package` of an input that is no wheel).
fn input_of(plan: &Plan, package: &str) -> Option<String> {
    let job = plan.bundle_job()?;
    // The bundle job labels an input's files `<its package>, from <its file>`; the report says
    // the package (a wheel's), or that label.
    let labels = job
        .search
        .iter()
        .map(|s| s.fallback_package.as_ref())
        .chain(job.data.iter().map(|d| d.package.as_ref()))
        .flatten();
    labels
        .filter_map(|label| {
            plan.inputs.iter().find_map(|i| {
                let p = i.package.as_ref()?;
                (crate::plan::input_label(&plan.inputs, &i.name, p) == *label)
                    .then_some((i, p, label))
            })
        })
        .find_map(|(input, p, label)| {
            (p == package || label == package).then(|| input.name.clone())
        })
}

/// Artifacts are packed as the files they are: a symlink would pack whatever it points at
/// (anywhere on the machine), so it is refused, with its path.
fn refuse_symlink(path: &Path) -> Result<()> {
    if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        bail!(
            "{} is a symlink: release packs only real files; replace it by the file or remove it",
            path.display()
        );
    }
    Ok(())
}

/// Copies `from` to `to`; an existing `to` with other content is an error, never replaced.
/// A published name is used once: GitHub refuses a second asset of the same name.
fn refuse_taken(to: &Path) -> Result<()> {
    if to.exists() {
        bail!(
            "two artifacts of this release are both called {}: a release publishes one flat \
             folder, so every name must be unique",
            to.file_name().unwrap_or_default().to_string_lossy()
        );
    }
    Ok(())
}

/// The variant's local version label with `{sdk-major}` filled from the SDK the build found
/// (build-info.json).
fn local_label(plan: &Plan, toolchain: Option<&serde_json::Value>) -> Result<String> {
    let Some(label) = &plan.local_version else {
        return Err(ct2v_support::diagnostic::InputError::new(format!(
            "variant `{}` has no local-version: a release labels every wheel with one so that \
             the variants' wheels never share a name",
            plan.variant
        ))
        .note(format!(
            "add `local-version = \"…\"` to variants/{}.toml (cpu, cu{{sdk-major}}, rocm72, gfx1010)",
            plan.variant
        ))
        .into());
    };
    let marker = crate::variant::SDK_MAJOR;
    if !label.contains(marker) {
        return Ok(label.clone());
    }
    let major = toolchain
        .and_then(|t| t["sdk"]["version"].as_str())
        .and_then(crate::variant::sdk_major);
    match major {
        Some(major) => Ok(label.replace(marker, major)),
        None => bail!(
            "variant `{}`'s local-version `{label}` needs the SDK the build found, but its \
             build-info.json names none: rebuild it with this tool",
            plan.variant
        ),
    }
}

/// Writes `wheel` into `folder` with the local version `label`; returns its new name.
fn relabel(wheel: &Path, label: &str, folder: &Path) -> Result<String> {
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    let staged = tempfile::tempdir_in(folder)
        .with_context(|| format!("cannot create a folder in {}", folder.display()))?;
    let new_name = ct2v_bundle::wheel::write_with_local_version(wheel, label, staged.path())?;
    let to = folder.join(&new_name);
    refuse_taken(&to)?;
    fs::rename(staged.path().join(&new_name), &to)
        .with_context(|| format!("cannot write {} (from {name})", to.display()))?;
    Ok(new_name)
}

/// One PEP 503 index per variant (`whl/<slot>/`), of the wheels in `artifacts`, each with the
/// selector's wheel beside CTranslate2's.
fn write_indexes(dir: &Path, artifacts: &[Artifact], base_url: Option<&str>) -> Result<()> {
    let link = |a: &Artifact| ct2v_fetch::pep503::Link {
        file: a.path.clone(),
        sha256: a.sha256.clone(),
        base: base_url
            .unwrap_or(crate::release::wheel_index::RELATIVE_BASE)
            .to_string(),
    };
    let mut by_variant: BTreeMap<&str, Vec<ct2v_fetch::pep503::Link>> = BTreeMap::new();
    for a in artifacts.iter().filter(|a| a.kind == "wheel") {
        by_variant
            .entry(a.variant.as_str())
            .or_default()
            .push(link(a));
    }
    let selector: Vec<ct2v_fetch::pep503::Link> = artifacts
        .iter()
        .filter(|a| a.kind == SELECTOR_WHEEL_KIND)
        .map(link)
        .collect();
    for (variant, links) in by_variant {
        crate::release::wheel_index::write(dir, variant, &links, &selector)?;
    }
    Ok(())
}

/// The files published as release assets: the top level of the release folder (not the
/// `whl/` index, which is hosted as pages).
pub fn published(dir: &Path) -> Result<Vec<String>> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != checksums::FILE_NAME && n != ct2v_support::staging::MARKER)
        .collect();
    names.sort();
    Ok(names)
}

/// SHA256SUMS of the published files, by the names they are published under, so that
/// `sha256sum -c SHA256SUMS` passes in a folder of downloaded assets.
fn write_checksums(dir: &Path) -> Result<()> {
    let files = published(dir)?;
    let hashes = checksums::hash_all(dir, &files, checksums::default_jobs())?;
    let text: String = files
        .iter()
        .zip(&hashes)
        .map(|(name, hex)| format!("{hex}  {name}\n"))
        .collect();
    ct2v_support::fsx::write_atomically(&dir.join(checksums::FILE_NAME), &text)
}

fn copy_new(from: &Path, to: &Path) -> Result<()> {
    refuse_taken(to)?;
    ct2v_support::regular_file::copy(from, to)
        .with_context(|| format!("cannot copy {} to {}", from.display(), to.display()))?;
    // Release files are readable by all, whatever mode the build left.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(to, fs::Permissions::from_mode(0o644))?;
    }
    Ok(())
}

/// A zip of `dir` with sorted entries, fixed times and modes: the same folder, the same bytes.
fn zip_dir(dir: &Path, out: &Path) -> Result<()> {
    let writing = || format!("cannot write {}", out.display());
    let mut zip = ct2v_bundle::wheel::ZipOut::new(
        ct2v_support::regular_file::create(out).with_context(writing)?,
    );
    for (name, path) in files_below(dir)? {
        refuse_symlink(&path)?;
        let data = fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
        zip.add(&name, ct2v_bundle::wheel::zip_mode(&path), &data)
            .with_context(writing)?;
    }
    zip.finish().with_context(writing)?;
    Ok(())
}
