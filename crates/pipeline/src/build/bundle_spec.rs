//! The [`BundleJob`] of a plan's `bundle` step: the plan knows every folder except the SDK
//! and the toolchain, which are found on the build machine and passed in.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::plan::{BundleAction, Plan};
use crate::variant::{DataFilter, LibrarySource};
use ct2v_bundle::bundle::spec::{BundleJob, DataGlob, SearchDir, SearchFolder};

/// Folders the plan cannot know, found when the build runs (not to be confused with
/// `sdk::Found`, the SDK discovery result these are partly taken from).
#[derive(Debug, Default, Clone)]
pub struct Folders {
    /// The CUDA toolkit or HIP SDK (for `from = "sdk"`).
    pub sdk_root: Option<PathBuf>,
    /// The compiler's runtime libraries (for `from = "toolchain"`).
    pub toolchain: Option<PathBuf>,
    /// The SDK's version as found on this machine, for the report (else the variant's).
    pub sdk_version: Option<String>,
}

pub fn from_plan(plan: &Plan, found: &Folders) -> Result<BundleJob> {
    let action = plan
        .bundle_action()
        .with_context(|| format!("the plan of `{}` has no bundle step", plan.variant))?;
    from_action(plan, action, found)
}

/// The spec of `bundle --variant`: the plan's bundle step once a build wrote its wheel, with
/// the SDK and compiler-runtime folders given as flags.
pub fn from_built_plan(
    plan: &Plan,
    sdk_dir: Option<&Path>,
    toolchain_dir: Option<&Path>,
) -> Result<BundleJob> {
    let wheel = plan.bundle_action().map(|b| PathBuf::from(&b.wheel));
    if let Some(wheel) = wheel.filter(|w| !w.is_file()) {
        bail!(
            "the wheel to bundle for, {}, is not there yet: build it first \
             (`cargo xtask build --variant {}`), or bundle another wheel with --wheel",
            wheel.display(),
            plan.variant
        );
    }
    // The SDK's version matters where the bundle declares what the run-time needs by its
    // major ([bundle.requires-dist]): read from the folder given.
    let sdk_version = match (&plan.sdk, sdk_dir) {
        (Some(sdk), Some(dir)) => {
            Some(crate::sdk::find(sdk, plan.platform, &[], Some(dir))?.version)
                .filter(|v| !v.is_empty())
        }
        _ => None,
    };
    let found = Folders {
        sdk_root: sdk_dir.map(Path::to_path_buf),
        toolchain: toolchain_dir.map(Path::to_path_buf),
        sdk_version,
    };
    from_plan(plan, &found)
}

fn from_action(plan: &Plan, action: &BundleAction, found: &Folders) -> Result<BundleJob> {
    let folder = |from: &LibrarySource, known: &Option<String>, rel: &str| -> Result<PathBuf> {
        if let Some(path) = known {
            return Ok(PathBuf::from(path));
        }
        let (base, flag) = match from {
            LibrarySource::Sdk => (found.sdk_root.clone(), "--sdk-dir"),
            LibrarySource::Toolchain => (
                found
                    .toolchain
                    .clone()
                    .or_else(|| compiler_runtime_dir(plan)),
                "--toolchain-dir",
            ),
            other => bail!("bundle source `{}` has no folder in the plan", other.name()),
        };
        match base {
            Some(base) if *from == LibrarySource::Sdk => Ok(crate::sdk::hip::locate(&base, rel)),
            Some(base) => Ok(join(&base, rel)),
            None => bail!(
                "variant `{}` bundles libraries from the {}, which this command cannot find \
                 by itself: pass {flag} DIR",
                plan.variant,
                from.name()
            ),
        }
    };
    let mut search = Vec::new();
    for s in &action.search {
        let dir = if s.from == LibrarySource::Wheel {
            SearchDir::InWheel(s.path.clone().unwrap_or_else(|| s.dir.clone()))
        } else {
            SearchDir::Dir(folder(&s.from, &s.path, &s.dir)?)
        };
        let (package, counts_as_sdk) = match &s.from {
            LibrarySource::Prefix => (
                Some(format!("CTranslate2 {} (this build)", plan.ctranslate2)),
                false,
            ),
            LibrarySource::Toolchain => (Some("the C++ compiler's runtime".to_string()), false),
            LibrarySource::Sdk => (
                plan.sdk
                    .as_ref()
                    .map(|sdk| sdk_name(sdk, found.sdk_version.as_deref())),
                true,
            ),
            // The wheel, or an input: its wheel's dist-info names it, else its variant table's
            // `package`.
            LibrarySource::Wheel | LibrarySource::Input(_) => (None, true),
        };
        search.push(SearchFolder {
            dir,
            dest: s.dest.clone(),
            package,
            fallback_package: s
                .package
                .as_deref()
                .map(|p| crate::plan::input_label(plan, s.from.name(), p)),
            counts_as_sdk,
        });
    }
    let mut data = Vec::new();
    for d in &action.data {
        // The glob's folder is found in the SDK's own layout (see `hip::locate`).
        let (dir, pattern) = match (&d.from, d.glob.rsplit_once('/')) {
            (LibrarySource::Sdk, Some((dir, pattern))) => (dir, pattern.to_string()),
            _ => ("", d.glob.clone()),
        };
        data.push(DataGlob {
            base: folder(&d.from, &d.base, dir)?,
            glob: pattern,
            dest: d.dest.clone(),
            filter_gpu_targets: d.filter == Some(DataFilter::GpuTargets),
            package: d
                .package
                .as_deref()
                .map(|p| crate::plan::input_label(plan, d.from.name(), p)),
        });
    }
    Ok(BundleJob {
        manylinux: action.manylinux.clone(),
        roots: action.roots.clone(),
        force: action.force.clone(),
        assume_present: action.assume_present.clone(),
        search,
        data,
        gpu_targets: action.gpu_targets.clone(),
        outputs: action.produce.clone(),
        patchelf: action.patchelf.as_ref().map(PathBuf::from),
        missing_hint: missing_hint(plan, action),
        requires_dist: requires_dist(plan, action, found)?,
        ..BundleJob::new(
            PathBuf::from(&action.wheel),
            action.policy,
            PathBuf::from(&action.out),
            plan.variant.clone(),
            plan.platform.to_string(),
        )
    })
}

