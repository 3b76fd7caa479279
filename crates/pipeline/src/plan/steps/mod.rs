//! Turning a resolved variant into steps. Reads like the shell script it replaces; the
//! stages, in the order a build runs them:
//!
//! 1. `inputs.rs`: download every input into the cache (`fetch`) and unpack each
//!    (`unpack-<input>`).
//! 2. `source.rs`: the CTranslate2 tree, cloned (`clone-ctranslate2`), copied or used where it
//!    is, then patched (`patch`).
//! 3. `native.rs`: the build-tools venv (`venv`), then oneDNN and CTranslate2 configured,
//!    built and installed with CMake (`configure-`, `build-`, `install-<component>`).
//! 4. `wheel.rs`: on Windows the DLLs copied into the package (`copy-dlls`), then `pip wheel`
//!    (`wheel`).
//! 5. `finish.rs`: `bundle`, `verify`, `checksum`.
//!
//! A repackaged variant has stages 1 and 5 only. This file: the folders of a build, the step
//! builder, and the plan put together.

mod finish;
mod inputs;
mod native;
mod source;
mod wheel;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::outputs::Outputs;
use super::{Action, CommandLine, Plan, SCHEMA_VERSION, Step, StepId};
use crate::variant::{Build, Input, Resolved, Sdk, SdkKind, SourceBuild};
use ct2v_support::platform::Platform;
use ct2v_support::workspace::Workspace;

/// The name of the CTranslate2 source among the inputs.
pub(crate) const SOURCE_INPUT: &str = "ctranslate2-source";
/// The script the verify step runs inside a fresh venv.
pub(crate) const VERIFY_SCRIPT: &str = "crates/pipeline/python/verify_wheel.py";

/// Folders of one variant × platform × Python build.
struct Layout {
    root: PathBuf,
    cache: PathBuf,
    work: PathBuf,
    venv: PathBuf,
    /// The venv's requirements, relative to `root`.
    build_tools: String,
    platform: Platform,
    python: String,
    compiler_cache: Option<String>,
}

impl Layout {
    fn path(&self, relative: &str) -> String {
        slash(&self.work.join(relative))
    }

    fn py(&self) -> String {
        format!("py{}", self.python)
    }

    fn src(&self, component: &str) -> String {
        self.path(&format!("src/{component}"))
    }

    fn build(&self, component: &str) -> String {
        self.path(&format!("build/{component}"))
    }

    fn prefix(&self, component: &str) -> String {
        self.path(&format!("prefix/{component}"))
    }

    fn unpacked(&self, input: &str) -> String {
        match input {
            SOURCE_INPUT => self.src("ctranslate2"),
            _ => self.path(&format!("deps/{input}")),
        }
    }

    fn dist(&self) -> String {
        self.path(&format!("dist/{}", self.py()))
    }

    /// Wheels `fetch` downloads for the venv and verify steps, so `build --offline` works
    /// from a copied cache (see `wheelhouse.rs`).
    fn wheelhouse(&self) -> String {
        slash(&ct2v_fetch::wheelhouse::dir(
            &self.cache,
            self.platform,
            &self.python,
        ))
    }

    /// Where a fetched input is kept (`cache::entry_path`).
    fn cached(&self, r: &Input) -> String {
        match &r.sha256 {
            Some(sha) => slash(&ct2v_fetch::cache::entry_path(&self.cache, sha)),
            None => slash(&self.cache.join("unpinned").join(r.file_name())),
        }
    }

    fn tool(&self, name: &str) -> String {
        slash(
            &self
                .venv
                .join(self.platform.venv_bin())
                .join(self.platform.exe(name)),
        )
    }
}

/// The wheel the bundle step starts from: its path, and the name the output keeps.
struct WheelIn {
    path: String,
    file_name: String,
}

fn slash(path: &Path) -> String {
    path.display().to_string().replace('\\', "/")
}

/// One step being written; `fingerprint` is filled in once the plan is complete.
pub(super) fn step(id: StepId, action: Action, description: impl Into<String>) -> Step {
    Step {
        id,
        action,
        description: description.into(),
        after: Vec::new(),
        inputs: Vec::new(),
        commands: Vec::new(),
        env: BTreeMap::new(),
        outputs: Vec::new(),
        fingerprint: String::new(),
    }
}

