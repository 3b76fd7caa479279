//! Bundle, verify and checksum: the same for every variant, source-built or repackaged.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::inputs::{bundle_inputs, in_sdk_dir, sdk_provided};
use super::{Layout, VERIFY_SCRIPT, WheelIn, slash, step};
use crate::plan::outputs::{CHECKSUMS, Outputs};
use crate::plan::unfilled::{self, SDK_ROOT, TOOLCHAIN};
use crate::plan::{Action, PlannedInput, Step, StepId, VerifyJob, input_label};
use crate::variant::{Build, Data, DataFilter, LibrarySource, Resolved, Search};
use ct2v_bundle::bundler::job::{BundleJob, DataGlob, SearchDir, SearchFolder};
use ct2v_support::platform::Platform;

/// `inputs`: the plan's, which name the archives the report labels files by.
pub(super) fn finish(
    layout: &Layout,
    v: &Resolved,
    outputs: &Outputs,
    inputs: &[PlannedInput],
) -> Vec<Step> {
    vec![
        bundle_step(layout, v, outputs, inputs),
        verify_step(layout, v, &outputs.fat_wheel),
        checksum_step(outputs),
    ]
}

fn bundle_step(layout: &Layout, v: &Resolved, outputs: &Outputs, inputs: &[PlannedInput]) -> Step {
    let mut after = vec![match &v.build {
        Build::FromSource(_) => StepId::WHEEL,
        Build::Repackage { archive, .. } => StepId::unpack(&archive.name),
    }];
    after.extend(bundle_inputs(v).iter().map(|r| StepId::unpack(&r.name)));
    step(
        StepId::BUNDLE,
        Action::Bundle(Box::new(bundle_job(layout, v, outputs, inputs))),
        "Find the minimum set of libraries the binaries load, place them, write the report",
    )
    .after(after)
    .reads([outputs.wheel.clone()])
    .writes(
        outputs
            .artifacts(&v.bundle.outputs)
            .into_iter()
            .filter(|a| *a != outputs.checksums),
    )
}

/// The bundle job, with the SDK's and the compiler runtime's folders left to the executor.
fn bundle_job(
    layout: &Layout,
    v: &Resolved,
    outputs: &Outputs,
    inputs: &[PlannedInput],
) -> BundleJob {
    BundleJob {
        manylinux: v.bundle.manylinux.clone(),
        roots: v.bundle.roots.clone(),
        force: v.bundle.force.clone(),
        assume_present: v.bundle.assume_present.clone(),
        search: v
            .bundle
            .search
            .iter()
            .map(|s| search_folder(layout, v, s, inputs))
            .collect(),
        data: v
            .bundle
            .data
            .iter()
            .map(|d| data_glob(layout, v, d, inputs))
            .collect(),
        gpu_targets: v.gpu_targets.clone(),
        not_built: v.bundle.not_built.clone(),
        outputs: v.bundle.outputs.clone(),
        patchelf: (matches!(v.build, Build::FromSource(_)) && !v.platform.is_windows())
            .then(|| PathBuf::from(layout.tool("patchelf"))),
        missing_hint: missing_hint(v),
        ..BundleJob::new(
            PathBuf::from(&outputs.wheel),
            v.bundle.policy,
            PathBuf::from(&outputs.dir),
            v.name.clone(),
            v.platform.to_string(),
        )
    }
}

fn search_folder(
    layout: &Layout,
    v: &Resolved,
    s: &Search,
    inputs: &[PlannedInput],
) -> SearchFolder {
    let path = folder(layout, v, &s.from, &s.dir);
    let (package, counts_as_sdk) = match &s.from {
        LibrarySource::Prefix => (
            Some(format!("CTranslate2 {} (this build)", v.ctranslate2)),
            false,
        ),
        LibrarySource::Toolchain => (Some("the C++ compiler's runtime".to_string()), false),
        // The SDK's name and version are those of the one found (`build::bundle_job`).
        LibrarySource::Sdk => (None, true),
        // The wheel, or an input: its wheel's dist-info names it, else its variant table's
        // `package`.
        LibrarySource::Wheel | LibrarySource::Input(_) => (None, true),
    };
    SearchFolder {
        dir: match s.from {
            LibrarySource::Wheel => SearchDir::InWheel(path),
            _ => SearchDir::Dir(PathBuf::from(path)),
        },
        dest: s.dest.clone(),
        package,
        fallback_package: input_package(v, &s.from).map(|p| input_label(inputs, s.from.name(), p)),
        counts_as_sdk,
    }
}

fn data_glob(layout: &Layout, v: &Resolved, d: &Data, inputs: &[PlannedInput]) -> DataGlob {
    let (base, glob) = match relative_to(layout, v, &d.from, &d.glob) {
        Some((base, glob)) => (PathBuf::from(base), glob),
        // The glob's folder is found in the SDK's own layout (see `hip::locate`).
        None => match (&d.from, d.glob.rsplit_once('/')) {
            (LibrarySource::Sdk, Some((dir, pattern))) => {
                (unfilled::folder(SDK_ROOT, dir), pattern.to_string())
            }
            (from, _) => (unfilled::folder(placeholder(from), ""), d.glob.clone()),
        },
    };
    DataGlob {
        base,
        glob,
        dest: d.dest.clone(),
        filter_gpu_targets: d.filter == Some(DataFilter::GpuTargets),
        filter_closure: d.filter == Some(DataFilter::Closure),
        package: input_package(v, &d.from).map(|p| input_label(inputs, d.from.name(), p)),
    }
}

