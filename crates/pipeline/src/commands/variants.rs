//! `variants`: the variants with a one-line description each; `--json` and `--markdown`:
//! which GPUs each serves (`coverage`).

use std::process::ExitCode;

use anyhow::Result;

use crate::variant::{Catalog, card_table, coverage};
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

/// How the variants are listed: what `variants` is asked for.
#[derive(Clone, Copy)]
pub enum Listing {
    Text,
    Json,
    Markdown,
}

impl Listing {
    pub fn run(self, workspace: &Workspace, reporter: &Reporter) -> Result<ExitCode> {
        let catalog = Catalog::load(&workspace.root, &[])?;
        match self {
            Listing::Json => reporter.outln(serde_json::to_string_pretty(
                &coverage::of_catalog(&catalog)?,
            )?)?,
            Listing::Markdown => {
                reporter.out(card_table::markdown(&coverage::of_catalog(&catalog)?))?
            }
            Listing::Text => {
                let rows: Vec<(&str, &str)> = catalog
                    .variant_names()
                    .map(|n| (n, catalog.description(n)))
                    .collect();
                let width = rows.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
                for (name, description) in rows {
                    reporter.outln(format_args!("{name:<width$}  {description}"))?;
                }
            }
        }
        Ok(ExitCode::SUCCESS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_listing_names_each_variant_on_stdout_in_aligned_columns() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let workspace = Workspace::locate(Some(root.into()), None).unwrap();
        let reporter = Reporter::captured();
        assert_eq!(
            Listing::Text.run(&workspace, &reporter).unwrap(),
            ExitCode::SUCCESS
        );
        let said = reporter.said();
        assert!(said.err.is_empty(), "{said:?}");
        assert!(said.out.lines().any(|l| l.starts_with("cpu ")), "{said:?}");
        let columns: Vec<usize> = said
            .out
            .lines()
            .map(|l| l.len() - l.trim_start_matches(|c| c != ' ').trim_start().len())
            .collect();
        assert!(
            columns.windows(2).all(|w| w[0] == w[1]),
            "descriptions start in one column: {said:?}"
        );
    }
}
