//! HIP SDK installs: finding them and saying what each one has, with the maintainers'
//! findings built in (their gfx1010 field notes, which are not in this repository; the build
//! they describe is GitHub PinW/ctranslate2-rocm-rdna1):
//! - the runtime decides the major version: `amdhip64_6.dll` is HIP 6.x, `amdhip64_7.dll`
//!   7.x, and only a 6.x runtime sees an RDNA 1 card through the Adrenalin driver;
//! - `HIP_PATH` is whatever the last installer wrote, often not the SDK a build needs;
//! - without `amd_comgr`, HIP reports "no ROCm-capable device" rather than a missing DLL;
//! - rocBLAS only works on GPUs its `library/` has Tensile kernels for (gfx1010 needs the
//!   community build).
//!
//! Windows: every `<Program Files>\AMD\ROCm\<version>`, with DLLs and rocBLAS's
//! `library\` in `bin\`. Linux: `/opt/rocm*` (AMD's packages: `lib/`) or a given folder such
//! as `/usr` (Debian's packages: `lib/x86_64-linux-gnu/`, rocBLAS's kernels under
//! `rocblas/<version>/library/`).

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use ct2v_bundle::gpu_targets::targets_in;

/// What one install has.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HipInstall {
    pub root: PathBuf,
    /// From the folder name (`6.2`) or `.info/version`, when known.
    pub version: Option<String>,
    /// Where its runtime libraries are.
    pub lib_dir: Option<PathBuf>,
    /// HIP runtime files: `amdhip64_6.dll`, `libamdhip64.so.6`.
    pub runtime: Vec<String>,
    /// Code-object manager files: `amd_comgr_2.dll`, `libamd_comgr.so.3`.
    pub comgr: Vec<String>,
    pub rocblas_library: Option<PathBuf>,
    /// GPU targets rocBLAS's `library/` has kernel files for.
    pub rocblas_targets: BTreeSet<String>,
    /// The device libraries (`amdgcn/bitcode`) clang links into GPU code (Linux).
    pub device_libs: Option<PathBuf>,
}

impl HipInstall {
    /// The HIP major version its runtime is (6 for `amdhip64_6.dll`/`libamdhip64.so.6`).
    #[cfg(test)]
    pub(crate) fn runtime_major(&self) -> Option<u32> {
        self.runtime.iter().find_map(|name| {
            let lower = name.to_ascii_lowercase();
            let digits = match lower.strip_suffix(".dll") {
                Some(stem) => stem.rsplit('_').next()?.to_string(),
                None => lower.split(".so.").nth(1)?.split('.').next()?.to_string(),
            };
            digits.parse().ok()
        })
    }

    pub fn has(&self, runtime_file: &str) -> bool {
        self.runtime
            .iter()
            .any(|r| r.eq_ignore_ascii_case(runtime_file))
    }

    pub fn describe(&self) -> String {
        format!(
            "{} ({})",
            self.root.display(),
            self.version.as_deref().unwrap_or("version unknown")
        )
    }
}

/// Every `<program_files>/AMD/ROCm/<version>` folder, sorted by version.
pub(crate) fn windows_installs(program_files: &Path) -> Vec<PathBuf> {
    sorted_subdirs(&program_files.join("AMD").join("ROCm"), |_| true)
}

/// `/opt/rocm` and every `/opt/rocm-<version>`.
pub(crate) fn linux_installs(opt: &Path) -> Vec<PathBuf> {
    sorted_subdirs(opt, |name| name == "rocm" || name.starts_with("rocm-"))
}

fn sorted_subdirs(dir: &Path, keep: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir() && keep(&e.file_name().to_string_lossy()))
        .map(|e| e.path())
        .collect();
    found.sort();
    found
}

