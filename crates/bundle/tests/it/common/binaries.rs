//! Real PE and ELF files for the binary parser's tests, built here with mingw-w64 (and the
//! host's GNU ld for PE32) and gcc. One copy for all users: the library's unit tests
//! (`src/binary/tests.rs`) and its integration tests (`binary_fuzz.rs`) include this file, so
//! it uses only `std`. The callers check the tools first (each its own way of skipping)
//! and a build that then fails panics with the tool's stderr.
//!
//! Commands are argument arrays, never a line split on spaces.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

pub const MINGW_GCC: &str = "x86_64-w64-mingw32-gcc";
pub const DLLTOOL: &str = "x86_64-w64-mingw32-dlltool";
pub const NM: &str = "x86_64-w64-mingw32-nm";
/// What [`pe`] and [`pe32`] run, and the Debian package that has it.
pub const PE_TOOLS: [&str; 3] = [MINGW_GCC, DLLTOOL, NM];
pub const PE_PACKAGE: &str = "gcc-mingw-w64-x86-64";

/// Runs `program args` in `dir`; panics with its stderr when it fails. Returns its stdout.
pub fn run(dir: &Path, program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    assert!(
        out.status.success(),
        "`{program} {}` failed:\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn write(dir: &Path, name: &str, text: &str) {
    fs::write(dir.join(name), text).unwrap();
}

/// An all-zero delay-load descriptor placed after dlltool's (both go to `.text$2`), so
/// the table ends the way link.exe ends it.
const DELAY_TABLE_END: &str = "char delay_table_end[32] \
    __attribute__((section(\".text$2\"), aligned(4))) = {0};\n";

pub struct Pe {
    pub a: PathBuf,
    pub b: PathBuf,
    pub exe: PathBuf,
}

/// b.dll (exports b_func); a.dll imports b.dll and KERNEL32 and delay-loads c.dll;
/// main.exe (console) imports a.dll. Needs [`PE_TOOLS`].
pub fn pe(dir: &Path) -> Pe {
    write(
        dir,
        "b.c",
        "__declspec(dllexport) int b_func(void) { return 2; }\n",
    );
    write(dir, "c.def", "LIBRARY c.dll\nEXPORTS\n    c_func\n");
    write(
        dir,
        "a.c",
        "#include <windows.h>\n\
         __declspec(dllimport) int b_func(void);\n\
         int c_func(void);\n\
         __declspec(dllexport) int a_func(void) {\n\
             return b_func() + c_func() + (int)GetCurrentProcessId();\n\
         }\n",
    );
    write(
        dir,
        "main.c",
        "#include <stdio.h>\n\
         __declspec(dllimport) int a_func(void);\n\
         int main(void) { printf(\"%d\\n\", a_func()); return 0; }\n",
    );
    write(dir, "delay_end.c", DELAY_TABLE_END);
    let gcc = |args: &[&str]| run(dir, MINGW_GCC, args);
    gcc(&[
        "-shared",
        "-o",
        "b.dll",
        "b.c",
        "-Wl,--out-implib,libb.dll.a",
    ]);
    run(
        dir,
        DLLTOOL,
        &[
            "--input-def",
            "c.def",
            "--output-delaylib",
            "libc_delay.a",
            "--dllname",
            "c.dll",
        ],
    );
    gcc(&["-c", "-o", "delay_end.o", "delay_end.c"]);
    gcc(&[
        "-shared",
        "-o",
        "a.dll",
        "a.c",
        "-L.",
        "-lb",
        "libc_delay.a",
        "delay_end.o",
        "-lkernel32",
    ]);
    point_delay_directory(dir, "a.dll", "__DELAY_IMPORT_DESCRIPTOR_libc_delay_a");
    gcc(&["-o", "main.exe", "main.c", "a.dll"]);
    Pe {
        a: dir.join("a.dll"),
        b: dir.join("b.dll"),
        exe: dir.join("main.exe"),
    }
}

/// Whether the host's GNU ld can link PE32 (the `i386pe` emulation, which Debian's binutils
/// has; the x86_64 mingw ld lacks its scripts). [`pe32`] needs it.
pub fn host_ld_links_pe32() -> bool {
    Command::new("ld").arg("-V").output().is_ok_and(|o| {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .any(|l| l.trim() == "i386pe")
    })
}

/// A PE32 (i386) DLL importing k32.dll and delay-loading d32.dll, linked by the host's
/// GNU ld. Needs [`PE_TOOLS`] and [`host_ld_links_pe32`].
pub fn pe32(dir: &Path) -> PathBuf {
    write(dir, "k32.def", "LIBRARY k32.dll\nEXPORTS\n    k_func\n");
    write(dir, "d32.def", "LIBRARY d32.dll\nEXPORTS\n    d_func\n");
    write(
        dir,
        "p32.c",
        "__declspec(dllimport) int k_func(void);\n\
         int d_func(void);\n\
         /* stands in for mingw's delay-load helper: the DLL is never loaded */\n\
         void *__stdcall __delayLoadHelper2(const void *d, void **slot) {\n\
             (void)d;\n\
             return *slot;\n\
         }\n\
         __declspec(dllexport) int p_func(void) { return k_func() + d_func(); }\n",
    );
    write(dir, "delay_end32.c", DELAY_TABLE_END);
    run(
        dir,
        MINGW_GCC,
        &["-m32", "-O1", "-c", "-o", "p32.o", "p32.c"],
    );
    run(
        dir,
        MINGW_GCC,
        &["-m32", "-c", "-o", "delay_end32.o", "delay_end32.c"],
    );
    let dlltool = |more: &[&str]| {
        let args = [&["-m", "i386", "--as-flags=--32", "--input-def"], more].concat();
        run(dir, DLLTOOL, &args)
    };
    dlltool(&["k32.def", "--output-lib", "libk32.a"]);
    dlltool(&[
        "d32.def",
        "--output-delaylib",
        "libd32.a",
        "--dllname",
        "d32.dll",
    ]);
    run(
        dir,
        "ld",
        &[
            "-m",
            "i386pe",
            "--dll",
            "-e",
            "0",
            "-o",
            "p32.dll",
            "p32.o",
            "libk32.a",
            "libd32.a",
            "delay_end32.o",
        ],
    );
    point_delay_directory(dir, "p32.dll", "__DELAY_IMPORT_DESCRIPTOR_libd32_a");
    dir.join("p32.dll")
}

/// GNU ld (2.40 here) links dlltool's delay-load descriptor into `.text$2` but leaves
/// the Delay Import data directory empty, so no reader that goes by the headers (the
/// parser, dumpbin, Dependencies) sees the delay import. Point the directory at the
/// descriptor (found with nm) and its terminator, as link.exe would, unless the linker
/// already did.
fn point_delay_directory(dir: &Path, file: &str, descriptor: &str) {
    let path = dir.join(file);
    let mut bytes = fs::read(&path).unwrap();
    let u32_at = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
    let optional = u32_at(&bytes, 0x3c) as usize + 4 + 20;
    let pe32_plus = bytes[optional..optional + 2] == 0x20bu16.to_le_bytes();
    let (base, directories) = if pe32_plus {
        let base = u64::from_le_bytes(bytes[optional + 24..optional + 32].try_into().unwrap());
        (base, optional + 112)
    } else {
        (u64::from(u32_at(&bytes, optional + 28)), optional + 96)
    };
    let at = directories + 13 * 8;
    if u32_at(&bytes, at) != 0 {
        return;
    }
    let symbols = run(dir, NM, &[file]);
    let address = symbols
        .lines()
        .find(|l| l.ends_with(&format!(" {descriptor}")))
        .and_then(|l| u64::from_str_radix(l.split_whitespace().next()?, 16).ok())
        .unwrap_or_else(|| panic!("{file} has no symbol {descriptor}"));
    let rva = u32::try_from(address - base).unwrap();
    bytes[at..at + 4].copy_from_slice(&rva.to_le_bytes());
    bytes[at + 4..at + 8].copy_from_slice(&64u32.to_le_bytes());
    fs::write(&path, bytes).unwrap();
}

pub struct Elf {
    /// (file, expected machine): libb.so, liba.so, liba_rpath.so, then with gcc -m32
    /// libb32.so and liba32.so.
    pub libraries: Vec<(PathBuf, &'static str)>,
    pub exe: PathBuf,
}

/// libb.so (soname libb.so.1); liba.so needing it with a RUNPATH, liba_rpath.so with an
/// RPATH; a non-PIE program; and the same libraries as ELF32 when gcc -m32 can link
/// (libb32.so, and liba32.so with a RUNPATH). Needs gcc.
pub fn elf(dir: &Path) -> Elf {
    write(dir, "b.c", "int b_func(void) { return 2; }\n");
    write(
        dir,
        "a.c",
        "int b_func(void);\nint a_func(void) { return b_func() + 1; }\n",
    );
    write(
        dir,
        "main.c",
        "int a_func(void);\nint main(void) { return a_func(); }\n",
    );
    let gcc = |args: &[&str]| run(dir, "gcc", args);
    let shared = ["-shared", "-fPIC", "-o"];
    gcc(&[&shared[..], &["libb.so", "b.c", "-Wl,-soname,libb.so.1"]].concat());
    gcc(&[
        &shared[..],
        &[
            "liba.so",
            "a.c",
            "-L.",
            "-lb",
            "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../lib",
        ],
    ]
    .concat());
    gcc(&[
        &shared[..],
        &[
            "liba_rpath.so",
            "a.c",
            "-L.",
            "-lb",
            "-Wl,--disable-new-dtags,-rpath,$ORIGIN/../lib:/opt/x::${ORIGIN}",
        ],
    ]
    .concat());
    gcc(&["-no-pie", "-o", "main", "main.c", "-L.", "-la", "-lb"]);
    let mut libraries = vec![
        (dir.join("libb.so"), "x86_64"),
        (dir.join("liba.so"), "x86_64"),
        (dir.join("liba_rpath.so"), "x86_64"),
    ];
    let m32 = ["-m32", "-nostdlib", "-shared", "-fPIC", "-o"];
    let libb32 = [&m32[..], &["libb32.so", "b.c", "-Wl,-soname,libb32.so.1"]].concat();
    let links_m32 = Command::new("gcc")
        .args(&libb32)
        .current_dir(dir)
        .output()
        .is_ok_and(|o| o.status.success());
    if links_m32 {
        gcc(&[
            &m32[..],
            &[
                "liba32.so",
                "a.c",
                "-L.",
                "-lb32",
                "-Wl,--enable-new-dtags,-rpath,$ORIGIN",
            ],
        ]
        .concat());
        libraries.push((dir.join("libb32.so"), "i386"));
        libraries.push((dir.join("liba32.so"), "i386"));
    } else {
        eprintln!("skipping ELF32: gcc -m32 cannot link (apt-get install gcc-multilib)");
    }
    Elf {
        libraries,
        exe: dir.join("main"),
    }
}
