//! `[sdk]` and what hangs on it: its installer input, `--sdk-dir`, and `local-version` with
//! the SDK's major version in it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Input, Sdk, SdkInstaller};
use crate::variant::layer::SdkTable;
use crate::variant::{Files, Loc};
use ct2v_support::diagnostic::InputError;
use ct2v_support::text_rules;

pub(super) fn sdk(
    files: &Files,
    name: &str,
    spec: Option<&SdkTable>,
    inputs: &BTreeMap<String, Input>,
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
        pip: sdk_pip(files, name, spec)?,
    }))
}

/// `pip` and `pip-index` go together: a requirement is installed from one index.
fn sdk_pip(
    files: &Files,
    name: &str,
    spec: &SdkTable,
) -> Result<Option<(String, String)>, InputError> {
    match (&spec.pip_index, &spec.pip) {
        (None, None) => Ok(None),
        (Some(index), Some(pip)) => {
            if let Some((why, note)) = crate::variant::download_url::index_problem(&index.value) {
                return Err(files
                    .error_at(index, format!("[sdk] pip-index of variant `{name}`: {why}"))
                    .note(note));
            }
            Ok(Some((index.value.clone(), pip.value.clone())))
        }
        (Some(at), None) | (None, Some(at)) => Err(files
            .error_at(
                at,
                format!("[sdk] of variant `{name}` needs both `pip` and `pip-index`"),
            )
            .note("e.g. pip = \"rocm[libraries,devel]==10.0.0\" with pip-index = \"https://stable.repo.amd.com/rocm/whl-next/\"")),
    }
}

/// An installer's input must be one of the variant's inputs for that platform.
fn sdk_installer(
    files: &Files,
    name: &str,
    spec: &SdkTable,
    inputs: &BTreeMap<String, Input>,
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

/// Checks `--sdk-dir`: a folder, for a variant that takes SDK folders.
pub(super) fn sdk_dir(
    name: &str,
    dir: &Path,
    has_sdk: bool,
    inputs: &BTreeMap<String, Input>,
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

pub(super) fn local_version(
    files: &Files,
    label: Option<&Loc<String>>,
) -> Result<Option<String>, InputError> {
    let Some(label) = label else {
        return Ok(None);
    };
    text_rules::local_version_label(&label.value.replace(SDK_MAJOR, "12")).map_err(|_| {
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
    Ok(Some(label.value.clone()))
}

/// The placeholder `local-version` may hold: the major version of the SDK the build found.
pub(crate) const SDK_MAJOR: &str = "{sdk-major}";

/// The major version of an SDK version (`12.8` -> `12`), what `{sdk-major}` and
/// `[bundle.requires-dist]`'s keys stand for; `None` when it does not start with digits.
pub(crate) fn sdk_major(version: &str) -> Option<&str> {
    version
        .split('.')
        .next()
        .filter(|m| !m.is_empty() && m.bytes().all(|b| b.is_ascii_digit()))
}

/// The SDK majors from `floor` up that `[bundle.requires-dist]` names (a build bundles only
/// for those: `execute::bundle_job` refuses another), sorted; empty when it names none.
pub(crate) fn declared_majors(
    floor: u32,
    requires_dist: &std::collections::BTreeMap<String, Vec<String>>,
) -> Vec<u32> {
    let mut majors: Vec<u32> = requires_dist
        .keys()
        .filter_map(|k| k.parse().ok())
        .filter(|m| *m >= floor)
        .collect();
    majors.sort_unstable();
    majors
}
