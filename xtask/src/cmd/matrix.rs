//! `matrix`: print the GitHub Actions matrix (variant × platform × Python).

use std::process::ExitCode;

use anyhow::Result;

use crate::matrix;
use crate::workspace::Workspace;

pub fn run(workspace: &Workspace, json: bool, ctranslate2: &[String]) -> Result<ExitCode> {
    let matrix = matrix::matrix(&workspace.root, ctranslate2)?;
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
