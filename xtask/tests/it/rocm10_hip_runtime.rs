//! Which HIP runtime a ROCm 10 family wheel loads on Windows, under wine with python.org's
//! CPython: the fat wheel's own `amdhip64_7.dll` or the display driver's in the system folder
//! (`C:\windows\system32` of the wine prefix, where Windows' loader looks before PATH and
//! where Adrenalin installs it), by the rule of the wheel's `_rocm_runtime.py` (patch 0004):
//! the newer file version, `CT2_HIP_RUNTIME` forcing either. Each copy is a mingw-built DLL
//! with its own VERSIONINFO (windres) and export values, so the module the process mapped, and
//! the one ctranslate2.dll's import bound to, are both seen. `doctor --site-packages` applies
//! the same rule to the same files and must name the same copy.

use crate::common;

/// What one `import ctranslate2` under wine saw.
#[cfg(feature = "wine")]
struct Seen {
    imported: bool,
    /// `_rocm_runtime.loaded`: the path the rule loaded.
    chosen: String,
    /// Every module named amdhip64_7.dll the process has mapped.
    modules: Vec<String>,
    /// ctranslate2.dll's `f_ctranslate2`: the sum of what its imports answer, through the
    /// amdhip64_7 it and the libraries bound to (ours answers 7, the driver's 1000).
    bound: Option<i64>,
    output: String,
}