/// The `Requires-Dist` lines for the SDK this build found (`[bundle.requires-dist]`, keyed by
/// its major version): e.g. the cuBLAS wheel of the CUDA the cuda variant was compiled with.
fn requires_dist(plan: &Plan, action: &BundleAction, found: &Folders) -> Result<Vec<String>> {
    if action.requires_dist.is_empty() {
        return Ok(Vec::new());
    }
    let found_major = found
        .sdk_version
        .as_deref()
        .and_then(|v| Some((v, crate::variant::sdk_major(v)?)));
    let Some((version, major)) = found_major else {
        bail!(
            "variant `{}` declares the wheels it needs by the SDK's major version \
             ([bundle.requires-dist]), but no SDK with a numeric major version was found for \
             this bundle: run it from `cargo xtask build`, or pass --sdk-dir",
            plan.variant
        );
    };
    action.requires_dist.get(major).cloned().with_context(|| {
        format!(
            "variant `{}` was built against SDK {version}, and its [bundle.requires-dist] has no \
             entry for major version {major} (it has: {}): add `\"{major}\" = [...]` to \
             variants/{}.toml",
            plan.variant,
            action
                .requires_dist
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", "),
            plan.variant
        )
    })
}

/// What an error about a missing library adds: the package each SDK folder is, its URL,
/// and the ways to fix it. Upstream installs these wheels by direct URL
/// (OpenNMT/CTranslate2 v4.7.1, python/tools/prepare_build_environment_windows_rocm.sh).
fn missing_hint(plan: &Plan, action: &BundleAction) -> String {
    let packages: Vec<(&str, &str, &str)> = action
        .search
        .iter()
        .filter_map(|s| Some((s.dir.as_str(), s.package.as_deref()?, s.url.as_deref()?)))
        .collect();
    if packages.is_empty() {
        return String::new();
    }
    let mut text = String::new();
    for (dir, package, url) in &packages {
        text.push_str(&format!("\n  = {dir} is the package {package}, from {url}"));
    }
    let urls: Vec<&str> = packages.iter().map(|(_, _, url)| *url).collect();
    text.push_str(&format!(
        "\n  = to fix: build without --sdk-dir to use the pinned wheels \
         (`cargo xtask build --variant {variant} --platform {platform}`), or give --sdk-dir a \
         folder that has them: `pip install --no-deps --target DIR {urls}`",
        variant = plan.variant,
        platform = plan.platform,
        urls = urls.join(" ")
    ));
    text
}

/// The folder of the C++ compiler's OpenMP runtime (libgomp; `$CXX`, else `c++`), which a
/// Linux wheel carries. Windows builds name their runtime's folder explicitly.
fn compiler_runtime_dir(plan: &Plan) -> Option<PathBuf> {
    if plan.platform.is_windows() {
        return None;
    }
    let compiler = std::env::var("CXX").unwrap_or_else(|_| "c++".to_string());
    let output =
        ct2v_support::process::capture(compiler, ["-print-file-name=libgomp.so.1"]).ok()?;
    let path = PathBuf::from(output.stdout.trim());
    path.is_absolute()
        .then(|| path.parent().map(Path::to_path_buf))
        .flatten()
}

fn sdk_name(sdk: &crate::variant::Sdk, found: Option<&str>) -> String {
    match (sdk.kind, found.filter(|v| !v.is_empty())) {
        (crate::variant::SdkKind::Cuda, Some(v)) => format!("CUDA toolkit {v}"),
        (crate::variant::SdkKind::Cuda, None) => format!("CUDA toolkit ({}+)", sdk.version),
        (crate::variant::SdkKind::Hip, v) => format!("HIP SDK {}", v.unwrap_or(&sdk.version)),
    }
}

fn join(base: &Path, rel: &str) -> PathBuf {
    if rel.is_empty() {
        base.to_path_buf()
    } else {
        base.join(rel)
    }
}
