//! `bundle` of a manylinux wheel whose library needs two SDK libraries (built with gcc,
//! linked with no rpath): the fat wheel gets them in `ctranslate2.libs/` with
//! `$ORIGIN`-relative RUNPATHs, and a fresh process with no `LD_LIBRARY_PATH` loads the
//! unpacked wheel's library and calls through the whole chain.

use crate::common;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use common::wheel::{
    ct2_dist_info, dist_info, read_report, report_files, unzip, zip_names, zip_wheel,
};
use common::{run_ok, stdout_and_stderr};

const WHEEL: &str = "ctranslate2-4.7.1-cp312-cp312-manylinux_2_28_x86_64.whl";

/// `VIA_LIBC(x)` is `x`, by way of a call into libc: every library needs `libc.so.6`, as real
/// ones do, even where gcc links with `--as-needed`.
const VIA_LIBC: &str =
    "#include <stdlib.h>\n#define VIA_LIBC(x) (getenv(\"CT2_NO_SUCH_VARIABLE\") ? -1000 : (x))\n";

/// `bundle --wheel WHEEL --out OUT --search LIB=ctranslate2.libs`, plus `extra`.
fn bundle_searching(wheel: &Path, out: &Path, lib: &Path, extra: &[&str]) -> common::Run {
    let search = format!("{}=ctranslate2.libs", lib.display());
    let search = ["--search", &search];
    let args = common::command_args::bundle(wheel, out, &[&search[..], extra].concat());
    common::xtask(&args)
}

fn available() -> bool {
    for tool in ["gcc", "patchelf", "python3"] {
        if common::skip::missing(tool, &format!("apt-get install {tool}")) {
            return false;
        }
    }
    true
}

/// `gcc -shared -fPIC` of `code` into `out`, linked with `-L<lib_dir> -l<lib>` for each lib
/// (no rpath: the SDK libraries are found only where the bundle puts them).
fn gcc(out: &Path, code: &str, lib_dir: &Path, libs: &[&str]) {
    gcc_with(out, code, lib_dir, libs, &[]);
}

/// `gcc` with extra flags (an rpath, -ldl).
fn gcc_with(out: &Path, code: &str, lib_dir: &Path, libs: &[&str], extra: &[&str]) {
    let source = out.with_extension("c");
    fs::write(&source, format!("{VIA_LIBC}{code}")).unwrap();
    run_ok(
        Command::new("gcc")
            .args(["-shared", "-fPIC", "-o"])
            .arg(out)
            .arg(&source)
            .arg(format!("-L{}", lib_dir.display()))
            .args(libs.iter().map(|l| format!("-l{l}")))
            .args(extra),
    );
    fs::remove_file(source).unwrap();
}

struct Sdk {
    wheel: PathBuf,
    lib: PathBuf,
    wheel_files: BTreeSet<String>,
}

fn sdk(dir: &Path) -> Sdk {
    let sdk = dir.join("sdk");
    let lib = sdk.join("lib");
    fs::create_dir_all(&lib).unwrap();
    dist_info(&sdk.join("sdk_pkg-1.0.dist-info"), "sdk_pkg", "1.0");
    gcc(
        &lib.join("libsdk_core.so"),
        "int core_value(void) { return VIA_LIBC(40); }\n",
        &lib,
        &[],
    );
    gcc(
        &lib.join("libsdk_blas.so"),
        "int core_value(void);\nint blas_value(void) { return VIA_LIBC(core_value() + 1); }\n",
        &lib,
        &["sdk_core"],
    );
    gcc(
        &lib.join("libsdk_unused.so"),
        "int unused_value(void) { return 0; }\n",
        &lib,
        &[],
    );

    let tree = dir.join("wheel-tree");
    let package = tree.join("ctranslate2");
    fs::create_dir_all(&package).unwrap();
    gcc(
        &package.join("libctranslate2.so"),
        "int blas_value(void);\nint ct2_value(void) { return VIA_LIBC(blas_value() + 1); }\n",
        &lib,
        &["sdk_blas"],
    );
    fs::write(package.join("__init__.py"), "__version__ = \"4.7.1\"\n").unwrap();
    ct2_dist_info(&tree, Some("cp312-cp312-manylinux_2_28_x86_64"));
    let wheel = dir.join("in").join(WHEEL);
    let wheel_files = zip_wheel(&tree, &wheel);
    Sdk {
        wheel,
        lib,
        wheel_files,
    }
}

