//! Finding the GPU SDK a build needs on this machine, and checking its version.
//!
//! CUDA: `CUDA_PATH`, then `CUDA_HOME`, then the folder above `nvcc` on PATH; the version is
//! what `nvcc --version` reports, and the variant's `version` is the oldest major accepted.
//! HIP: see `hip.rs`; the install whose runtime is the variant's (`amdhip64_6.dll`) wins.

pub mod cuda_arch;
pub mod cuda_code;
pub mod cuda_msvc;
pub mod hip;
pub mod msvc;

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use crate::variant::{Sdk, SdkKind};
use ct2v_support::host;
use ct2v_support::platform::Platform;
use ct2v_support::process::{Limits, Probed, probe_bounded, probe_each};
use ct2v_support::report::Reporter;

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Found {
    pub root: PathBuf,
    /// `major.minor`, e.g. "13.0".
    pub version: String,
    /// How it was found, e.g. "nvcc on PATH".
    pub how: String,
}

/// Finds the SDK `sdk` names for a build for `platform`; `given` is `--sdk-dir`, which is
/// checked rather than searched for. `gpu_targets` are the HIP targets rocBLAS must cover.
/// What the choice of a HIP install notes is said through `reporter`.
pub fn find(
    sdk: &Sdk,
    platform: Platform,
    gpu_targets: &[String],
    given: Option<&Path>,
    reporter: &Reporter,
) -> Result<Found> {
    match (sdk.kind, given) {
        (SdkKind::Cuda, Some(root)) => Ok(Found {
            root: root.to_path_buf(),
            version: nvcc_version(&root.join("bin").join(host::exe("nvcc")))
                .0
                .unwrap_or_default(),
            how: "--sdk-dir".into(),
        }),
        (SdkKind::Cuda, None) => find_cuda(sdk),
        (SdkKind::Hip, _) => find_hip(sdk, platform, gpu_targets, given, reporter),
    }
}

/// Windows: every `%ProgramFiles%\AMD\ROCm\<version>`; Linux: `/opt/rocm*`; or `given`.
/// The first install whose runtime, amd_comgr and rocBLAS kernels fit is used.
fn find_hip(
    sdk: &Sdk,
    platform: Platform,
    gpu_targets: &[String],
    given: Option<&Path>,
    reporter: &Reporter,
) -> Result<Found> {
    let windows = platform.is_windows();
    let (roots, looked) = match given {
        Some(root) => (
            vec![root.to_path_buf()],
            format!("{} (--sdk-dir)", root.display()),
        ),
        None if windows => {
            let pf = program_files();
            (
                hip::windows_installs(&pf),
                format!("{}\\AMD\\ROCm\\*", pf.display()),
            )
        }
        None => (
            hip::linux_installs(Path::new("/opt")),
            "/opt/rocm, /opt/rocm-* (pass --rocm-path for another folder, e.g. /usr)".into(),
        ),
    };
    let installs: Vec<hip::HipInstall> = roots.iter().map(|r| hip::inspect(r, windows)).collect();
    let needs = hip::Needs {
        runtime: sdk.runtime.as_deref(),
        requires: &sdk.requires,
        gpu_targets,
    };
    let hip_path = std::env::var_os("HIP_PATH").map(PathBuf::from);
    match hip::choose(&installs, &needs, hip_path.as_deref()) {
        Ok(choice) => {
            for note in &choice.notes {
                reporter.say(format_args!("      note: {note}"));
            }
            Ok(Found {
                version: choice.install.version.clone().unwrap_or_default(),
                how: given.map_or("found", |_| "--sdk-dir").to_string(),
                root: choice.install.root,
            })
        }
        Err(why) => bail!(
            "HIP SDK {} for {}: {why}\n  looked at: {looked}{}",
            sdk.version,
            sdk.runtime.as_deref().unwrap_or("this build"),
            hint(sdk)
        ),
    }
}

/// `%ProgramFiles%`, else `C:\Program Files`.
pub(crate) fn program_files() -> PathBuf {
    std::env::var_os("ProgramFiles")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("C:\\Program Files"))
}

fn hint(sdk: &Sdk) -> String {
    sdk.install_hint
        .as_ref()
        .map(|h| format!("\n  = {h}"))
        .unwrap_or_default()
}

fn find_cuda(sdk: &Sdk) -> Result<Found> {
    match cuda_toolkit() {
        Ok(found) => check_version(sdk, found),
        Err(looked) => bail!("no CUDA toolkit found; looked at: {looked}{}", hint(sdk)),
    }
}

