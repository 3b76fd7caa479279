//! Where things are: the repository root and the folders under `target/` that the tool owns.

use std::env;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use crate::platform::Platform;

/// Overrides the download cache folder (also `--cache-dir`).
pub(crate) const CACHE_ENV: &str = "CT2V_CACHE_DIR";

#[derive(Debug, Clone)]
pub struct Workspace {
    pub root: PathBuf,
    pub cache_dir: PathBuf,
}

impl Workspace {
    /// `--root`, else the nearest folder above the current one with `variants/` and
    /// `xtask/`, else the checkout this binary was built from.
    pub fn locate(root: Option<PathBuf>, cache_dir: Option<PathBuf>) -> Result<Workspace> {
        let root = match root {
            Some(root) => root,
            None => find_root()?,
        };
        let root = crate::paths::canonical(&root).unwrap_or(root);
        let cache_dir = cache_dir
            .or_else(|| env::var_os(CACHE_ENV).map(PathBuf::from))
            .unwrap_or_else(|| root.join("target").join("xtask").join("cache"));
        Ok(Workspace { root, cache_dir })
    }

    pub fn xtask_dir(&self) -> PathBuf {
        self.root.join("target").join("xtask")
    }

    /// Everything one variant × platform build writes. `slot` names a build's folders: the
    /// variant, or `<variant>@<version>` for a CTranslate2 version not its default (the
    /// pipeline's `Resolved::slot`).
    pub fn work_dir(&self, slot: &str, platform: Platform) -> PathBuf {
        self.xtask_dir().join(slot).join(platform.name())
    }

    pub fn log_dir(&self, slot: &str, platform: Platform) -> PathBuf {
        self.xtask_dir()
            .join("logs")
            .join(slot)
            .join(platform.name())
    }

    /// Which steps of one build succeeded, with which fingerprint.
    pub fn state_dir(&self, slot: &str, platform: Platform, python: &str) -> PathBuf {
        self.xtask_dir()
            .join("state")
            .join(slot)
            .join(platform.name())
            .join(format!("py{python}"))
    }

    /// The build-tools venv (CMake, ninja, pybind11…) for one platform, Python and
    /// requirements file: each set of pins has its own venv, so that building two CTranslate2
    /// versions in turn never reinstalls one over the other.
    pub fn tools_venv(&self, platform: Platform, python: &str, requirements: &str) -> PathBuf {
        let stem = Path::new(requirements)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = match stem.as_str() {
            "build-tools" => format!("{}-py{python}", platform.name()),
            other => format!("{}-py{python}-{other}", platform.name()),
        };
        self.xtask_dir().join("venv").join(name)
    }
}

fn looks_like_root(dir: &Path) -> bool {
    dir.join("variants").is_dir() && dir.join("xtask").is_dir()
}

fn find_root() -> Result<PathBuf> {
    let cwd = env::current_dir()?;
    if let Some(found) = cwd.ancestors().find(|d| looks_like_root(d)) {
        return Ok(found.to_path_buf());
    }
    let built_from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf);
    match built_from {
        Some(dir) if looks_like_root(&dir) => Ok(dir),
        _ => bail!(
            "cannot find the ct2-variants checkout (a folder with variants/ and xtask/) above {}; \
             run from inside it or pass --root",
            cwd.display()
        ),
    }
}
