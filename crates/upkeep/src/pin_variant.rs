//! `pin`: the inputs of one variant whose pin is missing or whose URL changed, pinned, each
//! said on a line.

use std::process::ExitCode;

use anyhow::Result;

use crate::pin_inputs::{self, PinAction};
use ct2v_fetch::cache::Cache;
use ct2v_fetch::download::Options;
use ct2v_fetch::payload::BadArchive;
use ct2v_pipeline::variant::Catalog;
use ct2v_support::diagnostic::printable;
use ct2v_support::outln;
use ct2v_support::workspace::Workspace;

/// Exit 1 when some input could not be pinned (the others are still written); exit 2 when
/// every one that could not was refused for what its file holds (a damaged archive, an
/// archive bomb): bad input, which another download does not mend.
pub fn pin_variant(
    workspace: &Workspace,
    variant: &str,
    ctranslate2: Option<&str>,
    options: &Options,
) -> Result<ExitCode> {
    let catalog = Catalog::load_for(&workspace.root, &[variant], ctranslate2)?;
    let plans = pin_inputs::plans_of_variant(workspace, &catalog, variant)?;
    let cache = Cache::new(&workspace.cache_dir);
    let outcomes = pin_inputs::pin_inputs(&catalog, &cache, &plans, options)?;
    let mut failed = 0;
    let mut bad_archives = 0;
    let mut written = 0;
    for outcome in &outcomes {
        // One name per platform (mkl-static for Linux and Windows): the file tells them apart.
        let file = ct2v_support::paths::last_segment(&outcome.url);
        let label = format!("{} ({file})", outcome.name);
        match &outcome.result {
            Ok(PinAction::Confirmed) => outln!("{label}: confirmed by the lock")?,
            Ok(PinAction::Verified) => outln!("{label}: verified, pin unchanged")?,
            Ok(PinAction::Written(files)) => {
                let names: Vec<String> = files
                    .iter()
                    .map(|f| {
                        f.strip_prefix(&workspace.root)
                            .unwrap_or(f)
                            .display()
                            .to_string()
                    })
                    .collect();
                written += 1;
                outln!("{label}: pinned in {}", names.join(", "))?;
            }
            Err(e) => {
                failed += 1;
                if e.downcast_ref::<BadArchive>().is_some() {
                    bad_archives += 1;
                }
                eprintln!("error: {}", printable(&format!("{e:#}")));
            }
        }
    }
    if failed > 0 {
        eprintln!(
            "{failed} of {} input(s) could not be pinned; {}",
            outcomes.len(),
            match written {
                0 => "nothing was written".to_string(),
                n => format!("{n} new pin(s) were written"),
            }
        );
        return Ok(match bad_archives == failed {
            true => ExitCode::from(2),
            false => ExitCode::FAILURE,
        });
    }
    Ok(ExitCode::SUCCESS)
}
