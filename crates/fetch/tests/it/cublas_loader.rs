//! Where the cuda variant's CTranslate2 loads cuBLAS from. The loader its patch
//! adds (`src/cuda/cublas_loader.h`, created by
//! patches/ctranslate2-*/0003-cuda-load-cublas-from-the-nvidia-wheel.patch) is taken from the
//! patch itself, compiled into a stand-in for libctranslate2 / ctranslate2.dll, and run
//! against stand-in cuBLAS libraries laid out as NVIDIA's wheels lay them out: with gcc and
//! the Linux loader, and with mingw-w64 under wine's Windows loader.
//!
//! | fact the stand-ins follow | source |
//! |---|---|
//! | CUDA 12 wheel: `nvidia/cublas/lib/libcublas.so.12` + `libcublasLt.so.12`; `nvidia/cublas/bin/cublas64_12.dll` + `cublasLt64_12.dll` | nvidia-cublas-cu12 12.8.4.1 (PyPI): RECORD and zip listing of the manylinux and win_amd64 wheels |
//! | CUDA 13 wheel (package `nvidia-cublas`): `nvidia/cu13/lib/libcublas.so.13`, `nvidia/cu13/bin/x86_64/cublas64_13.dll` | nvidia-cublas 13.0.2.14 zip listing; pytorch/pytorch PR #163661; microsoft/onnxruntime PR #29202 |
//! | `libcublas.so.N` needs `libcublasLt.so.N` and has RUNPATH `$ORIGIN` | the ELF dynamic section of both wheels' libcublas |
//! | `cublas64_N.dll` imports `cublasLt64_N.dll` (no delay-load) | the PE import table of both wheels' cublas64 |
//! | CTranslate2's own search: `SetDllDirectoryA(%CUDA_PATH%\bin)` then `LoadLibraryA`; `dlopen` by bare name | OpenNMT/CTranslate2 v4.7.1 `src/cuda/cublas_stub.cc` |
//! | a DLL loaded by full path finds its imports in its own folder only with `LOAD_WITH_ALTERED_SEARCH_PATH` (or `LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR`) | Microsoft, "Dynamic-link library search order" and `LoadLibraryExA` |

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::mingw::{self, Prefix};
use common::{run_ok, stdout_and_stderr};

const HEADER: &str = "src/cuda/cublas_loader.h";
const PATCH: &str = "0003-cuda-load-cublas-from-the-nvidia-wheel.patch";
const MINGW_GXX: &str = "x86_64-w64-mingw32-g++";

/// The loader as the patch of `version` adds it.
fn header(version: &str) -> String {
    let patch = common::repo_root()
        .join(format!("patches/ctranslate2-{version}"))
        .join(PATCH);
    ct2v_fetch::patch::created_file(&patch, HEADER).unwrap()
}

#[test]
fn both_versions_patches_add_the_same_loader() {
    let loader = header("4.7.1");
    assert!(loader.contains("LOAD_WITH_ALTERED_SEARCH_PATH"), "{loader}");
    assert_eq!(loader, header("4.8.4"));
}

/// The stand-in for libctranslate2: the loader, and `probe_load(major)`, which says what it
/// loaded (the file, and the stand-in's `standin_origin()`), or the error.
const PROBE_LIBRARY: &str = r#"#include "cublas_loader.h"
#ifdef _WIN32
#  define EXPORT extern "C" __declspec(dllexport)
#else
#  define EXPORT extern "C" __attribute__((visibility("default")))
#endif
static std::string said;
EXPORT const char* probe_load(int major) {
  const auto loaded = ctranslate2::cublas_loader::load(major);
  if (!loaded.handle) {
    said = "ERROR " + loaded.error;
    return said.c_str();
  }
#ifdef _WIN32
  auto origin = reinterpret_cast<const char* (*)()>(reinterpret_cast<void*>(
      GetProcAddress(static_cast<HMODULE>(loaded.handle), "standin_origin")));
#else
  auto origin = (const char* (*)())dlsym(loaded.handle, "standin_origin");
#endif
  said = "LOADED " + loaded.file + " ORIGIN " + (origin ? origin() : "?");
  return said.c_str();
}
"#;

