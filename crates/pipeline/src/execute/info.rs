//! `build-info.json` beside the artifacts: the tools that made them.

use std::path::Path;

use anyhow::Result;

use crate::plan::Plan;
use crate::sdk;

/// `build-info.json` next to the artifacts: the tools that made them (the release manifest
/// carries it). Written by the checksum step, so SHA256SUMS covers it. `sdk`: the SDK found and,
/// for CUDA, the `CUDA_ARCH_LIST` CTranslate2 was compiled with (what `verify` checks the
/// library's fatbins against).
pub(crate) fn write_build_info(
    plan: &Plan,
    (sdk, cuda_arch): (Option<&sdk::Found>, Option<&str>),
    compiler: &str,
    dir: &Path,
) -> Result<()> {
    let tool = |kind: &str| {
        plan.step(|a| a.kind() == kind)
            .and_then(|s| s.commands.first())
            .map(|c| first_line(&c.program, "--version"))
    };
    let info = serde_json::json!({
        "schema_version": ct2v_support::contracts::BUILD_INFO,
        "variant": plan.variant,
        "platform": plan.platform,
        "python": plan.python,
        "ctranslate2": plan.ctranslate2,
        "compiler": (!compiler.is_empty()).then_some(compiler),
        "cmake": tool("configure"),
        "python_version": tool("wheel"),
        "sdk": sdk.map(|s| serde_json::json!({
            "root": s.root, "version": s.version, "found_by": s.how, "cuda_arch_list": cuda_arch
        })),
    });
    ct2v_support::fsx::write_atomically(
        &dir.join(BUILD_INFO),
        &serde_json::to_string_pretty(&info)?,
    )
}

/// The file [`write_build_info`] writes.
pub(crate) const BUILD_INFO: &str = "build-info.json";

/// The first line `program arg` prints, or "" when it cannot run.
pub(crate) fn first_line(program: &str, arg: &str) -> String {
    ct2v_support::process::capture(program, [arg])
        .ok()
        .and_then(|o| o.stdout.lines().next().map(str::to_string))
        .unwrap_or_default()
}
