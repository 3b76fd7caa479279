//! One bundle run: the input wheel unpacked, the closure of its binaries over the search
//! locations, the data files selected, and the outputs (fat wheel, portable folder,
//! provenance report) written into a staging folder that replaces the output folder only
//! when everything succeeded.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::closure::{self, Closure, Location};
use super::data;
use super::layout::{self, Placed};
use super::manylinux;
use super::policy::SystemLibraries;
use super::report::ProvenanceReport;
use super::runpath;
use super::spec::{BundleSpec, DataGlob, SearchDir, SearchFolder};
use super::{Output, Policy};
use crate::binary;
use crate::diagnostic::InputError;
use crate::fsx::files_below;
use crate::unpack::{self, Format, Limits};

pub use super::spec::check_root;

/// What a run produced.
#[derive(Debug)]
pub struct Bundled {
    pub closure: Closure,
    /// Every file added to the wheel: libraries, then data files.
    pub placed: Vec<Placed>,
    pub report: ProvenanceReport,
    /// The files written under `out`, relative to it.
    pub artifacts: Vec<String>,
}

pub const PORTABLE_DIR: &str = "portable";
pub const PORTABLE_INTERNAL: &str = "_internal";
pub const BINARIES_JSON: &str = "binaries.json";
/// The PyInstaller hook shipped in `portable/`, which reads `binaries.json` next to it.
pub const PYINSTALLER_HOOK: &str = "hook-ctranslate2.py";
pub const REPORT_JSON: &str = "provenance.json";
pub const REPORT_MD: &str = "provenance.md";

/// A file in every output folder of `bundle`: a folder with it may be replaced by the next
/// run; a non-empty folder without it is the user's and is never deleted.
pub const OUT_MARKER: &str = ".ct2v-bundle";