/// A stand-in cuBLAS: `cublasGetProperty` (what CTranslate2 calls first), `standin_origin`
/// (which copy this is) and a call into cuBLASLt, so that its import of cuBLASLt is real.
fn cublas_source(origin: &str) -> String {
    format!(
        r#"#ifdef _WIN32
#  define EXPORT __declspec(dllexport)
#  define IMPORT __declspec(dllimport)
#else
#  define EXPORT __attribute__((visibility("default")))
#  define IMPORT
#endif
IMPORT int cublasLt_marker(void);
EXPORT int cublasGetProperty(int type, int* value) {{ *value = type == 0 ? 12 : 8; return cublasLt_marker() - 1; }}
EXPORT const char* standin_origin(void) {{ return "{origin}"; }}
"#
    )
}

const CUBLASLT_SOURCE: &str = r#"#ifdef _WIN32
__declspec(dllexport)
#endif
int cublasLt_marker(void) { return 1; }
"#;

/// `dir/src/` with the loader, the stand-in libctranslate2 and `main` (the program that loads
/// it), for either platform's compiler.
fn sources(dir: &Path, main: &str) -> PathBuf {
    let src = dir.join("src");
    fs::create_dir_all(&src).unwrap();
    fs::write(src.join("cublas_loader.h"), header("4.7.1")).unwrap();
    fs::write(src.join("probe.cc"), PROBE_LIBRARY).unwrap();
    fs::write(src.join("main.c"), main).unwrap();
    src
}

/// The probe library of `src` built by `compiler` at `probe`, warnings as errors, with
/// `flag` (how a shared library is made there) and the libraries it links (`libs`).
fn build_probe(src: &Path, probe: &Path, compiler: &str, flag: &str, libs: &[&str]) {
    fs::create_dir_all(probe.parent().unwrap()).unwrap();
    run_ok(
        Command::new(compiler)
            .args(["-std=c++17", "-Wall", "-Wextra", "-Werror", "-shared", flag])
            .arg("-o")
            .arg(probe)
            .arg(src.join("probe.cc"))
            .args(libs),
    );
}

// ---------------------------------------------------------------------------------------
// Linux: gcc, the glibc loader.

struct Linux {
    dir: tempfile::TempDir,
    main: PathBuf,
    probe: PathBuf,
}

const LINUX_MAIN: &str = r#"#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char** argv) {
  void* probe = dlopen(argv[1], RTLD_NOW);
  if (!probe) { printf("NO PROBE %s\n", dlerror()); return 1; }
  const char* (*load)(int) = (const char* (*)(int))dlsym(probe, "probe_load");
  puts(load(atoi(argv[2])));
  return 0;
}
"#;

