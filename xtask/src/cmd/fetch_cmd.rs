//! `fetch`: download (or find in the cache) and verify every pinned input of one build.

use std::process::ExitCode;

use anyhow::Result;

use super::{make_plan, pin_if_allowed};
use crate::cli::{DownloadArgs, Selection};
use ct2v_fetch::cache::Cache;
use ct2v_pipeline::build::fetch;
use ct2v_support::workspace::Workspace;

pub fn run(
    workspace: &Workspace,
    selection: Selection,
    download: DownloadArgs,
    no_wheels: bool,
) -> Result<ExitCode> {
    let plan = make_plan(workspace, &selection)?;
    let plan = pin_if_allowed(workspace, &selection, plan, &download)?;
    let cache = Cache::new(&workspace.cache_dir);
    let summary = fetch::fetch_plan(&cache, &plan, &download.options())?;
    for f in &summary.fetched {
        let how = if f.downloaded { "downloaded" } else { "cached" };
        println!("{:<28} {how:<10} {}", f.name, f.path.display());
    }
    eprintln!("{}", summary.line());
    if download.offline
        && !no_wheels
        && let Some(requirements) = plan.venv_requirements()
    {
        let missing = ct2v_fetch::wheelhouse::missing(
            &workspace.cache_dir,
            plan.platform,
            &plan.python,
            &requirements,
        )?;
        if !missing.is_empty() {
            eprintln!(
                "error: offline: the wheelhouse {} lacks {} wheel(s) the build installs: {}",
                ct2v_fetch::wheelhouse::dir(&workspace.cache_dir, plan.platform, &plan.python)
                    .display(),
                missing.len(),
                missing.join(", ")
            );
            eprintln!(
                "  = run `cargo xtask fetch --variant {} --platform {} --python {}` where PyPI can \
                 be reached, and copy the cache",
                plan.variant, plan.platform, plan.python
            );
            return Ok(ExitCode::FAILURE);
        }
    }
    if !download.offline
        && !no_wheels
        && let Some(requirements) = plan.venv_requirements()
    {
        let log_dir = workspace.log_dir(&plan.slot, plan.platform);
        std::fs::create_dir_all(&log_dir)?;
        let dir = ct2v_fetch::wheelhouse::download(
            &workspace.cache_dir,
            plan.platform,
            &plan.python,
            &requirements,
            &[format!("ctranslate2=={}", plan.ctranslate2)],
            &log_dir.join("wheelhouse.log"),
        )?;
        eprintln!("build-tool and runtime wheels in {}", dir.display());
    }
    Ok(ExitCode::SUCCESS)
}
