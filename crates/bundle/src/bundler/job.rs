//! What one bundle run needs ([`BundleJob`]): what every caller must say, defaults for the
//! rest, and the job of `bundle --wheel` from its flags.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::{Output, Policy};
use ct2v_fetch::wheel_name::WheelName;
use ct2v_support::diagnostic::{InputError, escaped};

/// Everything one bundle run needs. A plan carries one as its bundle step, with the folders
/// only the build machine knows written as placeholders its executor fills in.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BundleJob {
    /// The wheel whose binaries are bundled.
    pub wheel: PathBuf,
    pub policy: Policy,
    /// Linux: the manylinux policy to prove and tag the fat wheel with (`None`: no tagging).
    pub manylinux: Option<String>,
    /// Tag with the (newer) manylinux policy the binaries prove when they do not meet
    /// `manylinux`, instead of stopping (`bundle --wheel`, whose name no plan fixed).
    pub manylinux_newer_ok: bool,
    /// Globs (`dir/pattern`, relative to the wheel's root) of the binaries whose imports are
    /// followed; empty means every PE or ELF file in the wheel.
    pub roots: Vec<String>,
    /// File-name globs of libraries loaded at run time, which no import table names.
    pub force: Vec<String>,
    /// File-name globs of libraries the target system is expected to have (never bundled).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assume_present: Vec<String>,
    /// Where imports are looked for, in order.
    pub search: Vec<SearchFolder>,
    pub data: Vec<DataGlob>,
    /// Keep only data files for these GPU targets (files naming no target are kept).
    pub gpu_targets: Vec<String>,
    /// Library → those of `gpu_targets` the variant's TheRock release does not build it for
    /// (its table's exclusions), so its kernel files may lack them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub not_built: BTreeMap<String, Vec<String>>,
    pub outputs: Vec<Output>,
    /// The folder the outputs go to; replaced as a whole.
    pub out: PathBuf,
    /// The `patchelf` to run (default: the one on PATH).
    pub patchelf: Option<PathBuf>,
    /// For the report: what was bundled, e.g. `rocm` and `windows-x86_64`.
    pub variant: String,
    pub platform: String,
    /// Added to an error about a missing library: where the packages come from, how to fix.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub missing_hint: String,
    /// Linux: keep `linux_x86_64` when the binaries do not prove the policy's manylinux tag
    /// (a wheel for this machine only) instead of stopping.
    pub keep_linux_tag: bool,
    /// `Requires-Dist` lines added to the fat wheel's METADATA (the packages its run-time
    /// loads come from, such as NVIDIA's cuBLAS wheel).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires_dist: Vec<String>,
}

/// A folder libraries may come from, and the folder (relative to the wheel's root) the ones
/// found there are placed in.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SearchFolder {
    /// Written as its own key (`dir` or `in-wheel`) beside the others.
    #[serde(flatten)]
    pub dir: SearchDir,
    pub dest: String,
    /// For the report; found from a `*.dist-info` above the folder when not given.
    pub package: Option<String>,
    /// For the report when no `*.dist-info` names the folder's package (an input that is no
    /// wheel, such as a `.7z`): the variant's `package`.
    pub fallback_package: Option<String>,
    /// Whether the folder belongs to an SDK package whose whole size counts in the report's
    /// "bytes saved" (not a build prefix or the system's compiler runtime).
    pub counts_as_sdk: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SearchDir {
    /// A folder inside the wheel (relative, `/`-separated): resolved, never copied.
    InWheel(String),
    Dir(PathBuf),
}

/// Data files (e.g. Tensile kernels): `glob` is `dir/pattern` relative to `base`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DataGlob {
    pub base: PathBuf,
    pub glob: String,
    pub dest: String,
    pub filter_gpu_targets: bool,
    /// Keep only the kernel archives of the closure's libraries (`crate::kpack`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub filter_closure: bool,
    /// Who provides the files, for the report, when no `*.dist-info` above them says.
    pub package: Option<String>,
}

impl BundleJob {
    /// A spec with what every caller must say; the rest empty or off, the policy's own
    /// manylinux target and every output.
    pub fn new(
        wheel: PathBuf,
        policy: Policy,
        out: PathBuf,
        variant: String,
        platform: String,
    ) -> BundleJob {
        BundleJob {
            wheel,
            policy,
            manylinux: super::manylinux::target(policy).map(str::to_string),
            manylinux_newer_ok: false,
            roots: Vec::new(),
            force: Vec::new(),
            assume_present: Vec::new(),
            search: Vec::new(),
            data: Vec::new(),
            gpu_targets: Vec::new(),
            not_built: BTreeMap::new(),
            outputs: Output::ALL.to_vec(),
            out,
            patchelf: None,
            variant,
            platform,
            missing_hint: String::new(),
            keep_linux_tag: false,
            requires_dist: Vec::new(),
        }
    }

