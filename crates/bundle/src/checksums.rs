//! `SHA256SUMS` in the GNU format `sha256sum -c` accepts: `<hex>  <relative path>`, sorted,
//! hashed in parallel across files.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, Result};

use ct2v_fetch::cache::sha256_file;
use ct2v_support::owned_output::RECORD;

pub const FILE_NAME: &str = "SHA256SUMS";

/// Every file below `dir` (except an existing SHA256SUMS and the folder's record, which is
/// written again after it, `owned_output`), as relative `/` paths, sorted.
pub fn files_below(dir: &Path) -> Result<Vec<String>> {
    Ok(ct2v_support::fsx::files_below(dir)?
        .into_iter()
        .map(|(relative, _)| relative)
        .filter(|relative| relative != FILE_NAME && relative != RECORD)
        .collect())
}

/// sha256 of each file, in the order given, using up to `jobs` threads.
pub fn hash_all(dir: &Path, files: &[String], jobs: usize) -> Result<Vec<String>> {
    let next = Mutex::new(0usize);
    let results: Mutex<Vec<Option<Result<String>>>> =
        Mutex::new((0..files.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, files.len().max(1)) {
            scope.spawn(|| {
                loop {
                    let i = {
                        let mut n = next.lock().expect("no poisoned lock");
                        let i = *n;
                        *n += 1;
                        i
                    };
                    let Some(name) = files.get(i) else { break };
                    let path: PathBuf = dir.join(name);
                    let hashed = sha256_file(&path)
                        .map(|(hex, _)| hex)
                        .with_context(|| format!("cannot hash {}", path.display()));
                    results.lock().expect("no poisoned lock")[i] = Some(hashed);
                }
            });
        }
    });
    results
        .into_inner()
        .expect("no poisoned lock")
        .into_iter()
        .map(|r| r.expect("every file was hashed"))
        .collect()
}

/// Writes `dir/SHA256SUMS` for every file below `dir`; returns its text.
pub fn write(dir: &Path, jobs: usize) -> Result<String> {
    let files = files_below(dir)?;
    let hashes = hash_all(dir, &files, jobs)?;
    let text: String = files
        .iter()
        .zip(&hashes)
        .map(|(name, hex)| format!("{hex}  {name}\n"))
        .collect();
    ct2v_support::fsx::write_atomically(&dir.join(FILE_NAME), &text)?;
    Ok(text)
}

pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256sum_accepts_what_is_written() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("b.whl"), b"wheel").unwrap();
        std::fs::write(dir.path().join("sub/a.json"), b"{}").unwrap();
        std::fs::write(dir.path().join(RECORD), b"{}").unwrap();
        let text = write(dir.path(), 4).unwrap();
        let names: Vec<&str> = text
            .lines()
            .map(|l| l.split("  ").nth(1).unwrap())
            .collect();
        assert_eq!(names, ["b.whl", "sub/a.json"]);
        let check = std::process::Command::new("sha256sum")
            .args(["-c", "--strict", FILE_NAME])
            .current_dir(dir.path())
            .output();
        match check {
            Ok(out) => assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stdout)
            ),
            Err(_) => eprintln!("skipping the sha256sum cross-check: sha256sum not installed"),
        }
        // Writing again gives the same file (SHA256SUMS itself is not listed).
        assert_eq!(write(dir.path(), 1).unwrap(), text);
    }
}
