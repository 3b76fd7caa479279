//! The [`BundleJob`] of a plan's `bundle` step made ready to run: the plan knows every folder
//! except the SDK's and the compiler runtime's, which are found on the build machine and
//! filled in here (where the plan has `plan::unfilled` placeholders), with the SDK's name and
//! the `Requires-Dist` lines of the SDK found.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::plan::Plan;
use crate::plan::unfilled::{self, SDK_ROOT, TOOLCHAIN};
use ct2v_bundle::bundler::job::{BundleJob, SearchDir};
use ct2v_support::report::Reporter;

/// Folders the plan cannot know, found when the build runs (not to be confused with
/// `sdk::Found`, the SDK discovery result these are partly taken from).
#[derive(Debug, Default, Clone)]
pub struct Folders {
    /// The CUDA toolkit or HIP SDK (for `from = "sdk"`).
    pub(crate) sdk_root: Option<PathBuf>,
    /// The compiler's runtime libraries (for `from = "toolchain"`).
    pub toolchain: Option<PathBuf>,
    /// The SDK's version as found on this machine, for the report (else the variant's).
    pub(crate) sdk_version: Option<String>,
}

pub(crate) fn from_plan(plan: &Plan, found: &Folders) -> Result<BundleJob> {
    let mut job = plan
        .bundle_job()
        .with_context(|| format!("the plan of `{}` has no bundle step", plan.variant))?
        .clone();
    let sdk_name = plan
        .sdk
        .as_ref()
        .map(|sdk| sdk_name(sdk, found.sdk_version.as_deref()));
    for s in &mut job.search {
        if let SearchDir::Dir(dir) = &mut s.dir {
            if unfilled::in_sdk(dir) {
                s.package = sdk_name.clone();
            }
            *dir = filled(plan, dir, found)?;
        }
    }
    for d in &mut job.data {
        d.base = filled(plan, &d.base, found)?;
    }
    job.requires_dist = requires_dist(plan, found)?;
    Ok(job)
}

/// The job of `bundle --variant`: the plan's bundle step once a build wrote its wheel, with
/// the SDK and compiler-runtime folders given as flags (what reading the SDK's notes is said
/// through `reporter`).
pub(crate) fn from_built_plan(
    plan: &Plan,
    sdk_dir: Option<&Path>,
    toolchain_dir: Option<&Path>,
    reporter: &Reporter,
) -> Result<BundleJob> {
    let wheel = plan.bundle_job().map(|b| b.wheel.clone());
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
            Some(crate::sdk::find(sdk, plan.platform, &[], Some(dir), reporter)?.version)
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

/// `path` with the folder its placeholder stands for, as found here or given by a flag.
fn filled(plan: &Plan, path: &Path, found: &Folders) -> Result<PathBuf> {
    let (rel, base, from, flag) = if let Some(rel) = unfilled::below(path, SDK_ROOT) {
        (rel, found.sdk_root.clone(), "sdk", "--sdk-dir")
    } else if let Some(rel) = unfilled::below(path, TOOLCHAIN) {
        let base = found
            .toolchain
            .clone()
            .or_else(|| compiler_runtime_dir(plan));
        (rel, base, "toolchain", "--toolchain-dir")
    } else {
        return Ok(path.to_path_buf());
    };
    match base {
        Some(base) if from == "sdk" => Ok(crate::sdk::hip::locate(&base, &rel)),
        Some(base) => Ok(join(&base, &rel)),
        None => bail!(
            "variant `{}` bundles libraries from the {from}, which this command cannot find by \
             itself: pass {flag} DIR",
            plan.variant
        ),
    }
}

/// The `Requires-Dist` lines for the SDK this build found (`[bundle.requires-dist]`, keyed by
/// its major version): e.g. the cuBLAS wheel of the CUDA the cuda variant was compiled with.
fn requires_dist(plan: &Plan, found: &Folders) -> Result<Vec<String>> {
    if plan.requires_dist.is_empty() {
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
    plan.requires_dist.get(major).cloned().with_context(|| {
        format!(
            "variant `{}` was built against SDK {version}, and its [bundle.requires-dist] has no \
             entry for major version {major} (it has: {}): add `\"{major}\" = [...]` to \
             variants/{}.toml",
            plan.variant,
            plan.requires_dist
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", "),
            plan.variant
        )
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Action, StepId};
    use ct2v_bundle::bundler::Policy;
    use ct2v_bundle::bundler::job::{DataGlob, SearchFolder};

    fn plan_bundling(job: BundleJob) -> Plan {
        Plan::of_step(StepId::BUNDLE, Action::Bundle(Box::new(job)))
    }

    fn job() -> BundleJob {
        let mut job = BundleJob::new(
            "/w/wheel.whl".into(),
            Policy::Manylinux2_28,
            "/w/dist".into(),
            "v".into(),
            "linux-x86_64".into(),
        );
        job.search = vec![
            SearchFolder::new(
                SearchDir::InWheel("ctranslate2".into()),
                "ctranslate2".into(),
            ),
            SearchFolder::new(
                SearchDir::Dir(unfilled::folder(SDK_ROOT, "bin")),
                "ctranslate2".into(),
            ),
            SearchFolder::new(
                SearchDir::Dir(unfilled::folder(TOOLCHAIN, "")),
                "ctranslate2".into(),
            ),
        ];
        job.data = vec![DataGlob {
            base: "/w/deps/x".into(),
            glob: "lib/*".into(),
            dest: "ctranslate2".into(),
            filter_gpu_targets: false,
            filter_closure: false,
            package: None,
        }];
        job
    }

    #[test]
    fn the_executor_fills_the_sdk_and_toolchain_folders_and_keeps_the_rest() {
        let found = Folders {
            sdk_root: Some("/opt/sdk".into()),
            toolchain: Some("/usr/lib/gcc".into()),
            sdk_version: None,
        };
        let filled = from_plan(&plan_bundling(job()), &found).unwrap();
        let dirs: Vec<SearchDir> = filled.search.iter().map(|s| s.dir.clone()).collect();
        assert_eq!(
            dirs,
            [
                SearchDir::InWheel("ctranslate2".into()),
                SearchDir::Dir(PathBuf::from("/opt/sdk/bin")),
                SearchDir::Dir(PathBuf::from("/usr/lib/gcc")),
            ]
        );
        assert_eq!(filled.data[0].base, PathBuf::from("/w/deps/x"));
    }

    #[test]
    fn an_sdk_folder_with_no_sdk_found_asks_for_sdk_dir() {
        let found = Folders {
            toolchain: Some("/usr/lib/gcc".into()),
            ..Folders::default()
        };
        let err = from_plan(&plan_bundling(job()), &found).unwrap_err();
        assert_eq!(
            err.to_string(),
            "variant `v` bundles libraries from the sdk, which this command cannot find by \
             itself: pass --sdk-dir DIR"
        );
    }
}