impl Step {
    fn after<I: IntoIterator<Item = StepId>>(mut self, ids: I) -> Step {
        self.after.extend(ids);
        self
    }

    fn reads<I: IntoIterator<Item = String>>(mut self, inputs: I) -> Step {
        self.inputs.extend(inputs);
        self
    }

    fn runs(mut self, commands: Vec<CommandLine>) -> Step {
        self.commands = commands;
        self
    }

    fn env(mut self, env: &BTreeMap<String, String>) -> Step {
        self.env.extend(env.clone());
        self
    }

    fn writes<I: IntoIterator<Item = String>>(mut self, outputs: I) -> Step {
        self.outputs.extend(outputs);
        self
    }
}

pub(super) fn plan(workspace: &Workspace, v: &Resolved) -> Plan {
    let layout = Layout {
        root: workspace.root.clone(),
        cache: workspace.cache_dir.clone(),
        work: workspace.work_dir(&v.slot, v.platform),
        venv: workspace.tools_venv(v.platform, &v.python, &v.build_tools),
        build_tools: v.build_tools.clone(),
        platform: v.platform,
        python: v.python.clone(),
        compiler_cache: v.compiler_cache.clone(),
    };
    let mut notes = v.notes.clone();
    if let Some(sdk) = &v.sdk
        && v.sdk_dir.is_none()
    {
        notes.push(sdk_note(sdk, v));
    }
    notes.extend(inputs::sdk_dir_note(v));
    let (fetched, mut steps, wheel) = match &v.build {
        Build::FromSource(build) => from_source(&layout, v, build, &mut notes),
        Build::Repackage { archive, wheel } => repackage(&layout, v, archive, wheel),
    };
    let outputs = Outputs::new(
        layout.dist(),
        wheel.path.clone(),
        &finish::fat_wheel_name(v, &wheel),
        &v.bundle.outputs,
    );
    let planned: Vec<_> = fetched
        .iter()
        .map(|r| inputs::planned(&layout, r))
        .collect();
    steps.extend(finish::finish(&layout, v, &outputs, &planned));
    notes.extend(inputs::unpinned_note(v, &fetched));
    Plan {
        schema_version: SCHEMA_VERSION,
        variant: v.name.clone(),
        slot: v.slot.clone(),
        description: v.description.clone(),
        platform: v.platform,
        python: v.python.clone(),
        ctranslate2: v.ctranslate2.clone(),
        build: match v.build {
            Build::FromSource(_) => "from-source",
            Build::Repackage { .. } => "repackage",
        },
        root: slash(&workspace.root),
        cache_dir: slash(&workspace.cache_dir),
        work_dir: slash(&layout.work),
        notes,
        sdk: v.sdk.clone(),
        msvc: msvc_env(v, &steps),
        cuda_arch: v.cuda_arch.clone(),
        local_version: v.local_version.clone(),
        requires_dist: v.bundle.requires_dist.clone(),
        inputs: planned,
        sdk_installer: inputs::sdk_installer(&layout, v),
        artifacts: outputs.artifacts(&v.bundle.outputs),
        outputs,
        steps,
    }
}

/// Everything up to the wheel: inputs, the source tree, the C++ build, `pip wheel`.
fn from_source(
    layout: &Layout,
    v: &Resolved,
    build: &SourceBuild,
    notes: &mut Vec<String>,
) -> (Vec<Input>, Vec<Step>, WheelIn) {
    let fetched = inputs::source_build_inputs(v, build);
    let assembled = source::assembled_inputs(build);
    let mut steps = inputs::fetch_and_unpack(layout, &fetched, &assembled);
    let (tree, tree_steps) = source::source_tree(layout, build);
    steps.extend(tree_steps);
    steps.push(native::venv_step(layout));
    let placeholders = native::Placeholders { layout, v, build };
    let env = placeholders.expand(&v.env);
    steps.extend(native::native_steps(&placeholders, &tree, &env, notes));
    let (wheel_steps, wheel) = wheel::wheel_steps(&placeholders, &tree.dir, &env);
    steps.extend(wheel_steps);
    (fetched, steps, wheel)
}

/// The upstream wheel, taken from its archive: only the inputs to fetch and unpack.
fn repackage(
    layout: &Layout,
    v: &Resolved,
    archive: &Input,
    member: &str,
) -> (Vec<Input>, Vec<Step>, WheelIn) {
    let fetched = inputs::repackage_inputs(v, archive);
    let steps = inputs::fetch_and_unpack(layout, &fetched, &[]);
    let wheel = WheelIn {
        path: format!("{}/{member}", layout.unpacked(&archive.name)),
        file_name: ct2v_support::paths::last_segment(member).to_string(),
    };
    (fetched, steps, wheel)
}

