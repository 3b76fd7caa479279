//! What the doctor looks at on this machine: the OS, the build tools, the CUDA toolkit, the
//! GPUs the vendors' tools report, and every HIP SDK install.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::hip_runtime::{self, HipRuntimeChoice};
use super::parse::{self, AmdGpu, NvidiaGpu};
use crate::sdk::hip::{self, HipInstall};
use ct2v_support::host;
use ct2v_support::process::{Limits, Probed, probe_each};

#[derive(Debug, Clone, Serialize)]
pub struct Tool {
    pub name: String,
    /// Where it is, or `None` when not found.
    pub path: Option<PathBuf>,
    /// The first line of its version output.
    pub version: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CudaToolkit {
    pub root: PathBuf,
    pub version: String,
    pub how: String,
}

/// A HIP runtime in the system folder, and its file version when it carries one.
#[derive(Debug, Clone, Serialize)]
pub struct DriverRuntime {
    pub path: PathBuf,
    pub version: Option<[u16; 4]>,
}

impl DriverRuntime {
    /// `System32\<name>` under `system_root` (`%SystemRoot%`), if it is there.
    pub fn find(system_root: &Path, name: &str) -> Option<DriverRuntime> {
        DriverRuntime::at(&system_root.join("System32").join(name))
            // wine and case-sensitive copies spell it `system32`.
            .or_else(|| DriverRuntime::at(&system_root.join("system32").join(name)))
    }

    /// The runtime at `path`, if a file is there. Its version is read from the file's own
    /// bytes (`binary::version`), not through GetFileVersionInfoW, which can return stale
    /// data for a path in System32 (lemonade-sdk/lemonade#3213).
    pub fn at(path: &Path) -> Option<DriverRuntime> {
        if !path.is_file() {
            return None;
        }
        let version = ct2v_bundle::binary::version::file_version(path)
            .ok()
            .flatten();
        Some(DriverRuntime {
            path: path.to_path_buf(),
            version,
        })
    }

