//! One file per command: each `run` calls the library and prints. `main.rs` only parses and
//! maps errors to exit codes.

use std::process::ExitCode;

use anyhow::Result;

use crate::cli::{CheckSelection, Cli, Command, DownloadArgs, Selection, SpeechArgs};
use ct2v_fetch::download;
use ct2v_pipeline::build::fetch;
use ct2v_pipeline::variant::{Catalog, Choices};
use ct2v_support::diagnostic::InputError;
use ct2v_support::host;
use ct2v_support::platform::Platform;
use ct2v_support::workspace::Workspace;

// stdout through these, so that a closed pipe (`| head -n1`) becomes an error that `main`
// turns into a quiet exit 0 instead of std's panic. Defined before the modules below, so
// that they see them.
macro_rules! println {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)?
    }};
}
macro_rules! print {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($arg)*)?
    }};
}

mod bench;
mod build;
mod bump;
mod bundle;
mod doctor;
mod fetch_cmd;
mod install_sdk;
mod matrix;
mod pages;
mod patch;
mod pin;
mod plan;
mod release;
mod smoke;
mod upstream;
mod variants;
mod verify;
mod verify_release;

/// Runs one parsed command line.
///
/// Long only because its `match` is the table of commands, one arm each handing the parsed
/// flags to that command's `run` (as rust-analyzer's xtask `main` does): splitting the table
/// would hide which command runs what.
pub fn run(cli: Cli) -> Result<ExitCode> {
    if let Some(dir) = &cli.cache_dir
        && dir.exists()
        && !dir.is_dir()
    {
        return Err(
            InputError::new(format!("--cache-dir {} is not a folder", dir.display()))
                .note("give a folder (it is created when missing)")
                .into(),
        );
    }
    let workspace = Workspace::locate(cli.root, cli.cache_dir)?;
    let workspace = &workspace;
    match cli.command {
        Command::Variants { json, markdown } => variants::run(workspace, json, markdown),
        Command::Plan { selection, json } => plan::run(workspace, &selection, json),
        Command::Build {
            selection,
            dry_run,
            json,
            download,
            part,
        } => build::run(workspace, selection, dry_run, json, download, part),
        Command::Fetch {
            selection,
            download,
            no_wheels,
        } => fetch_cmd::run(workspace, selection, download, no_wheels),
        Command::Pages {
            release,
            tag,
            earlier,
            download_base,
            site_url,
            out,
        } => pages::run(
            &release,
            &tag,
            earlier.as_deref(),
            &download_base,
            site_url.as_deref(),
            &out,
        ),
        Command::InstallSdk {
            selection,
            download,
            force,
            installer_timeout,
        } => install_sdk::run(workspace, &selection, &download, force, installer_timeout),
        Command::Pin {
            variant,
            ctranslate2,
            download,
        } => pin::run(workspace, &variant, ctranslate2.as_deref(), &download),
        Command::Doctor {
            json,
            variant: None,
            ..
        } => doctor::run(workspace, json),
        Command::Doctor {
            variant: Some(variant),
            platform,
            python,
            ctranslate2,
            sdk_dir,
            prebuilt_native,
            ..
        } => doctor::run_for_build(
            workspace,
            prebuilt_native,
            &Selection {
                variant,
                platform,
                python,
                ctranslate2,
                cuda_arch: None,
                gpu_targets: None,
                sdk_dir,
                compiler_cache: crate::cli::CompilerCacheArg::Auto,
            },
        ),
        Command::Patch(args) => patch::run(workspace, args),
        Command::Verify {
            selection,
            numerics,
            transcribe,
            speech,
        } => verify::run(workspace, &selection, numerics, transcribe, &speech),
        Command::Smoke {
            selection,
            frozen,
            allow_outside,
            speech,
        } => smoke::run(workspace, &selection, frozen, &allow_outside, &speech),
        Command::Bench(args) => bench::run(workspace, args),
        Command::Bundle(args) => bundle::run(workspace, &args),
        Command::Release(args) => release::run(workspace, args),
        Command::VerifyRelease { dir, install } => verify_release::run(workspace, &dir, &install),
        Command::Bump {
            ctranslate2,
            from,
            source,
            from_tag,
            repo,
            subdir,
            no_pin,
            download,
        } => {
            let request = ct2v_upkeep::bump::BumpRequest {
                version: ctranslate2,
                from,
                source,
                subdir,
                from_tag: from_tag.map(|tag| ct2v_upkeep::bump::FromTag { repo, tag }),
            };
            bump::run(workspace, &request, no_pin, &download)
        }
        Command::Upstream {
            check,
            ctranslate2,
            json,
            download,
        } => upstream::run(workspace, check, ctranslate2.as_deref(), json, &download),
        Command::Matrix {
            json,
            native,
            ctranslate2,
            lane,
            include,
        } => matrix::run(
            workspace,
            json,
            native,
            &ctranslate2,
            lane.as_deref(),
            include.opt(),
        ),
    }
}

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

