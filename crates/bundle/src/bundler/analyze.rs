//! What a bundle run will do, decided before the wheel changes (as auditwheel's
//! `analyze_wheel_abi` comes before `repair_wheel`): the root binaries, where imports are
//! looked for, the closure, every file to place and the package it comes from, and the
//! imported libraries left to the target system.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use super::closure::{self, Closure, LibraryFolder};
use super::data;
use super::job::{BundleJob, SearchDir, SearchFolder, check_root};
use super::layout::{self, Placed};
use super::policy::SystemLibraries;
use crate::binary;
use ct2v_support::diagnostic::InputError;
use ct2v_support::fsx::files_below;

/// The result of [`analyze`]: what the repair acts on and the report describes.
#[derive(Debug)]
pub(crate) struct BundleAnalysis {
    pub closure: Closure,
    /// Every file added to the wheel (libraries, then data files), with its source.
    pub placed: Vec<Placed>,
    /// Data kept per GPU target, in bytes.
    pub kernel_bytes: BTreeMap<String, u64>,
    /// The size of the SDK packages files were taken from.
    pub sdk_bytes: u64,
    /// Imported libraries the policy leaves to the operating system.
    pub system: Vec<String>,
    /// Imported libraries the spec assumes the target system has.
    pub assumed_present: Vec<String>,
    /// What is never bundled: the policy's system libraries and the assumed ones.
    pub(crate) never_bundled: SystemLibraries,
}

/// Analyzes `tree`, the input wheel unpacked; nothing is written.
pub(crate) fn analyze(spec: &BundleJob, tree: &Path) -> Result<BundleAnalysis> {
    let mut never_bundled = SystemLibraries::for_policy(spec.policy);
    never_bundled.assume(&spec.assume_present);
    let roots = roots(spec, tree)?;
    let locations = locations(spec, tree, &roots)?;
    let closure = resolve(spec, roots, &locations, &never_bundled)?;
    let mut placed = layout::libraries(&closure);
    let (data, kernel_bytes) = data_files(spec, &closure)?;
    placed.extend(data);
    let sdk_bytes = sdk_bytes(spec, &locations, &placed)?;
    let os = SystemLibraries::for_policy(spec.policy);
    let (system, assumed_present) = closure
        .system
        .keys()
        .cloned()
        .partition(|name| os.contains(name));
    Ok(BundleAnalysis {
        closure,
        placed,
        kernel_bytes,
        sdk_bytes,
        system,
        assumed_present,
        never_bundled,
    })
}

fn resolve(
    spec: &BundleJob,
    roots: Vec<(PathBuf, String)>,
    locations: &[LibraryFolder],
    never_bundled: &SystemLibraries,
) -> Result<Closure> {
    let inputs = closure::ClosureParams {
        roots,
        forced: &spec.force,
        locations,
        system: never_bundled,
    };
    closure::resolve(&inputs, &read_imports).map_err(|e| match e {
        closure::ClosureError::Missing { .. } => {
            anyhow::anyhow!(
                "{e}{}\nnothing was written to {}",
                spec.missing_hint,
                spec.out.display()
            )
        }
        other => other.into(),
    })
}

/// Imports and delay-loaded imports: both must be present for the binary to work.
pub fn read_imports(path: &Path) -> Result<Vec<String>, String> {
    let info = binary::read(path).map_err(|e| e.to_string())?;
    let mut names = info.imports;
    names.extend(info.delay_imports);
    Ok(names)
}

