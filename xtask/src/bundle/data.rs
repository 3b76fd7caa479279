//! Data files bundled next to the libraries, chiefly rocBLAS / hipBLASLt Tensile kernel
//! folders, filtered to the GPU architectures the variant targets: this is where most of an
//! SDK's size goes (rocBLAS's `library/` is ~687 MB over 15 architectures, gfx1010 ~13 MB).

use std::fs;
use std::path::{Path, PathBuf};

use super::glob::matches;

/// The GPU architectures named in a kernel file's name (`…_gfx1030.co`, `…-gfx90a-…`).
pub fn gpu_targets_in(name: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = name;
    while let Some(at) = rest.find("gfx") {
        let tail = &rest[at + 3..];
        let len = tail.bytes().take_while(u8::is_ascii_alphanumeric).count();
        if len > 0 {
            found.push(&rest[at..at + 3 + len]);
        }
        rest = &tail[len..];
    }
    found
}

/// Whether a data file is kept: files for no particular architecture always are; files for
/// some architecture only when one of them is targeted.
pub fn keep(name: &str, targets: &[String]) -> bool {
    let named = gpu_targets_in(name);
    named.is_empty()
        || named
            .iter()
            .any(|t| targets.iter().any(|w| targets_match(w, t)))
}

/// `wanted` is a target (`gfx1100`) or a family whose last character is `X` (`gfx110X`,
/// from TheRock's `gfx110X-dgpu`), which stands for any one character.
fn targets_match(wanted: &str, found: &str) -> bool {
    match wanted.strip_suffix('X') {
        Some(family) => found.len() == wanted.len() && found.starts_with(family),
        None => wanted == found,
    }
}

/// The files under `base` matching `glob` (a path whose last segment may hold `*`/`?`),
/// sorted, optionally filtered to `targets`. A folder that does not exist is an error
/// naming it; an empty match is not.
pub fn select(base: &Path, glob: &str, targets: Option<&[String]>) -> Result<Vec<PathBuf>, String> {
    let (dir, pattern) = match glob.rsplit_once('/') {
        Some((dir, pattern)) => (base.join(dir), pattern),
        None => (base.to_path_buf(), glob),
    };
    let entries = fs::read_dir(&dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            matches(pattern, &name) && targets.is_none_or(|t| keep(&name, t))
        })
        .map(|e| e.path())
        .collect();
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_targets_in_tensile_names() {
        assert_eq!(
            gpu_targets_in("TensileLibrary_lazy_gfx1030.dat"),
            ["gfx1030"]
        );
        assert_eq!(
            gpu_targets_in("Kernels.so-000-gfx90a-xnack+.hsaco"),
            ["gfx90a"]
        );
        assert!(gpu_targets_in("TensileManifest.txt").is_empty());
    }

    #[test]
    fn keeps_neutral_files_and_targeted_ones_only() {
        let want = vec!["gfx1010".to_string()];
        assert!(keep("TensileLibrary_lazy_gfx1010.dat", &want));
        assert!(!keep("TensileLibrary_lazy_gfx1030.dat", &want));
        assert!(keep("TensileManifest.txt", &want));
        assert!(
            !keep("Kernels.so-000-gfx10100.hsaco", &want),
            "no prefix matches"
        );
    }

    #[test]
    fn a_family_keeps_each_of_its_targets_and_no_other() {
        let want = vec!["gfx110X".to_string(), "gfx1151".to_string()];
        assert!(keep("TensileLibrary_gfx1100.dat", &want));
        assert!(keep("TensileLibrary_gfx1103.dat", &want));
        assert!(keep("TensileLibrary_gfx1151.dat", &want));
        assert!(!keep("TensileLibrary_gfx1150.dat", &want));
        assert!(!keep("TensileLibrary_gfx11000.dat", &want));
        assert!(!keep("TensileLibrary_gfx1030.dat", &want));
    }

    #[test]
    fn select_filters_a_folder() {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("bin/rocblas/library");
        fs::create_dir_all(&lib).unwrap();
        for name in [
            "a_gfx1010.co",
            "a_gfx1030.co",
            "b_gfx1100.dat",
            "manifest.txt",
        ] {
            fs::write(lib.join(name), "x").unwrap();
        }
        let want = vec!["gfx1030".to_string(), "gfx1100".to_string()];
        let picked = select(dir.path(), "bin/rocblas/library/*", Some(&want)).unwrap();
        let names: Vec<_> = picked
            .iter()
            .map(|p| p.file_name().unwrap().to_str().unwrap())
            .collect();
        assert_eq!(names, ["a_gfx1030.co", "b_gfx1100.dat", "manifest.txt"]);
        assert_eq!(
            select(dir.path(), "bin/rocblas/library/*", None)
                .unwrap()
                .len(),
            4
        );
        assert!(
            select(dir.path(), "nope/*", None)
                .unwrap_err()
                .contains("cannot list")
        );
    }
}
