//! A stand-in for ROCm 10's Python wheels as TheRock builds them in kpack-split mode:
//! `rocm-sdk-core` (`_rocm_sdk_core/`), the architecture-neutral `rocm-sdk-libraries`
//! (`_rocm_sdk_libraries/`) and one `rocm-sdk-device-gfxNNNN` per GPU target, which has no
//! folder of its own but overlays `_rocm_sdk_libraries/` (`.kpack/`, Tensile files, its
//! `.devel_links/<target>.json`). On Windows the libraries are real PE DLLs (mingw-w64) with
//! the import graph of the real ones and decoys the closure must leave out; the Linux wheels
//! hold small ELF files (gcc) with the SONAMEs, DT_NEEDED and DT_RPATH of the real ones, core's
//! in TheRock's four Linux folders (`lib/`, `lib/rocm_sysdeps/lib`, `lib/host-math/lib`,
//! `lib/llvm/lib`). Every fact it follows is listed with its source in `rocm10-facts.md`, next
//! to this file.

use ct2v_support::report::Reporter;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use super::mingw::{self, Dll};
use super::server::Server;
use super::wheel::zip_wheel;

pub const VERSION: &str = "10.0.0";
pub const CORE: &str = "_rocm_sdk_core";
pub const LIBS: &str = "_rocm_sdk_libraries";
/// Where a family's fat wheel vendors the runtime: a folder of its own package, never AMD's
/// `_rocm_sdk_*` packages (AMD's torch loads those). `bin/` (Windows) or `lib/` (Linux) beside
/// `.kpack/`, the geometry the kpack loader resolves against.
pub const VENDORED: &str = "ctranslate2/_rocm";
/// TheRock's index, as the variants name it, and where the loopback server serves it.
pub const INDEX: &str = "https://stable.repo.amd.com/rocm/whl-next/";
const SERVED: &str = "/amd/rocm/whl-next/";
/// The CTranslate2 whose `__init__.py` adds `_rocm_sdk_libraries*/bin` (4.8.3+).
pub const CT2: &str = "4.8.4";
/// Stand-in device files are the real sizes divided by this: 1 stand-in byte for 1,000 real
/// ones (see [`device_files`] for the model the sizes follow).
pub const SCALE: u64 = 1000;

/// A ROCm 10 variant and its GPU targets (variants/rocm-<family>.toml).
pub struct Family {
    pub variant: &'static str,
    pub targets: &'static [&'static str],
}

/// The ROCm 10 families as the checkout has them: the variants the GPU data file names AMD's
/// key for (`[amd.families]` of variants/gpus.toml), each with its coverage's targets, and
/// TheRock 10.0's table from the same file.
struct Checkout {
    families: Vec<Family>,
    rocm_10: ct2v_bundle::gpu_targets::Table,
}

static CHECKOUT: std::sync::LazyLock<Checkout> = std::sync::LazyLock::new(|| {
    let catalog = ct2v_pipeline::variant::Catalog::load(&super::repo_root(), &[]).unwrap();
    let coverage = ct2v_pipeline::variant::coverage::of_catalog(&catalog).unwrap();
    let leak = |s: &str| -> &'static str { Box::leak(s.to_string().into_boxed_str()) };
    let families = catalog
        .gpus
        .amd_families
        .keys()
        .map(|name| {
            let variant = coverage.variants.iter().find(|v| &v.name == name).unwrap();
            let amd = variant.builds[0].amd.as_ref().unwrap();
            let targets: Vec<&'static str> = amd.gfx.iter().map(|t| leak(t)).collect();
            Family {
                variant: leak(name),
                targets: Box::leak(targets.into_boxed_slice()),
            }
        })
        .collect();
    let rocm_10 = catalog.gpus.table_for_sdk(Some("10.0")).clone();
    Checkout { families, rocm_10 }
});

/// Every ROCm 10 family, in the GPU data file's order.
pub fn families() -> &'static [Family] {
    &CHECKOUT.families
}

pub fn family(variant: &str) -> &'static Family {
    families().iter().find(|f| f.variant == variant).unwrap()
}

/// Whether TheRock 10.0 builds hipBLASLt for `target`: its table in variants/gpus.toml, from
/// cmake/therock_amdgpu_targets.cmake's EXCLUDE_TARGET_PROJECTS (gfx1010-gfx1012 and
/// gfx1030-gfx1036 only; gfx1102 was added to its build by TheRock#2908).
pub fn therock_builds_hipblaslt(target: &str) -> bool {
    !CHECKOUT.rocm_10.excluded(target, "hipblaslt")
}

