//! Why `import ctranslate2` failed on Windows, in words the loader does not give: CPython says
//! only "Could not find module '…\ctranslate2.dll' (or one of its dependencies)". The
//! installed package's DLLs are followed through their import tables over the folders its
//! `__init__.py` adds with `os.add_dll_directory` (OpenNMT/CTranslate2 v4.7.1
//! python/ctranslate2/__init__.py: the package folder, `../_rocm_sdk_core/bin`,
//! `../_rocm_sdk_libraries_custom/bin`; 4.8.3 and later, and our 0004 patch: every
//! `../_rocm_sdk_libraries*/bin`, so ROCm 10's `_rocm_sdk_libraries/bin` too; the ROCm 10
//! family wheels' own `ctranslate2/_rocm/bin`, which our 0004 patch adds) and Windows' own
//! DLLs; what is found nowhere is named with the DLL that imports it.

use std::path::Path;

use ct2v_bundle::bundler::closure::{self, ClosureError, ClosureParams, LibraryFolder};
use ct2v_bundle::bundler::policy::SystemLibraries;
use ct2v_bundle::bundler::{Policy, glob, run::read_imports};

/// The folders, relative to site-packages, that CTranslate2's `__init__.py` adds.
pub(crate) const DLL_FOLDERS: [&str; 5] = [
    "ctranslate2",
    "ctranslate2/_rocm/bin",
    "_rocm_sdk_core/bin",
    "_rocm_sdk_libraries_custom/bin",
    "_rocm_sdk_libraries/bin",
];

/// The DLLs the package in `site_packages` imports and the loader would not find, one line
/// each (`hipblas.dll, imported by ctranslate2.dll`); `None` when every one is found.
pub(crate) fn missing_dlls(site_packages: &Path) -> Option<String> {
    let package = site_packages.join("ctranslate2");
    let roots: Vec<_> = std::fs::read_dir(&package)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .to_lowercase();
            glob::matches("*.dll", &name) || glob::matches("_ext*.pyd", &name)
        })
        .map(|p| (p, "ctranslate2".to_string()))
        .collect();
    let locations: Vec<LibraryFolder> = DLL_FOLDERS
        .iter()
        .map(|f| site_packages.join(f))
        .filter(|d| d.is_dir())
        .map(|dir| LibraryFolder {
            dest: String::new(),
            package: String::new(),
            in_wheel: true,
            dir,
        })
        .collect();
    let system = SystemLibraries::for_policy(Policy::Windows);
    let inputs = ClosureParams {
        roots,
        forced: &[],
        locations: &locations,
        system: &system,
    };
    match closure::resolve(&inputs, &read_imports) {
        Err(ClosureError::Missing { missing, .. }) => Some(
            missing
                .iter()
                .map(|(name, by)| {
                    let by: Vec<&str> = by.iter().map(String::as_str).collect();
                    format!("{name}, imported by {}", by.join(", "))
                })
                .collect::<Vec<_>>()
                .join("; "),
        ),
        _ => None,
    }
}