    /// The spec of `bundle --wheel`: everything from its flags, checked.
    pub fn from_flags(flags: &WheelFlags) -> Result<BundleJob> {
        let wheel = &flags.wheel;
        if !wheel.is_file() {
            let why = match wheel.exists() {
                true => "is not a file",
                false => "does not exist",
            };
            return Err(InputError::new(format!("--wheel {} {why}", wheel.display())).into());
        }
        // The name says what the output wheels are called and, unless --policy does, the
        // platform: a file whose name is no wheel's is refused before any work.
        let name = WheelName::parse(wheel).map_err(|e| InputError {
            message: format!("--wheel {}", e.message),
            ..e
        })?;
        let policy = match flags.policy {
            Some(policy) => policy,
            None => policy_of(&name)?,
        };
        let default_dest = flags
            .roots
            .first()
            .and_then(|r| r.rsplit_once('/'))
            .map(|(dir, _)| dir);
        let search = flags
            .search
            .iter()
            .map(|s| search_flag(s, default_dest))
            .collect::<Result<_, _>>()?;
        let filter_gpu_targets = flags.gpu_targets.is_some();
        let data = flags
            .data
            .iter()
            .map(|d| data_flag(d, filter_gpu_targets))
            .collect::<Result<_, _>>()?;
        for root in &flags.roots {
            check_root(root).map_err(|e| InputError::new(format!("--binary: {e}")))?;
        }
        for glob in &flags.force {
            check_force(glob)?;
        }
        let platform = match policy {
            Policy::Windows => "windows",
            Policy::Manylinux2_28 => "linux",
        };
        let variant = name.project.as_str();
        let mut spec = BundleJob {
            // A wheel given by hand has no plan that fixed its name: when its binaries need a
            // newer glibc than the policy allows, it gets the tag they prove.
            manylinux_newer_ok: true,
            roots: flags.roots.clone(),
            force: flags.force.clone(),
            search,
            data,
            gpu_targets: flags.gpu_targets.clone().unwrap_or_default(),
            keep_linux_tag: flags.keep_linux_tag,
            ..BundleJob::new(
                wheel.clone(),
                policy,
                flags.out.clone(),
                variant.to_string(),
                platform.to_string(),
            )
        };
        if !flags.outputs.is_empty() {
            spec.outputs = flags.outputs.clone();
        }
        Ok(spec)
    }

    /// Every folder the bundle writes to, relative to the wheel's root, sorted, once each.
    pub fn destinations(&self) -> Vec<String> {
        let mut dests: Vec<String> = self.search.iter().map(|s| s.dest.clone()).collect();
        dests.extend(self.data.iter().map(|d| d.dest.clone()));
        dests.sort();
        dests.dedup();
        dests
    }

    /// A user-chosen output folder, checked (see [`super::run::check_out`]).
    pub fn set_out(&mut self, out: &Path) -> Result<(), InputError> {
        super::run::check_out(out)?;
        self.out = out.to_path_buf();
        Ok(())
    }
}

impl SearchFolder {
    /// A folder whose package the report finds from a `*.dist-info` above it, not counted
    /// as an SDK.
    pub fn new(dir: SearchDir, dest: String) -> SearchFolder {
        SearchFolder {
            dir,
            dest,
            package: None,
            fallback_package: None,
            counts_as_sdk: false,
        }
    }
}

/// The flags of `bundle --wheel` as given; [`BundleJob::from_flags`] checks them.
#[derive(Debug, Default)]
pub struct WheelFlags {
    pub wheel: PathBuf,
    /// `None`: from the wheel's platform tag.
    pub policy: Option<Policy>,
    pub roots: Vec<String>,
    pub force: Vec<String>,
    /// `DIR[=DEST]` each.
    pub search: Vec<String>,
    /// `DIR/PATTERN=DEST` each.
    pub data: Vec<String>,
    pub gpu_targets: Option<Vec<String>>,
    /// Empty: every output.
    pub outputs: Vec<Output>,
    pub out: PathBuf,
    pub keep_linux_tag: bool,
}

