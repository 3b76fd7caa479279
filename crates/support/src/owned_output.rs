//! Folders this tool writes whole and replaces on a later run (a bundle's `--out` and portable
//! folder, an unpacked or assembled source tree): each holds a record of what was written, and
//! is replaced only when it is provably that output, unchanged since.
//!
//! The record ([`RECORD`]) names the tool, a random token, the folder's canonical path, and
//! every file (size and sha256), link (its target) and empty folder written; other folders are
//! implied by what is below them. A folder is this tool's to replace when the record parses,
//! names this very folder (a copied or moved output is not ours), and what is below it is
//! exactly what the record lists. Anything else is bad input naming what differs, and nothing
//! is touched. A missing or empty folder holds nothing to lose.
//!
//! The names this tool reserves at the top of the folder are proven like any other: the
//! record must be a regular file (read only up to [`RECORD_CAP`], never through a link, never
//! waited on as a FIFO), and a staging marker ([`staging::MARKER`]) is ours only where the
//! record lists it (a staging folder that became the output, which may drop it later) or where
//! this run just wrote it. A link, FIFO or user's file at either name is a difference, named.
//!
//! A run checks twice: before any work ([`claim`]: names, kinds and sizes) and at the swap
//! ([`replace`]: every digest too), on the old folder once it is moved aside, so that nothing
//! changes it between that check and its deletion. The swap also needs the folder to be the
//! very one claimed (the same token): of two runs into one folder, the second to finish fails
//! rather than deleting the first one's output.

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::diagnostic::InputError;
use crate::digest::sha256_file;
use crate::paths::shown;
use crate::regular_file;
use crate::{fsx, staging};

/// The record's file, at the top of the folder it describes.
pub const RECORD: &str = ".ct2v-owned";

/// The most bytes of a record read: a source tree of tens of thousands of files fits many
/// times over, `/dev/zero` does not.
pub const RECORD_CAP: u64 = 64 << 20;

const WRITTEN_BY: &str = "ct2-variants xtask";

/// The most differences an error lists.
const LISTED: usize = 10;

#[derive(Debug, Serialize, Deserialize)]
struct Record {
    written_by: String,
    token: String,
    /// The folder's canonical path when written.
    folder: String,
    entries: BTreeMap<String, Entry>,
}

/// What the record says of one path below the folder (`/`-separated).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Entry {
    File {
        size: u64,
        sha256: String,
    },
    Link {
        target: String,
    },
    /// An empty folder (one with anything below it is implied).
    Folder,
}

/// What an output folder was when a run checked it, before its work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// Nothing there, or an empty folder.
    Free,
    /// An output of this tool, unchanged; its record's token.
    Ours(String),
}

/// Whether `dest` (named `what` in messages, e.g. `--out`) may be replaced by this run's
/// output: missing, empty, or this tool's output unchanged (sizes checked; the digests are
/// checked by [`replace`]). Refused as bad input naming what differs.
pub fn claim(what: &str, dest: &Path) -> Result<Claim, InputError> {
    match fs::symlink_metadata(dest) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Claim::Free),
        Err(e) => return Err(refusal(what, dest, &format!("it cannot be read: {e}"), &[])),
        Ok(meta) if !meta.is_dir() => return Err(not_a_folder(what, dest)),
        Ok(_) => {}
    }
    if is_empty(dest).map_err(|e| cannot_check(what, dest, &e))? {
        return Ok(Claim::Free);
    }
    // A run killed between marking its old output for removal and moving it aside left the
    // marker in it; the folder is still the output its record lists.
    if staging::left_by_a_killed_move(dest) {
        staging::unmark(dest).map_err(|e| cannot_check(what, dest, &e))?;
    }
    let named = location(dest).map_err(|e| cannot_check(what, dest, &e))?;
    prove(what, dest, dest, &named, Depth::Sizes).map(Claim::Ours)
}

