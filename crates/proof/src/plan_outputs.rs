//! The build's outputs a check reads (the wheel the verify step installs, the bundle's
//! `portable/` folder), all taken from the plan here.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use ct2v_bundle::bundler::run::{BINARIES_JSON, PORTABLE_DIR};
use ct2v_pipeline::plan::{Action, Plan, Step, VerifyJob};
use ct2v_support::diagnostic::{InputError, escaped};
use ct2v_support::report::Reporter;

/// The plan's verify step and its job (a fresh venv, the wheel installed, verify_wheel.py).
pub(crate) fn verify_step(plan: &Plan) -> Result<(&Step, &VerifyJob)> {
    plan.steps
        .iter()
        .find_map(|step| match &step.action {
            Action::Verify(job) => Some((step, job.as_ref())),
            _ => None,
        })
        .with_context(|| {
            format!(
                "the plan of {} for {} has no verify step: `verify`, `smoke` and `bench` install \
                 the wheel as that step does (plan it with `cargo xtask plan --variant {}`)",
                escaped(&plan.variant),
                plan.platform,
                escaped(&plan.variant)
            )
        })
}

/// The plan's verify job (whose venv `numerics`, `bench` and `smoke` build on).
pub(crate) fn verify_job(plan: &Plan) -> Result<&VerifyJob> {
    Ok(verify_step(plan)?.1)
}

/// The wheel the build leaves (the one the verify step installs).
pub(crate) fn built_wheel_path(plan: &Plan) -> String {
    plan.outputs.fat_wheel.clone()
}

/// `--wheel`, else the wheel the build left (which must be there).
pub(crate) fn wheel_to_check(plan: &Plan, given: Option<PathBuf>) -> Result<PathBuf> {
    if let Some(wheel) = given {
        return Ok(ct2v_support::paths::canonical(&wheel)?);
    }
    let built = built_wheel_path(plan);
    if !Path::new(&built).is_file() {
        bail!(
            "{built} is not there: build it first with `cargo xtask build --variant {} --platform \
             {} --python {}`, or check another wheel with --wheel FILE",
            plan.variant,
            plan.platform,
            plan.python
        );
    }
    Ok(PathBuf::from(built))
}

/// The wheel the build left, for `smoke` (which words its absence its own way).
pub(crate) fn built_wheel(plan: &Plan) -> Result<PathBuf> {
    let wheel = PathBuf::from(built_wheel_path(plan));
    if !wheel.is_file() {
        return Err(not_built(&wheel, plan));
    }
    Ok(wheel)
}

/// The build's portable/ folder, which must be there.
pub(crate) fn built_portable(plan: &Plan) -> Result<PathBuf> {
    let portable = portable_dir(plan)?;
    if !portable.join(BINARIES_JSON).is_file() {
        return Err(not_built(&portable, plan));
    }
    Ok(portable)
}

/// `smoke`'s words for an output the build has not left.
fn not_built(output: &Path, plan: &Plan) -> anyhow::Error {
    anyhow::anyhow!(
        "{} is not there: build the variant first with `cargo xtask build --variant {}`, or check \
         a wheel with --wheel FILE",
        output.display(),
        plan.variant
    )
}

/// portable/ laid out from a fat wheel, in `work`.
pub(crate) fn portable_of_wheel(
    plan: &Plan,
    wheel: &Path,
    work: &Path,
    reporter: &Reporter,
) -> Result<PathBuf> {
    portable_dir(plan)?;
    let folders = plan
        .bundle_job()
        .map(|b| b.destinations())
        .unwrap_or_default();
    std::fs::create_dir_all(work)?;
    ct2v_bundle::bundler::run::portable_of_fat_wheel(wheel, &folders, work, reporter)?;
    Ok(work.join(PORTABLE_DIR))
}

/// The bundle's portable folder for this build.
fn portable_dir(plan: &Plan) -> Result<PathBuf> {
    match &plan.outputs.portable {
        Some(portable) => Ok(PathBuf::from(portable)),
        None => Err(InputError::new(format!(
            "variant `{}` writes no portable/ folder",
            plan.variant
        ))
        .note("add \"portable\" to [bundle] outputs in its variant file")
        .into()),
    }
}