/// Looks at what `root` holds; `windows` picks the layout (DLLs in `bin\`).
pub(crate) fn inspect(root: &Path, windows: bool) -> HipInstall {
    let lib_dirs: Vec<PathBuf> = if windows {
        vec![root.join("bin")]
    } else {
        vec![
            root.join("lib"),
            root.join("lib64"),
            root.join("lib/x86_64-linux-gnu"),
        ]
    };
    let names_in = |dir: &Path| -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let (runtime_prefix, comgr_prefix) = if windows {
        ("amdhip64_", "amd_comgr")
    } else {
        ("libamdhip64.so.", "libamd_comgr.so.")
    };
    let mut install = HipInstall {
        root: root.to_path_buf(),
        version: version_of(root),
        lib_dir: None,
        runtime: Vec::new(),
        comgr: Vec::new(),
        rocblas_library: None,
        rocblas_targets: BTreeSet::new(),
        device_libs: (!windows).then(|| device_libs(root)).flatten(),
    };
    for dir in &lib_dirs {
        let names = names_in(dir);
        let runtime: Vec<String> = names
            .iter()
            .filter(|n| {
                let lower = n.to_ascii_lowercase();
                lower.starts_with(runtime_prefix) && (!windows || lower.ends_with(".dll"))
            })
            .cloned()
            .collect();
        if runtime.is_empty() {
            continue;
        }
        install.comgr = names
            .iter()
            .filter(|n| {
                let lower = n.to_ascii_lowercase();
                lower.starts_with(comgr_prefix) && (!windows || lower.ends_with(".dll"))
            })
            .cloned()
            .collect();
        install.runtime = runtime;
        install.lib_dir = Some(dir.clone());
        break;
    }
    install.rocblas_library = rocblas_library(&lib_dirs);
    if let Some(library) = &install.rocblas_library {
        // Per-architecture sub-folders (`library/gfx1100/…`) count as well as file names.
        for (relative, _) in ct2v_support::fsx::files_below(library).unwrap_or_default() {
            install
                .rocblas_targets
                .extend(targets_in(&relative).into_iter().map(str::to_string));
        }
    }
    install
}

/// A path of AMD's Linux layout (`lib/…`, `lib/rocblas/library/…`) inside `root`, or where
/// a distribution's layout (Debian: `lib/x86_64-linux-gnu/…`) has it. Knowledge of HIP
/// installs, so it lives here; the build's bundle spec uses it for `from = "sdk"` folders.
pub fn locate(root: &Path, rel: &str) -> PathBuf {
    let direct = root.join(rel);
    if !rel.starts_with("lib") {
        return direct;
    }
    let install = inspect(root, false);
    let under = |prefix: &str, dir: Option<PathBuf>| {
        let rest = rel.strip_prefix(prefix)?;
        let dir = dir?;
        Some(dir.join(rest.trim_start_matches('/')))
    };
    under("lib/rocblas/library", install.rocblas_library)
        .or_else(|| under("lib", install.lib_dir))
        .unwrap_or(direct)
}

/// `amdgcn/bitcode` at the root (AMD's layout, found through `ROCM_PATH`), else inside an
/// LLVM's clang resource folder (Debian: `lib/llvm-21/lib/clang/21/amdgcn/bitcode`).
fn device_libs(root: &Path) -> Option<PathBuf> {
    let at_root = root.join("amdgcn").join("bitcode");
    if at_root.is_dir() {
        return Some(at_root);
    }
    let llvms = sorted_subdirs(&root.join("lib"), |n| n == "llvm" || n.starts_with("llvm-"));
    llvms
        .iter()
        .rev()
        .flat_map(|llvm| sorted_subdirs(&llvm.join("lib").join("clang"), |_| true))
        .map(|clang| clang.join("amdgcn").join("bitcode"))
        .find(|bitcode| bitcode.is_dir())
}

/// The clang that compiles HIP code: `llvm/bin` (AMD's /opt/rocm), `lib/llvm/bin` (TheRock's
/// `rocm-sdk-devel` wheel, as CTranslate2's Windows ROCm script calls
/// `_rocm_sdk_devel/lib/llvm/bin/clang.exe`), else the LLVM whose clang resource folder has the
/// device libraries (Debian: `lib/llvm-21/bin`).
pub(crate) fn clang_dir(root: &Path) -> Option<PathBuf> {
    let has_clang = |bin: &Path| bin.join("clang++").is_file() || bin.join("clang++.exe").is_file();
    for amd in [
        root.join("llvm").join("bin"),
        root.join("lib").join("llvm").join("bin"),
    ] {
        if has_clang(&amd) {
            return Some(amd);
        }
    }
    let bitcode = device_libs(root)?;
    // <llvm>/lib/clang/<v>/amdgcn/bitcode → <llvm>/bin
    let llvm = bitcode.ancestors().nth(5)?;
    let bin = llvm.join("bin");
    has_clang(&bin).then_some(bin)
}

