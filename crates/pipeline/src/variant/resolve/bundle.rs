//! The `[bundle]` table as a `Bundle`: where libraries and data come from, the paths they go
//! to, the outputs, `requires-dist`; and the manylinux tag the fat wheel gets.

use std::collections::BTreeMap;

use super::checks::{checked, missing_key};
use super::inputs::{DEVICE_INPUT_PREFIX, DEVICE_WHEELS};
use super::{Bundle, Data, Input, LibrarySource, Search};
use crate::variant::layer::{BundleTable, DataTable, Output, SearchTable};
use crate::variant::{Files, Loc};
use ct2v_bundle::gpu_targets::Table;
use ct2v_support::diagnostic::InputError;
use ct2v_support::safe_path;

/// `host_glibc`: this host's glibc where the build is made here, which may need a newer
/// manylinux tag than the variant's policy.
pub(super) fn bundle(
    files: &Files,
    name: &str,
    spec: Option<&BundleTable>,
    inputs: &BTreeMap<String, Input>,
    table: &Table,
    host_glibc: Option<(u32, u32)>,
    notes: &mut Vec<String>,
) -> Result<Bundle, InputError> {
    let mut bundle = from_spec(files, name, spec, inputs, table)?;
    bundle.manylinux = ct2v_bundle::bundler::manylinux::target_for(bundle.policy, host_glibc);
    if let (Some(tag), Some(policy)) = (
        &bundle.manylinux,
        ct2v_bundle::bundler::manylinux::target(bundle.policy),
    ) && tag != policy
    {
        let (major, minor) = host_glibc.unwrap_or_default();
        notes.push(format!(
            "this machine has glibc {major}.{minor}, newer than {policy} allows: what is \
             built here needs it, so the wheel is tagged {tag}_x86_64; a {policy} wheel \
             is built in the quay.io/pypa/{policy}_x86_64 image (as CTranslate2's own)"
        ));
    }
    Ok(bundle)
}

fn from_spec(
    files: &Files,
    name: &str,
    spec: Option<&BundleTable>,
    inputs: &BTreeMap<String, Input>,
    table: &Table,
) -> Result<Bundle, InputError> {
    let spec = spec.cloned().unwrap_or_default();
    let policy = spec
        .policy
        .ok_or_else(|| missing_key(files, name, "bundle.policy"))?;
    let roots = match &spec.roots {
        Some(roots) => {
            for root in &roots.value {
                ct2v_bundle::bundler::run::check_root(root).map_err(|e| {
                    files.error_at(roots, format!("[bundle] roots of variant `{name}`: {e}"))
                })?;
            }
            roots.value.clone()
        }
        None => Vec::new(),
    };
    Ok(Bundle {
        policy: policy.value,
        manylinux: None,
        roots,
        force: spec.force.unwrap_or_default(),
        assume_present: spec.assume_present.unwrap_or_default(),
        search: spec
            .search
            .unwrap_or_default()
            .iter()
            .map(|s| search(files, s, inputs))
            .collect::<Result<_, InputError>>()?,
        data: spec
            .data
            .unwrap_or_default()
            .iter()
            .map(|d| data(files, d, inputs, table))
            .collect::<Result<Vec<Vec<Data>>, InputError>>()?
            .into_iter()
            .flatten()
            .collect(),
        outputs: match spec.outputs {
            Some(outputs) if outputs.value.is_empty() => {
                return Err(files
                    .error_at(&outputs, "[bundle] `outputs = []` asks for nothing")
                    .allowed("", &["fat-wheel", "portable", "report"]));
            }
            Some(outputs) => outputs.value,
            None => vec![Output::FatWheel, Output::Report],
        },
        requires_dist: match spec.requires_dist {
            Some(at) => requires_dist(files, &at)?,
            None => BTreeMap::new(),
        },
        not_built: BTreeMap::new(),
    })
}