/// NETWORK TEST (python.org's embeddable CPython, once into the shared cache).
#[cfg(feature = "wine")]
#[test]
fn the_newer_hip_runtime_loads_by_full_path_and_doctor_names_the_same_copy() {
    use ct2v_proof::winpython::wine::windows_path;
    use std::fs;
    use std::path::Path;

    use common::mingw;
    use common::rocm10;

    crate::needs_network!(&["files.pythonhosted.org:443"]);
    let Some((work, session)) = crate::rocm10_bundle::windows_python() else {
        return;
    };
    let env = session.env();
    let prefix = Path::new(&env["WINEPREFIX"]).to_path_buf();
    let system32 = prefix.join("drive_c/windows/system32");
    assert!(system32.is_dir(), "{}", system32.display());

    let bundled = crate::rocm10_bundle::bundle_windows(rocm10::family("rocm-rdna4"));
    let site = work.path().join("site");
    common::wheel::unzip(&bundled.fat, &site);
    let ours = site.join("ctranslate2/_rocm/bin/amdhip64_7.dll");
    // The stand-in runtimes: the same export as the bundle's (ctranslate2.dll imports
    // f_amdhip64_7), answering which copy it is.
    let runtime = |dir: &Path, version: [u16; 4], answer: i64| {
        let built = mingw::build_versioned_from(
            dir,
            "amdhip64_7.dll",
            version,
            &format!("__declspec(dllexport) int f_amdhip64_7(void) {{ return {answer}; }}\n"),
        );
        fs::read(built).unwrap()
    };
    fs::write(
        &ours,
        runtime(&work.path().join("ours"), [7, 2, 26043, 0], 7),
    )
    .unwrap();
    let older = runtime(&work.path().join("older"), [7, 1, 25405, 9], 1000);
    let newer = runtime(&work.path().join("newer"), [7, 3, 26210, 1], 1000);
    let system_dll = system32.join("amdhip64_7.dll");

    let import = |forced: Option<&str>| -> Seen {
        let mut env = crate::rocm10_bundle::python_env(&session);
        env.remove("CT2_HIP_RUNTIME");
        if let Some(value) = forced {
            env.insert("CT2_HIP_RUNTIME".into(), value.into());
        }
        let script = format!(
            "import sys, os, ctypes\n\
             from ctypes import wintypes\n\
             site = r'{}'\n\
             sys.path.insert(0, site)\n\
             import ctranslate2\n\
             from ctranslate2 import _rocm_runtime\n\
             print('CHOSEN', _rocm_runtime.loaded[0], flush=True)\n\
             k32 = ctypes.WinDLL('kernel32')\n\
             k32.GetCurrentProcess.restype = wintypes.HANDLE\n\
             k32.K32EnumProcessModules.argtypes = [wintypes.HANDLE, ctypes.POINTER(wintypes.HMODULE), wintypes.DWORD, ctypes.POINTER(wintypes.DWORD)]\n\
             k32.GetModuleFileNameW.argtypes = [wintypes.HMODULE, wintypes.LPWSTR, wintypes.DWORD]\n\
             modules = (wintypes.HMODULE * 4096)()\n\
             needed = wintypes.DWORD()\n\
             assert k32.K32EnumProcessModules(k32.GetCurrentProcess(), modules, ctypes.sizeof(modules), ctypes.byref(needed))\n\
             for handle in modules[: needed.value // ctypes.sizeof(wintypes.HMODULE)]:\n\
             \x20   name = ctypes.create_unicode_buffer(32768)\n\
             \x20   k32.GetModuleFileNameW(handle, name, 32768)\n\
             \x20   if os.path.basename(name.value).lower() == 'amdhip64_7.dll':\n\
             \x20       print('MODULE', name.value, flush=True)\n\
             ct2 = ctypes.CDLL(os.path.join(site, 'ctranslate2', 'ctranslate2.dll'))\n\
             print('BOUND', ct2.f_ctranslate2(), flush=True)\n",
            windows_path(&site),
        );
        let output = crate::rocm10_bundle::run_python(&session, env, &script);
        let field = |key: &str| {
            output
                .lines()
                .filter_map(|l| l.trim().strip_prefix(key))
                .map(|v| v.trim().to_string())
                .collect::<Vec<_>>()
        };
        Seen {
            imported: field("CHOSEN ").len() == 1,
            chosen: field("CHOSEN ").concat(),
            modules: field("MODULE "),
            bound: field("BOUND ").first().and_then(|v| v.parse().ok()),
            output,
        }
    };
    let doctor = |forced: Option<&str>| {
        let program_files = work.path().join("Program Files");
        fs::create_dir_all(&program_files).unwrap();
        let mut env = vec![
            (
                "SystemRoot",
                prefix.join("drive_c/windows").display().to_string(),
            ),
            ("ProgramFiles", program_files.display().to_string()),
        ];
        if let Some(value) = forced {
            env.push(("CT2_HIP_RUNTIME", value.to_string()));
        }
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let removed: &[&str] = if forced.is_some() {
            &[]
        } else {
            &["CT2_HIP_RUNTIME"]
        };
        common::xtask_with_env(
            &common::repo_root(),
            &["doctor", "--site-packages", site.to_str().unwrap()],
            &env,
            removed,
        )
        .stdout
    };
    let ours_windows = windows_path(&ours).to_lowercase();
    let is_ours = |path: &str| path.to_lowercase() == ours_windows;
    let is_system = |path: &str| path.to_lowercase() == r"c:\windows\system32\amdhip64_7.dll";

    // (the driver's copy, CT2_HIP_RUNTIME, whether the system copy loads, doctor's reason)
    let cases: [(&[u8], Option<&str>, bool, &str); 4] = [
        (
            &older,
            None,
            false,
            "the bundled 7.2.26043.0 is not older than the display driver's 7.1.25405.9",
        ),
        (
            &newer,
            None,
            true,
            "the display driver's 7.3.26210.1 is newer than the bundled 7.2.26043.0",
        ),
        (&newer, Some("bundled"), false, "CT2_HIP_RUNTIME=bundled"),
        (&older, Some("system"), true, "CT2_HIP_RUNTIME=system"),
    ];
    for (driver, forced, system_loads, reason) in cases {
        fs::write(&system_dll, driver).unwrap();
        let seen = import(forced);
        let label = format!(
            "driver {}, CT2_HIP_RUNTIME={forced:?}",
            if driver == &older[..] {
                "older"
            } else {
                "newer"
            }
        );
        assert!(seen.imported, "{label}: {}", seen.output);
        let expected: &dyn Fn(&str) -> bool = if system_loads { &is_system } else { &is_ours };
        assert!(
            expected(&seen.chosen),
            "{label}: the rule chose {}",
            seen.chosen
        );
        assert_eq!(
            seen.modules.len(),
            1,
            "{label}: one HIP runtime mapped: {}",
            seen.output
        );
        assert!(
            expected(&seen.modules[0]),
            "{label}: mapped {:?}",
            seen.modules
        );
        let bound = seen
            .bound
            .unwrap_or_else(|| panic!("{label}: {}", seen.output));
        assert_eq!(
            bound >= 1000,
            system_loads,
            "{label}: ctranslate2.dll bound to the other copy ({bound})"
        );

        eprintln!(
            "{label}: chose {}, mapped {:?}, f_ctranslate2() = {bound}",
            seen.chosen, seen.modules
        );
        let said = doctor(forced);
        let loads = if system_loads {
            system_dll.display().to_string()
        } else {
            ours.display().to_string()
        };
        for needle in [
            format!("bundled: {} (7.2.26043.0)", ours.display()),
            format!("display driver: {} (", system_dll.display()),
            format!("import ctranslate2 loads {loads} ({reason})"),
        ] {
            assert!(
                said.contains(&needle),
                "{label}: `{needle}` in doctor's report:\n{said}"
            );
        }
    }

    // A value the rule does not know stops the import, naming the variable; doctor says so.
    let seen = import(Some("driver"));
    assert!(!seen.imported, "{}", seen.output);
    assert!(
        seen.output
            .contains("ImportError: CT2_HIP_RUNTIME='driver'"),
        "{}",
        seen.output
    );
    let said = doctor(Some("driver"));
    assert!(
        said.contains(
            "import ctranslate2 stops: CT2_HIP_RUNTIME=\"driver\" is not bundled, system or newer"
        ),
        "{said}"
    );
    // No driver copy: ours, and CT2_HIP_RUNTIME=system refuses.
    fs::remove_file(&system_dll).unwrap();
    let seen = import(None);
    assert!(seen.imported && is_ours(&seen.chosen), "{}", seen.output);
    let seen = import(Some("system"));
    assert!(
        !seen.imported
            && seen
                .output
                .contains("CT2_HIP_RUNTIME=system, but there is no amdhip64_7.dll"),
        "{}",
        seen.output
    );
}

