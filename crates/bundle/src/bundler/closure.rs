//! The dependency closure: from the root binaries, resolve every import against an ordered
//! list of search locations, transitively, skipping what the operating system provides.
//! Libraries loaded at run time (which no import table names) are added as forced roots.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use ct2v_support::diagnostic::escaped;

use super::glob::matches;
use super::policy::SystemLibraries;

/// A folder libraries may come from, and where the ones found there are placed.
#[derive(Debug, Clone)]
pub struct LibraryFolder {
    pub dir: PathBuf,
    /// Destination folder relative to the wheel's root.
    pub dest: String,
    /// Who provides the files here, for the report (e.g. "rocm_sdk_core 7.2.0.dev0").
    pub package: String,
    /// Files here are already in the wheel: they are resolved but not copied.
    pub in_wheel: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Library {
    pub name: String,
    pub source: PathBuf,
    pub dest: String,
    pub package: String,
    pub in_wheel: bool,
    /// `true` for roots and forced libraries.
    pub root: bool,
    /// Who imports it; "loaded at run time" for forced libraries.
    pub(crate) needed_by: BTreeSet<String>,
}

#[derive(Debug, Default, Serialize)]
pub struct Closure {
    /// Every non-system library reached, roots first, then in the order found.
    pub libraries: Vec<Library>,
    /// System libraries imported, and by whom (never bundled).
    pub system: BTreeMap<String, BTreeSet<String>>,
}

#[derive(Debug, thiserror::Error)]
pub enum ClosureError {
    #[error("{}", missing_message(.missing, .other_versions, .unsearched, .searched))]
    Missing {
        missing: BTreeMap<String, BTreeSet<String>>,
        /// Missing library → files in the search folders that are another version of it
        /// (`amdhip64_6.dll` for `amdhip64_7.dll`): an SDK of the wrong major version.
        other_versions: BTreeMap<String, Vec<PathBuf>>,
        /// Missing library → files of that very name in a folder below a search folder that
        /// no search entry lists: the search is short of a folder.
        unsearched: BTreeMap<String, Vec<PathBuf>>,
        searched: Vec<PathBuf>,
    },
    #[error("forced library pattern `{pattern}` matches no file in:\n{}{}", list(.searched), other_builds(.pattern, .others))]
    ForcedNotFound {
        pattern: String,
        searched: Vec<PathBuf>,
        /// Files that are another version of the forced library (`amd_comgr0701.dll`).
        others: Vec<PathBuf>,
    },
    #[error("cannot read the imports of {path}: {reason}")]
    Unreadable { path: PathBuf, reason: String },
    #[error("cannot list {dir}: {reason}")]
    Unlistable { dir: PathBuf, reason: String },
}

fn list(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| format!("  {}", p.display()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `but X is there: …`, said of a file that is another version or build of `name`. HIP SDK
/// 7.1 for Windows ships `libhipblas.dll` and `amd_comgr0701.dll` where TheRock's 7.2
/// wheels have `hipblas.dll` and `amd_comgr0702.dll`; 6.x has `amdhip64_6.dll`.
fn another_version(other: &Path, name: &str) -> String {
    let lower = name.to_lowercase();
    let example = if lower.contains("hip") || lower.contains("comgr") || lower.contains("roc") {
        " (HIP SDK 7.1 ships libhipblas.dll and amd_comgr0701.dll where the 7.2 wheels have \
         hipblas.dll and amd_comgr0702.dll)"
    } else {
        ""
    };
    format!(
        "but {} is there: another version of {name}, from another version of its package \
         than the one these binaries were built against{example}",
        other.display()
    )
}

fn other_builds(pattern: &str, others: &[PathBuf]) -> String {
    others
        .iter()
        .map(|o| format!("\n    {}", another_version(o, pattern)))
        .collect()
}

fn missing_message(
    missing: &BTreeMap<String, BTreeSet<String>>,
    other_versions: &BTreeMap<String, Vec<PathBuf>>,
    unsearched: &BTreeMap<String, Vec<PathBuf>>,
    searched: &[PathBuf],
) -> String {
    let mut text = format!(
        "{} imported librar{} found nowhere:\n",
        missing.len(),
        if missing.len() == 1 {
            "y is"
        } else {
            "ies are"
        }
    );
    for (name, importers) in missing {
        let who: Vec<&str> = importers.iter().map(String::as_str).collect();
        text.push_str(&format!("  {name}  (imported by {})\n", who.join(", ")));
        for other in other_versions.get(name).into_iter().flatten() {
            text.push_str(&format!("    {}\n", another_version(other, name)));
        }
        for copy in unsearched.get(name).into_iter().flatten() {
            let folder = copy.parent().unwrap_or(copy);
            text.push_str(&format!(
                "    but {} is there, in a folder no search entry lists: add {} to the \
                 bundle's search (the variant's `[bundle] search`, or --search)\n",
                escaped(&copy.display().to_string()),
                escaped(&folder.display().to_string())
            ));
        }
    }
    text.push_str("searched, in order:\n");
    text.push_str(&list(searched));
    text
}

/// What `needed_by` says for a library loaded at run time (forced), not imported.
pub(crate) const RUN_TIME: &str = "loaded at run time";

/// Reads the names a binary imports (import and delay-import tables, or DT_NEEDED).
pub(crate) type ReadImports<'a> = &'a dyn Fn(&Path) -> Result<Vec<String>, String>;

pub struct ClosureParams<'a> {
    /// Binaries already in the wheel whose imports are followed: (path, dest folder).
    pub roots: Vec<(PathBuf, String)>,
    /// File-name globs of libraries loaded at run time.
    pub forced: &'a [String],
    pub locations: &'a [LibraryFolder],
    pub system: &'a SystemLibraries,
}

pub fn resolve(inputs: &ClosureParams, read_imports: ReadImports) -> Result<Closure, ClosureError> {
    let system = inputs.system;
    let index = index_locations(inputs.locations, system)?;
    let searched: Vec<PathBuf> = inputs.locations.iter().map(|l| l.dir.clone()).collect();

    let mut walk = Walk {
        system,
        closure: Closure::default(),
        by_key: BTreeMap::new(),
        queue: VecDeque::new(),
    };

    for (path, dest) in &inputs.roots {
        let name = file_name(path);
        let library = Library {
            name,
            source: path.clone(),
            dest: dest.clone(),
            package: "wheel".to_string(),
            in_wheel: true,
            root: true,
            needed_by: BTreeSet::new(),
        };
        walk.add(library);
    }
    for pattern in inputs.forced {
        walk.add_forced(pattern, &index, &searched)?;
    }

    let missing = walk.follow_imports(&index, read_imports)?;
    if missing.is_empty() {
        return Ok(walk.closure);
    }
    Err(ClosureError::Missing {
        other_versions: other_versions(&missing, &index, system),
        unsearched: unsearched_copies(&missing, &searched),
        missing,
        searched,
    })
}

/// How deep below a search folder, and how many entries in all, [`unsearched_copies`] looks.
const UNSEARCHED_DEPTH: usize = 4;
const UNSEARCHED_ENTRIES: usize = 20_000;

/// For each missing library, the files of that exact name in the folders below the search
/// folders that are not search folders themselves (TheRock's Linux `rocm-sdk-core` keeps the
/// HSA runtime's libraries in `lib/rocm_sysdeps/lib`, below `lib/`). Links are not followed,
/// and the look is bounded in depth and in entries read: it only makes the error say more.
fn unsearched_copies(
    missing: &BTreeMap<String, BTreeSet<String>>,
    searched: &[PathBuf],
) -> BTreeMap<String, Vec<PathBuf>> {
    let mut found: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    let mut budget = UNSEARCHED_ENTRIES;
    let mut queue: VecDeque<(PathBuf, usize)> = searched.iter().map(|d| (d.clone(), 0)).collect();
    while let Some((dir, depth)) = queue.pop_front() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<_> = entries.filter_map(|e| e.ok()).collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            if budget == 0 {
                return found;
            }
            budget -= 1;
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() && depth < UNSEARCHED_DEPTH && !searched.contains(&path) {
                queue.push_back((path, depth + 1));
            } else if depth > 0 && (kind.is_file() || kind.is_symlink()) {
                let name = entry.file_name().to_string_lossy().into_owned();
                // DLL names are matched as Windows matches them, without regard to case.
                let wanted = missing.keys().find(|k| {
                    **k == name
                        || (k.to_ascii_lowercase().ends_with(".dll")
                            && k.eq_ignore_ascii_case(&name))
                });
                if let Some(wanted) = wanted {
                    found.entry(wanted.clone()).or_default().push(path);
                }
            }
        }
    }
    found
}

