//! The Windows wheel step's first half: the DLLs the build installed, copied into
//! CTranslate2's `python/ctranslate2/` folder, whose `*.dll` files `python/setup.py` packs
//! (`package_data={"ctranslate2": ["*.dll"]}`). Upstream CI does the same with `cp`
//! (OpenNMT/CTranslate2 v4.7.1 python/tools/prepare_build_environment_windows.sh), and so do
//! the maintainers' gfx1010 scripts.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// Copies every file of `files` into `dest` (which must exist), each staged next to its
/// destination and then renamed; checks all of them before copying any. Returns the copies.
pub fn copy(files: &[String], dest: &Path) -> Result<Vec<PathBuf>> {
    if !dest.is_dir() {
        bail!(
            "{} is not a folder: the CTranslate2 source tree is incomplete; run the build again \
             (it unpacks the source afresh)",
            dest.display()
        );
    }
    let missing: Vec<&String> = files.iter().filter(|f| !Path::new(f).is_file()).collect();
    if !missing.is_empty() {
        bail!(
            "the wheel needs {} but the build did not leave {}: run the install and unpack \
             steps again (`cargo xtask build` reruns what is missing)",
            missing
                .iter()
                .map(|f| Path::new(f)
                    .file_name()
                    .map_or_else(|| f.to_string(), |n| n.to_string_lossy().to_string()))
                .collect::<Vec<_>>()
                .join(", "),
            missing
                .iter()
                .map(|f| f.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let mut copied = Vec::new();
    for file in files {
        let source = Path::new(file);
        let name = source.file_name().context("a DLL path names a file")?;
        let target = dest.join(name);
        let staged = dest.join(format!(
            ".{}.partial-{}",
            name.to_string_lossy(),
            std::process::id()
        ));
        ct2v_support::regular_file::copy(source, &staged)
            .with_context(|| format!("cannot copy {} to {}", file, staged.display()))?;
        fs::rename(&staged, &target)
            .with_context(|| format!("cannot replace {}", target.display()))?;
        copied.push(target);
    }
    Ok(copied)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_all_or_says_what_is_missing() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        let dest = dir.path().join("python/ctranslate2");
        fs::create_dir_all(&bin).unwrap();
        fs::create_dir_all(&dest).unwrap();
        fs::write(bin.join("ctranslate2.dll"), b"MZ dll").unwrap();
        let files = vec![
            bin.join("ctranslate2.dll").display().to_string(),
            bin.join("libiomp5md.dll").display().to_string(),
        ];
        let err = format!("{:#}", copy(&files, &dest).unwrap_err());
        assert!(err.contains("needs libiomp5md.dll"), "{err}");
        assert_eq!(fs::read_dir(&dest).unwrap().count(), 0, "nothing copied");

        fs::write(bin.join("libiomp5md.dll"), b"MZ omp").unwrap();
        let copied = copy(&files, &dest).unwrap();
        assert_eq!(
            copied,
            [dest.join("ctranslate2.dll"), dest.join("libiomp5md.dll")]
        );
        assert_eq!(fs::read(dest.join("libiomp5md.dll")).unwrap(), b"MZ omp");
        assert_eq!(
            fs::read_dir(&dest).unwrap().count(),
            2,
            "no staged file left"
        );
    }
}
