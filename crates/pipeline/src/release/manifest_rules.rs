//! What a manifest read back (`pages`, `verify-release`) must hold before any of it is
//! written into a path, a page, a command or the notes: artifact paths that are one file name,
//! wheel variants that are variant names, wheel file names as PEP 427 writes them with a PEP
//! 440 version, and a `left_out` list of what the release really lacks (per variant and
//! platform), named in words a terminal, a page and Markdown show as they are.

use super::{Manifest, SELECTOR_WHEEL_KIND};
use ct2v_support::diagnostic::{escaped, hidden, quoted};
use ct2v_support::text_rules;

/// The longest job name taken (GitHub shows 100 characters of a job's name).
const MAX_JOB: usize = 200;

impl Manifest {
    /// What in the manifest would lead a path out of its folder once joined to it (the
    /// index's `whl/<variant>/`, a download's file name): an artifact path that is not one
    /// file name, a wheel's variant that is not a variant's name. Each names the artifact.
    pub(crate) fn path_problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        for a in &self.artifacts {
            if let Err(why) = ct2v_support::safe_path::check_name(&a.path) {
                problems.push(format!(
                    "artifact `{}` in the manifest: {why}",
                    escaped(&a.path)
                ));
            }
            if a.kind == "wheel"
                && let Err(why) = crate::variant::check_variant_name(&a.variant)
            {
                problems.push(format!(
                    "{}: variant `{}` in the manifest: {why}",
                    escaped(&a.path),
                    escaped(&a.variant)
                ));
            }
        }
        problems
    }

    /// What in the manifest cannot be published as it is: a wheel file name that is not
    /// what PEP 427 and PEP 440 allow (it is written into install commands and links), a
    /// release version that is not PEP 440, a `left_out` entry whose job name is not plain
    /// words, whose platform is none we build, or whose variant still has wheels in the
    /// release for that platform. Each names what it is about.
    pub(crate) fn name_problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if let Err(refusal) = text_rules::release_version(&self.version) {
            problems.push(format!(
                "version {} in the manifest: {}",
                quoted(&self.version),
                refusal.why
            ));
        }
        for a in &self.artifacts {
            if a.kind != "wheel" && a.kind != SELECTOR_WHEEL_KIND {
                continue;
            }
            if let Err(refusal) = text_rules::wheel_file_name(&a.path) {
                problems.push(format!(
                    "wheel {} in the manifest: {}",
                    quoted(&a.path),
                    refusal.why
                ));
            }
        }
        for l in &self.left_out {
            let entry = format!("left_out entry {}", quoted(&l.job));
            if let Err(why) = job_name(&l.job) {
                problems.push(format!("{entry}: its job name {why}"));
            }
            if let Err(why) = crate::variant::check_variant_name(&l.variant) {
                problems.push(format!("{entry}: variant {}: {why}", quoted(&l.variant)));
            }
            if l.reason.chars().any(hidden) {
                problems.push(format!(
                    "{entry}: its reason {} holds a control or invisible character",
                    quoted(&l.reason)
                ));
            }
            let platform_known = l.platform.is_empty()
                || l.platform
                    .parse::<ct2v_support::platform::Platform>()
                    .is_ok();
            if !platform_known {
                problems.push(format!(
                    "{entry}: platform {} is none of {}",
                    quoted(&l.platform),
                    ct2v_support::platform::Platform::names().join(", ")
                ));
            }
            // An entry without a platform (a manifest of before platforms were released apart)
            // leaves its variant out whole.
            let wheels = self
                .artifacts
                .iter()
                .filter(|a| a.kind == "wheel" && a.variant == l.variant)
                .filter(|a| l.platform.is_empty() || a.platform == l.platform)
                .count();
            if wheels > 0 && l.platform.is_empty() {
                problems.push(format!(
                    "{entry}: variant `{}` is listed as left out, but the release holds {wheels} \
                     of its wheels (release leaves a variant out whole)",
                    escaped(&l.variant)
                ));
            } else if wheels > 0 {
                problems.push(format!(
                    "{entry}: variant `{}` is listed as left out on {}, but the release holds \
                     {wheels} of its wheels for it (release leaves a variant's platform out whole)",
                    escaped(&l.variant),
                    escaped(&l.platform)
                ));
            }
        }
        problems
    }
}

/// A CI job's name as the matrix writes it (`cuda4.7.1 linux-x86_64 py3.12`): letters,
/// digits, spaces and `-._+(),/:`, at most [`MAX_JOB`] characters.
fn job_name(job: &str) -> Result<(), String> {
    let plain = |c: char| c.is_ascii_alphanumeric() || " -._+(),/:".contains(c);
    if job.trim().is_empty() {
        return Err("is empty".into());
    }
    if job.chars().count() > MAX_JOB {
        return Err(format!("is longer than {MAX_JOB} characters"));
    }
    match job.chars().find(|c| !plain(*c)) {
        Some(c) => Err(format!(
            "has `{}`: a job name is letters, digits, spaces and `-._+(),/:`",
            c.escape_default()
        )),
        None => Ok(()),
    }
}
