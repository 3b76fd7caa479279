//! `verify --numerics`: a tiny randomly initialised Whisper model (transformers, from a
//! config, no downloads) converted with the built wheel's converter, encoded by the built
//! wheel and by the official wheel of the same version from PyPI in another venv; the outputs
//! must agree within a tolerance. Needs network for PyPI (torch, transformers, ctranslate2).

use std::path::Path;

use anyhow::{Context, Result, bail};

use ct2v_pipeline::execute::executor::run_logged;
use ct2v_pipeline::plan::{Action, CommandLine, Plan};
use ct2v_support::workspace::Workspace;

pub(crate) const SCRIPT: &str = "crates/proof/python/numerics.py";
/// Largest absolute difference accepted between the two encoder outputs (float32, CPU).
pub(crate) const TOLERANCE: &str = "1e-4";

/// The verify step's venv, which has the built wheel installed: the Python launcher that made
/// it (`<launcher…> -m venv --clear <dir>`) and the venv's python (`<python> -m pip install
/// <wheel>`).
pub(crate) struct VerifyVenv {
    pub launcher: Vec<String>,
    pub python: String,
}

pub(crate) fn verify_venv(plan: &Plan) -> Result<VerifyVenv> {
    let verify = plan
        .step(|a| matches!(a, Action::Verify))
        .context("the plan has no verify step")?;
    let (Some(create), Some(install)) = (verify.commands.first(), verify.commands.get(1)) else {
        bail!("the verify step has no venv to extend");
    };
    let launcher: Vec<String> = std::iter::once(create.program.clone())
        .chain(create.args.iter().take_while(|a| *a != "-m").cloned())
        .collect();
    Ok(VerifyVenv {
        launcher,
        python: install.program.clone(),
    })
}

/// Runs `command` with its output in `log` and on the terminal, less pip's "already
/// satisfied" lines and progress bars (shared with `bench`).
pub(crate) fn run_shown(command: &CommandLine, log: &Path) -> Result<()> {
    let mut show = |line: &str| {
        if !line.starts_with("Requirement already satisfied") && !line.contains('\r') {
            println!("{line}");
        }
    };
    run_logged(command, &Default::default(), log, &mut show)?;
    Ok(())
}

pub fn check(workspace: &Workspace, plan: &Plan, log: &Path) -> Result<()> {
    let VerifyVenv {
        launcher,
        python: ours,
    } = verify_venv(plan)?;
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

    let run = |command: CommandLine| run_shown(&command, log);
    let python = |program: &str| CommandLine::new(program);
    run(python(&ours).args(["-m", "pip", "install", "-q", "torch", "transformers"]))?;
    run(CommandLine::new(&launcher[0])
        .args(launcher[1..].iter().cloned())
        .args(["-m", "venv", "--clear"])
        .arg(path(&reference_venv)))?;
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
