//! Version facts read from CTranslate2's own tree, and where our data drifts from them
//! (`cargo xtask upstream --check`).
//!
//! The files are read straight out of the version's `[source]` archive in the download cache
//! (`kind = "path"`: from that folder). Each fact keeps its file inside the tree and its
//! 1-based lines; a file whose shape the reader does not know gives "could not read", never
//! a guess.
//!
//! | fact | upstream source | compared with |
//! |---|---|---|
//! | `pybind11` | `python/install_requirements.txt` (`pybind11==X`) and `python/pyproject.toml` (`[build-system] requires`); the two must agree | the `pybind11==` pin of the version's `build-tools` requirements (the plan's venv step) |
//! | `onednn.version` | `python/tools/prepare_build_environment_{linux,windows,windows_rocm,linux_rocm,macos}.sh`: the oneDNN download URL's `v${ONEDNN_VERSION}` | `[onednn]` input's `package` (defaults.toml, version file) |
//! | `onednn.cmake` | the same scripts: oneDNN's own `-DONEDNN_…`/`-DDNNL_…` options on its `cmake` line | `[onednn.cmake]` for the script's platform (every upstream option must be ours, equal) |
//! | `cuda.version` | `…_linux.sh`: `cuda-nvcc-12-8-…` (and `# Install CUDA 12.8`); `…_windows.sh`: `cuda_12.8.1_…_windows.exe` (and `CUDA_ROOT=…/v12.8`) | the cuda variant's `[bundle.requires-dist]` has an entry for that major |
//! | `rocm.sdk` | `…_windows_rocm.sh`: `pip install --index-url URL "rocm[libraries,devel]==V"` (TheRock: `rocm-sdk-core` + `rocm-sdk-libraries` at run time, `rocm-sdk-devel` for the build only), or the wheels' URLs (4.7.1) | the rocm variant's Windows inputs with `sdk-folder`: exactly those wheels (PEP 503 names), from that index (or URL), `sdk-folder` `_<name with _>` |
//! | `rocm.gpu-targets` | `-DCMAKE_HIP_ARCHITECTURES="$PYTORCH_ROCM_ARCH"` and that variable's assignment | the rocm variant's `gpu-targets` |
//! | `rocm.dll-folders` | `python/ctranslate2/__init__.py`: 4.7.1 `f"{package_dir}/../_rocm_sdk_core/bin"`; 4.8.3+ `os.path.join(site_dir, "_rocm_sdk_core", "bin")` and the glob `_rocm_sdk_libraries*/bin` (`HIP_PATH\bin` only as a fallback, not compared) | each folder is `<sdk-folder>/bin` of one of the rocm variant's SDK inputs |
//!
//! Scripts: backslash continuations are joined; `$VAR`/`${VAR}` are resolved only from plain
//! assignments in the same script. A heredoc, a value from a command, a variable the script
//! does not assign (renamed), two different assignments: each is "could not read <fact> in
//! <file>:<line>: <why>". A drift our data makes on purpose is accepted with its reason in
//! `[upstream.accepted]` (`"onednn.version" = "why"`, in defaults.toml or a version file);
//! an acceptance that no longer matches a drift is reported as stale.

mod drift;
mod facts;
mod ours;
mod parse;
mod shell;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;

pub use drift::Verdict;
pub(crate) use drift::{Acceptance, Row};
pub use facts::Value;
pub(crate) use facts::{FactKind, Place, Unreadable, UpstreamFacts};

use ct2v_fetch::cache::{Cache, Pin};
use ct2v_fetch::download::{self, Request};
use ct2v_pipeline::variant::Catalog;
use ct2v_pipeline::variant::layer::SourceKind;
use ct2v_support::diagnostic::InputError;

/// A file of the tree the facts come from, and the facts a script declares.
struct UpstreamFile {
    path: &'static str,
    /// A tree without it cannot be checked (its facts are "could not read").
    required: bool,
    facts: &'static [FactKind],
}

use FactKind::*;

