//! `verify-release`: a release folder checked again as a user would receive it: SHA256SUMS
//! against the files, each wheel's RECORD, the manifest, and the pip index byte for byte as
//! `release` would write it, with nothing unlisted.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use anyhow::{Context, Result, bail};

use super::{MANIFEST, Manifest, published, write_indexes};
use crate::package::checksums;
use crate::support::fsx::files_below;

/// The first part of `name` below `dir` that is a symlink, if any.
fn symlink_on_the_way(dir: &Path, name: &str) -> Option<String> {
    let mut at = dir.to_path_buf();
    for part in name
        .split(['/', '\\'])
        .filter(|p| !p.is_empty() && *p != ".")
    {
        at.push(part);
        if fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
            return Some(at.display().to_string());
        }
    }
    None
}

/// Re-checks a release folder: SHA256SUMS against the files (and every file listed), each
/// wheel's RECORD, and the manifest against SHA256SUMS. Returns the problems found.
pub fn verify(dir: &Path) -> Result<Vec<String>> {
    let sums_path = dir.join(checksums::FILE_NAME);
    let sums = read_regular(&sums_path)?;
    let mut listed = BTreeMap::new();
    let mut problems = Vec::new();
    for (n, line) in sums.lines().enumerate() {
        // `<hex>  <name>` (text mode) or `<hex> *<name>` (`sha256sum -b`).
        let parsed = line
            .split_once(' ')
            .and_then(|(hex, rest)| Some((hex, rest.strip_prefix([' ', '*'])?)));
        match parsed {
            Some((hex, name)) if crate::inputs::cache::is_sha256(hex) => {
                listed.insert(name.to_string(), hex.to_string());
            }
            _ => problems.push(format!("SHA256SUMS line {}: not `<sha256>  <file>`", n + 1)),
        }
    }
    let present = published(dir)?;
    for name in &present {
        if !listed.contains_key(name) {
            problems.push(format!("{name} is not in SHA256SUMS"));
        }
    }
    for (name, expected) in &listed {
        if let Err(why) = crate::support::safe_path::check_nonempty(name) {
            problems.push(format!(
                "{name}: not a path inside the release ({why}); not read"
            ));
            continue;
        }
        if let Some(link) = symlink_on_the_way(dir, name) {
            problems.push(format!("{name}: a symlink ({link}); not followed"));
            continue;
        }
        let path = dir.join(name);
        if !path.is_file() {
            problems.push(format!("{name} is listed in SHA256SUMS but missing"));
            continue;
        }
        let (actual, _) = crate::inputs::cache::sha256_file(&path)?;
        if &actual != expected {
            problems.push(format!(
                "{name}: sha256 {actual}, SHA256SUMS says {expected}"
            ));
        }
        if name.ends_with(".whl") {
            for p in crate::package::wheel::check_record(&path)? {
                problems.push(format!("{name}: {p}"));
            }
        }
    }
    problems.extend(unlisted_entries(dir)?);
    match read_regular(&dir.join(MANIFEST)) {
        Ok(text) => {
            let manifest: Manifest = serde_json::from_str(&text)
                .with_context(|| format!("{} is not a release manifest", MANIFEST))?;
            for a in &manifest.artifacts {
                match listed.get(&a.path) {
                    Some(hex) if hex == &a.sha256 => {}
                    Some(hex) => problems.push(format!(
                        "{}: manifest says sha256 {}, SHA256SUMS says {hex}",
                        a.path, a.sha256
                    )),
                    None => {
                        problems.push(format!("{}: in the manifest, not in SHA256SUMS", a.path))
                    }
                }
            }
            problems.extend(check_indexes(dir, &manifest)?);
            problems.extend(check_notes(dir, &manifest)?);
        }
        Err(e) => problems.push(format!("cannot read {MANIFEST}: {e:#}")),
    }
    Ok(problems)
}