fn search(
    files: &Files,
    s: &SearchTable,
    inputs: &BTreeMap<String, Input>,
) -> Result<Search, InputError> {
    Ok(Search {
        from: library_source(files, &s.from, inputs)?,
        dir: match &s.dir {
            Some(dir) => checked(files, dir, "search dir", safe_path::check_relative)?,
            None => String::new(),
        },
        dest: checked(files, &s.dest, "dest", safe_path::check_relative)?,
    })
}

/// One entry, or with `from = "device-wheels"` one per device wheel input (`device-<target>`).
/// A device wheel holds its one target's files, so its entries need no `gpu-targets` filter
/// (`closure` keeps only the kernel archives of the closure's libraries); the library the SDK's TheRock release does not build for a target (`table`:
/// hipBLASLt for RDNA 2, …) is not asked of that target's wheel.
fn data(
    files: &Files,
    d: &DataTable,
    inputs: &BTreeMap<String, Input>,
    table: &Table,
) -> Result<Vec<Data>, InputError> {
    let glob = checked(files, &d.glob, "data glob", safe_path::check_nonempty)?;
    let dest = checked(files, &d.dest, "dest", safe_path::check_relative)?;
    if d.from.value != DEVICE_WHEELS {
        return Ok(vec![Data {
            from: library_source(files, &d.from, inputs)?,
            glob,
            dest,
            filter: d.filter,
        }]);
    }
    let library = glob
        .split('/')
        .rev()
        .skip_while(|s| *s != "library")
        .nth(1)
        .unwrap_or("");
    Ok(inputs
        .keys()
        .filter_map(|n| Some((n, n.strip_prefix(DEVICE_INPUT_PREFIX)?)))
        .filter(|(_, target)| !table.excluded(target, library))
        .map(|(name, _)| Data {
            from: LibrarySource::Input(name.clone()),
            glob: glob.clone(),
            dest: dest.clone(),
            filter: d.filter,
        })
        .collect())
}

const SOURCE_KEYWORDS: [&str; 5] = ["wheel", "prefix", "toolchain", "sdk", DEVICE_WHEELS];

fn library_source(
    files: &Files,
    from: &Loc<String>,
    inputs: &BTreeMap<String, Input>,
) -> Result<LibrarySource, InputError> {
    Ok(match from.value.as_str() {
        "wheel" => LibrarySource::Wheel,
        "prefix" => LibrarySource::Prefix,
        "toolchain" => LibrarySource::Toolchain,
        "sdk" => LibrarySource::Sdk,
        other if inputs.contains_key(other) => LibrarySource::Input(other.to_string()),
        other => {
            let allowed: Vec<&str> = SOURCE_KEYWORDS
                .iter()
                .copied()
                .chain(inputs.keys().map(String::as_str))
                .collect();
            return Err(files
                .error_at(
                    from,
                    format!("`from = \"{other}\"` is neither a keyword nor an input"),
                )
                .allowed(other, &allowed));
        }
    })
}

/// `[bundle.requires-dist]`: keys are SDK major versions, values requirement lines that go
/// into METADATA as written (so nothing that would end or break a header line).
fn requires_dist(
    files: &Files,
    at: &Loc<BTreeMap<String, Vec<String>>>,
) -> Result<BTreeMap<String, Vec<String>>, InputError> {
    for (major, lines) in &at.value {
        if major.is_empty() || !major.bytes().all(|b| b.is_ascii_digit()) {
            return Err(files.error_at(
                at,
                format!(
                    "[bundle.requires-dist] key `{}` is not an SDK major version (\"12\", \"13\")",
                    major.escape_debug()
                ),
            ));
        }
        for line in lines {
            let bad = line.trim().is_empty()
                || line.contains(['\n', '\r', '\0'])
                || !line.starts_with(|c: char| c.is_ascii_alphanumeric());
            if bad {
                return Err(files.error_at(
                    at,
                    format!(
                        "[bundle.requires-dist] \"{major}\" has `{}`, which is no requirement \
                         (a package name first, on one line: \"nvidia-cublas-cu12>=12.8,<13\")",
                        line.escape_debug()
                    ),
                ));
            }
        }
    }
    Ok(at.value.clone())
}
