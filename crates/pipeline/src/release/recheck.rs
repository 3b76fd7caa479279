//! A release folder checked again as a user would receive it. Every file is either written
//! again from the manifest and compared byte for byte (the pip index under `whl/`,
//! RELEASE_NOTES.md, the selector's wheel, the manifest's own form) or one of the manifest's
//! artifacts, whose sha256 and size SHA256SUMS and the manifest agree on (a wheel's RECORD
//! too). SHA256SUMS lists exactly the files at the top, and nothing else is anywhere: no other
//! folder, link or special file at any depth. Every name and line read from the release is
//! [`escaped`] in the problems returned.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs;
use std::path::Path;

use anyhow::{Context, Result, bail};

use super::links;
use super::{MANIFEST, Manifest, NOTES, SELECTOR_DATA, SELECTOR_WHEEL_KIND, write_indexes};
use crate::release::wheel_index::DIR;
use ct2v_bundle::checksums;
use ct2v_support::diagnostic::escaped;

/// Re-checks a release folder. Returns the problems found, one line each, escaped.
pub fn recheck(dir: &Path) -> Result<Vec<String>> {
    let TopLevel {
        files,
        mut problems,
    } = top_level(dir)?;
    let Sums {
        listed,
        problems: form,
    } = read_sums(dir)?;
    problems.extend(form);
    for name in &files {
        if name != checksums::FILE_NAME && !listed.contains_key(name) {
            problems.push(format!("{name} is not in SHA256SUMS"));
        }
    }
    let sizes = check_listed(dir, &listed, &files, &mut problems)?;
    match read_regular(&dir.join(MANIFEST)) {
        Ok(text) => {
            let manifest: Manifest = serde_json::from_str(&text)
                .with_context(|| format!("{MANIFEST} is not a release manifest"))?;
            problems.extend(check_manifest(&text, &manifest, &listed, &sizes)?);
            problems.extend(manifest.name_problems());
            problems.extend(regenerated(dir, &manifest)?);
        }
        Err(e) => problems.push(format!("cannot read {MANIFEST}: {e:#}")),
    }
    Ok(problems.iter().map(|p| escaped(p).into_owned()).collect())
}

/// Each file SHA256SUMS lists against its sha256 (a wheel's RECORD too), when it may be read;
/// returns the size of each file read.
fn check_listed(
    dir: &Path,
    listed: &BTreeMap<String, String>,
    files: &BTreeSet<String>,
    problems: &mut Vec<String>,
) -> Result<BTreeMap<String, u64>> {
    let mut sizes = BTreeMap::new();
    for (name, expected) in listed {
        if let Err(why) = readable(dir, name, files) {
            problems.push(why);
            continue;
        }
        let path = dir.join(name);
        let (actual, size) = ct2v_fetch::cache::sha256_file(&path)?;
        if &actual != expected {
            problems.push(format!(
                "{name}: sha256 {actual}, SHA256SUMS says {expected}"
            ));
        }
        if name.ends_with(".whl") {
            for p in ct2v_bundle::wheel::check_record(&path)? {
                problems.push(format!("{name}: {p}"));
            }
        }
        sizes.insert(name.clone(), size);
    }
    Ok(sizes)
}

/// What release writes from the manifest, written again and compared: the index (when every
/// variant can be a folder name), the notes and the selector's wheel.
fn regenerated(dir: &Path, manifest: &Manifest) -> Result<Vec<String>> {
    let mut problems: Vec<String> = manifest
        .path_problems()
        .into_iter()
        .map(|p| format!("{p}; the index is not checked"))
        .collect();
    if problems.is_empty() {
        problems.extend(check_indexes(dir, manifest)?);
    }
    problems.extend(check_notes(dir, manifest)?);
    problems.extend(check_selector(dir, manifest)?);
    Ok(problems)
}

/// What an entry of the release folder is (a link is never followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    File,
    Folder,
    Link,
    Special,
}

impl Kind {
    fn of(kind: fs::FileType) -> Kind {
        if kind.is_symlink() {
            Kind::Link
        } else if kind.is_dir() {
            Kind::Folder
        } else if kind.is_file() {
            Kind::File
        } else {
            Kind::Special
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::File => "file",
            Kind::Folder => "folder",
            Kind::Link => "link",
            Kind::Special => "special file",
        })
    }
}