const FILES: &[UpstreamFile] = &[
    UpstreamFile {
        path: "python/install_requirements.txt",
        required: true,
        facts: &[Pybind11],
    },
    UpstreamFile {
        path: "python/pyproject.toml",
        required: true,
        facts: &[Pybind11],
    },
    UpstreamFile {
        path: "python/tools/prepare_build_environment_linux.sh",
        required: true,
        facts: &[OnednnVersion, OnednnCmake, CudaVersion],
    },
    UpstreamFile {
        path: "python/tools/prepare_build_environment_windows.sh",
        required: true,
        facts: &[OnednnVersion, OnednnCmake, CudaVersion],
    },
    UpstreamFile {
        path: "python/tools/prepare_build_environment_windows_rocm.sh",
        required: true,
        facts: &[OnednnVersion, OnednnCmake, RocmSdk, HipArchitectures],
    },
    UpstreamFile {
        path: "python/tools/prepare_build_environment_linux_rocm.sh",
        required: false,
        facts: &[OnednnVersion, OnednnCmake, HipArchitectures],
    },
    UpstreamFile {
        path: "python/tools/prepare_build_environment_macos.sh",
        required: false,
        facts: &[OnednnVersion, OnednnCmake],
    },
    UpstreamFile {
        path: "python/ctranslate2/__init__.py",
        required: true,
        facts: &[DllFolders],
    },
];

/// The paths read from a tree, relative to its root.
#[cfg(test)]
pub(crate) fn upstream_paths() -> Vec<&'static str> {
    FILES.iter().map(|f| f.path).collect()
}

/// Reads every fact from the files of a tree (path inside the tree → text).
pub(crate) fn read_facts(files: &BTreeMap<String, String>) -> UpstreamFacts {
    let mut out = UpstreamFacts::default();
    for file in FILES {
        let Some(text) = files.get(file.path) else {
            if file.required {
                for kind in file.facts {
                    out.unreadable.push(Unreadable {
                        kind: *kind,
                        at: Place::line(file.path, 1),
                        why: "the file is not in the source tree".into(),
                    });
                }
            }
            continue;
        };
        if file.path.ends_with("install_requirements.txt") {
            out.push(parse::requirements_pybind11(file.path, text));
        } else if file.path.ends_with("pyproject.toml") {
            out.push(parse::pyproject_pybind11(file.path, text));
        } else if file.path.ends_with("__init__.py") {
            out.push(parse::init_dll_folders(file.path, text));
        } else {
            let script = shell::Script::parse(file.path, text);
            for kind in file.facts {
                if let Some(read) = parse::script_fact(&script, *kind) {
                    out.push(read);
                }
            }
        }
    }
    out
}

/// A version's CTranslate2 tree: where it came from and the files read from it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct UpstreamTree {
    /// `ct2rs-0.10.3.crate (sha256 edf9…), ct2rs-0.10.3/CTranslate2`, or the folder.
    pub origin: String,
    #[serde(skip)]
    pub files: BTreeMap<String, String>,
}

