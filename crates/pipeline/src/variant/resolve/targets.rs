//! What a build is for: the platform and the Python version, chosen from the variant's lists;
//! its GPU targets and CUDA architectures (a flag over the variant's own).

use super::Choices;
use super::checks::missing_key;
use crate::variant::layer::Layer;
use crate::variant::{Catalog, DEFAULTS_FILE, Files, Loc};
use ct2v_bundle::gpu_targets;
use ct2v_support::diagnostic::InputError;
use ct2v_support::platform::Platform;

/// The platform to resolve for (`--platform`, else this host), one of the variant's.
pub(super) fn platform(
    catalog: &Catalog,
    name: &str,
    wanted: Option<Platform>,
) -> Result<Platform, InputError> {
    let files = &catalog.files;
    let platforms = catalog
        .base(name)
        .platforms
        .ok_or_else(|| missing_key(files, name, "platforms"))?;
    check_platform_names(
        files,
        &platforms,
        &catalog.defaults,
        &catalog.variants[name],
    )?;
    choose_platform(name, &platforms, wanted)
}

fn check_platform_names(
    files: &Files,
    listed: &[Loc<String>],
    defaults: &Layer,
    variant: &Layer,
) -> Result<(), InputError> {
    let known = Platform::names();
    let overlays = (defaults.platform.iter().chain(&variant.platform))
        .map(|(key, layer)| (key, layer.file, &layer.span));
    for (key, table) in defaults.platform.iter().chain(&variant.platform) {
        if let Some((inner, _)) = table.value.platform.iter().next() {
            return Err(files
                .error_at(table, format!("[platform.{key}.platform.{inner}]: a platform table cannot hold another platform table"))
                .note(format!("write [platform.{inner}] at the top level instead")));
        }
    }
    let lists = listed.iter().map(|l| (&l.value, l.file, &l.span));
    for (key, file, span) in overlays.chain(lists) {
        if !known.contains(&key.as_str()) {
            let at = Loc {
                value: (),
                file,
                span: span.clone(),
            };
            return Err(files
                .error_at(&at, format!("unknown platform `{key}`"))
                .allowed(key, &known));
        }
    }
    Ok(())
}

fn choose_platform(
    name: &str,
    listed: &[Loc<String>],
    wanted: Option<Platform>,
) -> Result<Platform, InputError> {
    let names: Vec<&str> = listed.iter().map(|p| p.value.as_str()).collect();
    let platform = match wanted.or_else(Platform::host) {
        Some(p) => p,
        None => {
            return Err(InputError::new(format!(
                "this host ({}-{}) is not a platform ct2-variants builds for; pass --platform",
                std::env::consts::OS,
                std::env::consts::ARCH
            ))
            .allowed("", &names));
        }
    };
    if !names.contains(&platform.name()) {
        return Err(InputError::new(format!(
            "variant `{name}` is not built for platform `{platform}`"
        ))
        .allowed(platform.name(), &names)
        .note(format!(
            "pass --platform {} (a build for another platform plans and fetches here; it \
             compiles and is verified there); the list is `platforms` in variants/{name}.toml",
            names[0]
        )));
    }
    Ok(platform)
}

/// The Python version to build for (`--python`, else the host's, else the newest listed).
pub(super) fn python(
    files: &Files,
    name: &str,
    layer: &Layer,
    choices: &Choices,
    notes: &mut Vec<String>,
) -> Result<String, InputError> {
    let listed = layer
        .python
        .as_ref()
        .ok_or_else(|| missing_key(files, name, "python"))?;
    for version in listed {
        check_python_version(files, version)?;
    }
    choose_python(name, listed, choices, notes)
}

fn check_python_version(files: &Files, version: &Loc<String>) -> Result<(), InputError> {
    let ok = version
        .value
        .split_once('.')
        .is_some_and(|(major, minor)| major == "3" && minor.parse::<u32>().is_ok());
    if ok {
        Ok(())
    } else {
        Err(files
            .error_at(
                version,
                format!("`{}` is not a Python version", version.value),
            )
            .note("write versions as \"3.12\""))
    }
}

