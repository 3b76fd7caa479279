//! One bundle run: the input wheel checked and unpacked into a staging folder, analyzed
//! ([`analyze`]), repaired ([`repair`]), reported, and the outputs (fat wheel, portable
//! folder, provenance report) written there with their record (`owned_output`); the staging
//! folder replaces the output folder only when everything succeeded, and only when that folder
//! is new, empty, or an earlier output of this tool unchanged since.

use std::fs;
use std::path::Path;

use anyhow::{Context, Result};

use super::Output;
use super::analyze::analyze;
use super::job::BundleJob;
use super::layout::{self, Placed};
use super::repair::{Repaired, repair};
use super::report::ProvenanceReport;
use ct2v_fetch::unpack::{self, ArchiveFormat, Limits};
use ct2v_support::diagnostic::InputError;
use ct2v_support::fsx::files_below;
use ct2v_support::owned_output;
use ct2v_support::report::Reporter;

// The paths winpython/ and variant/ use.
pub use super::analyze::read_imports;
pub use super::job::check_root;

/// What a run produced.
#[derive(Debug)]
pub struct BundleOutput {
    pub report: ProvenanceReport,
    /// The files written under `out`, relative to it.
    pub artifacts: Vec<String>,
}

pub const PORTABLE_DIR: &str = "portable";
pub const PORTABLE_INTERNAL: &str = "_internal";
pub const BINARIES_JSON: &str = "binaries.json";
/// The PyInstaller hook shipped in `portable/`, which reads `binaries.json` next to it.
pub const PYINSTALLER_HOOK: &str = "hook-ctranslate2.py";
pub(crate) const REPORT_JSON: &str = "provenance.json";
pub(crate) const REPORT_MD: &str = "provenance.md";

/// How messages name the folder a run writes (`--out`, or the plan's).
const OUT_FOLDER: &str = "the bundle's output folder";

pub fn run(spec: &BundleJob, reporter: &Reporter) -> Result<BundleOutput> {
    let wheel_name = check_input(spec)?;
    let _lock = ct2v_support::out_lock::hold(&spec.out)
        .with_context(|| format!("cannot write {}", spec.out.display()))?;
    let claim = owned_output::claim(OUT_FOLDER, &spec.out)?;
    let staging = create_staging(&spec.out, reporter)?;
    let tree = staging.path().join("wheel");
    unpack_input(&spec.wheel, &tree, reporter)?;
    let analysis = analyze(spec, &tree)?;
    let repaired = repair(spec, &analysis, &tree, &wheel_name)?;
    let report = ProvenanceReport::of_bundle(spec, &analysis, &repaired, &tree)?;
    let out = staging.path().join("out");
    let artifacts = write_outputs(spec, &tree, &analysis.placed, &repaired, &report, &out)
        .with_context(|| format!("cannot write the bundle in {}", out.display()))?;
    owned_output::record(&out, &spec.out)?;
    owned_output::replace(OUT_FOLDER, &out, &spec.out, &claim)?;
    Ok(BundleOutput { report, artifacts })
}

/// The input wheel's file name, once the wheel and `out` are usable.
fn check_input(spec: &BundleJob) -> Result<String> {
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
    Ok(wheel_name)
}

/// A staging folder beside `out` (which it replaces at the end), once the folders a
/// previous run left there are swept.
fn create_staging(out: &Path, reporter: &Reporter) -> Result<ct2v_support::staging::Staging> {
    let staging = ct2v_support::out_folder::staging_beside(out, ".bundle-", reporter)?;
    if let (Some(parent), Some(name)) = (staging.path().parent(), out.file_name()) {
        ct2v_support::staging::sweep_and_say(
            parent,
            &format!(".{}.old-", name.to_string_lossy()),
            reporter,
        );
    }
    Ok(staging)
}

fn unpack_input(wheel: &Path, tree: &Path, reporter: &Reporter) -> Result<()> {
    let limits = Limits::default();
    unpack::unpack(wheel, ArchiveFormat::Zip, None, tree, &limits, reporter).map_err(|e| {
        if e.is_about_the_archive() {
            anyhow::Error::from(
                InputError::new(e.to_string()).note("bundle a wheel as the build wrote it"),
            )
        } else {
            e.into()
        }
    })?;
    check_input_record(wheel, tree)
}