/// The environment a HIP compile needs beyond `ROCM_PATH`: `HIP_DEVICE_LIB_PATH` when the
/// device libraries are not where `ROCM_PATH` makes clang look (Debian's `/usr`).
pub(crate) fn compile_env(root: &Path) -> Vec<(String, String)> {
    match device_libs(root) {
        Some(dir) if dir != root.join("amdgcn").join("bitcode") => {
            vec![("HIP_DEVICE_LIB_PATH".to_string(), dir.display().to_string())]
        }
        _ => Vec::new(),
    }
}

/// `<lib>/rocblas/library`, or Debian's `<lib>/rocblas/<version>/library`.
fn rocblas_library(lib_dirs: &[PathBuf]) -> Option<PathBuf> {
    for dir in lib_dirs {
        let direct = dir.join("rocblas").join("library");
        if direct.is_dir() {
            return Some(direct);
        }
        let versioned = sorted_subdirs(&dir.join("rocblas"), |_| true)
            .into_iter()
            .map(|v| v.join("library"))
            .rfind(|l| l.is_dir());
        if versioned.is_some() {
            return versioned;
        }
    }
    None
}

/// `6.2` from a Windows install folder's name, else `.info/version`'s first line, else
/// `include/hip/hip_version.h` (Debian's `/usr`).
fn version_of(root: &Path) -> Option<String> {
    named_version(root).or_else(|| header_version(root))
}

fn header_version(root: &Path) -> Option<String> {
    let text = fs::read_to_string(root.join("include/hip/hip_version.h")).ok()?;
    let define = |name: &str| {
        text.lines().find_map(|l| {
            let rest = l.trim().strip_prefix("#define ")?.strip_prefix(name)?;
            rest.trim().parse::<u32>().ok()
        })
    };
    Some(format!(
        "{}.{}",
        define("HIP_VERSION_MAJOR")?,
        define("HIP_VERSION_MINOR")?
    ))
}

fn named_version(root: &Path) -> Option<String> {
    let name = root.file_name()?.to_string_lossy().into_owned();
    let from_name = name.trim_start_matches("rocm-");
    if from_name
        .split('.')
        .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    {
        return Some(from_name.to_string());
    }
    let info = fs::read_to_string(root.join(".info").join("version")).ok()?;
    let first = info.lines().next()?.trim();
    (!first.is_empty()).then(|| first.split('-').next().unwrap_or(first).to_string())
}

/// What a build needs of an install.
pub struct Needs<'a> {
    /// The runtime file that decides the major version (`amdhip64_6.dll`).
    pub runtime: Option<&'a str>,
    /// Other files that must be there (`amd_comgr`).
    pub requires: &'a [String],
    /// GPU targets rocBLAS must have kernels for.
    pub gpu_targets: &'a [String],
}

/// The install that fits, and what was said on the way (e.g. about `HIP_PATH`).
#[derive(Debug)]
pub struct Choice {
    pub install: HipInstall,
    pub notes: Vec<String>,
}

/// Picks the install that fits `needs` among `installs`; `hip_path` is `$HIP_PATH`, which is
/// checked but not trusted. The error says what each install lacks.
pub fn choose(
    installs: &[HipInstall],
    needs: &Needs,
    hip_path: Option<&Path>,
) -> Result<Choice, String> {
    let mut notes = Vec::new();
    let mut rejected = Vec::new();
    let mut fitting = None;
    for install in installs {
        match problems(install, needs).first() {
            None if fitting.is_none() => fitting = Some(install.clone()),
            None => {}
            Some(problem) => rejected.push(format!("  {}: {problem}", install.describe())),
        }
    }
    if let Some(install) = &fitting
        && let Some(hip_path) = hip_path
        && !same_dir(hip_path, &install.root)
    {
        let points_at = installs
            .iter()
            .find(|i| same_dir(hip_path, &i.root))
            .map(|i| {
                problems(i, needs)
                    .first()
                    .map_or_else(String::new, |p| format!(", which {p}"))
            })
            .unwrap_or_default();
        notes.push(format!(
            "HIP_PATH is {}{points_at}; using {} instead (HIP_PATH is what the last HIP SDK \
             installer wrote, not necessarily the SDK this build needs; the build sets \
             HIP_PATH and ROCM_PATH for its own steps)",
            hip_path.display(),
            install.root.display()
        ));
    }
    match fitting {
        Some(install) => Ok(Choice { install, notes }),
        None if installs.is_empty() => Err("no HIP SDK install was found".to_string()),
        None => Err(format!("no HIP SDK install fits:\n{}", rejected.join("\n"))),
    }
}

