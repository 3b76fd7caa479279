//! The C++ build: the build-tools venv, then oneDNN (when the variant has it) and CTranslate2,
//! each configured, built and installed with CMake; and the `{placeholders}` of their options.

use std::collections::BTreeMap;

use super::source::SourceTree;
use super::{Layout, slash, step};
use crate::plan::{Action, CommandLine, Step, StepId};
use crate::variant::{OpenMpRuntime, Placeholder, Resolved, SourceBuild};

type Options = BTreeMap<String, String>;

/// What the variant's `{placeholders}` stand for in a source build.
pub(super) struct Placeholders<'a> {
    pub layout: &'a Layout,
    pub v: &'a Resolved,
    pub build: &'a SourceBuild,
}

impl Placeholders<'_> {
    pub(super) fn value(&self, p: Placeholder) -> String {
        let layout = self.layout;
        match p {
            Placeholder::Source => layout.src("ctranslate2"),
            Placeholder::Prefix => layout.prefix("ctranslate2"),
            Placeholder::OneDnnPrefix => layout.prefix("onednn"),
            Placeholder::OpenMpRoot => {
                let openmp = &self.build.openmp;
                let base = openmp
                    .input
                    .as_deref()
                    .map_or_else(|| layout.path("deps/openmp"), |i| layout.unpacked(i));
                match &openmp.root {
                    Some(sub) => format!("{base}/{sub}"),
                    None => base,
                }
            }
            Placeholder::SdkRoot => "{sdk.root}".to_string(),
            Placeholder::SdkClang => "{sdk.clang}".to_string(),
            Placeholder::GpuTargets => self.v.gpu_targets.join(";"),
            // Filled for the CUDA toolkit found when the build runs (`cuda_arch.rs`).
            Placeholder::CudaArch => "{sdk.cuda-arch}".to_string(),
        }
    }

    /// `options` with every value's placeholders filled in.
    pub(crate) fn expand(&self, options: &Options) -> Options {
        let fill = |p: Placeholder| self.value(p);
        options
            .iter()
            .map(|(k, val)| (k.clone(), crate::variant::expand(val, &fill)))
            .collect()
    }
}

