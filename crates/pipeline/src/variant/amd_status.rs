//! AMD's own status of a GPU target on an OS where it is less than its other targets': TheRock
//! lists each target per OS as "Build Passing", "Sanity Tested" and "Release Ready", and a few
//! of the targets our ROCm 10 families build for are only "Build Passing" (their kernels
//! compile; AMD has not run them there). The card table says so beside the build.

use std::collections::BTreeMap;

use ct2v_support::platform::Platform;

/// What the card table and `variants.json` say for such a target.
pub const BUILD_PASSING_ONLY: &str = "build passing only";

/// `(ROCm major, target, platform)` that AMD lists as "Build Passing" and neither sanity-tested
/// nor release-ready: ROCm/TheRock release/therock-10.0 @16adc4d SUPPORTED_GPUS.md, "AMD Radeon -
/// Linux" L50 (gfx1153) and "AMD Radeon - Windows" L80-82 (gfx1201, gfx1200, gfx1153); every
/// other RDNA target there (L48-67, L83-99) is all three.
const BUILD_PASSING: &[(u32, &str, Platform)] = &[
    (10, "gfx1153", Platform::LinuxX86_64),
    (10, "gfx1201", Platform::WindowsX86_64),
    (10, "gfx1200", Platform::WindowsX86_64),
    (10, "gfx1153", Platform::WindowsX86_64),
];

/// Platform name → AMD's status of `target` there, for a build that carries TheRock's ROCm
/// `rocm` (`10.0.0`) and is released for `platforms`; empty where AMD lists nothing less.
pub(crate) fn of(
    rocm: Option<&str>,
    target: &str,
    platforms: &[String],
) -> BTreeMap<String, String> {
    let major = rocm
        .and_then(|v| v.split('.').next()?.parse::<u32>().ok())
        .unwrap_or(0);
    BUILD_PASSING
        .iter()
        .filter(|(m, t, p)| *m == major && *t == target && platforms.iter().any(|n| n == p.name()))
        .map(|(_, _, p)| (p.name().to_string(), BUILD_PASSING_ONLY.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_rocm_10_builds_of_the_listed_targets_on_their_platforms_get_a_status() {
        let both = ["linux-x86_64".to_string(), "windows-x86_64".to_string()];
        let windows = of(Some("10.0.0"), "gfx1201", &both);
        assert_eq!(
            windows,
            BTreeMap::from([("windows-x86_64".into(), BUILD_PASSING_ONLY.into())])
        );
        assert_eq!(of(Some("10.0.0"), "gfx1153", &both).len(), 2);
        assert!(
            of(Some("10.0.0"), "gfx1201", &both[..1]).is_empty(),
            "not released there"
        );
        assert!(
            of(Some("7.2.0"), "gfx1201", &both).is_empty(),
            "another ROCm's list"
        );
        assert!(of(None, "gfx1201", &both).is_empty(), "a HIP SDK build");
        assert!(of(Some("10.0.0"), "gfx1100", &both).is_empty());
    }
}
