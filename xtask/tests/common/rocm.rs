//! A synthetic ROCm 7.2 for Windows: real PE DLLs (mingw-w64) with the names and import
//! graph of the official CTranslate2 ROCm wheel and AMD's `rocm_sdk_core` /
//! `rocm_sdk_libraries_custom` wheels, laid out as those wheels unpack.

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

/// The synthetic input: a CTranslate2 wheel and two unpacked ROCm SDK wheels.
pub struct Rocm {
    pub wheel: PathBuf,
    pub core_bin: PathBuf,
    pub libs_bin: PathBuf,
    /// The unpacked SDK wheels' trees: `rocm_sdk_core/` and `rocm_sdk_libraries_custom/`,
    /// each with its `_rocm_sdk_*/bin` and `*.dist-info`.
    pub core_tree: PathBuf,
    pub libs_tree: PathBuf,
    /// The files of the input wheel.
    pub wheel_files: BTreeSet<String>,
}

/// Builds the synthetic CTranslate2 ROCm wheel and SDK under `dir`.
pub fn rocm(dir: &Path) -> Rocm {
    let build = dir.join("build");
    mingw::build(
        &build,
        &[
            Dll {
                name: "amd_comgr0702.dll",
                imports: &[],
                loads: &[],
            },
            // The HIP runtime loads the code-object manager at run time: no import names it.
            Dll {
                name: "amdhip64_7.dll",
                imports: &[],
                loads: &["amd_comgr0702.dll"],
            },
            Dll {
                name: "hiprtc0702.dll",
                imports: &["amdhip64_7.dll"],
                loads: &[],
            },
            Dll {
                name: "decoy_core.dll",
                imports: &[],
                loads: &[],
            },
            Dll {
                name: "rocblas.dll",
                imports: &["amdhip64_7.dll"],
                loads: &[],
            },
            Dll {
                name: "hipblas.dll",
                imports: &["rocblas.dll", "amdhip64_7.dll"],
                loads: &[],
            },
            Dll {
                name: "hipblaslt.dll",
                imports: &["amdhip64_7.dll"],
                loads: &[],
            },
            Dll {
                name: "libiomp5md.dll",
                imports: &[],
                loads: &[],
            },
            // Never shipped anywhere: the policy says Python provides it.
            Dll {
                name: "python312.dll",
                imports: &[],
                loads: &[],
            },
            Dll {
                name: "ctranslate2.dll",
                imports: &["amdhip64_7.dll", "hipblas.dll", "libiomp5md.dll"],
                loads: &[],
            },
            Dll {
                name: EXT,
                imports: &["ctranslate2.dll", "python312.dll"],
                loads: &[],
            },
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
    for name in ["hipblas.dll", "rocblas.dll", "hipblaslt.dll"] {
        place(name, &libs_bin);
    }
    let kernels: [(&str, &[&str]); 2] = [
        (
            "rocblas/library",
            &[
                "TensileLibrary_gfx1030.dat",
                "TensileLibrary_gfx1100.dat",
                "TensileLibrary_gfx906.dat",
                "Kernels.so-000-gfx1100.hsaco",
            ],
        ),
        (
            "hipblaslt/library",
            &[
                "TensileLibrary_gfx1100.dat",
                "TensileLibrary_gfx1151.dat",
                "TensileLibrary_gfx942.dat",
            ],
        ),
    ];
    for (folder, names) in kernels {
        let library = libs_bin.join(folder);
        fs::create_dir_all(&library).unwrap();
        for name in names {
            fs::write(
                library.join(name),
                format!("kernels of {name}\n").repeat(64),
            )
            .unwrap();
        }
    }
    dist_info(
        &libs.join("rocm_sdk_libraries_custom-7.2.0.dev0.dist-info"),
        "rocm_sdk_libraries_custom",
        "7.2.0.dev0",
    );
    Rocm {
        wheel,
        core_bin,
        libs_bin,
        core_tree: core,
        libs_tree: libs,
        wheel_files,
    }
}