/// Writes the record of `dir`, a finished output that is to become `dest`, into it.
pub fn record(dir: &Path, dest: &Path) -> Result<()> {
    let mut entries = BTreeMap::new();
    for (name, found) in walk(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        if name == RECORD {
            continue;
        }
        let entry = match found {
            Found::File { path, .. } => {
                let (sha256, size) = sha256_file(&path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                Entry::File { size, sha256 }
            }
            Found::Link(target) => Entry::Link { target },
            Found::Folder => Entry::Folder,
            Found::Other => bail!(
                "{}: `{}` is not a file, folder or link this tool writes",
                dir.display(),
                name.escape_debug()
            ),
        };
        entries.insert(name, entry);
    }
    let record = Record {
        written_by: WRITTEN_BY.to_string(),
        token: staging::token(),
        folder: location(dest)?.display().to_string(),
        entries,
    };
    fsx::write_atomically(
        &dir.join(RECORD),
        &(serde_json::to_string_pretty(&record)? + "\n"),
    )
}

/// Puts the finished `staged` folder at `dest`, whose old folder is deleted only when it is
/// still what [`claim`] found: proven (every digest) and checked to be the very output
/// claimed, then moved aside; otherwise the run stops with it untouched, as bad input when it
/// holds what this tool did not write, as a failure when another run replaced it meanwhile.
pub fn replace(what: &str, staged: &Path, dest: &Path, claim: &Claim) -> Result<()> {
    let named = location(dest).with_context(|| format!("cannot reach {}", dest.display()))?;
    let old = match fs::symlink_metadata(dest) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", dest.display())),
        Ok(meta) if !meta.is_dir() => return Err(not_a_folder(what, dest).into()),
        // Nothing to keep: an empty folder goes, or the rename below finds it filled.
        Ok(_) if is_empty(dest).map_err(|e| cannot_check(what, dest, &e))? => {
            let _ = fs::remove_dir(dest);
            None
        }
        Ok(_) => Some(move_aside(what, dest, &named, claim)?),
    };
    if let Err(e) = fs::rename(staged, dest) {
        if let Some(aside) = &old {
            let _ = staging::unmark(aside);
            let _ = fs::rename(aside, dest);
        }
        return Err(e).with_context(|| format!("cannot move the new folder to {}", dest.display()));
    }
    if let Some(aside) = old {
        // An old folder that cannot be deleted is only clutter: the new one is in place. It is
        // deleted marker last, so that a run killed meanwhile leaves it for the next sweep.
        let _ = staging::remove(&aside);
    }
    Ok(())
}

/// Moves the old output at `dest` aside, once proven what `claim` found, every digest, where
/// it is. It is marked for the sweep under the name it is moved to before the move, so that a
/// run killed at any point leaves it in place or marked for the next run to remove; what was
/// written into it between the proof and the move (names, sizes) puts it back, refused.
fn move_aside(what: &str, dest: &Path, named: &Path, claim: &Claim) -> Result<PathBuf> {
    still_claimed(what, dest, named, claim)?;
    let aside = fsx::aside(dest);
    // A marker the record lists (a staging folder's, proven with the rest) gives way to ours,
    // which is made new, so that nothing put at its name since is written through.
    staging::unmark(dest).with_context(|| format!("cannot mark {} for removal", dest.display()))?;
    let marker = staging::mark_as(dest, &aside)
        .with_context(|| format!("cannot mark {} for removal", dest.display()))?;
    if let Err(e) = fs::rename(dest, &aside) {
        let _ = staging::unmark(dest);
        return Err(e).with_context(|| format!("cannot move {} aside", dest.display()));
    }
    if let Err(e) = prove(what, &aside, dest, named, Depth::MarkedAside(&marker)) {
        let _ = staging::unmark(&aside);
        if fs::rename(&aside, dest).is_err() {
            bail!(
                "{e:#}\nit could not be put back: it is now {} (rename it back)",
                shown(&aside)
            );
        }
        return Err(e.into());
    }
    Ok(aside)
}

/// Runs `write`, a step of this tool that writes into the recorded folder holding `inside`,
/// and records that folder again afterwards if it was unchanged right before.
///
/// An unpacked source tree is written into later by this tool's own steps (the patch series
/// and its `.ct2v-patches`, the DLLs copied in, pip's in-tree build of `python/`). Re-recording
/// after each such step, and only when the tree was proven unchanged just before it, keeps the
/// rule sound: what the record takes in is what changed while this tool itself was writing, so
/// a user's edit, made between steps, still stops the next replace and is named. A step that
/// writes into the tree without this leaves it refused (named, never deleted).
pub fn rerecord_after<T>(inside: &Path, write: impl FnOnce() -> Result<T>) -> Result<T> {
    let Some(folder) = inside
        .ancestors()
        .filter(|a| !a.as_os_str().is_empty())
        .find(|a| a.join(RECORD).is_file())
    else {
        return write();
    };
    let ours = location(folder)
        .is_ok_and(|named| prove("", folder, folder, &named, Depth::Digests).is_ok());
    let written = write();
    if ours {
        record(folder, folder)?;
    }
    written
}

