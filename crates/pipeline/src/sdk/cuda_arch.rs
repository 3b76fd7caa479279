//! CTranslate2's `CUDA_ARCH_LIST` for the CUDA toolkit a build finds.
//!
//! CTranslate2 4.7.1's CMakeLists.txt turns `Common` into CMake's
//! `CUDA_COMMON_GPU_ARCHITECTURES` (FindCUDA/select_compute_arch.cmake of the pinned CMake
//! 3.31), adding 3.5 and 5.0 only for CUDA 11. That module stops at CUDA 11.1, so for every
//! newer toolkit it gives `5.3 6.0 6.1 7.0 7.5 8.0 8.6 8.6+PTX`, and CUDA 13 removed offline
//! compilation for sm_50 to sm_72 (Maxwell, Pascal, Volta): nvcc 13 stops with "Unsupported
//! gpu architecture 'compute_53'". So `Common` is written out here per toolkit, and an
//! explicit list with an architecture the toolkit cannot build is refused before anything
//! (oneDNN included) is built.

use anyhow::{Result, bail};

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

/// The `CUDA_ARCH_LIST` for `requested` (the variant's `cuda-arch` or `--cuda-arch`) and the
/// toolkit's `version` ("12.8", "13.0").
pub(crate) fn for_toolkit(requested: &str, version: &str) -> Result<String> {
    let Some(major) = version
        .split('.')
        .next()
        .and_then(|m| m.parse::<u32>().ok())
    else {
        bail!("cannot read the CUDA toolkit's version `{version}` (from nvcc --version)");
    };
    if requested == "Common" {
        return Ok(crate::variant::coverage::common_for_major(major).to_string());
    }
    let floor = oldest(major);
    let too_old: Vec<&str> = requested
        .split([';', ' ', ','])
        .filter(|a| {
            a.trim_end_matches("+PTX")
                .parse::<f32>()
                .is_ok_and(|n| n < floor)
        })
        .collect();
    if !too_old.is_empty() {
        bail!(
            "CUDA_ARCH_LIST `{requested}` has {}, which CUDA {version} cannot build (its oldest \
             is {floor}): pass --cuda-arch with architectures from {floor} up (e.g. --cuda-arch \
             Common, which is {} for CUDA {major}), or use a CUDA 12.x toolkit",
            too_old.join(", "),
            if major >= 13 {
                COMMON_CUDA_13
            } else {
                COMMON_CUDA_12
            }
        );
    }
    Ok(requested.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_follows_the_toolkit() {
        assert_eq!(for_toolkit("Common", "12.2").unwrap(), COMMON_CUDA_12);
        assert_eq!(for_toolkit("Common", "12.8").unwrap(), COMMON_CUDA_12);
        assert_eq!(for_toolkit("Common", "13.0").unwrap(), COMMON_CUDA_13);
        assert!(!COMMON_CUDA_13.contains("5.") && !COMMON_CUDA_13.contains("6."));
        assert!(!COMMON_CUDA_13.contains("7.0"));
    }

    #[test]
    fn an_explicit_list_is_checked_against_the_toolkit() {
        assert_eq!(for_toolkit("9.0", "13.0").unwrap(), "9.0");
        assert_eq!(for_toolkit("6.1;8.6", "12.4").unwrap(), "6.1;8.6");
        let err = for_toolkit("6.1;8.6+PTX", "13.0").unwrap_err().to_string();
        assert!(err.contains("has 6.1"), "{err}");
        assert!(err.contains("CUDA 13.0 cannot build"), "{err}");
        let err = for_toolkit("3.5;8.0", "12.8").unwrap_err().to_string();
        assert!(err.contains("has 3.5"), "{err}");
        assert!(for_toolkit("Common", "twelve").is_err());
    }
}
