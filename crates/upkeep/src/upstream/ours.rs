//! What our data says for one CTranslate2 version, with the file and line of each value: the
//! build tools' pybind11, `[onednn]`, the cuda variant's `[bundle.requires-dist]`, the rocm
//! variant's SDK inputs and `gpu-targets`, and `[upstream.accepted]`.

use std::collections::BTreeMap;
use std::path::Path;

use super::drift::{Acceptance, OurData, OurRocm, OurWheel, Ours};
use super::facts::FactKind;
use ct2v_pipeline::variant::Catalog;
use ct2v_pipeline::variant::layer::{Layer, Stack};
use ct2v_pipeline::variant::loc::Loc;
use ct2v_support::diagnostic::InputError;
use ct2v_support::platform::Platform;

fn at<T>(catalog: &Catalog, loc: &Loc<T>) -> String {
    let l = catalog.files.location(loc);
    format!("{}:{}", slash(&l.path), l.line)
}

/// defaults.toml and the version file (not a variant's), for `platform` when one is given.
fn shared(catalog: &Catalog, version: &str, platform: Option<Platform>) -> Layer {
    let mut version = catalog.versions[version].clone();
    version.variant.clear();
    let pick = |layer: &Layer| {
        platform
            .and_then(|p| layer.platform.get(p.name()).map(|l| l.value.clone()))
            .unwrap_or_default()
    };
    catalog
        .defaults
        .clone()
        .stack(pick(&catalog.defaults))
        .stack(version.clone())
        .stack(pick(&version))
}

fn builds_for(catalog: &Catalog, variant: &str, platform: Platform) -> bool {
    catalog.variants.contains_key(variant)
        && catalog
            .base(variant)
            .platforms
            .unwrap_or_default()
            .iter()
            .any(|p| p.value == platform.name())
}

pub(crate) fn our_data(catalog: &Catalog, version: &str) -> OurData {
    let mut data = OurData {
        pybind11: Some(pybind11(catalog, version)),
        onednn_version: Some(onednn_version(catalog, version)),
        ..OurData::default()
    };
    for platform in Platform::ALL {
        let layer = shared(catalog, version, Some(platform));
        if let Some(onednn) = &layer.onednn
            && onednn.enabled != Some(false)
        {
            let first = onednn.cmake.values().min_by_key(|l| l.span.start);
            data.onednn_cmake.insert(
                platform,
                Ours {
                    value: onednn
                        .cmake
                        .iter()
                        .map(|(k, v)| (k.clone(), cmake_text(&v.value)))
                        .collect(),
                    at: first.map(|l| at(catalog, l)).unwrap_or_default(),
                },
            );
        }
        if builds_for(catalog, "cuda", platform)
            && let Some(requires) = catalog
                .stacked("cuda", platform.name())
                .bundle
                .and_then(|b| b.requires_dist)
        {
            data.cuda_majors.insert(
                platform,
                Ours {
                    value: requires.value.keys().cloned().collect(),
                    at: at(catalog, &requires),
                },
            );
        }
        if builds_for(catalog, "rocm", platform) {
            let stacked = catalog.stacked("rocm", platform.name());
            let wheels = stacked
                .inputs
                .iter()
                .filter_map(|(name, input)| {
                    let folder = input.value.sdk_folder.as_ref()?;
                    Some(OurWheel {
                        name: name.clone(),
                        package: input.value.package.clone(),
                        // Inputs will be able to name their index; until then, the URL.
                        location: input
                            .value
                            .index
                            .as_ref()
                            .or(input.value.url.as_ref())
                            .map(|l| l.value.clone())
                            .unwrap_or_default(),
                        sdk_folder: folder.value.clone(),
                        at: at(catalog, input),
                    })
                })
                .collect();
            let gpu_targets = stacked.gpu_targets.as_ref().and_then(|t| {
                Some(Ours {
                    value: t.iter().map(|l| l.value.clone()).collect(),
                    at: at(catalog, t.first()?),
                })
            });
            data.rocm.insert(
                platform,
                OurRocm {
                    wheels,
                    gpu_targets,
                },
            );
        }
    }
    data
}

