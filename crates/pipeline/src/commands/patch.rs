//! `patch`: check (or apply) a variant's patch series against CTranslate2's source.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;

use crate::execute::patch_series::{Patched, patch_series};
use crate::plan::{Plan, request::PlanRequest};
use ct2v_fetch::download::Options;
use ct2v_fetch::patch::Check;
use ct2v_support::diagnostic::InputError;
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

/// A patch check or application as `cargo xtask patch` asks for it.
pub struct PatchRequest {
    pub plan: PlanRequest,
    /// Only check, on a copy.
    pub check: bool,
    /// The tree to patch (default with `check`: the pinned source).
    pub source: Option<PathBuf>,
    pub download: Options,
}

impl PatchRequest {
    pub fn run(self, workspace: &Workspace, reporter: &Reporter) -> Result<ExitCode> {
        if let Some(dir) = &self.source {
            source_folder(dir)?;
        }
        let plan = self.plan.plan(workspace)?;
        check_or_apply(
            workspace,
            &plan,
            self.check,
            self.source,
            &self.download,
            reporter,
        )
    }
}

/// `--source` must be a folder: checked before the plan is made or anything is written.
fn source_folder(dir: &Path) -> Result<(), InputError> {
    let why = match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => return Ok(()),
        Ok(_) => "is not a folder".to_string(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => "does not exist".to_string(),
        Err(e) => format!("cannot be read: {e}"),
    };
    Err(InputError::new(format!(
        "--source {} {why}",
        ct2v_support::paths::shown(dir)
    ))
    .note("give the CTranslate2 source tree to patch (a folder); with --check, leave --source out to use the pinned source"))
}

/// One plan's patch series checked (`check`) or applied, and said: each patch on stdout, the
/// check's summary on stderr. `bump` checks each variant's series with it too.
pub fn check_or_apply(
    workspace: &Workspace,
    plan: &Plan,
    check: bool,
    source: Option<PathBuf>,
    download: &Options,
    reporter: &Reporter,
) -> Result<ExitCode> {
    match patch_series(workspace, plan, check, source, download, reporter)? {
        Patched::Applied { series, tree } => {
            reporter.outln(format_args!("{} is patched with {series}", tree.display()))?;
        }
        Patched::Checked {
            series,
            tree,
            patches,
        } => {
            for (name, outcome) in &patches {
                let said = match outcome {
                    Check::AlreadyThere => "already in the tree",
                    _ => "applies",
                };
                reporter.outln(format_args!("{name}: {said}"))?;
            }
            reporter.say(format_args!(
                "{series}: {} patch(es) apply in order to {}; nothing was changed",
                patches.len(),
                tree.display()
            ));
        }
    }
    Ok(ExitCode::SUCCESS)
}
