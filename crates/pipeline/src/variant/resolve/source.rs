//! What is built, or the wheel repackaged: `[source]`, and for a build `[onednn]`, `[openmp]`,
//! `[mkl]`, `[cmake]` and `patches`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::checks::{check_placeholders, check_sdk_placeholder, checked, missing_key};
use super::inputs::{archive_input, check_input_ref};
use super::{Build, Input, Mkl, OneDnn, OpenMp, Source, SourceBuild};
use crate::variant::layer::{
    CMakeOptions, Layer, OpenMpRuntime, OpenMpTable, SdkTable, SourceKind, SourceTable,
};
use crate::variant::{Catalog, DEFAULTS_FILE, Files, Loc, VERSIONS_DIR};
use ct2v_fetch::patch::series::Series;
use ct2v_support::diagnostic::InputError;
use ct2v_support::safe_path;

/// The variant's `[source]` for this CTranslate2 version: a wheel to repackage for `python`,
/// or a source to build.
pub(super) fn build(
    catalog: &Catalog,
    name: &str,
    layer: &Layer,
    python: &str,
    inputs: &BTreeMap<String, Input>,
) -> Result<Build, InputError> {
    let version = catalog.version_of(name);
    let source_spec = layer.source.as_ref().ok_or_else(|| {
        InputError::new(format!(
            "variant `{name}` has no source for CTranslate2 {version}"
        ))
        .note(format!(
            "{}/{version}.toml names the source every variant builds ([source]) and what a \
             variant that repackages official wheels takes ([variant.{name}.platform.<platform>.source])",
            VERSIONS_DIR
        ))
    })?;
    Ok(match source_spec.kind.value {
        SourceKind::Wheel => wheel_for_python(&catalog.files, name, source_spec, python)?,
        _ => Build::FromSource(source_build(catalog, name, layer, source_spec, inputs)?),
    })
}

fn wheel_for_python(
    files: &Files,
    name: &str,
    spec: &SourceTable,
    python: &str,
) -> Result<Build, InputError> {
    let wheel = spec.wheels.get(python).ok_or_else(|| {
        let have: Vec<&String> = spec.wheels.keys().collect();
        files
            .error_at(
                &spec.kind,
                format!("variant `{name}` has no upstream wheel for Python {python}"),
            )
            .allowed(python, &have)
            .note("add it under [source.wheels] for this platform")
    })?;
    Ok(Build::Repackage {
        archive: archive_input(files, spec, "ctranslate2-wheels")?,
        wheel: checked(files, wheel, "wheel path", safe_path::check_nonempty)?,
    })
}

fn source_build(
    catalog: &Catalog,
    name: &str,
    layer: &Layer,
    spec: &SourceTable,
    inputs: &BTreeMap<String, Input>,
) -> Result<SourceBuild, InputError> {
    let files = &catalog.files;
    let source = source(files, spec)?;
    let onednn = onednn(files, name, layer, inputs)?;
    let openmp_spec = layer.openmp.clone().unwrap_or_default();
    let (runtime, openmp_input) = openmp_runtime(files, &openmp_spec, inputs)?;
    let mkl = mkl(files, name, layer, inputs)?;
    let cmake = ctranslate2_cmake(files, layer, onednn.is_some())?;
    let patches = match &layer.patches {
        Some(path) => Some(load_series(catalog, path)?),
        None => None,
    };
    Ok(SourceBuild {
        source,
        onednn,
        openmp: OpenMp {
            runtime,
            input: openmp_input,
            root: openmp_spec
                .root
                .as_ref()
                .map(|r| checked(files, r, "[openmp] root", safe_path::check_relative))
                .transpose()?,
        },
        mkl,
        cmake,
        patches,
    })
}

