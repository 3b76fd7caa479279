//! Data files bundled next to the libraries, chiefly rocBLAS / hipBLASLt Tensile kernel
//! folders, filtered to the GPU architectures the variant targets: this is where most of an
//! SDK's size goes (rocBLAS's `library/` is ~687 MB over 15 architectures, gfx1010 ~13 MB).
//!
//! Kernel files name their target in the file name (`TensileLibrary_lazy_gfx1030.dat`,
//! `Kernels.so-000-gfx1100.hsaco`) or in a per-architecture sub-folder (`library/gfx1100/…`,
//! as newer TheRock builds lay them out), and may be compressed (`.dat.zlib`). A requested
//! target with no kernel files in a library that has them for other targets is an error:
//! the library would fail on that GPU at run time, so the build must not ship quietly.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use super::glob::matches;
use crate::gpu_targets::targets_in;

/// Whether a data file is kept: files for no particular architecture always are; files for
/// some architecture only when one of them is targeted.
pub fn keep(name: &str, targets: &[String]) -> bool {
    let named = targets_in(name);
    named.is_empty() || named.iter().any(|t| targets.iter().any(|w| w == t))
}

/// The files in `base`/`dir` matching `glob` (a path whose last segment may hold `*`/`?`),
/// sorted, optionally filtered to `targets`. Only that folder, not below it (for roots).
/// A folder that does not exist is an error naming it; an empty match is not.
pub fn select(base: &Path, glob: &str, targets: Option<&[String]>) -> Result<Vec<PathBuf>, String> {
    let (dir, pattern) = split(base, glob);
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

fn split<'a>(base: &Path, glob: &'a str) -> (PathBuf, &'a str) {
    match glob.rsplit_once('/') {
        Some((dir, pattern)) => (base.join(dir), pattern),
        None => (base.to_path_buf(), glob),
    }
}

/// One data file kept: its path below the data folder (`gfx1100/TensileLibrary.dat`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DataFile {
    pub source: PathBuf,
    pub relative: String,
}

/// What [`select_tree`] kept, and the kernel bytes it kept per GPU target.
#[derive(Debug, Default)]
pub(crate) struct DataSelection {
    pub files: Vec<DataFile>,
    pub kernel_bytes: BTreeMap<String, u64>,
}

impl DataSelection {
    /// Keeps only the kernel archives of the libraries in `closure` (file names), and their
    /// bytes per target; a file that is no archive TheRock's table knows is an error.
    pub(crate) fn retain_kernels_of(&mut self, closure: &[String]) -> Result<(), String> {
        let mut kept = Vec::new();
        for file in std::mem::take(&mut self.files) {
            let name = ct2v_support::paths::last_segment(&file.relative);
            if crate::kpack::needed(name, closure)
                .map_err(|e| format!("{}: {e}", file.source.display()))?
            {
                kept.push(file);
            } else {
                let size = fs::metadata(&file.source).map(|m| m.len()).unwrap_or(0);
                for t in targets_in(&file.relative) {
                    if let Some(bytes) = self.kernel_bytes.get_mut(t) {
                        *bytes = bytes.saturating_sub(size);
                    }
                }
            }
        }
        self.kernel_bytes.retain(|_, b| *b > 0);
        self.files = kept;
        Ok(())
    }
}

