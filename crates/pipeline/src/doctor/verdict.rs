//! From the facts to a verdict: the variant the coverage names for this machine's GPUs (the
//! selector's rule, `choice.rs`: a target a HIP SDK build names → that build (gfx1010 →
//! `rocm-gfx1010`, gfx1032 → `rocm-gfx1032`), the `rocm` wheel's targets → `rocm` where it is
//! built, NVIDIA → `cuda`, a GPU no build serves → `cpu` with why), whether it can be built or
//! used here, and the exact next steps.

use std::collections::BTreeMap;

use serde::Serialize;

use super::choice::{self, Chosen};
use super::facts::{DriverRuntime, Facts};
use super::parse::{AmdGpu, NvidiaGpu};
use crate::sdk::hip::{self, HipInstall};
use crate::variant::coverage::Coverage;

#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    /// The variant's name, or `none` when no variant is built for this platform.
    pub variant: String,
    /// Its wheel's local version (`cu12`, `rocm72`) and requirement, as the selector names them.
    pub local_version: Option<String>,
    pub requirement: Option<String>,
    /// Why this variant, in a sentence.
    pub why: String,
    /// Whether it can be built or used here as things are.
    pub ready: bool,
    pub next_steps: Vec<String>,
    /// Things worth knowing that are not steps (HIP_PATH, other GPUs).
    pub notes: Vec<String>,
    /// The served GPU's device index, and the variables that select it.
    pub device: Option<Device>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Device {
    /// Its index in its runtime's list: CTranslate2's `device_index` with no variable set.
    pub index: usize,
    /// The variables that make it the only device (then index 0).
    pub visible_devices: BTreeMap<String, String>,
}

impl Device {
    /// `HIP_VISIBLE_DEVICES=1`, or `CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=1`.
    pub fn variables(&self) -> String {
        let pairs: Vec<String> = self
            .visible_devices
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        pairs.join(" ")
    }
}

pub fn recommend(f: &Facts, coverage: &Coverage) -> Verdict {
    let choice = choice::choose(f, coverage);
    let hip_sdk = choice
        .variant
        .as_deref()
        .and_then(|v| hip_sdk_of(coverage, v));
    let mut verdict = match (choice.variant.as_deref(), choice.gpu, hip_sdk) {
        (None, _, _) => Verdict {
            variant: "none".into(),
            local_version: None,
            requirement: None,
            why: format!("no variant is built for {}", choice.platform),
            ready: false,
            next_steps: Vec::new(),
            notes: Vec::new(),
            device: None,
        },
        (Some("cuda"), Some(Chosen::Nvidia(i)), _) => cuda(f, &f.nvidia_gpus[i], &choice),
        (Some(v), Some(Chosen::Amd(i)), Some(sdk)) => {
            let mut verdict = from_hip_sdk(f, i, v, sdk, coverage);
            verdict.notes.extend(rocm_alternatives(f, i, v, coverage));
            verdict
        }
        (Some(v), Some(Chosen::Amd(i)), None) if rocm_of(coverage, v).is_some() => {
            family_wheel(f, i, v, coverage)
        }
        (Some("rocm"), Some(Chosen::Amd(i)), _) => rocm(f, &f.amd_gpus[i], &choice.platform),
        (Some(other), Some(gpu), _) => Verdict {
            variant: other.into(),
            local_version: None,
            requirement: None,
            why: format!(
                "{} is served by {other}",
                choice::describe(f, gpu, coverage)
            ),
            ready: true,
            next_steps: vec![format!("build it: cargo xtask build --variant {other}")],
            notes: Vec::new(),
            device: None,
        },
        (Some(_), None, _) => cpu(f, &choice),
    };
    verdict.local_version = choice.local_version.clone();
    verdict.requirement = choice.requirement.clone();
    verdict.device = choice.device_index.map(|index| Device {
        index,
        visible_devices: choice.visible_devices.clone(),
    });
    if let (Some(chosen), Some(device)) = (choice.gpu, &verdict.device) {
        let others = (0..f.nvidia_gpus.len())
            .map(Chosen::Nvidia)
            .chain((0..f.amd_gpus.len()).map(Chosen::Amd))
            .filter(|g| *g != chosen);
        for other in others {
            let unused = choice.unused.iter().find(|(g, _)| *g == other);
            verdict.notes.push(match unused {
                Some((_, why)) => format!("also found: {why}"),
                None if choice.served.contains(&other) => format!(
                    "also found: {}, served by this wheel too; {} keeps an app on the one chosen",
                    choice::describe(f, other, coverage),
                    device.variables()
                ),
                None => format!(
                    "also found: {}: not served by {} (+{}), the wheel for {}; {} keeps an app \
                     off it",
                    choice::describe(f, other, coverage),
                    verdict.variant,
                    verdict.local_version.as_deref().unwrap_or_default(),
                    choice::describe(f, chosen, coverage),
                    device.variables()
                ),
            });
        }
    }
    verdict.notes.extend(f.tool_problems.iter().cloned());
    verdict
}