fn source(files: &Files, spec: &SourceTable) -> Result<Source, InputError> {
    let need = |value: &Option<Loc<String>>, key: &str| {
        value.clone().ok_or_else(|| {
            files.error_at(
                &spec.kind,
                format!("[source] of kind `{}` needs `{key}`", spec.kind_name()),
            )
        })
    };
    if spec.kind.value != SourceKind::GithubTag
        && let Some(at) = spec.commit.as_ref()
    {
        return Err(files
            .error_at(
                at,
                format!(
                    "`commit` belongs to [source] of kind `github-tag`, not `{}`",
                    spec.kind_name()
                ),
            )
            .note("remove it, or set kind = \"github-tag\""));
    }
    if spec.kind.value != SourceKind::GithubTag
        && let Some((path, at)) = spec.submodules.iter().next()
    {
        return Err(files
            .error_at(
                at,
                format!(
                    "[source.submodules.\"{path}\"] belongs to [source] of kind `github-tag`, not `{}`",
                    spec.kind_name()
                ),
            )
            .note("an archive source carries its submodules inside it"));
    }
    Ok(match spec.kind.value {
        SourceKind::Archive => Source::Archive(archive_input(files, spec, "ctranslate2-source")?),
        SourceKind::Git => Source::Git {
            url: need(&spec.url, "url")?.value,
            rev: need(&spec.rev, "rev")?.value,
        },
        SourceKind::Path => Source::Path {
            path: PathBuf::from(need(&spec.path, "path")?.value),
        },
        SourceKind::GithubTag => {
            Source::GithubTag(Box::new(super::github_tag::github_tag(files, spec)?))
        }
        SourceKind::Wheel => unreachable!("wheel sources are repackaged, not built"),
    })
}

/// `[onednn]`, unless `enabled = false`.
fn onednn(
    files: &Files,
    name: &str,
    layer: &Layer,
    inputs: &BTreeMap<String, Input>,
) -> Result<Option<OneDnn>, InputError> {
    let onednn_spec = layer.onednn.clone().unwrap_or_default();
    if !onednn_spec.enabled.unwrap_or(true) {
        return Ok(None);
    }
    let input = onednn_spec.input.as_ref().ok_or_else(|| {
        missing_key(files, name, "onednn.input")
            .note("`input` names the oneDNN source input; or set `enabled = false` in [onednn]")
    })?;
    check_input_ref(files, input, inputs)?;
    check_sdk_placeholders(files, &onednn_spec.cmake, layer.sdk.as_ref())?;
    Ok(Some(OneDnn {
        input: input.value.clone(),
        cmake: cmake_options(files, &onednn_spec.cmake, &[])?,
    }))
}

/// `[openmp]`'s runtime (COMP by default) and, for INTEL, its input.
fn openmp_runtime(
    files: &Files,
    openmp_spec: &OpenMpTable,
    inputs: &BTreeMap<String, Input>,
) -> Result<(OpenMpRuntime, Option<String>), InputError> {
    let runtime = openmp_spec
        .runtime
        .as_ref()
        .map_or(OpenMpRuntime::Comp, |r| r.value);
    let input = match (&openmp_spec.input, runtime) {
        (Some(input), OpenMpRuntime::Intel) => {
            check_input_ref(files, input, inputs)?;
            Some(input.value.clone())
        }
        (None, OpenMpRuntime::Intel) => {
            let at = openmp_spec
                .runtime
                .as_ref()
                .expect("runtime was set to INTEL");
            return Err(files
                .error_at(
                    at,
                    "OpenMP runtime INTEL needs `input`: the intel-openmp wheel",
                )
                .note("add `input = \"intel-openmp\"` to this [openmp] table"));
        }
        _ => None,
    };
    Ok((runtime, input))
}

