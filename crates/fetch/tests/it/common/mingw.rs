//! Real Windows DLLs for tests, built with mingw-w64, and a real Windows loader (wine) to
//! load them. Tests skip with a message when the tools are not installed.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{run_ok, stdout_and_stderr};

pub const GCC: &str = "x86_64-w64-mingw32-gcc";

/// Whether mingw-w64 (and, for loading, wine) are on PATH; prints why a test skips.
pub fn available(need_wine: bool) -> bool {
    if super::skip::missing(GCC, "apt-get install gcc-mingw-w64-x86-64") {
        return false;
    }
    !(need_wine && super::skip::missing("wine", "apt-get install wine wine64"))
}

/// One fake DLL: its file name, the DLLs it imports (by linking against them), and the
/// DLLs it loads at run time with LoadLibrary from its `probe_init` export.
pub struct Dll<'a> {
    pub name: &'a str,
    pub imports: &'a [&'a str],
    pub loads: &'a [&'a str],
}

fn symbol(dll: &str) -> String {
    let stem = dll.rsplit_once('.').map_or(dll, |(s, _)| s);
    let clean: String = stem
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("f_{clean}")
}

/// Builds the DLLs into `dir` (imports first: `dlls` must list a DLL after those it
/// imports). Each DLL exports `f_<stem>`, which loads its `loads` with LoadLibraryA (as
/// amdhip64 loads amd_comgr when the HIP runtime starts) and then calls the `f_` of
/// everything it imports, so the import tables are real and the run-time loads of the whole
/// graph happen when the root's `probe_init` export runs. A failed run-time load prints
/// `FAILED LoadLibraryA(<name>)` and makes `probe_init` fail.
pub fn build(dir: &Path, dlls: &[Dll]) -> Vec<PathBuf> {
    fs::create_dir_all(dir).unwrap();
    let mut built = Vec::new();
    for dll in dlls {
        // The two kernel32 functions, declared rather than taken from <windows.h>, which
        // takes most of a second to compile.
        let mut c = String::from(
            "#include <stdio.h>\n\
             __declspec(dllimport) void *__stdcall LoadLibraryA(const char *);\n\
             __declspec(dllimport) unsigned long __stdcall GetLastError(void);\n",
        );
        for import in dll.imports {
            c.push_str(&format!(
                "__declspec(dllimport) int {}(void);\n",
                symbol(import)
            ));
        }
        c.push_str(&format!(
            "__declspec(dllexport) int {}(void) {{\n  int sum = 1;\n",
            symbol(dll.name)
        ));
        for load in dll.loads {
            c.push_str(&format!(
                "  if (!LoadLibraryA(\"{load}\")) {{\n    \
                 printf(\"FAILED LoadLibraryA({load}) error %lu\\n\", GetLastError());\n    \
                 fflush(stdout);\n    return -1000000;\n  }}\n"
            ));
        }
        for import in dll.imports {
            c.push_str(&format!("  sum += {}();\n", symbol(import)));
        }
        c.push_str("  return sum;\n}\n");
        c.push_str(&format!(
            "__declspec(dllexport) int probe_init(void) {{ return {}() > 0 ? 0 : 7; }}\n",
            symbol(dll.name)
        ));
        let source = dir.join(format!("{}.c", symbol(dll.name)));
        fs::write(&source, c).unwrap();
        let out = dir.join(dll.name);
        let implib = dir.join(format!("lib{}.a", symbol(dll.name)));
        let mut cmd = Command::new(GCC);
        cmd.arg("-shared").arg("-o").arg(&out).arg(&source);
        cmd.arg(format!("-Wl,--out-implib,{}", implib.display()));
        for import in dll.imports {
            cmd.arg(dir.join(format!("lib{}.a", symbol(import))));
        }
        run_ok(&mut cmd);
        built.push(out);
    }
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".c") || name.ends_with(".a") {
            fs::remove_file(entry.path()).unwrap();
        }
    }
    built
}

