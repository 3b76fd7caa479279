//! `bump`: a new CTranslate2 version added: its data file, pins, patch check, upstream facts.

use std::process::ExitCode;

use anyhow::Result;

use crate::bump::{BumpRequest, bump};
use crate::pin_variant::pin_variant;
use ct2v_fetch::download::Options;
use ct2v_pipeline::execute::patch_series::patch_series;
use ct2v_pipeline::plan::{self, request::PlanRequest};
use ct2v_pipeline::variant::Catalog;
use ct2v_support::platform::Platform;
use ct2v_support::workspace::Workspace;
use ct2v_support::{out, outln};

/// `bump` as the command runs it: the version file written, then (unless `no_pin`) every
/// variant's inputs pinned and patch series checked, the upstream facts compared, and what is
/// left to do by hand listed (exit 1 when anything is).
pub fn new_version(
    workspace: &Workspace,
    request: &BumpRequest,
    no_pin: bool,
    download: &Options,
) -> Result<ExitCode> {
    let version = request.version.as_str();
    let mut bumped = bump(&workspace.root, request, download)?;
    outln!("wrote {} (from {})", bumped.file.display(), bumped.from)?;
    for (from, to) in &bumped.series {
        outln!("copied {} to {}", from.display(), to.display())?;
    }
    if let Some(tag) = &bumped.tag {
        outln!(
            "source: {} at {} ({}), {} submodule(s)",
            tag.url,
            tag.tag,
            tag.commit,
            tag.submodules.len()
        )?;
    }
    for url in &bumped.renamed {
        outln!("renamed, to pin: {url}")?;
    }
    for note in &bumped.notes {
        outln!("note: {note}")?;
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
            outln!("== pin {variant}")?;
            if pin_variant(workspace, &variant, Some(version), download)? != ExitCode::SUCCESS {
                bumped.by_hand.push(format!(
                    "{variant}: some inputs could not be downloaded from here (above); pin them \
                     where a network reaches them: `cargo xtask pin --variant {variant} --ctranslate2 {version}`"
                ));
            }
        }
        for variant in Catalog::names(&workspace.root)? {
            let request = PlanRequest {
                ctranslate2: Some(version.to_string()),
                ..PlanRequest::only(variant.clone())
            };
            let Ok(plan) = request.plan(workspace, &download.reporter) else {
                continue;
            };
            if plan
                .step(|a| matches!(a, plan::Action::Patch { .. }))
                .is_none()
            {
                continue;
            }
            outln!("== patch --check {variant}")?;
            if let Err(e) = patch_series(workspace, &plan, true, None, download) {
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
        outln!(
            "CTranslate2 {version} is ready: `cargo xtask build --variant cpu --ctranslate2 {version}`"
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    outln!("left to do by hand:")?;
    for item in &bumped.by_hand {
        outln!("  - {item}")?;
    }
    Ok(ExitCode::FAILURE)
}

/// The facts the new version's own tree declares, where each came from, what could not be
/// read, and how ours compare: read from its pinned source (from the cache with `--no-pin`).
fn facts_table(
    workspace: &Workspace,
    version: &str,
    no_pin: bool,
    download: &Options,
    by_hand: &mut Vec<String>,
) -> Result<()> {
    let cache = ct2v_fetch::cache::Cache::new(&workspace.cache_dir);
    let mut options = download.clone();
    options.offline |= no_pin;
    outln!("== upstream facts of CTranslate2 {version}")?;
    match crate::upstream::report_for_new_version(&workspace.root, &cache, &options, version) {
        Ok(report) => {
            out!("{}", report.table())?;
            if !report.passes() {
                by_hand.push(format!(
                    "our data differs from what CTranslate2 {version} declares (above): fix it or \
                     accept it with a reason, then `cargo xtask upstream --check --ctranslate2 {version}`"
                ));
            }
        }
        Err(e) => {
            outln!("could not read the facts: {e:#}")?;
            by_hand.push(format!(
                "read its facts once its source is pinned: `cargo xtask upstream --check --ctranslate2 {version}`"
            ));
        }
    }
    Ok(())
}