/// How far a proof goes: [`claim`] compares sizes, [`replace`] every digest; the folder moved
/// aside compares sizes and holds the marker this run wrote (its text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Depth<'a> {
    Sizes,
    Digests,
    MarkedAside(&'a str),
}

/// The output at `dest` is what `claim` found, every digest checked.
fn still_claimed(what: &str, dest: &Path, named: &Path, claim: &Claim) -> Result<()> {
    let token = prove(what, dest, dest, named, Depth::Digests)?;
    if *claim != Claim::Ours(token) {
        bail!(
            "{what} {} is not replaced: another run of this tool wrote it while this one \
             worked; run again once that one has finished",
            shown(dest)
        );
    }
    Ok(())
}

/// The record's token when `dir` (shown as `shown_as`) is the output its record lists and
/// names `named`; else the refusal naming what differs.
fn prove(
    what: &str,
    dir: &Path,
    shown_as: &Path,
    named: &Path,
    depth: Depth,
) -> Result<String, InputError> {
    let cannot = |e: io::Error| cannot_check(what, shown_as, &e);
    let text = match regular_file::read_small_to_string(&dir.join(RECORD), RECORD_CAP) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let why = format!(
                "it holds files not written by this tool (it has no {RECORD}, nor has an output \
                 of an older version of this tool)"
            );
            return Err(refusal(
                what,
                shown_as,
                &why,
                &top_level(dir).map_err(cannot)?,
            ));
        }
        Err(e) => {
            let why = format!("its {RECORD} cannot be read as a record of this tool: {e}");
            return Err(refusal(
                what,
                shown_as,
                &why,
                &top_level(dir).map_err(cannot)?,
            ));
        }
    };
    let record = match serde_json::from_str::<Record>(&text) {
        Ok(record) if record.written_by == WRITTEN_BY => record,
        _ => {
            let why = format!("its {RECORD} is not a record this tool wrote");
            return Err(refusal(
                what,
                shown_as,
                &why,
                &top_level(dir).map_err(cannot)?,
            ));
        }
    };
    let differences = differences(dir, &record.entries, depth).map_err(cannot)?;
    if record.folder != named.display().to_string() {
        let why = format!(
            "its record names another folder, `{}`: a copy or a move of an output is not the \
             output this tool wrote here",
            record.folder.escape_debug()
        );
        return Err(refusal(what, shown_as, &why, &differences));
    }
    if !differences.is_empty() {
        let why = "it is not as this tool wrote it";
        return Err(refusal(what, shown_as, why, &differences));
    }
    Ok(record.token)
}

/// One way a folder differs from its record, by path below it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Difference {
    Unexpected(String),
    Changed(String),
    Missing(String),
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (name, state) = match self {
            Difference::Unexpected(name) => (name, "not written by this tool"),
            Difference::Changed(name) => (name, "changed since this tool wrote it"),
            Difference::Missing(name) => (name, "missing (deleted since this tool wrote it)"),
        };
        write!(f, "{}: {state}", name.escape_debug())
    }
}

