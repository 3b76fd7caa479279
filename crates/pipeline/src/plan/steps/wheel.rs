//! The Python wheel of a source build: on Windows the built DLLs copied into the package
//! first, then `pip wheel` on CTranslate2's `python/` folder.

use std::collections::BTreeMap;

use super::native::Placeholders;
use super::{Layout, WheelIn, slash, step};
use crate::plan::{Action, CommandLine, Step, StepId};
use crate::variant::{OpenMpRuntime, Placeholder, Resolved};
use ct2v_support::platform::Platform;

/// The steps that make the wheel from the tree at `source_dir`, and the wheel they make.
pub(super) fn wheel_steps(
    p: &Placeholders,
    source_dir: &str,
    env: &BTreeMap<String, String>,
) -> (Vec<Step>, WheelIn) {
    let (layout, v) = (p.layout, p.v);
    let wheel_dir = layout.path(&format!("wheel/{}", layout.py()));
    let wheel = WheelIn {
        path: format!("{wheel_dir}/{}", built_wheel_name(v)),
        file_name: built_wheel_name(v),
    };
    let mut steps = Vec::new();
    let mut after = vec![StepId::install("ctranslate2"), StepId::VENV];
    if v.platform.is_windows() {
        steps.push(copy_dlls_step(p, source_dir));
        after.push(StepId::COPY_DLLS);
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
        .after(after)
        .reads([format!("{source_dir}/python"), layout.prefix("ctranslate2")])
        .runs(vec![CommandLine::new(layout.tool("python")).args([
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--wheel-dir",
            &wheel_dir,
            &format!("{source_dir}/python"),
        ])])
        .env(&wheel_env(layout, v, env))
        .writes([wheel.path.clone()]),
    );
    (steps, wheel)
}

/// The variant's environment, plus what setuptools needs to compile the extension.
fn wheel_env(
    layout: &Layout,
    v: &Resolved,
    env: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
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
    wheel_env
}

/// Windows: `python/setup.py` packs only `package_data={"ctranslate2": ["*.dll"]}`, so the
/// DLLs the build made must be in `python/ctranslate2/` before `pip wheel`, as upstream CI
/// copies them (OpenNMT/CTranslate2 v4.7.1 python/tools/prepare_build_environment_windows.sh:
/// `cp $CTRANSLATE2_ROOT/bin/ctranslate2.dll python/ctranslate2/`, then libiomp5md.dll).
fn copy_dlls_step(p: &Placeholders, source_dir: &str) -> Step {
    let mut files = vec![format!(
        "{}/bin/ctranslate2.dll",
        p.layout.prefix("ctranslate2")
    )];
    let mut after = vec![StepId::install("ctranslate2")];
    let openmp = &p.build.openmp;
    if openmp.runtime == OpenMpRuntime::Intel
        && let Some(input) = &openmp.input
    {
        files.push(format!(
            "{}/bin/libiomp5md.dll",
            p.value(Placeholder::OpenMpRoot)
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
            .map(|f| format!("{dest}/{}", ct2v_support::paths::last_segment(f))),
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
