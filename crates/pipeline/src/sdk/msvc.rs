//! The MSVC x64 developer environment every compiling step of a Windows build runs in.
//!
//! CMake with `-G Ninja` takes the first compiler on PATH, and from a plain PowerShell there
//! is none (upstream CI uses the Visual Studio generator instead, which finds MSVC itself).
//! So the tool finds MSVC the way the `cc` crate does (`cc::windows_registry::find_tool`,
//! from the find-msvc-tools crate): inside a developer prompt (`VCINSTALLDIR` set, x64
//! target) the prompt's own environment is used as it is; otherwise the newest Visual
//! Studio 2017+ instance with the x64 tools (the VS setup configuration), then the registry,
//! and the tool comes with the `PATH`, `INCLUDE` and `LIB` that make it work (each the
//! toolchain's folders, then the current value). [`step_env`] merges that into a step's own
//! environment; it is pure, so it is tested here with a fake toolchain.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

/// What `find_tool` is asked for.
pub(crate) const TARGET: &str = "x86_64-pc-windows-msvc";
pub(crate) const TOOL: &str = "cl.exe";
/// The variables `find_tool` fills (find-msvc-tools 0.1, `MsvcTool::into_tool`).
pub(crate) const VARS: [&str; 3] = ["PATH", "INCLUDE", "LIB"];
/// How the plan describes the source of the environment (the plan is also made on Linux).
pub(crate) const SOURCE: &str = "cc::windows_registry::find_tool(\"x86_64-pc-windows-msvc\", \"cl.exe\") when the build runs: a developer prompt's environment (VCINSTALLDIR set, x64 target) as it is, else the newest Visual Studio 2017+ with the x64 C++ tools (VS setup configuration, then the registry), whose PATH, INCLUDE and LIB go before the current ones";
/// The next step when there is no x64 MSVC.
pub(crate) const INSTALL_HINT: &str = "install Visual Studio Build Tools 2022 or newer with the workload \"Desktop development with C++\" (it includes the MSVC x64/x86 build tools and a Windows SDK): winget install Microsoft.VisualStudio.2022.BuildTools --override \"--add Microsoft.VisualStudio.Workload.VCTools --includeRecommended --passive\"";

/// What `find_tool` gave: the compiler and the variables it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toolchain {
    pub cl: PathBuf,
    pub env: Vec<(String, String)>,
}

impl Toolchain {
    /// Where the environment came from, for the build log and build-info.json.
    pub fn how(&self) -> String {
        if self.env.is_empty() {
            format!("the developer prompt's environment ({})", self.cl.display())
        } else {
            format!("found by the cc crate ({})", self.cl.display())
        }
    }
}

/// Finds the x64 MSVC on this machine (Windows only), or says how to install it.
pub fn find() -> Result<Toolchain> {
    let found = if cfg!(windows) {
        cc::windows_registry::find_tool(TARGET, TOOL).map(|tool| Toolchain {
            cl: tool.path().to_path_buf(),
            env: tool
                .get_envs()
                .map(|(k, v)| {
                    (
                        k.to_string_lossy().into_owned(),
                        v.to_string_lossy().into_owned(),
                    )
                })
                .collect(),
        })
    } else {
        None
    };
    match found {
        Some(toolchain) => {
            check_x64(&toolchain.cl)?;
            Ok(toolchain)
        }
        None if !cfg!(windows) => {
            bail!("MSVC is only found on Windows; this Windows build step must run there")
        }
        None => bail!(
            "no MSVC C++ compiler for x64 found (looked the way the cc crate does: \
             VCINSTALLDIR of a developer prompt, Visual Studio 2017+ instances, the \
             registry)\n  = {INSTALL_HINT}"
        ),
    }
}

/// `…\bin\Hostx64\x64\cl.exe` builds x64 binaries; `…\bin\Hostx64\x86\cl.exe` (a 32-bit
/// developer prompt) does not: the folder holding cl.exe names its target.
pub(crate) fn check_x64(cl: &Path) -> Result<()> {
    // Split by hand: the path is a Windows one even where the tests run on Linux.
    let text = cl.to_string_lossy().to_lowercase();
    let target = text.split(['\\', '/']).rev().nth(1);
    match target {
        Some("x64") | Some("amd64") => Ok(()),
        _ => bail!(
            "{} does not build x64 binaries (only a 32-bit toolchain was found); the wheels \
             are win_amd64\n  = start from a plain PowerShell or an \"x64 Native Tools\" \
             prompt, and if that still fails, {INSTALL_HINT}",
            cl.display()
        ),
    }
}

