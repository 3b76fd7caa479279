//! `bump`: add a CTranslate2 version: its data file, pins, patch check.

use std::process::ExitCode;

use anyhow::Result;

use super::make_plan;
use super::patch::patch_command;
use super::pin::run as pin;
use crate::cli::{DownloadArgs, Selection};
use crate::plan;
use crate::support::platform::Platform;
use crate::support::workspace::Workspace;
use crate::variant::Catalog;

pub fn run(
    workspace: &Workspace,
    request: &crate::variant::bump::BumpRequest,
    no_pin: bool,
    download: &DownloadArgs,
) -> Result<ExitCode> {
    let version = request.version.as_str();
    let mut bumped = crate::variant::bump::bump(&workspace.root, request, &download.options())?;
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
