//! `matrix`: print the GitHub Actions matrix (variant × platform × Python), as a table or as
//! the JSON `fromJSON` takes; each entry left out is named on stderr with why.

use std::process::ExitCode;

use anyhow::Result;

use crate::plan::matrix::{Matrix, Opt, matrix, native, select};
use crate::plan::release_tag;
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

/// What `matrix` prints: which entries, and how.
pub struct MatrixRequest {
    /// One line of JSON instead of a table.
    pub json: bool,
    /// The native jobs instead (`native`).
    pub native: bool,
    /// CTranslate2 versions to span (default: each variant's).
    pub ctranslate2: Vec<String>,
    /// Only the entries of this lane.
    pub lane: Option<String>,
    pub opt: Opt,
    /// A release tag to check against the CTranslate2 versions built (`release_tag`).
    pub release_tag: Option<String>,
}

impl MatrixRequest {
    /// The matrix on stdout; each entry left out is named on stderr with why.
    pub fn run(&self, workspace: &Workspace, reporter: &Reporter) -> Result<ExitCode> {
        let mut all = matrix(&workspace.root, &self.ctranslate2, reporter)?;
        if let Some(tag) = &self.release_tag {
            let mut built: Vec<&str> = all.include.iter().map(|e| e.ctranslate2.as_str()).collect();
            built.sort_unstable();
            built.dedup();
            release_tag::check(tag, &built)?;
        }
        if let Some(lane) = &self.lane {
            all.include.retain(|e| e.lane == lane.as_str());
        }
        let (include, left_out) = select(all.include, self.opt);
        for line in left_out.iter().filter(|_| !self.native) {
            reporter.say(format_args!("note: left out of the matrix: {line}"));
        }
        let include = if self.native {
            native(&include)
        } else {
            include
        };
        let matrix = Matrix { include };
        if self.json {
            reporter.outln(serde_json::to_string(&matrix)?)?;
        } else {
            for entry in &matrix.include {
                reporter.outln(format_args!(
                    "{:<14} {:<8} {:<16} py{:<6} {}",
                    entry.variant, entry.ctranslate2, entry.platform, entry.python, entry.runs_on
                ))?;
            }
        }
        Ok(ExitCode::SUCCESS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_json_matrix_is_one_line_on_stdout_and_what_it_leaves_out_is_said_on_stderr() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let workspace = Workspace::locate(Some(root.into()), None).unwrap();
        let reporter = Reporter::captured();
        let request = MatrixRequest {
            json: true,
            native: false,
            ctranslate2: Vec::new(),
            lane: None,
            opt: Opt::default(),
            release_tag: None,
        };
        assert_eq!(
            request.run(&workspace, &reporter).unwrap(),
            ExitCode::SUCCESS
        );
        let said = reporter.said();
        assert_eq!(said.out.lines().count(), 1, "{said:?}");
        let json: serde_json::Value = serde_json::from_str(&said.out).unwrap();
        assert!(
            json["include"].as_array().is_some_and(|e| !e.is_empty()),
            "{said:?}"
        );
        assert!(
            said.err.lines().all(|l| l.starts_with("note: ")),
            "{said:?}"
        );
    }
}