/// RELEASE_NOTES.md is not a published asset (it is the release's text), so SHA256SUMS does
/// not cover it: it must be what `release` writes for the manifest.
fn check_notes(dir: &Path, manifest: &Manifest) -> Result<Vec<String>> {
    let found = match read_regular(&dir.join(super::NOTES)) {
        Ok(text) => text,
        Err(e) => return Ok(vec![format!("cannot read {}: {e:#}", super::NOTES)]),
    };
    let wanted = super::notes::notes(manifest);
    Ok(first_difference(&wanted, &found)
        .map(|diff| {
            format!(
                "{}: not what release writes for the manifest: {diff}",
                super::NOTES
            )
        })
        .into_iter()
        .collect())
}

/// The pip index must be exactly what `release` writes for the manifest's wheels (every page
/// regenerated and compared byte for byte; the first differing line is named), and `whl/`
/// holds nothing else.
fn check_indexes(dir: &Path, manifest: &Manifest) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    let expected = tempfile::tempdir()?;
    write_indexes(
        expected.path(),
        &manifest.artifacts,
        manifest.index_base_url.as_deref(),
    )?;
    let want = files_below(expected.path()).unwrap_or_default();
    let whl = dir.join(crate::release::pep503::DIR);
    let have = if whl.exists() {
        entries_below(dir, &whl)?
    } else {
        Vec::new()
    };
    for (name, path) in &want {
        let actual = dir.join(name);
        match fs::symlink_metadata(&actual) {
            Ok(m) if m.is_file() => {
                let wanted = fs::read_to_string(path)?;
                let found = read_regular(&actual)?;
                if let Some(line) = first_difference(&wanted, &found) {
                    problems.push(format!(
                        "{name}: {line} (the index is not what release wrote)"
                    ));
                }
            }
            Ok(_) => problems.push(format!("{name} is not a regular file")),
            Err(_) => problems.push(format!("{name} is missing")),
        }
    }
    for name in &have {
        if !want.iter().any(|(w, _)| w == name) {
            problems.push(format!(
                "{name}: not written by release (an index page or file too many)"
            ));
        }
    }
    Ok(problems)
}

/// Every entry below `root` (folders too), relative to `dir`, `/`-separated; a link or an
/// entry that is neither file nor folder is listed too (never followed).
fn entries_below(dir: &Path, root: &Path) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in fs::read_dir(&at).with_context(|| format!("cannot list {}", at.display()))? {
            let entry = entry?;
            let path = entry.path();
            let kind = entry.file_type()?;
            if kind.is_dir() {
                stack.push(path);
                continue;
            }
            let relative = path.strip_prefix(dir).unwrap_or(&path);
            out.push(relative.to_string_lossy().replace('\\', "/"));
        }
    }
    out.sort();
    Ok(out)
}

/// `line N: expected `…`, found `…``, for the first line where `found` differs from `wanted`.
fn first_difference(wanted: &str, found: &str) -> Option<String> {
    if wanted == found {
        return None;
    }
    let (mut w, mut f) = (wanted.lines(), found.lines());
    let mut n = 0;
    loop {
        n += 1;
        match (w.next(), f.next()) {
            (Some(a), Some(b)) if a == b => continue,
            (a, b) => {
                let shown = |l: Option<&str>| {
                    l.map_or("(the end)".to_string(), |l| {
                        let l: String = l.chars().take(160).collect();
                        format!("`{}`", l.escape_debug())
                    })
                };
                return Some(format!(
                    "line {n}: expected {}, found {}",
                    shown(a),
                    shown(b)
                ));
            }
        }
    }
}

/// The top level of a release folder holds its published files, SHA256SUMS and `whl/`, and
/// nothing else (no other folder, no link, no FIFO).
fn unlisted_entries(dir: &Path) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    for entry in fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry.file_type()?;
        if kind.is_file() || (kind.is_dir() && name == crate::release::pep503::DIR) {
            continue;
        }
        problems.push(format!(
            "{}: not a file release writes (a {}); nothing is read from it",
            name.escape_debug(),
            if kind.is_dir() {
                "folder"
            } else if kind.is_symlink() {
                "link"
            } else {
                "special file"
            }
        ));
    }
    Ok(problems)
}

/// The text of `path`, which must be a regular file (a FIFO would block the read forever).
fn read_regular(path: &Path) -> Result<String> {
    let meta =
        fs::symlink_metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    if !meta.is_file() {
        bail!("{} is not a regular file: not read", path.display());
    }
    fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}
