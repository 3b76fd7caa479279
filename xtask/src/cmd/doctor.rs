//! `doctor`: what this machine has for GPU acceleration and which variant fits it.

use std::process::ExitCode;

use anyhow::Result;

pub fn run(json: bool) -> Result<ExitCode> {
    let report = crate::doctor::examine();
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.text());
    }
    Ok(if report.verdict.ready {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