fn cuda(f: &Facts, gpu: &NvidiaGpu, choice: &choice::Choice) -> Verdict {
    let driver_cuda = f.nvidia_driver_cuda.as_deref();
    let mut why = format!(
        "{} (compute capability {}), driver {}",
        gpu.name, gpu.compute_capability, gpu.driver
    );
    if let Some(cuda) = driver_cuda {
        why.push_str(&format!(", which supports CUDA up to {cuda}"));
    }
    let label = choice.local_version.as_deref().unwrap_or("?");
    if choice.how.as_deref() == Some("ptx") {
        why.push_str(&format!(
            "; the +{label} build runs on it through PTX, compiled by the driver at first use (a \
             slow first start)"
        ));
    } else {
        why.push_str(&format!("; the +{label} build has code for it"));
    }
    let mut next_steps = Vec::new();
    let old_driver = driver_cuda
        .and_then(|v| v.split('.').next()?.parse::<u32>().ok())
        .is_some_and(|major| major < 12);
    if old_driver {
        next_steps.push(
            "update the NVIDIA driver: the cuda variant needs one that supports CUDA 12 or newer"
                .to_string(),
        );
    }
    match &f.cuda_toolkit {
        Some(tk) => {
            why.push_str(&format!(
                "; CUDA toolkit {} at {}",
                tk.version,
                tk.root.display()
            ));
            let msvc_banner = f
                .tools
                .iter()
                .find(|t| t.name.starts_with("msvc"))
                .and_then(|t| t.version.as_deref())
                .unwrap_or_default();
            match crate::sdk::cuda_msvc::problem(&tk.version, msvc_banner) {
                Some(problem) => next_steps.push(format!("to build it here: {problem}")),
                None => next_steps.push(format!(
                    "build it: cargo xtask build --variant cuda --cuda-arch {}",
                    gpu.compute_capability
                )),
            }
        }
        None => next_steps.push(
            "to build it here, install the CUDA toolkit 12 or newer (nvcc); to only use it, \
             install a released cuda wheel and nvidia-cublas for its CUDA version"
                .to_string(),
        ),
    }
    Verdict {
        variant: "cuda".into(),
        local_version: None,
        requirement: None,
        why,
        ready: !old_driver,
        next_steps,
        notes: Vec::new(),
        device: None,
    }
}

/// What the coverage says of a variant's AMD builds (the first that has `field`).
fn amd_field<'a>(
    coverage: &'a Coverage,
    variant: &str,
    field: impl Fn(&'a crate::variant::coverage::AmdCoverage) -> Option<&'a String>,
) -> Option<&'a str> {
    coverage
        .variants
        .iter()
        .find(|v| v.name == variant)?
        .builds
        .iter()
        .find_map(|b| field(b.amd.as_ref()?).map(String::as_str))
}

