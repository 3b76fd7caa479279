//! `pin`: the inputs of one variant whose pin is missing or whose URL changed, pinned, each
//! said on a line.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use crate::pin_inputs::{self, PinAction, PinOutcome};
use ct2v_fetch::cache::Cache;
use ct2v_fetch::download::Options;
use ct2v_fetch::payload::BadArchive;
use ct2v_pipeline::variant::Catalog;
use ct2v_support::diagnostic::printable;
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

/// What `pin` is asked: a variant, at its own CTranslate2 version or at `ctranslate2`.
#[derive(Debug, Clone)]
pub struct PinRequest {
    pub variant: String,
    pub ctranslate2: Option<String>,
    pub download: Options,
}

impl PinRequest {
    /// Exit 1 when some input could not be pinned (the others are still written); exit 2 when
    /// every one that could not was refused for what its file holds (a damaged archive, an
    /// archive bomb): bad input, which another download does not mend.
    pub fn run(&self, workspace: &Workspace, reporter: &Reporter) -> Result<ExitCode> {
        let catalog = Catalog::load_for(
            &workspace.root,
            &[self.variant.as_str()],
            self.ctranslate2.as_deref(),
        )?;
        let plans = pin_inputs::plans_of_variant(workspace, &catalog, &self.variant, reporter)?;
        let cache = Cache::new(&workspace.cache_dir);
        let outcomes = pin_inputs::pin_inputs(&catalog, &cache, &plans, &self.download)?;
        let mut failed = 0;
        let mut bad_archives = 0;
        let mut written = 0;
        for outcome in &outcomes {
            match &outcome.result {
                Ok(action) => {
                    written += usize::from(matches!(action, PinAction::Written(_)));
                    reporter.outln(outcome_line(&workspace.root, outcome, action))?;
                }
                Err(e) => {
                    failed += 1;
                    if e.downcast_ref::<BadArchive>().is_some() {
                        bad_archives += 1;
                    }
                    reporter.say(format_args!("error: {}", printable(&format!("{e:#}"))));
                }
            }
        }
        if failed > 0 {
            reporter.say(format_args!(
                "{failed} of {} input(s) could not be pinned; {}",
                outcomes.len(),
                match written {
                    0 => "nothing was written".to_string(),
                    n => format!("{n} new pin(s) were written"),
                }
            ));
            return Ok(match bad_archives == failed {
                true => ExitCode::from(2),
                false => ExitCode::FAILURE,
            });
        }
        Ok(ExitCode::SUCCESS)
    }
}

/// `<name> (<file>): <what was done>`; the files a pin was written into relative to the root.
fn outcome_line(root: &Path, outcome: &PinOutcome, action: &PinAction) -> String {
    // One name per platform (mkl-static for Linux and Windows): the file tells them apart.
    let file = ct2v_support::paths::last_segment(&outcome.url);
    let label = format!("{} ({file})", outcome.name);
    match action {
        PinAction::Confirmed => format!("{label}: confirmed by the lock"),
        PinAction::Verified => format!("{label}: verified, pin unchanged"),
        PinAction::Written(files) => {
            let names: Vec<String> = files
                .iter()
                .map(|f| f.strip_prefix(root).unwrap_or(f).display().to_string())
                .collect();
            format!("{label}: pinned in {}", names.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outcome_line_names_the_file_and_where_its_pin_was_written() {
        let root = Path::new("/repo");
        let outcome = PinOutcome {
            name: "mkl-static".into(),
            url: "https://example.org/v1/mkl-linux.tgz".into(),
            result: Ok(PinAction::Verified),
        };
        let written = PinAction::Written(vec![
            root.join("variants/cpu.toml"),
            root.join("variants/pins.lock"),
        ]);
        assert_eq!(
            outcome_line(root, &outcome, &written),
            "mkl-static (mkl-linux.tgz): pinned in variants/cpu.toml, variants/pins.lock"
        );
        assert_eq!(
            outcome_line(root, &outcome, &PinAction::Confirmed),
            "mkl-static (mkl-linux.tgz): confirmed by the lock"
        );
    }
}
