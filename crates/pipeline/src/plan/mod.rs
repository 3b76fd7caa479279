//! The plan: a resolved variant turned into the ordered steps a build runs, each with its
//! inputs, exact command lines, environment, outputs and fingerprint. `plan`, `build
//! --dry-run`, the JSON view and the executor (`execute/`) all read this one structure.
//!
//! The JSON form is documented in docs/plan-json.md; its version is
//! `ct2v_support::contracts::PLAN`, bumped on any change that could break a reader.

pub(crate) mod cache_key;
pub mod matrix;
pub mod outputs;
pub mod release_tag;
mod render;
pub mod request;
mod step_id;
mod steps;
pub(crate) mod unfilled;
pub mod verify_job;

use std::collections::BTreeMap;

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::variant::Resolved;
use ct2v_bundle::bundler::job::BundleJob;
use ct2v_support::platform::Platform;
pub use ct2v_support::process::CommandLine;
use ct2v_support::workspace::Workspace;

pub(crate) use outputs::Outputs;
pub(crate) use render::render_text;
pub(crate) use step_id::StepId;
pub(crate) use steps::SOURCE_INPUT;
pub use verify_job::VerifyJob;

pub(crate) const SCHEMA_VERSION: u32 = ct2v_support::contracts::PLAN;

#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub schema_version: u32,
    pub variant: String,
    /// The folder name under `target/xtask/` (see `Resolved::slot`).
    #[serde(skip)]
    pub slot: String,
    pub description: String,
    pub platform: Platform,
    pub python: String,
    pub ctranslate2: String,
    /// `from-source` or `repackage`.
    pub build: &'static str,
    /// Absolute paths below are under these two folders.
    pub root: String,
    pub cache_dir: String,
    pub work_dir: String,
    pub notes: Vec<String>,
    /// The GPU SDK the build needs (found on the machine when it runs), if any.
    pub sdk: Option<crate::variant::Sdk>,
    /// Windows source builds: the MSVC x64 environment their compiling steps run in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub msvc: Option<MsvcEnv>,
    /// CUDA builds: the requested `CUDA_ARCH_LIST`, turned into `{sdk.cuda-arch}` for the
    /// CUDA toolkit found when the build runs (see `cuda_arch.rs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cuda_arch: Option<String>,
    /// The PEP 440 local version label of the released wheels, as the variant writes it
    /// (`{sdk-major}` is filled at release time from the SDK the build found).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local_version: Option<String>,
    /// `Requires-Dist` lines of the bundled wheel, by the major version of the SDK: the
    /// executor gives the bundle job those of the SDK it found (`[bundle.requires-dist]`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub requires_dist: BTreeMap<String, Vec<String>>,
    pub inputs: Vec<PlannedInput>,
    /// The SDK's unattended installer (`cargo xtask install-sdk`): pinned with the inputs,
    /// never fetched by the build.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sdk_installer: Option<PlannedInput>,
    pub steps: Vec<Step>,
    /// What a successful build leaves in the output folder.
    pub artifacts: Vec<String>,
    /// The output folder and each product in it, by what it is.
    #[serde(skip)]
    pub outputs: Outputs,
}