/// The HIP SDK a variant built from source is compiled against, per the coverage (`None` for
/// a wheel that carries its runtime, and for a variant that is not for AMD GPUs).
fn hip_sdk_of<'a>(coverage: &'a Coverage, variant: &str) -> Option<&'a str> {
    amd_field(coverage, variant, |a| a.hip_sdk.as_ref())
}

/// The ROCm of TheRock's wheels a variant built from source carries its runtime from
/// (`rocm-rdna2`: 10.0.0); not the official wheel's (`rocm`), which doctor treats apart.
fn rocm_of<'a>(coverage: &'a Coverage, variant: &str) -> Option<&'a str> {
    amd_field(coverage, variant, |a| a.rocm.as_ref()).filter(|_| variant != "rocm")
}

/// A ROCm 10 family wheel (`rocm-rdna2`…): it carries its ROCm runtime and exactly its family's
/// kernels, so the display driver is all a user installs; building it takes TheRock's devel
/// wheel.
fn family_wheel(f: &Facts, index: usize, variant: &str, coverage: &Coverage) -> Verdict {
    let gpu = choice::describe(f, Chosen::Amd(index), coverage);
    let rocm = rocm_of(coverage, variant).unwrap_or("?");
    let driver = if f.windows_layout {
        "the Adrenalin display driver"
    } else {
        "the amdgpu kernel driver (no ROCm install)"
    };
    Verdict {
        variant: variant.into(),
        local_version: None,
        requirement: None,
        why: format!(
            "{gpu} is served by {variant}, its family's wheel built against ROCm {rocm}: it              carries the ROCm runtime and this family's kernels, so it needs {driver} only              (not yet run on an AMD GPU by this project)"
        ),
        ready: true,
        next_steps: vec![format!(
            "build it: pip install --index-url https://stable.repo.amd.com/rocm/whl-next/              \"rocm[libraries,devel]=={rocm}\" into a venv, then cargo xtask build --variant              {variant} --sdk-dir \"$(rocm-sdk path --root)\""
        )],
        notes: Vec::new(),
        device: None,
    }
}

/// For a card kept on a HIP 6 build (RDNA 1), the ROCm 10 wheels that also serve it, named as
/// the alternative until one is run on such a card.
fn rocm_alternatives(f: &Facts, index: usize, chosen: &str, coverage: &Coverage) -> Vec<String> {
    let gfx = &f.amd_gpus[index].gfx;
    coverage
        .variants
        .iter()
        .filter(|v| v.name != chosen && rocm_of(coverage, &v.name).is_some())
        .flat_map(|v| v.builds.iter().map(move |b| (v, b)))
        .filter(|(_, b)| b.amd.as_ref().is_some_and(|a| a.gfx.contains(gfx)))
        .map(|(v, b)| {
            format!(
                "the alternative: {} (+{}), built against ROCm {}, not yet run on this                  generation; {chosen} is the one run on such a card",
                v.name,
                b.local_version,
                b.amd.as_ref().and_then(|a| a.rocm.as_deref()).unwrap_or("?")
            )
        })
        .collect()
}

/// The wheel uses the driver's HIP runtime (variants/rocm-gfx1010.toml says why): it must be
/// there, and no older than the HIP SDK 6.2 the wheel is built with (AMD keeps newer runtimes
/// backward compatible, not older ones forward).
fn driver_runtime_problem(runtime: Option<&DriverRuntime>, variant: &str) -> Option<String> {
    match runtime {
        None => Some(format!(
            "no HIP 6 runtime from the display driver (no amdhip64_6.dll in System32): the \
             {variant} wheel does not bundle one, as AMD's deployment guidelines ask"
        )),
        Some(r) => match r.version {
            Some([major, minor, ..]) if (major, minor) < (6, 2) => Some(format!(
                "the display driver's HIP runtime {} is {}, older than the HIP SDK 6.2 the \
                 wheel is built with",
                r.path.display(),
                r.version_text()
            )),
            _ => None,
        },
    }
}

