//! Stand-ins for the community rocBLAS release assets the HIP SDK 6.2 variants take
//! (likelovewant/ROCmLibs-for-gfx1103-AMD780M-APU v0.6.2.4; `rocm-gfx1010` and `rocm-gfx1012`
//! share one, the others have one each), written by 7-Zip itself (Debian's `7zip`, `7zz`) with
//! the BCJ x86 filter and LZMA2, as 7-Zip's release assets are, and laid out as
//! LykosAI/StabilityMatrix (WindowsPrerequisiteHelper.cs) unpacks them: one folder holding
//! `rocblas.dll` and `library/`.
//!
//! | fact | source |
//! |---|---|
//! | the assets' URLs and names | StabilityMatrix `GetDownloadUrlFromGpuName`; ByronLeeeee/Ollama-For-AMD-Installer `GPU_ROCM_MAPPING` |
//! | one wrapper folder per asset (`rocm gfx1010-xnack-gfx1011-xnack-gfx1012-xnack- for hip sdk 6.2.4`, `rocm gfx1032 for hip skd 6.2.4(navi21 logic)`, `rocm gfx1034-gfx1035-gfx1036 for hip sdk 6.2.4`) with `rocblas.dll` and `library/` | StabilityMatrix `PatchHipSdkIfNecessary` (`zipFolderName`), commit 13dfa48 ("use the right folder paths for rocmlibs") |
//! | `TensileLibrary_lazy_gfx1010.dat`: no feature suffix in the library's name | ROCm/rocBLAS `library/src/tensile_host.cpp` (rocm-6.2.2), ROCm/Tensile `TensileCreateLibrary.py` |
//! | code objects may carry `-xnack-` (`Kernels.so-000-gfx1010-xnack-.hsaco`) | ROCm/Tensile `TensileCreateLibrary.py`, `HipSolutionAdapter.cpp` |
//! | `*_fallback.dat` placeholder libraries carry no target and every arch needs them | ROCm/Tensile `SolutionLibrary.py` (`devicePart == "fallback"`) |

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The asset's path on GitHub (for a `--mirror` loopback server).
pub const ASSET_PATH: &str =
    "/github.com/likelovewant/ROCmLibs-for-gfx1103-AMD780M-APU/releases/download/v0.6.2.4/";

/// Files every target's bundle keeps: a fallback library every arch shares, the manifest.
const SHARED: [&str; 2] = [
    "TensileLibrary_Type_HH_Contraction_l_Ailk_Bljk_Cijk_Dijk_fallback.dat",
    "TensileManifest.txt",
];

/// One community asset as a variant takes it.
pub struct Asset {
    /// The asset's file name, as the release has it.
    pub name: &'static str,
    /// The folder inside the archive that holds `rocblas.dll` and `library/`.
    pub subdir: &'static str,
    /// The kernel files of its targets (`SHARED` comes with every asset).
    pub kernels: &'static [&'static str],
}

const RDNA1_KERNELS: &[&str] = &[
    "TensileLibrary_lazy_gfx1010.dat",
    "Kernels.so-000-gfx1010-xnack-.hsaco",
    "TensileLibrary_lazy_gfx1011.dat",
    "Kernels.so-000-gfx1012-xnack-.hsaco",
    "TensileLibrary_lazy_gfx1012.dat",
];

/// gfx1010, gfx1011 and gfx1012 in one build (`rocm-gfx1010`, `rocm-gfx1012`).
pub const RDNA1: Asset = Asset {
    name: "rocm.gfx1010-xnack-gfx1011-xnack-gfx1012-xnack-.for.hip.sdk.6.2.4.7z",
    subdir: "rocm gfx1010-xnack-gfx1011-xnack-gfx1012-xnack- for hip sdk 6.2.4",
    kernels: RDNA1_KERNELS,
};

/// gfx1032 (`rocm-gfx1032`): its own build, Navi 21's Tensile logic compiled for gfx1032.
pub const GFX1032: Asset = Asset {
    name: "rocm.gfx1032.for.hip.sdk.6.2.4.navi21.logic.7z",
    subdir: "rocm gfx1032 for hip skd 6.2.4(navi21 logic)",
    kernels: &[
        "TensileLibrary_lazy_gfx1032.dat",
        "Kernels.so-000-gfx1032.hsaco",
    ],
};

/// gfx1034, gfx1035 and gfx1036 in one build (`rocm-gfx1034`).
pub const GFX1034: Asset = Asset {
    name: "rocm.gfx1034-gfx1035-gfx1036.for.hip.sdk.6.2.4.7z",
    subdir: "rocm gfx1034-gfx1035-gfx1036 for hip sdk 6.2.4",
    kernels: &[
        "TensileLibrary_lazy_gfx1034.dat",
        "TensileLibrary_lazy_gfx1035.dat",
        "Kernels.so-000-gfx1035.hsaco",
        "TensileLibrary_lazy_gfx1036.dat",
    ],
};

impl Asset {
    /// The files of `library/` a bundle for `targets` keeps: its targets' and the shared
    /// ones, sorted.
    pub fn kept(&self, targets: &[&str]) -> Vec<&'static str> {
        let mut kept: Vec<&str> = self
            .kernels
            .iter()
            .copied()
            .filter(|k| {
                targets
                    .iter()
                    .any(|t| k.contains(&format!("{t}.")) || k.contains(&format!("{t}-")))
            })
            .chain(SHARED)
            .collect();
        kept.sort();
        kept
    }

    /// The `.7z` in `dir`, holding `rocblas_dll` and the kernels; `None` (the test skips, or
    /// fails under CI) without `7zz`.
    pub fn write_7z(&self, dir: &Path, rocblas_dll: &Path) -> Option<PathBuf> {
        if super::skip::missing_from_path("7zz", "apt-get install 7zip") {
            return None;
        }
        let tree = dir.join("asset-tree");
        let folder = tree.join(self.subdir);
        fs::create_dir_all(folder.join("library")).unwrap();
        fs::copy(rocblas_dll, folder.join("rocblas.dll")).unwrap();
        for name in self.kernels.iter().chain(&SHARED) {
            fs::write(folder.join("library").join(name), name.repeat(200)).unwrap();
        }
        let out = dir.join(self.name);
        super::run_ok(
            Command::new("7zz")
                .args(["a", "-t7z", "-m0=BCJ", "-m1=LZMA2", "-bd", "-bso0"])
                .arg(&out)
                .arg(self.subdir)
                .current_dir(&tree),
        );
        Some(out)
    }
}
