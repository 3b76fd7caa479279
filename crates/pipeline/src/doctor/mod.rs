//! What this machine has for GPU acceleration, which variant fits it, and what to do next.
//! Most failures in this field are environment failures with misleading messages; the checks
//! here are the maintainers' findings (docs/gpu-setup.md).

mod choice;
mod facts;
mod hip_runtime;
mod parse;
mod verdict;

use serde::Serialize;

use crate::variant::coverage::Coverage;

pub use choice::{Chosen, choose};
pub use facts::{DriverRuntime, Facts, collect};
pub use hip_runtime::HipRuntimeChoice;
pub use parse::{
    AmdGpu, NvidiaGpu, clinfo, hipinfo, nvidia_smi_csv, nvidia_smi_cuda_version, rocminfo,
};
pub use verdict::{Device, Verdict, recommend};

#[derive(Debug, Serialize)]
pub struct MachineReport {
    pub facts: Facts,
    pub verdict: Verdict,
}

/// This machine's facts and the verdict on them; `coverage` is which GPUs each variant serves
/// (`variant::coverage`, what `variants --json` prints and the selector's data is).
/// `site_packages`: the Python environment whose installed wheel is examined, if named.
pub(crate) fn examine(
    coverage: &Coverage,
    site_packages: Option<&std::path::Path>,
) -> MachineReport {
    let facts = collect(site_packages);
    let verdict = recommend(&facts, coverage);
    MachineReport { facts, verdict }
}

/// `doctor --json`: the report with its schema version first.
#[derive(Serialize)]
pub struct VersionedReport<'a> {
    pub schema_version: u32,
    #[serde(flatten)]
    pub report: &'a MachineReport,
}

