//! A stand-in for the community rocBLAS release asset the `rocm-gfx1010` variant takes
//! (likelovewant/ROCmLibs-for-gfx1103-AMD780M-APU v0.6.2.4,
//! `rocm.gfx1010-xnack-gfx1011-xnack-gfx1012-xnack-.for.hip.sdk.6.2.4.7z`), written by 7-Zip
//! itself (Debian's `7zip`, `7zz`) with the BCJ x86 filter and LZMA2, as 7-Zip's release
//! assets are, and laid out as LykosAI/StabilityMatrix (WindowsPrerequisiteHelper.cs) unpacks
//! it: one folder holding `rocblas.dll` and `library/`.
//!
//! | fact | source |
//! |---|---|
//! | the asset's URL and name | StabilityMatrix `GetDownloadUrlFromGpuName`; ByronLeeeee/Ollama-For-AMD-Installer `GPU_ROCM_MAPPING` |
//! | one wrapper folder `rocm gfx1010-xnack-gfx1011-xnack-gfx1012-xnack- for hip sdk 6.2.4` with `rocblas.dll` and `library/` | StabilityMatrix commit 13dfa48 ("use the right folder paths for rocmlibs") |
//! | `TensileLibrary_lazy_gfx1010.dat`: no feature suffix in the library's name | ROCm/rocBLAS `library/src/tensile_host.cpp` (rocm-6.2.2), ROCm/Tensile `TensileCreateLibrary.py` |
//! | code objects may carry `-xnack-` (`Kernels.so-000-gfx1010-xnack-.hsaco`) | ROCm/Tensile `TensileCreateLibrary.py`, `HipSolutionAdapter.cpp` |
//! | `*_fallback.dat` placeholder libraries carry no target and every arch needs them | ROCm/Tensile `SolutionLibrary.py` (`devicePart == "fallback"`) |

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The folder inside the archive that holds `rocblas.dll` and `library/`.
pub const SUBDIR: &str = "rocm gfx1010-xnack-gfx1011-xnack-gfx1012-xnack- for hip sdk 6.2.4";
/// The asset's file name, as the release has it.
pub const ASSET: &str = "rocm.gfx1010-xnack-gfx1011-xnack-gfx1012-xnack-.for.hip.sdk.6.2.4.7z";
/// The asset's path on GitHub (for a `--mirror` loopback server).
pub const ASSET_PATH: &str =
    "/github.com/likelovewant/ROCmLibs-for-gfx1103-AMD780M-APU/releases/download/v0.6.2.4/";

/// The kernel files of the stand-in: gfx1010 with and without the feature suffix, a fallback
/// library every arch shares, the manifest, and gfx1011/gfx1012 files (left out of a gfx1010
/// bundle).
pub const KERNELS: [&str; 7] = [
    "TensileLibrary_lazy_gfx1010.dat",
    "Kernels.so-000-gfx1010-xnack-.hsaco",
    "TensileLibrary_Type_HH_Contraction_l_Ailk_Bljk_Cijk_Dijk_fallback.dat",
    "TensileManifest.txt",
    "TensileLibrary_lazy_gfx1011.dat",
    "Kernels.so-000-gfx1012-xnack-.hsaco",
    "TensileLibrary_lazy_gfx1012.dat",
];

/// Those a gfx1010 bundle keeps.
pub const KEPT: [&str; 4] = [
    "TensileLibrary_lazy_gfx1010.dat",
    "Kernels.so-000-gfx1010-xnack-.hsaco",
    "TensileLibrary_Type_HH_Contraction_l_Ailk_Bljk_Cijk_Dijk_fallback.dat",
    "TensileManifest.txt",
];

/// The `.7z` in `dir`, holding `rocblas_dll` and [`KERNELS`]; `None` (the test skips, or
/// fails under CI) without `7zz`.
pub fn community_7z(dir: &Path, rocblas_dll: &Path) -> Option<PathBuf> {
    if super::skip::missing_from_path("7zz", "apt-get install 7zip") {
        return None;
    }
    let tree = dir.join("asset-tree");
    let folder = tree.join(SUBDIR);
    fs::create_dir_all(folder.join("library")).unwrap();
    fs::copy(rocblas_dll, folder.join("rocblas.dll")).unwrap();
    for name in KERNELS {
        fs::write(folder.join("library").join(name), name.repeat(200)).unwrap();
    }
    let out = dir.join(ASSET);
    super::run_ok(
        Command::new("7zz")
            .args(["a", "-t7z", "-m0=BCJ", "-m1=LZMA2", "-bd", "-bso0"])
            .arg(&out)
            .arg(SUBDIR)
            .current_dir(&tree),
    );
    Some(out)
}
