//! Whether this machine has what one build needs, checked before the build starts (CI's first
//! step after its installs, so that a job fails on a missing MSVC, CUDA or pin in seconds,
//! naming it, instead of an hour in; `doctor --variant`). The same checks the build makes
//! when it reaches each step: the C++ compiler, the Python of the venv steps, the MSVC x64
//! environment (Windows source builds), the SDK (and a CUDA that cannot compile with this
//! MSVC), every input pinned.

use super::bundle_job::Folders;
use super::sdk_env::SdkEnv;
use super::toolchain::{check_compiler, check_python};
use crate::plan::{Action, Plan};
use ct2v_support::platform::Platform;
use ct2v_support::report::Reporter;

/// What is missing, one line each (empty: ready).
/// With `prebuilt_native` (the C++ library compiled by another run) the SDK is needed only
/// where the bundle copies from it: its version comes from the library's record.
pub(crate) fn problems(
    plan: &Plan,
    sdk_dir: Option<std::path::PathBuf>,
    prebuilt_native: bool,
    reporter: &Reporter,
) -> Vec<String> {
    let mut problems = Vec::new();
    let mut say = |r: anyhow::Result<()>| {
        if let Err(e) = r {
            problems.push(format!("{e:#}"));
        }
    };
    let compiles = plan.steps.iter().any(|s| s.action.compiles());
    let pins = unpinned(plan);
    if Platform::host() != Some(plan.platform) {
        say(Err(anyhow::anyhow!(
            "a {} build runs on a {} machine, not here",
            plan.platform,
            plan.platform
        )));
        problems.extend(pins);
        return problems;
    }
    // The Python is asked beside the MSVC and SDK checks (each may wait for a probe's whole
    // timeout); what each finds is said in this order all the same.
    std::thread::scope(|scope| {
        let python = scope.spawn(|| {
            plan.step(|a| matches!(a, Action::Venv { .. } | Action::Verify(_)))
                .map(|_| check_python(plan, "the build (its venv steps)"))
        });
        let toolchain = toolchain_problems(plan, sdk_dir, prebuilt_native, reporter);
        if compiles {
            say(check_compiler(plan));
        }
        if let Some(checked) = python
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        {
            say(checked);
        }
        toolchain.into_iter().for_each(|e| say(Err(e)));
    });
    problems.extend(pins);
    problems
}

/// What the MSVC and SDK checks find missing.
fn toolchain_problems(
    plan: &Plan,
    sdk_dir: Option<std::path::PathBuf>,
    prebuilt_native: bool,
    reporter: &Reporter,
) -> Vec<anyhow::Error> {
    let mut problems = Vec::new();
    let mut say = |r: anyhow::Result<()>| {
        if let Err(e) = r {
            problems.push(e);
        }
    };
    let mut banner = None;
    if plan.msvc.is_some() && Platform::host() == Some(plan.platform) {
        match crate::sdk::msvc::find() {
            Ok(toolchain) => banner = Some(crate::sdk::msvc::banner(&toolchain)),
            Err(e) => say(Err(e)),
        }
    }
    let needs_sdk = !prebuilt_native
        || plan
            .bundle_job()
            .is_some_and(crate::plan::unfilled::takes_from_sdk);
    if plan.sdk.is_some() && needs_sdk {
        let mut folders = Folders {
            sdk_root: sdk_dir,
            ..Folders::default()
        };
        match SdkEnv::default().find(plan, &mut folders, reporter) {
            Ok(Some(found)) => {
                if let Some(problem) = banner
                    .as_deref()
                    .and_then(|b| crate::sdk::cuda_msvc::problem(&found.version, b))
                    .filter(|_| {
                        matches!(
                            plan.sdk.as_ref().map(|s| s.kind),
                            Some(crate::variant::SdkKind::Cuda)
                        )
                    })
                {
                    say(Err(anyhow::anyhow!(problem)));
                }
            }
            Ok(None) => {}
            Err(e) => say(Err(e)),
        }
    }
    problems
}

fn unpinned(plan: &Plan) -> Vec<String> {
    plan.inputs
        .iter()
        .filter(|i| i.sha256.is_none())
        .map(|input| {
            format!(
                "input `{}` is not pinned ({}): `cargo xtask pin --variant {}` where it can be reached",
                input.name, input.url, plan.variant
            )
        })
        .collect()
}