/// For each missing library, the files in the search folders that are another version of it.
fn other_versions(
    missing: &BTreeMap<String, BTreeSet<String>>,
    index: &BTreeMap<String, Found>,
    system: &SystemLibraries,
) -> BTreeMap<String, Vec<PathBuf>> {
    missing
        .keys()
        .map(|name| {
            let key = system.key(name);
            let family = version_family(&key);
            let others: Vec<PathBuf> = index
                .values()
                .filter(|f| version_family(&f.key) == family)
                .map(|f| f.path.clone())
                .collect();
            (name.clone(), others)
        })
        .filter(|(_, others)| !others.is_empty())
        .collect()
}

/// A library's name without its version: `amdhip64_7.dll` and `amdhip64_6.dll` are both
/// `amdhip64`, `libamdhip64.so.6` is `libamdhip64`, `amd_comgr0702.dll` is `amd_comgr`, and
/// a DLL's `lib` prefix is not part of it (`libhipblas.dll` is `hipblas`).
fn version_family(key: &str) -> &str {
    if let Some(at) = key.find(".so") {
        return &key[..at];
    }
    let stem = key.rsplit_once('.').map_or(key, |(stem, _)| stem);
    let stem = stem.strip_prefix("lib").unwrap_or(stem);
    let stem = stem.trim_end_matches(|c: char| c.is_ascii_digit());
    match stem.strip_suffix('_') {
        Some(without) if !without.is_empty() => without,
        _ => stem,
    }
}

