//! RELEASE_NOTES.md: per variant, what it is for, what a user installs, and every wheel with
//! the libraries it bundles and where they came from.

use std::collections::BTreeMap;

use super::{Artifact, Manifest, SELECTOR_DATA, SELECTOR_DATA_KIND, SELECTOR_WHEEL_KIND};

/// Release notes: per variant, what it is for and what the user installs.
pub fn notes(manifest: &Manifest) -> String {
    let mut by_variant: BTreeMap<&str, Vec<&Artifact>> = BTreeMap::new();
    for a in manifest
        .artifacts
        .iter()
        .filter(|a| a.kind != SELECTOR_DATA_KIND && a.kind != SELECTOR_WHEEL_KIND)
    {
        by_variant.entry(&a.variant).or_default().push(a);
    }
    let mut text = format!(
        "# CTranslate2 {} builds\n\nVerify the downloads with `sha256sum -c SHA256SUMS`. \
         `manifest.json` lists every file with its pinned inputs and bundled libraries; \
         `{SELECTOR_DATA}` says which GPUs each variant serves; every variant's index also has \
         the selector, `pip install ct2-variant-select` then `python -m ct2_variant_select`, which \
         answers with this release's variants.\n",
        manifest.version
    );
    for (variant, artifacts) in by_variant {
        let first = artifacts[0];
        text.push_str(&format!("\n## `{variant}`\n\n{}\n\n", first.description));
        if let Some(sdk) = &first.sdk {
            text.push_str(&format!("Built against: {sdk}.\n\n"));
        }
        text.push_str(&format!("What users need: {}\n\n", needs(first)));
        for a in artifacts.iter().filter(|a| a.kind == "wheel") {
            text.push_str(&format!(
                "- `{}` ({}, Python {}, {} bytes); install with `pip install {}`\n",
                a.path,
                a.platform,
                a.python,
                a.size,
                ct2v_support::paths::last_segment(&a.path)
            ));
            for lib in &a.bundled {
                text.push_str(&format!("  - bundles `{}` from {}", lib.path, lib.package));
                let input = lib
                    .input
                    .as_ref()
                    .and_then(|name| a.inputs.iter().find(|i| &i.name == name));
                if let Some(i) = input {
                    text.push_str(&format!(
                        " ({}, sha256 {})",
                        i.url,
                        i.sha256.as_deref().unwrap_or("not pinned")
                    ));
                }
                text.push('\n');
            }
        }
    }
    text.push_str(&left_out(manifest));
    text
}

/// The section naming each matrix entry a `--partial` release does not hold; last in the
/// notes, so that a workflow can copy it from its heading to the end. Empty when none is.
pub fn left_out(manifest: &Manifest) -> String {
    if manifest.left_out.is_empty() {
        return String::new();
    }
    let mut text = format!(
        "\n{LEFT_OUT_HEADING}\n\nThese builds did not pass; a re-run of their jobs and of \
         `release` adds them to this release and its index.\n\n"
    );
    for l in &manifest.left_out {
        text.push_str(&format!("- `{}`: {}\n", l.job, l.reason));
    }
    text
}

/// The heading of [`left_out`]'s section.
pub(crate) const LEFT_OUT_HEADING: &str = "## Not in this release";

/// What a user must have besides Python and pip, from what the build needed and bundled.
fn needs(a: &Artifact) -> &'static str {
    let bundles_rocm = a.bundled.iter().any(|b| b.package.contains("rocm"));
    match a.sdk.as_deref() {
        Some(sdk) if sdk.starts_with("cuda") => {
            "an NVIDIA GPU and driver only: cuBLAS comes from the nvidia-cublas wheel that pip \
             installs with it (a CUDA toolkit on the search path still works; see docs)."
        }
        Some(sdk) if sdk.starts_with("hip") => {
            "an AMD GPU with a driver whose ROCm runtime matches the HIP SDK the wheel was \
             built against; the HIP libraries and kernels it loads are inside the wheel."
        }
        _ if bundles_rocm => {
            "an AMD GPU and its driver; the ROCm SDK libraries are inside the wheel (no HIP SDK, \
             no ROCm pip packages)."
        }
        _ => "nothing else: the wheel carries its OpenMP runtime.",
    }
}