/// The search folders of `spec`, after the wheel's folders that hold root binaries (where
/// the loader looks first: CTranslate2 adds its package folder to the DLL search path).
fn locations(
    spec: &BundleJob,
    tree: &Path,
    roots: &[(PathBuf, String)],
) -> Result<Vec<LibraryFolder>> {
    let wheel_package = package_of(tree, 0).unwrap_or_else(|| "the input wheel".to_string());
    let mut root_dirs: Vec<SearchFolder> = Vec::new();
    for (_, dir) in roots {
        let listed = spec
            .search
            .iter()
            .chain(&root_dirs)
            .any(|s| matches!(&s.dir, SearchDir::InWheel(d) if d == dir));
        if !listed {
            root_dirs.push(SearchFolder::new(
                SearchDir::InWheel(dir.clone()),
                dir.clone(),
            ));
        }
    }
    let search_number = |s: &SearchFolder| spec.search.iter().position(|o| std::ptr::eq(o, s));
    root_dirs
        .iter()
        .chain(&spec.search)
        .map(|s| {
            let (dir, in_wheel) = match &s.dir {
                SearchDir::InWheel(rel) => (tree.join(rel), true),
                SearchDir::Dir(dir) => (dir.clone(), false),
            };
            if !dir.is_dir() {
                bail!(
                    "search folder {} does not exist (for libraries placed in `{}`){}",
                    dir.display(),
                    s.dest,
                    ct2v_support::fsx::folders_beside_note(&dir)
                );
            }
            let package = match (&s.package, in_wheel) {
                (Some(p), _) => p.clone(),
                (None, true) => wheel_package.clone(),
                (None, false) => package_of(&dir, 4)
                    .or_else(|| s.fallback_package.clone())
                    .unwrap_or_else(|| {
                        let n = search_number(s).map_or(0, |i| i + 1);
                        folder_label("search", n, &dir)
                    }),
            };
            Ok(LibraryFolder {
                dir,
                dest: s.dest.clone(),
                package,
                in_wheel,
            })
        })
        .collect()
}

/// `name version` from a `*.dist-info` folder in `dir` or up to `levels` folders above it.
pub(crate) fn package_of(dir: &Path, levels: usize) -> Option<String> {
    for at in dir.ancestors().take(levels + 1) {
        let Ok(entries) = fs::read_dir(at) else {
            continue;
        };
        let mut infos: Vec<String> = entries
            .flatten()
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .filter(|n| n.ends_with(".dist-info"))
            .collect();
        infos.sort();
        if let Some(info) = infos.first() {
            let stem = info.trim_end_matches(".dist-info");
            return Some(match stem.split_once('-') {
                Some((name, version)) => format!("{name} {version}"),
                None => stem.to_string(),
            });
        }
    }
    None
}

/// The root binaries and the folder (relative to the wheel's root) each is in.
fn roots(spec: &BundleJob, tree: &Path) -> Result<Vec<(PathBuf, String)>> {
    let mut found = Vec::new();
    if spec.roots.is_empty() {
        for (relative, path) in files_below(tree)? {
            if binary::sniff(&path)?.is_some() {
                found.push((path, parent_of(&relative)));
            }
        }
        if found.is_empty() {
            bail!(
                "{} holds no PE or ELF binary: nothing to bundle for",
                spec.wheel.display()
            );
        }
        return Ok(found);
    }
    for glob in &spec.roots {
        check_root(glob)?;
        // A folder the wheel does not have (or a file taken for one) holds no match either.
        let files = data::select(tree, glob, None).unwrap_or_default();
        if files.is_empty() {
            return Err(InputError::new(format!(
                "root `{}` matches no file in {}",
                glob.escape_debug(),
                spec.wheel.display()
            ))
            .note("roots (--binary) are `folder/pattern` inside the wheel, e.g. ctranslate2/*.so")
            .into());
        }
        let dir = parent_of(glob);
        found.extend(files.into_iter().map(|f| (f, dir.clone())));
    }
    Ok(found)
}

fn parent_of(relative: &str) -> String {
    relative
        .rsplit_once('/')
        .map_or(String::new(), |(dir, _)| dir.to_string())
}

