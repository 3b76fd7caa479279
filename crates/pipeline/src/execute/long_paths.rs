//! Before a build on Windows with long paths off: whether the deepest path the plan's unpack
//! steps will write is past MAX_PATH, from the archives already in the cache.

use ct2v_support::longpaths;

/// The deepest path the plan's unpack steps will write, from the archives already in the
/// cache (only their names are read): (that path, its length in characters).
fn deepest_unpacked(plan: &crate::plan::Plan) -> Option<(String, usize)> {
    let mut deepest: Option<(String, usize)> = None;
    for step in &plan.steps {
        let crate::plan::Action::Unpack {
            archive,
            subdir,
            dest,
            input,
            ..
        } = &step.action
        else {
            continue;
        };
        let Some(file_name) = plan
            .inputs
            .iter()
            .find(|i| &i.name == input)
            .map(|i| i.file_name.as_str())
        else {
            continue;
        };
        let (Some(format), true) = (
            ct2v_fetch::unpack::ArchiveFormat::from_name(file_name),
            std::path::Path::new(archive).is_file(),
        ) else {
            continue;
        };
        let Ok(Some(member)) = ct2v_fetch::unpack::longest_member(
            std::path::Path::new(archive),
            format,
            subdir.as_deref(),
        ) else {
            continue;
        };
        let path = ct2v_support::paths::shown(&ct2v_support::paths::join_slashed(
            std::path::Path::new(dest),
            &member,
        ));
        let length = path.chars().count();
        if deepest.as_ref().is_none_or(|(_, l)| length > *l) {
            deepest = Some((path, length));
        }
    }
    deepest
}

/// On Windows with long paths off: the problem with the plan's deepest path, if it is too
/// long (see [`deepest_unpacked`]).
pub fn problem(plan: &crate::plan::Plan) -> Option<String> {
    if longpaths::enabled() != Some(false) {
        return None;
    }
    let (path, length) = deepest_unpacked(plan)?;
    (length > longpaths::LONGEST).then(|| longpaths::advice(length, &path))
}
