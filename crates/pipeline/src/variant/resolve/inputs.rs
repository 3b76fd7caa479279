//! `[inputs.NAME]` (and a `[source]` archive) as `Input`s: names, URLs, pins and the paths
//! inside them checked; references to inputs from other tables.

use std::collections::BTreeMap;

use super::checks::checked;
use super::{IndexedWheel, Input};
use crate::variant::Files;
use crate::variant::Loc;
use crate::variant::download_url;
use crate::variant::layer::{InputTable, Layer, SourceTable};
use ct2v_support::diagnostic::InputError;
use ct2v_support::platform::Platform;
use ct2v_support::safe_path;

/// Every input the stacked layers declare.
pub(super) fn declared(
    files: &Files,
    layer: &Layer,
    platform: Platform,
) -> Result<BTreeMap<String, Input>, InputError> {
    layer
        .inputs
        .iter()
        .map(|(key, spec)| {
            let runnable = layer
                .sdk
                .as_ref()
                .and_then(|s| s.installer.as_ref())
                .is_some_and(|i| &i.value == key);
            Ok((
                key.clone(),
                checked_input(files, key, spec, runnable, Some(platform))?,
            ))
        })
        .collect()
}

/// The input name of a device wheel is this and its target (`device-gfx1100`); the variant
/// files' `[device-wheels]` make them.
pub const DEVICE_INPUT_PREFIX: &str = "device-";
/// The `from` keyword that stands for all of them in `[bundle] data`.
pub(crate) const DEVICE_WHEELS: &str = "device-wheels";

/// `[device-wheels]` as one input per kept GPU target, `device-<target>`, found on the index
/// by `pin` like any `index` + `package` input.
pub(super) fn device_wheels(
    files: &Files,
    layer: &Layer,
    platform: Platform,
    gpu_targets: &[String],
) -> Result<BTreeMap<String, Input>, InputError> {
    let Some(spec) = &layer.device_wheels else {
        return Ok(BTreeMap::new());
    };
    if !spec.value.package.value.contains("{target}") {
        return Err(files
            .error_at(
                &spec.value.package,
                "[device-wheels] package names no `{target}`: one wheel per GPU target",
            )
            .note("e.g. package = \"rocm-sdk-device-{target} 10.0.0\""));
    }
    let mut inputs = BTreeMap::new();
    for target in gpu_targets {
        let name = format!("{DEVICE_INPUT_PREFIX}{target}");
        let package = spec.value.package.value.replace("{target}", target);
        let input = Loc {
            value: InputTable {
                index: Some(spec.value.index.clone()),
                package: Some(package),
                ..InputTable::default()
            },
            file: spec.file,
            span: spec.span.clone(),
        };
        inputs.insert(
            name.clone(),
            checked_input(files, &name, &input, false, Some(platform))?,
        );
    }
    Ok(inputs)
}

/// `runnable`: the input is the SDK's installer, run rather than unpacked (any file name).
pub(super) fn checked_input(
    files: &Files,
    name: &str,
    spec_loc: &Loc<InputTable>,
    runnable: bool,
    platform: Option<Platform>,
) -> Result<Input, InputError> {
    if let Err(why) = safe_path::check_name(name) {
        return Err(files.error_at(
            spec_loc,
            format!("input name `{}` is not allowed: {why}", name.escape_debug()),
        ));
    }
    let spec = &spec_loc.value;
    // A `[source]` (no platform here) never has an index.
    let index = match (&spec.index, platform) {
        (Some(index), Some(platform)) => {
            Some(indexed_wheel(files, name, spec_loc, index, platform)?)
        }
        _ => None,
    };
    let problems = spec
        .url
        .iter()
        .map(|u| (u, download_url::problem(&u.value, runnable)))
        .chain(
            spec.index
                .iter()
                .map(|u| (u, download_url::index_problem(&u.value))),
        );
    for (url, problem) in problems {
        if let Some((why, note)) = problem {
            return Err(files
                .error_at(url, format!("input `{name}`: {why}"))
                .note(note));
        }
    }
    let url = match (&spec.url, &index) {
        (Some(url), _) => url.value.clone(),
        // Not found on the index yet: the project's page stands for it until `pin` runs.
        (None, Some(wheel)) => ct2v_fetch::wheel_name::project_page(&wheel.index, &wheel.project),
        (None, None) => {
            return Err(files
                .error_at(
                    spec_loc,
                    format!("input `{name}` has neither `url` nor `index`"),
                )
                .note(
                    "give the file's `url`, or a PEP 503 `index` and `package = \"NAME VERSION\"`",
                ));
        }
    };
    if index.is_some() && spec.url.is_none() && spec.sha256.is_some() {
        return Err(files
            .error_at(spec_loc, format!("input `{name}` has a sha256 but no `url`"))
            .note("remove `sha256` and `size`: `cargo xtask pin` writes the wheel's url and pin together"));
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
    Ok(Input {
        name: name.to_string(),
        url,
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
        index: index.map(Box::new),
    })
}

/// `index` + `package = "NAME VERSION"`: the wheel `pin` looks up for `platform`.
fn indexed_wheel(
    files: &Files,
    name: &str,
    spec_loc: &Loc<InputTable>,
    index: &Loc<String>,
    platform: Platform,
) -> Result<IndexedWheel, InputError> {
    let package = spec_loc.value.package.as_deref().unwrap_or_default();
    let Some((project, version)) = package
        .split_once(' ')
        .filter(|(p, v)| !p.is_empty() && is_version_text(v))
    else {
        return Err(files
            .error_at(
                index,
                format!("input `{name}`: an `index` needs `package = \"NAME VERSION\"` (the wheel to find there), not `{}`", package.escape_debug()),
            )
            .note("e.g. package = \"rocm-sdk-core 10.0.0\""));
    };
    Ok(IndexedWheel {
        index: index.value.clone(),
        project: project.to_string(),
        version: version.to_string(),
        platform,
    })
}

/// A PEP 440 public version as pins name it: digits, dots and letters, no spaces.
fn is_version_text(v: &str) -> bool {
    !v.is_empty()
        && v.chars().next().is_some_and(|c| c.is_ascii_digit())
        && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '.')
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

/// The `url`/`sha256`/`size`/`subdir` of a `[source]` table as an input.
pub(super) fn archive_input(
    files: &Files,
    spec: &SourceTable,
    name: &str,
) -> Result<Input, InputError> {
    let url = spec.url.clone().ok_or_else(|| {
        files.error_at(
            &spec.kind,
            format!("[source] of kind `{}` needs `url`", spec.kind_name()),
        )
    })?;
    let input = InputTable {
        url: Some(url),
        index: None,
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
    checked_input(files, name, &loc, false, None)
}

pub(super) fn check_input_ref(
    files: &Files,
    reference: &Loc<String>,
    inputs: &BTreeMap<String, Input>,
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
