//! Turning a resolved variant into steps. Reads like the shell script it replaces: fetch,
//! unpack, patch, tools venv, oneDNN, CTranslate2, wheel, bundle, verify, checksum.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{
    Action, BundleAction, Command, DataFiles, Plan, PlannedInput, SCHEMA_VERSION, SearchLocation,
    Step, StepId,
};
use crate::platform::Platform;
use crate::variant::{
    Build, LibrarySource, OpenMpRuntime, Output, Placeholder, Remote, Resolved, Sdk, SdkKind,
    Source, SourceBuild,
};
use crate::workspace::Workspace;

/// The name of the CTranslate2 source among the inputs.
pub const SOURCE_INPUT: &str = "ctranslate2-source";
/// The requirements file (with hashes) for the build-tools venv.
pub const BUILD_TOOLS: &str = "wheels/build-tools.txt";
/// The script the verify step runs inside a fresh venv.
pub const VERIFY_SCRIPT: &str = "xtask/python/verify_wheel.py";

/// Folders of one variant × platform × Python build.
struct Layout {
    root: PathBuf,
    cache: PathBuf,
    work: PathBuf,
    venv: PathBuf,
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
        slash(&crate::wheelhouse::dir(
            &self.cache,
            self.platform,
            &self.python,
        ))
    }

    /// Where a fetched input is kept (`cache::entry_path`).
    fn cached(&self, r: &Remote) -> String {
        match &r.sha256 {
            Some(sha) => slash(&crate::cache::entry_path(&self.cache, sha)),
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
fn step(id: StepId, action: Action, description: impl Into<String>) -> Step {
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

    fn runs(mut self, commands: Vec<Command>) -> Step {
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

pub fn plan(workspace: &Workspace, v: &Resolved) -> Plan {
    let layout = Layout {
        root: workspace.root.clone(),
        cache: workspace.cache_dir.clone(),
        work: workspace.work_dir(&v.slot, v.platform),
        venv: workspace.tools_venv(v.platform, &v.python),
        platform: v.platform,
        python: v.python.clone(),
        compiler_cache: v.compiler_cache.clone(),
    };
    let mut notes = v.notes.clone();
    if let Some(sdk) = &v.sdk
        && v.sdk_dir.is_none()
    {
        notes.push(sdk_note(sdk, v.platform));
    }
    notes.extend(sdk_dir_note(v));
    let (fetched, mut steps, wheel) = match &v.build {
        Build::FromSource(build) => from_source(&layout, v, build, &mut notes),
        Build::Repackage { archive, wheel } => repackage(&layout, v, archive, wheel),
    };
    steps.extend(finish(&layout, v, &wheel));
    let planned = |r: &Remote| PlannedInput {
        name: r.name.clone(),
        url: r.url.clone(),
        file_name: r.file_name().to_string(),
        sha256: r.sha256.clone(),
        size: r.size,
        cache_path: r.sha256.as_ref().map(|_| layout.cached(r)),
        package: r.package.clone(),
        sdk_folder: r.sdk_folder.clone(),
        pin_source: r.pin_source.clone(),
    };
    let inputs = fetched.iter().map(planned).collect();
    let sdk_installer = v
        .sdk
        .as_ref()
        .and_then(|sdk| sdk.installer.as_ref())
        .map(|installer| planned(&v.inputs[&installer.input]));
    if fetched.iter().any(|r| r.sha256.is_none()) {
        notes.push(format!(
            "some inputs are not pinned yet: `cargo xtask pin --variant {}` records their sha256 and size",
            v.name
        ));
    }
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
        inputs,
        sdk_installer,
        artifacts: artifacts(&layout, v, &wheel),
        steps,
    }
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

fn sdk_note(sdk: &Sdk, platform: Platform) -> String {
    let looked = match (sdk.kind, platform) {
        (SdkKind::Cuda, _) => "CUDA_PATH, CUDA_HOME, then nvcc on PATH",
        (SdkKind::Hip, Platform::WindowsX86_64) => {
            "every C:\\Program Files\\AMD\\ROCm\\<version> (HIP_PATH is checked, not trusted)"
        }
        (SdkKind::Hip, Platform::LinuxX86_64) => "--rocm-path, then /opt/rocm*",
    };
    let kind = match sdk.kind {
        SdkKind::Cuda => "CUDA toolkit",
        SdkKind::Hip => "HIP SDK",
    };
    format!(
        "{kind} {} is found when the build runs ({looked}); {{sdk.root}} below stands for it{}",
        sdk.version,
        match sdk.kind {
            SdkKind::Hip => " ({sdk.clang} for its clang's folder)",
            SdkKind::Cuda => "",
        }
    )
}

/// The name pip gives a wheel built from CTranslate2's `python/` folder.
fn built_wheel_name(v: &Resolved) -> String {
    let tag = format!("cp{}", v.python.replace('.', ""));
    let platform = match v.platform {
        Platform::LinuxX86_64 => "linux_x86_64",
        Platform::WindowsX86_64 => "win_amd64",
    };
    format!("ctranslate2-{}-{tag}-{tag}-{platform}.whl", v.ctranslate2)
}

/// The bundle's wheel: on Linux tagged with the manylinux policy it proves.
fn fat_wheel_name(v: &Resolved, wheel: &WheelIn) -> String {
    crate::bundle::manylinux::fat_wheel_name(&wheel.file_name, v.bundle.manylinux.as_deref())
}

/// Inputs the bundle step reads, in the order the variant lists them, less those that
/// `--sdk-dir` provides.
fn bundle_inputs(v: &Resolved) -> Vec<&Remote> {
    let mut names: Vec<&str> = Vec::new();
    let search = v.bundle.search.iter().map(|s| &s.from);
    for from in search.chain(v.bundle.data.iter().map(|d| &d.from)) {
        if let LibrarySource::Input(name) = from
            && !names.contains(&name.as_str())
            && sdk_provided(v, &v.inputs[name]).is_none()
        {
            names.push(name);
        }
    }
    names.iter().map(|n| &v.inputs[*n]).collect()
}

/// Where `--sdk-dir` has what input `r` would unpack: `(dir, sdk folder)`.
fn sdk_provided<'a>(v: &'a Resolved, r: &'a Remote) -> Option<(&'a Path, &'a str)> {
    Some((v.sdk_dir.as_deref()?, r.sdk_folder.as_deref()?))
}

/// A path inside an SDK input, found in `--sdk-dir` instead: unpacked wheels keep it as it
/// is (`dir/_rocm_sdk_core/bin`); an installed SDK has the sdk folder's contents at its
/// root (`dir/bin`). Returns the folder the path is relative to, and the path.
fn in_sdk_dir(dir: &Path, folder: &str, rel: &str) -> (String, String) {
    if dir.join(folder).is_dir() {
        return (slash(dir), rel.to_string());
    }
    let inside = rel
        .strip_prefix(folder)
        .map(|r| r.trim_start_matches('/'))
        .unwrap_or(rel);
    (slash(dir), inside.to_string())
}

fn sdk_dir_note(v: &Resolved) -> Option<String> {
    let dir = v.sdk_dir.as_deref()?;
    let provided: Vec<(&str, &str)> = v
        .inputs
        .values()
        .filter_map(|r| Some((r.name.as_str(), sdk_provided(v, r)?.1)))
        .collect();
    if provided.is_empty() {
        return Some(format!("the SDK is {} (--sdk-dir)", slash(dir)));
    }
    let layout = if provided.iter().all(|(_, folder)| dir.join(folder).is_dir()) {
        "unpacked SDK wheels"
    } else {
        "an installed SDK"
    };
    let names: Vec<&str> = provided.iter().map(|(name, _)| *name).collect();
    Some(format!(
        "{} not downloaded: their files come from {} (--sdk-dir, {layout})",
        names.join(", "),
        slash(dir)
    ))
}

fn fetch_step(fetched: &[Remote]) -> Step {
    step(
        StepId::FETCH,
        Action::Fetch {
            inputs: fetched.iter().map(|r| r.name.clone()).collect(),
        },
        format!(
            "Download {} input(s) into the cache and verify their pinned sha256 and size",
            fetched.len()
        ),
    )
    .reads(fetched.iter().map(|r| r.url.clone()))
}

fn unpack_step(layout: &Layout, r: &Remote) -> Step {
    let dest = layout.unpacked(&r.name);
    step(
        StepId::unpack(&r.name),
        Action::Unpack {
            input: r.name.clone(),
            archive: layout.cached(r),
            subdir: r.subdir.clone(),
            dest: dest.clone(),
            expect: r.expect.clone(),
        },
        format!("Unpack {} safely into place", r.file_name()),
    )
    .after([StepId::FETCH])
    .reads([layout.cached(r)])
    .writes([dest])
}

fn from_source(
    layout: &Layout,
    v: &Resolved,
    build: &SourceBuild,
    notes: &mut Vec<String>,
) -> (Vec<Remote>, Vec<Step>, WheelIn) {
    let mut fetched: Vec<Remote> = Vec::new();
    if let Source::Archive(remote) = &build.source {
        fetched.push(Remote {
            name: SOURCE_INPUT.to_string(),
            ..remote.clone()
        });
    }
    let onednn_input = build.onednn.as_ref().map(|o| v.inputs[&o.input].clone());
    let openmp_input = build.openmp.input.as_ref().map(|n| v.inputs[n].clone());
    let mkl_inputs: Vec<Remote> = build
        .mkl
        .iter()
        .flat_map(|m| [&m.input, &m.include_input])
        .map(|n| v.inputs[n].clone())
        .collect();
    for r in onednn_input.iter().chain(&openmp_input).chain(&mkl_inputs) {
        fetched.push(r.clone());
    }
    for r in bundle_inputs(v) {
        if !fetched.contains(r) {
            fetched.push(r.clone());
        }
    }

    let mut steps = Vec::new();
    if !fetched.is_empty() {
        steps.push(fetch_step(&fetched));
    }
    for r in &fetched {
        steps.push(unpack_step(layout, r));
    }

    // The CTranslate2 tree: unpacked, cloned, or used where it is.
    let mut tree_step = Some(StepId::unpack(SOURCE_INPUT));
    let source_dir = match &build.source {
        Source::Archive(_) => layout.src("ctranslate2"),
        Source::Git { url, rev } => {
            let dest = layout.src("ctranslate2");
            tree_step = Some(StepId::CLONE_SOURCE);
            steps.push(
                step(
                    StepId::CLONE_SOURCE,
                    Action::Clone {
                        url: url.clone(),
                        rev: rev.clone(),
                        dest: dest.clone(),
                    },
                    format!("Clone CTranslate2 at {rev} with its submodules"),
                )
                .runs(vec![
                    Command::new("git").args(["clone", "--no-checkout", url, &dest]),
                    Command::new("git").args(["-C", &dest, "checkout", "--detach", rev]),
                    Command::new("git").args([
                        "-C",
                        &dest,
                        "submodule",
                        "update",
                        "--init",
                        "--recursive",
                    ]),
                ])
                .writes([dest.clone()]),
            );
            dest
        }
        Source::Path { path } => {
            let given = slash(&layout.root.join(path));
            if build.patches.is_some() {
                // A patched tree is a copy: the user's own tree is never modified.
                let dest = layout.src("ctranslate2");
                steps.push(
                    step(
                        StepId::unpack(SOURCE_INPUT),
                        Action::Unpack {
                            input: SOURCE_INPUT.to_string(),
                            archive: given.clone(),
                            subdir: None,
                            dest: dest.clone(),
                            expect: Vec::new(),
                        },
                        "Copy the local CTranslate2 tree so that patches never touch it",
                    )
                    .reads([given])
                    .writes([dest.clone()]),
                );
                dest
            } else {
                tree_step = None;
                given
            }
        }
    };

    if let Some(series) = &build.patches {
        let patches: Vec<String> = series
            .patches
            .iter()
            .map(|p| slash(&layout.root.join(p)))
            .collect();
        steps.push(
            step(
                StepId::PATCH,
                Action::Patch {
                    series: slash(&layout.root.join(&series.path)),
                    patches: patches.clone(),
                    tree: source_dir.clone(),
                },
                format!(
                    "Apply {} patch(es) from {} (check first, all or nothing)",
                    patches.len(),
                    series.path.display()
                ),
            )
            .after(tree_step.clone())
            .reads(patches)
            .writes([source_dir.clone()]),
        );
        tree_step = Some(StepId::PATCH);
    }

    steps.push(venv_step(layout));

    let fill = |p: Placeholder| placeholder_value(layout, v, build, p);
    let expand = |options: &BTreeMap<String, String>| -> BTreeMap<String, String> {
        options
            .iter()
            .map(|(k, val)| (k.clone(), crate::variant::expand(val, &fill)))
            .collect()
    };
    let env: BTreeMap<String, String> = expand(&v.env);

    let mut ct2_after = vec![StepId::VENV];
    ct2_after.extend(tree_step);
    let mut ct2_options = expand(&build.cmake);
    if let Some(onednn) = &build.onednn {
        steps.extend(cmake_steps(
            layout,
            "onednn",
            "oneDNN",
            &layout.unpacked(&onednn.input),
            &expand(&onednn.cmake),
            &env,
            &[StepId::unpack(&onednn.input), StepId::VENV],
        ));
        ct2_after.push(StepId::install("onednn"));
        ct2_options
            .entry("CMAKE_PREFIX_PATH".to_string())
            .or_insert_with(|| layout.prefix("onednn"));
    }
    let runtime = match build.openmp.runtime {
        OpenMpRuntime::Comp => "COMP",
        OpenMpRuntime::Intel => "INTEL",
        OpenMpRuntime::None => "NONE",
    };
    ct2_options.insert("OPENMP_RUNTIME".to_string(), runtime.to_string());
    if let Some(input) = &build.openmp.input {
        ct2_options.insert("INTEL_ROOT".to_string(), fill(Placeholder::OpenMpRoot));
        ct2_after.push(StepId::unpack(input));
    }
    // CTranslate2's CMakeLists.txt finds include/mkl.h under MKL_ROOT and libmkl_core under
    // MKL_ROOT/lib; the two wheels unpack apart, so both folders are given.
    let within = |input: &str, sub: &Option<String>| match sub {
        Some(sub) => format!("{}/{sub}", layout.unpacked(input)),
        None => layout.unpacked(input),
    };
    ct2_options.insert(
        "WITH_MKL".to_string(),
        if build.mkl.is_some() { "ON" } else { "OFF" }.to_string(),
    );
    if let Some(mkl) = &build.mkl {
        ct2_options.insert("MKL_ROOT".to_string(), within(&mkl.input, &mkl.root));
        ct2_options.insert(
            "MKL_INCLUDE_DIR".to_string(),
            within(&mkl.include_input, &mkl.include),
        );
        for input in [&mkl.input, &mkl.include_input] {
            ct2_after.push(StepId::unpack(input));
        }
    }
    if build.cmake.get("WITH_CUDA").is_some_and(|v| v == "ON") && v.sdk.is_none() {
        notes.push("WITH_CUDA is ON but the variant has no [sdk] table".to_string());
    }
    steps.extend(cmake_steps(
        layout,
        "ctranslate2",
        "CTranslate2",
        &source_dir,
        &ct2_options,
        &env,
        &ct2_after,
    ));

    let wheel_dir = layout.path(&format!("wheel/{}", layout.py()));
    let wheel = WheelIn {
        path: format!("{wheel_dir}/{}", built_wheel_name(v)),
        file_name: built_wheel_name(v),
    };
    let mut wheel_after = vec![StepId::install("ctranslate2"), StepId::VENV];
    if v.platform.is_windows() {
        steps.push(copy_dlls_step(layout, build, &source_dir, &fill));
        wheel_after.push(StepId::COPY_DLLS);
    }
    let mut wheel_env = env.clone();
    wheel_env.insert("CTRANSLATE2_ROOT".to_string(), layout.prefix("ctranslate2"));
    if v.platform.is_windows() {
        // setuptools then compiles the extension with the cl of the environment it is given
        // (the MSVC environment below) instead of looking for a Visual Studio of its own
        // (setuptools/_distutils/_msvccompiler.py, `_get_vc_env`).
        wheel_env.insert("DISTUTILS_USE_SDK".to_string(), "1".to_string());
        wheel_env.insert("MSSdk".to_string(), "1".to_string());
    }
    // The extension is C++, which setuptools 80.9 (the pinned build tool) compiles with
    // Python's own CFLAGS, `-g` included, plus $CPPFLAGS appended; $CFLAGS would only replace
    // the flags of C sources (setuptools/_distutils/sysconfig.py, `customize_compiler`). So
    // CPPFLAGS: `-g0` drops the ~49 MiB of DWARF that `-g` put in _ext*.so (16 MB of a 31 MB
    // wheel), and the prefix map keeps the build folder out of the binary (BENCHMARKS.md).
    if !v.platform.is_windows() {
        wheel_env.insert(
            "CPPFLAGS".to_string(),
            format!("-g0 -ffile-prefix-map={}/=", slash(&layout.root)),
        );
    }
    // setuptools compiles the extension with $CC/$CXX: the compiler cache serves it too.
    if let (Some(cache), false) = (&layout.compiler_cache, v.platform.is_windows()) {
        wheel_env.insert("CC".to_string(), format!("{cache} cc"));
        wheel_env.insert("CXX".to_string(), format!("{cache} c++"));
    }
    steps.push(
        step(
            StepId::WHEEL,
            Action::Wheel,
            format!(
                "Build the Python {} wheel from CTranslate2's python/ folder",
                v.python
            ),
        )
        .after(wheel_after)
        .reads([format!("{source_dir}/python"), layout.prefix("ctranslate2")])
        .runs(vec![Command::new(layout.tool("python")).args([
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--wheel-dir",
            &wheel_dir,
            &format!("{source_dir}/python"),
        ])])
        .env(&wheel_env)
        .writes([wheel.path.clone()]),
    );
    (fetched, steps, wheel)
}

/// Windows: `python/setup.py` packs only `package_data={"ctranslate2": ["*.dll"]}`, so the
/// DLLs the build made must be in `python/ctranslate2/` before `pip wheel`, as upstream CI
/// copies them (OpenNMT/CTranslate2 v4.7.1 python/tools/prepare_build_environment_windows.sh:
/// `cp $CTRANSLATE2_ROOT/bin/ctranslate2.dll python/ctranslate2/`, then libiomp5md.dll).
fn copy_dlls_step(
    layout: &Layout,
    build: &SourceBuild,
    source_dir: &str,
    fill: &dyn Fn(Placeholder) -> String,
) -> Step {
    let mut files = vec![format!(
        "{}/bin/ctranslate2.dll",
        layout.prefix("ctranslate2")
    )];
    let mut after = vec![StepId::install("ctranslate2")];
    if build.openmp.runtime == OpenMpRuntime::Intel
        && let Some(input) = &build.openmp.input
    {
        files.push(format!(
            "{}/bin/libiomp5md.dll",
            fill(Placeholder::OpenMpRoot)
        ));
        after.push(StepId::unpack(input));
    }
    let dest = format!("{source_dir}/python/ctranslate2");
    step(
        StepId::COPY_DLLS,
        Action::CopyDlls {
            files: files.clone(),
            dest: dest.clone(),
        },
        "Copy the built DLLs into python/ctranslate2/, which the wheel packs (package_data *.dll)",
    )
    .after(after)
    .reads(files.clone())
    .writes(
        files
            .iter()
            .map(|f| format!("{dest}/{}", f.rsplit('/').next().unwrap_or(f))),
    )
}

fn placeholder_value(layout: &Layout, v: &Resolved, build: &SourceBuild, p: Placeholder) -> String {
    match p {
        Placeholder::Source => layout.src("ctranslate2"),
        Placeholder::Prefix => layout.prefix("ctranslate2"),
        Placeholder::OneDnnPrefix => layout.prefix("onednn"),
        Placeholder::OpenMpRoot => {
            let base = build
                .openmp
                .input
                .as_deref()
                .map_or_else(|| layout.path("deps/openmp"), |i| layout.unpacked(i));
            match &build.openmp.root {
                Some(sub) => format!("{base}/{sub}"),
                None => base,
            }
        }
        Placeholder::SdkRoot => "{sdk.root}".to_string(),
        Placeholder::SdkClang => "{sdk.clang}".to_string(),
        Placeholder::GpuTargets => v.gpu_targets.join(";"),
        // Filled for the CUDA toolkit found when the build runs (`cuda_arch.rs`).
        Placeholder::CudaArch => "{sdk.cuda-arch}".to_string(),
    }
}

fn venv_step(layout: &Layout) -> Step {
    let venv = slash(&layout.venv);
    let requirements = slash(&layout.root.join(BUILD_TOOLS));
    let launcher = layout.platform.python_launcher(&layout.python);
    step(
        StepId::VENV,
        Action::Venv {
            requirements: requirements.clone(),
        },
        format!(
            "Create the build-tools venv (Python {}) with pinned CMake, ninja, pybind11, setuptools, wheel",
            layout.python
        ),
    )
    .reads([requirements.clone()])
    .runs(vec![
        Command::new(&launcher[0]).args(launcher[1..].iter().cloned()).args(["-m", "venv", &venv]),
        Command::new(layout.tool("python")).args([
            "-m",
            "pip",
            "install",
            "--require-hashes",
            "--no-deps",
            "--find-links",
            &layout.wheelhouse(),
            "-r",
            &requirements,
        ]),
    ])
    .writes([venv])
}

fn cmake_steps(
    layout: &Layout,
    component: &str,
    title: &str,
    source: &str,
    options: &BTreeMap<String, String>,
    env: &BTreeMap<String, String>,
    after: &[StepId],
) -> Vec<Step> {
    let build = layout.build(component);
    let prefix = layout.prefix(component);
    let cmake = layout.tool("cmake");
    // `--fresh` (CMake 3.24+; the build venv pins 3.31): a configure runs only when its inputs
    // changed, and a kept CMakeCache.txt would keep what find_library found in the old inputs
    // (an MKL_ROOT of another MKL version left MKL_CORE_LIBRARY pointing at a removed folder).
    // ninja's own log still keeps every object whose command did not change.
    let mut configure = Command::new(&cmake)
        .arg("--fresh")
        .args(["-S", source, "-B", &build, "-G", "Ninja"])
        .arg(format!("-DCMAKE_MAKE_PROGRAM={}", layout.tool("ninja")))
        .arg("-DCMAKE_BUILD_TYPE=Release")
        .arg(format!("-DCMAKE_INSTALL_PREFIX={prefix}"))
        // GNUInstallDirs picks `lib64` on 64-bit Linux that is not Debian (the manylinux
        // image is AlmaLinux), and the bundle's search folders say `lib`: one layout everywhere.
        .arg("-DCMAKE_INSTALL_LIBDIR=lib");
    if let Some(launcher) = &layout.compiler_cache {
        let mut languages = vec!["C", "CXX"];
        if options.get("WITH_CUDA").is_some_and(|v| v == "ON") {
            languages.push("CUDA");
        }
        if options.get("WITH_HIP").is_some_and(|v| v == "ON") {
            languages.push("HIP");
        }
        for language in languages {
            configure = configure.arg(format!("-DCMAKE_{language}_COMPILER_LAUNCHER={launcher}"));
        }
    }
    let configure = configure.args(
        with_prefix_map(layout, options)
            .iter()
            .map(|(k, v)| format!("-D{k}={v}")),
    );
    vec![
        step(
            StepId::configure(component),
            Action::Configure {
                component: component.into(),
            },
            format!("Configure {title} with CMake (Ninja, Release)"),
        )
        .after(after.iter().cloned())
        .reads([source.to_string()])
        .runs(vec![configure])
        .env(env)
        .writes([format!("{build}/CMakeCache.txt")]),
        step(
            StepId::build(component),
            Action::Build {
                component: component.into(),
            },
            format!("Build {title}"),
        )
        .after([StepId::configure(component)])
        .runs(vec![
            Command::new(&cmake).args(["--build", &build, "--config", "Release"]),
        ])
        .env(env)
        .writes([build.clone()]),
        step(
            StepId::install(component),
            Action::Install {
                component: component.into(),
            },
            format!("Install {title} into its prefix"),
        )
        .after([StepId::build(component)])
        .runs(vec![Command::new(&cmake).args([
            "--install",
            &build,
            "--config",
            "Release",
        ])])
        .writes([prefix]),
    ]
}

fn repackage(
    layout: &Layout,
    v: &Resolved,
    archive: &Remote,
    member: &str,
) -> (Vec<Remote>, Vec<Step>, WheelIn) {
    let mut fetched = vec![archive.clone()];
    fetched.extend(bundle_inputs(v).into_iter().cloned());
    let mut steps = vec![fetch_step(&fetched)];
    steps.extend(fetched.iter().map(|r| unpack_step(layout, r)));
    let wheel = WheelIn {
        path: format!("{}/{member}", layout.unpacked(&archive.name)),
        file_name: member.rsplit('/').next().unwrap_or(member).to_string(),
    };
    (fetched, steps, wheel)
}

/// Bundle, verify and checksum: the same for every variant.
fn finish(layout: &Layout, v: &Resolved, wheel: &WheelIn) -> Vec<Step> {
    let dist = layout.dist();
    let fat_wheel = format!("{dist}/{}", fat_wheel_name(v, wheel));
    // The folder a source's path `rel` is relative to, where the plan knows it, and `rel`.
    let base = |from: &LibrarySource, rel: &str| {
        let base = match from {
            LibrarySource::Wheel => String::new(),
            LibrarySource::Prefix => layout.prefix("ctranslate2"),
            LibrarySource::Input(name) => match sdk_provided(v, &v.inputs[name]) {
                Some((dir, folder)) => return Some(in_sdk_dir(dir, folder, rel)),
                None => layout.unpacked(name),
            },
            LibrarySource::Toolchain | LibrarySource::Sdk => return None,
        };
        Some((base, rel.to_string()))
    };
    let join = |from: &LibrarySource, rel: &str| {
        base(from, rel).map(|(b, rel)| match (b.is_empty(), rel.is_empty()) {
            (true, _) => rel,
            (false, true) => b,
            (false, false) => format!("{b}/{rel}"),
        })
    };
    let mut destinations: Vec<String> = v.bundle.search.iter().map(|s| s.dest.clone()).collect();
    destinations.extend(v.bundle.data.iter().map(|d| d.dest.clone()));
    destinations.sort();
    destinations.dedup();
    let bundle = BundleAction {
        wheel: wheel.path.clone(),
        policy: v.bundle.policy,
        manylinux: v.bundle.manylinux.clone(),
        roots: v.bundle.roots.clone(),
        force: v.bundle.force.clone(),
        assume_present: v.bundle.assume_present.clone(),
        search: v
            .bundle
            .search
            .iter()
            .map(|s| {
                let input = match &s.from {
                    LibrarySource::Input(name) => v.inputs.get(name),
                    _ => None,
                };
                let package = input.and_then(|r| r.package.clone());
                SearchLocation {
                    from: s.from.clone(),
                    dir: s.dir.clone(),
                    dest: s.dest.clone(),
                    path: join(&s.from, &s.dir),
                    url: package.as_ref().and(input).map(|r| r.url.clone()),
                    package,
                }
            })
            .collect(),
        data: v
            .bundle
            .data
            .iter()
            .map(|d| {
                let (base, glob) = match base(&d.from, &d.glob) {
                    Some((base, glob)) => (Some(base), glob),
                    None => (None, d.glob.clone()),
                };
                let package = match &d.from {
                    LibrarySource::Input(name) => {
                        v.inputs.get(name).and_then(|r| r.package.clone())
                    }
                    _ => None,
                };
                DataFiles {
                    from: d.from.clone(),
                    glob,
                    dest: d.dest.clone(),
                    filter: d.filter,
                    base,
                    package,
                }
            })
            .collect(),
        gpu_targets: v.gpu_targets.clone(),
        produce: v.bundle.outputs.clone(),
        destinations,
        out: dist.clone(),
        patchelf: (matches!(v.build, Build::FromSource(_)) && !v.platform.is_windows())
            .then(|| layout.tool("patchelf")),
        requires_dist: v.bundle.requires_dist.clone(),
    };
    let mut bundle_after = vec![match &v.build {
        Build::FromSource(_) => StepId::WHEEL,
        Build::Repackage { archive, .. } => StepId::unpack(&archive.name),
    }];
    bundle_after.extend(bundle_inputs(v).iter().map(|r| StepId::unpack(&r.name)));

    let verify_venv = layout.path(&format!("verify/{}", layout.py()));
    let launcher = layout.platform.python_launcher(&layout.python);
    let verify_python = format!(
        "{verify_venv}/{}/{}",
        layout.platform.venv_bin(),
        layout.platform.exe("python")
    );
    let mut check = Command::new(&verify_python)
        .arg(slash(&layout.root.join(VERIFY_SCRIPT)))
        .args(["--version", &v.ctranslate2]);
    for (device, types) in &v.verify.compute_types {
        check = check.args(["--compute-types", &format!("{device}:{}", types.join(","))]);
    }

    vec![
        step(
            StepId::BUNDLE,
            Action::Bundle(bundle),
            "Find the minimum set of libraries the binaries load, place them, write the report",
        )
        .after(bundle_after)
        .reads([wheel.path.clone()])
        .writes(
            artifacts(layout, v, wheel)
                .into_iter()
                .filter(|a| !a.ends_with("SHA256SUMS")),
        ),
        step(
            StepId::VERIFY,
            Action::Verify,
            format!(
                "Install the wheel into a fresh Python {} venv and check it imports and works",
                v.python
            ),
        )
        .after([StepId::BUNDLE])
        .reads([fat_wheel.clone()])
        .env(&verify_env(v.platform))
        .runs(vec![
            Command::new(&launcher[0])
                .args(launcher[1..].iter().cloned())
                .args(["-m", "venv", "--clear", &verify_venv]),
            // What the wheel's setup.py requires, then the wheel itself without its
            // dependencies: those it declares for its GPU libraries ([bundle.requires-dist],
            // e.g. nvidia-cublas-cu12, ~600 MB) are the user's download, not this check's.
            Command::new(&verify_python)
                .args(["-m", "pip", "install", "--find-links", &layout.wheelhouse()])
                .args(crate::wheelhouse::RUNTIME_REQUIREMENTS),
            Command::new(&verify_python).args([
                "-m",
                "pip",
                "install",
                "--no-deps",
                "--find-links",
                &layout.wheelhouse(),
                &fat_wheel,
            ]),
            check,
        ]),
        step(
            StepId::CHECKSUM,
            Action::Checksum {
                dir: dist.clone(),
                file: "SHA256SUMS".to_string(),
            },
            "Write SHA256SUMS for the artifacts",
        )
        .after([StepId::BUNDLE, StepId::VERIFY])
        .reads([dist.clone()])
        .writes([format!("{dist}/SHA256SUMS")]),
    ]
}

/// gcc and clang record source paths (`__FILE__` in asserts and logs: oneDNN has ~130):
/// mapping the work folder away keeps this machine's paths out of the binaries, so builds
/// in different folders can match. MSVC builds are left as they are.
fn with_prefix_map(
    layout: &Layout,
    options: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut options = options.clone();
    if layout.platform.is_windows() {
        return options;
    }
    let map = format!("-ffile-prefix-map={}/=", slash(&layout.work));
    for key in ["CMAKE_C_FLAGS", "CMAKE_CXX_FLAGS"] {
        let flags = match options.get(key) {
            Some(existing) => format!("{map} {existing}"),
            None => map.clone(),
        };
        options.insert(key.to_string(), flags);
    }
    options
}

/// The wheel must work on its own: no library or module path from the build machine.
fn verify_env(platform: Platform) -> BTreeMap<String, String> {
    let mut env = BTreeMap::from([("PYTHONPATH".to_string(), String::new())]);
    if !platform.is_windows() {
        env.insert("LD_LIBRARY_PATH".to_string(), String::new());
    }
    env
}

fn artifacts(layout: &Layout, v: &Resolved, wheel: &WheelIn) -> Vec<String> {
    let dist = layout.dist();
    let mut out = Vec::new();
    for output in &v.bundle.outputs {
        match output {
            Output::FatWheel => out.push(format!("{dist}/{}", fat_wheel_name(v, wheel))),
            Output::Portable => {
                out.push(format!("{dist}/portable/_internal"));
                out.push(format!("{dist}/portable/binaries.json"));
                out.push(format!("{dist}/portable/hook-ctranslate2.py"));
            }
            Output::Report => {
                out.push(format!("{dist}/provenance.json"));
                out.push(format!("{dist}/provenance.md"));
            }
        }
    }
    out.push(format!("{dist}/SHA256SUMS"));
    out
}