/// The target-specific artifacts of TheRock 10.0's `device_artifact_filter`
/// (build_python_packages.py L586-613; BUILD_TOPOLOGY.toml L588-719: hipdnn, miopenprovider
/// and hipblasltprovider are target-neutral, so no device wheel has an archive of theirs),
/// each as `.kpack/<artifact>_lib_<t>.kpack` (artifact_builder.py L281-285), with its size in
/// real bytes (the model in [`device_files`]). Only `blas` holds a library CTranslate2 loads.
pub const KPACK_ARTIFACTS: [(&str, u64); 6] = [
    ("blas", 43_000_000),
    ("fft", 15_000_000),
    ("rand", 6_000_000),
    ("miopen", 20_000_000),
    ("hipkernelprovider", 3_000_000),
    ("rccl", 10_000_000),
];

/// Whether TheRock builds RCCL for `target` on `os`: excluded for gfx1103, gfx1150, gfx1152,
/// gfx1153 (therock_amdgpu_targets.cmake), and it has no Windows DLL pattern (_dist_info.py).
pub fn therock_builds_rccl(target: &str, os: Os) -> bool {
    os == Os::Linux && !["gfx1103", "gfx1150", "gfx1152", "gfx1153"].contains(&target)
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Os {
    Windows,
    Linux,
}

impl Os {
    pub fn tag(self) -> &'static str {
        match self {
            Os::Windows => "win_amd64",
            Os::Linux => "linux_x86_64",
        }
    }

    /// `bin` on Windows, `lib` on Linux (`_dist_info.py`: windows_relpath, posix_relpath).
    pub fn dir(self) -> &'static str {
        match self {
            Os::Windows => "bin",
            Os::Linux => "lib",
        }
    }
}

/// The host libraries of each wheel on Windows: `(name, imports, loads by name)`.
/// ctranslate2.dll's closure is amdhip64_7 + hipblas, rocblas, rocsolver, libhipblaslt and
/// rocm_kpack; amd_comgr and rocm_kpack are also loaded by name by the HIP runtime.
pub const WINDOWS_CORE: [(&str, &[&str], &[&str]); 6] = [
    ("amd_comgr.dll", &[], &[]),
    ("rocm_kpack.dll", &[], &[]),
    ("amdhip64_7.dll", &[], &["amd_comgr.dll", "rocm_kpack.dll"]),
    ("hiprtc-builtins0715.dll", &[], &[]),
    (
        "hiprtc0715.dll",
        &["amdhip64_7.dll", "hiprtc-builtins0715.dll"],
        &[],
    ),
    ("rocm-openblas.dll", &[], &[]),
];

pub const WINDOWS_LIBS: [(&str, &[&str], &[&str]); 12] = [
    ("libhipblaslt.dll", &["amdhip64_7.dll"], &[]),
    (
        "rocblas.dll",
        &["amdhip64_7.dll", "libhipblaslt.dll", "rocm_kpack.dll"],
        &[],
    ),
    ("rocsolver.dll", &["rocblas.dll", "amdhip64_7.dll"], &[]),
    (
        "hipblas.dll",
        &["rocblas.dll", "rocsolver.dll", "amdhip64_7.dll"],
        &[],
    ),
    // Decoys: in the wheel, not in ctranslate2.dll's closure.
    ("rocsparse.dll", &["amdhip64_7.dll"], &[]),
    ("hipsparse.dll", &["rocsparse.dll", "amdhip64_7.dll"], &[]),
    ("hipsolver.dll", &["rocsolver.dll", "rocblas.dll"], &[]),
    ("rocfft.dll", &["amdhip64_7.dll"], &[]),
    ("hipfft.dll", &["rocfft.dll"], &[]),
    ("MIOpen.dll", &["amdhip64_7.dll", "rocblas.dll"], &[]),
    ("rocrand.dll", &["amdhip64_7.dll"], &[]),
    ("hiprand.dll", &["rocrand.dll"], &[]),
];

/// What ctranslate2.dll needs of each wheel (the closure, forced DLLs included).
pub const WINDOWS_CORE_CLOSURE: [&str; 3] = ["amd_comgr.dll", "amdhip64_7.dll", "rocm_kpack.dll"];
pub const WINDOWS_LIBS_CLOSURE: [&str; 4] = [
    "hipblas.dll",
    "libhipblaslt.dll",
    "rocblas.dll",
    "rocsolver.dll",
];

pub const EXT: &str = "_ext.cp312-win_amd64.pyd";

