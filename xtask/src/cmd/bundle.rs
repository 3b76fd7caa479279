//! `bundle`: the SDK libraries a wheel's binaries load: fat wheel, portable folder, report.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use super::make_plan;
use crate::build::bundle_spec;
use crate::bundle::run as bundle_run;
use crate::bundle::spec::{BundleSpec, WheelFlags};
use crate::bundle::{Output, Policy};
use crate::cli::{BundleArgs, OutputArg, PolicyArg, Selection};
use crate::plan;
use crate::workspace::Workspace;

pub fn run(workspace: &Workspace, args: &BundleArgs) -> Result<ExitCode> {
    let mut spec = match &args.variant {
        Some(variant) => {
            let selection = Selection {
                platform: args.platform,
                python: args.python.clone(),
                ctranslate2: args.ctranslate2.clone(),
                gpu_targets: args.gpu_targets.clone(),
                sdk_dir: args.sdk_dir.clone(),
                ..Selection::only(variant.clone())
            };
            let plan = make_plan(workspace, &selection)?;
            let spec_wheel = plan_wheel(&plan);
            if let Some(wheel) = spec_wheel.filter(|w| !w.is_file()) {
                anyhow::bail!(
                    "the wheel to bundle for, {}, is not there yet: build it first \
                     (`cargo xtask build --variant {variant}`), or bundle another wheel with --wheel",
                    wheel.display()
                );
            }
            // The SDK's version matters where the bundle declares what the run-time needs
            // by its major ([bundle.requires-dist]): read from the --sdk-dir given.
            let sdk_version = match (&plan.sdk, &args.sdk_dir) {
                (Some(sdk), Some(dir)) => {
                    Some(crate::sdk::find(sdk, plan.platform, &[], Some(dir))?.version)
                        .filter(|v| !v.is_empty())
                }
                _ => None,
            };
            let found = bundle_spec::Folders {
                sdk_root: args.sdk_dir.clone(),
                toolchain: args.toolchain_dir.clone(),
                sdk_version,
            };
            bundle_spec::from_plan(&plan, &found)?
        }
        None => BundleSpec::from_flags(&wheel_flags(args))?,
    };
    spec.assume_present
        .extend(args.assume_present.iter().cloned());
    if let Some(out) = &args.out {
        spec.set_out(out)?;
    }
    let bundled = bundle_run::run(&spec)?;
    print!("{}", bundled.report.summary());
    for artifact in &bundled.artifacts {
        let path = crate::paths::join_slashed(&spec.out, artifact);
        println!("wrote {}", crate::paths::shown(&path));
    }
    Ok(ExitCode::SUCCESS)
}

/// The wheel a plan's bundle step starts from.
fn plan_wheel(plan: &plan::Plan) -> Option<PathBuf> {
    plan.bundle_action().map(|b| PathBuf::from(&b.wheel))
}

/// The flags of `bundle --wheel`, for the library to check.
fn wheel_flags(args: &BundleArgs) -> WheelFlags {
    WheelFlags {
        wheel: args
            .wheel
            .clone()
            .expect("clap requires --wheel without --variant"),
        policy: args.policy.map(|p| match p {
            PolicyArg::Windows => Policy::Windows,
            PolicyArg::Manylinux2_28 => Policy::Manylinux2_28,
        }),
        roots: args.roots.clone(),
        force: args.force.clone(),
        search: args.search.clone(),
        data: args.data.clone(),
        gpu_targets: args.gpu_targets.clone(),
        outputs: args
            .outputs
            .iter()
            .map(|o| match o {
                OutputArg::FatWheel => Output::FatWheel,
                OutputArg::Portable => Output::Portable,
                OutputArg::Report => Output::Report,
            })
            .collect(),
        out: args.out.clone().expect("clap requires --out with --wheel"),
        keep_linux_tag: args.keep_linux_tag,
    }
}