    /// `6.4.43482.7`, or that it carries none.
    pub(crate) fn version_text(&self) -> String {
        self.version.map_or("no file version".to_string(), |v| {
            format!("{}.{}.{}.{}", v[0], v[1], v[2], v[3])
        })
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Facts {
    pub os: String,
    pub arch: String,
    pub tools: Vec<Tool>,
    pub cuda_toolkit: Option<CudaToolkit>,
    pub nvidia_gpus: Vec<NvidiaGpu>,
    /// The newest CUDA the NVIDIA driver supports (`nvidia-smi`'s header).
    pub nvidia_driver_cuda: Option<String>,
    pub amd_gpus: Vec<AmdGpu>,
    /// Which tool named the AMD GPUs (`rocminfo`, `hipinfo`, or the card's name).
    pub amd_gpus_from: Option<String>,
    /// Whether the HIP installs are laid out the Windows way (DLLs in `bin\`).
    pub windows_layout: bool,
    pub hip_installs: Vec<HipInstall>,
    pub hip_path: Option<PathBuf>,
    /// Windows: the HIP 6 runtime the display driver installed (`System32\amdhip64_6.dll`),
    /// which the rocm-gfx1010 wheel uses rather than bundling one.
    pub driver_hip_runtime: Option<DriverRuntime>,
    /// Windows: the HIP 7 runtime an installed ROCm 10 family wheel loads, its own or the
    /// display driver's (`hip_runtime`); `None` when no site-packages was named.
    pub hip7_runtime: Option<HipRuntimeChoice>,
    /// Windows: `LongPathsEnabled` (None elsewhere), and the line that says it.
    pub long_paths: Option<bool>,
    pub long_paths_said: Option<String>,
    /// A tool that did not answer in time, printed too much or left a process behind, and
    /// what was not read because of it: one sentence each.
    pub tool_problems: Vec<String>,
}

/// `probe`'s stdout, or `None`; its problem, if any, is said with `skipped` (what was not
/// read because of it) when its output is unusable.
fn answer(probe: &Probed, skipped: &str, problems: &mut Vec<String>) -> Option<String> {
    let out = probe.stdout().map(str::to_string);
    if let Some(problem) = probe.problem() {
        problems.push(match out {
            Some(_) => problem,
            None => format!("{problem}; {skipped}"),
        });
    }
    out
}

/// The build tools on PATH and the first line of each one's version, all asked at once.
fn tools(problems: &mut Vec<String>) -> Vec<Tool> {
    let python = if cfg!(windows) { "python" } else { "python3" };
    let found: Vec<(&str, Option<PathBuf>)> = ["gcc", "clang", "cmake", "ninja", python]
        .into_iter()
        .map(|name| (name, host::which(name)))
        .collect();
    let asked: Vec<(PathBuf, Vec<&str>)> = found
        .iter()
        .filter_map(|(_, path)| Some((path.clone()?, vec!["--version"])))
        .collect();
    let mut answers = probe_each(&asked, Limits::probe()).into_iter();
    found
        .into_iter()
        .map(|(name, path)| {
            let version = path
                .as_ref()
                .and_then(|_| answers.next())
                .and_then(|probed| answer(&probed, "its version was not read", problems))
                .and_then(|text| {
                    text.lines()
                        .find(|l| !l.trim().is_empty())
                        .map(str::to_string)
                });
            Tool {
                name: name.to_string(),
                path,
                version,
            }
        })
        .collect()
}

/// The x64 MSVC environment a Windows build runs in (`msvc.rs`): cl.exe for x64 targets and
/// the PATH, INCLUDE and LIB that make it work, found the way the `cc` crate finds them.
/// Not just a `cl.exe` on PATH: a 32-bit developer prompt's cl is refused.
fn msvc() -> Tool {
    let name = "msvc x64 (cl.exe + PATH/INCLUDE/LIB)".to_string();
    if !cfg!(windows) {
        return Tool {
            name,
            path: None,
            version: None,
        };
    }
    match crate::sdk::msvc::find() {
        Ok(toolchain) => Tool {
            name,
            version: Some(format!(
                "{}; {}",
                crate::sdk::msvc::banner(&toolchain),
                toolchain.how()
            )),
            path: Some(toolchain.cl),
        },
        Err(e) => Tool {
            name,
            path: None,
            version: Some(format!("{e:#}")),
        },
    }
}

/// This machine's facts. The programs asked (the build tools, nvidia-smi, nvcc, rocminfo,
/// hipinfo, cl) are asked at once: each may take its whole timeout (a hung driver), and
/// together they cost one, not one each. Their problems are said in a fixed order.
pub fn collect(site_packages: Option<&Path>) -> Facts {
    let hip_path = std::env::var_os("HIP_PATH").map(PathBuf::from);
    // The Windows installs are read wherever %ProgramFiles% is set (so a copied Program
    // Files tree can be examined from Linux too).
    let program_files = std::env::var_os("ProgramFiles").map(PathBuf::from);
    let windows_layout = cfg!(windows) || program_files.is_some();
    let roots = match &program_files {
        Some(pf) => hip::windows_installs(pf),
        None if cfg!(windows) => hip::windows_installs(&crate::sdk::program_files()),
        None => hip::linux_installs(Path::new("/opt")),
    };
    let hip_installs: Vec<HipInstall> = roots
        .iter()
        .map(|r| hip::inspect(r, windows_layout))
        .collect();

    let (msvc, tools_found, nvidia, cuda, amd) = std::thread::scope(|scope| {
        let msvc = scope.spawn(msvc);
        let tools = scope.spawn(|| said(tools));
        let nvidia = scope.spawn(|| said(nvidia));
        let cuda = scope.spawn(|| said(cuda_toolkit));
        let amd = scope.spawn(|| said(|problems| amd_gpus(&hip_installs, problems)));
        (
            joined(msvc),
            joined(tools),
            joined(nvidia),
            joined(cuda),
            joined(amd),
        )
    });
    let system_root = windows_layout
        .then(|| std::env::var_os("SystemRoot").map(PathBuf::from))
        .flatten();
    let mut problems = Vec::new();
    let mut tools = vec![msvc];
    tools.extend(kept(tools_found, &mut problems));
    let (nvidia_gpus, nvidia_driver_cuda) = kept(nvidia, &mut problems);
    let cuda_toolkit = kept(cuda, &mut problems);
    let (amd_gpus, amd_gpus_from) = kept(amd, &mut problems);
    Facts {
        os: std::env::consts::OS.to_string(),
        driver_hip_runtime: system_root
            .as_deref()
            .and_then(|root| DriverRuntime::find(root, "amdhip64_6.dll")),
        hip7_runtime: site_packages
            .filter(|_| windows_layout)
            .map(|site| hip_runtime::examine(site, system_root.as_deref())),
        long_paths: ct2v_support::longpaths::enabled(),
        long_paths_said: ct2v_support::longpaths::describe(),
        arch: std::env::consts::ARCH.to_string(),
        tools,
        cuda_toolkit,
        nvidia_gpus,
        nvidia_driver_cuda,
        amd_gpus,
        amd_gpus_from,
        windows_layout,
        hip_installs,
        hip_path,
        tool_problems: problems,
    }
}

/// `gather`'s answer and the problems it said.
fn said<T>(gather: impl FnOnce(&mut Vec<String>) -> T) -> (T, Vec<String>) {
    let mut problems = Vec::new();
    let value = gather(&mut problems);
    (value, problems)
}

/// The answer of [`said`], its problems added to `problems`.
fn kept<T>((value, said): (T, Vec<String>), problems: &mut Vec<String>) -> T {
    problems.extend(said);
    value
}

/// A scoped thread's answer (its panic, if it panicked, is this thread's).
fn joined<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
    handle
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// The GPUs `nvidia-smi` lists and the newest CUDA its driver supports (its query and its
/// table, asked at once); when the query does not answer, the table is not read.
fn nvidia(problems: &mut Vec<String>) -> (Vec<NvidiaGpu>, Option<String>) {
    let Some(smi) = host::which("nvidia-smi") else {
        return (Vec::new(), None);
    };
    let asked = [(&smi, parse::NVIDIA_SMI_QUERY.to_vec()), (&smi, Vec::new())];
    let [query, table]: [Probed; 2] = probe_each(&asked, Limits::probe())
        .try_into()
        .expect("two asked, two answers");
    let skipped = "the NVIDIA GPUs and the CUDA version their driver supports were not read";
    let Some(text) = answer(&query, skipped, problems) else {
        return (Vec::new(), None);
    };
    let gpus = parse::nvidia_smi_csv(&text);
    let seen: Vec<String> = gpus
        .iter()
        .map(|g| format!("{}, driver {}", g.name, g.driver))
        .collect();
    let skipped = if seen.is_empty() {
        "the CUDA version the driver supports was not read".to_string()
    } else {
        format!(
            "the CUDA version the driver supports was not read (it listed {})",
            seen.join("; ")
        )
    };
    let cuda = answer(&table, &skipped, problems).and_then(|t| parse::nvidia_smi_cuda_version(&t));
    (gpus, cuda)
}

fn cuda_toolkit(problems: &mut Vec<String>) -> Option<CudaToolkit> {
    let found = crate::sdk::cuda_toolkit_said(problems).ok()?;
    Some(CudaToolkit {
        root: found.root,
        version: found.version,
        how: found.how,
    })
}

/// `rocminfo`, else `hipinfo` (on PATH, else in each install's `bin`), else `clinfo`, else the
/// names Windows gives the display adapters.
fn amd_gpus(installs: &[HipInstall], problems: &mut Vec<String>) -> (Vec<AmdGpu>, Option<String>) {
    let mut sources: Vec<AmdSource> = host::which("rocminfo")
        .map(|program| AmdSource {
            program,
            args: Vec::new(),
            parse: parse::rocminfo,
            from: "rocminfo".to_string(),
        })
        .into_iter()
        .collect();
    let hipinfos = host::which("hipinfo").into_iter().chain(
        installs
            .iter()
            .map(|i| i.root.join("bin").join("hipinfo.exe"))
            .filter(|p| p.is_file()),
    );
    sources.extend(hipinfos.map(|program| AmdSource {
        from: format!("hipinfo ({})", program.display()),
        program,
        args: Vec::new(),
        parse: parse::hipinfo,
    }));
    // The display driver's OpenCL runtime names the target of a card newer than any table.
    sources.extend(host::which("clinfo").map(|program| AmdSource {
        program,
        args: Vec::new(),
        parse: parse::clinfo,
        from: "clinfo".to_string(),
    }));
    if cfg!(windows) {
        sources.push(AmdSource {
            program: PathBuf::from("powershell"),
            args: vec![
                "-NoProfile",
                "-Command",
                "(Get-CimInstance Win32_VideoController).Name",
            ],
            parse: adapter_gpus,
            from: "the display adapter's name".to_string(),
        });
    }
    let asked: Vec<(&Path, Vec<&str>)> = sources
        .iter()
        .map(|s| (s.program.as_path(), s.args.clone()))
        .collect();
    let answers = probe_each(&asked, Limits::probe());
    // The first source that lists a GPU; the problems of those after it are not said (they
    // would not have been asked one after another).
    for (source, probed) in sources.iter().zip(&answers) {
        let text = answer(probed, "the GPUs it would list were not read", problems);
        let gpus = text.map(|t| (source.parse)(&t)).unwrap_or_default();
        if !gpus.is_empty() {
            return (gpus, Some(source.from.clone()));
        }
    }
    (Vec::new(), None)
}

/// A program that lists AMD GPUs, how its output is read, and how the report names it.
struct AmdSource {
    program: PathBuf,
    args: Vec<&'static str>,
    parse: fn(&str) -> Vec<AmdGpu>,
    from: String,
}

/// The Radeon cards among the display adapters' names, one a line.
fn adapter_gpus(names: &str) -> Vec<AmdGpu> {
    names
        .lines()
        .filter_map(|name| {
            let gfx = parse::gfx_from_marketing_name(name)?;
            Some(AmdGpu {
                name: name.trim().to_string(),
                gfx: gfx.to_string(),
                // A name says nothing of the features the runtime would report.
                arch: gfx.to_string(),
            })
        })
        .collect()
}