/// `[mkl]`, when `enabled`.
fn mkl(
    files: &Files,
    name: &str,
    layer: &Layer,
    inputs: &BTreeMap<String, Input>,
) -> Result<Option<Box<Mkl>>, InputError> {
    let mkl_spec = layer.mkl.clone().unwrap_or_default();
    if !mkl_spec.enabled.unwrap_or(false) {
        return Ok(None);
    }
    let (Some(input), Some(include_input)) = (&mkl_spec.input, &mkl_spec.include_input) else {
        return Err(InputError::new(format!(
            "[mkl] of variant `{name}` is enabled but needs `input` (the mkl-static wheel) \
             and `include-input` (the mkl-include wheel)"
        ))
        .note(format!(
            "set them in variants/{name}.toml or variants/{}, or set `enabled = false` in [mkl]",
            DEFAULTS_FILE
        )));
    };
    check_input_ref(files, input, inputs)?;
    check_input_ref(files, include_input, inputs)?;
    Ok(Some(Box::new(Mkl {
        input: input.value.clone(),
        root: mkl_spec.root.clone(),
        include_input: include_input.value.clone(),
        include: mkl_spec.include.clone(),
    })))
}

/// CTranslate2's own `[cmake]` options.
fn ctranslate2_cmake(
    files: &Files,
    layer: &Layer,
    has_onednn: bool,
) -> Result<BTreeMap<String, String>, InputError> {
    // OPENMP_RUNTIME and INTEL_ROOT follow from [openmp], the MKL options from [mkl]; saying
    // them twice invites drift.
    let derived = [
        "OPENMP_RUNTIME",
        "INTEL_ROOT",
        "WITH_MKL",
        "MKL_ROOT",
        "MKL_INCLUDE_DIR",
    ];
    let cmake = cmake_options(files, &layer.cmake, &derived)?;
    check_sdk_placeholders(files, &layer.cmake, layer.sdk.as_ref())?;
    let dnnl_on = cmake.get("WITH_DNNL").is_some_and(|v| v == "ON");
    if dnnl_on && !has_onednn {
        let at = &layer.cmake["WITH_DNNL"];
        return Err(files
            .error_at(at, "WITH_DNNL is ON but [onednn] is disabled")
            .note("enable [onednn] or set WITH_DNNL = false"));
    }
    Ok(cmake)
}

/// `-D` options as strings: booleans become ON/OFF; placeholders must be known names.
fn cmake_options(
    files: &Files,
    options: &CMakeOptions,
    derived: &[&str],
) -> Result<BTreeMap<String, String>, InputError> {
    let mut out = BTreeMap::new();
    for (key, value) in options {
        if derived.contains(&key.as_str()) {
            return Err(files
                .error_at(
                    value,
                    format!("`{key}` is set from the [openmp] or [mkl] table"),
                )
                .note("set `runtime` (and `input`) in [openmp], or `enabled` in [mkl], instead"));
        }
        let text = match &value.value {
            toml::Value::Boolean(true) => "ON".to_string(),
            toml::Value::Boolean(false) => "OFF".to_string(),
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(i) => i.to_string(),
            other => {
                return Err(files.error_at(
                    value,
                    format!(
                        "CMake option `{key}` must be a string, boolean or integer, not {}",
                        other.type_str()
                    ),
                ));
            }
        };
        check_placeholders(files, value, &text)?;
        out.insert(key.clone(), text);
    }
    Ok(out)
}

fn check_sdk_placeholders(
    files: &Files,
    options: &CMakeOptions,
    sdk: Option<&SdkTable>,
) -> Result<(), InputError> {
    let has_sdk = sdk.is_some_and(|s| s.kind.is_some());
    for value in options.values() {
        if let toml::Value::String(text) = &value.value {
            check_sdk_placeholder(files, value, text, has_sdk)?;
        }
    }
    Ok(())
}

fn load_series(catalog: &Catalog, path: &Loc<String>) -> Result<Series, InputError> {
    checked(&catalog.files, path, "patches", safe_path::check_nonempty)?;
    let relative = PathBuf::from(&path.value);
    if !catalog.root.join(&relative).is_file() {
        return Err(catalog
            .files
            .error_at(path, format!("patch series `{}` does not exist", path.value))
            .note("the path is relative to the repository root, e.g. patches/ctranslate2-4.7.1/series"));
    }
    Series::load(&catalog.root, &relative)
}
