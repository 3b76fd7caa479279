//! The inputs a plan downloads (`fetch`) and unpacks (`unpack-<input>`), as the plan lists
//! them; and what `--sdk-dir` provides instead.

use std::path::Path;

use super::{Layout, SOURCE_INPUT, slash, step};
use crate::plan::{Action, PlannedInput, Step, StepId};
use crate::variant::{Input, LibrarySource, Resolved, Source, SourceBuild};

/// What a source build downloads: the source archive, oneDNN, the OpenMP runtime and MKL,
/// then what the bundle takes from inputs.
pub(super) fn source_build_inputs(v: &Resolved, build: &SourceBuild) -> Vec<Input> {
    let mut fetched: Vec<Input> = Vec::new();
    match &build.source {
        Source::Archive(remote) => fetched.push(Input {
            name: SOURCE_INPUT.to_string(),
            ..remote.clone()
        }),
        Source::GithubTag(tag) => {
            fetched.push(Input {
                name: SOURCE_INPUT.to_string(),
                ..tag.archive.clone()
            });
            fetched.extend(tag.submodules.iter().map(|s| s.input.clone()));
        }
        _ => {}
    }
    let onednn_input = build.onednn.as_ref().map(|o| v.inputs[&o.input].clone());
    let openmp_input = build.openmp.input.as_ref().map(|n| v.inputs[n].clone());
    let mkl_inputs: Vec<Input> = build
        .mkl
        .iter()
        .flat_map(|m| [&m.input, &m.include_input])
        .map(|n| v.inputs[n].clone())
        .collect();
    for r in onednn_input.iter().chain(&openmp_input).chain(&mkl_inputs) {
        fetched.push(r.clone());
    }
    for r in bundle_inputs(v) {
        if !fetched.contains(r) {
            fetched.push(r.clone());
        }
    }
    fetched
}

/// What a repackaged variant downloads: the archive of wheels, then the bundle's inputs.
pub(super) fn repackage_inputs(v: &Resolved, archive: &Input) -> Vec<Input> {
    let mut fetched = vec![archive.clone()];
    fetched.extend(bundle_inputs(v).into_iter().cloned());
    fetched
}

/// One `fetch` step for all of `fetched` (none when there is nothing to download), then an
/// `unpack-<input>` step for each but those another step puts together (`assembled`: a
/// github-tag source's archives).
pub(super) fn fetch_and_unpack(
    layout: &Layout,
    fetched: &[Input],
    assembled: &[&str],
) -> Vec<Step> {
    let mut steps = Vec::new();
    if !fetched.is_empty() {
        steps.push(fetch_step(fetched));
    }
    steps.extend(
        fetched
            .iter()
            .filter(|r| !assembled.contains(&r.name.as_str()))
            .map(|r| unpack_step(layout, r)),
    );
    steps
}

fn fetch_step(fetched: &[Input]) -> Step {
    step(
        StepId::FETCH,
        Action::Fetch {
            inputs: fetched.iter().map(|r| r.name.clone()).collect(),
        },
        format!(
            "Download {} input(s) into the cache and verify their pinned sha256 and size",
            fetched.len()
        ),
    )
    .reads(fetched.iter().map(|r| r.url.clone()))
}

fn unpack_step(layout: &Layout, r: &Input) -> Step {
    let dest = layout.unpacked(&r.name);
    step(
        StepId::unpack(&r.name),
        Action::Unpack {
            input: r.name.clone(),
            archive: layout.cached(r),
            subdir: r.subdir.clone(),
            dest: dest.clone(),
            expect: r.expect.clone(),
        },
        format!("Unpack {} safely into place", r.shown_name()),
    )
    .after([StepId::FETCH])
    .reads([layout.cached(r)])
    .writes([dest])
}

/// An input as the plan lists it.
pub(super) fn planned(layout: &Layout, r: &Input) -> PlannedInput {
    PlannedInput {
        name: r.name.clone(),
        url: r.url.clone(),
        file_name: r.file_name().to_string(),
        sha256: r.sha256.clone(),
        size: r.size,
        cache_path: r.sha256.as_ref().map(|_| layout.cached(r)),
        package: r.package.clone(),
        sdk_folder: r.sdk_folder.clone(),
        pin_source: r.pin_source.clone(),
        index: r.index.clone(),
    }
}

/// The SDK's unattended installer, where the variant names one.
pub(super) fn sdk_installer(layout: &Layout, v: &Resolved) -> Option<PlannedInput> {
    let installer = v.sdk.as_ref()?.installer.as_ref()?;
    Some(planned(layout, &v.inputs[&installer.input]))
}

pub(super) fn unpinned_note(v: &Resolved, fetched: &[Input]) -> Option<String> {
    fetched.iter().any(|r| r.sha256.is_none()).then(|| {
        format!(
            "some inputs are not pinned yet: `cargo xtask pin --variant {}` records their sha256 and size",
            v.name
        )
    })
}

/// Inputs the bundle step reads, in the order the variant lists them, less those that
/// `--sdk-dir` provides.
pub(super) fn bundle_inputs(v: &Resolved) -> Vec<&Input> {
    let mut names: Vec<&str> = Vec::new();
    let search = v.bundle.search.iter().map(|s| &s.from);
    for from in search.chain(v.bundle.data.iter().map(|d| &d.from)) {
        if let LibrarySource::Input(name) = from
            && !names.contains(&name.as_str())
            && sdk_provided(v, &v.inputs[name]).is_none()
        {
            names.push(name);
        }
    }
    names.iter().map(|n| &v.inputs[*n]).collect()
}

/// Where `--sdk-dir` has what input `r` would unpack: `(dir, sdk folder)`.
pub(super) fn sdk_provided<'a>(v: &'a Resolved, r: &'a Input) -> Option<(&'a Path, &'a str)> {
    Some((v.sdk_dir.as_deref()?, r.sdk_folder.as_deref()?))
}

/// A path inside an SDK input, found in `--sdk-dir` instead: unpacked wheels keep it as it
/// is (`dir/_rocm_sdk_core/bin`); an installed SDK has the sdk folder's contents at its
/// root (`dir/bin`). Returns the folder the path is relative to, and the path.
pub(super) fn in_sdk_dir(dir: &Path, folder: &str, rel: &str) -> (String, String) {
    if dir.join(folder).is_dir() {
        return (slash(dir), rel.to_string());
    }
    let inside = rel
        .strip_prefix(folder)
        .map(|r| r.trim_start_matches('/'))
        .unwrap_or(rel);
    (slash(dir), inside.to_string())
}

pub(super) fn sdk_dir_note(v: &Resolved) -> Option<String> {
    let dir = v.sdk_dir.as_deref()?;
    let provided: Vec<(&str, &str)> = v
        .inputs
        .values()
        .filter_map(|r| Some((r.name.as_str(), sdk_provided(v, r)?.1)))
        .collect();
    if provided.is_empty() {
        return Some(format!("the SDK is {} (--sdk-dir)", slash(dir)));
    }
    let layout = if provided.iter().all(|(_, folder)| dir.join(folder).is_dir()) {
        "unpacked SDK wheels"
    } else {
        "an installed SDK"
    };
    let names: Vec<&str> = provided.iter().map(|(name, _)| *name).collect();
    Some(format!(
        "{} not downloaded: their files come from {} (--sdk-dir, {layout})",
        names.join(", "),
        slash(dir)
    ))
}
