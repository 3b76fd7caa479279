//! `verify-release`: check a release folder's checksums, RECORDs and manifest.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

pub fn run(dir: &Path) -> Result<ExitCode> {
    let problems = crate::release::verify(dir)?;
    if problems.is_empty() {
        eprintln!(
            "{}: every checksum, RECORD and manifest entry agrees",
            dir.display()
        );
        Ok(ExitCode::SUCCESS)
    } else {
        for p in &problems {
            eprintln!("error: {p}");
        }
        eprintln!("{} problem(s) in {}", problems.len(), dir.display());
        Ok(ExitCode::FAILURE)
    }
}