/// The top of a release folder: its regular files, and a problem for anything else but the
/// `whl/` folder (a folder, link or special file, which release never writes there).
struct TopLevel {
    files: BTreeSet<String>,
    problems: Vec<String>,
}

fn top_level(dir: &Path) -> Result<TopLevel> {
    let mut top = TopLevel {
        files: BTreeSet::new(),
        problems: Vec::new(),
    };
    for entry in fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        match Kind::of(entry.file_type()?) {
            Kind::File => {
                top.files.insert(name);
            }
            Kind::Folder if name == DIR => {}
            kind => top.problems.push(format!(
                "{name}: not a file release writes (a {kind}); nothing is read from it"
            )),
        }
    }
    Ok(top)
}

/// SHA256SUMS read: each name with its sha256, and the problems of its form (a line that is
/// not `<sha256>  <file>` or `<sha256> *<file>` (`sha256sum -b`), a line end other than LF, a
/// name listed twice).
struct Sums {
    listed: BTreeMap<String, String>,
    problems: Vec<String>,
}

fn read_sums(dir: &Path) -> Result<Sums> {
    let text = read_regular(&dir.join(checksums::FILE_NAME))?;
    let mut sums = Sums {
        listed: BTreeMap::new(),
        problems: Vec::new(),
    };
    let mut other_ends = Vec::new();
    for (n, line) in text.split_inclusive('\n').enumerate() {
        let n = n + 1;
        let body = line.trim_end_matches(['\r', '\n']);
        let end = &line[body.len()..];
        if end != "\n" {
            other_ends.push((n, ends_in(end)));
        }
        let parsed = body
            .split_once(' ')
            .and_then(|(hex, rest)| Some((hex, rest.strip_prefix([' ', '*'])?)));
        match parsed {
            Some((hex, name)) if ct2v_fetch::cache::is_sha256(hex) => {
                if sums.listed.contains_key(name) {
                    sums.problems.push(format!(
                        "SHA256SUMS line {n}: {name} is listed a second time"
                    ));
                } else {
                    sums.listed.insert(name.to_string(), hex.to_string());
                }
            }
            _ => sums
                .problems
                .push(format!("SHA256SUMS line {n}: not `<sha256>  <file>`")),
        }
    }
    if let Some((n, end)) = other_ends.first() {
        let more = match other_ends.len() - 1 {
            0 => String::new(),
            k => format!(" (and {k} more lines)"),
        };
        sums.problems.push(format!(
            "SHA256SUMS line {n} {end} where release writes LF{more}"
        ));
    }
    Ok(sums)
}

/// Whether the file SHA256SUMS lists as `name` is read: only a regular file at the top of
/// the release (its assets are one flat folder); never a path out of it or through a link.
fn readable(dir: &Path, name: &str, files: &BTreeSet<String>) -> Result<(), String> {
    if files.contains(name) {
        return Ok(());
    }
    if let Err(why) = ct2v_support::safe_path::check_nonempty(name) {
        return Err(format!(
            "{name}: not a path inside the release ({why}); not read"
        ));
    }
    if let Some(link) = symlink_on_the_way(dir, name) {
        return Err(format!("{name}: a symlink ({link}); not followed"));
    }
    if name.contains(['/', '\\']) {
        return Err(format!(
            "{name}: not at the top of the release, where its files are; not read"
        ));
    }
    Err(format!("{name} is listed in SHA256SUMS but missing"))
}

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