/// Loads `library` with ctypes in a fresh python3 with no `LD_LIBRARY_PATH`, and calls
/// `ct2_value()`.
fn load(library: &Path) -> (bool, String) {
    let script = format!(
        "import ctypes\nlib = ctypes.CDLL({:?})\nprint('LOADED')\n\
         print('VALUE', lib.ct2_value())\n",
        library.to_str().unwrap()
    );
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("LD_PRELOAD")
        .output()
        .unwrap();
    (out.status.success(), stdout_and_stderr(&out))
}

#[test]
fn sdk_libraries_get_origin_runpaths_and_load_without_ld_library_path() {
    if !available() {
        return;
    }
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let sdk = sdk(dir.path());
    let out = dir.path().join("out");
    let bundle_into = |out: &Path| {
        let extra = ["--output", "fat-wheel", "--output", "report"];
        let run = bundle_searching(&sdk.wheel, out, &sdk.lib, &extra);
        assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    };
    bundle_into(&out);
    let bundled = started.elapsed();

    // Reproducible: the same inputs bundled again give byte-identical outputs.
    let again = dir.path().join("again");
    bundle_into(&again);
    for name in [WHEEL, "provenance.json", "provenance.md"] {
        assert_eq!(
            fs::read(out.join(name)).unwrap(),
            fs::read(again.join(name)).unwrap(),
            "{name} differs between two runs"
        );
    }

    // Exactly the two SDK libraries are added: not the decoy, not the system's.
    let fat = out.join(WHEEL);
    let mut expected = sdk.wheel_files.clone();
    expected.insert("ctranslate2.libs/libsdk_blas.so".to_string());
    expected.insert("ctranslate2.libs/libsdk_core.so".to_string());
    assert_eq!(zip_names(&fat), expected);
    assert_eq!(
        ct2v_bundle::wheel::check_record(&fat).unwrap(),
        Vec::<String>::new()
    );
    let outputs: BTreeSet<String> = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != ct2v_support::owned_output::RECORD)
        .collect();
    assert_eq!(
        outputs,
        BTreeSet::from([
            WHEEL.to_string(),
            "provenance.json".to_string(),
            "provenance.md".to_string()
        ]),
        "no portable folder unless asked for"
    );
    let report = read_report(&out);
    assert_eq!(
        report_files(&report),
        [
            (
                "ctranslate2.libs/libsdk_blas.so",
                "sdk_pkg 1.0",
                "libctranslate2.so"
            ),
            (
                "ctranslate2.libs/libsdk_core.so",
                "sdk_pkg 1.0",
                "libsdk_blas.so"
            ),
        ]
    );
    assert!(
        report["system"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s == "libc.so.6"),
        "{report}"
    );

    // The tag the bundle proved, as auditwheel computes it (this host's gcc links these
    // small C files against GLIBC_2.2.5 symbols only).
    assert_eq!(
        report["platform_tag"]["tag"], "manylinux_2_28_x86_64",
        "{report}"
    );
    assert!(
        report["platform_tag"]["proven"]
            .as_str()
            .is_some_and(|t| t.starts_with("manylinux_")),
        "{report}"
    );

    // RUNPATHs: relative to each file's own folder, no build-machine paths.
    let site = dir.path().join("site");
    unzip(&fat, &site);
    let runpath = |path: &str| {
        let info = ct2v_bundle::binary::read(&site.join(path)).unwrap();
        assert!(info.rpath.is_empty(), "{path}: DT_RPATH {:?}", info.rpath);
        info.runpath
    };
    assert_eq!(
        runpath("ctranslate2/libctranslate2.so"),
        ["$ORIGIN/../ctranslate2.libs"]
    );
    assert_eq!(runpath("ctranslate2.libs/libsdk_blas.so"), ["$ORIGIN"]);
    assert_eq!(
        ct2v_bundle::binary::read(&site.join("ctranslate2/libctranslate2.so"))
            .unwrap()
            .imports,
        ["libsdk_blas.so", "libc.so.6"]
    );

    // A fresh process with no LD_LIBRARY_PATH loads it and calls through the chain:
    // ct2_value = blas_value + 1 = core_value + 2 = 42.
    let library = site.join("ctranslate2/libctranslate2.so");
    let (ok, output) = load(&library);
    assert!(ok, "{output}");
    assert!(output.contains("LOADED\nVALUE 42\n"), "{output}");

    // The input wheel's library, unpatched, does not load: the RUNPATH is what finds them.
    let plain = dir.path().join("plain");
    unzip(&sdk.wheel, &plain);
    let (ok, output) = load(&plain.join("ctranslate2/libctranslate2.so"));
    assert!(!ok, "{output}");
    assert!(output.contains("libsdk_blas.so"), "{output}");

    // Without a bundled library the load fails, naming it.
    fs::remove_file(site.join("ctranslate2.libs/libsdk_core.so")).unwrap();
    let (ok, output) = load(&library);
    assert!(!ok, "{output}");
    assert!(
        output.contains("libsdk_core.so: cannot open shared object file"),
        "{output}"
    );
    eprintln!(
        "bundled in {:.1?}, loaded in {:.1?}",
        bundled,
        started.elapsed() - bundled
    );
}

