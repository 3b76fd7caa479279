//! What one variant file (or `defaults.toml`, or one `[platform.NAME]` table) may say.
//!
//! Every key is optional here: a variant is a stack of layers (defaults, the version file, the
//! variant file, the version file's `[variant.<name>]`, each followed by its platform table),
//! each overriding the one below. Only after stacking does `resolve` insist that required keys
//! are present. Unknown keys are rejected by serde (`deny_unknown_fields`) with the file, line
//! and column.

use std::collections::BTreeMap;

use serde::Deserialize;

pub use ct2v_bundle::bundler::{Output, Policy};

use super::loc::Loc;

/// A value for a `-D` option: TOML booleans become `ON`/`OFF`.
pub(crate) type CMakeOptions = BTreeMap<String, Loc<toml::Value>>;

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Layer {
    /// One line for `cargo xtask variants`.
    pub description: Option<String>,
    /// Only in a variant file: the variant whose file (and whose `[variant.<name>]` tables in
    /// the version files) this one is stacked on, saying only what differs (`rocm-gfx1032` is
    /// `rocm-gfx1010` with other GPU targets and another rocBLAS).
    pub extends: Option<Loc<String>>,
    /// The CTranslate2 version this variant produces.
    pub ctranslate2: Option<Loc<String>>,
    /// Python versions to build wheels for, e.g. `["3.11", "3.12"]`.
    pub python: Option<Vec<Loc<String>>>,
    /// Platforms this variant is built for.
    pub platforms: Option<Vec<Loc<String>>>,
    /// GPU architectures (HIP `gfx…` targets) kept in kernels and kernel data.
    pub gpu_targets: Option<Vec<Loc<String>>>,
    /// CUDA architectures, as CTranslate2's `CUDA_ARCH_LIST` takes them.
    pub cuda_arch: Option<Loc<String>>,
    /// The PEP 440 local version label a release gives this variant's wheels (`cpu`,
    /// `cu{sdk-major}`…), so that variants never share a file name and pip can ask for one.
    pub local_version: Option<Loc<String>>,
    /// Where CTranslate2 comes from.
    pub source: Option<SourceTable>,
    /// The hash-pinned requirements of the build-tools venv (CMake, ninja, pybind11…),
    /// relative to the repository root: per CTranslate2 version, since each pins its own
    /// pybind11 (python/install_requirements.txt).
    pub build_tools: Option<Loc<String>>,
    /// Other pinned downloads, by name.
    #[serde(default)]
    pub inputs: BTreeMap<String, Loc<InputTable>>,
    /// One wheel per kept GPU target from a PEP 503 index (TheRock's
    /// `rocm-sdk-device-gfxNNNN`): each becomes the input `device-<target>`.
    pub(crate) device_wheels: Option<Loc<DeviceWheelsTable>>,
    pub onednn: Option<OneDnnTable>,
    pub openmp: Option<OpenMpTable>,
    pub mkl: Option<MklTable>,
    pub sdk: Option<SdkTable>,
    /// CTranslate2's own CMake options.
    #[serde(default)]
    pub cmake: CMakeOptions,
    /// Environment variables for configure, build and wheel steps.
    #[serde(default)]
    pub env: BTreeMap<String, Loc<String>>,
    /// A patch series file, relative to the repository root.
    pub patches: Option<Loc<String>>,
    pub bundle: Option<BundleTable>,
    pub verify: Option<VerifyTable>,
    /// Per-platform overrides: `[platform.windows-x86_64]` and so on.
    #[serde(default)]
    pub platform: BTreeMap<String, Loc<Layer>>,
    /// Only in a CTranslate2 version file (`variants/ctranslate2/<version>.toml`): what one
    /// variant needs for that version (the official wheels it repackages, its patch series),
    /// stacked above the variant's own file.
    #[serde(default)]
    pub variant: BTreeMap<String, Loc<Layer>>,
    /// Only in `defaults.toml` or a version file: how this data may differ from what
    /// CTranslate2's own tree declares (`cargo xtask upstream --check`).
    pub upstream: Option<UpstreamTable>,
}