/// Where a Windows build's compiler environment comes from (found when the build runs).
#[derive(Debug, Clone, Serialize)]
pub struct MsvcEnv {
    /// `x86_64-pc-windows-msvc`, `cl.exe`: what `cc::windows_registry::find_tool` is asked.
    pub target: String,
    pub tool: String,
    pub found_by: String,
    /// The variables it sets (before each step's own).
    pub vars: Vec<String>,
    /// The steps that run in it.
    pub steps: Vec<StepId>,
    pub(crate) if_missing: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct PlannedInput {
    pub name: String,
    pub url: String,
    pub file_name: String,
    pub sha256: Option<String>,
    pub size: Option<u64>,
    /// Where the verified download is kept; `None` until the input is pinned.
    pub(crate) cache_path: Option<String>,
    /// The Python package and version the file is (`rocm_sdk_core 7.2.0.dev0`), if one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    /// Its folder that `--sdk-dir` can stand in for (see `InputTable::sdk_folder`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sdk_folder: Option<String>,
    /// Where its sha256 came from, when not from `cargo xtask pin` (see `InputTable`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) pin_source: Option<String>,
    /// The PEP 503 index `pin` finds the wheel on (until then `url` is the project's page).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<Box<crate::variant::IndexedWheel>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Step {
    pub id: StepId,
    #[serde(flatten)]
    pub action: Action,
    pub description: String,
    /// Steps whose outputs this one reads.
    pub after: Vec<StepId>,
    pub inputs: Vec<String>,
    pub commands: Vec<CommandLine>,
    pub env: BTreeMap<String, String>,
    pub outputs: Vec<String>,
    /// sha256 over this step's definition (paths relative to the root and cache) and the
    /// fingerprints of the steps it comes after. The executor adds tool versions and file
    /// hashes that are only known when it runs.
    pub fingerprint: String,
}

/// What a step does. Steps with `commands` run them; the others are done by the tool itself.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Action {
    Fetch {
        inputs: Vec<String>,
    },
    Unpack {
        input: String,
        archive: String,
        subdir: Option<String>,
        dest: String,
        /// What `dest` must hold once unpacked (the input's `expect`).
        #[serde(skip_serializing_if = "Vec::is_empty")]
        expect: Vec<String>,
    },
    Clone {
        url: String,
        rev: String,
        dest: String,
    },
    /// A git tag's archive unpacked with every submodule's archive in its folder, each
    /// checked against its commit, then put in place whole (`inputs::assemble`).
    AssembleSource {
        tag: SourceArchive,
        submodules: Vec<SourceArchive>,
        dest: String,
    },
    Patch {
        series: String,
        patches: Vec<String>,
        tree: String,
    },
    Venv {
        requirements: String,
    },
    Configure {
        component: String,
    },
    Build {
        component: String,
    },
    Install {
        component: String,
    },
    /// The built DLLs copied into the package folder `pip wheel` packs (`package_data`).
    CopyDlls {
        files: Vec<String>,
        dest: String,
    },
    Wheel,
    /// The SDK's and the compiler runtime's folders are placeholders here (`unfilled`).
    Bundle(Box<BundleJob>),
    /// The step's commands are [`VerifyJob::commands`].
    Verify(Box<VerifyJob>),
    Checksum {
        dir: String,
        file: String,
    },
}

#[cfg(test)]
impl Plan {
    /// A Linux plan of `steps` only, for the tests of what runs them.
    pub(crate) fn of_steps(steps: Vec<Step>) -> Plan {
        Plan {
            schema_version: SCHEMA_VERSION,
            variant: "v".into(),
            slot: "v".into(),
            description: String::new(),
            platform: Platform::LinuxX86_64,
            python: "3.11".into(),
            ctranslate2: "4.7.1".into(),
            build: "from-source",
            root: "/r".into(),
            cache_dir: "/c".into(),
            work_dir: "/w".into(),
            notes: vec![],
            sdk: None,
            msvc: None,
            cuda_arch: None,
            local_version: None,
            requires_dist: BTreeMap::new(),
            inputs: vec![],
            sdk_installer: None,
            steps,
            artifacts: vec![],
            outputs: Outputs::default(),
        }
    }

    /// A Linux plan of one step, `id` doing `action`.
    pub(crate) fn of_step(id: StepId, action: Action) -> Plan {
        Plan::of_steps(vec![steps::step(id, action, "")])
    }
}

impl Plan {
    /// The first step whose action `pick` maps to a value, and that value: the one way to look
    /// up a step by what it does.
    pub(crate) fn find_action<'a, T>(
        &'a self,
        pick: impl FnMut(&'a Action) -> Option<T>,
    ) -> Option<T> {
        self.steps.iter().map(|s| &s.action).find_map(pick)
    }

