//! `variants`: the variants with a one-line description each.

use std::process::ExitCode;

use anyhow::Result;

use crate::support::workspace::Workspace;
use crate::variant::Catalog;

pub fn run(workspace: &Workspace, json: bool) -> Result<ExitCode> {
    let catalog = Catalog::load(&workspace.root, &[])?;
    let rows: Vec<(&str, &str)> = catalog
        .variant_names()
        .map(|n| (n, catalog.description(n)))
        .collect();
    if json {
        let list: Vec<_> = rows
            .iter()
            .map(
                |(name, description)| serde_json::json!({"name": name, "description": description}),
            )
            .collect();
        println!("{}", serde_json::to_string_pretty(&list)?);
    } else {
        let width = rows.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
        for (name, description) in rows {
            println!("{name:<width$}  {description}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