/// Windows source builds compile in the MSVC x64 environment (`msvc.rs`).
fn msvc_env(v: &Resolved, steps: &[Step]) -> Option<super::MsvcEnv> {
    if !v.platform.is_windows() || !matches!(v.build, Build::FromSource(_)) {
        return None;
    }
    Some(super::MsvcEnv {
        target: crate::sdk::msvc::TARGET.to_string(),
        tool: crate::sdk::msvc::TOOL.to_string(),
        found_by: crate::sdk::msvc::SOURCE.to_string(),
        vars: crate::sdk::msvc::VARS
            .iter()
            .map(|v| v.to_string())
            .collect(),
        steps: steps
            .iter()
            .filter(|s| s.action.in_msvc_env())
            .map(|s| s.id.clone())
            .collect(),
        if_missing: crate::sdk::msvc::INSTALL_HINT.to_string(),
    })
}

fn sdk_note(sdk: &Sdk, v: &Resolved) -> String {
    let platform = v.platform;
    let kind = match sdk.kind {
        SdkKind::Cuda => "CUDA toolkit",
        SdkKind::Hip => "HIP SDK",
    };
    // An SDK published only as pip wheels (ROCm 10: no installer exists) is the devel
    // wheel's tree, which the build is given, never one it finds installed.
    if let Some((index, requirement)) = &sdk.pip {
        return format!(
            "{kind} {} is the tree of its devel wheel, given with --sdk-dir (or CT2V_SDK_DIR): \
             pip install --index-url {index} \"{requirement}\" into a venv, then --sdk-dir \
             \"$(rocm-sdk path --root)\"; no installer of it exists. {{sdk.root}} below stands \
             for it ({{sdk.clang}} for its clang's folder)",
            sdk.version
        );
    }
    let looked = match (sdk.kind, platform) {
        (SdkKind::Cuda, _) => "CUDA_PATH, CUDA_HOME, then nvcc on PATH",
        (SdkKind::Hip, Platform::WindowsX86_64) => {
            "every C:\\Program Files\\AMD\\ROCm\\<version> (HIP_PATH is checked, not trusted)"
        }
        (SdkKind::Hip, Platform::LinuxX86_64) => "--rocm-path, then /opt/rocm*",
    };
    let (which, labelled) = match sdk.kind {
        SdkKind::Cuda => cuda_majors(sdk, v),
        SdkKind::Hip => (sdk.version.clone(), String::new()),
    };
    format!(
        "{kind} {which} is found when the build runs ({looked}){labelled}; {{sdk.root}} below \
         stands for it{}",
        match sdk.kind {
            SdkKind::Hip => " ({sdk.clang} for its clang's folder)",
            SdkKind::Cuda => "",
        }
    )
}

/// The CUDA majors a build of `v` takes, in words ("12 or 13": those its
/// `[bundle.requires-dist]` names from its `[sdk]` version up; "12 or newer" when it names
/// none), and how the wheel is labelled by the one found (", the wheel labelled cu12, cu13").
fn cuda_majors(sdk: &Sdk, v: &Resolved) -> (String, String) {
    let floor = crate::variant::sdk_major(&sdk.version).and_then(|m| m.parse().ok());
    let majors = floor.map_or_else(Vec::new, |floor| {
        crate::variant::declared_majors(floor, &v.bundle.requires_dist)
    });
    let Some((last, first)) = majors.split_last() else {
        return (format!("{} or newer", sdk.version), String::new());
    };
    let which = match first {
        [] => last.to_string(),
        _ => {
            let first: Vec<String> = first.iter().map(u32::to_string).collect();
            format!("{} or {last}", first.join(", "))
        }
    };
    let labelled = match &v.local_version {
        Some(label) if label.contains(crate::variant::SDK_MAJOR) => {
            let labels: Vec<String> = majors
                .iter()
                .map(|m| label.replace(crate::variant::SDK_MAJOR, &m.to_string()))
                .collect();
            format!(", the wheel labelled by its major ({})", labels.join(", "))
        }
        _ => String::new(),
    };
    (which, labelled)
}