/// `[upstream]`: `[upstream.accepted]` maps a fact's name as `upstream --check` prints it
/// (`onednn.version`) to the reason our data deliberately differs from upstream's.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct UpstreamTable {
    #[serde(default)]
    pub accepted: BTreeMap<String, Loc<String>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SourceKind {
    /// A pinned archive (`.crate`, `.tar.gz`, `.zip`) and the folder inside it to use.
    Archive,
    /// A git repository at a fixed revision.
    Git,
    /// A source tree already on disk.
    Path,
    /// No build: an official wheel from an archive of wheels (one per Python version) is
    /// repackaged.
    Wheel,
    /// A git tag's GitHub source archive plus one commit archive per submodule (nested ones
    /// too), each pinned and checked against the commit the tag records.
    GithubTag,
}

/// `[source]`: one table for every kind, checked by `resolve` (a tagged enum would lose
/// the line numbers of typos inside the table).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct SourceTable {
    pub kind: Loc<SourceKind>,
    pub url: Option<Loc<String>>,
    pub sha256: Option<Loc<String>>,
    pub size: Option<u64>,
    pub subdir: Option<Loc<String>>,
    pub rev: Option<Loc<String>>,
    pub path: Option<Loc<String>>,
    /// For `kind = "github-tag"`: the 40-hex commit the tag points at (peeled).
    pub commit: Option<Loc<String>>,
    /// For `kind = "github-tag"`: every submodule, nested ones too, by its full path in the
    /// assembled tree (`third_party/ruy/third_party/cpuinfo`).
    #[serde(default)]
    pub submodules: BTreeMap<String, Loc<SubmoduleTable>>,
    /// For `kind = "wheel"`: Python version → the wheel's path inside the archive at `url`.
    #[serde(default)]
    pub wheels: BTreeMap<String, Loc<String>>,
    /// Where the sha256 came from when it was not downloaded by `cargo xtask pin` (see
    /// `InputTable::pin_source`).
    pub(crate) pin_source: Option<String>,
}

impl SourceTable {
    pub fn kind_name(&self) -> &'static str {
        match self.kind.value {
            SourceKind::Archive => "archive",
            SourceKind::Git => "git",
            SourceKind::Path => "path",
            SourceKind::Wheel => "wheel",
            SourceKind::GithubTag => "github-tag",
        }
    }
}

/// `[source.submodules."<path>"]`: one submodule's commit archive, pinned like an input.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct SubmoduleTable {
    /// `https://github.com/OWNER/REPO/archive/<commit>.tar.gz`.
    pub url: Loc<String>,
    /// The gitlink: the commit the parent tree records for this path (40 hex).
    pub commit: Loc<String>,
    pub sha256: Option<Loc<String>>,
    pub size: Option<u64>,
}

/// A remote file pinned by sha256 and size. A missing pin means "not pinned yet".
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct InputTable {
    /// Where the file is. With `index` instead, `pin` finds the wheel named by `package` on
    /// that PEP 503 index and writes its URL here.
    pub url: Option<Loc<String>>,
    /// A PEP 503 ("simple") index the wheel named by `package` is taken from, as pip would.
    pub index: Option<Loc<String>>,
    pub sha256: Option<Loc<String>>,
    pub size: Option<u64>,
    /// The folder inside the unpacked archive that is used.
    pub subdir: Option<Loc<String>>,
    /// Paths the used folder must hold (`rocblas.dll`, `library/`): an archive whose layout
    /// changed is then named when it is unpacked, rather than found wanting later.
    pub expect: Option<Vec<Loc<String>>>,
    /// The Python package and version that the file is, for the provenance report.
    pub package: Option<String>,
    /// The folder of the unpacked wheel that mirrors an installed SDK's root (e.g.
    /// `_rocm_sdk_core`, whose `bin/` is an SDK's `bin/`): with `--sdk-dir`, the input is
    /// not downloaded and its folders are taken from there.
    pub sdk_folder: Option<Loc<String>>,
    /// Where the sha256 came from when it was not downloaded by `cargo xtask pin` (e.g. a
    /// digest the publisher listed): a mismatch on the first download then says so.
    pub(crate) pin_source: Option<String>,
}

