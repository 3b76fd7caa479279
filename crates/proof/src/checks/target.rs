//! What a check (`verify`, `smoke`) looks at: the plan of the build the wheel belongs to, and
//! `--wheel`'s file when one is given (else the build's own wheel).

use std::path::PathBuf;

use anyhow::Result;

use ct2v_fetch::wheel_name::WheelName;
use ct2v_pipeline::plan::Plan;
use ct2v_pipeline::plan::request::PlanRequest;
use ct2v_support::diagnostic::InputError;
use ct2v_support::platform::Platform;
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

/// The build a check is asked about: a variant and its choices, or a wheel whose name says
/// what it can (platform, Python, CTranslate2 version, and the variant by its local version).
pub struct TargetQuery {
    pub variant: Option<String>,
    pub wheel: Option<PathBuf>,
    pub platform: Option<Platform>,
    pub python: Option<String>,
    pub ctranslate2: Option<String>,
    pub cuda_arch: Option<String>,
}

/// The plan a check follows and the wheel it checks (`None`: the build's own).
pub struct CheckTarget {
    pub plan: Plan,
    pub wheel: Option<PathBuf>,
}

impl TargetQuery {
    /// A wheel that does not fit what was asked is bad input.
    pub fn resolve(self, workspace: &Workspace, reporter: &Reporter) -> Result<CheckTarget> {
        let name = match &self.wheel {
            Some(wheel) if !wheel.is_file() => {
                return Err(
                    InputError::new(format!("--wheel {}: no such file", wheel.display()))
                        .note("give a ctranslate2 wheel (.whl)")
                        .into(),
                );
            }
            Some(wheel) => Some(WheelName::parse(wheel)?),
            None => None,
        };
        let variant = match (self.variant, &name) {
            (Some(v), _) => v,
            (None, Some(name)) => {
                ct2v_pipeline::variant::wheel_variant::variant_for(&workspace.root, name)?
            }
            (None, None) => unreachable!("clap requires --variant without --wheel"),
        };
        let request = PlanRequest {
            platform: self
                .platform
                .or_else(|| name.as_ref().and_then(|n| n.platform)),
            python: self
                .python
                .or_else(|| name.as_ref().and_then(|n| n.python.clone())),
            ctranslate2: self
                .ctranslate2
                .or_else(|| name.as_ref().map(|n| n.public_version.clone())),
            cuda_arch: self.cuda_arch,
            ..PlanRequest::only(variant)
        };
        let plan = request.plan(workspace, reporter)?;
        if let Some(name) = &name {
            name.check_fits(
                ct2v_pipeline::release::wheel_index::PROJECT,
                plan.platform,
                &plan.python,
            )?;
        }
        Ok(CheckTarget {
            plan,
            wheel: self.wheel,
        })
    }
}
