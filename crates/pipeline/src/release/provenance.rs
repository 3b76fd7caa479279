//! What a build's provenance report (`provenance.json`, from `--from` or the build's folder)
//! gives a release: the bundled files with their packages, checked before any of it is
//! published in the manifest and the notes.

use std::fs;
use std::path::Path;

use anyhow::{Context, Result};
use serde::Deserialize;

use super::ManifestLibrary;

/// The bundled files of the report at `report`; a row that cannot be published is bad input
/// naming the report and the row.
pub(super) fn bundled_of(report: &Path) -> Result<Vec<ManifestLibrary>> {
    #[derive(Deserialize)]
    struct ProvenanceFiles {
        files: Vec<ManifestLibrary>,
    }
    let text = fs::read_to_string(report)?;
    let parsed: ProvenanceFiles = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a provenance report", report.display()))?;
    let problems: Vec<String> = parsed.files.iter().filter_map(provenance_problem).collect();
    if !problems.is_empty() {
        return Err(ct2v_support::diagnostic::InputError::new(format!(
            "{}: names no bundle writes:\n  {}",
            report.display(),
            problems.join("\n  ")
        ))
        .note("give the provenance.json `cargo xtask bundle` wrote for that build")
        .into());
    }
    Ok(parsed.files)
}

/// Why a bundled file's row of a provenance report cannot be published: its path is not a
/// relative path inside the wheel, or a value holds a control or invisible character, or
/// names a folder of the build machine.
fn provenance_problem(lib: &ManifestLibrary) -> Option<String> {
    use ct2v_support::diagnostic::{hidden, quoted};
    if let Err(why) = ct2v_support::safe_path::check_nonempty(&lib.path) {
        return Some(format!("path {}: {why}", quoted(&lib.path)));
    }
    for (key, value) in [("path", &lib.path), ("package", &lib.package)] {
        if value.chars().any(hidden) {
            return Some(format!(
                "{key} {}: a control or invisible character",
                quoted(value)
            ));
        }
    }
    if names_a_local_folder(&lib.package) {
        return Some(format!(
            "package {}: names a folder of the build machine, which would be published",
            quoted(&lib.package)
        ));
    }
    None
}

/// Whether `text` holds an absolute path: a word starting with `/`, `~/`, `\\` or a drive
/// (`C:\`, `C:/`).
fn names_a_local_folder(text: &str) -> bool {
    text.split(|c: char| c.is_whitespace() || matches!(c, '(' | '"' | '\'' | ','))
        .any(|word| {
            let b = word.as_bytes();
            word.starts_with('/')
                || word.starts_with("~/")
                || word.starts_with("\\\\")
                || (b.len() >= 3
                    && b[0].is_ascii_alphabetic()
                    && b[1] == b':'
                    && matches!(b[2], b'\\' | b'/'))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_packages_variants_name_pass_and_local_folders_do_not() {
        for package in [
            "ROCmLibs v0.6.2.4 rocBLAS for gfx1031 (community build for HIP SDK 6.2.4, \
             littlewu's Tensile logic: ROCm/rocBLAS#1251), from rocm.gfx1031.7z",
            "AMD HIP SDK 6.2.4 for Windows (AMD Software: PRO Edition 24.Q4 for HIP)",
            "rocm_sdk_core 7.2.0.dev0",
            "search folder 2: lib",
            "the C++ compiler's runtime",
        ] {
            assert!(!names_a_local_folder(package), "{package}");
        }
        for package in [
            "/home/runner/sdk",
            "from /opt/rocm/lib",
            "(~/sdk)",
            r"C:\Program Files\AMD\ROCm",
            "D:/sdk",
            r"\\server\share\sdk",
        ] {
            assert!(names_a_local_folder(package), "{package}");
        }
    }
}