/// `[device-wheels]`: the index and the `package` line, with `{target}` standing for each
/// kept GPU target (`"rocm-sdk-device-{target} 10.0.0"`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct DeviceWheelsTable {
    pub index: Loc<String>,
    pub package: Loc<String>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct OneDnnTable {
    /// Set to false to build CTranslate2 without oneDNN.
    pub enabled: Option<bool>,
    /// The name of the input holding oneDNN's source.
    pub input: Option<Loc<String>>,
    #[serde(default)]
    pub cmake: CMakeOptions,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum OpenMpRuntime {
    /// The compiler's own runtime (libgomp with gcc).
    Comp,
    /// Intel's `libiomp5`, from the `intel-openmp` wheel.
    Intel,
    None,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct OpenMpTable {
    pub runtime: Option<Loc<OpenMpRuntime>>,
    /// For `INTEL`: the input holding the `intel-openmp` wheel.
    pub input: Option<Loc<String>>,
    /// For `INTEL`: the folder inside that input that `INTEL_ROOT` points at.
    pub root: Option<Loc<String>>,
}

/// Intel MKL, linked statically from the `mkl-static` and `mkl-include` wheels, as the
/// official wheels do (CTranslate2 then uses MKL on Intel CPUs and oneDNN elsewhere, and
/// offers int16). WITH_MKL, MKL_ROOT and MKL_INCLUDE_DIR follow from this table.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct MklTable {
    pub enabled: Option<bool>,
    /// The input holding the static libraries (`mkl-static`).
    pub input: Option<Loc<String>>,
    /// The folder inside it that `MKL_ROOT` points at (it has `lib/`).
    pub root: Option<String>,
    /// The input holding the headers (`mkl-include`).
    pub(crate) include_input: Option<Loc<String>>,
    /// The folder inside it that has `mkl.h` (`MKL_INCLUDE_DIR`).
    pub include: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SdkKind {
    Cuda,
    Hip,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct SdkTable {
    pub kind: Option<Loc<SdkKind>>,
    /// The version wanted, e.g. "6.2" (a prefix of the installed version).
    pub version: Option<Loc<String>>,
    /// The runtime library whose presence identifies a fitting install (`amdhip64_6`).
    pub runtime: Option<String>,
    /// Libraries the install must have, e.g. `amd_comgr` (absent: "no ROCm-capable device").
    pub requires: Option<Vec<String>>,
    /// What to tell a user who lacks the SDK.
    pub(crate) install_hint: Option<String>,
    /// The input holding the SDK's silent installer, for machines where `install-sdk` may
    /// install it (a hosted CI runner); builds never fetch it.
    pub installer: Option<Loc<String>>,
    /// The installer's arguments for an unattended install.
    pub(crate) installer_args: Option<Vec<String>>,
    /// Minutes the unattended install may take before it is stopped.
    pub(crate) installer_minutes: Option<u64>,
    /// The SDK as pip installs it (`rocm[libraries,devel]==10.0.0`), from `pip-index`: how a
    /// hosted CI runner gets it (`rocm-sdk path --root` is then the `--sdk-dir`).
    pub pip: Option<Loc<String>>,
    pub(crate) pip_index: Option<Loc<String>>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct BundleTable {
    pub policy: Option<Loc<Policy>>,
    /// Globs, relative to the wheel's root, of the binaries whose imports are followed.
    pub roots: Option<Loc<Vec<String>>>,
    /// Libraries loaded at run time (no import table shows them), as globs of file names.
    pub force: Option<Vec<String>>,
    /// Libraries the user's machine provides (globs of file names), never bundled: e.g. the
    /// HIP runtime the display driver installs.
    pub assume_present: Option<Vec<String>>,
    /// Where imports are looked for, in order.
    pub search: Option<Vec<SearchTable>>,
    /// Data folders copied along, such as rocBLAS's Tensile `library/`.
    pub data: Option<Vec<DataTable>>,
    pub outputs: Option<Loc<Vec<Output>>>,
    /// `Requires-Dist` lines the bundled wheel gets, by the major version of the SDK the build
    /// found (`"12" = ["nvidia-cublas-cu12>=12.8,<13"]`): the packages its run-time loads come
    /// from.
    pub requires_dist: Option<Loc<BTreeMap<String, Vec<String>>>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct SearchTable {
    /// `wheel`, `prefix`, `toolchain`, `sdk`, or the name of an input.
    pub from: Loc<String>,
    /// The folder below `from` that holds the libraries.
    pub dir: Option<Loc<String>>,
    /// Where libraries found here go, relative to the wheel's root.
    pub dest: Loc<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DataFilter {
    /// Keep only files whose name carries one of the variant's GPU targets.
    GpuTargets,
    /// TheRock kernel archives (`.kpack/<artifact>_…`): keep only those of artifacts that
    /// hold a library of the closure (`ct2v_bundle::kpack`).
    Closure,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct DataTable {
    pub from: Loc<String>,
    /// A glob below `from`.
    pub glob: Loc<String>,
    pub dest: Loc<String>,
    pub filter: Option<DataFilter>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct VerifyTable {
    /// Device → compute types `get_supported_compute_types(device)` must include.
    #[serde(default)]
    pub compute_types: BTreeMap<String, Loc<Vec<String>>>,
}

/// Stacking: the layer on top wins key by key; maps merge by key; records such as
/// `[source]` or one input are replaced whole.
pub trait Stack {
    fn stack(self, top: Self) -> Self;
}

impl<T: Stack> Stack for Option<T> {
    fn stack(self, top: Self) -> Self {
        match (self, top) {
            (Some(below), Some(top)) => Some(below.stack(top)),
            (below, top) => top.or(below),
        }
    }
}

/// Implements [`Stack`] field by field: `replace` fields are taken from the top layer
/// when it has them, `merge` fields are overlaid (maps key by key, tables recursively).
macro_rules! stack_fields {
    ($ty:ty { replace: [$($r:ident),*], merge: [$($m:ident),*] }) => {
        impl Stack for $ty {
            fn stack(self, top: Self) -> Self {
                Self {
                    $($r: top.$r.or(self.$r),)*
                    $($m: self.$m.stack(top.$m),)*
                }
            }
        }
    };
}

impl<K: Ord, V> Stack for BTreeMap<K, V> {
    fn stack(mut self, top: Self) -> Self {
        self.extend(top);
        self
    }
}

stack_fields!(Layer {
    replace: [
        description,
        extends,
        ctranslate2,
        python,
        platforms,
        gpu_targets,
        cuda_arch,
        local_version,
        source,
        build_tools,
        patches,
        device_wheels
    ],
    merge: [
        inputs, onednn, openmp, mkl, sdk, cmake, env, bundle, verify, platform, variant, upstream
    ]
});
stack_fields!(UpstreamTable {
    replace: [],
    merge: [accepted]
});
stack_fields!(OneDnnTable {
    replace: [enabled, input],
    merge: [cmake]
});
stack_fields!(OpenMpTable {
    replace: [runtime, input, root],
    merge: []
});
stack_fields!(MklTable {
    replace: [enabled, input, root, include_input, include],
    merge: []
});
stack_fields!(SdkTable {
    replace: [
        kind,
        version,
        runtime,
        requires,
        install_hint,
        installer,
        pip,
        pip_index,
        installer_args,
        installer_minutes
    ],
    merge: []
});
stack_fields!(VerifyTable {
    replace: [],
    merge: [compute_types]
});
stack_fields!(BundleTable {
    replace: [
        policy,
        roots,
        force,
        assume_present,
        search,
        data,
        outputs,
        requires_dist
    ],
    merge: []
});

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Layer {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn top_layer_wins_and_maps_merge() {
        let below =
            parse("description = \"below\"\npython = [\"3.11\"]\n[cmake]\nA = \"1\"\nB = \"2\"\n");
        let top = parse("description = \"top\"\n[cmake]\nB = \"3\"\n");
        let merged = below.stack(top);
        assert_eq!(merged.description.as_deref(), Some("top"));
        assert_eq!(merged.python.unwrap()[0].value, "3.11");
        assert_eq!(merged.cmake["A"].value.as_str(), Some("1"));
        assert_eq!(merged.cmake["B"].value.as_str(), Some("3"));
    }

    #[test]
    fn nested_tables_merge_field_by_field() {
        let below = parse("[onednn]\ninput = \"onednn\"\n[onednn.cmake]\nX = \"ON\"\n");
        let top = parse("[onednn.cmake]\nY = \"OFF\"\n");
        let onednn = below.stack(top).onednn.unwrap();
        assert_eq!(onednn.input.unwrap().value, "onednn");
        assert_eq!(onednn.cmake.len(), 2);
    }

    #[test]
    fn unknown_keys_are_rejected() {
        let err = toml::from_str::<Layer>("descriptoin = \"x\"\n").unwrap_err();
        assert!(
            err.message().contains("unknown field `descriptoin`"),
            "{err}"
        );
    }
}