/// A variant built from source against a HIP SDK (`rocm-gfx1010`, `rocm-gfx1032`…) for the
/// facts' AMD GPU `index`.
fn from_hip_sdk(f: &Facts, index: usize, variant: &str, sdk: &str, coverage: &Coverage) -> Verdict {
    let gpu = &f.amd_gpus[index];
    let (runtime, sdk_name) = if f.windows_layout {
        ("amdhip64_6.dll", format!("HIP SDK {sdk}"))
    } else {
        ("libamdhip64.so.6", "ROCm 6.x".to_string())
    };
    let requires = vec!["amd_comgr".to_string()];
    // Windows: the build bundles the community rocBLAS (a pinned input of the variant), so
    // the stock SDK needs no kernels for the target; ROCm on Linux must have them.
    let targets = if f.windows_layout {
        Vec::new()
    } else {
        vec![gpu.gfx.clone()]
    };
    let needs = hip::Needs {
        runtime: Some(runtime),
        requires: &requires,
        gpu_targets: &targets,
    };
    let why = format!(
        "{}, which the official ROCm wheel has no kernels for: {variant} is built for it from \
         source against HIP {sdk} and runs on the display driver's HIP 6 runtime",
        choice::describe(f, Chosen::Amd(index), coverage)
    );
    let mut verdict = Verdict {
        variant: variant.into(),
        local_version: None,
        requirement: None,
        why,
        ready: false,
        next_steps: Vec::new(),
        notes: Vec::new(),
        device: None,
    };
    let runtime_problem = if f.windows_layout {
        driver_runtime_problem(f.driver_hip_runtime.as_ref(), variant)
    } else {
        None
    };
    match hip::choose(&f.hip_installs, &needs, f.hip_path.as_deref()) {
        Ok(choice) => {
            verdict.ready = runtime_problem.is_none();
            let root = choice.install.root.display().to_string();
            verdict
                .why
                .push_str(&format!("; {sdk_name} at {root} fits"));
            if !choice.notes.is_empty() {
                verdict.notes.extend(choice.notes);
                verdict.next_steps.push(format!(
                    "point HIP_PATH at it for apps that read it: setx HIP_PATH \"{root}\" (builds \
                     take --sdk-dir instead)"
                ));
            }
            verdict.next_steps.push(format!(
                "build it: cargo xtask build --variant {variant} --sdk-dir \"{root}\""
            ));
        }
        Err(why) => {
            verdict.notes.push(why);
            verdict.next_steps.extend(hip_install_steps(
                f.windows_layout,
                &f.hip_installs,
                &needs,
                &gpu.gfx,
            ));
        }
    }
    if let Some(problem) = runtime_problem {
        verdict.notes.push(problem);
        verdict.next_steps.insert(
            0,
            "install or update the AMD Adrenalin display driver: it installs the HIP 6 runtime \
             (C:\\Windows\\System32\\amdhip64_6.dll) the wheel uses"
                .to_string(),
        );
    }
    verdict
}