fn choose_python(
    name: &str,
    listed: &[Loc<String>],
    choices: &Choices,
    notes: &mut Vec<String>,
) -> Result<String, InputError> {
    let names: Vec<&str> = listed.iter().map(|p| p.value.as_str()).collect();
    if let Some(wanted) = &choices.python {
        if names.contains(&wanted.as_str()) {
            return Ok(wanted.clone());
        }
        return Err(
            InputError::new(format!("variant `{name}` is not built for Python {wanted}"))
                .allowed(wanted, &names)
                .note(python_list_note(name)),
        );
    }
    let newest = names
        .iter()
        .max_by_key(|v| v.split_once('.').and_then(|(_, m)| m.parse::<u32>().ok()))
        .ok_or_else(|| {
            InputError::new(format!("variant `{name}` lists no Python versions"))
                .note(python_list_note(name))
        })?;
    match &choices.host_python {
        Some(host) if names.contains(&host.as_str()) => Ok(host.clone()),
        Some(host) => {
            notes.push(format!(
                "Python {newest} chosen: the host's python3 is {host}, which this variant does not build for (pass --python)"
            ));
            Ok(newest.to_string())
        }
        None => {
            notes.push(format!(
                "Python {newest} chosen: no python3 found on this host"
            ));
            Ok(newest.to_string())
        }
    }
}

fn python_list_note(name: &str) -> String {
    format!(
        "the list is `python` in variants/{name}.toml (or variants/{})",
        DEFAULTS_FILE
    )
}

/// `--gpu-targets`, else `ROCM_SDK_TARGET_FAMILY` for a variant that has GPU targets, else the
/// variant's own `gpu-targets`.
pub(super) fn gpu_targets(
    files: &Files,
    layer: &Layer,
    table: &gpu_targets::Table,
    choices: &Choices,
    compiles: bool,
    notes: &mut Vec<String>,
) -> Result<Vec<String>, InputError> {
    let offered: Vec<String> = layer
        .gpu_targets
        .iter()
        .flatten()
        .map(|t| t.value.clone())
        .collect();
    Ok(match (&choices.gpu_targets, &choices.target_family) {
        (Some(targets), _) => {
            let list = given_targets(targets, &offered, compiles, table, notes)
                .map_err(|e| e.note("from --gpu-targets"))?;
            if list.is_empty() {
                return Err(InputError::new("--gpu-targets is empty")
                    .note("name at least one target, e.g. --gpu-targets gfx1100"));
            }
            list
        }
        (None, Some(family)) if layer.gpu_targets.is_some() => {
            notes.push(format!("GPU targets from ROCM_SDK_TARGET_FAMILY={family}"));
            given_targets(
                std::slice::from_ref(family),
                &offered,
                compiles,
                table,
                notes,
            )?
        }
        _ => {
            for target in layer.gpu_targets.iter().flatten() {
                if !gpu_targets::looks_like_target(&target.value) {
                    return Err(files.error_at(
                        target,
                        format!(
                            "`{}` is not a GPU target: expected e.g. gfx1100",
                            target.value
                        ),
                    ));
                }
            }
            offered
        }
    })
}

/// The target table of the SDK the variant names (`[sdk] version`), from the GPU data file:
/// families and exclusions differ by release.
pub(super) fn sdk_table<'a>(catalog: &'a Catalog, layer: &Layer) -> &'a gpu_targets::Table {
    let version = layer
        .sdk
        .as_ref()
        .and_then(|s| s.version.as_ref())
        .map(|v| v.value.as_str());
    catalog.gpus.table_for_sdk(version)
}

