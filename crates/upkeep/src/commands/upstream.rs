//! `upstream`: the version facts CTranslate2's own tree declares, next to our data's
//! (`--check`: fail on drift).

use std::process::ExitCode;

use anyhow::Result;

use crate::upstream::{self, VersionReport};
use ct2v_fetch::cache::Cache;
use ct2v_fetch::download::Options;
use ct2v_pipeline::variant::Catalog;
use ct2v_support::diagnostic::InputError;
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

/// What `upstream` is asked: which versions, and how the facts are printed and judged.
#[derive(Debug, Clone)]
pub struct UpstreamRequest {
    /// Fail on drift (exit 1) or on a fact that could not be read (exit 2).
    pub check: bool,
    /// Only this CTranslate2 version (default: every version file).
    pub ctranslate2: Option<String>,
    /// The facts and verdicts as JSON instead of tables.
    pub json: bool,
    pub download: Options,
}

impl UpstreamRequest {
    /// Every version's facts (or the one asked for) printed next to ours, as a table or as
    /// JSON; with `check`, exit 1 on drift or a stale acceptance and exit 2 when a fact could
    /// not be read.
    pub fn run(&self, workspace: &Workspace, reporter: &Reporter) -> Result<ExitCode> {
        let reports = self.reports(workspace, reporter)?;
        if self.json {
            reporter.outln(serde_json::to_string_pretty(&reports)?)?;
        } else {
            for (i, report) in reports.iter().enumerate() {
                if i > 0 {
                    reporter.outln("")?;
                }
                reporter.out(report.table())?;
            }
        }
        if !self.check {
            return Ok(ExitCode::SUCCESS);
        }
        check(&reports, reporter)
    }

    /// The report of each version asked for; every version's when none was named, saying
    /// which ones have no tree to read.
    fn reports(&self, workspace: &Workspace, reporter: &Reporter) -> Result<Vec<VersionReport>> {
        let given = self.ctranslate2.is_some();
        let versions = match &self.ctranslate2 {
            Some(v) => vec![v.clone()],
            None => Catalog::versions(&workspace.root),
        };
        let cache = Cache::new(&workspace.cache_dir);
        let mut reports = Vec::new();
        for version in &versions {
            // Every version: one with no source tree (only official wheels repackaged) is said
            // and skipped; asked for by name, it is an error (below, from the check).
            if !given && !upstream::has_tree(&workspace.root, version)? {
                reporter.say(format_args!(
                    "CTranslate2 {version}: not checked: variants/ctranslate2/{version}.toml has \
                     no [source] tree (its variants repackage official wheels)"
                ));
                continue;
            }
            reports.push(upstream::check_version(
                &workspace.root,
                &cache,
                &self.download,
                version,
            )?);
        }
        Ok(reports)
    }
}

/// `--check`: an error when a fact could not be read, else each drift and stale acceptance
/// said (exit 1), or that there is none.
fn check(reports: &[VersionReport], reporter: &Reporter) -> Result<ExitCode> {
    let unreadable: Vec<String> = reports
        .iter()
        .flat_map(|r| {
            r.unreadable
                .iter()
                .map(move |u| format!("CTranslate2 {}: {u}", r.version))
        })
        .collect();
    if !unreadable.is_empty() {
        let mut error = InputError::new(format!(
            "{} upstream fact(s) could not be read:\n  {}",
            unreadable.len(),
            unreadable.join("\n  ")
        ));
        error = error.note(
            "the upstream file changed shape: read it, then teach crates/upkeep/src/upstream/parse.rs \
             the new shape (never guess a value)",
        );
        return Err(error.into());
    }
    let mut failures = Vec::new();
    for report in reports {
        for row in report.drifts() {
            for difference in &row.differences {
                failures.push(format!(
                    "CTranslate2 {}: {}: {difference}",
                    report.version, row.fact
                ));
            }
        }
        for stale in &report.stale {
            failures.push(format!(
                "CTranslate2 {}: [upstream.accepted] \"{}\" ({}) matches no drift any more: delete it",
                report.version, stale.fact, stale.at
            ));
        }
    }
    if failures.is_empty() {
        reporter.say("upstream --check: no drift");
        return Ok(ExitCode::SUCCESS);
    }
    reporter.say(format_args!(
        "upstream --check: {} problem(s):",
        failures.len()
    ));
    for failure in &failures {
        reporter.say(format_args!("  {failure}"));
    }
    reporter.say(
        "fix our data (the file named on our side), or, where we differ on purpose, add \
         the fact to [upstream.accepted] in variants/defaults.toml with the reason",
    );
    Ok(ExitCode::FAILURE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upstream::Acceptance;

    fn report(stale: Vec<Acceptance>) -> VersionReport {
        VersionReport {
            version: "4.8.4".into(),
            source: "a tree".into(),
            rows: Vec::new(),
            unreadable: Vec::new(),
            stale,
        }
    }

    #[test]
    fn the_check_says_each_problem_on_stderr_and_fails() {
        let reporter = Reporter::captured();
        let stale = Acceptance {
            fact: "onednn.version".into(),
            reason: "why".into(),
            at: "variants/defaults.toml:3".into(),
        };
        let code = check(&[report(vec![stale])], &reporter).unwrap();
        assert_eq!(code, ExitCode::FAILURE);
        let said = reporter.said();
        assert_eq!(said.out, "");
        assert!(
            said.err.starts_with(
                "upstream --check: 1 problem(s):\n  CTranslate2 4.8.4: [upstream.accepted] \
                 \"onednn.version\" (variants/defaults.toml:3) matches no drift any more: delete it\n"
            ),
            "{}",
            said.err
        );
    }

    #[test]
    fn the_check_of_agreeing_data_says_no_drift() {
        let reporter = Reporter::captured();
        let code = check(&[report(Vec::new())], &reporter).unwrap();
        assert_eq!(code, ExitCode::SUCCESS);
        assert_eq!(reporter.said().err, "upstream --check: no drift\n");
    }
}