/// Builds every Windows DLL of the stand-in into `dir`: the SDK's, and what a build leaves
/// (ctranslate2.dll, `_ext`, Intel OpenMP, the VC++ runtime).
pub fn windows_dlls(dir: &Path) {
    let mut dlls: Vec<Dll> = WINDOWS_CORE
        .iter()
        .chain(WINDOWS_LIBS.iter())
        .map(|(name, imports, loads)| Dll {
            name,
            imports,
            loads,
        })
        .collect();
    for (name, imports) in [
        ("libiomp5md.dll", &[][..]),
        ("MSVCP140.dll", &[][..]),
        ("python312.dll", &[][..]),
        (
            "ctranslate2.dll",
            &[
                "amdhip64_7.dll",
                "hipblas.dll",
                "libiomp5md.dll",
                "MSVCP140.dll",
            ][..],
        ),
        (EXT, &["ctranslate2.dll", "python312.dll"][..]),
    ] {
        dlls.push(Dll {
            name,
            imports,
            loads: &[],
        });
    }
    mingw::build(dir, &dlls);
}

/// The host libraries of each wheel on Linux: `(path below the wheel's folder, DT_NEEDED)`,
/// the file name being the SONAME, as TheRock's runtime wheels keep only the SONAME file
/// (py_packaging.py, populate_runtime_files). Core has three library folders besides `lib/`
/// (T10 `_dist_info.py` L256-269, `build_python_packages.py` L237-239): `lib/rocm_sysdeps/lib`
/// (the bundled system libraries, SONAMEs prefixed `rocm_sysdeps_` and symbol-versioned
/// `AMDROCM_SYSDEPS_1.0`, third-party/sysdeps/linux/README.md), `lib/host-math/lib` (OpenBLAS
/// as `librocm-openblas`) and `lib/llvm/lib` (amd-llvm's shared libraries). The edges into
/// them follow each project's RUNTIME_DEPS (facts file, "Linux core"): the HSA runtime needs
/// elfutils, libdrm, numactl, zlib and zstd; HIP needs the HSA runtime; comgr (LLVM linked in
/// statically) needs zlib and zstd; hipBLASLt needs the host BLAS. Decoys the closure must
/// leave out sit in each folder. SONAMEs read on T10: `librocm_sysdeps_z.so.1`
/// (zlib/CMakeLists.txt L120), `_liblzma.so.5` (liblzma/CMakeLists.txt L126), `_elf.so.1`,
/// `_dw.so.1`, `_zstd.so.1`, `_bz2.so` (ROCm/TheRock docs/development/artifacts.md L62-84),
/// `_numa.so.1` (test_runner.py L269). Inferred from upstream's own SONAMEs (not read on T10):
/// `_drm.so.2`, `_drm_amdgpu.so.1`, `libhsa-runtime64.so.1`, `librocprofiler-register.so.0`,
/// `librocm-openblas.so.0` (OpenBLAS's major version 0 under the OUTPUT_NAME
/// host-blas/CMakeLists.txt L172 gives it), `libomp.so`. The stand-in's own choice:
/// `libLLVM.so.22.0git`, `librocm_smi64.so.1`.
pub const LINUX_CORE: [(&str, &[&str]); 19] = [
    (
        "lib/libamd_comgr.so.3",
        &["librocm_sysdeps_z.so.1", "librocm_sysdeps_zstd.so.1"],
    ),
    ("lib/librocm_kpack.so.0", &[]),
    ("lib/librocprofiler-register.so.0", &[]),
    (
        "lib/libhsa-runtime64.so.1",
        &[
            "librocm_sysdeps_elf.so.1",
            "librocm_sysdeps_drm.so.2",
            "librocm_sysdeps_drm_amdgpu.so.1",
            "librocm_sysdeps_numa.so.1",
            "librocm_sysdeps_z.so.1",
            "librocm_sysdeps_zstd.so.1",
            "librocprofiler-register.so.0",
        ],
    ),
    (
        "lib/libamdhip64.so.7",
        &["libhsa-runtime64.so.1", "librocprofiler-register.so.0"],
    ),
    ("lib/libhiprtc.so.7", &["libamdhip64.so.7"]),
    ("lib/rocm_sysdeps/lib/librocm_sysdeps_z.so.1", &[]),
    ("lib/rocm_sysdeps/lib/librocm_sysdeps_zstd.so.1", &[]),
    ("lib/rocm_sysdeps/lib/librocm_sysdeps_liblzma.so.5", &[]),
    // An unversioned SONAME (docs/development/artifacts.md L62-64).
    ("lib/rocm_sysdeps/lib/librocm_sysdeps_bz2.so", &[]),
    (
        "lib/rocm_sysdeps/lib/librocm_sysdeps_elf.so.1",
        &["librocm_sysdeps_z.so.1", "librocm_sysdeps_zstd.so.1"],
    ),
    (
        "lib/rocm_sysdeps/lib/librocm_sysdeps_dw.so.1",
        &[
            "librocm_sysdeps_elf.so.1",
            "librocm_sysdeps_liblzma.so.5",
            "librocm_sysdeps_bz2.so",
        ],
    ),
    ("lib/rocm_sysdeps/lib/librocm_sysdeps_drm.so.2", &[]),
    (
        "lib/rocm_sysdeps/lib/librocm_sysdeps_drm_amdgpu.so.1",
        &["librocm_sysdeps_drm.so.2"],
    ),
    ("lib/rocm_sysdeps/lib/librocm_sysdeps_numa.so.1", &[]),
    ("lib/host-math/lib/librocm-openblas.so.0", &[]),
    // amd-llvm's OpenMP runtime (unversioned SONAME), which a CTranslate2 built with the
    // SDK's clang and `-fopenmp` needs, and its LLVM library, which nothing here needs.
    ("lib/llvm/lib/libomp.so", &[]),
    ("lib/llvm/lib/libLLVM.so.22.0git", &[]),
    // In core `lib/` (`_dist_info.py` L274), needed by nothing in CTranslate2's closure.
    ("lib/librocm_smi64.so.1", &["librocm_sysdeps_drm.so.2"]),
];