const PROBE: &str = r#"#include <windows.h>
#include <stdio.h>
/* probe.exe DLL [DIR...]: what CTranslate2's __init__.py does on Windows: each DIR is added
   with AddDllDirectory (as os.add_dll_directory does), then DLL is loaded with the
   default-dirs search and its `probe_init` export (run-time loads) is called. */
typedef int (*init_fn)(void);
int wmain(int argc, wchar_t **argv) {
  if (argc < 2) { fprintf(stderr, "usage: probe DLL [DIR...]\n"); return 2; }
  SetDefaultDllDirectories(LOAD_LIBRARY_SEARCH_DEFAULT_DIRS);
  for (int i = 2; i < argc; i++)
    if (!AddDllDirectory(argv[i])) { printf("FAILED AddDllDirectory %lu\n", GetLastError()); return 1; }
  HMODULE h = LoadLibraryExW(argv[1], NULL, LOAD_LIBRARY_SEARCH_DEFAULT_DIRS);
  if (!h) { printf("FAILED LoadLibrary %lu\n", GetLastError()); return 1; }
  init_fn init = (init_fn)GetProcAddress(h, "probe_init");
  if (init && init() != 0) { printf("FAILED probe_init\n"); return 1; }
  printf("LOADED\n");
  return 0;
}
"#;

/// Builds `probe.exe` alone in its own folder (the application folder is searched first,
/// so nothing else may be next to it).
pub fn build_probe(dir: &Path) -> PathBuf {
    fs::create_dir_all(dir).unwrap();
    let source = dir.join("probe.c");
    fs::write(&source, PROBE).unwrap();
    let exe = dir.join("probe.exe");
    run_ok(
        Command::new(GCC)
            .arg("-municode")
            .arg("-o")
            .arg(&exe)
            .arg(&source),
    );
    fs::remove_file(source).unwrap();
    exe
}

/// The result of loading a DLL under wine: whether it loaded, and the DLLs reported missing:
/// by wine's loader for imports ("Library X (which is needed by …) not found"), or by a
/// DLL's `probe_init` for run-time loads ("FAILED LoadLibraryA(X)").
pub struct Load {
    pub loaded: bool,
    pub missing: Vec<String>,
    pub output: String,
}

/// A private wine prefix in a temp folder (wine creates it on first use, ~10-30 s). Its
/// wineserver is stopped when it is dropped.
pub struct Prefix {
    dir: tempfile::TempDir,
}

