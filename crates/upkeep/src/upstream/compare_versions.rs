//! `upstream`: the version facts CTranslate2's own tree declares, next to our data's
//! (`--check`: fail on drift).

use std::process::ExitCode;

use anyhow::Result;

use super::VersionReport;
use ct2v_fetch::cache::Cache;
use ct2v_fetch::download::Options;
use ct2v_pipeline::variant::Catalog;
use ct2v_support::diagnostic::InputError;
use ct2v_support::workspace::Workspace;
use ct2v_support::{out, outln};

/// `upstream`: every version's facts (or `version`'s) printed next to ours, as a table or as
/// JSON; with `check`, exit 1 on drift or a stale acceptance and exit 2 when a fact could not
/// be read.
pub fn compare_versions(
    workspace: &Workspace,
    check: bool,
    version: Option<&str>,
    json: bool,
    options: &Options,
) -> Result<ExitCode> {
    let given = version.is_some();
    let versions = match version {
        Some(v) => vec![v.to_string()],
        None => Catalog::versions(&workspace.root),
    };
    let cache = Cache::new(&workspace.cache_dir);
    let mut reports: Vec<VersionReport> = Vec::new();
    for version in &versions {
        // Every version: one with no source tree (only official wheels repackaged) is said
        // and skipped; asked for by name, it is an error (below, from the check).
        if !given && !super::has_tree(&workspace.root, version)? {
            eprintln!(
                "CTranslate2 {version}: not checked: variants/ctranslate2/{version}.toml has no \
                 [source] tree (its variants repackage official wheels)"
            );
            continue;
        }
        reports.push(super::check_version(
            &workspace.root,
            &cache,
            options,
            version,
        )?);
    }
    if json {
        outln!("{}", serde_json::to_string_pretty(&reports)?)?;
    } else {
        for (i, report) in reports.iter().enumerate() {
            if i > 0 {
                outln!()?;
            }
            out!("{}", report.table())?;
        }
    }
    if !check {
        return Ok(ExitCode::SUCCESS);
    }
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
    for report in &reports {
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
        eprintln!("upstream --check: no drift");
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!("upstream --check: {} problem(s):", failures.len());
    for failure in &failures {
        eprintln!("  {failure}");
    }
    eprintln!(
        "fix our data (the file named on our side), or, where we differ on purpose, add \
         the fact to [upstream.accepted] in variants/defaults.toml with the reason"
    );
    Ok(ExitCode::FAILURE)
}