/// The upstream files of `version`'s `[source]`: an archive from the cache (downloaded when
/// missing unless `options.offline`), or a folder on disk.
pub(crate) fn read_tree(
    catalog: &Catalog,
    version: &str,
    cache: &Cache,
    options: &download::Options,
) -> Result<UpstreamTree> {
    let file = format!("{}/{version}.toml", ct2v_pipeline::variant::VERSIONS_DIR);
    let source = catalog.versions[version].source.as_ref().ok_or_else(|| {
        InputError::new(format!(
            "{file} has no [source]: no CTranslate2 tree to read"
        ))
        .note("add [source] (kind = \"archive\" or \"path\")")
    })?;
    // A GitHub tag archive's top folder follows from its URL when `subdir` does not say it.
    let subdir = source
        .subdir
        .as_ref()
        .map(|s| s.value.trim_matches('/').to_string())
        .or_else(|| {
            let url = source.url.as_ref()?;
            let parsed = ct2v_fetch::github::ArchiveUrl::parse(&url.value)?;
            Some(parsed.top_folder())
        });
    let inside = |path: &str| match &subdir {
        Some(dir) if !dir.is_empty() => format!("{dir}/{path}"),
        _ => path.to_string(),
    };
    let mut files = BTreeMap::new();
    let origin = match source.kind.value {
        // python/ is in the tag's own archive, not in a submodule's.
        SourceKind::Archive | SourceKind::GithubTag => {
            let url = source.url.as_ref().ok_or_else(|| {
                catalog
                    .files
                    .error_at(&source.kind, format!("[source] of {file} has no url"))
            })?;
            let sha256 = source.sha256.as_ref().ok_or_else(|| {
                catalog
                    .files
                    .error_at(url, format!("[source] of {file} is not pinned (no sha256)"))
                    .note(format!(
                        "pin it: `cargo xtask pin --variant cpu --ctranslate2 {version}`"
                    ))
            })?;
            let name = ct2v_support::paths::last_segment(&url.value).to_string();
            let request = Request {
                name: format!("source of CTranslate2 {version}"),
                pin: Pin {
                    url: url.value.clone(),
                    sha256: sha256.value.clone(),
                    size: source.size,
                    file_name: name.clone(),
                },
            };
            let fetched = download::fetch_all(cache, &[request], options)
                .map_err(|e| anyhow::anyhow!("{}", download::describe(&e)))?;
            let archive = &fetched[0].path;
            let wanted: Vec<String> = FILES.iter().map(|f| inside(f.path)).collect();
            let members = ct2v_fetch::unpack::read_members(archive, &wanted, 1 << 20)?;
            for f in FILES {
                if let Some(bytes) = members.get(&inside(f.path)) {
                    files.insert(f.path.to_string(), text_of(f.path, bytes)?);
                }
            }
            format!(
                "{name} (sha256 {}…){}",
                &sha256.value[..12.min(sha256.value.len())],
                subdir.map(|d| format!(", {d}/")).unwrap_or_default()
            )
        }
        SourceKind::Path => {
            let path = source.path.as_ref().ok_or_else(|| {
                catalog
                    .files
                    .error_at(&source.kind, format!("[source] of {file} has no path"))
            })?;
            let dir = catalog
                .root
                .join(&path.value)
                .join(subdir.unwrap_or_default());
            for f in FILES {
                let at = ct2v_support::paths::join_slashed(&dir, f.path);
                if at.is_file() {
                    let bytes = std::fs::read(&at)
                        .with_context(|| format!("cannot read {}", at.display()))?;
                    files.insert(f.path.to_string(), text_of(f.path, &bytes)?);
                }
            }
            dir.display().to_string()
        }
        SourceKind::Git | SourceKind::Wheel => {
            return Err(catalog
                .files
                .error_at(
                    &source.kind,
                    format!(
                        "[source] of {file} is kind = \"{}\": upstream facts are read from an \
                         archive or a folder",
                        source.kind_name()
                    ),
                )
                .into());
        }
    };
    Ok(UpstreamTree { origin, files })
}

fn text_of(path: &str, bytes: &[u8]) -> Result<String> {
    String::from_utf8(bytes.to_vec())
        .map_err(|_| InputError::new(format!("{path} in the source tree is not UTF-8 text")).into())
}

/// Whether `version`'s file has a CTranslate2 tree to read (`[source]`, an archive or a
/// folder): a version whose data only repackages official wheels has none.
pub(crate) fn has_tree(root: &Path, version: &str) -> Result<bool, InputError> {
    let catalog = Catalog::load_for(root, &[], Some(version))?;
    Ok(catalog.versions[version]
        .source
        .as_ref()
        .is_some_and(|s| matches!(s.kind.value, SourceKind::Archive | SourceKind::Path)))
}

/// The check of one version: every fact, compared.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct VersionReport {
    pub version: String,
    pub source: String,
    pub rows: Vec<Row>,
    pub(crate) unreadable: Vec<Unreadable>,
    /// `[upstream.accepted]` entries that matched no drift.
    pub stale: Vec<Acceptance>,
}

