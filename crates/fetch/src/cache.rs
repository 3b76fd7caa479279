//! The content-addressed download cache: a pinned file lives at `<root>/sha256/<hex>` and is
//! trusted only after its size and sha256 have been checked again. Downloads in progress live
//! at `<root>/partial/<hex>.part` until they are complete and verified.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use thiserror::Error;

pub(crate) use ct2v_support::digest::hash_file;
pub use ct2v_support::digest::{hex, sha256_file};

/// The content-addressed store under one root folder (`Workspace::cache_dir`).
#[derive(Debug, Clone)]
pub struct Cache {
    root: PathBuf,
}

/// What a download must turn out to be: its URL (for messages), sha256 (64 lowercase hex
/// digits), size when known, and the file name it is unpacked under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    pub url: String,
    pub sha256: String,
    pub size: Option<u64>,
    pub file_name: String,
}

#[derive(Debug, Error)]
pub enum CacheError {
    /// A cached file no longer matches its name; it has been deleted.
    #[error(
        "cached file {} is corrupt: expected sha256 {expected_sha256}{}, found sha256 {actual_sha256} ({actual_size} bytes); it was deleted and will be downloaded again",
        path.display(),
        size_note(*expected_size)
    )]
    Corrupt {
        path: PathBuf,
        expected_sha256: String,
        actual_sha256: String,
        expected_size: Option<u64>,
        actual_size: u64,
    },
    /// A finished download is not the pinned file; it has been deleted.
    #[error(
        "{url} does not match its pin: expected sha256 {expected_sha256}{}, got sha256 {actual_sha256} ({actual_size} bytes); the download was deleted. If the file changed upstream on purpose, run `cargo xtask pin` to record the new sha256; otherwise the server (or a mirror or proxy) is serving something else",
        size_note(*expected_size)
    )]
    Mismatch {
        url: String,
        expected_sha256: String,
        actual_sha256: String,
        expected_size: Option<u64>,
        actual_size: u64,
    },
    /// The pin's sha256 is not 64 lowercase hex digits, so it cannot name a cache file.
    #[error("`{sha256}` (pin of {url}) is not a sha256: expected 64 lowercase hex digits")]
    BadSha256 { url: String, sha256: String },
    #[error("cannot {action} {}: {source}{}", path.display(), disk_note(source))]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// The next step, as a note line, when the cache's disk is at fault: full, read-only, or not
/// ours to write; nothing for other errors.
pub(crate) fn disk_note(error: &io::Error) -> &'static str {
    match error.kind() {
        io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded => {
            "\n  = the disk of the download cache is full: free some space, or give a cache folder \
             on another disk with --cache-dir DIR (or CT2V_CACHE_DIR)"
        }
        io::ErrorKind::ReadOnlyFilesystem | io::ErrorKind::PermissionDenied => {
            "\n  = the download cache cannot be written there (a read-only disk, or no \
             permission): give one that can be written with --cache-dir DIR (or \
             CT2V_CACHE_DIR); a read-only cache serves only a run whose files it all holds"
        }
        _ => "",
    }
}

fn size_note(size: Option<u64>) -> String {
    size.map(|s| format!(" ({s} bytes)")).unwrap_or_default()
}