/// The closure being built, breadth first.
struct Walk<'a> {
    system: &'a SystemLibraries,
    closure: Closure,
    by_key: BTreeMap<String, usize>,
    queue: VecDeque<usize>,
}

impl Walk<'_> {
    /// Adds a library (or merges who needs it, if already there) and queues its imports.
    fn add(&mut self, library: Library) {
        let key = self.system.key(&library.name);
        if let Some(&at) = self.by_key.get(&key) {
            let existing = &mut self.closure.libraries[at];
            existing.needed_by.extend(library.needed_by);
            existing.root |= library.root;
            return;
        }
        self.by_key.insert(key, self.closure.libraries.len());
        self.queue.push_back(self.closure.libraries.len());
        self.closure.libraries.push(library);
    }

    /// Adds every file that matches a forced pattern as a root loaded at run time.
    fn add_forced(
        &mut self,
        pattern: &str,
        index: &BTreeMap<String, Found>,
        searched: &[PathBuf],
    ) -> Result<(), ClosureError> {
        let pattern_key = self.system.key(pattern);
        let found: Vec<&Found> = index
            .values()
            .filter(|f| matches(&pattern_key, &f.key))
            .collect();
        if found.is_empty() {
            let family = version_family(&pattern_key);
            return Err(ClosureError::ForcedNotFound {
                pattern: pattern.to_string(),
                searched: searched.to_vec(),
                others: index
                    .values()
                    .filter(|f| !pattern.contains(['*', '?']) && version_family(&f.key) == family)
                    .map(|f| f.path.clone())
                    .collect(),
            });
        }
        for f in found {
            let mut library = f.library();
            library.root = true;
            library.needed_by.insert(RUN_TIME.to_string());
            self.add(library);
        }
        Ok(())
    }

    /// Follows the queued libraries' imports until none is left; the imports found nowhere,
    /// with who imports them.
    fn follow_imports(
        &mut self,
        index: &BTreeMap<String, Found>,
        read_imports: ReadImports,
    ) -> Result<BTreeMap<String, BTreeSet<String>>, ClosureError> {
        let mut missing: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        while let Some(at) = self.queue.pop_front() {
            let (importer, source) = {
                let l = &self.closure.libraries[at];
                (l.name.clone(), l.source.clone())
            };
            let imports = read_imports(&source).map_err(|reason| ClosureError::Unreadable {
                path: source.clone(),
                reason,
            })?;
            for import in imports {
                if self.system.contains(&import) {
                    self.closure
                        .system
                        .entry(import)
                        .or_default()
                        .insert(importer.clone());
                    continue;
                }
                let key = self.system.key(&import);
                if let Some(&known) = self.by_key.get(&key) {
                    self.closure.libraries[known]
                        .needed_by
                        .insert(importer.clone());
                    continue;
                }
                match index.get(&key) {
                    Some(found) => {
                        let mut library = found.library();
                        library.needed_by.insert(importer.clone());
                        self.add(library);
                    }
                    None => {
                        missing.entry(import).or_default().insert(importer.clone());
                    }
                }
            }
        }
        Ok(missing)
    }
}