    /// The first step whose action is one that `is` accepts.
    pub fn step(&self, is: impl Fn(&Action) -> bool) -> Option<&Step> {
        self.steps.iter().find(|s| is(&s.action))
    }

    /// The bundle step's job, if the plan bundles.
    pub fn bundle_job(&self) -> Option<&BundleJob> {
        self.find_action(|a| match a {
            Action::Bundle(b) => Some(b.as_ref()),
            _ => None,
        })
    }

    /// The requirements file of the plan's build-tools venv, if it has one.
    pub(crate) fn venv_requirements(&self) -> Option<std::path::PathBuf> {
        self.find_action(|a| match a {
            Action::Venv { requirements } => Some(std::path::PathBuf::from(requirements)),
            _ => None,
        })
    }
}

impl Action {
    pub fn kind(&self) -> &'static str {
        match self {
            Action::Fetch { .. } => "fetch",
            Action::Unpack { .. } => "unpack",
            Action::Clone { .. } => "clone",
            Action::AssembleSource { .. } => "assemble-source",
            Action::Patch { .. } => "patch",
            Action::Venv { .. } => "venv",
            Action::Configure { .. } => "configure",
            Action::Build { .. } => "build",
            Action::Install { .. } => "install",
            Action::CopyDlls { .. } => "copy-dlls",
            Action::Wheel => "wheel",
            Action::Bundle(_) => "bundle",
            Action::Verify(_) => "verify",
            Action::Checksum { .. } => "checksum",
        }
    }

    /// Steps that run in a Windows build's MSVC environment: those that compile, install or
    /// build the wheel.
    pub(crate) fn in_msvc_env(&self) -> bool {
        matches!(
            self,
            Action::Configure { .. }
                | Action::Build { .. }
                | Action::Install { .. }
                | Action::Wheel
        )
    }

    /// Steps that run a compiler.
    pub fn compiles(&self) -> bool {
        matches!(self, Action::Configure { .. } | Action::Build { .. })
    }
}

/// One archive of an `assemble-source` step.
#[derive(Debug, Clone, Serialize)]
pub struct SourceArchive {
    /// Where it goes in the tree ("" for the tag's archive).
    pub path: String,
    pub input: String,
    pub archive: String,
    /// Its top folder, the part unpacked.
    pub subdir: String,
    /// The commit its pax header must name.
    pub commit: String,
}

/// How the report names files from input `input` whose folder no `*.dist-info` names: the
/// variant's `package`, and the archive they came from (the community rocBLAS `.7z`).
pub(crate) fn input_label(inputs: &[PlannedInput], input: &str, package: &str) -> String {
    match inputs.iter().find(|i| i.name == input) {
        Some(i) => format!("{package}, from {}", i.file_name),
        None => package.to_string(),
    }
}

/// Builds the plan for a resolved variant.
pub fn plan(workspace: &Workspace, variant: &Resolved) -> Plan {
    let mut plan = steps::plan(workspace, variant);
    fingerprint(&mut plan);
    plan
}

/// Fills every step's fingerprint, in order, so each one covers those it comes after.
fn fingerprint(plan: &mut Plan) {
    let mut done: BTreeMap<StepId, String> = BTreeMap::new();
    for step in &mut plan.steps {
        step.fingerprint.clear();
        let json = serde_json::to_string(step).expect("steps serialize");
        let portable = json
            .replace(&plan.cache_dir, "$CACHE")
            .replace(&plan.root, "$ROOT");
        let mut hasher = Sha256::new();
        hasher.update(portable.as_bytes());
        for dep in &step.after {
            hasher.update(done[dep].as_bytes());
        }
        step.fingerprint = ct2v_fetch::cache::hex(&hasher.finalize());
        done.insert(step.id.clone(), step.fingerprint.clone());
    }
}
