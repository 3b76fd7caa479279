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
use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use crate::download::{self, Options};
use ct2v_support::diagnostic::InputError;

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
    pub(crate) repo_name: String,
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
        let repo_name = ct2v_support::paths::last_segment(before).to_string();
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
                let tag = ct2v_support::paths::last_segment(tag);
                let name = tag.strip_prefix('v').unwrap_or(tag);
                format!("{}-{name}", self.repo_name)
            }
            ArchiveRef::Commit(sha) => format!("{}-{sha}", self.repo_name),
        }
    }
}

/// Whether `text` is `OWNER/REPO` as GitHub spells them: two parts of letters, digits, `-`,
/// `_` and `.`, neither of them `.` or `..` (so that it stays one path in a URL).
pub fn is_owner_repo(text: &str) -> bool {
    let parts: Vec<&str> = text.split('/').collect();
    parts.len() == 2
        && parts.iter().all(|p| {
            !p.is_empty()
                && *p != "."
                && *p != ".."
                && p.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
        })
}

/// `OWNER/REPO` of a GitHub git URL (`https://github.com/O/R(.git)`, `git@github.com:O/R.git`).
pub(crate) fn github_repo(url: &str) -> Option<String> {
    let rest = url
        .strip_prefix("https://github.com/")
        .or_else(|| url.strip_prefix("http://github.com/"))
        .or_else(|| url.strip_prefix("git@github.com:"))
        .or_else(|| url.strip_prefix("ssh://git@github.com/"))?;
    let rest = rest.trim_end_matches('/');
    let repo = rest.strip_suffix(".git").unwrap_or(rest);
    is_owner_repo(repo).then(|| repo.to_string())
}

/// The repository a submodule's `url` names, a relative one (`../other.git`) resolved against
/// its parent's `https://github.com/<parent>` as git resolves it; `Err` says why it is none
/// on github.com.
pub(crate) fn submodule_repo(parent: &str, url: &str) -> Result<String, String> {
    let not_github = || format!("`{}` is not a repository on github.com", url.escape_debug());
    if !(url.starts_with("./") || url.starts_with("../")) {
        return github_repo(url).ok_or_else(not_github);
    }
    let mut base: Vec<&str> = parent.split('/').collect();
    let mut rest = url;
    loop {
        if let Some(after) = rest.strip_prefix("./") {
            rest = after;
        } else if let Some(after) = rest.strip_prefix("../") {
            if base.pop().is_none() {
                return Err(format!(
                    "`{}`, relative to https://github.com/{parent}, leads off github.com",
                    url.escape_debug()
                ));
            }
            rest = after;
        } else {
            break;
        }
    }
    base.push(rest);
    github_repo(&format!("https://github.com/{}", base.join("/"))).ok_or_else(not_github)
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
/// Submodules nested deeper than this, or more of them in all, are not read: real trees
/// stay far below (CTranslate2 4.8 has 9, two levels), and a server inventing new ones at
/// every answer would otherwise be asked forever.
const MAX_DEPTH: usize = 8;
const MAX_SUBMODULES: usize = 100;

/// The tag's commit, `.gitmodules` and gitlinks, recursively, from the GitHub REST API
/// (through the download code: mirrors and the URL policy apply). `commits/{tag}` answers
/// the commit an annotated tag, or a chain of them, points to: no tag object is followed
/// here, so a chain cannot loop (a redirect loop ends as any does). A tag the API does not
/// know, or whose submodules cannot be taken (`refused`), is an [`InputError`]; an answer
/// that is not what the API answers is an error of the server.
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
    let mut above = vec![Above {
        repo: repo.to_string(),
        commit: commit.clone(),
        path: String::new(),
    }];
    walk(options, &mut above, &mut submodules)?;
    Ok(TagSource {
        repo: repo.to_string(),
        tag: tag.to_string(),
        commit,
        url,
        subdir,
        submodules,
    })
}

/// A repository at a commit on the way down to a submodule, and its path in the tree ("" for
/// the tag's).
struct Above {
    repo: String,
    commit: String,
    path: String,
}

/// A tag whose submodules the tool will not take, as the API's well-formed answers say: the
/// same answers would come again, so the tag (or the source) is what must change.
fn refused(message: String) -> anyhow::Error {
    InputError::new(message)
        .note(
            "nothing was written; a github-tag source takes submodules on github.com, inside \
             the tree, as git reads its .gitmodules",
        )
        .note(
            "bump another tag, or give an archive that carries the submodules with --source \
             (e.g. the ct2rs crate)",
        )
        .into()
}