/// Patch 0004 applies, with the rest of each version's rocm10 series, to CTranslate2 4.7.1's
/// and 4.8.4's own `__init__.py` (kept in crates/upkeep/tests/data/upstream), by the patch step's
/// code; both versions get the same `_rocm_runtime.py`, and CPython compiles what results.
#[test]
fn the_rocm10_series_gives_4_7_1_and_4_8_4_the_same_runtime_rule() {
    use std::fs;
    if common::skip::missing("python3", "apt-get install python3") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let mut rules = Vec::new();
    for version in ["4.7.1", "4.8.4"] {
        let package = common::rocm10::patched_package(version, work.path());
        let init = fs::read_to_string(package.join("__init__.py")).unwrap();
        assert!(
            init.contains(r#"rocm_bin = os.path.join(package_dir, "_rocm", "bin")"#)
                && init.contains("_rocm_runtime.preload(rocm_bin)"),
            "{version}: {init}"
        );
        // The preload comes before the package's own DLLs are loaded.
        let preload = init.find("_rocm_runtime.preload(rocm_bin)").unwrap();
        let own = init
            .find(r#"glob.glob(os.path.join(package_dir, "*.dll"))"#)
            .unwrap();
        assert!(preload < own, "{version}: {init}");
        common::run_ok(
            std::process::Command::new("python3")
                .args(["-m", "py_compile"])
                .arg(package.join("__init__.py"))
                .arg(package.join("_rocm_runtime.py")),
        );
        rules.push(fs::read(package.join("_rocm_runtime.py")).unwrap());
    }
    assert_eq!(rules[0], rules[1], "one rule for both versions");
}
