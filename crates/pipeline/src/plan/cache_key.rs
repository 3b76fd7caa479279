//! The key under which CI caches a build's C++ library (the install prefixes of oneDNN and
//! CTranslate2): the same key exactly when the same library would be compiled.
//!
//! It covers the definition of every step up to `install-ctranslate2` (sources and their
//! sha256 pins, patches, CMake flags, environment, the build-tools pins: the plan's fingerprint
//! of that step covers those it comes after) and the content of the files those steps read from
//! the checkout (the patch series, the build-tools requirements), which the plan names only by
//! path. Nothing else of the checkout enters it, so a README edit keeps the key.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};

use super::{Action, Plan, StepId};

/// The last step of a native build (`build --until`), whose prefixes CI hands on.
pub(crate) fn last_native_step() -> StepId {
    StepId::install("ctranslate2")
}

/// `None` for a plan that compiles nothing (a repackaged wheel).
pub(crate) fn native_key(plan: &Plan) -> Result<Option<String>> {
    let last = last_native_step();
    let Some(install) = plan.steps.iter().find(|s| s.id == last) else {
        return Ok(None);
    };
    let mut hasher = Sha256::new();
    hasher.update(install.fingerprint.as_bytes());
    for step in plan.steps.iter().filter(|s| before(plan, &s.id, &last)) {
        let files: Vec<&String> = match &step.action {
            Action::Patch { patches, .. } => patches.iter().collect(),
            Action::Venv { requirements } => vec![requirements],
            _ => continue,
        };
        for file in files {
            let (sha256, _) = ct2v_fetch::cache::sha256_file(Path::new(file))
                .with_context(|| format!("cannot read {file}, which step {} uses", step.id))?;
            hasher.update(sha256.as_bytes());
        }
    }
    Ok(Some(
        ct2v_fetch::cache::hex(&hasher.finalize())[..32].to_string(),
    ))
}

/// Whether `step` is `last` or one of the steps `last` comes after, directly or not.
fn before(plan: &Plan, step: &StepId, last: &StepId) -> bool {
    let mut seen = BTreeSet::new();
    let mut todo = vec![last.clone()];
    while let Some(id) = todo.pop() {
        if &id == step {
            return true;
        }
        if seen.insert(id.clone())
            && let Some(s) = plan.steps.iter().find(|s| s.id == id)
        {
            todo.extend(s.after.iter().cloned());
        }
    }
    false
}
