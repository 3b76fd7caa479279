//! A new CTranslate2 version's data file, made from the previous version's file.
//!
//! The new `variants/ctranslate2/<new>.toml` is the previous one with every URL and wheel path
//! that names the old version renamed to the new one (their pins dropped: a new file needs a
//! new pin), `[source]` replaced by `--source` (or dropped, so that a build says it is
//! missing), and each patch series copied to `patches/ctranslate2-<new>/`. Pinning and
//! `patch --check` are run by the `bump` command afterwards; what cannot be done here is listed.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use toml_edit::{DocumentMut, Item, TableLike, Value};

use ct2v_fetch::download::Options;
use ct2v_fetch::github::{self, TagSource};
use ct2v_pipeline::variant::{Catalog, VERSIONS_DIR, download_url, is_version};
use ct2v_support::diagnostic::{InputError, quoted};
use ct2v_support::fsx::write_atomically;
use ct2v_support::{safe_path, text_rules};

/// What the new version file is made from.
#[derive(Debug, Clone)]
pub struct NewVersion {
    pub version: String,
    /// The version to start from (default: the newest one below `version`).
    pub from: Option<String>,
    /// The new `[source]` archive URL.
    pub source: Option<String>,
    /// The folder inside it that holds CTranslate2 (default for a `ct2rs-X.crate`:
    /// `ct2rs-X/CTranslate2`).
    pub subdir: Option<String>,
    /// A git tag whose GitHub archives (with every submodule's) become the source instead.
    pub from_tag: Option<FromTag>,
}

#[derive(Debug, Clone)]
pub struct FromTag {
    /// `OWNER/REPO`.
    pub repo: String,
    pub tag: String,
}

#[derive(Debug, Default)]
pub struct Bumped {
    pub from: String,
    pub file: PathBuf,
    /// Patch series folders copied, as (from, to).
    pub series: Vec<(PathBuf, PathBuf)>,
    /// URLs renamed to the new version (their pins dropped).
    pub renamed: Vec<String>,
    /// What only a person can do.
    pub(crate) by_hand: Vec<String>,
    /// Things to read, which need not stop a build.
    pub notes: Vec<String>,
    /// The tag read for `--from-tag`.
    pub tag: Option<TagSource>,
}

/// Writes the new version file and copies the patch series; refuses to replace anything.
/// With `--from-tag`, the tag and its submodules are read (through `options`) before anything
/// is written.
pub fn write_new(root: &Path, request: &NewVersion, options: &Options) -> Result<Bumped> {
    let new = &request.version;
    if !is_version(new) {
        return Err(InputError::new(format!(
            "`{new}` is not a CTranslate2 version: expected numbers and dots, e.g. 4.8.5"
        ))
        .into());
    }
    check_source(request)?;
    let known = Catalog::versions(root);
    let file = root.join(VERSIONS_DIR).join(format!("{new}.toml"));
    if file.exists() {
        return Err(InputError::new(format!(
            "{} already exists: CTranslate2 {new} has its data",
            file.display()
        ))
        .note("edit that file, or delete it to start again from the previous version")
        .into());
    }
    let from = match &request.from {
        Some(from) if known.contains(from) => from.clone(),
        Some(from) => {
            return Err(
                InputError::new(format!("--from {from}: no such version file"))
                    .allowed(from, &known)
                    .into(),
            );
        }
        None => previous(&known, new).ok_or_else(|| {
            InputError::new(format!(
                "no version file in {VERSIONS_DIR}/ to start CTranslate2 {new} from"
            ))
        })?,
    };
    let old_file = root.join(VERSIONS_DIR).join(format!("{from}.toml"));
    let text = fs::read_to_string(&old_file)
        .with_context(|| format!("cannot read {}", old_file.display()))?;
    // The file's opening comment (up to the first blank line) stays at the top whatever
    // happens to the table it would otherwise be attached to.
    let preamble_len = text
        .split_inclusive('\n')
        .take_while(|l| l.starts_with('#'))
        .map(str::len)
        .sum::<usize>();
    let (preamble, body) = text.split_at(preamble_len);
    let preamble = preamble.replace(
        &format!("CTranslate2 {from}"),
        &format!("CTranslate2 {new}"),
    );
    let mut doc: DocumentMut = body
        .parse()
        .with_context(|| format!("{} is not valid TOML", old_file.display()))?;

    let tag = match &request.from_tag {
        Some(from_tag) => Some(github::read_tag(&from_tag.repo, &from_tag.tag, options)?),
        None => None,
    };
    let mut bumped = Bumped {
        from: from.clone(),
        file: file.clone(),
        ..Bumped::default()
    };
    rename_versions(doc.as_table_mut(), &from, new, &mut bumped);
    match &tag {
        Some(tag) => set_tag_source(&mut doc, tag, new),
        None => set_source(&mut doc, request, new, &mut bumped),
    }
    bumped.tag = tag;

    for (old_dir, new_dir) in series_dirs(&doc, root, &from, new) {
        if !new_dir.exists() {
            copy_series(&old_dir, &new_dir, &from, new)?;
            bumped.series.push((old_dir, new_dir));
        }
    }
    fs::create_dir_all(file.parent().unwrap_or(root))?;
    write_atomically(&file, &format!("{preamble}{doc}"))?;
    if text.contains("# ") {
        bumped.notes.push(format!(
            "read the comments in {}: they were copied from {from} and may no longer be true",
            file.display()
        ));
    }
    Ok(bumped)
}

