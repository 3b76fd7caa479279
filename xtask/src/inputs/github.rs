//! GitHub source archives and the facts that pin them without git: the archive URLs and the
//! folder each one unpacks to, `.gitmodules`, and the REST answers that give a tag's commit
//! and each submodule's gitlink (read recursively, as nixpkgs' `fetchSubmodules` and Spack's
//! `submodules=True` end up with the same tree).
//!
//! What this relies on, and where it is said:
//!
//! | behaviour | source |
//! |---|---|
//! | `https://github.com/O/R/archive/refs/tags/TAG.tar.gz` and `…/archive/<sha>.tar.gz`; "the name of the repository is part of the directory structure in the archive" | docs.github.com, "Downloading source code archives" |
//! | a tag archive's top folder is `R-<TAG without one leading v>`, a commit archive's `R-<sha>` | github.com/ray-project/ray/pull/9175, github.com/AcademySoftwareFoundation/openexr/issues/1700; googletest's WORKSPACE (`strip_prefix = "rules_python-<sha>"`) |
//! | archives are made by `git archive`: a submodule is an empty folder, `.gitmodules` is kept | docs.github.com (same page); git Documentation/git-archive.txt; github.com/dear-github/dear-github/issues/214 |
//! | the tar starts with a pax global header `comment=<commit>` (the peeled commit) | git Documentation/git-archive.txt; github.com/unjs/giget/issues/106, github.com/ocaml/opam-repository/pull/26958 |
//! | `GET /repos/O/R/commits/REF` → `{"sha": <commit>}` | docs.github.com/en/rest/commits/commits#get-a-commit |
//! | `GET /repos/O/R/contents/PATH?ref=REF` on a submodule → `{"type": "submodule", "sha": <gitlink>}`; on a file → base64 `content`; 404 when absent | docs.github.com/en/rest/repos/contents#get-repository-content |

use anyhow::{Context, Result};

use crate::inputs::download::{self, Options};
use crate::support::diagnostic::InputError;

/// Whether `text` is a full commit id: 40 lowercase hex digits.
pub fn is_commit(text: &str) -> bool {
    text.len() == 40
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The tag archive of `repo` (`OWNER/REPO`).
pub fn tag_archive_url(repo: &str, tag: &str) -> String {
    format!("https://github.com/{repo}/archive/refs/tags/{tag}.tar.gz")
}

/// The archive of one commit of `repo` (`OWNER/REPO`).
pub fn commit_archive_url(repo: &str, commit: &str) -> String {
    format!("https://github.com/{repo}/archive/{commit}.tar.gz")
}

/// What an archive URL names: the repository (its last part) and the ref.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveUrl {
    pub repo_name: String,
    pub reference: ArchiveRef,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArchiveRef {
    Tag(String),
    Commit(String),
}

impl ArchiveUrl {
    /// `…/R/archive/refs/tags/T.tar.gz` or `…/R/archive/<sha>.tar.gz`.
    pub fn parse(url: &str) -> Option<ArchiveUrl> {
        let path = url.split(['?', '#']).next()?;
        let (before, file) = path.rsplit_once("/archive/")?;
        let repo_name = crate::support::paths::last_segment(before).to_string();
        let stem = file.strip_suffix(".tar.gz")?;
        let reference = match stem.strip_prefix("refs/tags/") {
            Some(tag) if !tag.is_empty() => ArchiveRef::Tag(tag.to_string()),
            Some(_) => return None,
            None if is_commit(stem) => ArchiveRef::Commit(stem.to_string()),
            None => return None,
        };
        (!repo_name.is_empty()).then_some(ArchiveUrl {
            repo_name,
            reference,
        })
    }

    /// The folder the archive unpacks to: `R-<tag without one leading v>`, `R-<sha>`.
    pub fn top_folder(&self) -> String {
        match &self.reference {
            ArchiveRef::Tag(tag) => {
                let tag = crate::support::paths::last_segment(tag);
                let name = tag.strip_prefix('v').unwrap_or(tag);
                format!("{}-{name}", self.repo_name)
            }
            ArchiveRef::Commit(sha) => format!("{}-{sha}", self.repo_name),
        }
    }
}

/// One `[submodule "…"]` section of a `.gitmodules` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitModule {
    pub name: String,
    pub path: String,
    pub url: String,
}