pub fn run(spec: &BundleSpec) -> Result<Bundled> {
    let wheel_name = spec
        .wheel
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| n.ends_with(".whl"))
        .ok_or_else(|| InputError::new(format!("{} is not a .whl file", spec.wheel.display())))?
        .to_string();
    if !spec.wheel.is_file() {
        return Err(
            InputError::new(format!("the wheel {} does not exist", spec.wheel.display())).into(),
        );
    }
    check_out_apart_from_wheel(&spec.out, &spec.wheel)?;
    let parent = match spec.out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&parent).with_context(|| format!("cannot create {}", parent.display()))?;
    if let Some(name) = spec.out.file_name() {
        crate::staging::sweep_and_say(&parent, &format!(".{}.old-", name.to_string_lossy()));
    }
    let staging = crate::staging::create(&parent, ".bundle-")
        .with_context(|| format!("cannot create a staging folder in {}", parent.display()))?;
    let tree = staging.path().join("wheel");
    unpack::unpack(&spec.wheel, Format::Zip, None, &tree, &Limits::default()).map_err(|e| {
        if e.is_about_the_archive() {
            anyhow::Error::from(
                InputError::new(e.to_string()).note("bundle a wheel as the build wrote it"),
            )
        } else {
            e.into()
        }
    })?;
    check_input_record(&spec.wheel, &tree)?;

    let mut system = SystemLibraries::for_policy(spec.policy);
    system.assume(&spec.assume_present);
    let roots = roots(spec, &tree)?;
    let locations = locations(spec, &tree, &roots)?;
    let inputs = closure::Inputs {
        roots,
        forced: &spec.force,
        locations: &locations,
        system: &system,
    };
    let closure = closure::resolve(&inputs, &read_imports).map_err(|e| match e {
        closure::ClosureError::Missing { .. } => {
            anyhow::anyhow!(
                "{e}{}\nnothing was written to {}",
                spec.missing_hint,
                spec.out.display()
            )
        }
        other => other.into(),
    })?;

    let mut placed = layout::libraries(&closure);
    let (data, kernel_bytes) = data_files(spec)?;
    placed.extend(data);
    for file in &placed {
        let to = tree.join(file.path_in_wheel());
        if let Some(dir) = to.parent() {
            fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        }
        fs::copy(&file.source, &to).with_context(|| {
            format!("cannot copy {} to {}", file.source.display(), to.display())
        })?;
        make_writable(&to)?;
    }
    // Nothing added: the wheel's binaries stay byte for byte as they were.
    if spec.policy == Policy::Manylinux2_28 && !placed.is_empty() {
        let patchelf = spec
            .patchelf
            .clone()
            .filter(|p| p.is_file())
            .unwrap_or_else(|| PathBuf::from("patchelf"));
        runpath::set_relative(&tree, &closure, &patchelf)?;
    }

    let sdk_dirs: Vec<&Location> = locations
        .iter()
        .filter(|l| {
            spec.search
                .iter()
                .any(|s| s.counts_as_sdk && s.dir == SearchDir::Dir(l.dir.clone()))
        })
        .collect();
    let sdk_bytes = sdk_bytes(&sdk_dirs, &spec.data, &placed)?;
    let os = SystemLibraries::for_policy(spec.policy);
    let (system, assumed): (Vec<String>, Vec<String>) = closure
        .system
        .keys()
        .cloned()
        .partition(|name| os.contains(name));
    // The report describes the files as shipped (RUNPATHs may have been rewritten).
    let shipped: Vec<Placed> = placed
        .iter()
        .map(|p| Placed {
            source: tree.join(p.path_in_wheel()),
            ..p.clone()
        })
        .collect();
    let mut report = ProvenanceReport::new(
        &spec.variant,
        &spec.platform,
        &shipped,
        system,
        sdk_bytes,
        &crate::cache::sha256_file,
    )
    .context("cannot hash the bundled files")?;
    report.assumed_present = assumed;
    let mut fat_wheel_name = wheel_name.clone();
    if let Some(target) = &spec.manylinux {
        let tagging = manylinux::tag_wheel(
            &tree,
            target,
            &|lib| inputs.system.contains(lib),
            spec.keep_linux_tag,
            spec.manylinux_newer_ok,
        )?;
        fat_wheel_name = crate::wheel::set_platform_tag(&tree, &wheel_name, &tagging.tag)?;
        report.platform_tag = Some(tagging);
    }
    report.kernel_bytes = kernel_bytes;
    crate::wheel::add_requires_dist(&tree, &spec.requires_dist)?;

    let out = staging.path().join("out");
    fs::create_dir_all(&out)?;
    fs::write(
        out.join(OUT_MARKER),
        "written by `cargo xtask bundle`; the next bundle run may replace this folder\n",
    )?;
    let mut artifacts = Vec::new();
    for output in &spec.outputs {
        match output {
            Output::FatWheel => {
                crate::wheel::write(&tree, &out.join(&fat_wheel_name))?;
                artifacts.push(fat_wheel_name.clone());
            }
            Output::Portable => {
                write_portable(&tree, &placed, &out.join(PORTABLE_DIR))?;
                artifacts.push(format!("{PORTABLE_DIR}/{PORTABLE_INTERNAL}"));
                artifacts.push(format!("{PORTABLE_DIR}/{BINARIES_JSON}"));
                artifacts.push(format!("{PORTABLE_DIR}/{PYINSTALLER_HOOK}"));
            }
            Output::Report => {
                fs::write(
                    out.join(REPORT_JSON),
                    serde_json::to_string_pretty(&report)?,
                )?;
                fs::write(out.join(REPORT_MD), report.markdown())?;
                artifacts.push(REPORT_JSON.to_string());
                artifacts.push(REPORT_MD.to_string());
            }
        }
    }
    crate::fsx::replace(&out, &spec.out)
        .with_context(|| format!("cannot move the bundle to {}", spec.out.display()))?;
    Ok(Bundled {
        closure,
        placed,
        report,
        artifacts,
    })
}