fn same_dir(a: &Path, b: &Path) -> bool {
    let norm = |p: &Path| {
        p.to_string_lossy()
            .replace('\\', "/")
            .trim_end_matches('/')
            .to_ascii_lowercase()
    };
    norm(a) == norm(b)
}

/// Why `install` does not fit `needs`, most important first; empty when it fits.
pub fn problems(install: &HipInstall, needs: &Needs) -> Vec<String> {
    let mut found = Vec::new();
    match needs.runtime {
        Some(runtime) if !install.has(runtime) => {
            let has = if install.runtime.is_empty() {
                "no HIP runtime".to_string()
            } else {
                install.runtime.join(", ")
            };
            found.push(format!(
                "has {has}, not {runtime} (another major version of HIP)"
            ));
        }
        None if install.runtime.is_empty() => found.push("has no HIP runtime".to_string()),
        _ => {}
    }
    if needs.requires.iter().any(|r| r.contains("comgr")) && install.comgr.is_empty() {
        found.push(
            "has no amd_comgr: without it HIP reports \"no ROCm-capable device\" instead of a \
             missing library (install the SDK with the HIP Runtime Compiler component)"
                .to_string(),
        );
    }
    let missing: Vec<&str> = needs
        .gpu_targets
        .iter()
        .filter(|t| !install.rocblas_targets.contains(*t))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        let at = install
            .rocblas_library
            .as_ref()
            .map_or("no rocblas/library folder".to_string(), |l| {
                l.display().to_string()
            });
        found.push(format!(
            "has no rocBLAS Tensile kernels for {} ({at}): put a rocBLAS library built for \
             them there (for gfx1010, the community build of rocBLAS's library/ for HIP SDK 6.2)",
            missing.join(", ")
        ));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake `Program Files\AMD\ROCm\<version>` with the given files in `bin\`.
    fn install(pf: &Path, version: &str, files: &[&str], kernels: &[&str]) -> PathBuf {
        let root = pf.join("AMD/ROCm").join(version);
        let bin = root.join("bin");
        fs::create_dir_all(bin.join("rocblas/library")).unwrap();
        for f in files {
            fs::write(bin.join(f), "MZ").unwrap();
        }
        for k in kernels {
            fs::write(bin.join("rocblas/library").join(k), "k").unwrap();
        }
        root
    }

    fn gfx1010_needs() -> (Vec<String>, Vec<String>) {
        (vec!["amd_comgr".to_string()], vec!["gfx1010".to_string()])
    }

    #[test]
    fn the_6_2_install_is_chosen_for_gfx1010_and_hip_path_at_7_1_is_explained() {
        let dir = tempfile::tempdir().unwrap();
        let pf = dir.path();
        install(
            pf,
            "6.2",
            &["amdhip64_6.dll", "amd_comgr_2.dll", "hipblas.dll"],
            &[
                "TensileLibrary_lazy_gfx1010.dat",
                "TensileLibrary_lazy_gfx1030.dat",
            ],
        );
        let v71 = install(
            pf,
            "7.1",
            &["amdhip64_7.dll", "amd_comgr0701.dll"],
            &["TensileLibrary_lazy_gfx1030.dat"],
        );
        let installs: Vec<HipInstall> = windows_installs(pf)
            .iter()
            .map(|r| inspect(r, true))
            .collect();
        assert_eq!(installs.len(), 2);
        assert_eq!(installs[0].runtime_major(), Some(6));
        assert_eq!(installs[1].runtime_major(), Some(7));
        let (requires, targets) = gfx1010_needs();
        let needs = Needs {
            runtime: Some("amdhip64_6.dll"),
            requires: &requires,
            gpu_targets: &targets,
        };
        let choice = choose(&installs, &needs, Some(&v71)).unwrap();
        assert_eq!(choice.install.version.as_deref(), Some("6.2"));
        let note = choice.notes.join("\n");
        assert!(note.contains("HIP_PATH is"), "{note}");
        assert!(
            note.contains("has amdhip64_7.dll, not amdhip64_6.dll"),
            "{note}"
        );
    }

    #[test]
    fn missing_comgr_and_missing_kernels_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let pf = dir.path();
        install(
            pf,
            "6.2",
            &["amdhip64_6.dll"],
            &["TensileLibrary_gfx1030.dat"],
        );
        let installs: Vec<HipInstall> = windows_installs(pf)
            .iter()
            .map(|r| inspect(r, true))
            .collect();
        let (requires, targets) = gfx1010_needs();
        let needs = Needs {
            runtime: Some("amdhip64_6.dll"),
            requires: &requires,
            gpu_targets: &targets,
        };
        let all = problems(&installs[0], &needs).join("\n");
        assert!(all.contains("no amd_comgr"), "{all}");
        assert!(all.contains("no ROCm-capable device"), "{all}");
        assert!(
            all.contains("no rocBLAS Tensile kernels for gfx1010"),
            "{all}"
        );
        let err = choose(&installs, &needs, None).unwrap_err();
        assert!(err.contains("no HIP SDK install fits"), "{err}");
    }

    #[test]
    fn amd_layout_paths_are_found_in_debians() {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("lib/x86_64-linux-gnu");
        fs::create_dir_all(lib.join("rocblas/4.4.1/library")).unwrap();
        fs::write(lib.join("libamdhip64.so.6"), "").unwrap();
        assert_eq!(locate(dir.path(), "lib"), lib);
        assert_eq!(
            locate(dir.path(), "lib/rocblas/library"),
            lib.join("rocblas/4.4.1/library")
        );
        fs::create_dir_all(dir.path().join("bin")).unwrap();
        assert_eq!(locate(dir.path(), "bin"), dir.path().join("bin"));
    }

    #[test]
    fn debian_layout_is_read() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("include/hip")).unwrap();
        fs::write(
            dir.path().join("include/hip/hip_version.h"),
            "#define HIP_VERSION_MAJOR 6\n#define HIP_VERSION_MINOR 4\n#define HIP_VERSION_PATCH 43484\n",
        )
        .unwrap();
        let lib = dir.path().join("lib/x86_64-linux-gnu");
        fs::create_dir_all(lib.join("rocblas/4.4.1/library")).unwrap();
        for f in ["libamdhip64.so.6", "libamd_comgr.so.3"] {
            fs::write(lib.join(f), "\x7fELF").unwrap();
        }
        fs::write(
            lib.join("rocblas/4.4.1/library/Kernels.so-000-gfx1010.hsaco"),
            "k",
        )
        .unwrap();
        let bitcode = ct2v_support::paths::join_slashed(
            dir.path(),
            "lib/llvm-21/lib/clang/21/amdgcn/bitcode",
        );
        fs::create_dir_all(&bitcode).unwrap();
        fs::create_dir_all(dir.path().join("lib/llvm-21/bin")).unwrap();
        fs::write(dir.path().join("lib/llvm-21/bin/clang++"), "").unwrap();
        assert_eq!(
            clang_dir(dir.path()),
            Some(ct2v_support::paths::join_slashed(
                dir.path(),
                "lib/llvm-21/bin"
            ))
        );
        assert_eq!(
            compile_env(dir.path()),
            [(
                "HIP_DEVICE_LIB_PATH".to_string(),
                bitcode.display().to_string()
            )]
        );
        let install = inspect(dir.path(), false);
        assert_eq!(install.version.as_deref(), Some("6.4"));
        assert_eq!(install.lib_dir.as_deref(), Some(lib.as_path()));
        assert_eq!(install.runtime_major(), Some(6));
        assert_eq!(install.comgr, ["libamd_comgr.so.3"]);
        assert!(install.rocblas_targets.contains("gfx1010"));
    }
}