/// The data files to place, and the kernel bytes kept per GPU target.
fn data_files(spec: &BundleJob, closure: &Closure) -> Result<(Vec<Placed>, BTreeMap<String, u64>)> {
    let mut placed = Vec::new();
    let mut kernel_bytes = BTreeMap::new();
    let libraries: Vec<String> = closure.libraries.iter().map(|l| l.name.clone()).collect();
    for (n, d) in spec.data.iter().enumerate() {
        let targets = d.filter_gpu_targets.then_some(spec.gpu_targets.as_slice());
        let nothing_written =
            |e: String| anyhow::anyhow!("{e}\nnothing was written to {}", spec.out.display());
        let mut selection = data::select_tree(&d.base, &d.glob, targets, &spec.not_built)
            .map_err(nothing_written)?;
        if d.filter_closure {
            selection
                .retain_kernels_of(&libraries)
                .map_err(|e| InputError::new(nothing_written(e).to_string()))?;
        }
        if selection.files.is_empty() && d.filter_closure {
            continue;
        }
        if selection.files.is_empty() {
            bail!(
                "data `{}` matches no file in {}{}",
                d.glob,
                d.base.display(),
                if d.filter_gpu_targets {
                    format!(" for GPU targets {}", spec.gpu_targets.join(","))
                } else {
                    String::new()
                }
            );
        }
        for (target, bytes) in selection.kernel_bytes {
            *kernel_bytes.entry(target).or_default() += bytes;
        }
        let package = package_of(&d.base, 4)
            .or_else(|| d.package.clone())
            .unwrap_or_else(|| folder_label("data", n + 1, &d.base));
        for file in selection.files {
            let (sub, name) = file
                .relative
                .rsplit_once('/')
                .map_or(("", file.relative.as_str()), |(s, n)| (s, n));
            let dest = if sub.is_empty() {
                d.dest.clone()
            } else {
                format!("{}/{sub}", d.dest.trim_end_matches('/'))
            };
            placed.push(Placed {
                source: file.source.clone(),
                dest,
                name: name.to_string(),
                reason: format!("data: {}", d.glob),
                package: package.clone(),
            });
        }
    }
    Ok((placed, kernel_bytes))
}

/// A folder that belongs to no package, named without the machine's path: `search folder
/// 2: lib`.
fn folder_label(kind: &str, number: usize, dir: &Path) -> String {
    let name = dir
        .file_name()
        .map_or_else(|| ".".to_string(), |n| n.to_string_lossy().into_owned());
    format!("{kind} folder {number}: {name}")
}

/// The size of every SDK package the bundle took files from: what copying it whole costs.
/// Folders nothing was taken from count nothing.
fn sdk_bytes(spec: &BundleJob, locations: &[LibraryFolder], placed: &[Placed]) -> Result<u64> {
    let counts_as_sdk = |l: &LibraryFolder| {
        spec.search
            .iter()
            .any(|s| s.counts_as_sdk && s.dir == SearchDir::Dir(l.dir.clone()))
    };
    let used = |dir: &Path| placed.iter().any(|p| p.source.starts_with(dir));
    let mut roots = BTreeSet::new();
    for l in locations
        .iter()
        .filter(|l| counts_as_sdk(l) && !l.in_wheel && used(&l.dir))
    {
        roots.insert(package_root(&l.dir));
    }
    for d in spec.data.iter().filter(|d| used(&d.base)) {
        roots.insert(package_root(&d.base));
    }
    // A root inside another is counted once.
    let roots: Vec<&PathBuf> = roots
        .iter()
        .filter(|r| !roots.iter().any(|o| o != *r && r.starts_with(o)))
        .collect();
    let mut total = 0;
    for root in roots {
        for (_, path) in files_below(root)? {
            // The tool's record of an unpacked tree names its folder: no SDK byte, and its
            // size would differ from host to host.
            if path.file_name() == Some(ct2v_support::owned_output::RECORD.as_ref()) {
                continue;
            }
            total += fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        }
    }
    Ok(total)
}

/// The folder holding the `*.dist-info` above `dir` (the unpacked package), else `dir`.
fn package_root(dir: &Path) -> PathBuf {
    for at in dir.ancestors().take(5) {
        let has_info = fs::read_dir(at).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| e.file_name().to_string_lossy().ends_with(".dist-info"))
        });
        if has_info {
            return at.to_path_buf();
        }
    }
    dir.to_path_buf()
}