/// Appends the submodules of the last of `above` (its repository at its commit), then
/// theirs, depth first.
fn walk(options: &Options, above: &mut Vec<Above>, out: &mut Vec<TagSubmodule>) -> Result<()> {
    let parent = above.last().expect("the tag is above every submodule");
    let (repo, reference) = (parent.repo.clone(), parent.commit.clone());
    let prefix = match parent.path.as_str() {
        "" => String::new(),
        path => format!("{path}/"),
    };
    let gitmodules_url = contents_url(&repo, ".gitmodules", &reference);
    let Some(answer) = get_json(&gitmodules_url, options)? else {
        return Ok(());
    };
    let text = file_content(&answer, &gitmodules_url)?;
    let modules = crate::gitmodules::parse(&text)
        .map_err(|why| refused(format!("{gitmodules_url}: .gitmodules {why}")))?;
    if !modules.is_empty() && above.len() > MAX_DEPTH {
        return Err(refused(format!(
            "{gitmodules_url}: submodules nested more than {MAX_DEPTH} deep below {}",
            above[0].repo
        )));
    }
    if out.len() + modules.len() > MAX_SUBMODULES {
        return Err(refused(format!(
            "{gitmodules_url}: more than {MAX_SUBMODULES} submodules below {}",
            above[0].repo
        )));
    }
    for module in modules {
        let at = |key: &str, line: usize| {
            format!(
                "{gitmodules_url}: .gitmodules line {line}: submodule.{}.{key}",
                module.name.escape_debug()
            )
        };
        ct2v_support::safe_path::check_nonempty(&module.path).map_err(|why| {
            refused(format!(
                "{} `{}` is not allowed: {why}",
                at("path", module.path_line),
                module.path.escape_debug()
            ))
        })?;
        let path = format!("{prefix}{}", module.path);
        if out.iter().any(|s| s.path == path) {
            return Err(refused(format!(
                "{}: the path `{}` is given twice",
                at("path", module.path_line),
                path.escape_debug()
            )));
        }
        let sub_repo = submodule_repo(&repo, &module.url)
            .map_err(|why| refused(format!("{}: {why}", at("url", module.url_line))))?;
        let commit = gitlink(&repo, &reference, &module.path, options)?;
        if let Some(same) = above
            .iter()
            .find(|a| a.repo == sub_repo && a.commit == commit)
        {
            return Err(refused(format!(
                "submodule `{}` is {sub_repo} at {commit}, which {} above it already is: a \
                 cycle of gitlinks (git cannot make one)",
                path.escape_debug(),
                match same.path.as_str() {
                    "" => "the tag".to_string(),
                    other => format!("`{}`", other.escape_debug()),
                }
            )));
        }
        out.push(TagSubmodule {
            path: path.clone(),
            repo: sub_repo.clone(),
            url: commit_archive_url(&sub_repo, &commit),
            commit: commit.clone(),
        });
        above.push(Above {
            repo: sub_repo,
            commit,
            path,
        });
        walk(options, above, out)?;
        above.pop();
    }
    Ok(())
}

/// The commit the gitlink at `path` of `repo` at `reference` records.
fn gitlink(repo: &str, reference: &str, path: &str, options: &Options) -> Result<String> {
    let link_url = contents_url(repo, path, reference);
    let link = get_json(&link_url, options)?.ok_or_else(|| {
        refused(format!(
            "{link_url} answered 404: .gitmodules lists `{}` but the tree has no gitlink there",
            path.escape_debug()
        ))
    })?;
    if link.get("type").and_then(|t| t.as_str()) != Some("submodule") {
        return Err(refused(format!(
            "{link_url}: `{}` is not a submodule (type {}), though .gitmodules lists it",
            path.escape_debug(),
            link.get("type").unwrap_or(&serde_json::Value::Null)
        )));
    }
    sha_of(&link, &link_url)
}

/// `{API}/{repo}/contents/{path}?ref={reference}`, each byte of the path other than letters,
/// digits, `-._~` and `/` percent-encoded: a `?`, `#` or `%` in a path stays in the path.
fn contents_url(repo: &str, path: &str, reference: &str) -> String {
    let path: String = path
        .bytes()
        .map(|b| match b {
            b if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) => char::from(b).to_string(),
            b => format!("%{b:02X}"),
        })
        .collect();
    format!("{API}/{repo}/contents/{path}?ref={reference}")
}

fn get_json(url: &str, options: &Options) -> Result<Option<serde_json::Value>> {
    let Some(body) = download::get_small(url, options, MAX_ANSWER, "application/vnd.github+json")?
    else {
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
    let encoding = answer.get("encoding").unwrap_or(&serde_json::Value::Null);
    anyhow::ensure!(
        encoding == "base64",
        "{url}: the answer's `encoding` is {encoding}, not \"base64\""
    );
    let bytes =
        base64_decode(encoded).with_context(|| format!("{url}: `content` is not base64"))?;
    String::from_utf8(bytes).with_context(|| format!("{url}: `content` is not UTF-8"))
}

/// Standard base64 (the API wraps it in lines of 60).
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let unwrapped: String = text.split_ascii_whitespace().collect();
    STANDARD.decode(unwrapped).ok()
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
    fn git_urls_name_their_github_repository() {
        assert_eq!(
            github_repo("https://github.com/google/ruy.git").as_deref(),
            Some("google/ruy")
        );
        assert_eq!(
            github_repo("git@github.com:o/r.git").as_deref(),
            Some("o/r")
        );
        for bad in [
            "https://gitlab.com/o/r.git",
            "https://github.com/o/../r",
            "https://github.com/o/r?x=1",
            "https://github.com/o/r/tree",
            "https://github.com.evil.example/o/r",
            "file:///srv/o/r",
        ] {
            assert_eq!(github_repo(bad), None, "{bad}");
        }
        let parent = "OpenNMT/CTranslate2";
        assert_eq!(
            submodule_repo(parent, "../x.git").as_deref(),
            Ok("OpenNMT/x")
        );
        assert_eq!(submodule_repo(parent, "./../../o/r").as_deref(), Ok("o/r"));
        for bad in ["../../../x.git", "./x", "../../o/..", "../"] {
            assert!(submodule_repo(parent, bad).is_err(), "{bad}");
        }
        assert_eq!(
            contents_url("o/r", "a b/c?d#e%", "ff"),
            format!("{API}/o/r/contents/a%20b/c%3Fd%23e%25?ref=ff")
        );
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
