//! CTranslate2's `CUDA_ARCH_LIST` for the CUDA toolkit a build finds.
//!
//! `Common` here is this project's explicit list per CUDA major (`COMMON_CUDA_12/13` in
//! `variant/coverage.rs`), written out before CTranslate2 sees it. A list is checked against
//! what the toolkit found can compile, before anything (oneDNN included) is built:
//! - CUDA 13 removed offline compilation for sm_50 to sm_72 (Maxwell, Pascal, Volta): nvcc 13
//!   stops with "Unsupported gpu architecture 'compute_53'"; its `--list-gpu-code` starts at
//!   sm_75 (recorded on the GPU machine, docs/runs/2026-11-29-h200-cuda-targets.md).
//! - sm_89 and sm_90 came with CUDA 11.8, sm_100 and sm_120 with CUDA 12.8, sm_103 and
//!   sm_121 with CUDA 12.9, sm_110 with CUDA 13.0 (sm_101 of 12.8/12.9 became sm_110): NVIDIA's
//!   CUDA Toolkit release notes of those versions, "New Features" / "CUDA Compiler".

use anyhow::{Result, bail};
use ct2v_support::diagnostic::InputError;

/// `Common` per CUDA major lives with the coverage data (which GPUs a build serves), so the
/// build and what the README and the selector say come from one place.
pub(crate) use crate::variant::coverage::{COMMON_CUDA_12, COMMON_CUDA_13};

/// The oldest architecture each toolkit major still compiles for.
fn oldest(major: u32) -> f32 {
    match major {
        ..=11 => 3.5,
        12 => 5.0,
        _ => 7.5,
    }
}

/// The first CUDA toolkit `(major, minor)` that compiles for compute capability `arch`, for
/// the architectures newer than CUDA 11.1's 8.6; `None` for older ones (every toolkit since
/// 11.1 has them, down to [`oldest`]).
fn first_toolkit(arch: &str) -> Option<(u32, u32)> {
    match arch {
        "8.7" => Some((11, 4)),
        "8.9" | "9.0" => Some((11, 8)),
        "10.0" | "10.1" | "12.0" => Some((12, 8)),
        "10.3" | "12.1" => Some((12, 9)),
        "8.8" | "11.0" => Some((13, 0)),
        _ => None,
    }
}

/// The `CUDA_ARCH_LIST` for `requested` (the variant's `cuda-arch` or `--cuda-arch`) and the
/// toolkit's `version` ("12.8", "13.0").
pub(crate) fn for_toolkit(requested: &str, version: &str) -> Result<String> {
    let mut numbers = version.split('.').map(|n| n.parse::<u32>().ok());
    let (Some(Some(major)), minor) = (numbers.next(), numbers.next().flatten().unwrap_or(0)) else {
        bail!("cannot read the CUDA toolkit's version `{version}` (from nvcc --version)");
    };
    let list = match requested {
        "Common" => crate::variant::coverage::common_for_major(major),
        other => other,
    };
    let floor = oldest(major);
    let mut unbuildable = Vec::new();
    for entry in list.split([';', ' ', ',']).filter(|a| !a.is_empty()) {
        let arch = entry.trim_end_matches("+PTX");
        let too_old = arch.parse::<f32>().is_ok_and(|n| n < floor);
        let too_new = first_toolkit(arch).filter(|first| *first > (major, minor));
        if too_old {
            unbuildable.push(format!("{entry} (CUDA {major} starts at {floor})"));
        } else if let Some((a, b)) = too_new {
            unbuildable.push(format!("{entry} (first in CUDA {a}.{b})"));
        }
    }
    if unbuildable.is_empty() {
        return Ok(list.to_string());
    }
    let given = if requested == "Common" {
        format!("`Common` for CUDA {major} (`{list}`)")
    } else {
        format!("CUDA_ARCH_LIST `{list}`")
    };
    Err(InputError::new(format!(
        "{given} has {}, which CUDA {version} cannot build",
        unbuildable.join(", ")
    ))
    .note(format!(
        "install CUDA 12.8 or newer (the toolkit CI builds with), or pass --cuda-arch with \
         architectures this toolkit has (`nvcc --list-gpu-code` lists them; `Common` is \
         {COMMON_CUDA_12} for CUDA 12.8+ and {COMMON_CUDA_13} for CUDA 13)"
    ))
    .into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_follows_the_toolkit() {
        assert_eq!(for_toolkit("Common", "12.8").unwrap(), COMMON_CUDA_12);
        assert_eq!(for_toolkit("Common", "12.9").unwrap(), COMMON_CUDA_12);
        assert_eq!(for_toolkit("Common", "13.0").unwrap(), COMMON_CUDA_13);
        assert_eq!(for_toolkit("Common", "13.2").unwrap(), COMMON_CUDA_13);
        assert!(!COMMON_CUDA_13.contains("5.") && !COMMON_CUDA_13.contains("6."));
        assert!(!COMMON_CUDA_13.contains("7.0"));
    }

    #[test]
    fn common_is_explicit_with_native_code_for_ada_and_blackwell() {
        for list in [COMMON_CUDA_12, COMMON_CUDA_13] {
            let entries: Vec<&str> = list.split(';').collect();
            for sass in ["8.9", "9.0", "10.0", "12.0"] {
                assert!(entries.contains(&sass), "{list} lacks {sass}");
            }
            let ptx: Vec<&&str> = entries.iter().filter(|e| e.ends_with("+PTX")).collect();
            assert_eq!(ptx, [&"12.0+PTX"], "PTX for the newest only: {list}");
        }
    }

    #[test]
    fn a_toolkit_too_old_for_common_is_refused_before_the_build() {
        for version in ["12.2", "12.4", "12.6"] {
            let err = for_toolkit("Common", version).unwrap_err().to_string();
            assert!(err.contains("10.0 (first in CUDA 12.8)"), "{err}");
            assert!(err.contains("12.0+PTX (first in CUDA 12.8)"), "{err}");
            assert!(
                err.contains(&format!("CUDA {version} cannot build")),
                "{err}"
            );
            assert!(err.contains("install CUDA 12.8 or newer"), "{err}");
        }
        let err = for_toolkit("9.0;12.1", "12.8").unwrap_err().to_string();
        assert!(
            err.contains("12.1 (first in CUDA 12.9)") && !err.contains("9.0 ("),
            "{err}"
        );
        let err = for_toolkit("8.9", "11.4").unwrap_err().to_string();
        assert!(err.contains("8.9 (first in CUDA 11.8)"), "{err}");
        assert_eq!(for_toolkit("8.9;9.0+PTX", "11.8").unwrap(), "8.9;9.0+PTX");
    }

    #[test]
    fn an_explicit_list_is_checked_against_the_toolkit() {
        assert_eq!(for_toolkit("9.0", "13.0").unwrap(), "9.0");
        assert_eq!(for_toolkit("6.1;8.6", "12.4").unwrap(), "6.1;8.6");
        let err = for_toolkit("6.1;8.6+PTX", "13.0").unwrap_err().to_string();
        assert!(err.contains("has 6.1 (CUDA 13 starts at 7.5)"), "{err}");
        assert!(err.contains("CUDA 13.0 cannot build"), "{err}");
        let err = for_toolkit("3.5;8.0", "12.8").unwrap_err().to_string();
        assert!(err.contains("has 3.5"), "{err}");
        assert!(for_toolkit("Common", "twelve").is_err());
    }
}