/// What a Linux library loads by name at run time (`dlopen` from its own code, so its own
/// RUNPATH is searched): the HIP runtime loads comgr, as on Windows (the variant forces it).
pub const LINUX_LOADS: [(&str, &[&str]); 1] = [("libamdhip64.so.7", &["libamd_comgr.so.3"])];

/// The `libraries` wheel, all in `lib/`. hipBLASLt needs core's host BLAS (its RUNTIME_DEPS
/// name therock-host-blas, T10 `math-libs/BLAS/CMakeLists.txt` L186-191, and the libraries
/// wheel's RPATH reaches `lib/host-math/lib`, T10 `build_python_packages.py` L323-326).
pub const LINUX_LIBS: [(&str, &[&str]); 8] = [
    (
        "libhipblaslt.so.1",
        &["libamdhip64.so.7", "librocm-openblas.so.0"],
    ),
    (
        "librocblas.so.5",
        &[
            "libamdhip64.so.7",
            "libhipblaslt.so.1",
            "librocm_kpack.so.0",
        ],
    ),
    (
        "librocsolver.so.0",
        &["librocblas.so.5", "libamdhip64.so.7"],
    ),
    (
        "libhipblas.so.3",
        &["librocblas.so.5", "librocsolver.so.0", "libamdhip64.so.7"],
    ),
    ("librocsparse.so.1", &["libamdhip64.so.7"]),
    ("libhipsparse.so.4", &["librocsparse.so.1"]),
    ("librocfft.so.0", &["libamdhip64.so.7"]),
    ("libMIOpen.so.1", &["libamdhip64.so.7", "librocblas.so.5"]),
];

/// What CTranslate2's build leaves: `libctranslate2.so.4` needs the HIP runtime, hipBLAS and
/// the compiler's OpenMP runtime (OPENMP_RUNTIME=COMP with the SDK's clang links `libomp.so`).
pub const LINUX_CT2: (&str, &[&str]) = (
    "libctranslate2.so.4",
    &["libamdhip64.so.7", "libhipblas.so.3", "libomp.so"],
);

/// The folders (below the wheels' site-packages) each wheel's ELF files have on their DT_RPATH,
/// as TheRock's packaging adds them (`rpath_dep`, T10 `build_python_packages.py` L237-239,
/// L323-326; `patchelf --add-rpath` then `--force-rpath`, `py_packaging.py` L498-553).
const CORE_RPATH: [&str; 2] = [
    "_rocm_sdk_core/lib/llvm/lib",
    "_rocm_sdk_core/lib/rocm_sysdeps/lib",
];
const LIBS_RPATH: [&str; 3] = [
    "_rocm_sdk_core/lib",
    "_rocm_sdk_core/lib/rocm_sysdeps/lib",
    "_rocm_sdk_core/lib/host-math/lib",
];

/// The bundled system libraries' symbol version (third-party/sysdeps/common/zstd/version.lds).
const SYSDEPS_VERSION: &str = "AMDROCM_SYSDEPS_1.0";