/// The files below `base`/`dir` (sub-folders included) whose names match `glob`'s last
/// segment, filtered to `targets` by the targets their path names. With `targets`, a
/// requested target that has no file where other targets have some is an error naming the
/// target and the library, unless the variant's TheRock table leaves that library out for that
/// target (`not_built`: library → targets, [`crate::gpu_targets::Table::excluded_for`]).
pub(crate) fn select_tree(
    base: &Path,
    glob: &str,
    targets: Option<&[String]>,
    not_built: &BTreeMap<String, Vec<String>>,
) -> Result<DataSelection, String> {
    let (dir, pattern) = split(base, glob);
    let all = ct2v_support::fsx::files_below(&dir)
        .map_err(|e| format!("cannot list {}: {e:#}", dir.display()))?;
    let mut selection = DataSelection::default();
    let mut found: BTreeSet<String> = BTreeSet::new();
    for (relative, source) in all {
        let name = ct2v_support::paths::last_segment(&relative);
        if !matches(pattern, name) {
            continue;
        }
        let size = fs::metadata(&source).map(|m| m.len()).unwrap_or(0);
        let named = targets_in(&relative);
        found.extend(named.iter().map(|t| t.to_string()));
        let kept = match targets {
            None => true,
            Some(t) => named.is_empty() || named.iter().any(|n| t.iter().any(|w| w == n)),
        };
        if !kept {
            continue;
        }
        for t in named {
            *selection.kernel_bytes.entry(t.to_string()).or_default() += size;
        }
        selection.files.push(DataFile { source, relative });
    }
    if let Some(wanted) = targets
        && !found.is_empty()
    {
        let library = library_name(&dir);
        let missing: Vec<&String> = wanted
            .iter()
            .filter(|t| !found.contains(*t) && !not_built_for(not_built, &library, t))
            .collect();
        if let Some(first) = missing.first() {
            let has: Vec<&str> = found.iter().map(String::as_str).collect();
            return Err(format!(
                "{library} has no kernel files for the requested GPU target {first} in {} \
                 (it has them for {}): {library} would fail on a {first} GPU at run time. \
                 Leave {} out of --gpu-targets, or use an SDK whose {library} was built for it",
                dir.display(),
                has.join(", "),
                missing
                    .iter()
                    .map(|t| t.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    Ok(selection)
}

/// Whether `not_built` leaves `library` (any case) out for `target`.
fn not_built_for(not_built: &BTreeMap<String, Vec<String>>, library: &str, target: &str) -> bool {
    not_built
        .iter()
        .any(|(l, ts)| l.eq_ignore_ascii_case(library) && ts.iter().any(|t| t == target))
}

/// `rocblas` for `…/rocblas/library`, else the folder's own name.
fn library_name(dir: &Path) -> String {
    let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
    match name(dir) {
        Some(n) if n == "library" => dir.parent().and_then(name).unwrap_or(n),
        Some(n) => n,
        None => dir.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    fn library(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for f in files {
            let path = dir.path().join("bin/rocblas/library").join(f);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, "kernel").unwrap();
        }
        dir
    }

    #[test]
    fn per_architecture_folders_and_compressed_files_are_kept_by_target() {
        let dir = library(&[
            "gfx1100/TensileLibrary_lazy.dat.zlib",
            "gfx1100/Kernels.so-000.hsaco",
            "gfx1030/TensileLibrary_lazy.dat.zlib",
            "TensileLibrary_gfx1101.co",
            "TensileManifest.txt",
        ]);
        let want = vec!["gfx1100".to_string(), "gfx1101".to_string()];
        let picked = select_tree(
            dir.path(),
            "bin/rocblas/library/*",
            Some(&want),
            &BTreeMap::new(),
        )
        .unwrap();
        let relative: Vec<&str> = picked.files.iter().map(|f| f.relative.as_str()).collect();
        assert_eq!(
            relative,
            [
                "TensileLibrary_gfx1101.co",
                "TensileManifest.txt",
                "gfx1100/Kernels.so-000.hsaco",
                "gfx1100/TensileLibrary_lazy.dat.zlib",
            ]
        );
        assert_eq!(picked.kernel_bytes["gfx1100"], 12);
        assert_eq!(picked.kernel_bytes["gfx1101"], 6);
        assert!(!picked.kernel_bytes.contains_key("gfx1030"));
    }

    #[test]
    fn a_requested_target_without_kernels_is_an_error_naming_it_and_the_library() {
        let dir = library(&["gfx1100/TensileLibrary.dat", "gfx1030/TensileLibrary.dat"]);
        let want = vec!["gfx1100".to_string(), "gfx1101".to_string()];
        let err = select_tree(
            dir.path(),
            "bin/rocblas/library/*",
            Some(&want),
            &BTreeMap::new(),
        )
        .unwrap_err();
        assert!(err.contains("rocblas has no kernel files"), "{err}");
        assert!(err.contains("requested GPU target gfx1101"), "{err}");
        assert!(err.contains("gfx1030, gfx1100"), "{err}");
        // A folder with no kernel files at all names no target: nothing to check.
        let plain = library(&["TensileManifest.txt"]);
        assert!(
            select_tree(
                plain.path(),
                "bin/rocblas/library/*",
                Some(&want),
                &BTreeMap::new()
            )
            .is_ok()
        );
    }

    /// The exclusions are the variant's table's, not one release's for all: ROCm 7.2 does not
    /// build hipBLASLt for gfx1030 or gfx1102, ROCm 10.0 builds it for gfx1102.
    #[test]
    fn hipblaslt_may_lack_only_what_the_variants_table_does_not_build_it_for() {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("hipblaslt/library");
        fs::create_dir_all(&lib).unwrap();
        fs::write(lib.join("TensileLibrary_gfx1100.dat"), "k").unwrap();
        let table = |targets: &[&str]| {
            BTreeMap::from([(
                "hipblaslt".to_string(),
                targets.iter().map(|t| t.to_string()).collect::<Vec<_>>(),
            )])
        };
        let rocm_7_2 = table(&["gfx1030", "gfx1102"]);
        let rocm_10_0 = table(&["gfx1030"]);
        for want in [["gfx1030", "gfx1100"], ["gfx1102", "gfx1100"]] {
            let want: Vec<String> = want.iter().map(|t| t.to_string()).collect();
            let picked = select_tree(dir.path(), "hipblaslt/library/*", Some(&want), &rocm_7_2);
            assert_eq!(picked.unwrap().files.len(), 1, "{want:?}");
        }
        let want = vec!["gfx1030".to_string(), "gfx1100".to_string()];
        assert!(select_tree(dir.path(), "hipblaslt/library/*", Some(&want), &rocm_10_0).is_ok());
        let want = vec!["gfx1102".to_string(), "gfx1100".to_string()];
        let err =
            select_tree(dir.path(), "hipblaslt/library/*", Some(&want), &rocm_10_0).unwrap_err();
        assert!(err.contains("requested GPU target gfx1102"), "{err}");
        // Nothing known to be left out: every requested target needs its files.
        let err = select_tree(
            dir.path(),
            "hipblaslt/library/*",
            Some(&want),
            &BTreeMap::new(),
        )
        .unwrap_err();
        assert!(err.contains("hipblaslt has no kernel files"), "{err}");
    }
}