/// The manifest is vouched for by SHA256SUMS, and must be what release writes for its own
/// content (parsed and written again, byte for byte): its artifacts are exactly the files
/// SHA256SUMS lists but itself and the notes, with their sha256 and size (`sizes`: the
/// listed files that were read).
fn check_manifest(
    text: &str,
    manifest: &Manifest,
    listed: &BTreeMap<String, String>,
    sizes: &BTreeMap<String, u64>,
) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    if let Some(diff) = first_difference(&serde_json::to_string_pretty(manifest)?, text) {
        problems.push(format!(
            "{MANIFEST}: not what release writes for its own content: {diff}"
        ));
    }
    if manifest.schema_version != super::SCHEMA_VERSION {
        problems.push(format!(
            "{MANIFEST}: schema_version {}, where this tool writes {}",
            manifest.schema_version,
            super::SCHEMA_VERSION
        ));
    }
    let mut rows = BTreeSet::new();
    for a in &manifest.artifacts {
        if !rows.insert(a.path.as_str()) {
            problems.push(format!("{}: in the manifest twice", a.path));
            continue;
        }
        match listed.get(&a.path) {
            Some(hex) if hex == &a.sha256 => {}
            Some(hex) => problems.push(format!(
                "{}: manifest says sha256 {}, SHA256SUMS says {hex}",
                a.path, a.sha256
            )),
            None => problems.push(format!("{}: in the manifest, not in SHA256SUMS", a.path)),
        }
        if let Some(size) = sizes.get(&a.path).filter(|s| **s != a.size) {
            problems.push(format!(
                "{}: the manifest says size {}, the file has {size} bytes",
                a.path, a.size
            ));
        }
    }
    for name in sizes.keys() {
        if name != MANIFEST && name != NOTES && !rows.contains(name.as_str()) {
            problems.push(format!(
                "{name}: in SHA256SUMS, not in the manifest (every file release publishes is \
                 one of its artifacts)"
            ));
        }
    }
    Ok(problems)
}

/// RELEASE_NOTES.md must be what `release` writes for the manifest.
fn check_notes(dir: &Path, manifest: &Manifest) -> Result<Vec<String>> {
    let found = match read_regular(&dir.join(NOTES)) {
        Ok(text) => text,
        Err(e) => return Ok(vec![format!("cannot read {NOTES}: {e:#}")]),
    };
    let wanted = super::notes::notes(manifest);
    Ok(first_difference(&wanted, &found)
        .map(|diff| format!("{NOTES}: not what release writes for the manifest: {diff}"))
        .into_iter()
        .collect())
}

/// The selector's wheel must be the one release writes for the release's variants.json (its
/// data block) and version.
fn check_selector(dir: &Path, manifest: &Manifest) -> Result<Vec<String>> {
    let Some(row) = manifest
        .artifacts
        .iter()
        .find(|a| a.kind == SELECTOR_WHEEL_KIND)
    else {
        return Ok(vec![format!(
            "{MANIFEST}: no {SELECTOR_WHEEL_KIND} artifact, where release writes one"
        )]);
    };
    let data = match read_regular(&dir.join(SELECTOR_DATA)) {
        Ok(text) => text,
        Err(e) => return Ok(vec![format!("cannot read {SELECTOR_DATA}: {e:#}")]),
    };
    let ctranslate2 = manifest
        .artifacts
        .iter()
        .find(|a| a.kind == "wheel")
        .map_or(manifest.version.as_str(), |a| a.ctranslate2.as_str());
    let version = super::selector_wheel::version_for(&manifest.version, ctranslate2);
    if let Err(why) = ct2v_support::safe_path::check_name(&version) {
        return Ok(vec![format!(
            "{MANIFEST}: the selector's version `{version}` (of its version and ctranslate2) \
             cannot be in a file name: {why}"
        )]);
    }
    let again = tempfile::tempdir()?;
    let name = match super::selector_wheel::write(&data, &version, again.path()) {
        Ok(name) => name,
        Err(e) => {
            return Ok(vec![format!(
                "{SELECTOR_DATA}: release could not write the selector's wheel of it: {e:#}"
            )]);
        }
    };
    if name != row.path {
        return Ok(vec![format!(
            "{}: release names the selector's wheel of this manifest {name}",
            row.path
        )]);
    }
    let found = dir.join(&name);
    if !fs::symlink_metadata(&found).is_ok_and(|m| m.is_file()) {
        // Named as missing or not a file by the SHA256SUMS check.
        return Ok(Vec::new());
    }
    let (have, _) = ct2v_fetch::cache::sha256_file(&found)?;
    let (want, _) = ct2v_fetch::cache::sha256_file(&again.path().join(&name))?;
    Ok((have != want)
        .then(|| {
            format!(
                "{name}: not the selector wheel release writes for {SELECTOR_DATA} (sha256 \
                 {have}, written again {want})"
            )
        })
        .into_iter()
        .collect())
}

