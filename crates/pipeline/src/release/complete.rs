//! Which built entries a release takes: per variant and platform, all of its entries or none.
//! A variant's index serves every platform (pip picks a wheel by its platform tag), so one
//! platform's failed build withholds that platform's wheels only; within a platform, one
//! Python missing holds back the others, so that an index never serves some Pythons of a
//! platform and not the rest.

use std::collections::BTreeSet;

use anyhow::{Result, bail};

use super::{Built, LeftOut, select, wheel_in};

/// The entries of the variants' platforms whose every entry has its wheel, and what is left
/// out, each with its platform. Without `partial` any missing entry is an error naming each
/// with the command that builds it; with it, nothing complete at all is one too.
pub(super) fn complete_sets(built: &[Built], partial: bool) -> Result<(Vec<&Built>, Vec<LeftOut>)> {
    let missing: Vec<&Built> = built
        .iter()
        .filter(|b| wheel_in(&b.dist).is_none())
        .collect();
    if !partial && !missing.is_empty() {
        let lines: Vec<String> = missing
            .iter()
            .map(|b| format!("  {}", missing_reason(b)))
            .collect();
        bail!(
            "{} matrix {} no artifacts:\n{}\n(--partial releases each variant's platforms whose \
             entries are all there and names the others)",
            missing.len(),
            if missing.len() == 1 {
                "entry has"
            } else {
                "entries have"
            },
            lines.join("\n")
        );
    }
    let incomplete: BTreeSet<(&str, String)> = missing.iter().map(|b| set_of(b)).collect();
    let mut kept = Vec::new();
    let mut left_out = Vec::new();
    for b in built {
        if !incomplete.contains(&set_of(b)) {
            kept.push(b);
            continue;
        }
        let reason = if missing.iter().any(|m| std::ptr::eq(*m, b)) {
            missing_reason(b)
        } else {
            held_back(b, &missing)
        };
        left_out.push(LeftOut {
            variant: b.plan.variant.clone(),
            platform: b.plan.platform.to_string(),
            job: b.job.clone(),
            reason,
        });
    }
    if kept.is_empty() {
        bail!(
            "no variant has a platform with all its entries, so nothing can be released:\n  {}",
            left_out
                .iter()
                .map(|l| format!("{}: {}", l.job, l.reason))
                .collect::<Vec<_>>()
                .join("\n  ")
        );
    }
    Ok((kept, left_out))
}

/// The set an entry is released with: its variant on its platform.
fn set_of(b: &Built) -> (&str, String) {
    (b.plan.variant.as_str(), b.plan.platform.to_string())
}

/// Why an entry whose wheel is there is left out: the entries of its set that are missing.
fn held_back(b: &Built, missing: &[&Built]) -> String {
    let pythons: Vec<String> = missing
        .iter()
        .filter(|m| set_of(m) == set_of(b))
        .map(|m| format!("py{}", m.plan.python))
        .collect();
    format!(
        "held back: {} {} {} is missing, and a platform's wheels are published together \
         (its other platforms are not held back)",
        b.plan.variant,
        b.plan.platform,
        pythons.join(", ")
    )
}

/// Why an entry has no wheel: its check failed (CI kept its build apart), or it was not built.
/// It is published (manifest, notes, job summary), so it names the entry's folders by their
/// own names, never by where this machine keeps them.
fn missing_reason(b: &Built) -> String {
    match &b.failed_check {
        Some(_) => format!(
            "{} {} py{}: its check failed; its build and logs are in the artifact {}{}",
            b.plan.variant,
            b.plan.platform,
            b.plan.python,
            select::FAILED_PREFIX,
            b.artifact
        ),
        None => format!(
            "{} {} py{}: no wheel in its artifact {} (build it: cargo xtask build --variant {} \
             --ctranslate2 {} --platform {} --python {})",
            b.plan.variant,
            b.plan.platform,
            b.plan.python,
            b.artifact,
            b.plan.variant,
            b.plan.ctranslate2,
            b.plan.platform,
            b.plan.python
        ),
    }
}