impl MachineReport {
    pub fn versioned(&self) -> VersionedReport<'_> {
        VersionedReport {
            schema_version: ct2v_support::contracts::DOCTOR,
            report: self,
        }
    }

    pub fn text(&self) -> String {
        let f = &self.facts;
        let mut out = format!("Host\n  {} {}\n", f.os, f.arch);
        if let Some(said) = &f.long_paths_said {
            out.push_str(&format!("  long paths: {said}\n"));
        }
        out.push_str("\nBuild tools\n");
        for t in &f.tools {
            match (&t.path, &t.version) {
                (Some(path), version) => out.push_str(&format!(
                    "  {:<14} {}  {}\n",
                    t.name,
                    version.as_deref().unwrap_or(""),
                    path.display()
                )),
                (None, _) => out.push_str(&format!(
                    "  {:<14} {}\n",
                    t.name,
                    match t.name.as_str() {
                        "cmake" | "ninja" => {
                            "not on PATH (builds install their own pinned copy: wheels/build-tools.txt)"
                        }
                        n if n.starts_with("msvc") && f.os != "windows" => "not applicable here",
                        _ => "not found",
                    }
                )),
            }
        }
        out.push_str("\nNVIDIA\n");
        match &f.cuda_toolkit {
            Some(tk) => out.push_str(&format!(
                "  CUDA toolkit {} at {} ({})\n",
                tk.version,
                tk.root.display(),
                tk.how
            )),
            None => out.push_str("  CUDA toolkit: not found (CUDA_PATH, CUDA_HOME, nvcc)\n"),
        }
        if f.nvidia_gpus.is_empty() {
            out.push_str("  GPUs: none (nvidia-smi not found or reports none)\n");
        }
        for (index, g) in f.nvidia_gpus.iter().enumerate() {
            out.push_str(&format!(
                "  {index}: {}  compute capability {}  driver {}  {}\n",
                g.name, g.compute_capability, g.driver, g.memory
            ));
        }
        if let Some(cuda) = &f.nvidia_driver_cuda {
            out.push_str(&format!("  the driver supports CUDA up to {cuda}\n"));
        }
        out.push_str("\nAMD\n");
        if f.amd_gpus.is_empty() {
            out.push_str("  GPUs: none (rocminfo / hipinfo not found or report none)\n");
        }
        for (index, g) in f.amd_gpus.iter().enumerate() {
            out.push_str(&format!(
                "  {index}: {}  {}  (from {})\n",
                g.name,
                g.gfx,
                f.amd_gpus_from.as_deref().unwrap_or("?")
            ));
            if g.arch != g.gfx {
                out.push_str(&format!("    the runtime reports it as {}\n", g.arch));
            }
        }
        if f.windows_layout {
            match &f.driver_hip_runtime {
                Some(r) => out.push_str(&format!(
                    "  HIP runtime of the display driver: {} ({})\n",
                    r.path.display(),
                    r.version_text()
                )),
                None => out.push_str(
                    "  HIP runtime of the display driver: none (no amdhip64_6.dll in System32)\n",
                ),
            }
        }
        if let Some(choice) = &f.hip7_runtime {
            out.push_str(&hip7_runtime_text(choice));
        }
        if f.hip_installs.is_empty() {
            out.push_str("  HIP SDK installs: none found\n");
        }
        for i in &f.hip_installs {
            out.push_str(&format!("  HIP SDK {}\n", i.describe()));
            out.push_str(&format!(
                "    runtime: {}\n    amd_comgr: {}\n    rocBLAS kernels for: {}\n",
                list_or(&i.runtime, "none"),
                list_or(&i.comgr, "MISSING"),
                if i.rocblas_targets.is_empty() {
                    "none found".to_string()
                } else {
                    i.rocblas_targets
                        .iter()
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ));
        }
        if let Some(hip_path) = &f.hip_path {
            out.push_str(&format!("  HIP_PATH = {}\n", hip_path.display()));
        }
        let v = &self.verdict;
        out.push_str(&format!(
            "\nVerdict: {}{}\n  {}\n",
            v.variant,
            if v.ready { "" } else { " (not ready yet)" },
            v.why
        ));
        if let Some(requirement) = &v.requirement {
            out.push_str(&format!("  wheel: {requirement}\n"));
        }
        if let Some(device) = &v.device {
            out.push_str(&format!(
                "  device: index {}, or {} (then index 0)\n",
                device.index,
                device.variables()
            ));
        }
        for note in &v.notes {
            out.push_str(&format!("  note: {}\n", note.replace('\n', "\n        ")));
        }
        out.push_str("Next steps\n");
        for (n, step) in v.next_steps.iter().enumerate() {
            out.push_str(&format!("  {}. {step}\n", n + 1));
        }
        out
    }
}

/// The HIP 7 runtime lines: both copies with their versions, and which one
/// `import ctranslate2` loads.
fn hip7_runtime_text(choice: &HipRuntimeChoice) -> String {
    use ct2v_support::diagnostic::escaped;
    let shown = |r: &Option<DriverRuntime>, none: &str| {
        r.as_ref().map_or(none.to_string(), |r| {
            format!(
                "{} ({})",
                escaped(&r.path.display().to_string()),
                r.version_text()
            )
        })
    };
    let loads = match &choice.loads {
        Some(path) => format!(
            "loads {} ({})",
            escaped(&path.display().to_string()),
            escaped(&choice.why)
        ),
        None if choice.bundled.is_none() => escaped(&choice.why).into_owned(),
        None => format!("stops: {}", escaped(&choice.why)),
    };
    format!(
        "  HIP 7 runtime of the ROCm 10 wheel in {}:\n    bundled: {}\n    display driver: {}\n    import ctranslate2 {loads}\n",
        escaped(&choice.site_packages.display().to_string()),
        shown(
            &choice.bundled,
            "none (no ctranslate2/_rocm/bin/amdhip64_7.dll)"
        ),
        shown(&choice.system, "none (no amdhip64_7.dll in System32)"),
    )
}

fn list_or(items: &[String], none: &str) -> String {
    if items.is_empty() {
        none.to_string()
    } else {
        items.join(", ")
    }
}