/// The environment a step runs with: the toolchain's variables, then the step's own. A
/// step's `PATH`, `INCLUDE` or `LIB` (e.g. the HIP SDK's bin) goes before the toolchain's
/// folders, as the maintainers' scripts `set PATH=%ROCM%\bin;%PATH%` after vcvars64.
/// Windows variable names ignore case (`Path` is `PATH`).
pub(crate) fn step_env(
    toolchain: &Toolchain,
    step: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = toolchain
        .env
        .iter()
        .map(|(k, v)| (k.to_uppercase(), v.clone()))
        .collect();
    for (key, value) in step {
        let upper = key.to_uppercase();
        match env.get(&upper) {
            Some(toolchain_value) if VARS.contains(&upper.as_str()) => {
                let joined = format!("{value};{toolchain_value}");
                env.insert(upper, joined);
            }
            _ => {
                env.remove(&upper);
                env.insert(key.clone(), value.clone());
            }
        }
    }
    env
}

/// `cl` with no arguments prints its banner on stderr ("Microsoft (R) C/C++ Optimizing
/// Compiler Version 19.44.35207 for x64"); it has no `--version`.
pub(crate) fn banner(toolchain: &Toolchain) -> String {
    ct2v_support::process::capture_with_env(&toolchain.cl, [] as [&str; 0], &toolchain.env)
        .ok()
        .and_then(|o| {
            o.stderr
                .lines()
                .find(|l| !l.trim().is_empty())
                .map(|l| l.trim().to_string())
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    const VC: &str = r"C:\BuildTools\VC\Tools\MSVC\14.44.35207";

    fn fake() -> Toolchain {
        Toolchain {
            cl: PathBuf::from(format!(r"{VC}\bin\HostX64\x64\cl.exe")),
            env: vec![
                (
                    "LIB".into(),
                    format!(r"{VC}\lib\x64;C:\Kits\10\lib\ucrt\x64"),
                ),
                (
                    "PATH".into(),
                    format!(r"{VC}\bin\HostX64\x64;C:\Windows\system32"),
                ),
                ("INCLUDE".into(), format!(r"{VC}\include")),
            ],
        }
    }

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn the_toolchain_variables_reach_a_step_without_its_own() {
        let env = step_env(&fake(), &map(&[("CTRANSLATE2_ROOT", "C:/w/prefix")]));
        assert_eq!(
            env.keys().collect::<Vec<_>>(),
            ["CTRANSLATE2_ROOT", "INCLUDE", "LIB", "PATH"]
        );
        assert_eq!(
            env["PATH"],
            format!(r"{VC}\bin\HostX64\x64;C:\Windows\system32")
        );
        assert_eq!(env["CTRANSLATE2_ROOT"], "C:/w/prefix");
    }

    #[test]
    fn a_step_path_goes_first_whatever_its_case() {
        let env = step_env(
            &fake(),
            &map(&[("Path", "C:/ROCm/6.2/bin"), ("HIP_PLATFORM", "amd")]),
        );
        assert_eq!(
            env["PATH"],
            format!(r"C:/ROCm/6.2/bin;{VC}\bin\HostX64\x64;C:\Windows\system32")
        );
        assert!(!env.contains_key("Path"));
        assert_eq!(env["HIP_PLATFORM"], "amd");
    }

    #[test]
    fn a_developer_prompt_adds_nothing() {
        let prompt = Toolchain {
            env: Vec::new(),
            ..fake()
        };
        let step = map(&[("PATH", "C:/x")]);
        assert_eq!(step_env(&prompt, &step), step);
        assert!(prompt.how().starts_with("the developer prompt's"));
        assert!(fake().how().starts_with("found by the cc crate"));
    }

    #[test]
    fn only_an_x64_compiler_is_taken() {
        assert!(check_x64(&fake().cl).is_ok());
        let x86 = PathBuf::from(format!(r"{VC}\bin\Hostx86\x86\cl.exe"));
        let err = format!("{:#}", check_x64(&x86).unwrap_err());
        assert!(err.contains("only a 32-bit toolchain"), "{err}");
        assert!(err.contains("Desktop development with C++"), "{err}");
    }

    #[cfg(not(windows))]
    #[test]
    fn elsewhere_than_windows_find_says_so() {
        let err = find().unwrap_err().to_string();
        assert!(err.contains("only found on Windows"), "{err}");
    }
}
