//! `bump`: add a CTranslate2 version: its data file, pins, patch check.

use std::process::ExitCode;

use anyhow::Result;

use super::make_plan;
use super::patch::patch_command;
use super::pin::run as pin;
use crate::cli::{DownloadArgs, Selection};
use ct2v_pipeline::plan;
use ct2v_pipeline::variant::Catalog;
use ct2v_support::platform::Platform;
use ct2v_support::workspace::Workspace;

pub fn run(
    workspace: &Workspace,
    request: &ct2v_upkeep::bump::BumpRequest,
    no_pin: bool,
    download: &DownloadArgs,
) -> Result<ExitCode> {
    let version = request.version.as_str();
    let mut bumped = ct2v_upkeep::bump::bump(&workspace.root, request, &download.options())?;
    println!("wrote {} (from {})", bumped.file.display(), bumped.from);
    for (from, to) in &bumped.series {
        println!("copied {} to {}", from.display(), to.display());
    }
    if let Some(tag) = &bumped.tag {
        println!(
            "source: {} at {} ({}), {} submodule(s)",
            tag.url,
            tag.tag,
            tag.commit,
            tag.submodules.len()
        );
    }
    for url in &bumped.renamed {
        println!("renamed, to pin: {url}");
    }
    for note in &bumped.notes {
        println!("note: {note}");
    }
    if no_pin {
        bumped.by_hand.push(format!(
            "pin the inputs: `cargo xtask pin --variant V --ctranslate2 {version}` for each variant"
        ));
    } else {
        for variant in Catalog::names(&workspace.root)? {
            let catalog = Catalog::load_for(&workspace.root, &[variant.as_str()], Some(version))?;
            if Platform::ALL
                .iter()
                .all(|p| !catalog.has_source(&variant, *p))
            {
                bumped.by_hand.push(format!(
                    "{variant}: no source for CTranslate2 {version} yet"
                ));
                continue;
            }
            println!("== pin {variant}");
            if pin(workspace, &variant, Some(version), download)? != ExitCode::SUCCESS {
                bumped.by_hand.push(format!(
                    "{variant}: some inputs could not be downloaded from here (above); pin them \
                     where a network reaches them: `cargo xtask pin --variant {variant} --ctranslate2 {version}`"
                ));
            }
        }
        for variant in Catalog::names(&workspace.root)? {
            let selection = Selection {
                ctranslate2: Some(version.to_string()),
                ..Selection::only(variant.clone())
            };
            let Ok(plan) = make_plan(workspace, &selection) else {
                continue;
            };
            if plan
                .step(|a| matches!(a, plan::Action::Patch { .. }))
                .is_none()
            {
                continue;
            }
            println!("== patch --check {variant}");
            if let Err(e) = patch_command(workspace, &plan, true, None, download) {
                eprintln!("error: {e:#}");
                bumped.by_hand.push(format!(
                    "{variant}: the patch series does not apply to {version} (above): refresh it \
                     in patches/ctranslate2-{version}/ and run `cargo xtask patch --check --variant \
                     {variant} --ctranslate2 {version}`"
                ));
            }
        }
    }
    facts_table(workspace, version, no_pin, download, &mut bumped.by_hand)?;
    if bumped.by_hand.is_empty() {
        println!(
            "CTranslate2 {version} is ready: `cargo xtask build --variant cpu --ctranslate2 {version}`"
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!("left to do by hand:");
    for item in &bumped.by_hand {
        println!("  - {item}");
    }
    Ok(ExitCode::FAILURE)
}

/// The facts the new version's own tree declares, where each came from, what could not be
/// read, and how ours compare: read from its pinned source (from the cache with `--no-pin`).
fn facts_table(
    workspace: &Workspace,
    version: &str,
    no_pin: bool,
    download: &DownloadArgs,
    by_hand: &mut Vec<String>,
) -> Result<()> {
    let cache = ct2v_fetch::cache::Cache::new(&workspace.cache_dir);
    let mut options = download.options();
    options.offline |= no_pin;
    println!("== upstream facts of CTranslate2 {version}");
    match ct2v_upkeep::upstream::report_for_new_version(&workspace.root, &cache, &options, version)
    {
        Ok(report) => {
            print!("{}", report.table());
            if !report.passes() {
                by_hand.push(format!(
                    "our data differs from what CTranslate2 {version} declares (above): fix it or \
                     accept it with a reason, then `cargo xtask upstream --check --ctranslate2 {version}`"
                ));
            }
        }
        Err(e) => {
            println!("could not read the facts: {e:#}");
            by_hand.push(format!(
                "read its facts once its source is pinned: `cargo xtask upstream --check --ctranslate2 {version}`"
            ));
        }
    }
    Ok(())
}