/// Builds the Linux shared libraries into `dir` (flat, by file name) with gcc, each with its
/// SONAME, its DT_NEEDED (linked against the libraries it needs, which are built first), the
/// DT_RPATH TheRock's packaging gives its wheel, and for `rocm_sysdeps` the symbol version;
/// plus [`LINUX_CT2`]. Each exports `f_<stem>()`, which calls what it needs.
pub fn linux_libs(dir: &Path) {
    fs::create_dir_all(dir).unwrap();
    let script = dir.join("sysdeps.lds");
    fs::write(&script, format!("{SYSDEPS_VERSION} {{ global: *; }};\n")).unwrap();
    let mut todo: Vec<(String, &[&str], Vec<String>)> = Vec::new();
    for (path, needed) in LINUX_CORE {
        todo.push((
            format!("{CORE}/{path}"),
            needed,
            rpath_of(path, &CORE_RPATH),
        ));
    }
    for (name, needed) in LINUX_LIBS {
        todo.push((
            format!("{LIBS}/lib/{name}"),
            needed,
            rpath_of("lib/x", &LIBS_RPATH),
        ));
    }
    todo.push((LINUX_CT2.0.to_string(), LINUX_CT2.1, Vec::new()));
    while !todo.is_empty() {
        let ready = todo
            .iter()
            .position(|(_, needed, _)| needed.iter().all(|n| dir.join(n).is_file()))
            .expect("every DT_NEEDED of the stand-in is one of its libraries");
        let (path, needed, rpath) = todo.remove(ready);
        let name = path.rsplit('/').next().unwrap();
        let loads = LINUX_LOADS
            .iter()
            .find(|(l, _)| *l == name)
            .map_or(&[][..], |(_, loads)| *loads);
        let source = dir.join(format!("{}.c", elf_symbol(name)));
        fs::write(&source, elf_source(name, needed, loads)).unwrap();
        let mut cmd = Command::new("gcc");
        cmd.args(["-shared", "-fPIC", "-o"])
            .arg(dir.join(name))
            .arg(&source)
            .arg(format!("-Wl,-soname,{name}"))
            .arg("-Wl,--no-as-needed");
        if !loads.is_empty() {
            cmd.arg("-ldl");
        }
        if path.contains("/rocm_sysdeps/") {
            cmd.arg(format!("-Wl,--version-script={}", script.display()));
        }
        if !rpath.is_empty() {
            cmd.arg("-Wl,--disable-new-dtags")
                .arg(format!("-Wl,-rpath,{}", rpath.join(":")));
        }
        for n in needed {
            cmd.arg(dir.join(n));
        }
        super::run_ok(&mut cmd);
        fs::remove_file(source).unwrap();
    }
    fs::remove_file(script).unwrap();
}

/// The C source of stand-in library `name`: `f_<stem>()` returns 1 plus what each library it
/// needs returns, and what each one it loads by name returns (`dlopen`, then `dlsym`); a load
/// that fails prints `FAILED dlopen(<name>): <dlerror>` and counts -1000000.
fn elf_source(name: &str, needed: &[&str], loads: &[&str]) -> String {
    // The glibc 2.2.5 versions of the dl* calls, as a build in the manylinux_2_28 image links
    // them (glibc 2.34 moved them into libc under GLIBC_2.34).
    let mut c = String::from("#include <dlfcn.h>\n#include <stdio.h>\n");
    if !loads.is_empty() {
        for f in ["dlopen", "dlsym", "dlerror"] {
            c.push_str(&format!("__asm__(\".symver {f},{f}@GLIBC_2.2.5\");\n"));
        }
    }
    for n in needed {
        c.push_str(&format!("int {}(void);\n", elf_symbol(n)));
    }
    c.push_str(&format!("int {}(void) {{\n  int v = 1", elf_symbol(name)));
    for n in needed {
        c.push_str(&format!(" + {}()", elf_symbol(n)));
    }
    c.push_str(";\n");
    for l in loads {
        c.push_str(&format!(
            "  {{ void *h = dlopen(\"{l}\", RTLD_NOW | RTLD_GLOBAL);\n    \
             int (*f)(void) = h ? (int (*)(void))dlsym(h, \"{}\") : 0;\n    \
             if (f) v += f(); else {{ fprintf(stderr, \"FAILED dlopen({l}): %s\\n\", dlerror()); v -= 1000000; }} }}\n",
            elf_symbol(l)
        ));
    }
    c.push_str("  return v;\n}\n");
    c
}

/// The DT_RPATH entries of a file at `path` below its wheel's folder: `$ORIGIN`, up to
/// site-packages, then each folder of `to`.
fn rpath_of(path: &str, to: &[&str]) -> Vec<String> {
    let up = vec![".."; path.split('/').count()].join("/");
    to.iter().map(|t| format!("$ORIGIN/{up}/{t}")).collect()
}

/// `f_<stem>` of a library file name (`librocblas.so.5` → `f_librocblas`).
pub fn elf_symbol(name: &str) -> String {
    let stem = name.split(".so").next().unwrap();
    let clean: String = stem
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("f_{clean}")
}

