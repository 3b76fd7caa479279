//! NETWORK TESTS: the tools users already trust, from PyPI, run on what `bundle` writes
//! (delvewheel: on the official Windows wheel, against our closure of it):
//! `auditwheel show` agrees with the manylinux tag the bundle proved, and PyInstaller freezes
//! an app that imports ctranslate2 from the portable folder with the shipped
//! `hook-ctranslate2.py`, and the frozen program runs.
//!
//! The wheel is a stand-in with CTranslate2's real layout: `ctranslate2/_ext` is a real
//! CPython extension (gcc, this Python's headers) that links `libctranslate2.so.4`, which
//! links an SDK library, and the package's `__init__.py` loads a run-time plugin with
//! `ctypes.CDLL` (as CTranslate2's own `__init__.py` loads its DLLs on Windows) that no
//! import table names, so only `binaries.json` brings it into a frozen app.
//!
//! They need gcc, patchelf, python3 with headers and a shared libpython (PyInstaller's
//! requirement) and https to pypi.org; without them (or with `CT2V_SKIP_NETWORK_TESTS=1`)
//! each test is skipped and counted (under `CI=true` a missing tool or host fails it). The tools are installed into a venv under
//! target/tmp, reused between runs.

use crate::common;
use crate::needs_network;
use ct2v_support::report::Reporter;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::wheel::{ct2_dist_info, dist_info, zip_wheel};
use common::{installed, run_ok};

const HOSTS: &[&str] = &["pypi.org:443", "files.pythonhosted.org:443"];

/// `python3`'s include folder and extension suffix, when it can build and freeze extensions.
fn python() -> Option<(String, String)> {
    let out = Command::new("python3")
        .args([
            "-c",
            "import sysconfig as s; print(s.get_paths()['include']); \
             print(s.get_config_var('EXT_SUFFIX')); print(s.get_config_var('Py_ENABLE_SHARED'))",
        ])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    match lines.as_slice() {
        [include, suffix, "1"] if Path::new(include).join("Python.h").is_file() => {
            Some((include.to_string(), suffix.to_string()))
        }
        _ => {
            eprintln!("SKIPPED: python3 has no headers or no shared libpython: {text}");
            None
        }
    }
}

fn tools_available() -> Option<(String, String)> {
    for tool in ["gcc", "patchelf", "python3"] {
        if !installed(tool) {
            eprintln!("SKIPPED: {tool} is not installed");
            return None;
        }
    }
    python()
}

/// A venv under target/tmp with `packages` installed from PyPI; its bin folder.
fn venv(name: &str, packages: &[&str]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let bin = dir.join("bin");
    if !bin.join("python").is_file() {
        run_ok(Command::new("python3").args(["-m", "venv"]).arg(&dir));
    }
    run_ok(
        Command::new(bin.join("python"))
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(packages),
    );
    bin
}

fn gcc(out: &Path, code: &str, args: &[&str]) {
    let source = out.with_extension("c");
    fs::write(&source, code).unwrap();
    run_ok(
        Command::new("gcc")
            .args(["-shared", "-fPIC", "-O1", "-o"])
            .arg(out)
            .arg(&source)
            .args(args),
    );
    fs::remove_file(source).unwrap();
}