/// The newest known version below `version` (else the newest of all).
/// `--source` and `--subdir` become a `[source]` table: checked as the variant files' own
/// check would, before anything is written.
fn check_source(request: &NewVersion) -> Result<(), InputError> {
    if let Some(from_tag) = &request.from_tag {
        if request.source.is_some() || request.subdir.is_some() {
            return Err(InputError::new(
                "--from-tag and --source (or --subdir) both say where the source comes from",
            )
            .note("give one of them"));
        }
        if !github::is_owner_repo(&from_tag.repo) {
            return Err(InputError::new(format!(
                "--repo `{}` is not OWNER/REPO",
                from_tag.repo.escape_debug()
            ))
            .note("e.g. --repo OpenNMT/CTranslate2"));
        }
        text_rules::git_tag(&from_tag.tag)
            .map_err(|refusal| text_rules::refused("--from-tag", &from_tag.tag, &refusal))?;
        // The tag goes into GitHub's URLs as it is: only what a URL path holds unescaped.
        if !from_tag
            .tag
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.+/".contains(&b))
        {
            return Err(InputError::new(format!(
                "--from-tag {} is not a tag name this tool takes",
                quoted(&from_tag.tag)
            ))
            .note("letters, digits and - _ . + /, e.g. --from-tag v4.8.5"));
        }
    }
    if let Some(url) = &request.source
        && let Some((why, note)) = download_url::problem(url, false)
    {
        return Err(InputError::new(format!("--source: {why}"))
            .note(note)
            .note("e.g. --source https://static.crates.io/crates/ct2rs/ct2rs-0.10.3.crate"));
    }
    if let Some(subdir) = &request.subdir {
        if request.source.is_none() {
            return Err(
                InputError::new("--subdir names a folder of --source, which is missing")
                    .note("give both, or neither to leave [source] for later"),
            );
        }
        safe_path::check_nonempty(subdir).map_err(|why| {
            InputError::new(format!(
                "--subdir `{}` is not allowed: {why}",
                subdir.escape_debug()
            ))
            .note("the folder inside the archive that holds CTranslate2, e.g. ct2rs-0.10.3/CTranslate2")
        })?;
    }
    Ok(())
}

fn previous(known: &[String], version: &str) -> Option<String> {
    let key = ct2v_pipeline::variant::version_key;
    known
        .iter()
        .filter(|v| key(v) < key(version))
        .max_by_key(|v| key(v))
        .or_else(|| known.iter().max_by_key(|v| key(v)))
        .cloned()
}

/// Every string value that names the old version (release URLs, wheel paths inside an
/// archive, patch series paths) is renamed; a table whose URL changed loses its pin.
fn rename_versions(table: &mut dyn TableLike, from: &str, to: &str, bumped: &mut Bumped) {
    let mut url_changed = false;
    for (key, item) in table.iter_mut() {
        match item {
            Item::Value(Value::String(s)) if names_version(s.value(), from) => {
                let renamed = rename(s.value(), from, to);
                if key.get() == "url" {
                    url_changed = true;
                    bumped.renamed.push(renamed.clone());
                }
                let decor = s.decor().clone();
                let mut value = Value::from(renamed);
                *value.decor_mut() = decor;
                *item = Item::Value(value);
            }
            Item::Table(t) => rename_versions(t, from, to, bumped),
            Item::Value(Value::InlineTable(t)) => rename_versions(t, from, to, bumped),
            Item::Value(Value::Array(array)) => {
                for value in array.iter_mut() {
                    if let Some(t) = value.as_inline_table_mut() {
                        rename_versions(t, from, to, bumped);
                    }
                }
            }
            _ => {}
        }
    }
    if url_changed {
        table.remove("sha256");
        table.remove("size");
        table.remove("pin-source");
    }
}

/// `v4.7.1/`, `ctranslate2-4.7.1-cp312`, `patches/ctranslate2-4.7.1/series`: the version as
/// a whole dotted word, not part of a longer one (4.7.1 in 14.7.1 or 4.7.10).
fn names_version(text: &str, version: &str) -> bool {
    text.match_indices(version)
        .any(|(at, _)| whole_at(text, at, version.len()))
}

