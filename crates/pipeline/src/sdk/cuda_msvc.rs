//! Which CUDA toolkits can compile with which MSVC. CUDA 12.3 and older refuse MSVC 19.40+
//! (Visual Studio 2022 17.10+, the MSVC on windows-2022 runners is 19.44): their
//! `crt/host_config.h` stops with "unsupported Microsoft Visual Studio version! Only the
//! versions between 2017 and 2022 (inclusive) are supported!" once `_MSC_VER >= 1940`, and
//! MSVC's own STL stops with "STL1002: Unexpected compiler version, expected CUDA 12.4 or
//! newer" (microsoft/STL `stl/inc/yvals_core.h`). Upstream CTranslate2 v4.7.1 builds its
//! Windows wheels with CUDA 12.8.1 (python/tools/prepare_build_environment_windows.sh).

/// The first MSVC compiler version CUDA ≤ 12.3 rejects, and the first CUDA that accepts it.
const MSVC_FIRST_REJECTED: (u32, u32) = (19, 40);
const CUDA_FIRST_ACCEPTING: (u32, u32) = (12, 4);

/// `(major, minor)` of "12.8", "12.8.93" or "19.44.35207".
fn major_minor(version: &str) -> Option<(u32, u32)> {
    let mut parts = version.split('.').map(|p| p.trim().parse::<u32>().ok());
    Some((parts.next()??, parts.next()??))
}

/// The compiler version in `cl`'s banner ("Microsoft (R) C/C++ Optimizing Compiler Version
/// 19.44.35207 for x64").
pub(crate) fn cl_version(banner: &str) -> Option<&str> {
    let (_, rest) = banner.split_once("Version ")?;
    rest.split_whitespace().next()
}

/// Why the CUDA toolkit `cuda` ("12.2") cannot compile with the MSVC whose banner is `banner`,
/// if it cannot. Versions that cannot be read are not judged.
pub fn problem(cuda: &str, banner: &str) -> Option<String> {
    let cl = cl_version(banner)?;
    let (cuda_v, cl_v) = (major_minor(cuda)?, major_minor(cl)?);
    if cuda_v < CUDA_FIRST_ACCEPTING && cl_v >= MSVC_FIRST_REJECTED {
        return Some(format!(
            "CUDA {cuda} cannot compile with MSVC {cl}: CUDA 12.3 and older reject MSVC 19.40 and \
             newer (their host_config.h: \"unsupported Microsoft Visual Studio version\"; MSVC's \
             STL: \"STL1002 … expected CUDA 12.4 or newer\"). Install CUDA 12.4 or newer; \
             CTranslate2's own Windows wheels use 12.8.1"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const CL_1944: &str = "Microsoft (R) C/C++ Optimizing Compiler Version 19.44.35207 for x64";
    const CL_1939: &str = "Microsoft (R) C/C++ Optimizing Compiler Version 19.39.33523 for x64";

    #[test]
    fn cuda_12_3_and_older_with_msvc_19_40_and_newer_is_refused_with_both_versions() {
        let why = problem("12.2", CL_1944).unwrap();
        assert!(
            why.contains("CUDA 12.2") && why.contains("MSVC 19.44.35207"),
            "{why}"
        );
        assert!(why.contains("12.8.1"), "{why}");
        assert!(problem("12.3", "… Version 19.40.33811 for x64").is_some());
        assert!(problem("11.8", CL_1944).is_some());
    }

    #[test]
    fn newer_cuda_or_older_msvc_pass_and_unreadable_versions_are_not_judged() {
        assert_eq!(problem("12.4", CL_1944), None);
        assert_eq!(problem("12.8", CL_1944), None);
        assert_eq!(problem("13.0", CL_1944), None);
        assert_eq!(problem("12.2", CL_1939), None);
        assert_eq!(problem("12.2", ""), None);
        assert_eq!(problem("unknown", CL_1944), None);
        assert_eq!(cl_version(CL_1944), Some("19.44.35207"));
    }
}
