//! `variants`: the variants with a one-line description each; `--json` and `--markdown`:
//! which GPUs each serves (`coverage`).

use std::process::ExitCode;

use anyhow::Result;

use crate::variant::{Catalog, coverage};
use ct2v_support::workspace::Workspace;
use ct2v_support::{out, outln};

/// How the variants are listed.
#[derive(Clone, Copy)]
pub enum Listing {
    Text,
    Json,
    Markdown,
}

pub fn print(workspace: &Workspace, listing: Listing) -> Result<ExitCode> {
    let catalog = Catalog::load(&workspace.root, &[])?;
    match listing {
        Listing::Json => outln!(
            "{}",
            serde_json::to_string_pretty(&coverage::of_catalog(&catalog)?)?
        )?,
        Listing::Markdown => out!(
            "{}",
            super::card_table::markdown(&coverage::of_catalog(&catalog)?)
        )?,
        Listing::Text => {
            let rows: Vec<(&str, &str)> = catalog
                .variant_names()
                .map(|n| (n, catalog.description(n)))
                .collect();
            let width = rows.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
            for (name, description) in rows {
                outln!("{name:<width$}  {description}")?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
