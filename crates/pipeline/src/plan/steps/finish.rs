//! Bundle, verify and checksum: the same for every variant, source-built or repackaged.

use std::collections::BTreeMap;

use super::inputs::{bundle_inputs, in_sdk_dir, sdk_provided};
use super::{Layout, VERIFY_SCRIPT, WheelIn, slash, step};
use crate::plan::outputs::{CHECKSUMS, Outputs};
use crate::plan::{Action, BundleAction, Command, DataFiles, SearchLocation, Step, StepId};
use crate::variant::{Build, LibrarySource, Resolved};
use ct2v_support::platform::Platform;

pub(super) fn finish(layout: &Layout, v: &Resolved, outputs: &Outputs) -> Vec<Step> {
    vec![
        bundle_step(layout, v, outputs),
        verify_step(layout, v, &outputs.fat_wheel),
        checksum_step(outputs),
    ]
}

fn bundle_step(layout: &Layout, v: &Resolved, outputs: &Outputs) -> Step {
    let mut after = vec![match &v.build {
        Build::FromSource(_) => StepId::WHEEL,
        Build::Repackage { archive, .. } => StepId::unpack(&archive.name),
    }];
    after.extend(bundle_inputs(v).iter().map(|r| StepId::unpack(&r.name)));
    step(
        StepId::BUNDLE,
        Action::Bundle(bundle_action(layout, v, outputs)),
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

fn bundle_action(layout: &Layout, v: &Resolved, outputs: &Outputs) -> BundleAction {
    let mut destinations: Vec<String> = v.bundle.search.iter().map(|s| s.dest.clone()).collect();
    destinations.extend(v.bundle.data.iter().map(|d| d.dest.clone()));
    destinations.sort();
    destinations.dedup();
    BundleAction {
        wheel: outputs.wheel.clone(),
        policy: v.bundle.policy,
        manylinux: v.bundle.manylinux.clone(),
        roots: v.bundle.roots.clone(),
        force: v.bundle.force.clone(),
        assume_present: v.bundle.assume_present.clone(),
        search: search_locations(layout, v),
        data: data_files(layout, v),
        gpu_targets: v.gpu_targets.clone(),
        produce: v.bundle.outputs.clone(),
        destinations,
        out: outputs.dir.clone(),
        patchelf: (matches!(v.build, Build::FromSource(_)) && !v.platform.is_windows())
            .then(|| layout.tool("patchelf")),
        requires_dist: v.bundle.requires_dist.clone(),
    }
}

fn search_locations(layout: &Layout, v: &Resolved) -> Vec<SearchLocation> {
    v.bundle
        .search
        .iter()
        .map(|s| {
            let input = match &s.from {
                LibrarySource::Input(name) => v.inputs.get(name),
                _ => None,
            };
            let package = input.and_then(|r| r.package.clone());
            SearchLocation {
                from: s.from.clone(),
                dir: s.dir.clone(),
                dest: s.dest.clone(),
                path: folder(layout, v, &s.from, &s.dir),
                url: package.as_ref().and(input).map(|r| r.url.clone()),
                package,
            }
        })
        .collect()
}

fn data_files(layout: &Layout, v: &Resolved) -> Vec<DataFiles> {
    v.bundle
        .data
        .iter()
        .map(|d| {
            let (base, glob) = match relative_to(layout, v, &d.from, &d.glob) {
                Some((base, glob)) => (Some(base), glob),
                None => (None, d.glob.clone()),
            };
            let package = match &d.from {
                LibrarySource::Input(name) => v.inputs.get(name).and_then(|r| r.package.clone()),
                _ => None,
            };
            DataFiles {
                from: d.from.clone(),
                glob,
                dest: d.dest.clone(),
                filter: d.filter,
                base,
                package,
            }
        })
        .collect()
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

/// The path `rel` of a source, joined to its folder (inside the wheel: `rel` itself).
fn folder(layout: &Layout, v: &Resolved, from: &LibrarySource, rel: &str) -> Option<String> {
    relative_to(layout, v, from, rel).map(|(b, rel)| match (b.is_empty(), rel.is_empty()) {
        (true, _) => rel,
        (false, true) => b,
        (false, false) => format!("{b}/{rel}"),
    })
}

fn verify_step(layout: &Layout, v: &Resolved, fat_wheel: &str) -> Step {
    let verify_venv = layout.path(&format!("verify/{}", layout.py()));
    let launcher = layout.platform.python_launcher(&layout.python);
    let verify_python = format!(
        "{verify_venv}/{}/{}",
        layout.platform.venv_bin(),
        layout.platform.exe("python")
    );
    step(
        StepId::VERIFY,
        Action::Verify,
        format!(
            "Install the wheel into a fresh Python {} venv and check it imports and works",
            v.python
        ),
    )
    .after([StepId::BUNDLE])
    .reads([fat_wheel.to_string()])
    .env(&verify_env(v.platform))
    .runs(vec![
        Command::new(&launcher[0])
            .args(launcher[1..].iter().cloned())
            .args(["-m", "venv", "--clear", &verify_venv]),
        // What the wheel's setup.py requires, then the wheel itself without its
        // dependencies: those it declares for its GPU libraries ([bundle.requires-dist],
        // e.g. nvidia-cublas-cu12, ~600 MB) are the user's download, not this check's.
        Command::new(&verify_python)
            .args(["-m", "pip", "install", "--find-links", &layout.wheelhouse()])
            .args(ct2v_fetch::wheelhouse::RUNTIME_REQUIREMENTS),
        Command::new(&verify_python).args([
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--find-links",
            &layout.wheelhouse(),
            fat_wheel,
        ]),
        verify_check(layout, v, &verify_python),
    ])
}

/// The verify script, run by the fresh venv's Python.
fn verify_check(layout: &Layout, v: &Resolved, python: &str) -> Command {
    let mut check = Command::new(python)
        .arg(slash(&layout.root.join(VERIFY_SCRIPT)))
        .args(["--version", &v.ctranslate2]);
    for (device, types) in &v.verify.compute_types {
        check = check.args(["--compute-types", &format!("{device}:{}", types.join(","))]);
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
    ct2v_bundle::bundle::manylinux::fat_wheel_name(&wheel.file_name, v.bundle.manylinux.as_deref())
}
