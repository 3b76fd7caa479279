//! A plan's patch series checked on (or applied to) a CTranslate2 source tree: a given one,
//! or the plan's pinned source unpacked into a temporary folder.

use std::path::PathBuf;

use anyhow::Result;

use crate::execute::input_download;
use crate::plan;
use ct2v_fetch::cache::Cache;
use ct2v_fetch::download::Options;
use ct2v_fetch::patch::Check;
use ct2v_support::diagnostic::InputError;
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

/// What [`patch_series`] did to the tree.
pub enum Patched {
    /// The series was applied to `tree`.
    Applied { series: String, tree: PathBuf },
    /// Every patch applies in order to `tree` (each one's file name and how); nothing changed.
    Checked {
        series: String,
        tree: PathBuf,
        patches: Vec<(String, Check)>,
    },
}

/// Checks (`check`) or applies the plan's patch series to `source`, else to the plan's pinned
/// source; `source`, when given, is a folder (the `patch` command checks it first). Fetching
/// and unpacking the pinned source is said through `reporter`.
pub fn patch_series(
    workspace: &Workspace,
    plan: &plan::Plan,
    check: bool,
    source: Option<PathBuf>,
    download: &Options,
    reporter: &Reporter,
) -> Result<Patched> {
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
            unpacked = pinned_source(workspace, plan, download, reporter)?;
            unpacked.path().join("ctranslate2")
        }
    };
    if !check {
        ct2v_fetch::patch::apply_series(&patches, &tree, &log)?;
        return Ok(Patched::Applied { series, tree });
    }
    let outcomes = ct2v_fetch::patch::check_series(&patches, &tree, &log)?;
    let patches = patches
        .iter()
        .map(|p| {
            p.file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned()
        })
        .zip(outcomes)
        .collect();
    Ok(Patched::Checked {
        series,
        tree,
        patches,
    })
}

/// The plan's pinned CTranslate2 source, fetched if needed and unpacked into a temp folder.
fn pinned_source(
    workspace: &Workspace,
    plan: &plan::Plan,
    download: &Options,
    reporter: &Reporter,
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
        reporter.say(format_args!(
            "assembling {} and {} submodule archive(s) into {}",
            tag.input,
            submodules.len(),
            tree.display()
        ));
        let assembly = crate::execute::runner::assembly(plan, tag, submodules, &tree)?;
        ct2v_fetch::assemble::assemble(&assembly, reporter)?;
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
    reporter.say(format_args!(
        "unpacking {} into {}",
        input.file_name,
        tree.display()
    ));
    let archive = PathBuf::from(input.cache_path.as_deref().unwrap_or_default());
    ct2v_fetch::unpack::unpack_input(
        &ct2v_fetch::unpack::CachedInput {
            name: &input.name,
            archive: &archive,
            file_name: &input.file_name,
            url: &input.url,
        },
        subdir.as_deref(),
        &tree,
        ct2v_fetch::unpack::Kept::Unrecorded,
        reporter,
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