impl Prefix {
    pub fn new() -> Prefix {
        Prefix {
            dir: tempfile::Builder::new()
                .prefix("wineprefix-")
                .tempdir()
                .unwrap(),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Waits until the prefix's wineserver has exited (`wineserver -w`). After a program in
    /// the prefix was killed, the server winds down its helper processes; a program started
    /// meanwhile can be killed with them (a CI run saw the resumed fetch end by a signal
    /// right after it printed its success).
    pub fn wait_until_idle(&self) {
        let waited = Command::new("wineserver")
            .arg("-w")
            .env("WINEPREFIX", self.dir.path())
            .output()
            .unwrap();
        assert!(waited.status.success(), "wineserver -w: {waited:?}");
    }
}

impl Default for Prefix {
    fn default() -> Prefix {
        Prefix::new()
    }
}

impl Drop for Prefix {
    fn drop(&mut self) {
        let _ = Command::new("wineserver")
            .arg("-k")
            .env("WINEPREFIX", self.dir.path())
            .output();
    }
}

/// A DLL named `name` in `dir` whose version resource says `version` (compiled by mingw-w64's
/// windres), as a driver's runtime carries one.
pub fn build_versioned(dir: &Path, name: &str, version: [u16; 4]) -> PathBuf {
    build_versioned_from(dir, name, version, "int f_runtime(void) { return 6; }\n")
}

/// [`build_versioned`] with the DLL's C source (its exports).
pub fn build_versioned_from(dir: &Path, name: &str, version: [u16; 4], source: &str) -> PathBuf {
    fs::create_dir_all(dir).unwrap();
    let [a, b, c, d] = version;
    let rc = dir.join("version.rc");
    fs::write(
        &rc,
        format!(
            "1 VERSIONINFO\nFILEVERSION {a},{b},{c},{d}\nPRODUCTVERSION {a},{b},{c},{d}\n\
             BEGIN\nBLOCK \"StringFileInfo\"\nBEGIN\nBLOCK \"040904b0\"\nBEGIN\n\
             VALUE \"FileVersion\", \"{a}.{b}.{c}.{d}\"\nEND\nEND\nEND\n"
        ),
    )
    .unwrap();
    let res = dir.join("version.o");
    super::run_ok(
        Command::new("x86_64-w64-mingw32-windres")
            .arg(&rc)
            .arg("-o")
            .arg(&res),
    );
    let c_file = dir.join("empty.c");
    fs::write(&c_file, source).unwrap();
    let out = dir.join(name);
    super::run_ok(
        Command::new("x86_64-w64-mingw32-gcc")
            .args(["-shared", "-o"])
            .arg(&out)
            .arg(&c_file)
            .arg(&res),
    );
    out
}

/// Puts `dll` into the prefix's `C:\windows\system32` (making the prefix first), as a driver
/// installer puts its runtime there.
pub fn install_in_system32(prefix: &Path, dll: &Path) {
    super::run_ok(
        Command::new("wine")
            .args(["cmd", "/c", "exit"])
            .env("WINEPREFIX", prefix)
            .env("WINEDEBUG", "-all")
            .env("WINEDLLOVERRIDES", "mscoree,mshtml="),
    );
    let system32 = prefix.join("drive_c/windows/system32");
    fs::copy(dll, system32.join(dll.file_name().unwrap())).unwrap();
}

/// `Z:\…`: how a Windows program under wine names a host path.
pub fn windows_path(path: &Path) -> String {
    format!("Z:{}", path.display()).replace('/', "\\")
}

/// Runs the probe under wine in `prefix`: loads `dll` with `dirs` added to the DLL search
/// path, then runs its `probe_init`.
/// The VC++ runtime must come from the folders given, as on a Windows without it: native
/// only, never wine's built-in copy.
pub fn wine_load(prefix: &Path, probe: &Path, dll: &Path, dirs: &[PathBuf]) -> Load {
    wine_load_with(
        prefix,
        probe,
        dll,
        dirs,
        "mscoree,mshtml=;msvcp140,vcruntime140_1=n",
    )
}

/// [`wine_load`] with other `WINEDLLOVERRIDES` (e.g. `msvcp140=n`: only a native copy,
/// found on the search path, may be loaded, never wine's builtin one).
pub fn wine_load_with(
    prefix: &Path,
    probe: &Path,
    dll: &Path,
    dirs: &[PathBuf],
    overrides: &str,
) -> Load {
    let out = Command::new("wine")
        .arg(probe)
        .arg(windows_path(dll))
        .args(dirs.iter().map(|d| windows_path(d)))
        .env("WINEPREFIX", prefix)
        .env("WINEDEBUG", "err+module")
        .env("WINEDLLOVERRIDES", overrides)
        .env_remove("DISPLAY")
        .output()
        .unwrap();
    let output = stdout_and_stderr(&out);
    Load {
        loaded: out.status.success() && output.lines().any(|l| l.trim() == "LOADED"),
        missing: missing(&output),
        output,
    }
}

fn missing(output: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in output.lines() {
        // err:module:import_dll Library rocblas.dll (which is needed by L"Z:\\…") not found
        if let Some(rest) = line.split("Library ").nth(1)
            && rest.contains("not found")
            && let Some(name) = rest.split_whitespace().next()
        {
            names.push(name.to_string());
        }
        // FAILED LoadLibraryA(amd_comgr0702.dll) error 126
        if let Some(rest) = line.split("FAILED LoadLibraryA(").nth(1)
            && let Some((name, _)) = rest.split_once(')')
        {
            names.push(name.to_string());
        }
    }
    names.sort();
    names.dedup();
    names
}