/// GPU targets as given (`--gpu-targets` or `ROCM_SDK_TARGET_FAMILY`): exact targets
/// (`gfx1100`), TheRock's family names (`gfx110X-dgpu`, see [`ct2v_bundle::gpu_targets`]), or `custom`
/// (TheRock's bundle name: the variant's own list). A variant that repackages a wheel can
/// only keep targets that wheel was built for (`offered`: the variant's `gpu-targets`); a
/// family keeps those of its targets the wheel has. A build compiles any target spelled
/// like one.
fn given_targets(
    given: &[String],
    offered: &[String],
    compiles: bool,
    table: &gpu_targets::Table,
    notes: &mut Vec<String>,
) -> Result<Vec<String>, InputError> {
    let mut targets: Vec<String> = Vec::new();
    let offered_list = offered.join(", ");
    for text in given.iter().flat_map(|t| t.split([',', ';'])) {
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let picked: Vec<String> = if text == gpu_targets::CUSTOM {
            offered.to_vec()
        } else if gpu_targets::looks_like_target(text) {
            if !compiles && !offered.iter().any(|t| t == text) {
                let hint = gpu_targets::closest(text, offered.iter().map(String::as_str))
                    .map_or(String::new(), |c| format!("; did you mean {c}?"));
                return Err(InputError::new(format!(
                    "the wheel was built for {offered_list}: it has no code for `{text}`{hint}"
                )));
            }
            vec![text.to_string()]
        } else if let Some(members) = table.family(text) {
            if compiles {
                members
            } else {
                let (kept, left): (Vec<String>, Vec<String>) =
                    members.into_iter().partition(|t| offered.contains(t));
                if kept.is_empty() {
                    return Err(InputError::new(format!(
                        "GPU target family `{text}` ({}) has no target the wheel was built for \
                         ({offered_list})",
                        left.join(", ")
                    )));
                }
                if !left.is_empty() && text != left.join(",") {
                    notes.push(format!(
                        "{text}: {} left out, the wheel has no code for {}",
                        left.join(", "),
                        if left.len() == 1 { "it" } else { "them" }
                    ));
                }
                kept
            }
        } else {
            let hint = gpu_targets::closest(text, table.all_names())
                .map_or(String::new(), |c| format!("; did you mean {c}?"));
            return Err(InputError::new(format!(
                "`{text}` is not a GPU target or one of TheRock's target families \
                 (e.g. gfx1100, gfx110X-dgpu, gfx120X-all, dgpu-all, custom){hint}"
            )));
        };
        for t in picked {
            if !targets.contains(&t) {
                targets.push(t);
            }
        }
    }
    Ok(targets)
}

/// `--cuda-arch`, else the variant's `cuda-arch`; both are checked.
pub(super) fn cuda_arch(
    files: &Files,
    layer: &Layer,
    choices: &Choices,
) -> Result<Option<String>, InputError> {
    if let Some(arch) = &choices.cuda_arch {
        check_cuda_arch(arch).map_err(|why| {
            InputError::new(format!(
                "--cuda-arch `{arch}` is not a CUDA_ARCH_LIST: {why}"
            ))
            .note("e.g. --cuda-arch 9.0, --cuda-arch \"8.6;9.0+PTX\", --cuda-arch Common")
        })?;
    }
    if let Some(arch) = &layer.cuda_arch {
        check_cuda_arch(&arch.value).map_err(|why| {
            files.error_at(
                arch,
                format!("`{}` is not a CUDA_ARCH_LIST: {why}", arch.value),
            )
        })?;
    }
    Ok(choices
        .cuda_arch
        .clone()
        .or_else(|| layer.cuda_arch.as_ref().map(|c| c.value.clone())))
}

/// CTranslate2's CUDA_ARCH_LIST, as its CMakeLists.txt passes it to
/// `cuda_select_nvcc_arch_flags` (FindCUDA/select_compute_arch.cmake): `Auto`, `Common`, `All`,
/// architecture names, or numbers such as `8.6`, `8.6+PTX`, `8.6(8.0)`, separated by spaces
/// or `;`.
fn check_cuda_arch(list: &str) -> Result<(), String> {
    const NAMES: [&str; 16] = [
        "Auto",
        "Common",
        "All",
        "Fermi",
        "Kepler",
        "Kepler+Tegra",
        "Kepler+Tesla",
        "Maxwell",
        "Maxwell+Tegra",
        "Pascal",
        "Volta",
        "Turing",
        "Ampere",
        "Ada",
        "Hopper",
        "Blackwell",
    ];
    let number = |s: &str| {
        s.split_once('.').is_some_and(|(a, b)| {
            !a.is_empty()
                && !b.is_empty()
                && (a.bytes().chain(b.bytes())).all(|c| c.is_ascii_digit())
        })
    };
    let mut any = false;
    for part in list.split([' ', ';', ',']).filter(|p| !p.is_empty()) {
        any = true;
        let arch = part.strip_suffix("+PTX").unwrap_or(part);
        let ok = NAMES.contains(&arch)
            || number(arch)
            || arch
                .split_once('(')
                .is_some_and(|(a, b)| number(a) && b.strip_suffix(')').is_some_and(number));
        if !ok {
            return Err(format!(
                "`{part}` is neither an architecture (8.6, 9.0+PTX) nor a name (Common, Hopper)"
            ));
        }
    }
    if any {
        Ok(())
    } else {
        Err("it is empty".into())
    }
}
