//! `bench`: CPU speed of the built wheel against the official wheel of the same CTranslate2
//! version, in one run, alternating (crates/proof/python/bench.py does the timing). The built wheel
//! runs from the verify step's venv; the official one from a venv of its own, installed from
//! the wheelhouse that `fetch` fills (so `--offline` works from a copied cache).

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::numerics::run_shown;
use crate::plan_outputs::verify_job;
use ct2v_pipeline::plan::request::PlanRequest;
use ct2v_pipeline::plan::{CommandLine, Plan};
use ct2v_support::diagnostic::InputError;
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

const SCRIPT: &str = "crates/proof/python/bench.py";
const SIZES: [&str; 4] = ["tiny", "base", "small", "medium"];

/// What `bench` times, and how often.
pub struct Options {
    pub size: String,
    pub threads: usize,
    pub rounds: u32,
    pub repeat: u32,
    pub tokens: u32,
    pub compute_types: Vec<String>,
    /// `KEY=VALUE` set for both sides (e.g. CT2_USE_MKL=0).
    pub env: Vec<String>,
    pub offline: bool,
    pub json: Option<PathBuf>,
}

impl Options {
    /// `bench` of the build `request` plans, as the command runs it: its log in the variant's
    /// log folder (started empty), the scripts' output echoed, the report's path said at the
    /// end.
    pub fn run(
        &self,
        workspace: &Workspace,
        request: &PlanRequest,
        reporter: &Reporter,
    ) -> Result<()> {
        let plan = &request.plan(workspace, reporter)?;
        let log_dir = workspace.log_dir(&plan.slot, plan.platform);
        std::fs::create_dir_all(&log_dir)?;
        let log = log_dir.join("bench.log");
        ct2v_support::fsx::write(&log, "")?;
        let json = compare(workspace, plan, self, &log, reporter)?;
        reporter.say(format_args!(
            "report: {} (log: {})",
            json.display(),
            log.display()
        ));
        Ok(())
    }

    /// A size bench.py knows, and every `--env` a `KEY=VALUE`.
    fn check(&self) -> Result<(), InputError> {
        if !SIZES.contains(&self.size.as_str()) {
            return Err(InputError::new(format!(
                "unknown model size `{}`: one of {}",
                self.size,
                SIZES.join(", ")
            )));
        }
        if let Some(bad) = self.env.iter().find(|e| !e.contains('=')) {
            return Err(InputError::new(format!("--env `{bad}` is not KEY=VALUE")));
        }
        Ok(())
    }
}

/// Runs the comparison; returns the JSON report's path.
fn compare(
    workspace: &Workspace,
    plan: &Plan,
    options: &Options,
    log: &Path,
    reporter: &Reporter,
) -> Result<PathBuf> {
    options.check()?;
    let job = verify_job(plan)?;
    let python = job.python.clone();
    if !Path::new(&python).is_file() {
        return Err(InputError::new(format!(
            "{python} is not there: build the wheel first with `cargo xtask build --variant {}`",
            plan.variant
        ))
        .into());
    }
    let dir = workspace.xtask_dir().join("bench").join(format!(
        "{}-{}-py{}",
        plan.variant, plan.platform, plan.python
    ));
    let path = |p: &Path| p.display().to_string();
    let official_venv = dir.join("official");
    let official = path(
        &official_venv
            .join(plan.platform.venv_bin())
            .join(plan.platform.exe("python")),
    );
    let wheelhouse =
        ct2v_fetch::wheelhouse::dir(Path::new(&plan.cache_dir), plan.platform, &plan.python);
    let script = path(&Path::new(&plan.root).join(SCRIPT));
    let model = dir.join(format!("model-{}", options.size));
    let json = options
        .json
        .clone()
        .unwrap_or_else(|| dir.join(format!("bench-{}.json", options.size)));

    let run = |command: CommandLine| run_shown(&command, log, reporter);
    run(job.venv_at(&path(&official_venv)))?;
    let mut install = CommandLine::new(&official).args(["-m", "pip", "install", "-q"]);
    if wheelhouse.is_dir() {
        install = install.args(["--find-links", &path(&wheelhouse)]);
    }
    if options.offline {
        install = install.arg("--no-index");
    }
    run(install.arg(format!("ctranslate2=={}", plan.ctranslate2)))?;
    if !model.join("model.bin").is_file() {
        run(CommandLine::new(&python).arg(&script).args([
            "make",
            "--size",
            &options.size,
            "--out",
            &path(&model),
        ]))?;
    }
    let mut bench = CommandLine::new(&python).arg(&script).args([
        "run",
        "--ours",
        &python,
        "--official",
        &official,
        "--model",
        &path(&model),
        "--size",
        &options.size,
        "--threads",
        &options.threads.to_string(),
        "--rounds",
        &options.rounds.to_string(),
        "--repeat",
        &options.repeat.to_string(),
        "--tokens",
        &options.tokens.to_string(),
        "--json",
        &path(&json),
        "--compute-types",
    ]);
    bench = bench.args(options.compute_types.iter().cloned());
    for e in &options.env {
        bench = bench.args(["--env", e]);
    }
    run(bench)?;
    Ok(json)
}
