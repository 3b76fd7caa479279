//! Runs the transcriber (`crates/proof/python/transcribe.py` under a venv's Python, or the frozen
//! app built from it) and reads its report. Its output goes to the reporter and the log; exit
//! 2 from it is bad input (the model, the audio or the device), named in its last line.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::outcome::Outcome;
use ct2v_support::diagnostic::InputError;
use ct2v_support::report::Reporter;

pub(crate) const SCRIPT: &str = "crates/proof/python/transcribe.py";

/// What to transcribe and how.
#[derive(Debug, Clone)]
pub struct Job {
    pub model: PathBuf,
    pub audio: PathBuf,
    pub device: String,
    pub compute_type: String,
    pub(crate) language: String,
    pub threads: usize,
}

impl Job {
    pub fn args(&self, report: &Path) -> Vec<String> {
        let path = |p: &Path| p.display().to_string();
        vec![
            "--model".into(),
            path(&self.model),
            "--audio".into(),
            path(&self.audio),
            "--device".into(),
            self.device.clone(),
            "--compute-type".into(),
            self.compute_type.clone(),
            "--language".into(),
            self.language.clone(),
            "--threads".into(),
            self.threads.to_string(),
            "--json".into(),
            path(report),
        ]
    }
}

/// How the transcriber is started: `program` with `leading` arguments before the job's, in
/// `cwd`, with exactly `env` when it is given (else this process's environment).
pub(crate) struct Launch<'a> {
    pub program: &'a Path,
    pub(crate) leading: Vec<String>,
    pub cwd: Option<&'a Path>,
    pub env: Option<&'a BTreeMap<String, String>>,
}

/// The transcriber run as `launch` says, its output in `log` and its stdout said through
/// `reporter` as the command's own; its report read.
pub(crate) fn run(
    launch: &Launch,
    job: &Job,
    report: &Path,
    log: &Path,
    reporter: &Reporter,
) -> Result<Outcome> {
    let _ = std::fs::remove_file(report);
    let mut command = std::process::Command::new(launch.program);
    command.args(&launch.leading).args(job.args(report));
    if let Some(cwd) = launch.cwd {
        command.current_dir(cwd);
    }
    if let Some(env) = launch.env {
        command.env_clear().envs(env);
    }
    let output = command
        .output()
        .with_context(|| format!("cannot start {}", launch.program.display()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let mut file = ct2v_support::regular_file::open(log, ct2v_support::regular_file::Mode::Append)
        .with_context(|| format!("cannot write {}", log.display()))?;
    writeln!(
        file,
        "$ {} {}",
        launch.program.display(),
        launch.leading.join(" ")
    )?;
    file.write_all(output.stdout.as_slice())?;
    file.write_all(output.stderr.as_slice())?;
    // A closed stdout only loses the echo; the log keeps it.
    let _ = reporter.out(&stdout);
    let last = stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim_start_matches("error: ")
        .to_string();
    match output.status.code() {
        Some(0) => {}
        Some(2) => return Err(InputError::new(last).into()),
        _ => {
            let tail: Vec<&str> = stderr.lines().rev().take(15).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            anyhow::bail!(
                "the transcriber failed ({}):\n{}\n(log: {})",
                output.status,
                tail.join("\n"),
                log.display()
            );
        }
    }
    let text = std::fs::read_to_string(report)
        .with_context(|| format!("the transcriber wrote no report at {}", report.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not a report", report.display()))
}