impl Linux {
    /// The probe and the stand-in for libctranslate2, built once per test.
    fn new() -> Linux {
        let dir = tempfile::tempdir().unwrap();
        let src = sources(dir.path(), LINUX_MAIN);
        let probe = dir.path().join("build/libprobe.so");
        build_probe(&src, &probe, "g++", "-fPIC", &["-ldl"]);
        let main = dir.path().join("build/main");
        run_ok(
            Command::new("gcc")
                .arg("-o")
                .arg(&main)
                .arg(src.join("main.c"))
                .arg("-ldl"),
        );
        Linux { dir, main, probe }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// `libcublas.so.<major>` and its `libcublasLt` in `folder` (below the scratch), as
    /// NVIDIA builds them: NEEDED libcublasLt, RUNPATH $ORIGIN. `with_lt: false` leaves
    /// cuBLASLt out, so that the library is there but cannot be loaded.
    fn cublas(&self, folder: &str, major: u32, origin: &str, with_lt: bool) {
        let dir = self.path(folder);
        fs::create_dir_all(&dir).unwrap();
        let src = self.path(&format!("src/{origin}-{major}"));
        fs::create_dir_all(&src).unwrap();
        let lt = format!("libcublasLt.so.{major}");
        fs::write(src.join("lt.c"), CUBLASLT_SOURCE).unwrap();
        fs::write(src.join("cublas.c"), cublas_source(origin)).unwrap();
        run_ok(
            Command::new("gcc")
                .args(["-shared", "-fPIC"])
                .arg(format!("-Wl,-soname,{lt}"))
                .arg("-o")
                .arg(dir.join(&lt))
                .arg(src.join("lt.c")),
        );
        run_ok(
            Command::new("gcc")
                .args(["-shared", "-fPIC"])
                .arg(format!("-Wl,-soname,libcublas.so.{major}"))
                .arg("-Wl,--enable-new-dtags,-rpath,$ORIGIN")
                .arg("-o")
                .arg(dir.join(format!("libcublas.so.{major}")))
                .arg(src.join("cublas.c"))
                .arg(format!("-L{}", dir.display()))
                .arg(format!("-l:{lt}")),
        );
        if !with_lt {
            fs::remove_file(dir.join(lt)).unwrap();
        }
    }

    /// Puts the stand-in libctranslate2 at `rel` and runs `probe_load(major)` from `cwd`
    /// with only `ld_library_path` (if any) for the loader.
    fn load(&self, rel: &str, major: u32, ld_library_path: Option<&str>, cwd: &Path) -> String {
        let at = self.path(rel);
        fs::create_dir_all(at.parent().unwrap()).unwrap();
        fs::copy(&self.probe, &at).unwrap();
        let mut cmd = Command::new(&self.main);
        cmd.arg(&at)
            .arg(major.to_string())
            .current_dir(cwd)
            .env_clear();
        if let Some(dirs) = ld_library_path {
            cmd.env("LD_LIBRARY_PATH", self.path(dirs));
        }
        let out = cmd.output().unwrap();
        stdout_and_stderr(&out).trim().to_string()
    }
}

#[test]
fn linux_the_wheel_next_to_ctranslate2_first_then_the_library_path_then_a_clear_error() {
    let t = Linux::new();
    let root = t.path("");
    let site = "venv/lib/python3.12/site-packages";
    let library = format!("{site}/ctranslate2.libs/libctranslate2.so.4");
    t.cublas("toolkit/lib64", 12, "toolkit", true);

    // Neither: CTranslate2's error, and what was looked for.
    let none = t.load(&library, 12, None, &root);
    assert!(
        none.starts_with(
            "ERROR Library libcublas.so.12 is not found or cannot be loaded (looked for the \
             nvidia-cublas-cu12 package next to CTranslate2, then on the library search path)"
        ),
        "{none}"
    );
    assert!(
        none.ends_with("Install it with: pip install \"nvidia-cublas-cu12\""),
        "{none}"
    );

    // Only a toolkit on the library path: found there, as before the patch.
    let toolkit = t.load(&library, 12, Some("toolkit/lib64"), &root);
    assert_eq!(
        toolkit,
        format!(
            "LOADED {} ORIGIN toolkit",
            t.path("toolkit/lib64/libcublas.so.12").display()
        )
    );

    // The wheel installed: it wins over the toolkit, and its cuBLASLt is found beside it.
    t.cublas(&format!("{site}/nvidia/cublas/lib"), 12, "wheel", true);
    let wheel = t.path(&format!("{site}/nvidia/cublas/lib/libcublas.so.12"));
    let expected = format!("LOADED {} ORIGIN wheel", wheel.display());
    assert_eq!(t.load(&library, 12, Some("toolkit/lib64"), &root), expected);
    // Whichever folder of site-packages holds the library (the official wheel's layout has
    // it in ctranslate2/), and whatever the current directory is.
    let in_package = format!("{site}/ctranslate2/libctranslate2.so.4");
    assert_eq!(t.load(&in_package, 12, None, &t.path("toolkit")), expected);

    // CUDA 13's wheel has its own folder; asked for 13, it is found there.
    t.cublas(&format!("{site}/nvidia/cu13/lib"), 13, "wheel13", true);
    let cu13 = t.load(&library, 13, None, &root);
    assert_eq!(
        cu13,
        format!(
            "LOADED {} ORIGIN wheel13",
            t.path(&format!("{site}/nvidia/cu13/lib/libcublas.so.13"))
                .display()
        )
    );
}

#[test]
fn linux_a_wheel_of_the_wrong_cuda_or_a_broken_one_is_named_and_the_current_directory_is_never_searched()
 {
    let t = Linux::new();
    let site = "site-packages";
    let library = format!("{site}/ctranslate2/libctranslate2.so.4");

    // Only CUDA 13's wheel beside a CUDA 12 build: the error names both majors.
    t.cublas(&format!("{site}/nvidia/cu13/lib"), 13, "wheel13", true);
    let wrong = t.load(&library, 12, None, &t.path(""));
    assert!(
        wrong.starts_with("ERROR Library libcublas.so.12"),
        "{wrong}"
    );
    assert!(
        wrong.contains(&format!(
            "Found cuBLAS 13 at {}, but this CTranslate2 was built against cuBLAS 12",
            t.path(&format!("{site}/nvidia/cu13/lib/libcublas.so.13"))
                .display()
        )),
        "{wrong}"
    );

    // A cuBLAS 12 wheel whose cuBLASLt is missing (and none on the library path): named in
    // the error, with the loader's reason.
    t.cublas(&format!("{site}/nvidia/cublas/lib"), 12, "broken", false);
    let broken = t.load(&library, 12, None, &t.path(""));
    assert!(
        broken.contains(&format!(
            "present but not loadable: {} (libcublasLt.so.12",
            t.path(&format!("{site}/nvidia/cublas/lib/libcublas.so.12"))
                .display()
        )),
        "{broken}"
    );

    // A cuBLAS in the current directory's nvidia/ is not CTranslate2's: never loaded.
    t.cublas("cwd/nvidia/cublas/lib", 12, "cwd", true);
    let elsewhere = "elsewhere/ctranslate2/libctranslate2.so.4";
    let cwd = t.load(elsewhere, 12, None, &t.path("cwd"));
    assert!(cwd.starts_with("ERROR Library libcublas.so.12"), "{cwd}");
}

// ---------------------------------------------------------------------------------------
// Windows: mingw-w64, wine's loader.

const WINDOWS_MAIN: &str = r#"#include <windows.h>
#include <stdio.h>
#include <stdlib.h>
typedef const char* (*load_fn)(int);
int wmain(int argc, wchar_t** argv) {
  HMODULE probe = LoadLibraryExW(argv[1], NULL, LOAD_WITH_ALTERED_SEARCH_PATH);
  if (!probe) { printf("NO PROBE %lu\n", GetLastError()); return 1; }
  load_fn load = (load_fn)GetProcAddress(probe, "probe_load");
  puts(load(_wtoi(argv[2])));
  return 0;
}
"#;

struct Windows {
    dir: tempfile::TempDir,
    prefix: Prefix,
    main: PathBuf,
    probe: PathBuf,
}

impl Windows {
    fn new() -> Option<Windows> {
        if !mingw::available(true)
            || common::skip::missing(MINGW_GXX, "apt-get install g++-mingw-w64-x86-64")
        {
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let src = sources(dir.path(), WINDOWS_MAIN);
        let probe = dir.path().join("build/probe.dll");
        build_probe(&src, &probe, MINGW_GXX, "-static", &[]);
        // Alone in its folder: the application's folder is searched first.
        let main = dir.path().join("app/main.exe");
        fs::create_dir_all(main.parent().unwrap()).unwrap();
        run_ok(
            Command::new(mingw::GCC)
                .arg("-municode")
                .arg("-o")
                .arg(&main)
                .arg(src.join("main.c")),
        );
        Some(Windows {
            dir,
            prefix: Prefix::new(),
            main,
            probe,
        })
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// `cublas64_<major>.dll` importing `cublasLt64_<major>.dll`, both in `folder`.
    fn cublas(&self, folder: &str, major: u32, origin: &str) {
        let dir = self.path(folder);
        fs::create_dir_all(&dir).unwrap();
        let src = self.path(&format!("src/{origin}-{major}"));
        fs::create_dir_all(&src).unwrap();
        fs::write(src.join("lt.c"), CUBLASLT_SOURCE).unwrap();
        fs::write(src.join("cublas.c"), cublas_source(origin)).unwrap();
        let implib = src.join("libcublasLt.a");
        run_ok(
            Command::new(mingw::GCC)
                .arg("-shared")
                .arg("-o")
                .arg(dir.join(format!("cublasLt64_{major}.dll")))
                .arg(src.join("lt.c"))
                .arg(format!("-Wl,--out-implib,{}", implib.display())),
        );
        run_ok(
            Command::new(mingw::GCC)
                .arg("-shared")
                .arg("-o")
                .arg(dir.join(format!("cublas64_{major}.dll")))
                .arg(src.join("cublas.c"))
                .arg(&implib),
        );
    }

    /// Puts the stand-in ctranslate2.dll at `rel` and runs `probe_load(major)` under wine,
    /// with `CUDA_PATH` set to `cuda_path` (below the scratch) if given.
    fn load(&self, rel: &str, major: u32, cuda_path: Option<&str>) -> String {
        let at = self.path(rel);
        fs::create_dir_all(at.parent().unwrap()).unwrap();
        fs::copy(&self.probe, &at).unwrap();
        let mut cmd = Command::new("wine");
        cmd.arg(&self.main)
            .arg(mingw::windows_path(&at))
            .arg(major.to_string())
            .env("WINEPREFIX", self.prefix.path())
            .env("WINEDEBUG", "-all")
            .env("WINEDLLOVERRIDES", "mscoree,mshtml=")
            .env_remove("CUDA_PATH")
            .env_remove("DISPLAY");
        if let Some(dir) = cuda_path {
            cmd.env("CUDA_PATH", mingw::windows_path(&self.path(dir)));
        }
        let out = cmd.output().unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

#[test]
fn windows_the_wheel_next_to_ctranslate2_first_then_cuda_path_then_a_clear_error() {
    let Some(t) = Windows::new() else { return };
    let site = "venv/Lib/site-packages";
    let dll = format!("{site}/ctranslate2/ctranslate2.dll");

    // Neither: CTranslate2's error, and what was looked for.
    let none = t.load(&dll, 12, None);
    assert!(
        none.starts_with(
            "ERROR Library cublas64_12.dll is not found or cannot be loaded (looked for the \
             nvidia-cublas-cu12 package next to CTranslate2, then in CUDA_PATH\\bin and on the \
             DLL search path)"
        ),
        "{none}"
    );

    // The probe loaded the stand-in `origin` from a path ending in `file`.
    let loaded = |said: String, file: &str, origin: &str| {
        assert!(
            said.starts_with("LOADED ") && said.ends_with(&format!("{file} ORIGIN {origin}")),
            "{said}"
        );
    };

    // A toolkit in CUDA_PATH: found there, as before the patch.
    t.cublas("toolkit/bin", 12, "toolkit");
    let toolkit = "\\toolkit\\bin\\cublas64_12.dll";
    loaded(t.load(&dll, 12, Some("toolkit")), toolkit, "toolkit");

    // The wheel installed: it wins over CUDA_PATH, and the cuBLASLt it imports is found in
    // its own folder (no CUDA_PATH, nothing on PATH: only the full-path load's altered search
    // finds it).
    t.cublas(&format!("{site}/nvidia/cublas/bin"), 12, "wheel");
    let wheel = "\\site-packages\\nvidia\\cublas\\bin\\cublas64_12.dll";
    loaded(t.load(&dll, 12, None), wheel, "wheel");
    loaded(t.load(&dll, 12, Some("toolkit")), wheel, "wheel");

    // CUDA 13's wheel: nvidia\cu13\bin\x86_64.
    t.cublas(&format!("{site}/nvidia/cu13/bin/x86_64"), 13, "wheel13");
    let cu13 = "\\nvidia\\cu13\\bin\\x86_64\\cublas64_13.dll";
    loaded(t.load(&dll, 13, None), cu13, "wheel13");

    // A frozen app (PyInstaller's _internal\) that collected the wheel: found the same way.
    t.cublas("app/_internal/nvidia/cublas/bin", 12, "frozen");
    let frozen = t.load("app/_internal/ctranslate2/ctranslate2.dll", 12, None);
    loaded(
        frozen,
        "\\_internal\\nvidia\\cublas\\bin\\cublas64_12.dll",
        "frozen",
    );

    // Only CUDA 13's wheel beside a CUDA 12 build: both majors named.
    let other = "other/Lib/site-packages";
    t.cublas(&format!("{other}/nvidia/cu13/bin/x86_64"), 13, "other13");
    let wrong = t.load(&format!("{other}/ctranslate2/ctranslate2.dll"), 12, None);
    assert!(
        wrong.starts_with("ERROR Library cublas64_12.dll"),
        "{wrong}"
    );
    assert!(
        wrong.contains("\\nvidia\\cu13\\bin\\x86_64\\cublas64_13.dll, but this CTranslate2 was built against cuBLAS 12"),
        "{wrong}"
    );
}
