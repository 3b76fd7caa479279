//! Validators the parts of resolving share, and the keys checked on their own: a variant's
//! `description`, `[env]`, `[verify.compute-types]`.

use std::collections::BTreeMap;

use super::Verify;
use crate::variant::layer::VerifyTable;
use crate::variant::template::{self, Placeholder};
use crate::variant::{Catalog, DEFAULTS_FILE, Files, Loc};
use ct2v_support::diagnostic::InputError;
use ct2v_support::safe_path;

pub(super) fn check_description(catalog: &Catalog, name: &str) -> Result<(), InputError> {
    if catalog.variants[name].description.is_none() {
        return Err(InputError::new(format!(
            "variants/{name}.toml has no `description`: every variant file says in one line what it builds"
        ))
        .note(format!("add `description = \"…\"` to variants/{name}.toml")));
    }
    Ok(())
}

pub(super) fn missing_key(files: &Files, name: &str, key: &str) -> InputError {
    let defaults = files.root.join("variants").join(DEFAULTS_FILE);
    InputError::new(format!(
        "variant `{name}` does not say `{key}` (neither variants/{name}.toml nor variants/{} sets it)",
        DEFAULTS_FILE
    ))
    .note(format!(
        "add `{key} = …` to variants/{name}.toml, or a default to {}",
        defaults.display()
    ))
}

/// `at.value` after one of the [`ct2v_support::safe_path`] checks; the error points at the value.
pub(super) fn checked(
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

pub(super) fn check_placeholders<T>(
    files: &Files,
    at: &Loc<T>,
    text: &str,
) -> Result<(), InputError> {
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

/// `{sdk.root}` and `{sdk.clang}` need an SDK to fill them.
pub(super) fn check_sdk_placeholder<T>(
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

/// `[env]` with every name, value and placeholder checked.
pub(super) fn env(
    files: &Files,
    env: &BTreeMap<String, Loc<String>>,
    has_sdk: bool,
) -> Result<BTreeMap<String, String>, InputError> {
    env.iter()
        .map(|(k, v)| {
            check_env(files, k, v)?;
            check_placeholders(files, v, &v.value)?;
            check_sdk_placeholder(files, v, &v.value, has_sdk)?;
            Ok((k.clone(), v.value.clone()))
        })
        .collect()
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

pub(super) fn verify_settings(
    files: &Files,
    spec: Option<VerifyTable>,
) -> Result<Verify, InputError> {
    let spec = spec.unwrap_or_default();
    for (device, types) in &spec.compute_types {
        check_compute_types(files, device, types)?;
    }
    Ok(Verify {
        compute_types: spec
            .compute_types
            .into_iter()
            .map(|(device, types)| (device, types.value))
            .collect(),
    })
}

/// The devices and compute types CTranslate2 knows (OpenNMT/CTranslate2
/// docs/quantization.md: `compute_type` values; ROCm builds use the `cuda` device).
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

/// `build-tools`: a requirements file of the repository (default `wheels/build-tools.txt`).
pub(super) fn build_tools(
    catalog: &Catalog,
    value: Option<&Loc<String>>,
) -> Result<String, InputError> {
    let Some(value) = value else {
        return Ok(crate::variant::DEFAULT_BUILD_TOOLS.to_string());
    };
    let path = checked(
        &catalog.files,
        value,
        "build-tools",
        safe_path::check_relative,
    )?;
    if !catalog.root.join(&path).is_file() {
        return Err(catalog
            .files
            .error_at(value, format!("build-tools: {path} does not exist"))
            .note(
                "name a hash-pinned requirements file under wheels/, e.g. wheels/build-tools.txt",
            ));
    }
    Ok(path)
}