fn io_error(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> CacheError {
    let path = path.to_path_buf();
    move |source| CacheError::Io {
        action,
        path,
        source,
    }
}

/// Whether `s` can name a cache entry: exactly 64 lowercase hex digits.
pub fn is_sha256(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// `<cache root>/sha256/<hex>`: the one shape of a verified entry's path (the plan names it
/// before anything is downloaded).
pub fn entry_path(root: &Path, sha256: &str) -> PathBuf {
    root.join("sha256").join(sha256)
}

impl Cache {
    pub fn new(root: impl Into<PathBuf>) -> Cache {
        Cache { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `<root>/sha256/<hex>`: where the verified file lives.
    pub fn path_for(&self, sha256: &str) -> PathBuf {
        entry_path(&self.root, sha256)
    }

    /// `<root>/partial/<hex>.part`: a download in progress, resumed from its length.
    pub fn partial_path(&self, sha256: &str) -> PathBuf {
        self.partial_dir().join(format!("{sha256}.part"))
    }

    /// `<root>/partial/`, which also holds lock files and unpinned downloads.
    pub fn partial_dir(&self) -> PathBuf {
        self.root.join("partial")
    }

    fn check_pin(pin: &Pin) -> Result<(), CacheError> {
        if is_sha256(&pin.sha256) {
            Ok(())
        } else {
            Err(CacheError::BadSha256 {
                url: pin.url.clone(),
                sha256: pin.sha256.clone(),
            })
        }
    }

    /// The cached file for `pin`, if present and verified (size and sha256 re-hashed every
    /// time). A file that fails verification is deleted and `Corrupt` returned.
    pub fn lookup(&self, pin: &Pin) -> Result<Option<PathBuf>, CacheError> {
        Self::check_pin(pin)?;
        let path = self.path_for(&pin.sha256);
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_file() => {}
            // A symlink is never a cached file: it is removed (not followed) and fetched again.
            Ok(meta) if meta.file_type().is_symlink() => {
                remove_if_present(&path).map_err(io_error("remove the symlink", &path))?;
                return Ok(None);
            }
            Ok(_) => {
                return Err(CacheError::Io {
                    action: "use",
                    path,
                    source: io::Error::other("it is not a regular file; remove it"),
                });
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_error("read", &path)(e)),
        }
        let (actual_sha256, actual_size) = sha256_file(&path).map_err(io_error("hash", &path))?;
        if matches(pin, &actual_sha256, actual_size) {
            return Ok(Some(path));
        }
        remove_if_present(&path).map_err(io_error("delete corrupt", &path))?;
        Err(CacheError::Corrupt {
            path,
            expected_sha256: pin.sha256.clone(),
            actual_sha256,
            expected_size: pin.size,
            actual_size,
        })
    }

    /// Moves a fully downloaded `temp` file into place once its sha256 and size match `pin`
    /// (it is renamed only after the check). On a mismatch `temp` is deleted.
    #[cfg(test)]
    pub(crate) fn admit(&self, temp: &Path, pin: &Pin) -> Result<PathBuf, CacheError> {
        Self::check_pin(pin)?;
        let digest = sha256_file(temp).map_err(io_error("hash", temp))?;
        self.admit_hashed(temp, pin, digest)
    }

    /// [`Cache::admit`] for a file whose sha256 and size were computed while it was written
    /// (a download hashes as it streams, so the file is not read a second time).
    pub(crate) fn admit_hashed(
        &self,
        temp: &Path,
        pin: &Pin,
        (actual_sha256, actual_size): (String, u64),
    ) -> Result<PathBuf, CacheError> {
        Self::check_pin(pin)?;
        // Only a regular file is admitted: a symlink renamed into the cache would stand for
        // whatever it points at.
        if !fs::symlink_metadata(temp).is_ok_and(|m| m.is_file()) {
            return Err(CacheError::Io {
                action: "admit",
                path: temp.to_path_buf(),
                source: io::Error::other("it is not a regular file (a symlink?); not admitted"),
            });
        }
        if !matches(pin, &actual_sha256, actual_size) {
            remove_if_present(temp).map_err(io_error("delete", temp))?;
            return Err(CacheError::Mismatch {
                url: pin.url.clone(),
                expected_sha256: pin.sha256.clone(),
                actual_sha256,
                expected_size: pin.size,
                actual_size,
            });
        }
        let dest = self.path_for(&pin.sha256);
        let dir = dest.parent().expect("cache paths have a parent");
        fs::create_dir_all(dir).map_err(io_error("create", dir))?;
        match fs::rename(temp, &dest) {
            Ok(()) => Ok(dest),
            // `temp` on another file system: copy next to the destination, then rename, so
            // that a half-copied file never sits under the final name.
            Err(e) if e.kind() == io::ErrorKind::CrossesDevices => {
                let staging = self.partial_dir().join(format!("{}.admit", pin.sha256));
                fs::create_dir_all(self.partial_dir())
                    .map_err(io_error("create", &self.partial_dir()))?;
                ct2v_support::regular_file::copy(temp, &staging)
                    .map_err(io_error("copy into the cache", temp))?;
                fs::rename(&staging, &dest).map_err(io_error("move into the cache", &staging))?;
                remove_if_present(temp).map_err(io_error("delete", temp))?;
                Ok(dest)
            }
            Err(e) => Err(io_error("move into the cache", temp)(e)),
        }
    }
}

fn matches(pin: &Pin, sha256: &str, size: u64) -> bool {
    sha256 == pin.sha256 && pin.size.is_none_or(|s| s == size)
}

fn remove_if_present(path: &Path) -> io::Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// sha256 of "abc" (FIPS 180-2 test vector).
    const ABC: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

    fn pin(sha256: &str, size: Option<u64>) -> Pin {
        Pin {
            url: "https://example.org/f.tar.gz".into(),
            sha256: sha256.into(),
            size,
            file_name: "f.tar.gz".into(),
        }
    }

    #[test]
    fn cache_layout_is_content_addressed() {
        let cache = Cache::new("/c");
        assert_eq!(cache.path_for(ABC), Path::new("/c/sha256").join(ABC));
        assert_eq!(
            cache.partial_path(ABC),
            Path::new("/c/partial").join(format!("{ABC}.part"))
        );
    }

    #[test]
    fn cache_admit_then_lookup() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        assert!(cache.lookup(&pin(ABC, Some(3))).unwrap().is_none());
        let temp = dir.path().join("download");
        fs::write(&temp, b"abc").unwrap();
        let path = cache.admit(&temp, &pin(ABC, Some(3))).unwrap();
        assert_eq!(path, cache.path_for(ABC));
        assert!(!temp.exists());
        assert_eq!(cache.lookup(&pin(ABC, Some(3))).unwrap(), Some(path));
    }

    #[test]
    fn cache_admit_refuses_and_deletes_a_mismatch() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        let temp = dir.path().join("download");
        fs::write(&temp, b"abd").unwrap();
        let err = cache.admit(&temp, &pin(ABC, Some(3))).unwrap_err();
        match &err {
            CacheError::Mismatch {
                url,
                expected_sha256,
                actual_sha256,
                actual_size,
                ..
            } => {
                assert_eq!(url, "https://example.org/f.tar.gz");
                assert_eq!(expected_sha256, ABC);
                assert_ne!(actual_sha256, ABC);
                assert_eq!(*actual_size, 3);
            }
            other => panic!("expected Mismatch, got {other:?}"),
        }
        assert!(err.to_string().contains("cargo xtask pin"), "{err}");
        assert!(!temp.exists());
        assert!(!cache.path_for(ABC).exists());
    }

    #[test]
    fn cache_admit_checks_the_size_too() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        let temp = dir.path().join("download");
        fs::write(&temp, b"abc").unwrap();
        let err = cache.admit(&temp, &pin(ABC, Some(4))).unwrap_err();
        assert!(matches!(err, CacheError::Mismatch { .. }), "{err:?}");
        assert!(!temp.exists());
    }

    #[test]
    fn cache_lookup_deletes_a_corrupt_file() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        let path = cache.path_for(ABC);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, b"abX").unwrap();
        let err = cache.lookup(&pin(ABC, Some(3))).unwrap_err();
        match &err {
            CacheError::Corrupt {
                path: p,
                expected_sha256,
                actual_size,
                ..
            } => {
                assert_eq!(p, &path);
                assert_eq!(expected_sha256, ABC);
                assert_eq!(*actual_size, 3);
            }
            other => panic!("expected Corrupt, got {other:?}"),
        }
        assert!(!path.exists());
        assert!(cache.lookup(&pin(ABC, Some(3))).unwrap().is_none());
    }

    #[test]
    fn cache_refuses_a_pin_that_is_not_a_sha256() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        let err = cache.lookup(&pin("../../etc/passwd", None)).unwrap_err();
        assert!(matches!(err, CacheError::BadSha256 { .. }), "{err:?}");
        assert!(!is_sha256(&ABC.to_uppercase()));
        assert!(is_sha256(ABC));
    }
}
