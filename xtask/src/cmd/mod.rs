//! One file per command: its flags (clap) and a `run` that makes one call into the crates,
//! which do the work and print. The checks (verify, smoke, bench, verify-release) still
//! orchestrate here, through `check_target`.

use anyhow::Result;

use crate::flags::{CheckSelection, Selection};
use ct2v_support::diagnostic::InputError;
use ct2v_support::workspace::Workspace;

pub mod bench;
pub mod build;
pub mod bump;
pub mod bundle;
pub mod doctor;
pub mod fetch;
pub mod install_sdk;
pub mod matrix;
pub mod pages;
pub mod patch;
pub mod pin;
pub mod plan;
pub mod release;
pub mod smoke;
pub mod upstream;
pub mod variants;
pub mod verify;
pub mod verify_release;

/// What a check (`verify`, `smoke`) looks at: the plan of the build the wheel belongs to, and
/// `--wheel`'s file when one is given (else the build's own wheel).
pub struct CheckTarget {
    pub plan: ct2v_pipeline::plan::Plan,
    pub wheel: Option<std::path::PathBuf>,
}

/// `--wheel` fills what it can say (platform, Python, CTranslate2 version, and the variant by
/// its local version); a wheel that does not fit what was asked is bad input.
pub fn check_target(workspace: &Workspace, args: &CheckSelection) -> Result<CheckTarget> {
    let name = match &args.wheel {
        Some(wheel) if !wheel.is_file() => {
            return Err(
                InputError::new(format!("--wheel {}: no such file", wheel.display()))
                    .note("give a ctranslate2 wheel (.whl)")
                    .into(),
            );
        }
        Some(wheel) => Some(ct2v_fetch::wheel_name::WheelName::parse(wheel)?),
        None => None,
    };
    let variant = match (&args.variant, &name) {
        (Some(v), _) => v.clone(),
        (None, Some(name)) => {
            ct2v_pipeline::variant::wheel_variant::variant_for(&workspace.root, name)?
        }
        (None, None) => unreachable!("clap requires --variant without --wheel"),
    };
    let selection = Selection {
        platform: args
            .platform
            .or_else(|| name.as_ref().and_then(|n| n.platform).map(Into::into)),
        python: args
            .python
            .clone()
            .or_else(|| name.as_ref().and_then(|n| n.python.clone())),
        ctranslate2: args
            .ctranslate2
            .clone()
            .or_else(|| name.as_ref().map(|n| n.public_version.clone())),
        cuda_arch: args.cuda_arch.clone(),
        ..Selection::only(variant)
    };
    let plan = make_plan(workspace, &selection)?;
    if let Some(name) = &name {
        name.check_fits(plan.platform, &plan.python)?;
    }
    Ok(CheckTarget {
        plan,
        wheel: args.wheel.clone(),
    })
}

pub fn make_plan(
    workspace: &Workspace,
    selection: &Selection,
) -> Result<ct2v_pipeline::plan::Plan> {
    selection.request().plan(workspace)
}

