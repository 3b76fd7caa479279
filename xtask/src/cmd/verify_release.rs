//! `verify-release`: check a release folder's checksums, RECORDs and manifest; `--install`:
//! install it as its users do, from its index served on loopback.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use super::make_plan;
use crate::flags::{InstallArgs, Selection};
use ct2v_proof::checks::release::{self, InstallOptions};
use ct2v_support::platform::Platform;
use ct2v_support::workspace::Workspace;

pub fn run(workspace: &Workspace, dir: &Path, args: &InstallArgs) -> Result<ExitCode> {
    let options = InstallOptions {
        install: args.install,
        platform: args.platform.map(Platform::from),
        python: args.python.clone(),
        variants: args.variants.clone(),
        find_links: args.find_links.clone(),
        transcribe: args.transcribe,
        pyapp: args.pyapp,
        download: args.download.options(),
    };
    let plan_for = |variant: &str, platform: Platform, python: &str, version: &str| {
        let selection = Selection {
            platform: Some(platform.into()),
            python: Some(python.to_string()),
            ctranslate2: Some(version.to_string()),
            ..Selection::only(variant.to_string())
        };
        make_plan(workspace, &selection)
    };
    release::run(workspace, dir, &options, &plan_for)
}
