//! The built wheel's numerics against the official wheel's (`verify --numerics`): a tiny
//! randomly initialised Whisper model (transformers, from a config, no downloads) converted
//! with the built wheel's converter, encoded by the built wheel and by the official wheel of
//! the same version from PyPI in another venv; the outputs must agree within a tolerance.
//! Needs network for PyPI (torch, transformers, ctranslate2).

use std::path::Path;

use anyhow::Result;

use crate::plan_outputs::verify_job;
use ct2v_pipeline::execute::executor::run_logged;
use ct2v_pipeline::plan::{CommandLine, Plan};
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

pub(crate) const SCRIPT: &str = "crates/proof/python/numerics.py";
/// Largest absolute difference accepted between the two encoder outputs (float32, CPU).
pub(crate) const TOLERANCE: &str = "1e-4";

/// Runs `command` with its output in `log` and on the command's stdout, less pip's "already
/// satisfied" lines and progress bars (shared with `bench`).
pub(crate) fn run_shown(command: &CommandLine, log: &Path, reporter: &Reporter) -> Result<()> {
    let mut show = |line: &str| {
        if !line.starts_with("Requirement already satisfied") && !line.contains('\r') {
            // A closed stdout only loses the echo; the log keeps every line.
            let _ = reporter.outln(line);
        }
    };
    run_logged(command, &Default::default(), log, &mut show)?;
    Ok(())
}

/// The built wheel's encoder output compared with the official wheel's (the scripts' output
/// echoed through `reporter`).
pub fn check(workspace: &Workspace, plan: &Plan, log: &Path, reporter: &Reporter) -> Result<()> {
    let job = verify_job(plan)?;
    let ours = job.python.clone();
    let dir = workspace.xtask_dir().join("numerics").join(format!(
        "{}-{}-py{}",
        plan.variant, plan.platform, plan.python
    ));
    let reference_venv = dir.join("reference");
    let reference = reference_venv
        .join(plan.platform.venv_bin())
        .join(plan.platform.exe("python"));
    let script = Path::new(&plan.root).join(SCRIPT).display().to_string();
    let path = |p: &Path| p.display().to_string();
    let model = dir.join("model");
    let (ours_out, reference_out) = (dir.join("built.npy"), dir.join("official.npy"));

    let run = |command: CommandLine| run_shown(&command, log, reporter);
    let python = |program: &str| CommandLine::new(program);
    run(python(&ours).args(["-m", "pip", "install", "-q", "torch", "transformers"]))?;
    run(job.venv_at(&path(&reference_venv)))?;
    run(python(&path(&reference)).args([
        "-m",
        "pip",
        "install",
        "-q",
        &format!("ctranslate2=={}", plan.ctranslate2),
    ]))?;
    run(python(&ours)
        .arg(&script)
        .args(["make", "--out", &path(&model)]))?;
    let converted = path(&model.join("ct2"));
    for (program, out) in [(&ours, &ours_out), (&path(&reference), &reference_out)] {
        run(python(program).arg(&script).args([
            "encode",
            "--model",
            &converted,
            "--out",
            &path(out),
        ]))?;
    }
    run(python(&ours).arg(&script).args([
        "compare",
        &path(&ours_out),
        &path(&reference_out),
        "--tolerance",
        TOLERANCE,
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ct2v_pipeline::plan::Action;
    use ct2v_pipeline::plan::request::PlanRequest;
    use ct2v_support::platform::Platform;

    fn cpu_plan() -> Plan {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let workspace = Workspace::locate(Some(root), None).unwrap();
        PlanRequest {
            platform: Some(Platform::LinuxX86_64),
            python: Some("3.12".into()),
            ..PlanRequest::only("cpu".into())
        }
        .plan(&workspace, &ct2v_support::report::Reporter::captured())
        .unwrap()
    }

    fn verify_commands(plan: &mut Plan) -> &mut Vec<CommandLine> {
        let at = plan
            .steps
            .iter()
            .position(|s| matches!(s.action, Action::Verify { .. }));
        &mut plan.steps[at.unwrap()].commands
    }

    /// What `verify` and `smoke` install and run, and the venv `numerics` and `bench` extend,
    /// as the verify step's job says: the same whatever order or programs its commands have.
    #[test]
    fn the_verify_job_does_not_depend_on_the_commands() {
        let mut plan = cpu_plan();
        let job = verify_job(&plan).unwrap().clone();
        assert_eq!(job.launcher, ["python3.12"]);
        assert!(
            job.python.ends_with("/verify/py3.12/bin/python"),
            "{}",
            job.python
        );
        assert_eq!(verify_commands(&mut plan).clone(), job.commands());
        verify_commands(&mut plan).reverse();
        assert_eq!(verify_job(&plan).unwrap(), &job);
        for command in verify_commands(&mut plan) {
            command.program = "renamed".into();
            command.args.clear();
        }
        assert_eq!(verify_job(&plan).unwrap(), &job);
    }

    #[cfg(unix)]
    #[test]
    fn a_shown_command_echoes_its_output_as_the_result_less_pip_noise() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("numerics.log");
        let command = CommandLine::new("sh").args([
            "-c",
            "echo 'Requirement already satisfied: numpy'; printf '10%%\\r100%%\\n'; echo kept",
        ]);
        let reporter = Reporter::captured();
        run_shown(&command, &log, &reporter).unwrap();
        assert_eq!(reporter.said().out, "kept\n");
        let logged = std::fs::read_to_string(&log).unwrap();
        assert!(
            logged.contains("Requirement already satisfied: numpy"),
            "{logged}"
        );
    }

    #[test]
    fn a_plan_without_a_verify_step_is_refused_by_name() {
        let mut plan = cpu_plan();
        plan.steps
            .retain(|s| !matches!(s.action, Action::Verify { .. }));
        let error = format!("{:#}", verify_job(&plan).unwrap_err());
        assert!(
            error.starts_with(
                "the plan of cpu for linux-x86_64 has no verify step: `verify`, `smoke` and `bench`"
            ),
            "{error}"
        );
    }
}
