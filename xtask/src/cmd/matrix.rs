//! `matrix`: print the GitHub Actions matrix (variant × platform × Python).

use std::process::ExitCode;

use anyhow::Result;

use ct2v_pipeline::plan::matrix;
use ct2v_support::workspace::Workspace;

pub fn run(
    workspace: &Workspace,
    json: bool,
    native: bool,
    ctranslate2: &[String],
    lane: Option<&str>,
    opt: matrix::Opt,
) -> Result<ExitCode> {
    let mut all = matrix::matrix(&workspace.root, ctranslate2)?;
    if let Some(lane) = lane {
        all.include.retain(|e| e.lane == lane);
    }
    let (include, left_out) = matrix::select(all.include, opt);
    for line in left_out.iter().filter(|_| !native) {
        eprintln!("note: left out of the matrix: {line}");
    }
    let include = if native {
        matrix::native(&include)
    } else {
        include
    };
    let matrix = matrix::Matrix { include };
    if json {
        println!("{}", serde_json::to_string(&matrix)?);
    } else {
        for entry in &matrix.include {
            println!(
                "{:<14} {:<8} {:<16} py{:<6} {}",
                entry.variant, entry.ctranslate2, entry.platform, entry.python, entry.runs_on
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