/// What to install for a build against HIP 6, given what each install lacks.
fn hip_install_steps(
    windows: bool,
    installs: &[HipInstall],
    needs: &hip::Needs,
    gfx: &str,
) -> Vec<String> {
    let lacking: Vec<String> = installs
        .iter()
        .flat_map(|i| hip::problems(i, needs))
        .collect();
    let mut steps = Vec::new();
    let has_runtime = installs
        .iter()
        .any(|i| needs.runtime.is_some_and(|r| i.has(r)));
    if !has_runtime {
        steps.push(if windows {
            "install AMD HIP SDK 6.2 (not 7.x: HIP SDK 7 supports no RDNA 1 or RDNA 2 card on \
             Windows), with the HIP Runtime Compiler component"
                .to_string()
        } else {
            "install ROCm 6.x (e.g. /opt/rocm-6.2), or pass --rocm-path to where it is".to_string()
        });
    }
    if lacking.iter().any(|p| p.contains("amd_comgr")) {
        steps.push(
            "add amd_comgr: re-run the HIP SDK installer with the HIP Runtime Compiler \
             component"
                .to_string(),
        );
    }
    if lacking.iter().any(|p| p.contains("rocBLAS")) {
        steps.push(format!(
            "use a ROCm whose rocBLAS has kernels for {gfx} (Debian's has gfx1010's, AMD's \
             /opt/rocm none below gfx1030, TheRock's gfx101X/gfx103X wheels these): see \
             docs/variants.md"
        ));
    }
    steps.push("then run cargo xtask doctor again".to_string());
    steps
}

fn rocm(f: &Facts, gpu: &AmdGpu, platform: &str) -> Verdict {
    let mut verdict = Verdict {
        variant: "rocm".into(),
        local_version: None,
        requirement: None,
        why: format!(
            "{} is {}, which the official ROCm 7.2 wheel has kernels for",
            gpu.name, gpu.gfx
        ),
        ready: true,
        next_steps: Vec::new(),
        notes: Vec::new(),
        device: None,
    };
    let target = if f.os == "windows" {
        ""
    } else {
        " --platform windows-x86_64"
    };
    verdict.next_steps.push(format!(
        "build it: cargo xtask build --variant rocm{target} --gpu-targets {}",
        gpu.gfx
    ));
    if platform.starts_with("windows") {
        verdict.notes.push(
            "the rocm wheel carries its ROCm DLLs: no HIP SDK or HIP_PATH is needed".to_string(),
        );
    }
    verdict
}

/// `cpu`: no GPU, or none that a build serves here (each said with why, as the selector says
/// it), with what would change that.
fn cpu(f: &Facts, choice: &choice::Choice) -> Verdict {
    let mut missing: Vec<String> = choice.unused.iter().map(|(_, why)| why.clone()).collect();
    if f.nvidia_gpus.is_empty() {
        missing.push("no NVIDIA GPU (nvidia-smi is not installed or reports none)".into());
    }
    if f.amd_gpus.is_empty() {
        missing.push("no AMD GPU (neither rocminfo nor hipinfo reports one)".into());
    }
    let mut notes = Vec::new();
    let mut first_steps = Vec::new();
    for (gpu, why) in &choice.unused {
        let elsewhere = choice.served_elsewhere.contains(gpu);
        match *gpu {
            Chosen::Nvidia(_) if elsewhere => {
                if why.contains("needs NVIDIA driver") && first_steps.is_empty() {
                    first_steps.push(
                        "update the NVIDIA driver (the version above), then run cargo xtask \
                         doctor again: the cuda variant is for this GPU"
                            .to_string(),
                    );
                }
            }
            Chosen::Nvidia(i) => notes.push(format!(
                "no release serves compute capability {cc}; a cuda build of your own can: \
                 cargo xtask build --variant cuda --cuda-arch {cc} with a CUDA 12 toolkit (CUDA \
                 13 dropped compute capabilities below 7.5)",
                cc = f.nvidia_gpus[i].compute_capability
            )),
            Chosen::Amd(i) if elsewhere && f.os == "linux" => notes.push(format!(
                "on Linux, ROCm 7 and the official ctranslate2 ROCm wheel for Linux may use {}",
                f.amd_gpus[i].gfx
            )),
            Chosen::Amd(i) if f.amd_gpus[i].gfx.starts_with("gfx101") && !elsewhere => {
                notes.push(format!(
                    "no release serves {gfx}; rocm-gfx1010 builds for the RDNA 1 targets it \
                     names, so a build of your own may: cargo xtask build --variant rocm-gfx1010 \
                     --gpu-targets {gfx} (untested)",
                    gfx = f.amd_gpus[i].gfx
                ))
            }
            Chosen::Amd(_) => {}
        }
    }
    // Windows builds compile with MSVC x64 only (variants/defaults.toml names cl).
    let msvc = f
        .tools
        .iter()
        .any(|t| t.name.starts_with("msvc") && t.path.is_some());
    let compiler = if f.os == "windows" {
        msvc
    } else {
        f.tools
            .iter()
            .any(|t| t.path.is_some() && ["gcc", "clang"].contains(&t.name.as_str()))
    };
    let python = f
        .tools
        .iter()
        .any(|t| t.name.starts_with("python") && t.path.is_some());
    let mut next_steps = Vec::new();
    if compiler && python {
        next_steps.push("build it: cargo xtask build --variant cpu".to_string());
    } else if f.os == "windows" && !msvc {
        next_steps.push(format!(
            "to build it here, {} (then run doctor again: it must show msvc x64)",
            crate::sdk::msvc::INSTALL_HINT
        ));
    } else {
        next_steps.push(
            "to build it here, install a C++ compiler and Python 3 (see README, Prerequisites); \
             to only use it, install a released cpu wheel"
                .to_string(),
        );
    }
    first_steps.extend(next_steps);
    Verdict {
        variant: "cpu".into(),
        local_version: None,
        requirement: None,
        why: format!(
            "{}: the cpu build (oneDNN + OpenMP) is what runs here",
            missing.join(", and ")
        ),
        ready: true,
        next_steps: first_steps,
        notes,
        device: None,
    }
}

