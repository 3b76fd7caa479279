//! `variants`: the variants with a one-line description each; `--json` and `--markdown`: which
//! GPUs each serves (`variant::coverage`).

use std::process::ExitCode;

use anyhow::Result;

use ct2v_pipeline::variant::Catalog;
use ct2v_pipeline::variant::coverage;
use ct2v_support::workspace::Workspace;

pub fn run(workspace: &Workspace, json: bool, markdown: bool) -> Result<ExitCode> {
    let catalog = Catalog::load(&workspace.root, &[])?;
    if json || markdown {
        let coverage = coverage::of_catalog(&catalog)?;
        if json {
            println!("{}", serde_json::to_string_pretty(&coverage)?);
        } else {
            print!("{}", coverage::markdown(&coverage));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let rows: Vec<(&str, &str)> = catalog
        .variant_names()
        .map(|n| (n, catalog.description(n)))
        .collect();
    let width = rows.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    for (name, description) in rows {
        println!("{name:<width$}  {description}");
    }
    Ok(ExitCode::SUCCESS)
}