/// A file found in a search location.
struct Found {
    key: String,
    name: String,
    path: PathBuf,
    location: LibraryFolder,
}

impl Found {
    fn library(&self) -> Library {
        Library {
            name: self.name.clone(),
            source: self.path.clone(),
            dest: self.location.dest.clone(),
            package: self.location.package.clone(),
            in_wheel: self.location.in_wheel,
            root: false,
            needed_by: BTreeSet::new(),
        }
    }
}

/// Every file in the locations by its comparison key; the first location that has a name wins.
fn index_locations(
    locations: &[LibraryFolder],
    system: &SystemLibraries,
) -> Result<BTreeMap<String, Found>, ClosureError> {
    let mut index = BTreeMap::new();
    for location in locations {
        let entries = fs::read_dir(&location.dir).map_err(|e| ClosureError::Unlistable {
            dir: location.dir.clone(),
            reason: e.to_string(),
        })?;
        let mut names: Vec<(String, PathBuf)> = entries
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file() || t.is_symlink()))
            .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
            .collect();
        names.sort();
        for (name, path) in names {
            let key = system.key(&name);
            index.entry(key.clone()).or_insert(Found {
                key,
                name,
                path,
                location: location.clone(),
            });
        }
    }
    Ok(index)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundler::Policy;

    /// A fake SDK: files on disk (empty) and an import graph in memory.
    struct Tree {
        dir: tempfile::TempDir,
        graph: BTreeMap<String, Vec<String>>,
    }

    impl Tree {
        fn new(files: &[(&str, &[&str])]) -> Tree {
            let dir = tempfile::tempdir().unwrap();
            let mut graph = BTreeMap::new();
            for (path, imports) in files {
                let full = dir.path().join(path);
                fs::create_dir_all(full.parent().unwrap()).unwrap();
                fs::write(&full, b"").unwrap();
                graph.insert(
                    file_name(&full),
                    imports.iter().map(|s| s.to_string()).collect(),
                );
            }
            Tree { dir, graph }
        }

        fn location(&self, dir: &str, dest: &str, package: &str) -> LibraryFolder {
            LibraryFolder {
                dir: self.dir.path().join(dir),
                dest: dest.to_string(),
                package: package.to_string(),
                in_wheel: dir == "wheel",
            }
        }

        fn resolve(
            &self,
            roots: &[&str],
            forced: &[&str],
            locations: &[LibraryFolder],
        ) -> Result<Closure, ClosureError> {
            let system = SystemLibraries::for_policy(Policy::Windows);
            let forced: Vec<String> = forced.iter().map(|s| s.to_string()).collect();
            let inputs = ClosureParams {
                roots: roots
                    .iter()
                    .map(|r| (self.dir.path().join(r), "ctranslate2".to_string()))
                    .collect(),
                forced: &forced,
                locations,
                system: &system,
            };
            let graph = &self.graph;
            resolve(&inputs, &|p: &Path| Ok(graph[&file_name(p)].clone()))
        }
    }

    fn rocm_like() -> Tree {
        Tree::new(&[
            (
                "wheel/ctranslate2.dll",
                &[
                    "AMDHIP64_7.dll",
                    "hipblas.dll",
                    "KERNEL32.dll",
                    "libiomp5md.dll",
                ],
            ),
            (
                "wheel/_ext.pyd",
                &[
                    "ctranslate2.dll",
                    "python312.dll",
                    "api-ms-win-crt-runtime-l1-1-0.dll",
                ],
            ),
            ("wheel/libiomp5md.dll", &["KERNEL32.dll"]),
            (
                "core/amdhip64_7.dll",
                &["KERNEL32.dll", "amd_comgr0702.dll"],
            ),
            ("core/amd_comgr0702.dll", &["KERNEL32.dll"]),
            ("core/decoy_core.dll", &["KERNEL32.dll"]),
            ("libs/hipblas.dll", &["rocblas.dll", "amdhip64_7.dll"]),
            ("libs/rocblas.dll", &["amdhip64_7.dll", "roctx64.dll"]),
            ("libs/roctx64.dll", &[]),
            ("libs/hiprtc0702.dll", &["amdhip64_7.dll"]),
            ("libs/decoy_libs.dll", &[]),
        ])
    }

    fn locations(tree: &Tree) -> Vec<LibraryFolder> {
        vec![
            tree.location("wheel", "ctranslate2", "wheel"),
            tree.location("core", "_rocm_sdk_core/bin", "rocm_sdk_core"),
            tree.location(
                "libs",
                "_rocm_sdk_libraries_custom/bin",
                "rocm_sdk_libraries_custom",
            ),
        ]
    }

    #[test]
    fn closure_is_exactly_what_is_reachable_case_insensitively() {
        let tree = rocm_like();
        let closure = tree
            .resolve(
                &["wheel/ctranslate2.dll", "wheel/_ext.pyd"],
                &["hiprtc*.dll"],
                &locations(&tree),
            )
            .unwrap();
        let names: BTreeSet<&str> = closure.libraries.iter().map(|l| l.name.as_str()).collect();
        let expected: BTreeSet<&str> = [
            "ctranslate2.dll",
            "_ext.pyd",
            "libiomp5md.dll",
            "amdhip64_7.dll",
            "amd_comgr0702.dll",
            "hipblas.dll",
            "rocblas.dll",
            "roctx64.dll",
            "hiprtc0702.dll",
        ]
        .into();
        assert_eq!(names, expected);
        let rocblas = closure
            .libraries
            .iter()
            .find(|l| l.name == "rocblas.dll")
            .unwrap();
        assert_eq!(rocblas.dest, "_rocm_sdk_libraries_custom/bin");
        assert_eq!(rocblas.package, "rocm_sdk_libraries_custom");
        assert_eq!(
            rocblas.needed_by,
            BTreeSet::from(["hipblas.dll".to_string()])
        );
        let hip = closure
            .libraries
            .iter()
            .find(|l| l.name == "amdhip64_7.dll")
            .unwrap();
        assert_eq!(hip.needed_by.len(), 4, "{:?}", hip.needed_by);
        assert!(closure.system.contains_key("KERNEL32.dll"));
        assert!(closure.system.contains_key("python312.dll"));
        let hiprtc = closure
            .libraries
            .iter()
            .find(|l| l.name == "hiprtc0702.dll")
            .unwrap();
        assert!(hiprtc.root && hiprtc.needed_by.contains("loaded at run time"));
    }

    #[test]
    fn every_missing_library_is_named_with_its_importers() {
        let tree = rocm_like();
        let only_core = &locations(&tree)[..2];
        let err = tree
            .resolve(&["wheel/ctranslate2.dll"], &[], only_core)
            .unwrap_err();
        let shown = err.to_string();
        assert!(
            shown.contains("hipblas.dll  (imported by ctranslate2.dll)"),
            "{shown}"
        );
        assert!(shown.contains("searched, in order:"), "{shown}");
        match err {
            ClosureError::Missing { missing, .. } => assert_eq!(missing.len(), 1),
            other => panic!("{other}"),
        }
    }

    // Its expected messages join paths with `/`, as the Linux bundle prints them; the Windows
    // build's separators differ, not its search.
    #[cfg(unix)]
    #[test]
    fn a_library_in_a_folder_below_a_search_folder_is_named_with_the_folder_to_add() {
        let tree = Tree::new(&[
            (
                "wheel/libctranslate2.so.4",
                &["libamdhip64.so.7", "HIPBLAS.dll"],
            ),
            ("core/lib/libamdhip64.so.7", &["libhsa-runtime64.so.1"]),
            (
                "core/lib/libhsa-runtime64.so.1",
                &["librocm_sysdeps_z.so.1", "libomp.so", "libdeep.so.1"],
            ),
            // A versioned and an unversioned SONAME, each in its own folder below `lib/`.
            ("core/lib/rocm_sysdeps/lib/librocm_sysdeps_z.so.1", &[]),
            ("core/lib/llvm/lib/libomp.so", &[]),
            // A DLL whose name differs in case from the import.
            ("core/lib/bin/hipblas.dll", &[]),
            // Deeper than the look goes: not named.
            ("core/lib/a/b/c/d/e/libdeep.so.1", &[]),
        ]);
        #[cfg(unix)]
        std::os::unix::fs::symlink(
            tree.dir.path().join("core"),
            tree.dir.path().join("core/lib/loop"),
        )
        .unwrap();
        let searched = [
            tree.location("wheel", "ctranslate2", "wheel"),
            tree.location("core/lib", "_rocm_sdk_core/lib", "rocm_sdk_core"),
        ];
        let err = tree
            .resolve(&["wheel/libctranslate2.so.4"], &[], &searched)
            .unwrap_err();
        let shown = err.to_string();
        for (name, folder) in [
            ("librocm_sysdeps_z.so.1", "core/lib/rocm_sysdeps/lib"),
            ("libomp.so", "core/lib/llvm/lib"),
            ("hipblas.dll", "core/lib/bin"),
        ] {
            let path = tree.dir.path().join(folder).join(name);
            let said = format!(
                "but {} is there, in a folder no search entry lists: add {} to the bundle's search",
                path.display(),
                tree.dir.path().join(folder).display()
            );
            assert!(shown.contains(&said), "{name}: {shown}");
        }
        assert!(shown.contains("libdeep.so.1  (imported by"), "{shown}");
        assert!(!shown.contains("libdeep.so.1 is there"), "{shown}");
        assert_eq!(
            shown.matches(" is there, in a folder").count(),
            3,
            "{shown}"
        );

        // With those folders listed, the closure takes each file at its own destination.
        let mut all = searched.to_vec();
        all.push(tree.location(
            "core/lib/rocm_sysdeps/lib",
            "ctranslate2/_rocm/lib/rocm_sysdeps/lib",
            "rocm_sdk_core",
        ));
        all.push(tree.location(
            "core/lib/llvm/lib",
            "ctranslate2/_rocm/lib/llvm/lib",
            "rocm_sdk_core",
        ));
        all.push(tree.location("core/lib/bin", "ctranslate2/_rocm/bin", "rocm_sdk_core"));
        all.push(tree.location("core/lib/a/b/c/d/e", "deep", "rocm_sdk_core"));
        let closure = tree
            .resolve(&["wheel/libctranslate2.so.4"], &[], &all)
            .unwrap();
        let at = |name: &str| {
            closure
                .libraries
                .iter()
                .find(|l| l.name == name)
                .map(|l| l.dest.as_str())
        };
        assert_eq!(
            at("librocm_sysdeps_z.so.1"),
            Some("ctranslate2/_rocm/lib/rocm_sysdeps/lib")
        );
        assert_eq!(at("libomp.so"), Some("ctranslate2/_rocm/lib/llvm/lib"));
    }

    #[test]
    fn version_families_match_other_major_versions_only() {
        assert_eq!(version_family("amdhip64_7.dll"), "amdhip64");
        assert_eq!(version_family("amdhip64_6.dll"), "amdhip64");
        assert_eq!(version_family("amd_comgr0702.dll"), "amd_comgr");
        assert_eq!(version_family("libamdhip64.so.6"), "libamdhip64");
        assert_ne!(
            version_family("hipblas.dll"),
            version_family("hipblaslt.dll")
        );
    }

    #[test]
    fn the_first_location_with_a_name_wins() {
        let tree = Tree::new(&[
            ("wheel/a.dll", &["b.dll"]),
            ("one/b.dll", &[]),
            ("two/B.DLL", &[]),
        ]);
        let locations = vec![
            tree.location("wheel", "x", "wheel"),
            tree.location("one", "1", "one"),
            tree.location("two", "2", "two"),
        ];
        let closure = tree.resolve(&["wheel/a.dll"], &[], &locations).unwrap();
        assert_eq!(closure.libraries[1].package, "one");
    }

    #[test]
    fn a_forced_pattern_that_matches_nothing_is_an_error() {
        let tree = rocm_like();
        let err = tree
            .resolve(
                &["wheel/ctranslate2.dll"],
                &["hiprtc_missing*.dll"],
                &locations(&tree),
            )
            .unwrap_err();
        assert!(matches!(err, ClosureError::ForcedNotFound { .. }), "{err}");
    }
}
