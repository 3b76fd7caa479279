//! `bundle`: the SDK libraries a wheel's binaries load: fat wheel, portable folder, report.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use super::make_plan;
use crate::build::bundle_spec;
use crate::bundle::run as bundle_run;
use crate::cli::{BundleArgs, OutputArg, PolicyArg, Selection};
use crate::diagnostic::InputError;
use crate::variant::{Output, Policy};
use crate::workspace::Workspace;
use crate::{plan, safe_path};

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
        None => wheel_spec(args)?,
    };
    spec.assume_present
        .extend(args.assume_present.iter().cloned());
    if let Some(out) = &args.out {
        bundle_run::check_out(out)?;
        spec.out = out.clone();
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

/// A DEST given in a flag: relative, inside the wheel (see `safe_path`).
fn flag_path(flag: &str, given: &str, dest: &str) -> Result<(), InputError> {
    safe_path::check_relative(dest).map_err(|why| {
        InputError::new(format!(
            "{flag} `{given}`: DEST `{}` is not allowed: {why}",
            dest.escape_debug()
        ))
        .note("DEST is a folder inside the wheel, e.g. ctranslate2")
    })
}

/// The spec of `bundle --wheel`: everything from flags.
fn wheel_spec(args: &BundleArgs) -> Result<bundle_run::BundleSpec> {
    let wheel = args
        .wheel
        .clone()
        .expect("clap requires --wheel without --variant");
    if !wheel.is_file() {
        return Err(InputError::new(format!("--wheel {} does not exist", wheel.display())).into());
    }
    let name = wheel
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let policy = match args.policy {
        Some(PolicyArg::Windows) => Policy::Windows,
        Some(PolicyArg::Manylinux2_28) => Policy::Manylinux2_28,
        None if name.contains("win_amd64") || name.contains("win32") => Policy::Windows,
        None if name.contains("linux") => Policy::Manylinux2_28,
        None => anyhow::bail!(
            "cannot tell the platform of {name} from its tags: pass --policy windows or --policy manylinux_2_28"
        ),
    };
    let default_dest = args
        .roots
        .first()
        .and_then(|r| r.rsplit_once('/'))
        .map(|(dir, _)| dir.to_string());
    let mut search = Vec::new();
    for s in &args.search {
        let (dir, dest) = match s.rsplit_once('=') {
            Some((dir, dest)) => (dir, Some(dest.to_string())),
            None => (s.as_str(), None),
        };
        let dir = PathBuf::from(dir);
        if !dir.is_dir() {
            let why = if dir.as_os_str().is_empty() {
                "names no folder (DIR=DEST)".to_string()
            } else if dir.exists() {
                "is not a folder".to_string()
            } else {
                format!("does not exist{}", crate::fsx::folders_beside_note(&dir))
            };
            return Err(
                InputError::new(format!("--search `{s}`: `{}` {why}", dir.display()))
                    .note("--search takes a folder of libraries, e.g. --search sdk/bin=ctranslate2")
                    .into(),
            );
        }
        let dest = dest.or_else(|| default_dest.clone()).unwrap_or_default();
        flag_path("--search", s, &dest)?;
        // An unpacked package (a .dist-info above it) is an SDK whose size the report
        // compares with what was taken; a plain folder such as /usr/lib is not.
        let counts_as_sdk = bundle_run::package_of(&dir, 4).is_some();
        search.push(bundle_run::SearchFolder {
            dir: bundle_run::SearchDir::Dir(dir),
            dest,
            package: None,
            fallback_package: None,
            counts_as_sdk,
        });
    }
    let mut data = Vec::new();
    for d in &args.data {
        let Some((glob, dest)) = d.rsplit_once('=') else {
            return Err(
                InputError::new(format!("--data `{d}` is not DIR/PATTERN=DEST"))
                    .note("e.g. --data 'sdk/bin/rocblas/library/*=ctranslate2/rocblas/library'")
                    .into(),
            );
        };
        flag_path("--data", d, dest)?;
        let (dir, pattern) = glob.rsplit_once('/').unwrap_or((".", glob));
        data.push(bundle_run::DataGlob {
            base: PathBuf::from(dir),
            glob: pattern.to_string(),
            dest: dest.to_string(),
            filter_gpu_targets: args.gpu_targets.is_some(),
            package: None,
        });
    }
    let outputs = if args.outputs.is_empty() {
        vec![Output::FatWheel, Output::Portable, Output::Report]
    } else {
        args.outputs
            .iter()
            .map(|o| match o {
                OutputArg::FatWheel => Output::FatWheel,
                OutputArg::Portable => Output::Portable,
                OutputArg::Report => Output::Report,
            })
            .collect()
    };
    Ok(bundle_run::BundleSpec {
        wheel,
        policy,
        manylinux: crate::bundle::manylinux::target(policy).map(str::to_string),
        // A wheel given by hand has no plan that fixed its name: when its binaries need a
        // newer glibc than the policy allows, it gets the tag they prove.
        manylinux_newer_ok: true,
        roots: {
            for root in &args.roots {
                crate::bundle::run::check_root(root)
                    .map_err(|e| InputError::new(format!("--binary: {e}")))?;
            }
            args.roots.clone()
        },
        force: args.force.clone(),
        assume_present: Vec::new(),
        search,
        data,
        gpu_targets: args.gpu_targets.clone().unwrap_or_default(),
        outputs,
        out: args.out.clone().expect("clap requires --out with --wheel"),
        patchelf: None,
        variant: name.split('-').next().unwrap_or("wheel").to_string(),
        platform: match policy {
            Policy::Windows => "windows".into(),
            Policy::Manylinux2_28 => "linux".into(),
        },
        missing_hint: String::new(),
        keep_linux_tag: args.keep_linux_tag,
        requires_dist: Vec::new(),
    })
}
