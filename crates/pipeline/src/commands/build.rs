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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::plan::ShowPlan;
    use ct2v_support::platform::Platform;

    /// `build --dry-run` shows the plan exactly as `plan` does, as text and as JSON, on stdout.
    #[test]
    fn a_dry_run_says_the_plan_as_the_plan_command_does() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let workspace = Workspace::locate(Some(root), None).unwrap();
        let request = PlanRequest {
            platform: Some(Platform::LinuxX86_64),
            python: Some("3.12".into()),
            ..PlanRequest::only("cpu".into())
        };
        for json in [false, true] {
            let planned = Reporter::captured();
            let shown = ShowPlan {
                plan: request.clone(),
                json,
            };
            shown.run(&workspace, &planned).unwrap();
            let dry_run = Reporter::captured();
            let build = BuildRequest {
                plan: request.clone(),
                dry_run: true,
                json,
                download: Options::default(),
                pinner: None,
                until: None,
                prebuilt_native: false,
            };
            build.run(&workspace, &dry_run).unwrap();
            let said = dry_run.said();
            assert_eq!(said, planned.said());
            if json {
                let plan: serde_json::Value = serde_json::from_str(&said.out).unwrap();
                assert_eq!(plan["variant"], "cpu");
            } else {
                assert!(
                    said.out
                        .starts_with("Plan: cpu for linux-x86_64, Python 3.12"),
                    "{}",
                    said.out
                );
            }
        }
    }
}