/// The stand-in wheel (tagged linux_x86_64, as pip builds it) and the SDK folder.
fn stand_in(dir: &Path, include: &str, suffix: &str) -> (PathBuf, PathBuf) {
    let sdk = dir.join("sdk");
    let lib = sdk.join("lib");
    fs::create_dir_all(&lib).unwrap();
    dist_info(&sdk.join("sdk_pkg-1.0.dist-info"), "sdk_pkg", "1.0");
    let libc = "#include <stdlib.h>\n#define VIA_LIBC(x) (getenv(\"CT2_NONE\") ? -1000 : (x))\n";
    gcc(
        &lib.join("libsdk_core.so"),
        &format!("{libc}int core_value(void) {{ return VIA_LIBC(41); }}\n"),
        &[],
    );
    gcc(
        &lib.join("libsdk_plugin.so"),
        &format!("{libc}int plugin_value(void) {{ return VIA_LIBC(7); }}\n"),
        &[],
    );

    let tree = dir.join("tree");
    let package = tree.join("ctranslate2");
    fs::create_dir_all(&package).unwrap();
    let lib_dir = format!("-L{}", lib.display());
    gcc(
        &package.join("libctranslate2.so.4"),
        // memcpy is GLIBC_2.14 and getrandom GLIBC_2.25: the proven tag is manylinux_2_26,
        // more compatible than the manylinux_2_28 written, and not the trivial manylinux_2_5.
        &format!(
            "{libc}#include <string.h>\n#include <sys/random.h>\nint core_value(void);\n\
             int ct2_value(void) {{ return VIA_LIBC(core_value() + 1); }}\n\
             long ct2_noise(char *to, const char *from, size_t n) {{ memcpy(to, from, n); \
             return getrandom(to, n, 0); }}\n"
        ),
        &[&lib_dir, "-lsdk_core", "-Wl,-soname,libctranslate2.so.4"],
    );
    let package_dir = format!("-L{}", package.display());
    let include = format!("-I{include}");
    gcc(
        &package.join(format!("_ext{suffix}")),
        "#include <Python.h>\nint ct2_value(void);\n\
         static PyObject *value(PyObject *self, PyObject *args) { return PyLong_FromLong(ct2_value()); }\n\
         static PyMethodDef methods[] = {{\"value\", value, METH_NOARGS, \"\"}, {0}};\n\
         static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, \"_ext\", 0, -1, methods};\n\
         PyMODINIT_FUNC PyInit__ext(void) { return PyModule_Create(&module); }\n",
        &[
            &include,
            &package_dir,
            "-l:libctranslate2.so.4",
            "-Wl,-rpath,$ORIGIN",
        ],
    );
    fs::write(
        package.join("__init__.py"),
        "import ctypes, os\n\
         from ctranslate2._ext import value\n\
         __version__ = \"4.7.1\"\n\
         _plugin = ctypes.CDLL(os.path.join(os.path.dirname(__file__), \"..\", \"ctranslate2.libs\", \"libsdk_plugin.so\"))\n\
         def plugin_value():\n    return _plugin.plugin_value()\n",
    )
    .unwrap();
    let tag = suffix_tag(suffix);
    ct2_dist_info(&tree, Some(&format!("{tag}-{tag}-linux_x86_64")));
    let wheel = dir.join(format!("in/ctranslate2-4.7.1-{tag}-{tag}-linux_x86_64.whl"));
    zip_wheel(&tree, &wheel);
    (wheel, lib)
}

/// `cp311` from `.cpython-311-x86_64-linux-gnu.so`.
fn suffix_tag(suffix: &str) -> String {
    let digits: String = suffix
        .trim_start_matches(".cpython-")
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    format!("cp{digits}")
}

