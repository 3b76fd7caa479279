//! GitHub's limit on one release asset: "each file included in a release must be under
//! 2 GiB" (GitHub's documentation, "About releases",
//! docs.github.com/en/repositories/releasing-projects-on-github/about-releases). A release
//! holding a larger file would fail at upload, after the tag and the other assets are out:
//! `release` refuses it first.

use std::fs;
use std::path::Path;

use ct2v_support::diagnostic::InputError;
use ct2v_support::units::human_size;

/// The first size GitHub refuses: 2 GiB.
pub const LIMIT: u64 = 2 * 1024 * 1024 * 1024;

/// Refuses `path` when it is a file of [`LIMIT`] bytes or more, naming it, its size and the
/// limit. A path that is not there is left to the caller.
pub fn check(path: &Path) -> Result<(), InputError> {
    let Ok(meta) = fs::metadata(path) else {
        return Ok(());
    };
    if !meta.is_file() || meta.len() < LIMIT {
        return Ok(());
    }
    Err(InputError::new(format!(
        "{} is {} bytes ({}): GitHub takes no release asset of {LIMIT} bytes (2 GiB) or more",
        path.display(),
        meta.len(),
        human_size(meta.len())
    ))
    .note("GitHub's documentation, \"About releases\": each file included in a release must be under 2 GiB")
    .note("nothing was written; build the variant for fewer GPU targets, or split it into families"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_is_exclusive() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.whl");
        let f = fs::File::create(&file).unwrap();
        f.set_len(LIMIT - 1).unwrap();
        assert!(check(&file).is_ok());
        f.set_len(LIMIT).unwrap();
        let err = check(&file).unwrap_err();
        assert!(
            err.message.contains("2147483648 bytes (2.0 GiB)"),
            "{}",
            err.message
        );
        assert!(check(&dir.path().join("absent")).is_ok());
        assert!(check(dir.path()).is_ok(), "a folder is no asset");
    }
}
