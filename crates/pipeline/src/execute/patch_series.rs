//! `patch`: check (or apply) a variant's patch series against CTranslate2's source.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;

use crate::execute::input_download;
use crate::plan::{self, request::PlanRequest};
use ct2v_fetch::cache::Cache;
use ct2v_fetch::download::Options;
use ct2v_support::diagnostic::InputError;
use ct2v_support::outln;
use ct2v_support::workspace::Workspace;

/// A patch check or application as `cargo xtask patch` asks for it.
pub struct PatchRequest {
    pub plan: PlanRequest,
    /// Only check, on a copy.
    pub check: bool,
    /// The tree to patch (default with `check`: the pinned source).
    pub source: Option<PathBuf>,
    pub download: Options,
}

impl PatchRequest {
    pub fn run(self, workspace: &Workspace) -> Result<ExitCode> {
        if let Some(dir) = &self.source {
            source_folder(dir)?;
        }
        let plan = self.plan.plan(workspace, &self.download.reporter)?;
        patch_series(workspace, &plan, self.check, self.source, &self.download)
    }
}

/// `--source` must be a folder: checked before the plan is made or anything is written.
fn source_folder(dir: &Path) -> Result<(), InputError> {
    let why = match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => return Ok(()),
        Ok(_) => "is not a folder".to_string(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => "does not exist".to_string(),
        Err(e) => format!("cannot be read: {e}"),
    };
    Err(InputError::new(format!(
        "--source {} {why}",
        ct2v_support::paths::shown(dir)
    ))
    .note("give the CTranslate2 source tree to patch (a folder); with --check, leave --source out to use the pinned source"))
}

/// Checks (`check`) or applies the plan's patch series to `source`, else to the plan's pinned
/// source; `source`, when given, is a folder ([`PatchRequest::run`] checks it first).
pub fn patch_series(
    workspace: &Workspace,
    plan: &plan::Plan,
    check: bool,
    source: Option<PathBuf>,
    download: &Options,
) -> Result<ExitCode> {
    let Some((series, patches)) = plan.find_action(|a| match a {
        plan::Action::Patch {
            series, patches, ..
        } => Some((series.clone(), patches.clone())),
        _ => None,
    }) else {
        return Err(InputError::new(format!(
            "variant `{}` has no patch series (`patches = \"…/series\"` in its variant file)",
            plan.variant
        ))
        .into());
    };
    let patches: Vec<PathBuf> = patches.iter().map(PathBuf::from).collect();
    let log_dir = workspace.log_dir(&plan.slot, plan.platform);
    std::fs::create_dir_all(&log_dir)?;
    let log = log_dir.join("patch-check.log");
    ct2v_support::fsx::write(&log, "")?;
    let unpacked;
    let tree = match source {
        Some(dir) => dir,
        None => {
            unpacked = pinned_source(workspace, plan, download)?;
            unpacked.path().join("ctranslate2")
        }
    };
    if !check {
        ct2v_fetch::patch::apply_series(&patches, &tree, &log)?;
        outln!("{} is patched with {series}", tree.display())?;
        return Ok(ExitCode::SUCCESS);
    }
    let outcomes = ct2v_fetch::patch::check_series(&patches, &tree, &log)?;
    for (p, outcome) in patches.iter().zip(&outcomes) {
        let name = p.file_name().unwrap_or_default().to_string_lossy();
        let said = match outcome {
            ct2v_fetch::patch::Check::AlreadyThere => "already in the tree",
            _ => "applies",
        };
        outln!("{name}: {said}")?;
    }
    eprintln!(
        "{series}: {} patch(es) apply in order to {}; nothing was changed",
        patches.len(),
        tree.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The plan's pinned CTranslate2 source, fetched if needed and unpacked into a temp folder.
fn pinned_source(
    workspace: &Workspace,
    plan: &plan::Plan,
    download: &Options,
) -> Result<tempfile::TempDir> {
    if let Some((tag, submodules)) = plan.find_action(|a| match a {
        plan::Action::AssembleSource {
            tag, submodules, ..
        } => Some((tag, submodules)),
        _ => None,
    }) {
        let names: Vec<&str> = std::iter::once(tag.input.as_str())
            .chain(submodules.iter().map(|s| s.input.as_str()))
            .collect();
        fetch_only(workspace, plan, &names, download)?;
        let dir = tempfile::tempdir()?;
        let tree = dir.path().join("ctranslate2");
        eprintln!(
            "assembling {} and {} submodule archive(s) into {}",
            tag.input,
            submodules.len(),
            tree.display()
        );
        let assembly = crate::execute::runner::assembly(plan, tag, submodules, &tree)?;
        ct2v_fetch::assemble::assemble(&assembly, &ct2v_support::report::Reporter::std())?;
        return Ok(dir);
    }
    let Some(input) = plan
        .inputs
        .iter()
        .find(|i| i.name == plan::SOURCE_INPUT)
        .cloned()
    else {
        anyhow::bail!(
            "variant `{}` takes its source from no pinned archive: pass --source DIR",
            plan.variant
        );
    };
    fetch_only(workspace, plan, &[plan::SOURCE_INPUT], download)?;
    let subdir = plan.find_action(|a| match a {
        plan::Action::Unpack {
            input: i, subdir, ..
        } if i == &input.name => subdir.clone(),
        _ => None,
    });
    let dir = tempfile::tempdir()?;
    let tree = dir.path().join("ctranslate2");
    eprintln!("unpacking {} into {}", input.file_name, tree.display());
    let archive = PathBuf::from(input.cache_path.as_deref().unwrap_or_default());
    ct2v_fetch::unpack::unpack_input(
        &input.name,
        &archive,
        &input.file_name,
        &input.url,
        subdir.as_deref(),
        &tree,
        ct2v_fetch::unpack::Kept::Unrecorded,
        &ct2v_support::report::Reporter::std(),
    )?;
    Ok(dir)
}

/// Fetches only the plan's inputs named in `names` into the cache.
fn fetch_only(
    workspace: &Workspace,
    plan: &plan::Plan,
    names: &[&str],
    download: &Options,
) -> Result<()> {
    let only = plan::Plan {
        inputs: plan
            .inputs
            .iter()
            .filter(|i| names.contains(&i.name.as_str()))
            .cloned()
            .collect(),
        ..plan.clone()
    };
    input_download::fetch_plan(&Cache::new(&workspace.cache_dir), &only, download)?;
    Ok(())
}