/// A user-chosen `--out`: new, empty, or a previous output of `bundle` (it has
/// [`OUT_MARKER`]); anything else holds files that replacing it would delete.
pub fn check_out(out: &Path) -> Result<(), InputError> {
    crate::out_folder::check_out("--out", out, crate::out_folder::Existing::Replaced)?;
    if !out.is_dir() {
        return Ok(());
    }
    let mut entries = fs::read_dir(out)
        .map_err(|e| InputError::new(format!("cannot list --out {}: {e}", out.display())))?;
    if entries.next().is_some() && !out.join(OUT_MARKER).is_file() {
        return Err(InputError::new(format!(
            "--out {} holds files not written by `cargo xtask bundle`; replacing it would delete them",
            out.display()
        ))
        .note("choose a new or empty folder (a previous bundle output is replaced)"));
    }
    Ok(())
}

/// `--out` may not be the input wheel, nor a folder that holds it: replacing it would delete
/// the input (and whatever lies next to it).
fn check_out_apart_from_wheel(out: &Path, wheel: &Path) -> Result<(), InputError> {
    let absolute = |p: &Path| {
        crate::paths::canonical(p)
            .or_else(|_| std::path::absolute(p))
            .unwrap_or_else(|_| p.to_path_buf())
    };
    let (out_abs, wheel_abs) = (absolute(out), absolute(wheel));
    if wheel_abs.starts_with(&out_abs) {
        return Err(InputError::new(format!(
            "--out {} is, or holds, the input wheel {}: replacing it would delete the input",
            out.display(),
            wheel.display()
        ))
        .note("choose an output folder apart from the input, e.g. dist/bundled"));
    }
    Ok(())
}

/// The input wheel must be what its RECORD says (PEP 427): a file changed after the RECORD
/// was written, a RECORD that is not one, or a wheel without RECORD or WHEEL is refused,
/// rather than covered by the fresh RECORD the fat wheel gets.
fn check_input_record(wheel: &Path, tree: &Path) -> Result<()> {
    let mut problems = crate::wheel::check_record_tree(tree)
        .map_err(|e| InputError::new(format!("{}: {e:#}", wheel.display())))?;
    let has_wheel_file = crate::fsx::files_below(tree)?
        .iter()
        .any(|(name, _)| name.ends_with(".dist-info/WHEEL") && name.matches('/').count() == 1);
    if !has_wheel_file {
        problems.push("no .dist-info/WHEEL (every wheel has one, PEP 427)".to_string());
    }
    if problems.is_empty() {
        return Ok(());
    }
    let shown: Vec<&str> = problems.iter().take(5).map(String::as_str).collect();
    let more = problems.len().saturating_sub(shown.len());
    let mut error = InputError::new(format!(
        "the input wheel {} does not match its RECORD (changed after it was built?):\n  {}{}",
        wheel.display(),
        shown.join("\n  "),
        if more > 0 {
            format!("\n  … and {more} more")
        } else {
            String::new()
        }
    ));
    error = error.note("bundle a wheel as the build wrote it");
    Err(error.into())
}

/// Copies keep the SDK's modes; a read-only copy could not have its RUNPATH set.
fn make_writable(path: &Path) -> Result<()> {
    let mut permissions = fs::metadata(path)?.permissions();
    if permissions.readonly() {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            permissions.set_mode(permissions.mode() | 0o200);
        }
        // Windows only: there it clears the read-only attribute (on Unix it would make the
        // file writable by everyone, which the lint is about).
        #[cfg(not(unix))]
        #[allow(clippy::permissions_set_readonly_false)]
        permissions.set_readonly(false);
        fs::set_permissions(path, permissions)
            .with_context(|| format!("cannot make {} writable", path.display()))?;
    }
    Ok(())
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
fn locations(spec: &BundleSpec, tree: &Path, roots: &[(PathBuf, String)]) -> Result<Vec<Location>> {
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
                    crate::fsx::folders_beside_note(&dir)
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
            Ok(Location {
                dir,
                dest: s.dest.clone(),
                package,
                in_wheel,
            })
        })
        .collect()
}

