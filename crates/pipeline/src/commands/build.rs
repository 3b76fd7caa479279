//! `build`: one variant end to end, step by step, through the executor.

use std::process::ExitCode;

use anyhow::Result;

use crate::execute::Runner;
use crate::execute::bundle_job;
use crate::execute::executor::Executor;
use crate::plan::{self, request::Pinner, request::PlanRequest};
use ct2v_fetch::cache::Cache;
use ct2v_fetch::download::Options;
use ct2v_support::diagnostic::InputError;
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

/// A build as `cargo xtask build` asks for it.
pub struct BuildRequest {
    pub plan: PlanRequest,
    /// Print the plan (as JSON with `json`) and stop.
    pub dry_run: bool,
    pub json: bool,
    pub download: Options,
    /// `--allow-unpinned`: how the unpinned inputs get pinned first.
    pub pinner: Option<Pinner>,
    /// Stop after this step.
    pub until: Option<String>,
    /// The C++ library was built by another run.
    pub prebuilt_native: bool,
}

impl BuildRequest {
    pub fn run(&self, workspace: &Workspace, reporter: &Reporter) -> Result<ExitCode> {
        let plan = self.plan.plan(workspace, reporter)?;
        if let Some(until) = &self.until
            && !plan.steps.iter().any(|s| s.id == until.as_str())
        {
            let ids: Vec<&str> = plan.steps.iter().map(|s| s.id.as_str()).collect();
            return Err(InputError::new(format!(
                "--until {until}: the plan of `{}` has no such step",
                plan.variant
            ))
            .allowed("", &ids)
            .into());
        }
        if self.dry_run {
            super::plan::print(&plan, self.json, reporter)?;
            return Ok(ExitCode::SUCCESS);
        }
        let plan = self
            .plan
            .pin_if_asked(workspace, plan, &self.download, self.pinner)?;
        if let Some(problem) = crate::execute::long_paths::problem(&plan) {
            anyhow::bail!("{problem}");
        }
        self.execute(workspace, &plan, reporter)
    }

    fn execute(
        &self,
        workspace: &Workspace,
        plan: &plan::Plan,
        reporter: &Reporter,
    ) -> Result<ExitCode> {
        reporter.say(format_args!(
            "building {} for {} (Python {}): {} steps; logs in {}",
            plan.variant,
            plan.platform,
            plan.python,
            plan.steps.len(),
            workspace.log_dir(&plan.slot, plan.platform).display()
        ));
        for note in &plan.notes {
            reporter.say(format_args!("note: {note}"));
        }
        let mut runner = Runner {
            cache: Cache::new(&workspace.cache_dir),
            download: self.download.clone(),
            folders: bundle_job::Folders {
                sdk_root: self.plan.sdk_dir.clone(),
                toolchain: None,
                sdk_version: None,
            },
            sdk: crate::execute::sdk_env::SdkEnv {
                before_bundle: stops_before_bundle(plan, self.until.as_deref()),
                ..Default::default()
            },
            msvc: None,
            prebuilt_native: self.prebuilt_native,
            skip_device_wheels: skips_device_wheels(plan, self.until.as_deref()),
            reporter: reporter.clone(),
        };
        let mut executor = Executor::new(
            plan,
            workspace.state_dir(&plan.slot, plan.platform, &plan.python),
            workspace.log_dir(&plan.slot, plan.platform),
        );
        executor.until = self.until.clone();
        executor.prebuilt_native = self.prebuilt_native;
        let report = executor.run(&mut runner, reporter)?;
        reporter.say(format_args!(
            "done in {:.1} s: {} step(s) ran, {} up to date",
            report.seconds,
            report.ran.len(),
            report.skipped.len()
        ));
        for (step, why) in &report.not_run {
            reporter.warn(format_args!("step `{step}` did not run: {why}"));
        }
        if let Some(until) = &self.until {
            reporter.say(format_args!("stopped after step `{until}` (--until)"));
            return Ok(ExitCode::SUCCESS);
        }
        for artifact in &plan.artifacts {
            reporter.outln(artifact)?;
        }
        Ok(ExitCode::SUCCESS)
    }
}

/// Whether the run leaves the device wheels out: it stops before the bundle, their only
/// reader (the native job, `--until install-ctranslate2`), and not at one's own unpack step.
fn skips_device_wheels(plan: &plan::Plan, until: Option<&str>) -> bool {
    let unpack_device = format!("unpack-{}", crate::variant::DEVICE_INPUT_PREFIX);
    stops_before_bundle(plan, until) && !until.is_some_and(|u| u.starts_with(&unpack_device))
}

/// Whether `--until STEP` ends the run before the plan's bundle step.
fn stops_before_bundle(plan: &plan::Plan, until: Option<&str>) -> bool {
    let Some(until) = until else {
        return false;
    };
    let last = plan.steps.iter().position(|s| s.id == until);
    let bundle = plan
        .steps
        .iter()
        .position(|s| matches!(s.action, plan::Action::Bundle { .. }));
    matches!((last, bundle), (Some(last), Some(bundle)) if last < bundle)
}