/// CTranslate2 `version`'s `python/ctranslate2/` as upstream ships it (`__init__.py`, kept
/// in crates/upkeep/tests/data/upstream), patched in `dir` by the version's `series-rocm10` with the
/// patch step's code. Returns the package folder (`__init__.py`, `_rocm_runtime.py`).
pub fn patched_package(version: &str, dir: &Path) -> PathBuf {
    let root = super::repo_root();
    let tree = dir.join(format!("ctranslate2-{version}"));
    let init = "python/ctranslate2/__init__.py";
    write(
        &tree.join(init),
        &fs::read(root.join(format!(
            "crates/upkeep/tests/data/upstream/{version}/{init}"
        )))
        .unwrap(),
    );
    let folder = root.join(format!("patches/ctranslate2-{version}"));
    let patches: Vec<PathBuf> = fs::read_to_string(folder.join("series-rocm10"))
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| folder.join(l))
        .collect();
    assert!(!patches.is_empty());
    ct2v_fetch::patch::apply_series(&patches, &tree, &dir.join(format!("patch-{version}.log")))
        .unwrap();
    tree.join("python/ctranslate2")
}

fn write(path: &Path, data: &[u8]) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, data).unwrap();
}

/// `len` bytes of device data for `what`: a line naming it, then pseudo-random bytes, which
/// no zip compresses (as real archives are zstd-compressed and code objects compressed), so
/// the fat wheel's size follows the files' sizes.
fn device_data(what: &str, len: u64) -> Vec<u8> {
    let mut data = format!("stand-in device code: {what}\n").into_bytes();
    let mut x: u64 = what.bytes().fold(0x9E37_79B9_7F4A_7C15, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01B3)
    });
    while (data.len() as u64) < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        data.extend_from_slice(&x.to_le_bytes());
    }
    data.truncate(len as usize);
    data
}

/// A wheel's `.dist-info`: METADATA (with `requires`), WHEEL with its tag.
fn dist_info(tree: &Path, dist: &str, tag: &str, requires: &[String]) {
    let info = tree.join(format!("{dist}-{VERSION}.dist-info"));
    let name = dist.replace('_', "-");
    let mut metadata = format!("Metadata-Version: 2.1\nName: {name}\nVersion: {VERSION}\n");
    for r in requires {
        metadata.push_str(&format!("Requires-Dist: {r}\n"));
    }
    write(&info.join("METADATA"), metadata.as_bytes());
    write(
        &info.join("WHEEL"),
        format!("Wheel-Version: 1.0\nGenerator: bdist_wheel\nRoot-Is-Purelib: false\nTag: py3-none-{tag}\n")
            .as_bytes(),
    );
}

/// One file of a device wheel, relative to `_rocm_sdk_libraries/`.
pub struct DeviceFile {
    pub path: String,
    /// Its size in the real wheel (the model below); the stand-in has `real_bytes / SCALE`.
    pub real_bytes: u64,
    /// Whether CTranslate2's closure loads it (the blas archive, rocBLAS's and hipBLASLt's
    /// Tensile files): exactly these are bundled.
    pub loaded: bool,
}

/// The device files of `target` in its device wheel, relative to `_rocm_sdk_libraries/`:
/// every target-specific archive of the device filter, MIOpen's per-arch database and hipDNN's
/// kernel provider's arch content (what the bundle must leave out), rocBLAS's and hipBLASLt's
/// per-target Tensile files (per-arch fallback and hipBLASLt mapping names as
/// rocm-libraries#6840 writes them, flat or in `library/<target>/`; not verified for 10.0).
///
/// Sizes, a model in real bytes: a whole device wheel is ~378 MB (third-party: a Windows
/// `rocm-sdk-device-gfx1200` 10.0.0 of 377,648,520 bytes). Of it: blas archive 43 MB
/// (third-party: a `blas_lib_gfx1201.kpack`), hipBLASLt 234 MB (rocm-libraries#12116: a
/// gfx1200 hipBLASLt library of 234,001.5 KB, develop branch), rocBLAS's Tensile files
/// 45.1 MB (~687 MB over 15 targets in the HIP SDK); the other 56 MB is split between fft,
/// rand, miopen, hipkernelprovider and MIOpen's database by assumption. RCCL (Linux only) is
/// outside the Windows figure. Targets without hipBLASLt (RDNA 1, RDNA 2) are ~144 MB.
pub fn device_files(target: &str, os: Os) -> Vec<DeviceFile> {
    let dir = os.dir();
    let file = |path: String, real_bytes: u64, loaded: bool| DeviceFile {
        path,
        real_bytes,
        loaded,
    };
    let mut files: Vec<DeviceFile> = KPACK_ARTIFACTS
        .iter()
        .filter(|(a, _)| *a != "rccl" || therock_builds_rccl(target, os))
        .map(|(a, bytes)| {
            file(
                format!(".kpack/{a}_lib_{target}.kpack"),
                *bytes,
                *a == "blas",
            )
        })
        .collect();
    files.push(file(
        format!("share/miopen/db/{target}.kdb"),
        10_000_000,
        false,
    ));
    files.push(file(
        format!(
            "{dir}/hipdnn_plugins/engines/arch_content/hip-kernel-provider/{target}/kernels.co"
        ),
        2_000_000,
        false,
    ));
    // RDNA 3.5's Tensile files in per-target folders (`library/<target>/`), as a third party
    // reports TheRock 7.14 laying them out; the others flat. Both layouts are then bundled.
    let library = |lib: &str| match target.starts_with("gfx115") {
        true => format!("{dir}/{lib}/library/{target}"),
        false => format!("{dir}/{lib}/library"),
    };
    let rocblas = library("rocblas");
    files.push(file(
        format!("{rocblas}/TensileLibrary_lazy_{target}.dat"),
        500_000,
        true,
    ));
    files.push(file(
        format!("{rocblas}/Kernels.so-000-{target}.hsaco"),
        4_500_000,
        true,
    ));
    files.push(file(
        format!("{rocblas}/TensileLibrary_Type_HH_Contraction_l_Ailk_Bljk_Cijk_Dijk_{target}.co"),
        40_000_000,
        true,
    ));
    files.push(file(
        format!("{rocblas}/TensileLibrary_Type_HH_Contraction_l_Ailk_Bljk_Cijk_Dijk_fallback_{target}.dat"),
        100_000,
        true,
    ));
    if target.starts_with("gfx115") {
        // In a per-target folder the splitter moves every file, whatever its name
        // (database_handlers.py `_TensileHandler`: "any file underneath is accepted").
        files.push(file(format!("{rocblas}/TensileManifest.txt"), 1_000, true));
    }
    if therock_builds_hipblaslt(target) {
        let hipblaslt = library("hipblaslt");
        files.push(file(
            format!("{hipblaslt}/TensileLiteLibrary_lazy_{target}_Mapping.dat"),
            2_000_000,
            true,
        ));
        files.push(file(
            format!("{hipblaslt}/TensileLibrary_HH_HH_HA_Bias_SAV_UA_Type_HH_HPA_Contraction_l_Alik_Bljk_Cijk_Dijk_{target}.co"),
            232_000_000,
            true,
        ));
    }
    files
}

