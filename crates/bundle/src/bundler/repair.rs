//! The unpacked wheel changed as the analysis decided (as auditwheel's `repair_wheel` acts on
//! what `analyze_wheel_abi` found): the files placed, ELF RUNPATHs pointed at them, the
//! platform tag the binaries prove, the `Requires-Dist` lines added.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::Policy;
use super::analyze::BundleAnalysis;
use super::job::BundleJob;
use super::layout::Placed;
use super::manylinux::{self, Tagging};
use super::runpath;

/// What the repair changed that the outputs and the report name.
#[derive(Debug)]
pub(crate) struct Repaired {
    /// The fat wheel's file name: the input's, with the platform tag the binaries got.
    pub wheel_name: String,
    /// Linux: the platform tag given and what the binaries prove.
    pub platform_tag: Option<Tagging>,
    /// Linux: search paths the binaries brought that lead outside the wheel, dropped.
    pub dropped_search_paths: Vec<runpath::DroppedSearchPath>,
}

/// Repairs `tree`, the input wheel (named `wheel_name`) unpacked and analyzed.
pub(crate) fn repair(
    spec: &BundleJob,
    analysis: &BundleAnalysis,
    tree: &Path,
    wheel_name: &str,
) -> Result<Repaired> {
    place(&analysis.placed, tree)?;
    let mut dropped_search_paths = Vec::new();
    // Nothing added: the wheel's binaries stay byte for byte as they were.
    if spec.policy == Policy::Manylinux2_28 && !analysis.placed.is_empty() {
        let patchelf = spec
            .patchelf
            .clone()
            .filter(|p| p.is_file())
            .unwrap_or_else(|| PathBuf::from("patchelf"));
        dropped_search_paths = runpath::set_relative(tree, &analysis.closure, &patchelf)?;
    }
    let mut repaired = Repaired {
        wheel_name: wheel_name.to_string(),
        platform_tag: None,
        dropped_search_paths,
    };
    if let Some(target) = &spec.manylinux {
        let tagging = manylinux::tag_wheel(
            tree,
            target,
            &|lib| analysis.never_bundled.contains(lib),
            spec.keep_linux_tag,
            spec.manylinux_newer_ok,
        )?;
        repaired.wheel_name = crate::wheel::set_platform_tag(tree, wheel_name, &tagging.tag)?;
        repaired.platform_tag = Some(tagging);
    }
    crate::wheel::add_requires_dist(tree, &spec.requires_dist)?;
    Ok(repaired)
}

fn place(placed: &[Placed], tree: &Path) -> Result<()> {
    for file in placed {
        let to = tree.join(file.path_in_wheel());
        if let Some(dir) = to.parent() {
            fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        }
        ct2v_support::regular_file::copy(&file.source, &to).with_context(|| {
            format!("cannot copy {} to {}", file.source.display(), to.display())
        })?;
        make_writable(&to)?;
    }
    Ok(())
}

/// Copies keep the SDK's modes; a read-only copy could not have its RUNPATH set.
fn make_writable(path: &Path) -> Result<()> {
    let mut permissions = fs::metadata(path)?.permissions();
    if permissions.readonly() {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            permissions.set_mode(permissions.mode() | 0o200);
        }
        // Windows only: there it clears the read-only attribute (on Unix it would make the
        // file writable by everyone, which the lint is about).
        #[cfg(not(unix))]
        #[allow(clippy::permissions_set_readonly_false)]
        permissions.set_readonly(false);
        fs::set_permissions(path, permissions)
            .with_context(|| format!("cannot make {} writable", path.display()))?;
    }
    Ok(())
}