fn whole_at(text: &str, at: usize, len: usize) -> bool {
    let before = text[..at].chars().next_back();
    let after = &text[at + len..];
    let continues = after.starts_with(|c: char| c.is_ascii_digit())
        || (after.starts_with('.') && after[1..].starts_with(|c: char| c.is_ascii_digit()));
    !before.is_some_and(|c| c.is_ascii_digit() || c == '.') && !continues
}

fn rename(text: &str, from: &str, to: &str) -> String {
    let mut out = String::new();
    let mut last = 0;
    for (at, _) in text.match_indices(from) {
        if whole_at(text, at, from.len()) {
            out.push_str(&text[last..at]);
            out.push_str(to);
            last = at + from.len();
        }
    }
    out.push_str(&text[last..]);
    out
}

fn set_source(doc: &mut DocumentMut, request: &NewVersion, new: &str, bumped: &mut Bumped) {
    let Some(url) = &request.source else {
        doc.remove("source");
        bumped.by_hand.push(format!(
            "add a [source] for CTranslate2 {new} with every submodule (e.g. the ct2rs crate on \
             crates.io that carries it, as `--source URL` would have), then pin it: \
             `cargo xtask pin --variant cpu --ctranslate2 {new}`"
        ));
        return;
    };
    let subdir = request.subdir.clone().or_else(|| crate_subdir(url));
    let mut source = toml_edit::Table::new();
    source.insert("kind", toml_edit::value("archive"));
    source.insert("url", toml_edit::value(url.as_str()));
    match subdir {
        Some(subdir) => {
            source.insert("subdir", toml_edit::value(subdir));
        }
        None => bumped.by_hand.push(format!(
            "say which folder of {url} holds CTranslate2 (`subdir` in [source]), if not its top"
        )),
    }
    let decor = doc
        .get("source")
        .and_then(Item::as_table)
        .map(|t| t.decor().clone());
    if let Some(decor) = decor {
        *source.decor_mut() = decor;
    }
    let prefix = format!("\n# CTranslate2 {new}: {url}\n");
    source.decor_mut().set_prefix(prefix);
    doc.insert("source", Item::Table(source));
}

/// `[source]` of kind `github-tag`: the tag's archive and commit, then one
/// `[source.submodules."<path>"]` per submodule, unpinned (`pin` fills `sha256` and `size`).
fn set_tag_source(doc: &mut DocumentMut, tag: &TagSource, new: &str) {
    let mut source = toml_edit::Table::new();
    source.insert("kind", toml_edit::value("github-tag"));
    source.insert("url", toml_edit::value(tag.url.as_str()));
    source.insert("commit", toml_edit::value(tag.commit.as_str()));
    source.insert("subdir", toml_edit::value(tag.subdir.as_str()));
    let mut submodules = toml_edit::Table::new();
    submodules.set_implicit(true);
    for sub in &tag.submodules {
        let mut record = toml_edit::Table::new();
        record.insert("url", toml_edit::value(sub.url.as_str()));
        record.insert("commit", toml_edit::value(sub.commit.as_str()));
        submodules.insert(&sub.path, Item::Table(record));
    }
    source.insert("submodules", Item::Table(submodules));
    source.decor_mut().set_prefix(format!(
        "\n# CTranslate2 {new}: tag {} of {} ({}) and its submodules at the commits the tag \
         records,\n# as GitHub's archives (written by `cargo xtask bump --from-tag`).\n",
        tag.tag, tag.repo, tag.commit
    ));
    doc.insert("source", Item::Table(source));
}

/// `…/ct2rs-0.10.3.crate` holds CTranslate2 in `ct2rs-0.10.3/CTranslate2`.
fn crate_subdir(url: &str) -> Option<String> {
    let name = ct2v_support::paths::last_segment(url);
    let stem = name.strip_suffix(".crate")?;
    stem.starts_with("ct2rs-")
        .then(|| format!("{stem}/CTranslate2"))
}

/// The patch series folders the new file names, with the old folder each comes from.
fn series_dirs(doc: &DocumentMut, root: &Path, from: &str, to: &str) -> Vec<(PathBuf, PathBuf)> {
    let mut dirs = Vec::new();
    let mut visit = |series: &str| {
        let new_dir = root.join(series).parent().map(Path::to_path_buf);
        let old_dir = root
            .join(rename(series, to, from))
            .parent()
            .map(Path::to_path_buf);
        if let (Some(old_dir), Some(new_dir)) = (old_dir, new_dir)
            && old_dir != new_dir
            && old_dir.is_dir()
            && !dirs.iter().any(|(_, d)| d == &new_dir)
        {
            dirs.push((old_dir, new_dir));
        }
    };
    collect_patches(doc.as_table(), &mut visit);
    dirs
}