/// The entries of a tree, by their `/`-separated path relative to the release folder.
type Entries = BTreeMap<String, Kind>;

/// Every entry below `dir/sub` (folders too); a link is listed, never followed. Empty when
/// `dir/sub` is not there.
fn entries_below(dir: &Path, sub: &str) -> Result<Entries> {
    let mut out = Entries::new();
    let mut stack = vec![dir.join(sub)];
    if !stack[0].is_dir() {
        return Ok(out);
    }
    while let Some(at) = stack.pop() {
        for entry in fs::read_dir(&at).with_context(|| format!("cannot list {}", at.display()))? {
            let entry = entry?;
            let path = entry.path();
            let kind = Kind::of(entry.file_type()?);
            if kind == Kind::Folder {
                stack.push(path.clone());
            }
            let relative = path.strip_prefix(dir).unwrap_or(&path);
            out.insert(relative.to_string_lossy().replace('\\', "/"), kind);
        }
    }
    Ok(out)
}

/// The entries of `these` that `those` lacks, leaving out those inside one already named.
fn only_in<'a>(these: &'a Entries, those: &Entries) -> Vec<(&'a str, Kind)> {
    let mut out: Vec<(&str, Kind)> = Vec::new();
    for (name, kind) in these {
        let inside_named = out
            .iter()
            .any(|(n, _)| name.strip_prefix(n).is_some_and(|r| r.starts_with('/')));
        if !those.contains_key(name) && !inside_named {
            out.push((name, *kind));
        }
    }
    out
}

/// The pip index must be exactly what `release` writes for the manifest: the same folders
/// and pages under `whl/` at every depth (none missing, none more, no link), each page byte
/// for byte (the first differing line named), and every link on them leading into the
/// release or to its `--index-base-url`.
fn check_indexes(dir: &Path, manifest: &Manifest) -> Result<Vec<String>> {
    let expected = tempfile::tempdir()?;
    write_indexes(
        expected.path(),
        &manifest.artifacts,
        manifest.index_base_url.as_deref(),
    )?;
    let want = entries_below(expected.path(), DIR)?;
    let have = match fs::symlink_metadata(dir.join(DIR)) {
        Ok(m) if m.is_dir() => entries_below(dir, DIR)?,
        // Named by `top_level`, and not followed.
        Ok(_) => return Ok(Vec::new()),
        Err(_) => Entries::new(),
    };
    let mut problems = Vec::new();
    for (name, kind) in only_in(&want, &have) {
        problems.push(format!("{name} is missing (release writes a {kind})"));
    }
    for (name, kind) in only_in(&have, &want) {
        problems.push(format!(
            "{name}: not written by release (a {kind} too many in the index)"
        ));
    }
    for (name, kind) in &want {
        match have.get(name) {
            Some(found) if found != kind => {
                problems.push(format!("{name}: a {found} where release writes a {kind}"))
            }
            Some(Kind::File) => problems.extend(check_page(dir, expected.path(), name)?),
            _ => {}
        }
    }
    Ok(problems)
}

/// One page of the index against the one release writes, and where its links lead.
fn check_page(dir: &Path, expected: &Path, name: &str) -> Result<Vec<String>> {
    let wanted = fs::read_to_string(expected.join(name))?;
    let found = match read_regular(&dir.join(name)) {
        Ok(text) => text,
        Err(e) => return Ok(vec![format!("{name}: {e:#}")]),
    };
    let mut problems = Vec::new();
    if let Some(diff) = first_difference(&wanted, &found) {
        problems.push(format!(
            "{name}: {diff} (the index is not what release wrote)"
        ));
    }
    for (href, target) in links::links(name, &found) {
        if let Err(why) = target {
            problems.push(format!("{name}: link `{href}` {why}"));
        }
    }
    Ok(problems)
}