/// What is below `dir` and not as `entries` lists it, the unexpected first.
fn differences(
    dir: &Path,
    entries: &BTreeMap<String, Entry>,
    depth: Depth,
) -> io::Result<Vec<Difference>> {
    let mut found = walk(dir)?;
    let mut out = Vec::new();
    // The record, read as a regular file already, is what lists the rest.
    if !matches!(found.remove(RECORD), Some(Found::File { .. })) {
        out.push(Difference::Changed(RECORD.to_string()));
    }
    let mut entries = std::borrow::Cow::Borrowed(entries);
    if let Depth::MarkedAside(written) = depth {
        let ours = match found.remove(staging::MARKER) {
            Some(Found::File { path, .. }) => regular_file::read_small(&path, RECORD_CAP)
                .is_ok_and(|text| text == written.as_bytes()),
            _ => false,
        };
        if !ours {
            out.push(Difference::Changed(staging::MARKER.to_string()));
        }
        entries.to_mut().remove(staging::MARKER);
    }
    for (name, thing) in &found {
        let same = match (entries.get(name), thing) {
            (None, _) => {
                out.push(Difference::Unexpected(name.clone()));
                continue;
            }
            (Some(Entry::File { size, sha256 }), Found::File { size: now, path }) => {
                size == now && (depth != Depth::Digests || sha256_file(path)?.0 == *sha256)
            }
            (Some(Entry::Link { target }), Found::Link(now)) => target == now,
            (Some(Entry::Folder), Found::Folder) => true,
            _ => false,
        };
        if !same {
            out.push(Difference::Changed(name.clone()));
        }
    }
    for (name, entry) in entries.iter() {
        // A staging folder's marker that became the output's is taken out once in place.
        if name == staging::MARKER {
            continue;
        }
        let below = format!("{name}/");
        let filled = matches!(entry, Entry::Folder)
            && found
                .range(below.clone()..)
                .next()
                .is_some_and(|(k, _)| k.starts_with(&below));
        if !found.contains_key(name) && !filled {
            out.push(Difference::Missing(name.clone()));
        }
    }
    out.sort();
    Ok(out)
}

/// The entries at the top of a folder without a record: all of them unexpected.
fn top_level(dir: &Path) -> io::Result<Vec<Difference>> {
    let mut names = Vec::new();
    for entry in fs::read_dir(dir)? {
        names.push(Difference::Unexpected(
            entry?.file_name().to_string_lossy().into_owned(),
        ));
    }
    names.sort();
    Ok(names)
}

/// One thing below a folder.
enum Found {
    File {
        size: u64,
        path: PathBuf,
    },
    Link(String),
    /// An empty folder.
    Folder,
    /// A device, a FIFO, a socket, or a name that is not UTF-8: never written by this tool.
    Other,
}

/// Everything below `dir` (links not followed) by `/`-separated path, folders only when
/// empty; the names this tool reserves too, whatever they are.
fn walk(dir: &Path) -> io::Result<BTreeMap<String, Found>> {
    let mut found = BTreeMap::new();
    let mut stack = vec![(dir.to_path_buf(), String::new())];
    while let Some((at, prefix)) = stack.pop() {
        let mut empty = true;
        for entry in fs::read_dir(&at)? {
            let entry = entry?;
            empty = false;
            let raw = entry.file_name();
            let name = raw.to_string_lossy();
            let relative = match prefix.as_str() {
                "" => name.to_string(),
                _ => format!("{prefix}/{name}"),
            };
            let kind = entry.file_type()?;
            let thing = if raw.to_str().is_none() {
                Found::Other
            } else if kind.is_dir() {
                stack.push((entry.path(), relative));
                continue;
            } else if kind.is_file() {
                let size = entry.metadata()?.len();
                Found::File {
                    size,
                    path: entry.path(),
                }
            } else if kind.is_symlink() {
                let target = fs::read_link(entry.path())?;
                Found::Link(target.to_string_lossy().into_owned())
            } else {
                Found::Other
            };
            // A name that is not UTF-8 may read as another one: then neither is ours.
            if found.insert(relative.clone(), thing).is_some() {
                found.insert(relative, Found::Other);
            }
        }
        if empty && !prefix.is_empty() {
            found.insert(prefix, Found::Folder);
        }
    }
    Ok(found)
}

/// Where `dest` is, whether or not it exists yet: its parent's canonical path and its name.
fn location(dest: &Path) -> io::Result<PathBuf> {
    let name = dest
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path has no final name"))?;
    let parent = match dest.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    Ok(dunce::canonicalize(parent)?.join(name))
}

fn is_empty(dir: &Path) -> io::Result<bool> {
    Ok(fs::read_dir(dir)?.next().is_none())
}

fn not_a_folder(what: &str, dest: &Path) -> InputError {
    refusal(
        what,
        dest,
        "it is a file or a link, not a folder this tool wrote",
        &[],
    )
}

fn cannot_check(what: &str, dest: &Path, e: &io::Error) -> InputError {
    refusal(what, dest, &format!("it cannot be checked: {e}"), &[])
}