fn cmake_text(value: &toml::Value) -> String {
    match value {
        toml::Value::Boolean(true) => "ON".into(),
        toml::Value::Boolean(false) => "OFF".into(),
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The pybind11 pin of the build-tools requirements file the plan's venv step installs.
fn pybind11(catalog: &Catalog, version: &str) -> Result<Ours<String>, String> {
    let file = shared(catalog, version, None).build_tools.map_or_else(
        || ct2v_pipeline::variant::DEFAULT_BUILD_TOOLS.to_string(),
        |l| l.value,
    );
    let shown = file.clone();
    let text = std::fs::read_to_string(catalog.root.join(&file))
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    for (n, line) in text.lines().enumerate() {
        let spec = line.trim().trim_end_matches('\\').trim();
        if let Some(version) = spec.strip_prefix("pybind11==") {
            let version = version.split([' ', ';']).next().unwrap_or(version);
            return Ok(Ours {
                value: version.to_string(),
                at: format!("{shown}:{}", n + 1),
            });
        }
    }
    Err(format!("{shown} pins no pybind11"))
}

/// `[onednn] input`'s `package = "oneDNN X"`.
fn onednn_version(catalog: &Catalog, version: &str) -> Result<Ours<String>, String> {
    let layer = shared(catalog, version, None);
    let onednn = layer.onednn.ok_or("no [onednn]")?;
    if onednn.enabled == Some(false) {
        return Err("oneDNN is off ([onednn] enabled = false)".into());
    }
    let input = onednn.input.ok_or("[onednn] names no input")?;
    let spec = layer
        .inputs
        .get(&input.value)
        .ok_or(format!("[onednn] input `{}` is not an input", input.value))?;
    let package = spec
        .value
        .package
        .as_deref()
        .ok_or(format!("input `{}` has no package", input.value))?;
    let (_, v) = package
        .rsplit_once(' ')
        .ok_or(format!("package `{package}` is not \"name version\""))?;
    Ok(Ours {
        value: v.to_string(),
        at: at(catalog, spec),
    })
}

/// `[upstream.accepted]` of defaults.toml and the version file; a key that names no fact,
/// or an `[upstream]` table in a variant's file, is bad input.
pub(super) fn accepted(catalog: &Catalog, version: &str) -> Result<Vec<Acceptance>, InputError> {
    for layer in catalog.variants.values() {
        if let Some(table) = &layer.upstream
            && let Some((_, loc)) = table.accepted.iter().next()
        {
            return Err(catalog
                .files
                .error_at(
                    loc,
                    "[upstream] belongs in variants/defaults.toml or a version file",
                )
                .note(
                    "move it there: upstream facts are per CTranslate2 version, not per variant",
                ));
        }
    }
    let layer = shared(catalog, version, None);
    let names: Vec<&str> = FactKind::ALL.iter().map(|k| k.name()).collect();
    let mut out = Vec::new();
    let table: BTreeMap<String, Loc<String>> =
        layer.upstream.map(|u| u.accepted).unwrap_or_default();
    for (fact, reason) in table {
        if !names.contains(&fact.as_str()) {
            return Err(catalog
                .files
                .error_at(&reason, format!("[upstream.accepted]: `{fact}` is no fact"))
                .allowed(&fact, &names));
        }
        if reason.value.trim().is_empty() {
            return Err(catalog
                .files
                .error_at(
                    &reason,
                    format!("[upstream.accepted] `{fact}` gives no reason"),
                )
                .note("say why our data deliberately differs from upstream's"));
        }
        out.push(Acceptance {
            fact,
            at: at(catalog, &reason),
            reason: reason.value,
        });
    }
    Ok(out)
}

/// A relative path as the data writes it, with `/` on every host.
fn slash(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}
