//! `[source] kind = "github-tag"`: the tag's archive and its commit, and one commit archive
//! per submodule (`[source.submodules."<path>"]`), checked before anything is fetched.

use std::collections::BTreeSet;

use super::checks::checked;
use super::inputs::{archive_input, checked_input};
use super::{GithubTag, Submodule};
use crate::variant::layer::{InputTable, SourceTable};
use crate::variant::{Files, Loc};
use ct2v_fetch::github::{ArchiveRef, ArchiveUrl, is_commit};
use ct2v_support::diagnostic::InputError;
use ct2v_support::safe_path;

/// The input name of the submodule at `path`: `submodule-third_party-ruy`.
pub(crate) fn submodule_input(path: &str) -> String {
    format!("submodule-{}", path.replace('/', "-"))
}

pub(super) fn github_tag(files: &Files, spec: &SourceTable) -> Result<GithubTag, InputError> {
    let mut archive = archive_input(files, spec, "ctranslate2-source")?;
    let url_at = spec.url.as_ref().expect("archive_input checked `url`");
    let parsed =
        ArchiveUrl::parse(&archive.url)
            .filter(|a| matches!(a.reference, ArchiveRef::Tag(_)))
            .ok_or_else(|| {
                files
                .error_at(url_at, "[source] of kind `github-tag` needs a tag archive URL")
                .note("e.g. https://github.com/OpenNMT/CTranslate2/archive/refs/tags/v4.8.5.tar.gz")
            })?;
    if archive.subdir.is_none() {
        archive.subdir = Some(parsed.top_folder());
    }
    let commit_at = spec.commit.as_ref().ok_or_else(|| {
        files
            .error_at(&spec.kind, "[source] of kind `github-tag` needs `commit`")
            .note(
                "the 40-hex commit the tag points at; `cargo xtask bump --from-tag TAG` writes it",
            )
    })?;
    let commit = check_commit(files, commit_at, "[source] commit")?;
    let mut names = BTreeSet::new();
    let mut submodules = Vec::new();
    for (path, record) in &spec.submodules {
        submodules.push(submodule(files, path, record, &mut names)?);
    }
    Ok(GithubTag {
        archive,
        commit,
        submodules,
    })
}

fn submodule(
    files: &Files,
    path: &str,
    record: &Loc<crate::variant::layer::SubmoduleTable>,
    names: &mut BTreeSet<String>,
) -> Result<Submodule, InputError> {
    let at = |message: String| files.error_at(record, message);
    let path_loc = Loc {
        value: path.to_string(),
        file: record.file,
        span: record.span.clone(),
    };
    checked(
        files,
        &path_loc,
        "submodule path",
        safe_path::check_nonempty,
    )?;
    let canonical = path
        .split(['/', '\\'])
        .filter(|p| !p.is_empty() && *p != ".");
    if canonical.collect::<Vec<_>>().join("/") != path {
        return Err(at(format!(
            "submodule path `{}` is not written as .gitmodules writes it",
            path.escape_debug()
        ))
        .note("parts separated by one `/`, no `./`, no trailing `/`, e.g. third_party/ruy"));
    }
    let name = submodule_input(path);
    if !names.insert(name.clone()) {
        return Err(at(format!(
            "submodule `{path}` has the input name `{name}`, as another submodule does"
        ))
        .note("each submodule path is recorded once"));
    }
    let spec = &record.value;
    let commit = check_commit(files, &spec.commit, &format!("submodule `{path}`: commit"))?;
    let parsed = ArchiveUrl::parse(&spec.url.value);
    let top = match &parsed {
        Some(ArchiveUrl {
            reference: ArchiveRef::Commit(sha),
            ..
        }) if *sha == commit => parsed.as_ref().map(ArchiveUrl::top_folder),
        _ => None,
    };
    let Some(top) = top else {
        return Err(files
            .error_at(
                &spec.url,
                format!("submodule `{path}`: `url` must be the archive of its commit {commit}"),
            )
            .note(format!(
                "https://github.com/OWNER/REPO/archive/{commit}.tar.gz; `cargo xtask bump \
                 --from-tag TAG` writes it"
            )));
    };
    let input = InputTable {
        url: Some(spec.url.clone()),
        index: None,
        sha256: spec.sha256.clone(),
        size: spec.size,
        subdir: None,
        expect: None,
        package: None,
        sdk_folder: None,
        pin_source: None,
    };
    let loc = Loc {
        value: input,
        file: record.file,
        span: record.span.clone(),
    };
    let mut input = checked_input(files, &name, &loc, false, None)?;
    input.subdir = Some(top);
    Ok(Submodule {
        path: path.to_string(),
        commit,
        input,
    })
}

fn check_commit(files: &Files, at: &Loc<String>, what: &str) -> Result<String, InputError> {
    if is_commit(&at.value) {
        return Ok(at.value.clone());
    }
    Err(files
        .error_at(
            at,
            format!(
                "{what} `{}` is not a commit id (40 lowercase hex digits)",
                at.value.escape_debug()
            ),
        )
        .note("`cargo xtask bump --from-tag TAG` reads the commits from GitHub"))
}