/// The error for a folder that is not replaced: why, and the first differences.
fn refusal(what: &str, dest: &Path, why: &str, differences: &[Difference]) -> InputError {
    let mut message = format!("{what} {} is not replaced: {why}", shown(dest))
        .trim_start()
        .to_string();
    for difference in differences.iter().take(LISTED) {
        message.push_str(&format!("\n  {difference}"));
    }
    if differences.len() > LISTED {
        message.push_str(&format!("\n  … and {} more", differences.len() - LISTED));
    }
    InputError::new(message).note(
        "nothing was changed: keep what you need elsewhere and remove the folder yourself, or \
         choose another folder",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A finished output of two files and an empty folder, recorded as `dest`'s.
    fn staged_output(dir: &Path, dest: &Path, text: &str) -> PathBuf {
        let staged = dir.join(format!(".staged-{text}"));
        fs::create_dir_all(staged.join("sub")).unwrap();
        fs::create_dir_all(staged.join("empty")).unwrap();
        fs::write(staged.join("a.whl"), text).unwrap();
        fs::write(staged.join("sub/b.txt"), "b").unwrap();
        record(&staged, dest).unwrap();
        staged
    }

    fn refused(result: Result<impl fmt::Debug, InputError>) -> String {
        result.unwrap_err().to_string()
    }

    #[test]
    fn an_output_is_replaced_only_while_it_is_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("out");
        assert_eq!(claim("--out", &dest).unwrap(), Claim::Free);
        let first = staged_output(dir.path(), &dest, "one");
        replace("--out", &first, &dest, &Claim::Free).unwrap();
        assert!(!first.exists() && dest.join("empty").is_dir());
        let claimed = claim("--out", &dest).unwrap();
        assert!(matches!(claimed, Claim::Ours(_)));
        let second = staged_output(dir.path(), &dest, "two");
        replace("--out", &second, &dest, &claimed).unwrap();
        assert_eq!(fs::read_to_string(dest.join("a.whl")).unwrap(), "two");
        assert!(!fsx::aside(&dest).exists());

        // Each change is named: an added file, a removed one, a filled empty folder.
        fs::write(dest.join("notes.txt"), "mine").unwrap();
        fs::remove_file(dest.join("sub/b.txt")).unwrap();
        fs::write(dest.join("empty/x"), "").unwrap();
        let e = refused(claim("--out", &dest));
        for needle in [
            "--out",
            "notes.txt: not written by this tool",
            "empty/x: not written by this tool",
            "sub/b.txt: missing",
        ] {
            assert!(e.contains(needle), "{needle} in {e}");
        }
        assert!(!e.contains("empty: missing"), "{e}");
    }

    #[test]
    fn a_same_size_edit_is_caught_at_the_swap_and_the_folder_put_back() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("out");
        let first = staged_output(dir.path(), &dest, "one");
        replace("--out", &first, &dest, &Claim::Free).unwrap();
        let claimed = claim("--out", &dest).unwrap();
        // Edited after the run claimed it, keeping the size.
        fs::write(dest.join("a.whl"), "ONE").unwrap();
        let second = staged_output(dir.path(), &dest, "two");
        let e = replace("--out", &second, &dest, &claimed).unwrap_err();
        let input = e.downcast_ref::<InputError>().expect("bad input");
        assert!(input.message.contains("a.whl: changed"), "{input}");
        assert_eq!(fs::read_to_string(dest.join("a.whl")).unwrap(), "ONE");
        assert!(second.is_dir() && !fsx::aside(&dest).exists());
    }

    /// Two runs into one folder: the second to finish finds the first's output, not the
    /// folder it claimed, and stops without deleting it.
    #[test]
    fn a_folder_filled_or_replaced_after_the_claim_is_not_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("out");
        let claimed = claim("--out", &dest).unwrap();
        let other_run = staged_output(dir.path(), &dest, "other");
        replace("--out", &other_run, &dest, &claimed).unwrap();
        let mine = staged_output(dir.path(), &dest, "mine");
        let e = replace("--out", &mine, &dest, &claimed).unwrap_err();
        assert!(e.downcast_ref::<InputError>().is_none(), "a failure: {e}");
        assert!(format!("{e:#}").contains("another run"), "{e:#}");
        assert_eq!(fs::read_to_string(dest.join("a.whl")).unwrap(), "other");
        // A user's file put into a folder that was empty when claimed.
        let user = dir.path().join("user");
        fs::create_dir_all(&user).unwrap();
        let claimed = claim("--out", &user).unwrap();
        assert_eq!(claimed, Claim::Free);
        fs::write(user.join("thesis.txt"), "years").unwrap();
        let e = replace("--out", &mine, &user, &claimed).unwrap_err();
        assert!(
            format!("{e:#}").contains("thesis.txt: not written by"),
            "{e:#}"
        );
        assert_eq!(
            fs::read_to_string(user.join("thesis.txt")).unwrap(),
            "years"
        );
    }

    #[test]
    fn a_copy_a_file_and_a_foreign_record_are_not_ours() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("out");
        let first = staged_output(dir.path(), &dest, "one");
        replace("--out", &first, &dest, &Claim::Free).unwrap();
        let copy = dir.path().join("copy");
        fsx::copy_tree(&dest, &copy).unwrap();
        assert!(refused(claim("--out", &copy)).contains("names another folder"));
        fs::write(copy.join(RECORD), "{}").unwrap();
        assert!(refused(claim("--out", &copy)).contains("not a record this tool wrote"));
        let file = dir.path().join("file");
        fs::write(&file, "").unwrap();
        assert!(refused(claim("--out", &file)).contains("is a file or a link"));
    }

    #[test]
    fn a_tree_written_by_a_step_of_this_tool_is_recorded_again_unless_changed_before() {
        let dir = tempfile::tempdir().unwrap();
        let tree = dir.path().join("src");
        let staged = staged_output(dir.path(), &tree, "one");
        replace("", &staged, &tree, &Claim::Free).unwrap();
        rerecord_after(&tree.join("sub"), || {
            fs::write(tree.join("sub/built.o"), "o").map_err(Into::into)
        })
        .unwrap();
        assert!(matches!(claim("", &tree).unwrap(), Claim::Ours(_)));
        // A user's edit before the step: the step's writes are not taken in either.
        fs::write(tree.join("mine.txt"), "mine").unwrap();
        rerecord_after(&tree, || {
            fs::write(tree.join("built2.o"), "o").map_err(Into::into)
        })
        .unwrap();
        let e = refused(claim("", &tree));
        assert!(
            e.contains("mine.txt: not written") && e.contains("built2.o"),
            "{e}"
        );
    }

    /// The marker's name at the top of an output is proven like any other file: a user's file,
    /// a link (whose target stays untouched) or a FIFO there stops the claim and the replace.
    /// A staging folder's marker the record lists (a staging folder that became the output) is
    /// ours, there or taken out; the record itself must be a regular file.
    #[test]
    fn the_names_this_tool_reserves_are_proven_like_any_other_file() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("out");
        let first = staged_output(dir.path(), &dest, "one");
        replace("--out", &first, &dest, &Claim::Free).unwrap();
        let users = dir.path().join("users.txt");
        fs::write(&users, "mine").unwrap();
        let marker = dest.join(staging::MARKER);
        let forms: &[&str] = if cfg!(unix) {
            &["file", "link", "FIFO"]
        } else {
            &["file"]
        };
        let plant = |form: &str| match form {
            "file" => fs::write(&marker, "mine").unwrap(),
            #[cfg(unix)]
            "link" => std::os::unix::fs::symlink(&users, &marker).unwrap(),
            _ => {
                let status = std::process::Command::new("mkfifo")
                    .arg(&marker)
                    .status()
                    .unwrap();
                assert!(status.success());
            }
        };
        for &form in forms {
            let claimed = claim("--out", &dest).unwrap();
            plant(form);
            assert!(refused(claim("--out", &dest)).contains(".ct2v-made-by-xtask: not written"));
            let second = staged_output(dir.path(), &dest, "two");
            let e = replace("--out", &second, &dest, &claimed).unwrap_err();
            assert!(format!("{e:#}").contains(".ct2v-made-by-xtask"), "{e:#}");
            assert!(fs::symlink_metadata(&marker).is_ok() && second.is_dir());
            assert_eq!(fs::read_to_string(&users).unwrap(), "mine");
            fs::remove_file(&marker).unwrap();
            fs::remove_dir_all(&second).unwrap();
        }

        // A staging folder, marked, recorded and put in place (as unpack does).
        let tree = dir.path().join("tree");
        let staged = staging::create(dir.path(), ".tree-", &crate::report::Reporter::captured())
            .unwrap()
            .keep();
        fs::write(staged.join("a.txt"), "a").unwrap();
        record(&staged, &tree).unwrap();
        replace("", &staged, &tree, &Claim::Free).unwrap();
        let claimed = claim("", &tree).unwrap();
        assert!(matches!(claimed, Claim::Ours(_)));
        let again = staged_output(dir.path(), &tree, "again");
        replace("", &again, &tree, &claimed).unwrap();
        staging::unmark(&tree).unwrap();
        assert!(matches!(claim("", &tree).unwrap(), Claim::Ours(_)));

        let record_file = tree.join(RECORD);
        let copy = dir.path().join("record-copy");
        fs::rename(&record_file, &copy).unwrap();
        fs::create_dir(&record_file).unwrap();
        let e = refused(claim("", &tree));
        assert!(
            e.contains("cannot be read as a record") && e.contains("folder"),
            "{e}"
        );
        #[cfg(unix)]
        {
            fs::remove_dir(&record_file).unwrap();
            std::os::unix::fs::symlink(&copy, &record_file).unwrap();
            let e = refused(claim("", &tree));
            assert!(
                e.contains("cannot be read as a record") && e.contains("link"),
                "{e}"
            );
        }
    }

    /// A run killed between marking its old output with the aside name and the rename leaves
    /// that marker in the output: the next run takes it out and replaces the output. Only that
    /// marker, for a process that is gone (or its line not yet whole), counts.
    #[test]
    fn a_marker_left_by_a_run_killed_while_moving_the_output_aside_is_taken_out() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("out");
        let first = staged_output(dir.path(), &dest, "one");
        replace("--out", &first, &dest, &Claim::Free).unwrap();
        let marker = dest.join(staging::MARKER);
        let gone = dest.with_file_name(".out.old-4000000000");
        let line = staging::mark_as(&dest, &gone).unwrap();
        let half = &line[..line.len() / 2];
        for left in [line.as_str(), half, ""] {
            fs::write(&marker, left).unwrap();
            let claimed = claim("--out", &dest).unwrap();
            assert!(matches!(claimed, Claim::Ours(_)), "{left:?}");
            assert!(!marker.exists(), "{left:?}");
            let next = staged_output(dir.path(), &dest, "next");
            replace("--out", &next, &dest, &claimed).unwrap();
        }
        // A live process's marker, another folder's, or a user's file: not taken out.
        let alive = dest.with_file_name(format!(".out.old-{}", std::process::id()));
        fs::create_dir_all(dir.path().join("x")).unwrap();
        let alive_line = staging::mark_as(&dir.path().join("x"), &alive).unwrap();
        let other = dir.path().join("elsewhere").join(".out.old-4000000000");
        fs::create_dir_all(other.parent().unwrap()).unwrap();
        let other_line = line.replace(
            &dunce::canonicalize(dir.path())
                .unwrap()
                .display()
                .to_string(),
            &dunce::canonicalize(other.parent().unwrap())
                .unwrap()
                .display()
                .to_string(),
        );
        for kept in [
            alive_line.as_str(),
            other_line.as_str(),
            "mine",
            "ct2-variants xtask made x",
        ] {
            fs::write(&marker, kept).unwrap();
            let e = refused(claim("--out", &dest));
            assert!(e.contains(".ct2v-made-by-xtask"), "{kept:?}: {e}");
            assert_eq!(fs::read_to_string(&marker).unwrap(), kept);
        }
    }

    #[test]
    fn names_are_escaped_and_the_list_is_capped() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("out");
        fs::create_dir_all(&dest).unwrap();
        // Windows has no file names with control characters.
        let hostile = cfg!(unix);
        if hostile {
            fs::write(dest.join("evil\n  forged: fine\u{1b}[2J"), "").unwrap();
        }
        for i in 0..20 {
            fs::write(dest.join(format!("f{i:02}")), "").unwrap();
        }
        let e = refused(claim("--out", &dest));
        if hostile {
            assert!(e.contains("evil\\n  forged: fine\\u{1b}[2J"), "{e}");
        }
        let more = if hostile { 11 } else { 10 };
        assert!(e.contains(&format!("… and {more} more")), "{e}");
        assert!(!e.contains('\u{1b}'), "{e}");
    }
}
