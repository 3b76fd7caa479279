//! A synthetic ROCm 7.2 for Windows: real PE DLLs (mingw-w64) with the names and import
//! graph of the official CTranslate2 ROCm wheel and AMD's `rocm_sdk_core` /
//! `rocm_sdk_libraries_custom` wheels, laid out as those wheels unpack, plus a
//! `msvc-runtime` wheel with the VC++ runtime's layout. Every fact it follows is listed with
//! its upstream source in `rocm-facts.md`, next to this file.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use super::mingw::{self, Dll};
use super::wheel::{ct2_dist_info, dist_info, zip_wheel};

pub const WHEEL: &str = "ctranslate2-4.7.1-cp312-cp312-win_amd64.whl";
pub const EXT: &str = "_ext.cp312-win_amd64.pyd";
pub const CORE_DEST: &str = "_rocm_sdk_core/bin";
pub const LIBS_DEST: &str = "_rocm_sdk_libraries_custom/bin";
pub const DATA_DEST: &str = "_rocm_sdk_libraries_custom/bin/rocblas/library";
pub const MSVC_DIR: &str = "msvc_runtime-14.51.36231.data/data/Scripts";
/// The official wheel's GPU targets (CTranslate2 v4.7.1's PYTORCH_ROCM_ARCH).
pub const WHEEL_TARGETS: [&str; 8] = [
    "gfx1030", "gfx1100", "gfx1101", "gfx1102", "gfx1150", "gfx1151", "gfx1200", "gfx1201",
];
/// The size of each synthetic kernel file.
pub const KERNEL_BYTES: usize = 16 * 1024;

/// The synthetic input: a CTranslate2 wheel, two unpacked ROCm SDK wheels and the unpacked
/// VC++ runtime wheel.
pub struct Rocm {
    pub wheel: PathBuf,
    pub core_bin: PathBuf,
    pub libs_bin: PathBuf,
    /// The unpacked SDK wheels' trees: `rocm_sdk_core/` and `rocm_sdk_libraries_custom/`,
    /// each with its `_rocm_sdk_*/bin` and `*.dist-info`.
    pub core_tree: PathBuf,
    pub libs_tree: PathBuf,
    /// The unpacked `msvc_runtime` wheel: its DLLs in `.data/data/Scripts`.
    pub msvc_tree: PathBuf,
    /// The files of the input wheel.
    pub wheel_files: BTreeSet<String>,
}