/// The size of each arch-less Tensile file, in real bytes (an assumption).
pub const ARCH_LESS_REAL_BYTES: u64 = 300_000;

/// The architecture-neutral rocBLAS Tensile files the splitter leaves in the libraries wheel
/// (rocm-systems `database_handlers.py` `_TensileHandler`: a `library/` file naming no target
/// stays generic), relative to `_rocm_sdk_libraries/`. Hypothetical for 10.0: builds with
/// rocm-libraries#6840 name their fallback files per target. Without them rocBLAS crashes at
/// the first GEMM that falls back (ROCm/rocm-libraries#6076).
pub fn arch_less_tensile_files(os: Os) -> Vec<String> {
    let dir = os.dir();
    [
        "TensileLibrary_Type_HH_Contraction_l_Ailk_Bljk_Cijk_Dijk_fallback.dat",
        "TensileLibrary_Type_SS_Contraction_l_Ailk_Bljk_Cijk_Dijk_fallback.dat",
    ]
    .iter()
    .map(|name| format!("{dir}/rocblas/library/{name}"))
    .collect()
}

/// The wheel file name of project `dist` (`rocm_sdk_core`) for `os`.
pub fn wheel_name(dist: &str, os: Os) -> String {
    format!("{dist}-{VERSION}-py3-none-{}.whl", os.tag())
}

/// The three kinds of wheel, as trees under `dir` zipped into wheels (bytes by project name).
pub struct Wheels {
    /// `rocm-sdk-core`, `rocm-sdk-libraries`, `rocm-sdk-device-gfxNNNN` → (file name, bytes).
    pub by_project: BTreeMap<String, (String, Arc<Vec<u8>>)>,
}