/// The policy a wheel's platform tag asks for.
fn policy_of(wheel: &WheelName) -> Result<Policy, InputError> {
    let tag = &wheel.platform_tag;
    if tag.contains("win_amd64") || tag.contains("win32") {
        Ok(Policy::Windows)
    } else if tag.contains("linux") {
        Ok(Policy::Manylinux2_28)
    } else {
        Err(InputError::new(format!(
            "--wheel {}: its platform tag `{}` is neither Windows nor Linux, so the policy \
             of what the system provides is not known",
            escaped(&wheel.file),
            escaped(tag)
        ))
        .note("pass --policy windows or --policy manylinux_2_28"))
    }
}

/// `--search DIR[=DEST]`; DEST defaults to the first root's folder.
fn search_flag(given: &str, default_dest: Option<&str>) -> Result<SearchFolder, InputError> {
    let (dir, dest) = match given.rsplit_once('=') {
        Some((dir, dest)) => (dir, Some(dest)),
        None => (given, None),
    };
    let dir = PathBuf::from(dir);
    if !dir.is_dir() {
        let why = if dir.as_os_str().is_empty() {
            "names no folder (DIR=DEST)".to_string()
        } else if dir.exists() {
            "is not a folder".to_string()
        } else {
            format!(
                "does not exist{}",
                ct2v_support::fsx::folders_beside_note(&dir)
            )
        };
        return Err(
            InputError::new(format!("--search `{given}`: `{}` {why}", dir.display()))
                .note("--search takes a folder of libraries, e.g. --search sdk/bin=ctranslate2"),
        );
    }
    let dest = dest.or(default_dest).unwrap_or_default().to_string();
    flag_path("--search", given, &dest)?;
    // An unpacked package (a .dist-info above it) is an SDK whose size the report
    // compares with what was taken; a plain folder such as /usr/lib is not.
    let counts_as_sdk = super::analyze::package_of(&dir, 4).is_some();
    Ok(SearchFolder {
        counts_as_sdk,
        ..SearchFolder::new(SearchDir::Dir(dir), dest)
    })
}

/// `--data DIR/PATTERN=DEST`.
fn data_flag(given: &str, filter_gpu_targets: bool) -> Result<DataGlob, InputError> {
    let Some((glob, dest)) = given.rsplit_once('=') else {
        return Err(
            InputError::new(format!("--data `{given}` is not DIR/PATTERN=DEST"))
                .note("e.g. --data 'sdk/bin/rocblas/library/*=ctranslate2/rocblas/library'"),
        );
    };
    flag_path("--data", given, dest)?;
    let (dir, pattern) = glob.rsplit_once('/').unwrap_or((".", glob));
    Ok(DataGlob {
        base: PathBuf::from(dir),
        glob: pattern.to_string(),
        dest: dest.to_string(),
        filter_gpu_targets,
        filter_closure: false,
        package: None,
    })
}

/// A DEST given in a flag: relative, inside the wheel (see `safe_path`).
fn flag_path(flag: &str, given: &str, dest: &str) -> Result<(), InputError> {
    ct2v_support::safe_path::check_relative(dest).map_err(|why| {
        InputError::new(format!(
            "{flag} `{given}`: DEST `{}` is not allowed: {why}",
            dest.escape_debug()
        ))
        .note("DEST is a folder inside the wheel, e.g. ctranslate2")
    })
}

/// `--force` is a file-name glob, matched against the names of the libraries in the search
/// folders: a folder in it (`../x/*.so`, `/lib/libz.so`) would match nothing.
fn check_force(glob: &str) -> Result<(), InputError> {
    if glob.is_empty() || glob == "." || glob == ".." || glob.contains(['/', '\\']) {
        return Err(InputError::new(format!(
            "--force `{}` is not allowed: it is a file-name glob, with no folder",
            glob.escape_debug()
        ))
        .note(
            "the libraries are looked for in the --search folders, e.g. --force 'amd_comgr*.dll'",
        ));
    }
    Ok(())
}

/// A root is a `folder/pattern` inside the wheel: never absolute, never through `..`.
pub fn check_root(glob: &str) -> Result<(), InputError> {
    ct2v_support::safe_path::check_nonempty(glob).map_err(|why| {
        InputError::new(format!(
            "root `{}` is not allowed: {why}",
            glob.escape_debug()
        ))
        .note("a root is `folder/pattern` inside the wheel, e.g. ctranslate2/*.dll")
    })
}