/// Builds the synthetic CTranslate2 ROCm wheel, SDK and VC++ runtime under `dir`.
pub fn rocm(dir: &Path) -> Rocm {
    let build = dir.join("build");
    let dll = |name, imports, loads| Dll {
        name,
        imports,
        loads,
    };
    mingw::build(
        &build,
        &[
            dll("amd_comgr0702.dll", &[], &[]),
            // The HIP runtime loads the code-object manager at run time: no import names it.
            dll("amdhip64_7.dll", &[], &["amd_comgr0702.dll"]),
            dll("hiprtc-builtins0702.dll", &[], &[]),
            dll(
                "hiprtc0702.dll",
                &["amdhip64_7.dll", "hiprtc-builtins0702.dll"],
                &[],
            ),
            dll("decoy_core.dll", &[], &[]),
            dll("libhipblaslt.dll", &["amdhip64_7.dll"], &[]),
            dll("rocblas.dll", &["amdhip64_7.dll", "libhipblaslt.dll"], &[]),
            dll("rocsolver.dll", &["rocblas.dll", "amdhip64_7.dll"], &[]),
            dll(
                "hipblas.dll",
                &["rocblas.dll", "rocsolver.dll", "amdhip64_7.dll"],
                &[],
            ),
            dll("hipsparse.dll", &["amdhip64_7.dll"], &[]),
            dll("libiomp5md.dll", &[], &[]),
            dll("MSVCP140.dll", &[], &[]),
            dll("VCRUNTIME140_1.dll", &[], &[]),
            // Never shipped anywhere: the policy says Python provides it.
            dll("python312.dll", &[], &[]),
            dll(
                "ctranslate2.dll",
                &[
                    "amdhip64_7.dll",
                    "hipblas.dll",
                    "libiomp5md.dll",
                    "MSVCP140.dll",
                ],
                &[],
            ),
            dll(
                EXT,
                &["ctranslate2.dll", "python312.dll", "MSVCP140.dll"],
                &[],
            ),
        ],
    );
    let place = |name: &str, to: &Path| {
        fs::create_dir_all(to).unwrap();
        fs::copy(build.join(name), to.join(name)).unwrap();
    };

    let tree = dir.join("wheel-tree");
    for name in ["ctranslate2.dll", EXT, "libiomp5md.dll"] {
        place(name, &tree.join("ctranslate2"));
    }
    fs::write(
        tree.join("ctranslate2/__init__.py"),
        "import os\n# adds ctranslate2/, _rocm_sdk_core/bin, _rocm_sdk_libraries_custom/bin\n",
    )
    .unwrap();
    ct2_dist_info(&tree, Some("cp312-cp312-win_amd64"));
    let wheel = dir.join("in").join(WHEEL);
    let wheel_files = zip_wheel(&tree, &wheel);

    let sdk = dir.join("sdk");
    let core = sdk.join("rocm_sdk_core");
    let core_bin = core.join(CORE_DEST);
    for name in [
        "amdhip64_7.dll",
        "amd_comgr0702.dll",
        "hiprtc0702.dll",
        "hiprtc-builtins0702.dll",
        "decoy_core.dll",
    ] {
        place(name, &core_bin);
    }
    dist_info(
        &core.join("rocm_sdk_core-7.2.0.dev0.dist-info"),
        "rocm_sdk_core",
        "7.2.0.dev0",
    );
    let libs = sdk.join("rocm_sdk_libraries_custom");
    let libs_bin = libs.join(LIBS_DEST);
    for name in [
        "hipblas.dll",
        "rocblas.dll",
        "rocsolver.dll",
        "libhipblaslt.dll",
        "hipsparse.dll",
    ] {
        place(name, &libs_bin);
    }
    kernels(&libs_bin);
    dist_info(
        &libs.join("rocm_sdk_libraries_custom-7.2.0.dev0.dist-info"),
        "rocm_sdk_libraries_custom",
        "7.2.0.dev0",
    );

    let msvc = dir.join("msvc-runtime");
    for name in ["MSVCP140.dll", "VCRUNTIME140_1.dll"] {
        place(name, &msvc.join(MSVC_DIR));
    }
    dist_info(
        &msvc.join("msvc_runtime-14.51.36231.dist-info"),
        "msvc_runtime",
        "14.51.36231",
    );
    Rocm {
        wheel,
        core_bin,
        libs_bin,
        core_tree: core,
        libs_tree: libs,
        msvc_tree: msvc,
        wheel_files,
    }
}

/// rocBLAS's and hipBLASLt's kernels: per-architecture sub-folders of `library/`, some
/// compressed (`.dat.zlib`), some flat with the target in the name, as TheRock's builds lay
/// them out. hipBLASLt has none for gfx1030 and gfx1102 (TheRock excludes it there); both
/// have targets the official wheel was not built for (gfx906, gfx942, gfx1103).
fn kernels(libs_bin: &Path) {
    let rocblas = libs_bin.join("rocblas/library");
    let hipblaslt = libs_bin.join("hipblaslt/library");
    let mut files: Vec<PathBuf> = vec![
        rocblas.join("TensileManifest.txt"),
        rocblas.join("TensileLibrary_lazy_gfx1030.dat"),
        rocblas.join("Kernels.so-000-gfx1030.hsaco"),
        rocblas.join("TensileLibrary_lazy_gfx906.dat"),
        hipblaslt.join("gfx942/TensileLibrary_gfx942.dat.zlib"),
    ];
    for target in WHEEL_TARGETS.iter().skip(1).chain(&["gfx1103"]) {
        files.push(rocblas.join(format!("{target}/TensileLibrary_lazy_{target}.dat.zlib")));
        files.push(rocblas.join(format!("{target}/Kernels.so-000-{target}.co")));
        if *target != "gfx1102" {
            files.push(hipblaslt.join(format!("{target}/TensileLibrary_{target}.dat.zlib")));
            files.push(hipblaslt.join(format!("{target}/extop_{target}.co")));
        }
    }
    for file in files {
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        let line = format!("kernels of {}\n", file.display());
        fs::write(&file, line.repeat(KERNEL_BYTES / line.len() + 1)).unwrap();
    }
}