fn collect_patches(table: &dyn TableLike, visit: &mut dyn FnMut(&str)) {
    for (key, item) in table.iter() {
        match item {
            Item::Value(Value::String(s)) if key == "patches" => visit(s.value()),
            Item::Table(t) => collect_patches(t, visit),
            _ => {}
        }
    }
}

/// Copies a series folder (its files only), renaming the version in the series file's
/// comments; the patches themselves are copied as they are, for `patch --check` to judge.
fn copy_series(from_dir: &Path, to_dir: &Path, from: &str, to: &str) -> Result<()> {
    let staging = to_dir.with_extension("bump-tmp");
    let _ = fs::remove_dir_all(&staging);
    fs::create_dir_all(&staging)?;
    for entry in fs::read_dir(from_dir)? {
        let entry = entry?;
        if !entry.file_type()?.is_file() {
            continue;
        }
        let target = staging.join(entry.file_name());
        if entry.file_name() == "series" {
            let text = fs::read_to_string(entry.path())?;
            ct2v_support::fsx::write(
                &target,
                text.replace(&format!("CTranslate2 {from}"), &format!("CTranslate2 {to}")),
            )?;
        } else {
            ct2v_support::regular_file::copy(entry.path(), &target)?;
        }
    }
    fs::rename(&staging, to_dir).with_context(|| format!("cannot create {}", to_dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_whole_versions_are_renamed() {
        assert_eq!(
            rename("https://x/v4.7.1/rocm.zip", "4.7.1", "4.8.4"),
            "https://x/v4.8.4/rocm.zip"
        );
        assert_eq!(
            rename(
                "temp-windows/ctranslate2-4.7.1-cp312-cp312-win_amd64.whl",
                "4.7.1",
                "4.8.4"
            ),
            "temp-windows/ctranslate2-4.8.4-cp312-cp312-win_amd64.whl"
        );
        assert_eq!(
            rename("a-14.7.1-b 4.7.10", "4.7.1", "4.8.4"),
            "a-14.7.1-b 4.7.10"
        );
        assert!(!names_version("rocm_sdk_core-7.2.0.dev0", "4.7.1"));
        assert!(names_version("patches/ctranslate2-4.7.1/series", "4.7.1"));
    }

    #[test]
    fn the_previous_version_is_the_newest_below() {
        let known = ["4.7.1", "4.8.4", "4.10.0"].map(String::from);
        assert_eq!(previous(&known, "4.9.0").as_deref(), Some("4.8.4"));
        assert_eq!(previous(&known, "4.11.0").as_deref(), Some("4.10.0"));
        assert_eq!(previous(&known, "4.0.0").as_deref(), Some("4.10.0"));
    }

    #[test]
    fn a_tag_source_is_written_with_every_submodule_by_its_path() {
        let tag = TagSource {
            repo: "OpenNMT/CTranslate2".into(),
            tag: "v4.8.5".into(),
            commit: "a".repeat(40),
            url: github::tag_archive_url("OpenNMT/CTranslate2", "v4.8.5"),
            subdir: "CTranslate2-4.8.5".into(),
            submodules: vec![github::TagSubmodule {
                path: "third_party/ruy/third_party/cpuinfo".into(),
                repo: "pytorch/cpuinfo".into(),
                commit: "b".repeat(40),
                url: github::commit_archive_url("pytorch/cpuinfo", &"b".repeat(40)),
            }],
        };
        let mut doc: DocumentMut = "[source]\nkind = \"archive\"\nurl = \"https://x/a.crate\"\n\n[variant.cuda]\npatches = \"p\"\n"
            .parse()
            .unwrap();
        set_tag_source(&mut doc, &tag, "4.8.5");
        let text = doc.to_string();
        assert!(text.contains("kind = \"github-tag\""), "{text}");
        assert!(
            text.contains("[source.submodules.\"third_party/ruy/third_party/cpuinfo\"]\nurl = \"https://github.com/pytorch/cpuinfo/archive/bbbb"),
            "{text}"
        );
        assert!(!text.contains("a.crate"), "{text}");
        let layer: ct2v_pipeline::variant::layer::Layer = toml::from_str(&text).unwrap();
        let source = layer.source.unwrap();
        assert_eq!(source.submodules.len(), 1);
        assert_eq!(source.commit.unwrap().value, "a".repeat(40));
    }

    #[test]
    fn a_ct2rs_crate_names_its_subdir() {
        assert_eq!(
            crate_subdir("https://static.crates.io/crates/ct2rs/ct2rs-0.10.3.crate").as_deref(),
            Some("ct2rs-0.10.3/CTranslate2")
        );
        assert_eq!(crate_subdir("https://x/CTranslate2-4.8.4.tar.gz"), None);
    }
}
