//! Paths as other programs and people read them.
//!
//! On Windows `std::fs::canonicalize` returns verbatim paths (`\\?\C:\work`), which pip
//! (`--find-links`), CMake (`-D` values), ninja, `cl` and `cmd` reject or mangle; [`canonical`]
//! drops the prefix wherever the plain path means the same file (the `dunce` crate's rules:
//! a drive path under MAX_PATH with no reserved names). [`shown`] is the one form a path is
//! printed or written in: its own separators (`\` on Windows, where `a/b` joined to `C:\x`
//! gives the mixed `C:\x\a/b`), no `.` parts, no verbatim prefix.

use std::io;
use std::path::{Component, Path, PathBuf};

/// `fs::canonicalize` without the verbatim prefix where it can be dropped.
pub fn canonical(path: &Path) -> io::Result<PathBuf> {
    dunce::canonicalize(path)
}

/// The path lexically tidied: the platform's separators, no `.` parts, no `\\?\` where it
/// can be dropped. `..` stays (it may cross a link).
pub(crate) fn tidy(path: &Path) -> PathBuf {
    let simplified = dunce::simplified(path);
    let mut out = PathBuf::new();
    for part in simplified.components() {
        match part {
            Component::CurDir if !out.as_os_str().is_empty() => {}
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// The path as it is printed and recorded: [`tidy`], as text.
pub fn shown(path: &Path) -> String {
    tidy(path).display().to_string()
}

/// The last `/`-separated part of a path or URL: all of it when it has no `/`, nothing when
/// it ends in one.
pub fn last_segment(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// `base` joined with a relative path written with `/` (a plan's or variant's spelling),
/// one part at a time, so that Windows gets `\` throughout.
pub fn join_slashed(base: &Path, relative: &str) -> PathBuf {
    let mut out = base.to_path_buf();
    out.extend(relative.split('/').filter(|p| !p.is_empty() && *p != "."));
    out
}

/// `%XX` escapes decoded, as a server decodes a URL path (`%2B` is `+`, `%2F` and `%2E%2E`
/// included); a `%` not followed by two hex digits is kept.
pub fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_parts_go_and_slashed_joins_use_the_platform_separator() {
        let base = Path::new("out");
        assert_eq!(
            shown(&base.join("./portable").join(".")),
            shown(&base.join("portable"))
        );
        let joined = join_slashed(base, "portable/_internal/./x");
        assert_eq!(
            joined,
            base.join("portable").join("_internal").join("x"),
            "part by part"
        );
        assert_eq!(shown(Path::new(".")), ".");
        assert_eq!(shown(Path::new("./a")), shown(Path::new("./a")));
    }

    #[test]
    fn the_last_segment_is_what_follows_the_last_slash() {
        assert_eq!(last_segment("https://h/a/b.whl"), "b.whl");
        assert_eq!(last_segment("b.whl"), "b.whl");
        assert_eq!(last_segment("a/"), "");
        assert_eq!(last_segment(""), "");
    }

    #[test]
    fn a_canonical_path_is_never_verbatim() {
        let dir = tempfile::tempdir().unwrap();
        let canon = canonical(dir.path()).unwrap();
        let text = canon.display().to_string();
        assert!(
            !text.starts_with(r"\\?\") && !text.starts_with("//?/"),
            "{text}"
        );
        assert!(canon.is_absolute());
    }

    #[cfg(windows)]
    #[test]
    fn windows_verbatim_and_mixed_paths_are_shown_plainly() {
        assert_eq!(shown(Path::new(r"\\?\C:\work\out")), r"C:\work\out");
        assert_eq!(
            shown(Path::new(r"C:\work\out\portable/_internal")),
            r"C:\work\out\portable\_internal"
        );
        assert_eq!(
            shown(Path::new(r"C:\work\out\.\.bundle-1")),
            r"C:\work\out\.bundle-1"
        );
        // A name Windows cannot open without the prefix keeps it.
        assert_eq!(shown(Path::new(r"\\?\C:\work\nul")), r"\\?\C:\work\nul");
    }
}
