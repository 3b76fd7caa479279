//! The CTranslate2 tree a source build compiles: unpacked (by `inputs.rs`), cloned, copied or
//! used where it is, then patched.

use super::{Layout, SOURCE_INPUT, slash, step};
use crate::plan::{Action, CommandLine, SourceArchive, Step, StepId};
use crate::variant::{GithubTag, Input, Source, SourceBuild};
use ct2v_fetch::patch::series::Series;

/// Where the tree is, and the step after which it is ready (`None`: a local tree used where
/// it is, which no step writes).
pub(super) struct SourceTree {
    pub dir: String,
    pub ready: Option<StepId>,
}

/// The tree and the steps that put it in place and patch it.
pub(super) fn source_tree(layout: &Layout, build: &SourceBuild) -> (SourceTree, Vec<Step>) {
    let dest = layout.src("ctranslate2");
    let mut steps = Vec::new();
    let mut tree = match &build.source {
        Source::Archive(_) => SourceTree {
            dir: dest,
            ready: Some(StepId::unpack(SOURCE_INPUT)),
        },
        Source::GithubTag(tag) => {
            steps.push(assemble_step(layout, tag, &dest));
            SourceTree {
                dir: dest,
                ready: Some(StepId::ASSEMBLE_SOURCE),
            }
        }
        Source::Git { url, rev } => {
            steps.push(clone_step(url, rev, &dest));
            SourceTree {
                dir: dest,
                ready: Some(StepId::CLONE_SOURCE),
            }
        }
        Source::Path { path } => {
            let given = slash(&layout.root.join(path));
            if build.patches.is_some() {
                // A patched tree is a copy: the user's own tree is never modified.
                steps.push(copy_step(given, &dest));
                SourceTree {
                    dir: dest,
                    ready: Some(StepId::unpack(SOURCE_INPUT)),
                }
            } else {
                SourceTree {
                    dir: given,
                    ready: None,
                }
            }
        }
    };
    if let Some(series) = &build.patches {
        steps.push(patch_step(layout, series, &tree));
        tree.ready = Some(StepId::PATCH);
    }
    (tree, steps)
}

/// The inputs the source step puts together rather than an unpack step each.
pub(super) fn assembled_inputs(build: &SourceBuild) -> Vec<&str> {
    match &build.source {
        Source::GithubTag(tag) => std::iter::once(SOURCE_INPUT)
            .chain(tag.submodules.iter().map(|s| s.input.name.as_str()))
            .collect(),
        _ => Vec::new(),
    }
}

fn assemble_step(layout: &Layout, tag: &GithubTag, dest: &str) -> Step {
    let part = |path: &str, input: &Input, name: &str, commit: &str| SourceArchive {
        path: path.to_string(),
        input: name.to_string(),
        archive: layout.cached(input),
        subdir: input.subdir.clone().unwrap_or_default(),
        commit: commit.to_string(),
    };
    let tag_part = part("", &tag.archive, SOURCE_INPUT, &tag.commit);
    let submodules: Vec<SourceArchive> = tag
        .submodules
        .iter()
        .map(|s| part(&s.path, &s.input, &s.input.name, &s.commit))
        .collect();
    let reads: Vec<String> = std::iter::once(tag_part.archive.clone())
        .chain(submodules.iter().map(|s| s.archive.clone()))
        .collect();
    step(
        StepId::ASSEMBLE_SOURCE,
        Action::AssembleSource {
            tag: tag_part,
            submodules,
            dest: dest.to_string(),
        },
        format!(
            "Unpack {} with its {} submodule archive(s), each checked against its commit, \
             into place",
            tag.archive.file_name(),
            tag.submodules.len()
        ),
    )
    .after([StepId::FETCH])
    .reads(reads)
    .writes([dest.to_string()])
}

fn clone_step(url: &str, rev: &str, dest: &str) -> Step {
    step(
        StepId::CLONE_SOURCE,
        Action::Clone {
            url: url.to_string(),
            rev: rev.to_string(),
            dest: dest.to_string(),
        },
        format!("Clone CTranslate2 at {rev} with its submodules"),
    )
    .runs(vec![
        CommandLine::new("git").args(["clone", "--no-checkout", url, dest]),
        CommandLine::new("git").args(["-C", dest, "checkout", "--detach", rev]),
        CommandLine::new("git").args(["-C", dest, "submodule", "update", "--init", "--recursive"]),
    ])
    .writes([dest.to_string()])
}

fn copy_step(given: String, dest: &str) -> Step {
    step(
        StepId::unpack(SOURCE_INPUT),
        Action::Unpack {
            input: SOURCE_INPUT.to_string(),
            archive: given.clone(),
            subdir: None,
            dest: dest.to_string(),
            expect: Vec::new(),
        },
        "Copy the local CTranslate2 tree so that patches never touch it",
    )
    .reads([given])
    .writes([dest.to_string()])
}

fn patch_step(layout: &Layout, series: &Series, tree: &SourceTree) -> Step {
    let patches: Vec<String> = series
        .patches
        .iter()
        .map(|p| slash(&layout.root.join(p)))
        .collect();
    step(
        StepId::PATCH,
        Action::Patch {
            series: slash(&layout.root.join(&series.path)),
            patches: patches.clone(),
            tree: tree.dir.clone(),
        },
        format!(
            "Apply {} patch(es) from {} (check first, all or nothing)",
            patches.len(),
            series.path.display()
        ),
    )
    .after(tree.ready.clone())
    .reads(patches)
    .writes([tree.dir.clone()])
}