/// `name version` from a `*.dist-info` folder in `dir` or up to `levels` folders above it.
pub fn package_of(dir: &Path, levels: usize) -> Option<String> {
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
fn roots(spec: &BundleSpec, tree: &Path) -> Result<Vec<(PathBuf, String)>> {
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
        let files = data::select(tree, glob, None).map_err(anyhow::Error::msg)?;
        if files.is_empty() {
            bail!(
                "root `{glob}` matches no file in {} (roots are `folder/pattern` inside the wheel)",
                spec.wheel.display()
            );
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
fn data_files(spec: &BundleSpec) -> Result<(Vec<Placed>, BTreeMap<String, u64>)> {
    let mut placed = Vec::new();
    let mut kernel_bytes = BTreeMap::new();
    for (n, d) in spec.data.iter().enumerate() {
        let targets = d.filter_gpu_targets.then_some(spec.gpu_targets.as_slice());
        let selection = data::select_tree(&d.base, &d.glob, targets)
            .map_err(|e| anyhow::anyhow!("{e}\nnothing was written to {}", spec.out.display()))?;
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
fn sdk_bytes(locations: &[&Location], data: &[DataGlob], placed: &[Placed]) -> Result<u64> {
    let used = |dir: &Path| placed.iter().any(|p| p.source.starts_with(dir));
    let mut roots = BTreeSet::new();
    for l in locations.iter().filter(|l| !l.in_wheel && used(&l.dir)) {
        roots.insert(package_root(&l.dir));
    }
    for d in data.iter().filter(|d| used(&d.base)) {
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

/// `portable/` for an already bundled (fat) wheel, as [`run`] writes it for the wheel it
/// bundles: every file below `folders` (the variant's bundle destinations) that is not
/// Python source is listed as placed, since the bundle put them there. For checking a wheel
/// someone downloaded (`smoke --frozen --wheel`).
pub fn portable_of_fat_wheel(wheel: &Path, folders: &[String], out: &Path) -> Result<()> {
    let tree = tempfile::tempdir()?;
    let limits = Limits::default().for_archive(fs::metadata(wheel)?.len());
    unpack::unpack(wheel, Format::Zip, None, tree.path(), &limits)
        .with_context(|| format!("cannot unpack {}", wheel.display()))?;
    let mut placed = Vec::new();
    for (relative, path) in files_below(tree.path())? {
        let (dest, name) = relative.rsplit_once('/').unwrap_or(("", relative.as_str()));
        let in_folder = folders
            .iter()
            .any(|f| dest == f || dest.starts_with(&format!("{f}/")));
        if !in_folder || name.ends_with(".py") || name.ends_with(".pyc") {
            continue;
        }
        placed.push(Placed {
            source: path.clone(),
            dest: dest.to_string(),
            name: name.to_string(),
            reason: "in the fat wheel".into(),
            package: String::new(),
        });
    }
    let portable = out.join(PORTABLE_DIR);
    if portable.exists() {
        fs::remove_dir_all(&portable)
            .with_context(|| format!("cannot replace {}", portable.display()))?;
    }
    write_portable(tree.path(), &placed, &portable)
}

/// `portable/_internal/`: the wheel's contents without its metadata, as PyInstaller lays out
/// a one-folder app; `portable/binaries.json`: the (source, destination folder) pairs of the
/// bundled files, sources relative to `portable/`, for a `.spec` file's `binaries`;
/// `portable/hook-ctranslate2.py`: the PyInstaller hook that makes those paths absolute.
fn write_portable(tree: &Path, placed: &[Placed], portable: &Path) -> Result<()> {
    let internal = portable.join(PORTABLE_INTERNAL);
    for (relative, path) in files_below(tree)? {
        let top = relative.split('/').next().unwrap_or_default();
        if top.ends_with(".dist-info") || top.ends_with(".data") {
            continue;
        }
        let to = internal.join(&relative);
        fs::create_dir_all(to.parent().unwrap())?;
        fs::copy(&path, &to).with_context(|| format!("cannot copy {}", path.display()))?;
    }
    let binaries = layout::spec_binaries(placed, Path::new(PORTABLE_INTERNAL));
    fs::write(
        portable.join(BINARIES_JSON),
        serde_json::to_string_pretty(&binaries)?,
    )?;
    fs::write(
        portable.join(PYINSTALLER_HOOK),
        include_str!("../../python/hook-ctranslate2.py"),
    )?;
    Ok(())
}