#[cfg(test)]
mod cuda_tests {
    use super::*;
    use crate::doctor::facts::{CudaToolkit, Tool};
    use crate::doctor::parse::NvidiaGpu;

    fn with(cuda: &str, cl_banner: &str) -> Facts {
        Facts {
            tools: vec![Tool {
                name: "msvc x64 (cl.exe + PATH/INCLUDE/LIB)".into(),
                path: None,
                version: Some(format!("{cl_banner}; found by the cc crate (cl.exe)")),
            }],
            cuda_toolkit: Some(CudaToolkit {
                root: "C:/CUDA".into(),
                version: cuda.into(),
                how: "CUDA_PATH".into(),
            }),
            nvidia_gpus: vec![NvidiaGpu {
                name: "RTX 3060".into(),
                compute_capability: "8.6".into(),
                driver: "572.61".into(),
                memory: "12288 MiB".into(),
            }],
            nvidia_driver_cuda: Some("12.8".into()),
            ..Facts::default()
        }
    }

    const CL: &str = "Microsoft (R) C/C++ Optimizing Compiler Version 19.44.35207 for x64";

    fn cuda(f: &Facts) -> Verdict {
        let choice = choice::Choice {
            platform: "windows-x86_64".into(),
            variant: Some("cuda".into()),
            local_version: Some("cu12".into()),
            requirement: Some("ctranslate2==4.7.1+cu12".into()),
            how: Some("native".into()),
            gpu: Some(Chosen::Nvidia(0)),
            device_index: Some(0),
            visible_devices: BTreeMap::new(),
            served: vec![Chosen::Nvidia(0)],
            unused: Vec::new(),
            served_elsewhere: Vec::new(),
        };
        super::cuda(f, &f.nvidia_gpus[0], &choice)
    }

    #[test]
    fn a_cuda_that_cannot_compile_with_this_msvc_is_said_instead_of_build_it() {
        let verdict = cuda(&with("12.2", CL));
        let steps = verdict.next_steps.join("\n");
        assert!(
            steps.contains("CUDA 12.2 cannot compile with MSVC 19.44.35207"),
            "{steps}"
        );
        assert!(!steps.contains("build it:"), "{steps}");
        let verdict = cuda(&with("12.8", CL));
        assert!(
            verdict
                .next_steps
                .iter()
                .any(|s| s.starts_with("build it:"))
        );
    }
}
