//! The command line. Each subcommand is a few lines that call into the library.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, Parser, Subcommand};

use xtask::diagnostic::InputError;
use xtask::platform::Platform;
use xtask::variant::{Catalog, Choices};
use xtask::workspace::Workspace;
use xtask::{host, matrix, plan};

#[derive(Parser)]
#[command(
    name = "cargo xtask",
    bin_name = "cargo xtask",
    about = "Build, bundle and release every variant of CTranslate2",
    long_about = "Build, bundle and release every variant of CTranslate2 (cpu, cuda, rocm, \
                  rocm-gfx1010). Variants are described by variants/*.toml; `plan` shows what \
                  a build will do, step by step, before anything runs.",
    after_help = "Examples:\n  cargo xtask variants\n  cargo xtask plan --variant rocm-gfx1010 --platform windows-x86_64\n  cargo xtask build --variant cpu\n\nExit codes: 0 success, 1 failure, 2 bad input (a variant file, a flag)."
)]
struct Cli {
    /// The ct2-variants checkout (default: found from the current folder)
    #[arg(long, global = true, value_name = "DIR")]
    root: Option<PathBuf>,
    /// The download cache (default: target/xtask/cache, or $CT2V_CACHE_DIR)
    #[arg(long, global = true, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the variants with a one-line description each
    #[command(after_help = "Example:\n  cargo xtask variants")]
    Variants {
        /// Print JSON instead of text
        #[arg(long)]
        json: bool,
    },
    /// Show the ordered steps a build of one variant will run, without running them
    #[command(
        after_help = "Examples:\n  cargo xtask plan --variant cpu\n  cargo xtask plan --variant rocm --platform windows-x86_64 --json\n\n\
                            The JSON form is documented in docs/plan-json.md (schema_version 1)."
    )]
    Plan {
        #[command(flatten)]
        selection: Selection,
        /// Print the plan as JSON (stable; see docs/plan-json.md)
        #[arg(long)]
        json: bool,
    },
    /// Build one variant end to end (fetch, unpack, patch, compile, wheel, bundle, verify)
    #[command(
        after_help = "Examples:\n  cargo xtask build --variant cpu\n  cargo xtask build --variant cuda --cuda-arch 9.0 --dry-run"
    )]
    Build {
        #[command(flatten)]
        selection: Selection,
        /// Print the plan and stop
        #[arg(long)]
        dry_run: bool,
        /// With --dry-run: print the plan as JSON
        #[arg(long, requires = "dry_run")]
        json: bool,
    },
    /// Print the GitHub Actions matrix (variant × platform × Python)
    #[command(
        after_help = "Example (in a workflow):\n  echo \"matrix=$(cargo xtask matrix --json)\" >> \"$GITHUB_OUTPUT\""
    )]
    Matrix {
        /// Print one line of JSON (for `fromJSON`) instead of a table
        #[arg(long)]
        json: bool,
    },
}

/// Which build: the variant, and the choices that select one entry of its matrix.
#[derive(Args)]
struct Selection {
    /// The variant: a file variants/<name>.toml (see `cargo xtask variants`)
    #[arg(long, value_name = "NAME")]
    variant: String,
    /// The platform to build for (default: this host)
    #[arg(long, value_name = "PLATFORM")]
    platform: Option<PlatformArg>,
    /// The Python version (default: the host's python3 if the variant builds for it)
    #[arg(long, value_name = "X.Y")]
    python: Option<String>,
    /// CUDA architectures for CUDA_ARCH_LIST, e.g. "9.0" for a quick H100-only build
    #[arg(long, value_name = "LIST")]
    cuda_arch: Option<String>,
    /// GPU targets for HIP builds and kernel data, e.g. gfx1100,gfx1101
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    gpu_targets: Option<Vec<String>>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum PlatformArg {
    #[value(name = "linux-x86_64")]
    Linux,
    #[value(name = "windows-x86_64")]
    Windows,
}

impl From<PlatformArg> for Platform {
    fn from(p: PlatformArg) -> Platform {
        match p {
            PlatformArg::Linux => Platform::LinuxX86_64,
            PlatformArg::Windows => Platform::WindowsX86_64,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(err) => match err.downcast_ref::<InputError>() {
            Some(input) => {
                eprint!("error: {input}");
                ExitCode::from(2)
            }
            None => {
                eprintln!("error: {err:#}");
                ExitCode::from(1)
            }
        },
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    let workspace = Workspace::locate(cli.root, cli.cache_dir)?;
    match cli.command {
        Command::Variants { json } => variants(&workspace, json),
        Command::Plan { selection, json } => {
            print_plan(&make_plan(&workspace, &selection)?, json)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Build {
            selection,
            dry_run,
            json,
        } => {
            let plan = make_plan(&workspace, &selection)?;
            if dry_run {
                print_plan(&plan, json)?;
                return Ok(ExitCode::SUCCESS);
            }
            eprintln!(
                "error: `build` cannot run steps yet: the executor (fetch, unpack, patch, \
                 configure, build, install, wheel, bundle, verify, checksum) is not implemented.\n\
                 Nothing was built. `cargo xtask build --variant {} --dry-run` shows the {} steps it will run.",
                plan.variant,
                plan.steps.len()
            );
            Ok(ExitCode::FAILURE)
        }
        Command::Matrix { json } => {
            let catalog = Catalog::load(&workspace.root, &[])?;
            let matrix = matrix::matrix(&catalog)?;
            if json {
                println!("{}", serde_json::to_string(&matrix)?);
            } else {
                for entry in &matrix.include {
                    println!(
                        "{:<14} {:<16} py{:<6} {}",
                        entry.variant, entry.platform, entry.python, entry.runs_on
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn variants(workspace: &Workspace, json: bool) -> Result<ExitCode> {
    let catalog = Catalog::load(&workspace.root, &[])?;
    let rows: Vec<(&str, &str)> = catalog
        .variant_names()
        .map(|n| (n, catalog.description(n)))
        .collect();
    if json {
        let list: Vec<_> = rows
            .iter()
            .map(
                |(name, description)| serde_json::json!({"name": name, "description": description}),
            )
            .collect();
        println!("{}", serde_json::to_string_pretty(&list)?);
    } else {
        let width = rows.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
        for (name, description) in rows {
            println!("{name:<width$}  {description}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn make_plan(workspace: &Workspace, selection: &Selection) -> Result<plan::Plan> {
    let catalog = Catalog::load(&workspace.root, &[selection.variant.as_str()])?;
    let choices = Choices {
        platform: selection.platform.map(Platform::from),
        host_python: if selection.python.is_none() {
            host::python_version()
        } else {
            None
        },
        python: selection.python.clone(),
        cuda_arch: selection.cuda_arch.clone(),
        gpu_targets: selection.gpu_targets.clone(),
    };
    let resolved = catalog.resolve(&selection.variant, &choices)?;
    Ok(plan::plan(workspace, &resolved))
}

fn print_plan(plan: &plan::Plan, json: bool) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(plan)?);
    } else {
        print!("{}", plan::render_text(plan));
    }
    Ok(())
}
