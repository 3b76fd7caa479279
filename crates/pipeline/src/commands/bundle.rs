//! `bundle`: the SDK libraries a wheel's binaries load, bundled outside a build: for a
//! variant's plan (after its build) or for a wheel with explicit folders.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use crate::execute::bundle_job;
use crate::plan::request::PlanRequest;
use ct2v_bundle::bundler::job::{BundleJob, WheelFlags};
use ct2v_bundle::bundler::run as bundle_run;
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

/// What is bundled: the bundle step of a variant's plan, or a wheel as its flags describe.
pub enum BundleSource {
    Plan {
        plan: Box<PlanRequest>,
        /// The compiler runtime folder for `from = "toolchain"` sources.
        toolchain_dir: Option<PathBuf>,
    },
    Wheel(Box<WheelFlags>),
}

/// A bundle as `cargo xtask bundle` asks for it.
pub struct BundleRequest {
    pub source: BundleSource,
    /// Libraries the target system provides, added to the job's.
    pub assume_present: Vec<String>,
    /// The output folder (default: the plan's).
    pub out: Option<PathBuf>,
}

impl BundleRequest {
    pub fn run(self, workspace: &Workspace, reporter: &Reporter) -> Result<ExitCode> {
        let mut job = match &self.source {
            BundleSource::Plan {
                plan,
                toolchain_dir,
            } => bundle_job::from_built_plan(
                &plan.plan(workspace, reporter)?,
                plan.sdk_dir.as_deref(),
                toolchain_dir.as_deref(),
                reporter,
            )?,
            BundleSource::Wheel(flags) => BundleJob::from_flags(flags)?,
        };
        job.assume_present.extend(self.assume_present);
        if let Some(out) = &self.out {
            job.set_out(out)?;
        }
        let bundled = bundle_run::run(&job, reporter)?;
        reporter.out(bundled.report.summary())?;
        for artifact in &bundled.artifacts {
            let path = ct2v_support::paths::join_slashed(&job.out, artifact);
            reporter.outln(format_args!("wrote {}", ct2v_support::paths::shown(&path)))?;
        }
        Ok(ExitCode::SUCCESS)
    }
}