/// How `found` first differs from `wanted`, by line: two lines that differ only in their
/// ends (CR LF for LF, trailing blanks, no line end) say so; past the end of one side, which
/// side is longer and its next line.
fn first_difference(wanted: &str, found: &str) -> Option<String> {
    if wanted == found {
        return None;
    }
    let wanted: Vec<&str> = wanted.split_inclusive('\n').collect();
    let found: Vec<&str> = found.split_inclusive('\n').collect();
    let same = wanted
        .iter()
        .zip(&found)
        .take_while(|(w, f)| w == f)
        .count();
    let n = same + 1;
    let more = |lines: &[&str]| match lines.len().saturating_sub(n) {
        0 => String::new(),
        k => format!(" and {k} more"),
    };
    Some(match (wanted.get(same), found.get(same)) {
        (Some(w), Some(f)) if w.trim_end() == f.trim_end() => format!(
            "line {n} {} where release writes {}",
            ends_in(&f[f.trim_end().len()..]),
            line_end(&w[w.trim_end().len()..])
        ),
        (Some(w), Some(f)) => format!("line {n}: expected {}, found {}", shown(w), shown(f)),
        (Some(w), None) => format!(
            "the file is shorter than what release writes: it ends after line {same}, release \
             writes line {n} {}{}",
            shown(w),
            more(&wanted)
        ),
        (None, Some(f)) => format!(
            "the file is longer than what release writes: line {n} is extra: {}{}",
            shown(f),
            more(&found)
        ),
        (None, None) => return None,
    })
}

/// A line as a message shows it: in backticks, without its end, cut at 160 characters.
fn shown(line: &str) -> String {
    let line: String = line
        .trim_end_matches(['\r', '\n'])
        .chars()
        .take(160)
        .collect();
    format!("`{line}`")
}

/// `ends in CR LF`, `ends in 2 spaces LF`, or `has no line end`, of a line's trailing blanks.
fn ends_in(end: &str) -> String {
    if end.is_empty() {
        "has no line end".into()
    } else {
        format!("ends in {}", line_end(end))
    }
}

/// The blanks `end` is made of, by name: `CR LF`, `2 spaces LF`, `no line end`.
fn line_end(end: &str) -> String {
    if end.is_empty() {
        return "no line end".into();
    }
    let mut runs: Vec<(char, usize)> = Vec::new();
    for c in end.chars() {
        match runs.last_mut() {
            Some((last, count)) if *last == c => *count += 1,
            _ => runs.push((c, 1)),
        }
    }
    let named: Vec<String> = runs
        .into_iter()
        .map(|(c, count)| {
            let name = match c {
                '\n' => "LF".to_string(),
                '\r' => "CR".to_string(),
                ' ' if count > 1 => "spaces".to_string(),
                ' ' => "space".to_string(),
                '\t' if count > 1 => "tabs".to_string(),
                '\t' => "tab".to_string(),
                c => format!("U+{:04X}", c as u32),
            };
            if count > 1 {
                format!("{count} {name}")
            } else {
                name
            }
        })
        .collect();
    named.join(" ")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_ends_and_lengths_are_said_not_shown_as_equal_lines() {
        let page = "a\nb\n";
        assert_eq!(first_difference(page, page), None);
        assert_eq!(
            first_difference(page, "a\r\nb\r\n").unwrap(),
            "line 1 ends in CR LF where release writes LF"
        );
        assert_eq!(
            first_difference(page, "a\nb  \t\n").unwrap(),
            "line 2 ends in 2 spaces tab LF where release writes LF"
        );
        assert_eq!(
            first_difference(page, "a\nb").unwrap(),
            "line 2 has no line end where release writes LF"
        );
        assert_eq!(
            first_difference("a", "a\n").unwrap(),
            "line 1 ends in LF where release writes no line end"
        );
        assert_eq!(
            first_difference(page, "a\nb\nc\nd\n").unwrap(),
            "the file is longer than what release writes: line 3 is extra: `c` and 1 more"
        );
        assert_eq!(
            first_difference(page, "a\n").unwrap(),
            "the file is shorter than what release writes: it ends after line 1, release \
             writes line 2 `b`"
        );
        assert_eq!(
            first_difference(page, "a\nc\n").unwrap(),
            "line 2: expected `b`, found `c`"
        );
    }
}
