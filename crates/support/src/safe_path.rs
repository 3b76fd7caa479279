//! The one check for every path-like value that comes from a variant file, a flag or an
//! archive entry: it must stay inside the folder it is joined to, on every host.
//!
//! Refused, whatever the host: empty parts made of `..`, absolute paths (`/x`, `\x`), drive
//! prefixes and any `:` in a part (`C:x`, `pkg/C:evil`, NTFS streams `a:b`), UNC paths
//! (`\\server\share`), Windows device names as a part (`CON`, `nul.txt`, `COM1`, …, which
//! open the device instead of a file on Windows), and NUL bytes. Both `/` and `\` separate
//! parts, because Windows treats both as separators.

use std::path::{Path, PathBuf};

/// Why a value is not a safe relative path, as a phrase that completes "… is not allowed: ".
pub fn problem(value: &str) -> Option<String> {
    if value.contains('\0') {
        return Some("it contains a NUL byte".into());
    }
    if value.starts_with("\\\\") || value.starts_with("//") {
        return Some("it is a UNC path (\\\\server\\share)".into());
    }
    if value.starts_with(['/', '\\']) {
        return Some("it is absolute; give a path relative to its folder".into());
    }
    for (index, part) in value.split(['/', '\\']).enumerate() {
        if part == ".." {
            return Some("`..` leaves its folder".into());
        }
        if part.contains(':') {
            return Some(if index == 0 && part.as_bytes().get(1) == Some(&b':') {
                "it has a drive prefix (C:)".into()
            } else {
                format!("`{part}` has a `:` (a drive prefix or an NTFS stream on Windows)")
            });
        }
        if is_device_name(part) {
            return Some(format!("`{part}` is a Windows device name"));
        }
    }
    None
}

/// `CON`, `PRN`, `AUX`, `NUL`, `COM1`–`COM9`, `LPT1`–`LPT9`, with any extension (`nul.txt`)
/// and trailing spaces or dots, in any case.
pub fn is_device_name(part: &str) -> bool {
    let stem = part
        .split('.')
        .next()
        .unwrap_or(part)
        .trim_end_matches([' ', '.']);
    let upper = stem.to_ascii_uppercase();
    match upper.as_str() {
        "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$" => true,
        _ => {
            let b = upper.as_bytes();
            b.len() == 4
                && (&b[..3] == b"COM" || &b[..3] == b"LPT")
                && (b'1'..=b'9').contains(&b[3])
        }
    }
}

/// A relative path that may be empty (meaning the folder itself), e.g. a bundle `dest`.
pub fn check_relative(value: &str) -> Result<(), String> {
    match problem(value) {
        Some(why) => Err(why),
        None => Ok(()),
    }
}

/// A relative path that must name something (not empty, not only `.` parts).
pub fn check_nonempty(value: &str) -> Result<(), String> {
    check_relative(value)?;
    if value.split(['/', '\\']).all(|p| p.is_empty() || p == ".") {
        return Err("it is empty".into());
    }
    Ok(())
}

/// One name that becomes one folder or file name (an input name, a variant, a version
/// label): a safe relative path with exactly one part.
pub fn check_name(value: &str) -> Result<(), String> {
    check_nonempty(value)?;
    if value.contains(['/', '\\']) {
        return Err("it has a `/` or `\\`; a name is one folder name".into());
    }
    if value == "." {
        return Err("it is `.`".into());
    }
    Ok(())
}

/// `root` joined with `value` after [`check_relative`]; the error names what the value is
/// (e.g. "--search DEST").
pub fn join(root: &Path, value: &str, what: &str) -> Result<PathBuf, String> {
    check_relative(value).map_err(|why| format!("{what} `{value}` is not allowed: {why}"))?;
    Ok(root.join(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_every_way_out_of_a_folder() {
        for bad in [
            "../x",
            "a/../../x",
            "a\\..\\x",
            "/etc/passwd",
            "\\x",
            "C:\\x",
            "C:x",
            "pkg/C:evil",
            "\\\\server\\share",
            "//server/share",
            "CON",
            "lib/nul.txt",
            "COM1",
            "lpt9.dll",
            "a\0b",
            "file.txt:stream",
        ] {
            assert!(problem(bad).is_some(), "{bad:?} accepted");
        }
        for good in [
            "",
            "lib",
            "a/b.dll",
            "ctranslate2/.libs",
            "console",
            "com10",
            "nul_x",
        ] {
            assert_eq!(problem(good), None, "{good:?} refused");
        }
    }

    #[test]
    fn names_are_one_part() {
        assert!(check_name("").is_err());
        assert!(check_name(".").is_err());
        assert!(check_name("a/b").is_err());
        assert!(check_name("../../x").is_err());
        assert!(check_name("onednn").is_ok());
        assert!(check_nonempty("./.").is_err());
    }
}
