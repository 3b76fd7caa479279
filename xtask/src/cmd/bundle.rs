//! `bundle`: the SDK libraries a wheel's binaries load: fat wheel, portable folder, report.

use std::process::ExitCode;

use anyhow::Result;

use super::make_plan;
use crate::cli::{BundleArgs, OutputArg, PolicyArg, Selection};
use ct2v_bundle::bundle::run as bundle_run;
use ct2v_bundle::bundle::spec::{BundleJob, WheelFlags};
use ct2v_bundle::bundle::{Output, Policy};
use ct2v_pipeline::build::bundle_job;
use ct2v_support::workspace::Workspace;

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
            bundle_job::from_built_plan(
                &plan,
                args.sdk_dir.as_deref(),
                args.toolchain_dir.as_deref(),
            )?
        }
        None => BundleJob::from_flags(&wheel_flags(args))?,
    };
    spec.assume_present
        .extend(args.assume_present.iter().cloned());
    if let Some(out) = &args.out {
        spec.set_out(out)?;
    }
    let bundled = bundle_run::run(&spec)?;
    print!("{}", bundled.report.summary());
    for artifact in &bundled.artifacts {
        let path = ct2v_support::paths::join_slashed(&spec.out, artifact);
        println!("wrote {}", ct2v_support::paths::shown(&path));
    }
    Ok(ExitCode::SUCCESS)
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
