//! A source tree put together from a git tag's archive and one archive per submodule (nested
//! ones too), each checked against the commit it must be, in a staging folder that is renamed
//! into place only when every check passed: a refused archive leaves the destination as it was.
//!
//! The checks, for archives made by `git archive` (see `inputs::github` for the sources):
//! - each archive's pax global header names the commit its record says (the tag's commit for
//!   the tag archive, the gitlink for a submodule);
//! - the submodules recorded below a tree are exactly those its `.gitmodules` lists (a missing
//!   record would leave an empty folder behind; an extra one fills a folder git never made);
//! - a submodule's folder is an empty directory in its parent's archive before it is filled.
//!
//! Each archive is unpacked by `unpack`, with its protections against hostile archives.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::gitmodules;
use super::unpack::{self, Unpacked, archive_commit};
use ct2v_support::diagnostic::InputError;
use ct2v_support::owned_output;
use ct2v_support::report::Reporter;

/// How messages name the folder a source is assembled into.
const DESTINATION: &str = "the assembled source's destination";

/// One archive: the input it is, where the verified download is, the folder inside it, and
/// the commit its pax header must name.
#[derive(Debug, Clone)]
pub struct Part {
    pub input: String,
    pub file_name: String,
    pub url: String,
    pub archive: PathBuf,
    pub subdir: String,
    pub commit: String,
}

#[derive(Debug, Clone)]
pub struct Submodule {
    /// Its full path in the assembled tree.
    pub path: String,
    pub part: Part,
}

#[derive(Debug, Clone)]
pub struct Assembly {
    pub tag: Part,
    pub submodules: Vec<Submodule>,
    pub dest: PathBuf,
}

/// The tree assembled into `assembly.dest`, with the record that lets a later run replace it
/// (`owned_output`: an existing `dest` is replaced only when it is such a tree, unchanged), or
/// an error and `dest` untouched.
pub fn assemble(assembly: &Assembly, reporter: &Reporter) -> Result<Unpacked> {
    let dest = &assembly.dest;
    let name = dest
        .file_name()
        .with_context(|| format!("{} has no final name", dest.display()))?
        .to_string_lossy()
        .into_owned();
    let parent = match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent)
        .with_context(|| format!("cannot create {}", parent.display()))?;
    let _lock = ct2v_support::out_lock::hold(dest)
        .with_context(|| format!("cannot write {}", dest.display()))?;
    let claim = owned_output::claim(DESTINATION, dest)?;
    let staging =
        ct2v_support::staging::create(&parent, &format!(".{name}.assemble-"), reporter)
            .with_context(|| format!("cannot create a staging folder in {}", parent.display()))?;
    let tree = staging.path().join("tree");

    let mut total = Unpacked::default();
    check_commit(&assembly.tag, None)?;
    add(&mut total, unpack_part(&assembly.tag, &tree, reporter)?);
    let mut submodules: Vec<&Submodule> = assembly.submodules.iter().collect();
    // Parents before what is nested in them.
    submodules.sort_by_key(|s| (s.path.split('/').count(), s.path.clone()));
    let paths: Vec<&str> = submodules.iter().map(|s| s.path.as_str()).collect();
    check_gitmodules(&tree, "", &assembly.tag, &paths)?;
    for sub in &submodules {
        check_commit(&sub.part, Some(&sub.path))?;
        let folder = ct2v_support::paths::join_slashed(&tree, &sub.path);
        check_empty_folder(&folder, sub, &paths)?;
        add(&mut total, unpack_part(&sub.part, &folder, reporter)?);
        check_gitmodules(&tree, &sub.path, &sub.part, &paths)?;
    }
    owned_output::record(&tree, dest)?;
    owned_output::replace(DESTINATION, &tree, dest, &claim)?;
    Ok(total)
}

fn add(total: &mut Unpacked, more: Unpacked) {
    total.files += more.files;
    total.bytes += more.bytes;
}

fn unpack_part(part: &Part, into: &Path, reporter: &Reporter) -> Result<Unpacked> {
    unpack::unpack_input(
        &unpack::CachedInput {
            name: &part.input,
            archive: &part.archive,
            file_name: &part.file_name,
            url: &part.url,
        },
        Some(&part.subdir),
        into,
        unpack::Kept::Unrecorded,
        reporter,
    )
}

fn shown(part: &Part) -> String {
    format!("{} ({})", part.file_name, part.url)
}

