//! The plan as a person reads it: paths shown relative to the root and the cache.

use std::fmt::Write;

use super::{Plan, Step, StepId};
use ct2v_support::units::human_size;

pub(crate) fn render_text(plan: &Plan) -> String {
    let mut out = String::new();
    header(&mut out, plan);
    let _ = writeln!(out, "\nInputs");
    for input in &plan.inputs {
        let pin = match (&input.sha256, input.size) {
            (Some(sha), Some(size)) => format!("sha256 {}…  {}", &sha[..12], human_size(size)),
            (Some(sha), None) => format!("sha256 {}…  size not pinned", &sha[..12]),
            _ => "NOT PINNED".to_string(),
        };
        let _ = writeln!(out, "  {:<28} {pin}", input.name);
        let _ = writeln!(out, "  {:<28} {}", "", input.url);
    }
    let _ = writeln!(out, "\nSteps");
    for (n, step) in plan.steps.iter().enumerate() {
        step_text(&mut out, plan, n, step);
    }
    let _ = writeln!(out, "\nArtifacts");
    for artifact in &plan.artifacts {
        let _ = writeln!(out, "  {}", short(plan, artifact));
    }
    out
}

/// `s` with the cache shown as `$CACHE` and paths under the root relative to it.
fn short(plan: &Plan, s: &str) -> String {
    s.replace(&format!("{}/", plan.cache_dir), "$CACHE/")
        .replace(&format!("{}/", plan.root), "")
}

/// What is built, where, and what the build finds on the machine.
fn header(out: &mut String, plan: &Plan) {
    let how = match plan.build {
        "repackage" => "repackaged from the upstream wheel, no compiler",
        _ => "built from source",
    };
    let _ = writeln!(
        out,
        "Plan: {} for {}, Python {} — CTranslate2 {}, {how}",
        plan.variant, plan.platform, plan.python, plan.ctranslate2
    );
    let _ = writeln!(out, "  {}", plan.description);
    let _ = writeln!(out, "  root:  {}", plan.root);
    let _ = writeln!(out, "  cache: {}  ($CACHE)", plan.cache_dir);
    let _ = writeln!(out, "  work:  {}", short(plan, &plan.work_dir));
    for note in &plan.notes {
        let _ = writeln!(out, "  note:  {note}");
    }
    if let Some(msvc) = &plan.msvc {
        let _ = writeln!(
            out,
            "  msvc:  {} {}, found by {}\n         sets {} for: {}\n         if missing: {}",
            msvc.target,
            msvc.tool,
            msvc.found_by,
            msvc.vars.join(", "),
            joined(&msvc.steps),
            msvc.if_missing
        );
    }
    if let Some(requested) = &plan.cuda_arch {
        let _ = writeln!(
            out,
            "  cuda:  CUDA_ARCH_LIST `{requested}` becomes {{sdk.cuda-arch}} for the toolkit found{}",
            if requested == "Common" {
                format!(
                    " (CUDA 12.8+: {}; 13.x: {})",
                    crate::sdk::cuda_arch::COMMON_CUDA_12,
                    crate::sdk::cuda_arch::COMMON_CUDA_13
                )
            } else {
                String::new()
            }
        );
    }
}

/// One step: its action's fields, what it comes after, its environment, commands and outputs.
fn step_text(out: &mut String, plan: &Plan, n: usize, step: &Step) {
    let _ = writeln!(out, "{:>3}. {:<26} {}", n + 1, step.id, step.description);
    let detail = serde_json::to_value(&step.action).expect("actions serialize");
    if let Some(fields) = detail.as_object() {
        for (key, value) in fields.iter().filter(|(k, _)| *k != "kind") {
            match value {
                serde_json::Value::Null => {}
                serde_json::Value::Array(items) if items.is_empty() => {}
                serde_json::Value::Array(items) => {
                    let _ = writeln!(out, "       {key}:");
                    for item in items {
                        let _ = writeln!(out, "         - {}", short(plan, &plain(item)));
                    }
                }
                other => {
                    let _ = writeln!(out, "       {key}: {}", short(plan, &plain(other)));
                }
            }
        }
    }
    if !step.after.is_empty() {
        let _ = writeln!(out, "       after: {}", joined(&step.after));
    }
    for (key, value) in &step.env {
        let _ = writeln!(out, "       env {key}={}", short(plan, value));
    }
    for command in &step.commands {
        let _ = writeln!(out, "       $ {}", short(plan, &command.shell_line()));
    }
    for output in &step.outputs {
        let _ = writeln!(out, "       -> {}", short(plan, output));
    }
    let _ = writeln!(out, "       fingerprint {}", &step.fingerprint[..16]);
}

fn joined(ids: &[StepId]) -> String {
    ids.iter()
        .map(StepId::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

/// A JSON value without quotes: strings as they are, objects as `key=value` pairs.
fn plain(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Object(map) => map
            .iter()
            .filter(|(_, v)| !v.is_null() && v.as_str() != Some(""))
            .map(|(k, v)| format!("{k}={}", plain(v)))
            .collect::<Vec<_>>()
            .join("  "),
        serde_json::Value::Array(items) => items.iter().map(plain).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}
