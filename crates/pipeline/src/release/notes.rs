//! RELEASE_NOTES.md: per variant, what it is for, what a user installs, and every wheel with
//! the libraries it bundles and where they came from. GitHub renders it as the release's text,
//! and the workflow appends its last section to the job summary: every value read from a
//! build (names, paths, packages, URLs, job names, reasons) is written through
//! [`markdown`], so none is read as markup, a link or a mention.

use std::collections::{BTreeMap, BTreeSet};

use super::{Artifact, LeftOut, Manifest, SELECTOR_DATA, SELECTOR_DATA_KIND, SELECTOR_WHEEL_KIND};
use ct2v_support::markdown::{code, paragraph, text};

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
    let mut notes = format!(
        "# CTranslate2 {} builds\n\nVerify the downloads with `sha256sum -c SHA256SUMS`. \
         `manifest.json` lists every file with its pinned inputs and bundled libraries; \
         `{SELECTOR_DATA}` says which GPUs each variant serves; every variant's index also has \
         the selector, `pip install ct2-variant-select` then `python -m ct2_variant_select`, which \
         answers with this release's variants.\n",
        text(&manifest.version)
    );
    for (variant, artifacts) in by_variant {
        let first = artifacts[0];
        notes.push_str(&format!(
            "\n## {}\n\n{}\n\n",
            code(variant),
            paragraph(&first.description)
        ));
        if let Some(sdk) = &first.sdk {
            notes.push_str(&format!("Built against: {}.\n\n", text(sdk)));
        }
        notes.push_str(&format!("What users need: {}\n\n", needs(first)));
        let missing = manifest.platforms_left_out(variant);
        if !missing.is_empty() {
            notes.push_str(&format!(
                "Not in this release for {}: see \"Not in this release\" below.\n\n",
                codes(&missing)
            ));
        }
        for a in artifacts.iter().filter(|a| a.kind == "wheel") {
            notes.push_str(&format!(
                "- {} ({}, Python {}, {} bytes); install with {}\n",
                code(&a.path),
                text(&a.platform),
                text(&a.python),
                a.size,
                code(&format!(
                    "pip install {}",
                    ct2v_support::paths::last_segment(&a.path)
                ))
            ));
            for lib in &a.bundled {
                notes.push_str(&format!(
                    "  - bundles {} from {}",
                    code(&lib.path),
                    text(&lib.package)
                ));
                let input = lib
                    .input
                    .as_ref()
                    .and_then(|name| a.inputs.iter().find(|i| &i.name == name));
                if let Some(i) = input {
                    notes.push_str(&format!(
                        " ({}, sha256 {})",
                        code(&i.url),
                        i.sha256.as_deref().map_or("not pinned".into(), code)
                    ));
                }
                notes.push('\n');
            }
        }
    }
    notes.push_str(&left_out(manifest));
    notes
}

/// The section naming each matrix entry a `--partial` release does not hold, by variant and
/// platform, with the platforms of that variant it does hold; last in the notes, so that a
/// workflow can copy it from its heading to the end (the job summary). Empty when none is.
pub fn left_out(manifest: &Manifest) -> String {
    if manifest.left_out.is_empty() {
        return String::new();
    }
    let mut notes = format!(
        "\n{LEFT_OUT_HEADING}\n\nThese builds did not pass; a re-run of their jobs and of \
         `release` adds them to this release and its index (the wheels it holds stay as they \
         are).\n\n"
    );
    let mut sets: BTreeMap<(&str, &str), Vec<&LeftOut>> = BTreeMap::new();
    for l in &manifest.left_out {
        sets.entry((&l.variant, &l.platform)).or_default().push(l);
    }
    for ((variant, platform), entries) in sets {
        let held = platforms_released(manifest, variant);
        let which = if platform.is_empty() {
            code(variant)
        } else {
            format!("{} for {}", code(variant), code(platform))
        };
        let others = if held.is_empty() {
            "no wheel of it is".to_string()
        } else {
            format!("its {} wheels are", codes(&held))
        };
        notes.push_str(&format!("- {which}: not in this release; {others}\n"));
        for l in entries {
            notes.push_str(&format!("  - {}: {}\n", code(&l.job), text(&l.reason)));
        }
    }
    notes
}

/// Each of `names` as code, comma-separated.
fn codes(names: &[&str]) -> String {
    names.iter().map(|n| code(n)).collect::<Vec<_>>().join(", ")
}

/// The platforms of `variant`'s wheels in the release, sorted.
fn platforms_released<'a>(manifest: &'a Manifest, variant: &str) -> Vec<&'a str> {
    let platforms: BTreeSet<&str> = manifest
        .artifacts
        .iter()
        .filter(|a| a.kind == "wheel" && a.variant == variant)
        .map(|a| a.platform.as_str())
        .collect();
    platforms.into_iter().collect()
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
