//! Where each bundled file goes: inside the fat wheel, in the portable (PyInstaller
//! one-folder) `_internal/` tree, and in the `binaries` list a `.spec` file passes on.

use std::path::PathBuf;

use serde::Serialize;

use super::closure::Closure;

/// One file the bundle adds, with its destination folder relative to the wheel's root
/// (which is also the layout of a frozen app's `_internal/` folder).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Placed {
    pub source: PathBuf,
    /// Folder relative to the wheel root / `_internal`, with `/` separators.
    pub dest: String,
    pub name: String,
    /// Why it is there: the importers, "loaded at run time", or "data for gfx…".
    pub reason: String,
    pub package: String,
}

impl Placed {
    pub(crate) fn path_in_wheel(&self) -> String {
        if self.dest.is_empty() {
            self.name.clone()
        } else {
            format!("{}/{}", self.dest.trim_end_matches('/'), self.name)
        }
    }
}

/// The files the closure adds (those not already in the wheel), sorted by destination.
pub fn libraries(closure: &Closure) -> Vec<Placed> {
    let mut placed: Vec<Placed> = closure
        .libraries
        .iter()
        .filter(|l| !l.in_wheel)
        .map(|l| Placed {
            source: l.source.clone(),
            dest: l.dest.clone(),
            name: l.name.clone(),
            reason: l.needed_by.iter().cloned().collect::<Vec<_>>().join(", "),
            package: l.package.clone(),
        })
        .collect();
    placed.sort_by_key(Placed::path_in_wheel);
    placed
}

/// The `binaries` entries of a PyInstaller `.spec`: (source file, destination folder).
/// PyInstaller puts a binary with destination `D` at `_internal/D/`, which is where
/// CTranslate2's `__init__.py` looks (e.g. `_internal/_rocm_sdk_core/bin`).
#[derive(Debug, Serialize)]
pub(crate) struct SpecBinary(pub String, pub String);

pub(crate) fn spec_binaries(files: &[Placed], portable_root: &std::path::Path) -> Vec<SpecBinary> {
    files
        .iter()
        .map(|f| {
            let copied = portable_root.join(f.path_in_wheel());
            SpecBinary(
                copied.display().to_string().replace('\\', "/"),
                f.dest.clone(),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::bundler::closure::Library;

    fn library(name: &str, dest: &str, in_wheel: bool) -> Library {
        Library {
            name: name.into(),
            source: PathBuf::from(format!("/sdk/{name}")),
            dest: dest.into(),
            package: "pkg".into(),
            in_wheel,
            root: false,
            needed_by: BTreeSet::from(["b.dll".to_string(), "a.dll".to_string()]),
        }
    }

    #[test]
    fn only_files_not_already_in_the_wheel_are_placed_in_order() {
        let closure = Closure {
            libraries: vec![
                library("ctranslate2.dll", "ctranslate2", true),
                library("z.dll", "_rocm_sdk_core/bin", false),
                library("a.dll", "_rocm_sdk_libraries_custom/bin", false),
            ],
            system: Default::default(),
        };
        let placed = libraries(&closure);
        let paths: Vec<String> = placed.iter().map(Placed::path_in_wheel).collect();
        assert_eq!(
            paths,
            [
                "_rocm_sdk_core/bin/z.dll",
                "_rocm_sdk_libraries_custom/bin/a.dll"
            ]
        );
        assert_eq!(placed[0].reason, "a.dll, b.dll");
        let spec = spec_binaries(&placed, std::path::Path::new("/out/portable/_internal"));
        assert_eq!(
            spec[0].0,
            "/out/portable/_internal/_rocm_sdk_core/bin/z.dll"
        );
        assert_eq!(spec[0].1, "_rocm_sdk_core/bin");
    }
}