/// The spec's outputs from the repaired `tree`, written into `out`; the files written,
/// relative to `out`.
fn write_outputs(
    spec: &BundleJob,
    tree: &Path,
    placed: &[Placed],
    repaired: &Repaired,
    report: &ProvenanceReport,
    out: &Path,
) -> Result<Vec<String>> {
    fs::create_dir_all(out)?;
    let mut artifacts = Vec::new();
    for output in &spec.outputs {
        match output {
            Output::FatWheel => {
                crate::wheel::write(tree, &out.join(&repaired.wheel_name))?;
                artifacts.push(repaired.wheel_name.clone());
            }
            Output::Portable => {
                write_portable(tree, placed, &out.join(PORTABLE_DIR))?;
                artifacts.push(format!("{PORTABLE_DIR}/{PORTABLE_INTERNAL}"));
                artifacts.push(format!("{PORTABLE_DIR}/{BINARIES_JSON}"));
                artifacts.push(format!("{PORTABLE_DIR}/{PYINSTALLER_HOOK}"));
            }
            Output::Report => {
                ct2v_support::fsx::write(
                    &out.join(REPORT_JSON),
                    serde_json::to_string_pretty(report)?,
                )?;
                ct2v_support::fsx::write(&out.join(REPORT_MD), report.markdown())?;
                artifacts.push(REPORT_JSON.to_string());
                artifacts.push(REPORT_MD.to_string());
            }
        }
    }
    Ok(artifacts)
}

/// A user-chosen `--out`: new, empty, or a previous output of `bundle` unchanged
/// (`owned_output`); anything else holds files that replacing it would delete.
pub fn check_out(out: &Path) -> Result<(), InputError> {
    ct2v_support::out_folder::check_out(
        "--out",
        out,
        ct2v_support::out_folder::Existing::Replaced,
    )?;
    owned_output::claim("--out", out).map(drop)
}

/// `--out` may not be the input wheel, nor a folder that holds it: replacing it would delete
/// the input (and whatever lies next to it).
fn check_out_apart_from_wheel(out: &Path, wheel: &Path) -> Result<(), InputError> {
    let absolute = |p: &Path| {
        ct2v_support::paths::canonical(p)
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
    let has_wheel_file = ct2v_support::fsx::files_below(tree)?
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

/// `portable/` for an already bundled (fat) wheel, as [`run`] writes it for the wheel it
/// bundles: every file below `folders` (the variant's bundle destinations) that is not
/// Python source is listed as placed, since the bundle put them there. For checking a wheel
/// someone downloaded (`smoke --frozen --wheel`).
pub fn portable_of_fat_wheel(
    wheel: &Path,
    folders: &[String],
    out: &Path,
    reporter: &Reporter,
) -> Result<()> {
    let portable = out.join(PORTABLE_DIR);
    let claim = owned_output::claim(PORTABLE_FOLDER, &portable)?;
    let tree = tempfile::tempdir()?;
    let limits = Limits::default().for_archive(fs::metadata(wheel)?.len());
    unpack::unpack(
        wheel,
        ArchiveFormat::Zip,
        None,
        tree.path(),
        &limits,
        reporter,
    )
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
    let staging = ct2v_support::out_folder::staging_beside(&portable, ".portable-", reporter)?;
    let staged = staging.path().join(PORTABLE_DIR);
    write_portable(tree.path(), &placed, &staged)?;
    owned_output::record(&staged, &portable)?;
    owned_output::replace(PORTABLE_FOLDER, &staged, &portable, &claim)
}

/// How messages name the portable folder [`portable_of_fat_wheel`] writes.
const PORTABLE_FOLDER: &str = "the portable folder";

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
        ct2v_support::regular_file::copy(&path, &to)
            .with_context(|| format!("cannot copy {}", path.display()))?;
    }
    let binaries = layout::spec_binaries(placed, Path::new(PORTABLE_INTERNAL));
    ct2v_support::fsx::write(
        &portable.join(BINARIES_JSON),
        serde_json::to_string_pretty(&binaries)?,
    )?;
    ct2v_support::fsx::write(
        &portable.join(PYINSTALLER_HOOK),
        include_str!("../../python/hook-ctranslate2.py"),
    )?;
    Ok(())
}