/// The submodules `.gitmodules` lists (git-config syntax: sections, `key = value`, `#`/`;`
/// comments, optional quotes); sections without a path are skipped.
pub fn parse_gitmodules(text: &str) -> Vec<GitModule> {
    let mut modules: Vec<GitModule> = Vec::new();
    let mut current: Option<GitModule> = None;
    let unquote = |v: &str| v.trim().trim_matches('"').to_string();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with(['#', ';']) {
            continue;
        }
        if let Some(section) = line.strip_prefix('[') {
            modules.extend(current.take().filter(|m| !m.path.is_empty()));
            let section = section.trim_end_matches(']').trim();
            if let Some(name) = section.strip_prefix("submodule") {
                current = Some(GitModule {
                    name: unquote(name),
                    path: String::new(),
                    url: String::new(),
                });
            }
            continue;
        }
        let (Some(module), Some((key, value))) = (current.as_mut(), line.split_once('=')) else {
            continue;
        };
        match key.trim() {
            "path" => module.path = unquote(value).trim_end_matches('/').to_string(),
            "url" => module.url = unquote(value),
            _ => {}
        }
    }
    modules.extend(current.filter(|m| !m.path.is_empty()));
    modules
}

/// `OWNER/REPO` of a GitHub git URL (`https://github.com/O/R(.git)`, `git@github.com:O/R.git`).
pub fn github_repo(url: &str) -> Option<String> {
    let rest = url
        .strip_prefix("https://github.com/")
        .or_else(|| url.strip_prefix("http://github.com/"))
        .or_else(|| url.strip_prefix("git@github.com:"))
        .or_else(|| url.strip_prefix("ssh://git@github.com/"))?;
    let rest = rest.trim_end_matches('/');
    let rest = rest.strip_suffix(".git").unwrap_or(rest);
    let mut parts = rest.split('/');
    let (owner, repo) = (parts.next()?, parts.next()?);
    (parts.next().is_none() && !owner.is_empty() && !repo.is_empty())
        .then(|| format!("{owner}/{repo}"))
}

/// A tag read through the API: its commit and every submodule, nested ones after their parent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagSource {
    pub repo: String,
    pub tag: String,
    pub commit: String,
    pub url: String,
    pub subdir: String,
    pub submodules: Vec<TagSubmodule>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagSubmodule {
    /// The full path in the assembled tree.
    pub path: String,
    pub repo: String,
    pub commit: String,
    pub url: String,
}

const API: &str = "https://api.github.com/repos";
/// No API answer this tool reads is near this size.
const MAX_ANSWER: u64 = 4 << 20;

/// The tag's commit, `.gitmodules` and gitlinks, recursively, from the GitHub REST API
/// (through the download code: mirrors and the URL policy apply). A tag the API does not
/// know is an [`InputError`] naming it.
pub fn read_tag(repo: &str, tag: &str, options: &Options) -> Result<TagSource> {
    let commits_url = format!("{API}/{repo}/commits/{tag}");
    let answer = get_json(&commits_url, options)?.ok_or_else(|| {
        InputError::new(format!(
            "tag `{tag}` of {repo} does not exist: {commits_url} answered 404"
        ))
        .note(format!(
            "check the tag's name at https://github.com/{repo}/tags (CTranslate2's tags are \
             written like v4.8.5), or the repository with --repo OWNER/REPO"
        ))
    })?;
    let commit = sha_of(&answer, &commits_url)?;
    let url = tag_archive_url(repo, tag);
    let subdir = ArchiveUrl::parse(&url)
        .map(|a| a.top_folder())
        .context("the tag archive URL has the documented form")?;
    let mut submodules = Vec::new();
    walk(repo, &commit, "", options, &mut submodules, 0)?;
    Ok(TagSource {
        repo: repo.to_string(),
        tag: tag.to_string(),
        commit,
        url,
        subdir,
        submodules,
    })
}

/// Appends the submodules of `repo` at `reference` (below `prefix`), then theirs.
fn walk(
    repo: &str,
    reference: &str,
    prefix: &str,
    options: &Options,
    out: &mut Vec<TagSubmodule>,
    depth: usize,
) -> Result<()> {
    anyhow::ensure!(
        depth < 8,
        "submodules nested more than 8 deep below {repo}: a loop?"
    );
    let gitmodules_url = format!("{API}/{repo}/contents/.gitmodules?ref={reference}");
    let Some(answer) = get_json(&gitmodules_url, options)? else {
        return Ok(());
    };
    let text = file_content(&answer, &gitmodules_url)?;
    for module in parse_gitmodules(&text) {
        crate::support::safe_path::check_nonempty(&module.path).map_err(|why| {
            anyhow::anyhow!(
                "{gitmodules_url}: submodule path `{}` is not allowed: {why}",
                module.path.escape_debug()
            )
        })?;
        let sub_repo = github_repo(&module.url).ok_or_else(|| {
            anyhow::anyhow!(
                "{gitmodules_url}: submodule `{}` has the URL `{}`, not a github.com repository; \
                 a github-tag source takes GitHub archives only",
                module.path,
                module.url
            )
        })?;
        let link_url = format!("{API}/{repo}/contents/{}?ref={reference}", module.path);
        let link = get_json(&link_url, options)?.ok_or_else(|| {
            anyhow::anyhow!(
                "{link_url} answered 404: .gitmodules lists `{}` but the tree has no gitlink there",
                module.path
            )
        })?;
        if link.get("type").and_then(|t| t.as_str()) != Some("submodule") {
            anyhow::bail!(
                "{link_url}: `{}` is not a submodule (type {}), though .gitmodules lists it",
                module.path,
                link.get("type").unwrap_or(&serde_json::Value::Null)
            );
        }
        let commit = sha_of(&link, &link_url)?;
        let path = format!("{prefix}{}", module.path);
        out.push(TagSubmodule {
            path: path.clone(),
            repo: sub_repo.clone(),
            url: commit_archive_url(&sub_repo, &commit),
            commit: commit.clone(),
        });
        walk(
            &sub_repo,
            &commit,
            &format!("{path}/"),
            options,
            out,
            depth + 1,
        )?;
    }
    Ok(())
}

