//! `fetch`: download (or find in the cache) and verify every pinned input of one build, and
//! the pip wheels its build tools and its wheel's dependencies need.

use std::process::ExitCode;

use anyhow::Result;

use crate::execute::input_download;
use crate::plan::request::{Pinner, PlanRequest};
use ct2v_fetch::cache::Cache;
use ct2v_fetch::download::Options;
use ct2v_fetch::wheelhouse;
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

/// A fetch as `cargo xtask fetch` asks for it.
pub struct FetchRequest {
    pub plan: PlanRequest,
    pub download: Options,
    /// `--allow-unpinned`: how the unpinned inputs get pinned first.
    pub pinner: Option<Pinner>,
    /// Skip the pip wheels (the wheelhouse).
    pub no_wheels: bool,
}

impl FetchRequest {
    pub fn run(&self, workspace: &Workspace, reporter: &Reporter) -> Result<ExitCode> {
        let plan = self.plan.plan(workspace, reporter)?;
        let plan = self
            .plan
            .pin_if_asked(workspace, plan, &self.download, self.pinner)?;
        let cache = Cache::new(&workspace.cache_dir);
        let summary = input_download::fetch_plan(&cache, &plan, &self.download)?;
        for f in &summary.fetched {
            let how = if f.downloaded { "downloaded" } else { "cached" };
            reporter.outln(format_args!(
                "{:<28} {how:<10} {}",
                f.name,
                f.path.display()
            ))?;
        }
        reporter.say(summary.line());
        let Some(requirements) = plan.venv_requirements().filter(|_| !self.no_wheels) else {
            return Ok(ExitCode::SUCCESS);
        };
        if self.download.offline {
            let missing = wheelhouse::missing(
                &workspace.cache_dir,
                plan.platform,
                &plan.python,
                &requirements,
            )?;
            if !missing.is_empty() {
                reporter.say(format_args!(
                    "error: offline: the wheelhouse {} lacks {} wheel(s) the build installs: {}",
                    wheelhouse::dir(&workspace.cache_dir, plan.platform, &plan.python).display(),
                    missing.len(),
                    missing.join(", ")
                ));
                reporter.say(format_args!(
                    "  = run `cargo xtask fetch --variant {} --platform {} --python {}` where PyPI can \
                     be reached, and copy the cache",
                    plan.variant, plan.platform, plan.python
                ));
                return Ok(ExitCode::FAILURE);
            }
            return Ok(ExitCode::SUCCESS);
        }
        let log_dir = workspace.log_dir(&plan.slot, plan.platform);
        std::fs::create_dir_all(&log_dir)?;
        let dir = wheelhouse::download(
            &workspace.cache_dir,
            plan.platform,
            &plan.python,
            &requirements,
            &[format!("ctranslate2=={}", plan.ctranslate2)],
            &log_dir.join("wheelhouse.log"),
        )?;
        reporter.say(format_args!(
            "build-tool and runtime wheels in {}",
            dir.display()
        ));
        Ok(ExitCode::SUCCESS)
    }
}