#[test]
fn run_time_plugins_load_build_paths_go_and_read_only_sdk_files_are_patched() {
    if !available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let lib = dir.path().join("sdk/lib");
    fs::create_dir_all(&lib).unwrap();
    gcc_with(
        &lib.join("libsdk_plugin.so"),
        "int plugin_answer(void) { return VIA_LIBC(41); }\n",
        &lib,
        &[],
        &[],
    );
    // Loads the plugin with dlopen by name (no import table names it), and carries the build
    // machine's library folder as an absolute RPATH.
    gcc_with(
        &lib.join("libsdk_core.so"),
        "#include <dlfcn.h>\nint core_value(void) {\n  void *h = dlopen(\"libsdk_plugin.so\", RTLD_NOW);\n  \
         if (!h) return -1;\n  int (*f)(void) = (int (*)(void))dlsym(h, \"plugin_answer\");\n  \
         return VIA_LIBC(f ? f() + 1 : -2);\n}\n",
        &lib,
        &["dl"],
        &["-Wl,-rpath,/opt/build-machine/lib"],
    );
    let tree = dir.path().join("tree");
    fs::create_dir_all(tree.join("ctranslate2")).unwrap();
    gcc_with(
        &tree.join("ctranslate2/libctranslate2.so"),
        "int core_value(void);\nint ct2_value(void) { return VIA_LIBC(core_value()); }\n",
        &lib,
        &["sdk_core"],
        &[],
    );
    ct2_dist_info(&tree, None);
    let wheel = dir.path().join("in").join(WHEEL);
    zip_wheel(&tree, &wheel);
    // SDK files as some packages ship them: read-only.
    for name in ["libsdk_core.so", "libsdk_plugin.so"] {
        let path = lib.join(name);
        let mut permissions = fs::metadata(&path).unwrap().permissions();
        permissions.set_readonly(true);
        fs::set_permissions(&path, permissions).unwrap();
    }

    let out = dir.path().join("out");
    let run = bundle_searching(
        &wheel,
        &out,
        &lib,
        &[
            "--force",
            "libsdk_plugin*.so",
            "--output",
            "fat-wheel",
            "--output",
            "report",
            // dlopen is GLIBC_2.34 on this host's glibc: the tag is not provable here, and this
            // test is about loading, so the wheel keeps a linux tag.
            "--keep-linux-tag",
        ],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let report = read_report(&out);
    assert_eq!(report["platform_tag"]["tag"], "linux_x86_64", "{report}");

    let site = dir.path().join("site");
    unzip(
        &out.join(WHEEL.replace("manylinux_2_28_x86_64", "linux_x86_64")),
        &site,
    );
    let core = ct2v_bundle::binary::read(&site.join("ctranslate2.libs/libsdk_core.so")).unwrap();
    assert!(core.rpath.is_empty(), "{:?}", core.rpath);
    assert_eq!(
        core.runpath,
        ["$ORIGIN"],
        "the build machine's folder is gone"
    );
    let root = ct2v_bundle::binary::read(&site.join("ctranslate2/libctranslate2.so")).unwrap();
    assert_eq!(root.runpath, ["$ORIGIN/../ctranslate2.libs"]);

    // ct2_value = core_value = plugin_answer + 1, the plugin found by dlopen via RUNPATH.
    let (ok, output) = load(&site.join("ctranslate2/libctranslate2.so"));
    assert!(ok, "{output}");
    assert!(output.contains("LOADED\nVALUE 42\n"), "{output}");

    // The report describes the files as shipped (patched), not the SDK's originals.
    for file in report["files"].as_array().unwrap() {
        let path = site.join(file["path"].as_str().unwrap());
        let (sha256, size) = ct2v_fetch::cache::sha256_file(&path).unwrap();
        assert_eq!(file["sha256"], sha256.as_str(), "{path:?}");
        assert_eq!(file["size"], size, "{path:?}");
    }
}

#[test]
fn nothing_to_add_rewrites_nothing_saves_nothing_and_folders_are_named_without_paths() {
    if !available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let lib = dir.path().join("plainlib"); // no .dist-info anywhere above it
    fs::create_dir_all(&lib).unwrap();
    gcc(
        &lib.join("libx.so"),
        "int x(void) { return VIA_LIBC(1); }\n",
        &lib,
        &[],
    );
    let tree = dir.path().join("tree");
    let package = tree.join("ctranslate2");
    fs::create_dir_all(&package).unwrap();
    // An RPATH (not RUNPATH) of $ORIGIN, as CTranslate2's setup.py links _ext.
    gcc_with(
        &package.join("libctranslate2.so"),
        "int ct2_value(void) { return VIA_LIBC(1); }\n",
        &lib,
        &[],
        &["-Wl,--disable-new-dtags,-rpath,$ORIGIN"],
    );
    ct2_dist_info(&tree, Some("cp312-cp312-linux_x86_64"));
    let wheel = dir
        .path()
        .join("in/ctranslate2-4.7.1-cp312-cp312-linux_x86_64.whl");
    zip_wheel(&tree, &wheel);
    let bundle = |wheel: &Path, out: &Path| {
        let run = bundle_searching(wheel, out, &lib, &[]);
        assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
        run
    };

    let out = dir.path().join("out");
    let run = bundle(&wheel, &out);
    let fat = out.join(WHEEL);
    let site = dir.path().join("site");
    unzip(&fat, &site);
    assert_eq!(
        fs::read(site.join("ctranslate2/libctranslate2.so")).unwrap(),
        fs::read(package.join("libctranslate2.so")).unwrap(),
        "nothing bundled: the binary is left byte for byte (its RPATH stays an RPATH)"
    );
    let report = read_report(&out);
    assert_eq!(report["bundled_bytes"], 0, "{report}");
    assert_eq!(
        report["sdk_bytes"], 0,
        "a search folder nothing came from counts nothing"
    );
    assert!(
        run.stdout.contains("(none from an SDK package)"),
        "{}",
        run.stdout
    );

    // A library taken from a folder that is no package: named by its number and name.
    gcc(
        &package.join("libctranslate2.so"),
        "int x(void);\nint ct2_value(void) { return VIA_LIBC(x()); }\n",
        &lib,
        &["x"],
    );
    let wheel2 = dir
        .path()
        .join("in2/ctranslate2-4.7.1-cp312-cp312-linux_x86_64.whl");
    zip_wheel(&tree, &wheel2);
    let out2 = dir.path().join("out2");
    bundle(&wheel2, &out2);
    let report = read_report(&out2);
    assert_eq!(
        report["files"][0]["package"], "search folder 1: plainlib",
        "{report}"
    );
    let markdown = fs::read_to_string(out2.join("provenance.md")).unwrap();
    let machine_path = dir.path().to_string_lossy().into_owned();
    assert!(!markdown.contains(&machine_path), "{markdown}");
    assert!(
        !fs::read_to_string(out2.join("provenance.json"))
            .unwrap()
            .contains(&machine_path)
    );
}

/// An install that went to `lib64` (GNUInstallDirs off Debian) while the search says `lib`:
/// the error names what the prefix does hold.
#[test]
fn a_missing_search_folder_names_the_folders_beside_it() {
    if !available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let sdk = sdk(dir.path());
    let prefix = dir.path().join("prefix");
    fs::create_dir_all(prefix.join("lib64")).unwrap();
    fs::create_dir_all(prefix.join("include")).unwrap();
    let out = dir.path().join("out");
    let run = bundle_searching(&sdk.wheel, &out, &prefix.join("lib"), &[]);
    assert_ne!(run.code, 0, "{}", run.stdout);
    let expected = format!(
        "`{}` does not exist; {} holds include/, lib64/",
        prefix.join("lib").display(),
        prefix.display()
    );
    assert!(run.stderr.contains(&expected), "{}", run.stderr);
}
