//! The plan of one build as a command asks for it: the variant and the choices that select
//! one entry of its matrix, resolved against the variant files.

use std::path::PathBuf;

use anyhow::Result;

use super::Plan;
use crate::variant::{Catalog, Choices};
use ct2v_fetch::download::Options;
use ct2v_support::host;
use ct2v_support::platform::Platform;
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

/// Which build: the variant, and what a command line chose of its matrix.
#[derive(Clone, Default)]
pub struct PlanRequest {
    pub variant: String,
    /// Default: this host.
    pub platform: Option<Platform>,
    /// Default: the host's python3 if the variant builds for it.
    pub python: Option<String>,
    pub ctranslate2: Option<String>,
    pub cuda_arch: Option<String>,
    pub gpu_targets: Option<Vec<String>>,
    pub sdk_dir: Option<PathBuf>,
    /// The compiler cache program put in front of the compilers, if any.
    pub compiler_cache: Option<String>,
}

/// What `--allow-unpinned` does before a build or a fetch: pins the plan's unpinned inputs
/// in the variant files and plans again. The upkeep crate, above this one, writes pins.
pub type Pinner = fn(&Workspace, &PlanRequest, Plan, &Options) -> Result<Plan>;

impl PlanRequest {
    /// A variant with every choice left to its default and no compiler cache (for commands
    /// that plan without building: patch, bump, bundle).
    pub fn only(variant: String) -> PlanRequest {
        PlanRequest {
            variant,
            ..PlanRequest::default()
        }
    }

    /// The plan; a host probe that hangs or floods (the Python and glibc versions asked when
    /// not given) is said through `reporter`.
    pub fn plan(&self, workspace: &Workspace, reporter: &Reporter) -> Result<Plan> {
        let catalog = Catalog::load_for(
            &workspace.root,
            &[self.variant.as_str()],
            self.ctranslate2.as_deref(),
        )?;
        // Both asked at once: each may take a probe's whole timeout.
        let (host_glibc, host_python) = std::thread::scope(|scope| {
            let python = scope.spawn(|| {
                self.python
                    .is_none()
                    .then(|| host::python_version(reporter))
                    .flatten()
            });
            let glibc = host::glibc_version(reporter);
            let python = python
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (glibc, python)
        });
        let choices = Choices {
            platform: self.platform,
            host_glibc,
            host_python,
            python: self.python.clone(),
            cuda_arch: self.cuda_arch.clone(),
            gpu_targets: self.gpu_targets.clone(),
            target_family: std::env::var("ROCM_SDK_TARGET_FAMILY")
                .ok()
                .filter(|f| !f.trim().is_empty()),
            compiler_cache: self.compiler_cache.clone(),
            sdk_dir: self.sdk_dir.clone(),
        };
        let resolved = catalog.resolve(&self.variant, &choices)?;
        Ok(super::plan(workspace, &resolved))
    }

    /// `plan` with its unpinned inputs pinned when `pinner` is given (`--allow-unpinned`).
    pub(crate) fn pin_if_asked(
        &self,
        workspace: &Workspace,
        plan: Plan,
        options: &Options,
        pinner: Option<Pinner>,
    ) -> Result<Plan> {
        match pinner {
            Some(pin) if plan.inputs.iter().any(|i| i.sha256.is_none()) => {
                pin(workspace, self, plan, options)
            }
            _ => Ok(plan),
        }
    }
}