pub(super) fn venv_step(layout: &Layout) -> Step {
    let venv = slash(&layout.venv);
    let requirements = slash(&layout.root.join(&layout.build_tools));
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
        CommandLine::new(&launcher[0]).args(launcher[1..].iter().cloned()).args(["-m", "venv", &venv]),
        CommandLine::new(layout.tool("python")).args([
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

/// oneDNN (when the variant builds it), then CTranslate2 with the options that point it at
/// oneDNN, the OpenMP runtime and MKL.
pub(super) fn native_steps(
    p: &Placeholders,
    tree: &SourceTree,
    env: &Options,
    notes: &mut Vec<String>,
) -> Vec<Step> {
    let (layout, build) = (p.layout, p.build);
    let mut steps = Vec::new();
    let mut after = vec![StepId::VENV];
    after.extend(tree.ready.clone());
    let mut options = p.expand(&build.cmake);
    if let Some(onednn) = &build.onednn {
        steps.extend(cmake_steps(
            layout,
            "onednn",
            "oneDNN",
            &layout.unpacked(&onednn.input),
            &p.expand(&onednn.cmake),
            env,
            &[StepId::unpack(&onednn.input), StepId::VENV],
        ));
        after.push(StepId::install("onednn"));
        options
            .entry("CMAKE_PREFIX_PATH".to_string())
            .or_insert_with(|| layout.prefix("onednn"));
    }
    after.extend(openmp_options(p, &mut options));
    after.extend(mkl_options(layout, build, &mut options));
    if build.cmake.get("WITH_CUDA").is_some_and(|v| v == "ON") && p.v.sdk.is_none() {
        notes.push("WITH_CUDA is ON but the variant has no [sdk] table".to_string());
    }
    steps.extend(cmake_steps(
        layout,
        "ctranslate2",
        "CTranslate2",
        &tree.dir,
        &options,
        env,
        &after,
    ));
    steps
}

/// CTranslate2's `OPENMP_RUNTIME`, and `INTEL_ROOT` where the runtime is an input; returns
/// the unpack step that input needs.
fn openmp_options(p: &Placeholders, options: &mut Options) -> Option<StepId> {
    let openmp = &p.build.openmp;
    let runtime = match openmp.runtime {
        OpenMpRuntime::Comp => "COMP",
        OpenMpRuntime::Intel => "INTEL",
        OpenMpRuntime::None => "NONE",
    };
    options.insert("OPENMP_RUNTIME".to_string(), runtime.to_string());
    let input = openmp.input.as_ref()?;
    options.insert("INTEL_ROOT".to_string(), p.value(Placeholder::OpenMpRoot));
    Some(StepId::unpack(input))
}

/// CTranslate2's `WITH_MKL`, and where MKL is; returns the unpack steps MKL's inputs need.
fn mkl_options(layout: &Layout, build: &SourceBuild, options: &mut Options) -> Vec<StepId> {
    options.insert(
        "WITH_MKL".to_string(),
        if build.mkl.is_some() { "ON" } else { "OFF" }.to_string(),
    );
    let Some(mkl) = &build.mkl else {
        return Vec::new();
    };
    // CTranslate2's CMakeLists.txt finds include/mkl.h under MKL_ROOT and libmkl_core under
    // MKL_ROOT/lib; the two wheels unpack apart, so both folders are given.
    let within = |input: &str, sub: &Option<String>| match sub {
        Some(sub) => format!("{}/{sub}", layout.unpacked(input)),
        None => layout.unpacked(input),
    };
    options.insert("MKL_ROOT".to_string(), within(&mkl.input, &mkl.root));
    options.insert(
        "MKL_INCLUDE_DIR".to_string(),
        within(&mkl.include_input, &mkl.include),
    );
    vec![
        StepId::unpack(&mkl.input),
        StepId::unpack(&mkl.include_input),
    ]
}

fn cmake_steps(
    layout: &Layout,
    component: &str,
    title: &str,
    source: &str,
    options: &Options,
    env: &Options,
    after: &[StepId],
) -> Vec<Step> {
    let build = layout.build(component);
    let prefix = layout.prefix(component);
    let cmake = layout.tool("cmake");
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
        .runs(vec![configure_command(
            layout, source, &build, &prefix, options,
        )])
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
            CommandLine::new(&cmake).args(["--build", &build, "--config", "Release"]),
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
        .runs(vec![CommandLine::new(&cmake).args([
            "--install",
            &build,
            "--config",
            "Release",
        ])])
        .writes([prefix]),
    ]
}

fn configure_command(
    layout: &Layout,
    source: &str,
    build: &str,
    prefix: &str,
    options: &Options,
) -> CommandLine {
    // `--fresh` (CMake 3.24+; the build venv pins 3.31): a configure runs only when its inputs
    // changed, and a kept CMakeCache.txt would keep what find_library found in the old inputs
    // (an MKL_ROOT of another MKL version left MKL_CORE_LIBRARY pointing at a removed folder).
    // ninja's own log still keeps every object whose command did not change.
    let mut configure = CommandLine::new(layout.tool("cmake"))
        .arg("--fresh")
        .args(["-S", source, "-B", build, "-G", "Ninja"])
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
    configure.args(
        with_prefix_map(layout, options)
            .iter()
            .map(|(k, v)| format!("-D{k}={v}")),
    )
}

/// gcc and clang record source paths (`__FILE__` in asserts and logs: oneDNN has ~130):
/// mapping the work folder away keeps this machine's paths out of the binaries, so builds
/// in different folders can match. MSVC builds are left as they are.
fn with_prefix_map(layout: &Layout, options: &Options) -> Options {
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