/// What the speech options ask for.
pub fn speech_request(args: &SpeechArgs) -> ct2v_proof::speech::SpeechRequest {
    ct2v_proof::speech::SpeechRequest {
        model: args.model.clone(),
        audio: args.audio.clone(),
        reference: args.reference.clone(),
        device: args.device.clone(),
        compute_type: args.compute_type.clone(),
        threads: args.threads,
        download: args.download.options(),
    }
}

pub fn make_plan(
    workspace: &Workspace,
    selection: &Selection,
) -> Result<ct2v_pipeline::plan::Plan> {
    let catalog = Catalog::load_for(
        &workspace.root,
        &[selection.variant.as_str()],
        selection.ctranslate2.as_deref(),
    )?;
    let choices = Choices {
        platform: selection.platform.map(Platform::from),
        host_glibc: host::glibc_version(),
        host_python: if selection.python.is_none() {
            host::python_version()
        } else {
            None
        },
        python: selection.python.clone(),
        cuda_arch: selection.cuda_arch.clone(),
        gpu_targets: selection.gpu_targets.clone(),
        target_family: std::env::var("ROCM_SDK_TARGET_FAMILY")
            .ok()
            .filter(|f| !f.trim().is_empty()),
        compiler_cache: selection.compiler_cache.program(),
        sdk_dir: selection.sdk_dir.clone(),
    };
    let resolved = catalog.resolve(&selection.variant, &choices)?;
    Ok(ct2v_pipeline::plan::plan(workspace, &resolved))
}

/// With `--allow-unpinned`, downloads the plan's unpinned inputs, records their sha256 and
/// size in the variant files (as `pin` does) and plans again; otherwise the plan as it is.
pub fn pin_if_allowed(
    workspace: &Workspace,
    selection: &Selection,
    plan: ct2v_pipeline::plan::Plan,
    download: &DownloadArgs,
) -> Result<ct2v_pipeline::plan::Plan> {
    let unpinned = plan.inputs.iter().filter(|i| i.sha256.is_none()).count();
    if unpinned == 0 || !download.allow_unpinned {
        return Ok(plan);
    }
    eprintln!(
        "warning: --allow-unpinned: pinning {unpinned} input(s) of `{}` from what the network serves now; review and commit the variant file",
        plan.variant
    );
    let (outcomes, unpinned_plan) =
        ct2v_upkeep::pin_inputs::pin_unpinned(workspace, plan, &download.options())?;
    let mut errors = Vec::new();
    for outcome in outcomes {
        match outcome.result {
            Ok(_) => eprintln!("pinned {} ({})", outcome.name, outcome.url),
            Err(e) => {
                let hints = fetch::package_hints(&unpinned_plan, &[outcome.name.as_str()]);
                errors.push(format!("{}{hints}", download::describe(e.as_ref())));
            }
        }
    }
    if !errors.is_empty() {
        anyhow::bail!("{}\nnothing was built", errors.join("\n"));
    }
    make_plan(workspace, selection)
}

pub fn print_plan(plan: &ct2v_pipeline::plan::Plan, json: bool) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(plan)?);
    } else {
        print!("{}", ct2v_pipeline::plan::render_text(plan));
    }
    Ok(())
}