/// The variant's `package` of the input a source is, if it is one.
fn input_package<'a>(v: &'a Resolved, from: &LibrarySource) -> Option<&'a str> {
    match from {
        LibrarySource::Input(name) => v.inputs.get(name)?.package.as_deref(),
        _ => None,
    }
}

/// What an error about a missing library adds: the package each input folder is, its URL,
/// and the ways to fix it. Upstream installs these wheels by direct URL
/// (OpenNMT/CTranslate2 v4.7.1, python/tools/prepare_build_environment_windows_rocm.sh).
fn missing_hint(v: &Resolved) -> String {
    let packages: Vec<(&str, &str, &str)> = v
        .bundle
        .search
        .iter()
        .filter_map(|s| {
            let LibrarySource::Input(name) = &s.from else {
                return None;
            };
            let input = v.inputs.get(name)?;
            Some((
                s.dir.as_str(),
                input.package.as_deref()?,
                input.url.as_str(),
            ))
        })
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
        variant = v.name,
        platform = v.platform,
        urls = urls.join(" ")
    ));
    text
}

/// The placeholder of a source found when the build runs.
fn placeholder(from: &LibrarySource) -> &'static str {
    match from {
        LibrarySource::Sdk => SDK_ROOT,
        _ => TOOLCHAIN,
    }
}

/// The folder a source's path `rel` is relative to, where the plan knows it, and `rel`.
fn relative_to(
    layout: &Layout,
    v: &Resolved,
    from: &LibrarySource,
    rel: &str,
) -> Option<(String, String)> {
    let base = match from {
        LibrarySource::Wheel => String::new(),
        LibrarySource::Prefix => layout.prefix("ctranslate2"),
        LibrarySource::Input(name) => match sdk_provided(v, &v.inputs[name]) {
            Some((dir, folder)) => return Some(in_sdk_dir(dir, folder, rel)),
            None => layout.unpacked(name),
        },
        LibrarySource::Toolchain | LibrarySource::Sdk => return None,
    };
    Some((base, rel.to_string()))
}

/// The path `rel` of a source, joined to its folder (inside the wheel: `rel` itself; in the
/// SDK or the compiler's runtime: below the placeholder the executor fills).
fn folder(layout: &Layout, v: &Resolved, from: &LibrarySource, rel: &str) -> String {
    match relative_to(layout, v, from, rel) {
        Some((b, rel)) => match (b.is_empty(), rel.is_empty()) {
            (true, _) => rel,
            (false, true) => b,
            (false, false) => format!("{b}/{rel}"),
        },
        None => slash(&unfilled::folder(placeholder(from), rel)),
    }
}

fn verify_step(layout: &Layout, v: &Resolved, fat_wheel: &str) -> Step {
    let verify_venv = layout.path(&format!("verify/{}", layout.py()));
    let verify_python = format!(
        "{verify_venv}/{}/{}",
        layout.platform.venv_bin(),
        layout.platform.exe("python")
    );
    let job = VerifyJob {
        launcher: layout.platform.python_launcher(&layout.python),
        venv: verify_venv,
        python: verify_python,
        wheelhouse: layout.wheelhouse(),
        requirements: ct2v_fetch::wheelhouse::RUNTIME_REQUIREMENTS
            .iter()
            .map(|r| r.to_string())
            .collect(),
        wheel: fat_wheel.to_string(),
        check: verify_check(layout, v),
    };
    let commands = job.commands();
    step(
        StepId::VERIFY,
        Action::Verify(Box::new(job)),
        format!(
            "Install the wheel into a fresh Python {} venv and check it imports and works",
            v.python
        ),
    )
    .after([StepId::BUNDLE])
    .reads([fat_wheel.to_string()])
    .env(&verify_env(v.platform))
    .runs(commands)
}

/// The verify script and its arguments.
fn verify_check(layout: &Layout, v: &Resolved) -> Vec<String> {
    let mut check = vec![
        slash(&layout.root.join(VERIFY_SCRIPT)),
        "--version".to_string(),
        v.ctranslate2.clone(),
    ];
    for (device, types) in &v.verify.compute_types {
        check.push("--compute-types".to_string());
        check.push(format!("{device}:{}", types.join(",")));
    }
    check
}

/// The wheel must work on its own: no library or module path from the build machine.
fn verify_env(platform: Platform) -> BTreeMap<String, String> {
    let mut env = BTreeMap::from([("PYTHONPATH".to_string(), String::new())]);
    if !platform.is_windows() {
        env.insert("LD_LIBRARY_PATH".to_string(), String::new());
    }
    env
}

fn checksum_step(outputs: &Outputs) -> Step {
    step(
        StepId::CHECKSUM,
        Action::Checksum {
            dir: outputs.dir.clone(),
            file: CHECKSUMS.to_string(),
        },
        "Write SHA256SUMS for the artifacts",
    )
    .after([StepId::BUNDLE, StepId::VERIFY])
    .reads([outputs.dir.clone()])
    .writes([outputs.checksums.clone()])
}

/// The bundle's wheel: on Linux tagged with the manylinux policy it proves.
pub(super) fn fat_wheel_name(v: &Resolved, wheel: &WheelIn) -> String {
    ct2v_bundle::bundler::manylinux::fat_wheel_name(&wheel.file_name, v.bundle.manylinux.as_deref())
}