/// The archive's pax header names `part.commit`.
fn check_commit(part: &Part, path: Option<&str>) -> Result<()> {
    let found = archive_commit(&part.archive)
        .with_context(|| format!("cannot read {}", part.archive.display()))?;
    let what = match path {
        Some(path) => format!("submodule `{path}`"),
        None => "the tag".to_string(),
    };
    match found {
        Some(found) if found == part.commit => Ok(()),
        Some(found) => Err(InputError::new(format!(
            "{} is the archive of commit {found}, but the version file records commit {} for \
             {what} (input `{}`)",
            shown(part),
            part.commit,
            part.input
        ))
        .note("nothing was unpacked: the archive pinned is not the commit recorded")
        .note(
            "run `cargo xtask bump --ctranslate2 VERSION --from-tag TAG` again (after deleting \
             the version file), or correct `url` and `commit` in [source] and run \
             `cargo xtask pin`",
        )
        .into()),
        None => Err(InputError::new(format!(
            "{} names no commit (no pax global header `comment`), so it is not an archive \
             that `git archive` made; {what} must be commit {}",
            shown(part),
            part.commit
        ))
        .note("a github-tag source takes GitHub's own archives: https://github.com/OWNER/REPO/archive/<commit>.tar.gz")
        .into()),
    }
}

/// The submodules recorded directly below `at` ("" for the tag's tree) are the ones that
/// tree's `.gitmodules` lists.
fn check_gitmodules(tree: &Path, at: &str, part: &Part, paths: &[&str]) -> Result<()> {
    let prefix = if at.is_empty() {
        String::new()
    } else {
        format!("{at}/")
    };
    let file = ct2v_support::paths::join_slashed(tree, &format!("{prefix}.gitmodules"));
    let listed: BTreeSet<String> = match std::fs::read_to_string(&file) {
        Ok(text) => gitmodules::parse(&text)
            .map_err(|why| InputError::new(format!("{}: {why}", file.display())))?
            .into_iter()
            .map(|m| format!("{prefix}{}", m.path))
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeSet::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", file.display())),
    };
    let recorded: BTreeSet<String> = paths
        .iter()
        .filter(|p| parent_of(p, paths) == at)
        .map(|p| p.to_string())
        .collect();
    let unrecorded: Vec<&String> = listed.difference(&recorded).collect();
    let unlisted: Vec<&String> = recorded.difference(&listed).collect();
    if unrecorded.is_empty() && unlisted.is_empty() {
        return Ok(());
    }
    let whose = if at.is_empty() {
        "the tag's tree".to_string()
    } else {
        format!("submodule `{at}`")
    };
    let mut problems = Vec::new();
    if !unrecorded.is_empty() {
        problems.push(format!(
            "its .gitmodules lists {} with no [source.submodules] record",
            quoted(&unrecorded)
        ));
    }
    if !unlisted.is_empty() {
        problems.push(format!(
            "[source.submodules] records {}, which its .gitmodules does not list",
            quoted(&unlisted)
        ));
    }
    Err(InputError::new(format!(
        "{whose} ({}): {}",
        shown(part),
        problems.join("; ")
    ))
    .note("nothing was put in place")
    .note(
        "run `cargo xtask bump --ctranslate2 VERSION --from-tag TAG` again (after deleting the \
         version file): it reads every .gitmodules and gitlink through the GitHub API",
    )
    .into())
}

fn quoted(paths: &[&String]) -> String {
    paths
        .iter()
        .map(|p| format!("`{p}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The submodule `path` is nested in: the longest other recorded path that contains it, or
/// "" (the tag's tree).
pub fn parent_of<'a>(path: &str, paths: &[&'a str]) -> &'a str {
    paths
        .iter()
        .filter(|p| {
            path.len() > p.len() && path.starts_with(**p) && path.as_bytes()[p.len()] == b'/'
        })
        .max_by_key(|p| p.len())
        .copied()
        .unwrap_or("")
}

fn check_empty_folder(folder: &Path, sub: &Submodule, paths: &[&str]) -> Result<()> {
    let parent = parent_of(&sub.path, paths);
    let whose = if parent.is_empty() {
        "the tag's archive".to_string()
    } else {
        format!("the archive of submodule `{parent}`")
    };
    let empty = match std::fs::read_dir(folder) {
        Ok(mut entries) => entries.next().is_none(),
        Err(_) => {
            return Err(InputError::new(format!(
                "{whose} has no folder `{}`, where git archive leaves an empty folder for the \
                 submodule",
                sub.path
            ))
            .note("the path in [source.submodules] is not a submodule of that tree: check it against its .gitmodules, or run bump --from-tag again")
            .into());
        }
    };
    if !empty {
        return Err(InputError::new(format!(
            "{whose} already has files in `{}`, where git archive leaves an empty folder for \
             the submodule; it is not filled over them",
            sub.path
        ))
        .note("the archive is not one `git archive` made, or the path is not a submodule")
        .into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parent_of;

    #[test]
    fn a_nested_submodule_has_the_longest_containing_path_as_its_parent() {
        let paths = [
            "third_party/ruy",
            "third_party/ruy/third_party/cpuinfo",
            "third_party/ruyx",
        ];
        assert_eq!(parent_of("third_party/ruy", &paths), "");
        assert_eq!(
            parent_of("third_party/ruy/third_party/cpuinfo", &paths),
            "third_party/ruy"
        );
        assert_eq!(parent_of("third_party/ruyx", &paths), "");
    }
}
