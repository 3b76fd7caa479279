//! Which HIP 7 runtime an installed ROCm 10 family wheel loads on Windows: its own copy
//! (`ctranslate2/_rocm/bin/amdhip64_7.dll`) or the display driver's in System32, by the rule
//! the wheel's `ctranslate2/_rocm_runtime.py` applies (patches/ctranslate2-*/0004): the newer
//! file version, the bundled copy on a tie or when a version is unreadable, and
//! `CT2_HIP_RUNTIME=bundled` or `=system` forcing either. The two must stay the same rule.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::facts::DriverRuntime;

/// The runtime's file name (ROCm 10 ships HIP 7).
pub const RUNTIME: &str = "amdhip64_7.dll";
/// The environment variable that forces a copy.
pub const CHOICE: &str = "CT2_HIP_RUNTIME";

#[derive(Debug, Clone, Serialize)]
pub struct HipRuntimeChoice {
    /// The site-packages folder examined.
    pub site_packages: PathBuf,
    /// The wheel's own copy; `None` when no ROCm 10 family wheel is installed there.
    pub bundled: Option<DriverRuntime>,
    /// The display driver's copy in System32.
    pub system: Option<DriverRuntime>,
    /// `CT2_HIP_RUNTIME`, as set.
    pub forced: Option<String>,
    /// The copy `import ctranslate2` loads; `None` when it refuses to start or no family
    /// wheel is installed.
    pub loads: Option<PathBuf>,
    /// Why, in words.
    pub why: String,
}

/// The choice for the wheel in `site_packages`, with the driver's copy under `system_root`.
pub fn examine(site_packages: &Path, system_root: Option<&Path>) -> HipRuntimeChoice {
    let bundled = DriverRuntime::at(
        &site_packages
            .join("ctranslate2")
            .join("_rocm")
            .join("bin")
            .join(RUNTIME),
    );
    let system = system_root.and_then(|root| DriverRuntime::find(root, RUNTIME));
    let forced = std::env::var(CHOICE).ok();
    let (loads, why) = choose(bundled.as_ref(), system.as_ref(), forced.as_deref());
    HipRuntimeChoice {
        site_packages: site_packages.to_path_buf(),
        bundled,
        system,
        forced,
        loads,
        why,
    }
}

/// The rule: which copy loads, and why.
pub fn choose(
    bundled: Option<&DriverRuntime>,
    system: Option<&DriverRuntime>,
    forced: Option<&str>,
) -> (Option<PathBuf>, String) {
    let Some(bundled) = bundled else {
        return (
            None,
            "no ROCm 10 family wheel is installed there (no ctranslate2/_rocm/bin)".into(),
        );
    };
    let raw = forced.unwrap_or("");
    match (raw.trim().to_ascii_lowercase().as_str(), system) {
        ("" | "newer", Some(system)) => match (bundled.version, system.version) {
            (Some(ours), Some(theirs)) if theirs > ours => (
                Some(system.path.clone()),
                format!(
                    "the display driver's {} is newer than the bundled {}",
                    system.version_text(),
                    bundled.version_text()
                ),
            ),
            _ => (
                Some(bundled.path.clone()),
                format!(
                    "the bundled {} is not older than the display driver's {}",
                    bundled.version_text(),
                    system.version_text()
                ),
            ),
        },
        ("" | "newer", None) => (
            Some(bundled.path.clone()),
            format!("the display driver installed no {RUNTIME} in System32"),
        ),
        ("bundled", _) => (Some(bundled.path.clone()), format!("{CHOICE}=bundled")),
        ("system", Some(system)) => (Some(system.path.clone()), format!("{CHOICE}=system")),
        ("system", None) => (
            None,
            format!(
                "{CHOICE}=system, but there is no {RUNTIME} in System32: install AMD's \
                 display driver, or unset {CHOICE}"
            ),
        ),
        (_, _) => (
            None,
            format!(
                "{CHOICE}={raw:?} is not bundled, system or newer: set one of those, or \
                 unset it"
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime(path: &str, version: Option<[u16; 4]>) -> DriverRuntime {
        DriverRuntime {
            path: PathBuf::from(path),
            version,
        }
    }

    #[test]
    fn the_newer_copy_loads_the_bundled_one_on_a_tie_and_the_variable_forces_either() {
        let ours = runtime("ours", Some([7, 2, 0, 0]));
        let older = runtime("system", Some([7, 1, 9, 9]));
        let newer = runtime("system", Some([7, 2, 0, 1]));
        let unversioned = runtime("system", None);
        let loads = |system: Option<&DriverRuntime>, forced: Option<&str>| {
            choose(Some(&ours), system, forced)
                .0
                .map(|p| p.display().to_string())
        };
        assert_eq!(loads(Some(&older), None).as_deref(), Some("ours"));
        assert_eq!(loads(Some(&newer), None).as_deref(), Some("system"));
        assert_eq!(
            loads(Some(&newer), Some("newer")).as_deref(),
            Some("system")
        );
        assert_eq!(loads(Some(&ours.clone()), None).as_deref(), Some("ours"));
        assert_eq!(loads(Some(&unversioned), None).as_deref(), Some("ours"));
        assert_eq!(loads(None, None).as_deref(), Some("ours"));
        assert_eq!(
            loads(Some(&newer), Some("bundled")).as_deref(),
            Some("ours")
        );
        assert_eq!(
            loads(Some(&older), Some(" System ")).as_deref(),
            Some("system")
        );
        assert_eq!(loads(None, Some("system")), None);
        let (none, why) = choose(Some(&ours), Some(&older), Some("driver\n"));
        assert!(none.is_none() && why.contains("\"driver\\n\""), "{why}");
        assert!(choose(None, Some(&newer), None).0.is_none());
    }
}