/// Reads `version`'s tree and compares it with our data in `root`.
pub(crate) fn check_version(
    root: &Path,
    cache: &Cache,
    options: &download::Options,
    version: &str,
) -> Result<VersionReport> {
    let catalog = Catalog::load_for(root, &[], Some(version))?;
    let accepted = ours::accepted(&catalog, version)?;
    let tree = read_tree(&catalog, version, cache, options)?;
    Ok(compare_tree(&catalog, version, &tree, &accepted))
}

fn compare_tree(
    catalog: &Catalog,
    version: &str,
    tree: &UpstreamTree,
    accepted: &[Acceptance],
) -> VersionReport {
    let facts = read_facts(&tree.files);
    let ours = ours::our_data(catalog, version);
    let mut rows = drift::compare(&facts, &ours);
    let stale = drift::accept(&mut rows, accepted);
    VersionReport {
        version: version.to_string(),
        source: tree.origin.clone(),
        rows,
        unreadable: facts.unreadable,
        stale,
    }
}

/// For `bump`: the fact table of a version just added (its `[source]` pinned), to print with
/// what is left to do by hand. The same check as `upstream --check --ctranslate2 VERSION`.
pub(crate) fn report_for_new_version(
    root: &Path,
    cache: &Cache,
    options: &download::Options,
    version: &str,
) -> Result<VersionReport> {
    check_version(root, cache, options, version)
}

impl VersionReport {
    pub(crate) fn drifts(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| r.verdict == Verdict::Drift)
    }

    /// Whether `--check` passes: nothing drifts, no acceptance is stale, everything was read.
    pub(crate) fn passes(&self) -> bool {
        self.drifts().next().is_none() && self.stale.is_empty() && self.unreadable.is_empty()
    }

    /// The fact table and, below it, each drift, acceptance and unreadable fact in words.
    pub(crate) fn table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "CTranslate2 {} ({})", self.version, self.source);
        // One block per fact: upstream's values and ours are often too long for columns.
        for r in &self.rows {
            let verdict = match &r.verdict {
                Verdict::Same => "same".to_string(),
                Verdict::Drift => "DRIFT".to_string(),
                Verdict::Accepted(_) => "accepted".to_string(),
                Verdict::NotCompared(why) => format!("not compared: {why}"),
            };
            let _ = writeln!(out, "  {:<17} {verdict}", r.fact.name());
            let _ = writeln!(out, "      upstream  {}  ({})", r.upstream, r.at);
            match (&r.ours_at, r.ours.is_empty()) {
                (Some(at), false) => {
                    let _ = writeln!(out, "      ours      {}  ({at})", r.ours);
                }
                (Some(at), true) => {
                    let _ = writeln!(out, "      ours      ({at})");
                }
                (None, false) => {
                    let _ = writeln!(out, "      ours      {}", r.ours);
                }
                (None, true) => {}
            }
        }
        for r in self.drifts() {
            for d in &r.differences {
                let _ = writeln!(out, "drift: {}: {d}", r.fact);
            }
        }
        let mut accepted: BTreeMap<(&str, &str), Vec<String>> = BTreeMap::new();
        for r in &self.rows {
            if let Verdict::Accepted(reason) = &r.verdict {
                accepted
                    .entry((r.fact.name(), reason))
                    .or_default()
                    .push(r.at.to_string());
            }
        }
        for ((fact, reason), places) in accepted {
            let _ = writeln!(out, "accepted: {fact} ({}): {reason}", places.join(", "));
        }
        for s in &self.stale {
            let _ = writeln!(
                out,
                "stale acceptance: [upstream.accepted] \"{}\" ({}) matches no drift: delete it",
                s.fact, s.at
            );
        }
        for u in &self.unreadable {
            let _ = writeln!(out, "{u}");
        }
        out
    }
}

#[cfg(test)]
mod tests;