fn get_json(url: &str, options: &Options) -> Result<Option<serde_json::Value>> {
    let Some(body) = download::get_small(url, options, MAX_ANSWER)? else {
        return Ok(None);
    };
    let value =
        serde_json::from_slice(&body).with_context(|| format!("{url} did not answer JSON"))?;
    Ok(Some(value))
}

fn sha_of(answer: &serde_json::Value, url: &str) -> Result<String> {
    match answer.get("sha").and_then(|s| s.as_str()) {
        Some(sha) if is_commit(sha) => Ok(sha.to_string()),
        other => anyhow::bail!("{url}: the answer's `sha` is {other:?}, not a 40-hex commit"),
    }
}

fn file_content(answer: &serde_json::Value, url: &str) -> Result<String> {
    let encoded = answer
        .get("content")
        .and_then(|c| c.as_str())
        .with_context(|| format!("{url}: the answer has no `content`"))?;
    let bytes =
        base64_decode(encoded).with_context(|| format!("{url}: `content` is not base64"))?;
    String::from_utf8(bytes).with_context(|| format!("{url}: `content` is not UTF-8"))
}

/// Standard base64 (the API wraps it in lines of 60).
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut bits: u32 = 0;
    let mut count = 0;
    for c in text.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' | b'\n' | b'\r' | b' ' => continue,
            _ => return None,
        };
        bits = (bits << 6) | u32::from(v);
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn archive_urls_name_their_top_folder() {
        let tag = ArchiveUrl::parse(&tag_archive_url("OpenNMT/CTranslate2", "v4.8.5")).unwrap();
        assert_eq!(tag.top_folder(), "CTranslate2-4.8.5");
        let sha = "6c58c11d5497b6ee1df3cb400ce30deb72fc28c0";
        let commit = ArchiveUrl::parse(&commit_archive_url("google/googletest", sha)).unwrap();
        assert_eq!(commit.reference, ArchiveRef::Commit(sha.to_string()));
        assert_eq!(commit.top_folder(), format!("googletest-{sha}"));
        assert_eq!(
            ArchiveUrl::parse("https://github.com/x/y/archive/refs/tags/x0.9.1.tar.gz")
                .unwrap()
                .top_folder(),
            "y-x0.9.1"
        );
        assert!(ArchiveUrl::parse("https://github.com/x/y/archive/main.tar.gz").is_none());
        assert!(ArchiveUrl::parse("https://static.crates.io/crates/a/a-1.crate").is_none());
    }

    #[test]
    fn gitmodules_and_git_urls_are_read() {
        let text = "[submodule \"third_party/ruy\"]\n\tpath = third_party/ruy\n\turl = https://github.com/google/ruy.git\n# c\n[submodule \"x\"]\n\tpath = \"a/b\"\n\turl = git@github.com:o/r.git\n[core]\n\tpath = no\n";
        let m = parse_gitmodules(text);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].path, "third_party/ruy");
        assert_eq!(github_repo(&m[0].url).as_deref(), Some("google/ruy"));
        assert_eq!(m[1].path, "a/b");
        assert_eq!(github_repo(&m[1].url).as_deref(), Some("o/r"));
        assert!(parse_gitmodules("").is_empty());
        assert_eq!(github_repo("https://gitlab.com/o/r.git"), None);
    }

    #[test]
    fn base64_as_the_api_wraps_it() {
        assert_eq!(
            base64_decode("W3N1Ym1v\nZHVsZV0=\n").unwrap(),
            b"[submodule]".to_vec()
        );
        assert!(base64_decode("*").is_none());
    }
}
