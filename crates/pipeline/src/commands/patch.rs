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
        let plan = self.plan.plan(workspace, reporter)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Action, StepId};
    use ct2v_support::report::Said;

    /// A plan whose one step patches with `patch`, and a workspace in `dir`.
    fn patching(dir: &Path, patch: &Path) -> (Workspace, Plan) {
        let workspace = Workspace {
            root: dir.to_path_buf(),
            cache_dir: dir.join("cache"),
        };
        let plan = Plan::of_step(
            StepId::PATCH,
            Action::Patch {
                series: "patches/series".into(),
                patches: vec![patch.display().to_string()],
                tree: String::new(),
            },
        );
        (workspace, plan)
    }

    fn said(workspace: &Workspace, plan: &Plan, check: bool, tree: &Path) -> Said {
        let reporter = Reporter::captured();
        let code = check_or_apply(
            workspace,
            plan,
            check,
            Some(tree.to_path_buf()),
            &Options::default(),
            &reporter,
        )
        .unwrap();
        assert_eq!(code, ExitCode::SUCCESS);
        reporter.said()
    }

    #[test]
    fn a_check_says_each_patch_on_stdout_and_its_summary_on_stderr_and_applying_says_the_tree() {
        let dir = tempfile::tempdir().unwrap();
        let tree = dir.path().join("ctranslate2");
        std::fs::create_dir_all(&tree).unwrap();
        std::fs::write(tree.join("a.txt"), "one\n").unwrap();
        let patch = dir.path().join("0001-two.patch");
        std::fs::write(
            &patch,
            "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+two\n",
        )
        .unwrap();
        let (workspace, plan) = patching(dir.path(), &patch);

        let checked = said(&workspace, &plan, true, &tree);
        assert_eq!(checked.out, "0001-two.patch: applies\n");
        assert_eq!(
            checked.err,
            format!(
                "patches/series: 1 patch(es) apply in order to {}; nothing was changed\n",
                tree.display()
            )
        );
        assert_eq!(
            std::fs::read_to_string(tree.join("a.txt")).unwrap(),
            "one\n"
        );

        let applied = said(&workspace, &plan, false, &tree);
        assert_eq!(
            applied,
            Said {
                out: format!("{} is patched with patches/series\n", tree.display()),
                err: String::new(),
            }
        );
        assert_eq!(
            std::fs::read_to_string(tree.join("a.txt")).unwrap(),
            "two\n"
        );

        let again = said(&workspace, &plan, true, &tree);
        assert_eq!(again.out, "0001-two.patch: already in the tree\n");
    }
}