/// Builds the wheels for `os` and `targets` from the libraries in `built` (see
/// [`windows_dlls`], [`linux_libs`]), their trees under `dir`.
pub fn wheels(dir: &Path, built: &Path, os: Os, targets: &[&str]) -> Wheels {
    let mut by_project = BTreeMap::new();
    let mut add = |project: &str, dist: &str, tree: &Path| {
        let name = wheel_name(dist, os);
        let out = dir.join("wheels").join(&name);
        zip_wheel(tree, &out);
        by_project.insert(
            project.to_string(),
            (name, Arc::new(fs::read(&out).unwrap())),
        );
    };
    // Paths below each wheel's folder (`_rocm_sdk_core/`, `_rocm_sdk_libraries/`).
    let in_dir = |name: &str| format!("{}/{name}", os.dir());
    let (core_libs, libs_libs): (Vec<String>, Vec<String>) = match os {
        Os::Windows => (
            WINDOWS_CORE.iter().map(|l| in_dir(l.0)).collect(),
            WINDOWS_LIBS.iter().map(|l| in_dir(l.0)).collect(),
        ),
        Os::Linux => (
            LINUX_CORE.iter().map(|l| l.0.to_string()).collect(),
            LINUX_LIBS.iter().map(|l| in_dir(l.0)).collect(),
        ),
    };
    let place = |paths: &[String], to: &Path| {
        for path in paths {
            let name = path.rsplit('/').next().unwrap();
            write(&to.join(path), &fs::read(built.join(name)).unwrap());
        }
    };

    let core = dir.join(format!("tree-{}-core", os.tag()));
    write(&core.join(CORE).join("__init__.py"), b"");
    place(&core_libs, &core.join(CORE));
    dist_info(&core, "rocm_sdk_core", os.tag(), &[]);
    add("rocm-sdk-core", "rocm_sdk_core", &core);

    let libs = dir.join(format!("tree-{}-libraries", os.tag()));
    write(&libs.join(LIBS).join("__init__.py"), b"");
    place(&libs_libs, &libs.join(LIBS));
    // The generic artifacts' kpack manifests (artifact_builder.py force-includes
    // `.kpack/{artifact}_{component}.kpm`).
    for (artifact, _) in KPACK_ARTIFACTS {
        write(
            &libs.join(LIBS).join(format!(".kpack/{artifact}_lib.kpm")),
            format!("stand-in manifest of {artifact}_lib").as_bytes(),
        );
    }
    for file in arch_less_tensile_files(os) {
        write(
            &libs.join(LIBS).join(&file),
            &device_data(&file, ARCH_LESS_REAL_BYTES / SCALE),
        );
    }
    dist_info(
        &libs,
        "rocm_sdk_libraries",
        os.tag(),
        &[format!("rocm-sdk-core=={VERSION}")],
    );
    add("rocm-sdk-libraries", "rocm_sdk_libraries", &libs);

    for target in targets {
        let tree = dir.join(format!("tree-{}-device-{target}", os.tag()));
        let overlay = tree.join(LIBS);
        write(&overlay.join("__init__.py"), b"");
        let mut links = Vec::new();
        for device in device_files(target, os) {
            let file = device.path;
            write(
                &overlay.join(&file),
                &device_data(&file, device.real_bytes / SCALE),
            );
            links.push(format!(
                "{{\"relpath\": \"{file}\", \"target\": \"{}/{LIBS}/{file}\"}}",
                vec![".."; file.split('/').count()].join("/")
            ));
        }
        write(
            &overlay.join(format!(".devel_links/{target}.json")),
            format!(
                "{{\"version\": \"{VERSION}\", \"links\": [{}]}}\n",
                links.join(", ")
            )
            .as_bytes(),
        );
        let dist = format!("rocm_sdk_device_{target}");
        dist_info(
            &tree,
            &dist,
            os.tag(),
            &[format!("rocm-sdk-libraries=={VERSION}")],
        );
        add(&format!("rocm-sdk-device-{target}"), &dist, &tree);
    }
    Wheels { by_project }
}

/// Serves `wheels` (both platforms) as TheRock's index: a PEP 503 page per project linking
/// its files, relative to the page, with `#sha256=`. Returns the `--mirror` flag's value.
pub fn serve_index(server: &Server, wheels: &[&Wheels]) -> String {
    let mut pages: BTreeMap<&str, String> = BTreeMap::new();
    for w in wheels {
        for (project, (file, bytes)) in &w.by_project {
            pages.entry(project).or_default().push_str(&format!(
                "<a href=\"../../whl/{file}#sha256={}\">{file}</a><br/>\n",
                super::rocm::sha256(bytes)
            ));
            server.serve(&format!("/amd/rocm/whl/{file}"), bytes.clone());
        }
    }
    for (project, links) in pages {
        server.serve(
            &format!("{SERVED}{project}/"),
            Arc::new(format!("<!DOCTYPE html><html><body>\n{links}</body></html>\n").into_bytes()),
        );
    }
    format!("https://stable.repo.amd.com/={}/amd/", server.base())
}

/// Unpacks the wheel of `project` into `dest` with the unpack step's code, as a build's
/// `unpack` step leaves an input (`deps/<input>`).
pub fn unpack(wheels: &Wheels, project: &str, input: &str, work: &Path, dest: &Path) -> PathBuf {
    let (file, bytes) = &wheels.by_project[project];
    let archive = work.join("downloads").join(file);
    write(&archive, bytes);
    ct2v_fetch::unpack::unpack_input(
        &ct2v_fetch::unpack::CachedInput {
            name: input,
            archive: &archive,
            file_name: file,
            url: &format!("https://stable.repo.amd.com/rocm/whl/{file}"),
        },
        None,
        dest,
        ct2v_fetch::unpack::Kept::Recorded,
        &Reporter::captured(),
    )
    .unwrap();
    dest.to_path_buf()
}