/// The CUDA toolkit on this machine, whatever its version: `CUDA_PATH`, `CUDA_HOME`, then
/// the folder above `nvcc` on PATH, the first with a working `bin/nvcc`. The error lists
/// where it looked.
pub(crate) fn cuda_toolkit() -> Result<Found, String> {
    cuda_toolkit_said(&mut Vec::new())
}

/// [`cuda_toolkit`], with each `nvcc` that hung, printed too much or left a process behind
/// said in `problems`.
pub(crate) fn cuda_toolkit_said(problems: &mut Vec<String>) -> Result<Found, String> {
    let mut looked = Vec::new();
    let mut candidates: Vec<(PathBuf, String)> = Vec::new();
    for var in ["CUDA_PATH", "CUDA_HOME"] {
        match std::env::var_os(var) {
            Some(value) => candidates.push((PathBuf::from(value), var.to_string())),
            None => looked.push(format!("{var} (not set)")),
        }
    }
    match host::which("nvcc") {
        Some(nvcc) => {
            if let Some(root) = nvcc.parent().and_then(Path::parent) {
                candidates.push((root.to_path_buf(), "nvcc on PATH".to_string()));
            }
        }
        None => looked.push("PATH (no nvcc)".to_string()),
    }
    // Each candidate's nvcc asked at once (each may hang for the whole timeout); the first
    // that answers wins, and the problems of those after it are not said.
    let asked: Vec<(PathBuf, Vec<&str>)> = candidates
        .iter()
        .map(|(root, _)| (root.join("bin").join(host::exe("nvcc")), vec!["--version"]))
        .collect();
    let answers = probe_each(&asked, Limits::probe());
    for ((root, how), probed) in candidates.into_iter().zip(&answers) {
        let (version, problem) = nvcc_said(probed);
        problems.extend(problem.clone());
        match version {
            Some(version) => return Ok(Found { root, version, how }),
            None => looked.push(format!(
                "{how} = {} ({})",
                root.display(),
                problem.as_deref().unwrap_or("no working bin/nvcc")
            )),
        }
    }
    Err(looked.join(", "))
}

fn check_version(sdk: &Sdk, found: Found) -> Result<Found> {
    let major = |v: &str| v.split('.').next().and_then(|m| m.parse::<u32>().ok());
    match (major(&found.version), major(&sdk.version)) {
        (Some(have), Some(want)) if have < want => bail!(
            "the CUDA toolkit at {} ({}) is {}, but this variant needs {} or newer{}",
            found.root.display(),
            found.how,
            found.version,
            sdk.version,
            hint(sdk)
        ),
        _ => Ok(found),
    }
}

/// `release 13.0, V13.0.88` in `nvcc --version` → "13.0", and what went wrong asking it (it
/// hung, printed too much or left a process behind), if anything.
fn nvcc_version(nvcc: &Path) -> (Option<String>, Option<String>) {
    nvcc_said(&probe_bounded(nvcc, ["--version"], Limits::probe()))
}

/// [`nvcc_version`] of an `nvcc --version` already asked.
fn nvcc_said(probed: &Probed) -> (Option<String>, Option<String>) {
    let version = probed.stdout().and_then(parse_nvcc_version);
    (version, probed.problem())
}

pub(crate) fn parse_nvcc_version(text: &str) -> Option<String> {
    let after = text.split("release ").nth(1)?;
    let version: String = after
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    (!version.is_empty()).then_some(version)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvcc_versions() {
        let text = "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 13.0, V13.0.88\nBuild cuda_13.0.r13.0/compiler.36424714_0\n";
        assert_eq!(parse_nvcc_version(text).as_deref(), Some("13.0"));
        assert_eq!(parse_nvcc_version("nothing"), None);
    }

    #[test]
    fn an_older_toolkit_than_the_variant_needs_is_refused() {
        let sdk = Sdk {
            kind: SdkKind::Cuda,
            version: "12".into(),
            runtime: None,
            requires: vec![],
            install_hint: Some("install CUDA".into()),
            installer: None,
            pip: None,
        };
        let found = |v: &str| Found {
            root: "/usr/local/cuda".into(),
            version: v.into(),
            how: "nvcc on PATH".into(),
        };
        assert!(check_version(&sdk, found("13.0")).is_ok());
        assert!(check_version(&sdk, found("12.4")).is_ok());
        let err = check_version(&sdk, found("11.8")).unwrap_err().to_string();
        assert!(
            err.contains("is 11.8, but this variant needs 12 or newer"),
            "{err}"
        );
        assert!(err.contains("install CUDA"), "{err}");
    }
}
