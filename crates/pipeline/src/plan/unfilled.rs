//! The folders of a bundle job that only the build machine knows: the plan writes them as
//! placeholders (as it writes `{sdk.root}` into commands), the executor fills them in
//! (`build::bundle_job`).

use std::path::{Path, PathBuf};

use ct2v_bundle::bundler::job::{BundleJob, SearchDir};

/// The GPU SDK found when the build runs (the same placeholder as in commands).
pub(crate) const SDK_ROOT: &str = "{sdk.root}";
/// The folder of the C++ compiler's runtime libraries, found when the build runs.
pub(crate) const TOOLCHAIN: &str = "{toolchain}";

/// `rel` below the folder `placeholder` stands for.
pub(crate) fn folder(placeholder: &str, rel: &str) -> PathBuf {
    if rel.is_empty() {
        PathBuf::from(placeholder)
    } else {
        PathBuf::from(format!("{placeholder}/{rel}"))
    }
}

/// The path below `placeholder` that `path` names (`""` for the folder itself), if it is one
/// of its folders.
pub(crate) fn below(path: &Path, placeholder: &str) -> Option<String> {
    let text = path.to_str()?;
    let rest = text.strip_prefix(placeholder)?;
    if rest.is_empty() {
        return Some(String::new());
    }
    rest.strip_prefix('/').map(str::to_string)
}

/// Whether `path` is in the SDK found when the build runs.
pub(crate) fn in_sdk(path: &Path) -> bool {
    below(path, SDK_ROOT).is_some()
}

/// Whether the bundle copies libraries or data from the SDK itself (so the machine that
/// bundles needs the SDK installed, not only its recorded version).
pub(crate) fn takes_from_sdk(job: &BundleJob) -> bool {
    job.search
        .iter()
        .any(|s| matches!(&s.dir, SearchDir::Dir(dir) if in_sdk(dir)))
        || job.data.iter().any(|d| in_sdk(&d.base))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_below_a_placeholder_is_found_again() {
        assert_eq!(
            below(&folder(SDK_ROOT, "lib/x"), SDK_ROOT).as_deref(),
            Some("lib/x")
        );
        assert_eq!(
            below(&folder(TOOLCHAIN, ""), TOOLCHAIN).as_deref(),
            Some("")
        );
        assert_eq!(below(Path::new("{sdk.rootless}/lib"), SDK_ROOT), None);
        assert_eq!(below(Path::new("/opt/rocm/lib"), SDK_ROOT), None);
    }
}