/// Bundles the stand-in: fat wheel, portable folder and report in `out`.
fn bundle(wheel: &Path, lib: &Path, out: &Path) -> serde_json::Value {
    let search = format!("{}=ctranslate2.libs", lib.display());
    let run = common::xtask(&[
        "bundle",
        "--wheel",
        wheel.to_str().unwrap(),
        "--search",
        &search,
        "--force",
        "libsdk_plugin*.so",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    serde_json::from_str(&fs::read_to_string(out.join("provenance.json")).unwrap()).unwrap()
}

/// The stand-in built and bundled into `<dir>/out`: (dir, out, report, extension suffix).
fn bundled_stand_in() -> Option<(tempfile::TempDir, PathBuf, serde_json::Value, String)> {
    let (include, suffix) = tools_available()?;
    let dir = tempfile::tempdir().unwrap();
    let (wheel, lib) = stand_in(dir.path(), &include, &suffix);
    let out = dir.path().join("out");
    let report = bundle(&wheel, &lib, &out);
    Some((dir, out, report, suffix))
}

#[test]
fn auditwheel_show_agrees_with_the_manylinux_tag_the_bundle_proves() {
    needs_network!(HOSTS);
    let Some((_dir, out, report, suffix)) = bundled_stand_in() else {
        return;
    };
    let tagging = &report["platform_tag"];
    assert_eq!(tagging["tag"], "manylinux_2_28_x86_64", "{report}");
    let tag = suffix_tag(&suffix);
    let fat = out.join(format!(
        "ctranslate2-4.7.1-{tag}-{tag}-manylinux_2_28_x86_64.whl"
    ));
    assert!(fat.is_file(), "{:?}", common::wheel::files_below(&out));

    let bin = venv("bundle_audit-auditwheel", &["auditwheel>=6,<7"]);
    let show = run_ok(
        Command::new(bin.join("auditwheel"))
            .args(["show", "--json"])
            .arg(&fat),
    );
    let text = String::from_utf8_lossy(&show.stdout);
    let theirs: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    eprintln!("auditwheel show --json: {theirs}");
    // The most compatible tag: the same as ours.
    assert_eq!(
        theirs["overall_tag"], tagging["proven"],
        "{theirs}\n{report}"
    );
    assert_eq!(tagging["proven"], "manylinux_2_26_x86_64", "{report}");
    // The symbol versions needed from system libraries: the same sets.
    assert_eq!(
        theirs["versioned_symbols"], tagging["versioned_symbols"],
        "{theirs}\n{report}"
    );
    // Nothing outside the wheel but what every manylinux system has.
    assert_eq!(theirs["external_libs"], serde_json::json!({}), "{theirs}");
}

#[test]
fn pyinstaller_freezes_an_app_from_the_portable_folder_and_it_runs() {
    needs_network!(HOSTS);
    let Some((dir, out, _, _)) = bundled_stand_in() else {
        return;
    };
    let portable = out.join("portable");
    assert!(portable.join("hook-ctranslate2.py").is_file());

    let bin = venv("bundle_audit-pyinstaller", &["pyinstaller>=6,<7"]);
    let app_dir = dir.path().join("app");
    fs::create_dir_all(&app_dir).unwrap();
    fs::write(
        app_dir.join("app.py"),
        "import ctranslate2\n\
         print(\"ctranslate2\", ctranslate2.__version__)\n\
         print(\"value\", ctranslate2.value())\n\
         print(\"plugin\", ctranslate2.plugin_value())\n",
    )
    .unwrap();
    // The .spec goes to a folder of its own, as a project's would: the hook's absolute paths
    // must not depend on where the .spec is.
    let freeze = |name: &str, hooks: bool| -> PathBuf {
        let mut command = Command::new(bin.join("pyinstaller"));
        command
            .current_dir(&app_dir)
            .args([
                "--noconfirm",
                "--onedir",
                "--log-level",
                "WARN",
                "--name",
                name,
            ])
            .arg("--distpath")
            .arg(dir.path().join("dist"))
            .arg("--workpath")
            .arg(dir.path().join("build"))
            .arg("--specpath")
            .arg(dir.path().join("specs"))
            .arg("--paths")
            .arg(portable.join("_internal"));
        if hooks {
            command.arg("--additional-hooks-dir").arg(&portable);
        }
        run_ok(command.arg("app.py"));
        dir.path().join("dist").join(name).join(name)
    };
    let run = |exe: &Path| {
        Command::new(exe)
            .env_remove("LD_LIBRARY_PATH")
            .env_remove("PYTHONPATH")
            .current_dir(dir.path())
            .output()
            .unwrap()
    };

    let exe = freeze("app", true);
    let output = run(&exe);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(stdout, "ctranslate2 4.7.1\nvalue 42\nplugin 7\n");

    // Without the hook the run-time plugin is not collected and the frozen app fails: the
    // hook is what brings it.
    let bare = freeze("bare", false);
    let output = run(&bare);
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("libsdk_plugin.so"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// delvewheel's `show` on the official ctranslate2 4.7.1 win_amd64 wheel, given the wheel's
/// own DLL folder and the pinned msvc-runtime wheel's, against our closure of the same wheel
/// with the same folder: every DLL delvewheel would copy in is in ours, and the only ones we
/// add beyond it are vcruntime140*.dll, which delvewheel assumes present because CPython
/// ships them (we bundle them: a binary built with a newer MSVC needs a runtime at least as
/// new, so crates/bundle/policy/windows.txt does not count them as the system's).
#[test]
fn delvewheel_agrees_with_our_closure_of_the_official_windows_wheel() {
    needs_network!(HOSTS);
    let bin = venv("delvewheel", &["delvewheel==1.13.0"]);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for spec in ["ctranslate2==4.7.1", "msvc-runtime==14.51.36231"] {
        run_ok(Command::new(bin.join("python")).args([
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary=:all:",
            "--platform",
            "win_amd64",
            "--python-version",
            "3.12",
            "-d",
            d.to_str().unwrap(),
            spec,
        ]));
    }
    let wheel = d.join("ctranslate2-4.7.1-cp312-cp312-win_amd64.whl");
    let runtime_wheel = d.join("msvc_runtime-14.51.36231-cp312-cp312-win_amd64.whl");
    let limits = ct2v_fetch::unpack::Limits::default();
    for (from, to) in [(&wheel, "official"), (&runtime_wheel, "runtime")] {
        ct2v_fetch::unpack::unpack(
            from,
            ct2v_fetch::unpack::ArchiveFormat::Zip,
            None,
            &d.join(to),
            &limits,
            &Reporter::captured(),
        )
        .unwrap();
    }
    let own = d.join("official/ctranslate2");
    let runtime = d.join("runtime/msvc_runtime-14.51.36231.data/data/Scripts");

    let shown = run_ok(
        Command::new(bin.join("delvewheel"))
            .arg("show")
            .arg("--add-path")
            .arg(format!("{}:{}", own.display(), runtime.display()))
            .arg(&wheel),
    );
    let text = String::from_utf8_lossy(&shown.stdout).into_owned();
    let section = |title: &str| -> std::collections::BTreeSet<String> {
        text.split(title)
            .nth(1)
            .unwrap_or("")
            .lines()
            .skip(1)
            .take_while(|l| l.starts_with("    "))
            .filter_map(|l| l.split_whitespace().next())
            .map(str::to_lowercase)
            .collect()
    };
    let copied = section("will be copied into the wheel.");
    let assumed = section("assumed to be present");
    let in_wheel: std::collections::BTreeSet<String> = fs::read_dir(&own)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_lowercase())
        .collect();
    let delvewheel_adds: Vec<&String> = copied.difference(&in_wheel).collect();
    assert!(!delvewheel_adds.is_empty(), "{text}");

    let out = d.join("ours");
    let run = common::xtask(&[
        "bundle",
        "--wheel",
        wheel.to_str().unwrap(),
        "--binary",
        "ctranslate2/*.dll",
        "--binary",
        "ctranslate2/_ext*.pyd",
        "--search",
        &format!("{}=ctranslate2", runtime.display()),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("provenance.json")).unwrap()).unwrap();
    let ours: std::collections::BTreeSet<String> = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let path = f["path"].as_str().unwrap();
            path.rsplit('/').next().unwrap().to_lowercase()
        })
        .collect();
    for dll in &delvewheel_adds {
        assert!(
            ours.contains(*dll),
            "delvewheel adds {dll}, we do not: {ours:?}\n{text}"
        );
    }
    for extra in ours.iter().filter(|d| !copied.contains(*d)) {
        assert!(
            extra.starts_with("vcruntime140") && assumed.contains(extra),
            "we add {extra}, which delvewheel neither copies nor assumes present from CPython:\n{text}"
        );
    }
}
