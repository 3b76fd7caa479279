//! Which GPUs each variant serves, as data: NVIDIA compute capabilities and the driver each
//! CUDA major needs, AMD gfx targets, and the consumer cards they come down to.
//!
//! Made from the resolved variant files (`gpu-targets`, `cuda-arch`, `[sdk]`,
//! `[bundle.requires-dist]`, `local-version`), so the README's card table, `variants --json`,
//! the release's `variants.json` and the selector an app runs (`xtask/python/
//! ct2_variant_select.py`, whose data block is this module's JSON) never disagree.
//!
//! Sources of the facts that are not in the variant files:
//! - `cuda-arch = "Common"`: this project's explicit list per CUDA major ([`COMMON_CUDA_12`],
//!   [`COMMON_CUDA_13`]), never CTranslate2's own `Common` (CMake's
//!   `CUDA_COMMON_GPU_ARCHITECTURES`: `5.3 6.0 6.1 7.0 7.5 8.0 8.6 8.6+PTX` for every toolkit
//!   since 11.1, so RTX 40/50 and H100 got PTX only). Which toolkit builds what: `sdk/cuda_arch.rs`.
//!   A cubin for sm_XY runs on devices of compute capability X.Z with Z >= Y; PTX for
//!   compute_XY is compiled by the driver for any newer device (NVIDIA's CUDA C++ Programming
//!   Guide, "Binary Compatibility" and "PTX Compatibility").
//! - Minimum drivers: NVIDIA's CUDA Toolkit Release Notes, table "CUDA Toolkit and Minimum
//!   Required Driver Version for CUDA Minor Version Compatibility" (CUDA 12.x: >= 525.60.13
//!   Linux, >= 528.33 Windows; CUDA 13.x: >= 580), repeated on
//!   docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html (12.x >= 525,
//!   13.x >= 580).
//! - gfx targets and their products: ROCm/TheRock `cmake/therock_amdgpu_targets.cmake` (the
//!   product named with each target) and LLVM's AMDGPUUsage processor table.
//! - PCI device IDs: pci.ids (pciutils/pciids) version 2026.08.22, vendor 1002; each chip's
//!   code name there (Navi 10, Navi 23, Strix Halo…) joined to its gfx target through the
//!   products both name.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::variant::{Catalog, Choices, SDK_MAJOR, SdkKind};
use ct2v_support::diagnostic::InputError;
use ct2v_support::platform::Platform;

/// The version of the JSON layout (`variants --json`, a release's `variants.json`, the
/// selector's data block).
pub(crate) const SCHEMA_VERSION: u32 = 1;

/// `Common` with CUDA 12.8 and newer 12.x: the official wheels' Maxwell-to-Ampere cubins
/// (sm_53 to sm_86), then a cubin for each newer family a PC or server GPU has: Ada (sm_89:
/// RTX 40, L4, L40), Hopper (sm_90), Blackwell data centre (sm_100: B200; also runs on 10.3,
/// B300) and Blackwell RTX (sm_120: RTX 50, RTX PRO; also runs on 12.1), and PTX for the
/// newest (compute_120) for GPUs after it. 10.0 and 12.0 need CUDA 12.8 (`sdk/cuda_arch.rs`)
/// and CTranslate2's patch 0005 (CMake's select_compute_arch.cmake reads one-digit majors only).
pub(crate) const COMMON_CUDA_12: &str = "5.3;6.0;6.1;7.0;7.5;8.0;8.6;8.9;9.0;10.0;12.0;12.0+PTX";
/// `Common` with CUDA 13.x: the same less sm_53 to sm_70, which CUDA 13 cannot build. Every
/// compute capability CUDA 13 knows from 7.5 up runs a cubin of this list (8.7 and 8.8 the
/// sm_86 one, 10.3 sm_100, 12.1 sm_120) except 11.0, Jetson Thor, an ARM board this
/// x86-64/Windows wheel never reaches (`nvcc --list-gpu-code` of CUDA 13.0:
/// docs/runs/2026-11-29-h200-cuda-targets.md).
pub(crate) const COMMON_CUDA_13: &str = "7.5;8.0;8.6;8.9;9.0;10.0;12.0;12.0+PTX";

/// What `Common` is for a CUDA toolkit of `major`.
pub(crate) fn common_for_major(major: u32) -> &'static str {
    if major >= 13 {
        COMMON_CUDA_13
    } else {
        COMMON_CUDA_12
    }
}

/// The oldest driver that runs what a CUDA toolkit of `major` builds (minor version
/// compatibility): `(major, Linux, Windows)`.
pub(crate) const CUDA_DRIVERS: &[(u32, &str, &str)] =
    &[(12, "525.60.13", "528.33"), (13, "580", "580")];

/// The pci.ids version the device names below are from.
pub(crate) const PCI_IDS_VERSION: &str = "2026.08.22";

/// AMD (vendor 0x1002) display devices of RDNA 1 and newer: device ID, gfx target, pci.ids name.
pub(crate) const AMD_PCI_IDS: &[(u16, &str, &str)] = &[
    (0x1114, "gfx1152", "Krackan [Radeon 840M / 860M Graphics]"),
    (0x13c0, "gfx1036", "Granite Ridge [Radeon Graphics]"),
    (0x150e, "gfx1150", "Strix [Radeon 880M / 890M]"),
    (
        0x1586,
        "gfx1151",
        "Strix Halo [Radeon Graphics / Radeon 8050S Graphics / Radeon 8060S Graphics]",
    ),
    (0x15bf, "gfx1103", "Phoenix1"),
    (0x15c8, "gfx1103", "Phoenix2"),
    (0x163f, "gfx1033", "VanGogh [AMD Custom GPU 0405]"),
    (0x164e, "gfx1036", "Raphael"),
    (0x1681, "gfx1035", "Rembrandt [Radeon 680M]"),
    (0x1900, "gfx1103", "HawkPoint1"),
    (0x1901, "gfx1103", "HawkPoint2"),
    (0x7310, "gfx1010", "Navi 10 [Radeon Pro W5700X]"),
    (0x7312, "gfx1010", "Navi 10 [Radeon Pro W5700]"),
    (0x7319, "gfx1010", "Navi 10 [Radeon Pro 5700 XT]"),
    (0x731b, "gfx1010", "Navi 10 [Radeon Pro 5700]"),
    (
        0x731f,
        "gfx1010",
        "Navi 10 [Radeon RX 5600 OEM/5600 XT / 5700/5700 XT]",
    ),
    (
        0x7340,
        "gfx1012",
        "Navi 14 [Radeon RX 5500/5500M / Pro 5300/5300M/5500M]",
    ),
    (0x7341, "gfx1012", "Navi 14 [Radeon Pro W5500]"),
    (0x7347, "gfx1012", "Navi 14 [Radeon Pro W5500M]"),
    (0x734f, "gfx1012", "Navi 14 [Radeon Pro W5300M]"),
    (0x7360, "gfx1011", "Navi 12 [Radeon Pro 5600M/V520/BC-160]"),
    (0x7362, "gfx1011", "Navi 12 [Radeon Pro V520/V540]"),
    (0x73a1, "gfx1030", "Navi 21 [Radeon Pro V620]"),
    (0x73a2, "gfx1030", "Navi 21 Pro-XTA [Radeon Pro W6900X]"),
    (0x73a3, "gfx1030", "Navi 21 GL-XL [Radeon PRO W6800]"),
    (0x73a5, "gfx1030", "Navi 21 [Radeon RX 6950 XT]"),
    (
        0x73ab,
        "gfx1030",
        "Navi 21 Pro-XLA [Radeon Pro W6800X/Radeon Pro W6800X Duo]",
    ),
    (0x73ae, "gfx1030", "Navi 21 [Radeon Pro V620 MxGPU]"),
    (0x73af, "gfx1030", "Navi 21 [Radeon RX 6900 XT]"),
    (
        0x73bf,
        "gfx1030",
        "Navi 21 [Radeon RX 6800/6800 XT / 6900 XT]",
    ),
    (0x73c3, "gfx1031", "Navi 22"),
    (0x73ce, "gfx1031", "Navi 22-XL SRIOV MxGPU"),
    (
        0x73df,
        "gfx1031",
        "Navi 22 [Radeon RX 6700/6700 XT/6750 XT / 6800M/6850M XT]",
    ),
    (0x73e0, "gfx1032", "Navi 23"),
    (0x73e1, "gfx1032", "Navi 23 WKS-XM [Radeon PRO W6600M]"),
    (0x73e3, "gfx1032", "Navi 23 WKS-XL [Radeon PRO W6600]"),
    (
        0x73ef,
        "gfx1032",
        "Navi 23 [Radeon RX 6650 XT / 6700S / 6800S]",
    ),
    (0x73f0, "gfx1102", "Navi 33 [Radeon RX 7600M XT]"),
    (0x73ff, "gfx1032", "Navi 23 [Radeon RX 6600/6600 XT/6600M]"),
    (0x7421, "gfx1034", "Navi 24 [Radeon PRO W6500M]"),
    (0x7422, "gfx1034", "Navi 24 [Radeon PRO W6400]"),
    (0x7423, "gfx1034", "Navi 24 [Radeon PRO W6300/W6300M]"),
    (0x7424, "gfx1034", "Navi 24 [Radeon RX 6300]"),
    (0x743f, "gfx1034", "Navi 24 [Radeon RX 6400/6500 XT/6500M]"),
    (0x7448, "gfx1100", "Navi 31 [Radeon Pro W7900]"),
    (0x7449, "gfx1100", "Navi 31 [Radeon Pro W7800 48GB]"),
    (0x744a, "gfx1100", "Navi 31 [Radeon Pro W7900 Dual Slot]"),
    (0x744b, "gfx1100", "Navi 31 [Radeon Pro W7900D]"),
    (
        0x744c,
        "gfx1100",
        "Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M]",
    ),
    (0x745e, "gfx1100", "Navi 31 [Radeon Pro W7800]"),
    (0x7460, "gfx1101", "Navi 32 GL-XL [AMD Radeon PRO V710]"),
    (0x7461, "gfx1101", "Navi 32 [AMD Radeon PRO V710]"),
    (0x7470, "gfx1101", "Navi 32 [Radeon PRO W7700]"),
    (0x747e, "gfx1101", "Navi 32 [Radeon RX 7700 XT / 7800 XT]"),
    (
        0x7480,
        "gfx1102",
        "Navi 33 [Radeon RX 7600/7600 XT/7600M XT/7600S/7700S / PRO W7600]",
    ),
    (0x7481, "gfx1102", "Navi 33 [Steam Machine]"),
    (0x7483, "gfx1102", "Navi 33 [Radeon RX 7600M/7600M XT]"),
    (0x7487, "gfx1102", "Navi 33 [Radeon Graphics]"),
    (0x7489, "gfx1102", "Navi 33 [Radeon Pro W7500]"),
    (0x748b, "gfx1102", "Navi 33 [Radeon Graphics]"),
    (0x7499, "gfx1102", "Navi 33 [Radeon RX 7400/7300/Pro W7400]"),
    (0x749f, "gfx1102", "Navi 33 [Radeon RX 7500]"),
    (
        0x7550,
        "gfx1201",
        "Navi 48 [Radeon RX 9070/9070 XT/9070 GRE]",
    ),
    (0x7551, "gfx1201", "Navi 48 [Radeon AI PRO R9700]"),
    (0x7590, "gfx1200", "Navi 44 [Radeon RX 9050 / 9060 XT]"),
];

/// AMD consumer GPUs by target: gfx target, generation, products, integrated.
pub(crate) const AMD_CARDS: &[(&str, &str, &str, bool)] = &[
    ("gfx1010", "RDNA 1", "RX 5700 XT, 5700, 5600 XT", false),
    ("gfx1011", "RDNA 1", "Radeon Pro V520, Pro 5600M", false),
    ("gfx1012", "RDNA 1", "RX 5500 XT, 5500, 5300", false),
    (
        "gfx1030",
        "RDNA 2",
        "RX 6950 XT, 6900 XT, 6800 XT, 6800",
        false,
    ),
    ("gfx1031", "RDNA 2", "RX 6750 XT, 6700 XT, 6700", false),
    ("gfx1032", "RDNA 2", "RX 6650 XT, 6600 XT, 6600", false),
    ("gfx1033", "RDNA 2", "Steam Deck (Van Gogh)", true),
    ("gfx1034", "RDNA 2", "RX 6500 XT, 6400", false),
    ("gfx1035", "RDNA 2", "Radeon 680M, 660M (Rembrandt)", true),
    (
        "gfx1036",
        "RDNA 2",
        "Radeon Graphics of Ryzen 7000/9000 desktop (Raphael, Granite Ridge)",
        true,
    ),
    ("gfx1100", "RDNA 3", "RX 7900 XTX, 7900 XT, 7900 GRE", false),
    ("gfx1101", "RDNA 3", "RX 7800 XT, 7700 XT", false),
    ("gfx1102", "RDNA 3", "RX 7600 XT, 7600", false),
    (
        "gfx1103",
        "RDNA 3",
        "Radeon 780M, 760M, 740M (Phoenix, Hawk Point)",
        true,
    ),
    (
        "gfx1150",
        "RDNA 3.5",
        "Radeon 890M, 880M (Strix Point)",
        true,
    ),
    (
        "gfx1151",
        "RDNA 3.5",
        "Radeon 8060S, 8050S (Strix Halo)",
        true,
    ),
    ("gfx1152", "RDNA 3.5", "Radeon 860M, 840M (Krackan)", true),
    // ROCm/TheRock cmake/therock_amdgpu_targets.cmake: `gfx1153 "AMD Radeon 820M iGPU"`.
    ("gfx1153", "RDNA 3.5", "Radeon 820M", true),
    ("gfx1200", "RDNA 4", "RX 9060 XT", false),
    ("gfx1201", "RDNA 4", "RX 9070 XT, 9070, 9070 GRE", false),
];

/// NVIDIA GPUs by compute capability (NVIDIA's "CUDA GPUs" list): capability, generation,
/// products.
pub(crate) const NVIDIA_CARDS: &[(&str, &str, &str)] = &[
    ("5.0", "Maxwell", "GTX 750 Ti, 750"),
    ("5.2", "Maxwell", "GTX 980 Ti, 980, 970, 960, 950, Titan X"),
    ("6.0", "Pascal", "Tesla P100"),
    ("6.1", "Pascal", "GTX 1080 Ti … 1050, Titan Xp"),
    ("7.0", "Volta", "Titan V, Tesla V100"),
    ("7.5", "Turing", "RTX 20 series, GTX 16 series"),
    ("8.0", "Ampere", "A100"),
    ("8.6", "Ampere", "RTX 30 series"),
    ("8.9", "Ada Lovelace", "RTX 40 series"),
    ("9.0", "Hopper", "H100"),
    ("10.0", "Blackwell", "B200"),
    ("12.0", "Blackwell", "RTX 50 series"),
];

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Coverage {
    pub schema_version: u32,
    pub variants: Vec<VariantCoverage>,
    /// Consumer cards and the builds that serve them (empty: none does).
    pub cards: Vec<Card>,
    pub(crate) cuda_drivers: Vec<CudaDriver>,
    pub amd_pci_ids: PciIds,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VariantCoverage {
    pub name: String,
    pub description: String,
    pub ctranslate2: String,
    pub platforms: Vec<String>,
    /// One per local version label (the cuda variant has one per CUDA major).
    pub builds: Vec<BuildCoverage>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BuildCoverage {
    pub local_version: String,
    /// `ctranslate2==<version>+<local>`.
    pub requirement: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nvidia: Option<NvidiaCoverage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub amd: Option<AmdCoverage>,
    /// Platform → the largest released wheel's size in bytes; filled by `release` only (the
    /// variant files do not know what a built wheel weighs).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub download_size: BTreeMap<String, u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NvidiaCoverage {
    pub(crate) cuda_major: u32,
    /// The `CUDA_ARCH_LIST` the build gets (`Common` written out for this major).
    pub cuda_arch_list: String,
    /// Compute capabilities with a cubin (sm_XY): they serve X.Y up to the next major.
    pub(crate) sass: Vec<String>,
    /// Compute capabilities with PTX: the driver compiles it for any newer device.
    pub(crate) ptx: Vec<String>,
    /// The oldest compute capability served.
    pub(crate) cc_min: String,
    pub driver_min_linux: String,
    pub driver_min_windows: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AmdCoverage {
    pub gfx: Vec<String>,
    /// The HIP SDK a build from source is compiled against (`6.2`): its wheel uses the HIP
    /// runtime of the display driver, which must be at least that new. `None`: the wheel
    /// carries its ROCm runtime (`rocm`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hip_sdk: Option<String>,
    /// The ROCm of TheRock's Python wheels the build carries its runtime from (the version of
    /// its `rocm-sdk-core` input: `10.0.0`, `7.2.0`); `None` for a HIP SDK build.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rocm: Option<String>,
}

impl AmdCoverage {
    /// How well this build fits a card of `generation`, higher first. RDNA 1: a build on the
    /// HIP 6 runtime (the one run on an RX 5700 XT; HIP 7 sees no RDNA 1 device, the maintainers
    /// report), until ROCm 10 is run on one. Others: the newest ROCm the wheel carries (ROCm
    /// 7.2's runtime hangs or misses RDNA 2 cards on Windows: PinW/whisper-key-local PR #57,
    /// ROCm/hip#3899), a HIP SDK build last.
    pub(crate) fn fit(&self, generation: &str) -> u32 {
        let major = |v: &Option<String>| {
            v.as_deref()
                .and_then(|v| v.split('.').next()?.parse::<u32>().ok())
                .unwrap_or(0)
        };
        if generation == "RDNA 1" {
            u32::from(major(&self.hip_sdk) == 6)
        } else {
            major(&self.rocm)
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Card {
    pub vendor: String,
    pub(crate) generation: String,
    /// `gfx1030`, or a compute capability such as `8.6`.
    pub target: String,
    pub(crate) products: String,
    pub(crate) integrated: bool,
    pub served_by: Vec<ServedBy>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServedBy {
    pub variant: String,
    pub local_version: String,
    /// `native` (a cubin or gfx kernels for it) or `ptx` (compiled by the driver at first use).
    pub how: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct CudaDriver {
    pub(crate) cuda_major: u32,
    pub linux: String,
    pub windows: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PciIds {
    pub source: String,
    pub version: String,
    pub vendor: String,
    pub devices: Vec<PciDevice>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PciDevice {
    /// Four lower-case hex digits, as in `PCI\VEN_1002&DEV_73FF` (upper-cased there) and sysfs.
    pub device: String,
    pub gfx: String,
    pub name: String,
}

/// A compute capability as `(major, minor)`.
fn cc(text: &str) -> Option<(u32, u32)> {
    let (a, b) = text.split_once('.')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// How a build serves compute capability `device`: a cubin of the same major and an older or
/// equal minor, else PTX of an older or equal capability.
pub(crate) fn serves_cc(nvidia: &NvidiaCoverage, device: &str) -> Option<&'static str> {
    let device = cc(device)?;
    if nvidia
        .sass
        .iter()
        .filter_map(|s| cc(s))
        .any(|(major, minor)| major == device.0 && minor <= device.1)
    {
        return Some("native");
    }
    nvidia
        .ptx
        .iter()
        .filter_map(|p| cc(p))
        .any(|p| p <= device)
        .then_some("ptx")
}

/// The cubin and PTX capabilities of a `CUDA_ARCH_LIST` of numbers (`Common` already
/// written out); a name CMake knows (`Turing`) is not read here.
pub(crate) fn arch_list(list: &str) -> Result<(Vec<String>, Vec<String>), String> {
    let mut sass = Vec::new();
    let mut ptx = Vec::new();
    for part in list.split([';', ' ', ',']).filter(|p| !p.is_empty()) {
        let (arch, with_ptx) = match part.strip_suffix("+PTX") {
            Some(a) => (a, true),
            None => (part, false),
        };
        if cc(arch).is_none() {
            return Err(format!(
                "`{part}` is not a compute capability (such as 8.6 or 8.6+PTX)"
            ));
        }
        if !sass.iter().any(|s| s == arch) {
            sass.push(arch.to_string());
        }
        if with_ptx && !ptx.iter().any(|p| p == arch) {
            ptx.push(arch.to_string());
        }
    }
    if sass.is_empty() {
        return Err("it names no architecture".into());
    }
    Ok((sass, ptx))
}

fn nvidia(major: u32, requested: &str) -> Result<NvidiaCoverage, String> {
    let list = match requested {
        "Common" => common_for_major(major).to_string(),
        "Auto" | "All" => {
            return Err(format!(
                "`{requested}` depends on the machine or the toolkit that builds it, so which \
                 GPUs the wheel serves is not known from the file"
            ));
        }
        other => other.to_string(),
    };
    let (sass, ptx) = arch_list(&list)?;
    let cc_min = sass
        .iter()
        .filter_map(|s| cc(s).map(|c| (c, s)))
        .min()
        .map(|(_, s)| s.clone())
        .unwrap_or_default();
    let (linux, windows) = CUDA_DRIVERS
        .iter()
        .find(|(m, _, _)| *m == major)
        .map(|(_, l, w)| (l.to_string(), w.to_string()))
        .ok_or_else(|| {
            format!(
                "no minimum driver is known for CUDA {major} (variant/coverage.rs, CUDA_DRIVERS)"
            )
        })?;
    Ok(NvidiaCoverage {
        cuda_major: major,
        cuda_arch_list: list,
        sass,
        ptx,
        cc_min,
        driver_min_linux: linux,
        driver_min_windows: windows,
    })
}

/// The coverage of every variant of `catalog`.
pub fn of_catalog(catalog: &Catalog) -> Result<Coverage, InputError> {
    let names: Vec<&str> = catalog.variant_names().collect();
    of_variants(catalog, &names)
}

/// The coverage of the variants `names` of `catalog` (a release's), in the catalog's order.
pub(crate) fn of_variants(catalog: &Catalog, names: &[&str]) -> Result<Coverage, InputError> {
    let mut variants = Vec::new();
    for name in catalog.variant_names().filter(|n| names.contains(n)) {
        variants.push(of_variant(catalog, name)?);
    }
    Ok(with_cards(variants))
}

/// The coverage around `variants`: the card table, the driver table and the PCI IDs.
pub(crate) fn with_cards(variants: Vec<VariantCoverage>) -> Coverage {
    let mut cards = Vec::new();
    for (cap, generation, products) in NVIDIA_CARDS {
        let served_by = variants
            .iter()
            .flat_map(|v| v.builds.iter().map(move |b| (v, b)))
            .filter_map(|(v, b)| {
                let how = serves_cc(b.nvidia.as_ref()?, cap)?;
                Some(ServedBy {
                    variant: v.name.clone(),
                    local_version: b.local_version.clone(),
                    how: how.into(),
                })
            })
            .collect();
        cards.push(Card {
            vendor: "NVIDIA".into(),
            generation: generation.to_string(),
            target: cap.to_string(),
            products: products.to_string(),
            integrated: false,
            served_by,
        });
    }
    for (gfx, generation, products, integrated) in AMD_CARDS {
        let served_by = variants
            .iter()
            .flat_map(|v| v.builds.iter().map(move |b| (v, b)))
            .filter(|(_, b)| {
                b.amd
                    .as_ref()
                    .is_some_and(|a| a.gfx.iter().any(|g| g == gfx))
            })
            .map(|(v, b)| ServedBy {
                variant: v.name.clone(),
                local_version: b.local_version.clone(),
                how: "native".into(),
            })
            .collect();
        cards.push(Card {
            vendor: "AMD".into(),
            generation: generation.to_string(),
            target: gfx.to_string(),
            products: products.to_string(),
            integrated: *integrated,
            served_by,
        });
    }
    Coverage {
        schema_version: SCHEMA_VERSION,
        variants,
        cards,
        cuda_drivers: CUDA_DRIVERS
            .iter()
            .map(|(major, linux, windows)| CudaDriver {
                cuda_major: *major,
                linux: linux.to_string(),
                windows: windows.to_string(),
            })
            .collect(),
        amd_pci_ids: PciIds {
            source: "pci.ids (github.com/pciutils/pciids), vendor 1002; gfx targets from \
                     ROCm/TheRock cmake/therock_amdgpu_targets.cmake and LLVM AMDGPUUsage"
                .into(),
            version: PCI_IDS_VERSION.into(),
            vendor: "1002".into(),
            devices: AMD_PCI_IDS
                .iter()
                .map(|(device, gfx, name)| PciDevice {
                    device: format!("{device:04x}"),
                    gfx: gfx.to_string(),
                    name: name.to_string(),
                })
                .collect(),
        },
    }
}

fn of_variant(catalog: &Catalog, name: &str) -> Result<VariantCoverage, InputError> {
    let file = format!("variants/{name}.toml");
    let mut platforms = Vec::new();
    let mut first = None;
    for platform in Platform::ALL {
        if let Some(pythons) = catalog.pythons_for(name, platform)?
            && let Some(python) = pythons.first()
        {
            platforms.push(platform.name().to_string());
            first.get_or_insert((platform, python.clone()));
        }
    }
    let Some((platform, python)) = first else {
        return Ok(VariantCoverage {
            name: name.into(),
            description: catalog.description(name).into(),
            ctranslate2: catalog.version_of(name).into(),
            platforms,
            builds: Vec::new(),
        });
    };
    let resolved = catalog.resolve(
        name,
        &Choices {
            platform: Some(platform),
            python: Some(python),
            ..Choices::default()
        },
    )?;
    let Some(label) = resolved.local_version.clone() else {
        return Err(InputError::new(format!(
            "{file}: variant `{name}` has no local-version, so no wheel of it can be named"
        ))
        .note("add `local-version = \"…\"` (cpu, cu{sdk-major}, rocm72, gfx1010)"));
    };
    let version = resolved.ctranslate2.clone();
    let build = |local: String, nvidia, amd| BuildCoverage {
        requirement: format!("ctranslate2=={version}+{local}"),
        local_version: local,
        nvidia,
        amd,
        download_size: BTreeMap::new(),
    };
    // A repackaged wheel (rocm) has no [sdk] but names its targets; a variant is for a GPU
    // when its verify step asks for GPU compute types.
    let for_gpu = resolved.verify.compute_types.contains_key("cuda");
    let builds = match resolved.sdk.as_ref().map(|s| (s.kind, s)) {
        None if resolved.gpu_targets.is_empty() && !for_gpu => vec![build(label, None, None)],
        None | Some((SdkKind::Hip, _)) => {
            if resolved.gpu_targets.is_empty() {
                return Err(InputError::new(format!(
                    "{file}: variant `{name}` is for AMD GPUs but names no gpu-targets, so which \
                     GPUs it serves is unknown"
                ))
                .note("add `gpu-targets = [\"gfx1030\", …]`"));
            }
            let rocm = resolved
                .inputs
                .get("rocm-sdk-core")
                .and_then(|i| i.package.as_deref())
                .and_then(|p| p.split_whitespace().nth(1))
                .map(str::to_string);
            let amd = AmdCoverage {
                gfx: resolved.gpu_targets.clone(),
                hip_sdk: resolved
                    .sdk
                    .as_ref()
                    .filter(|_| rocm.is_none())
                    .map(|s| s.version.clone()),
                rocm,
            };
            vec![build(label, None, Some(amd))]
        }
        Some((SdkKind::Cuda, sdk)) => {
            let floor: u32 = crate::variant::sdk_major(&sdk.version)
                .and_then(|m| m.parse().ok())
                .ok_or_else(|| {
                    InputError::new(format!(
                        "{file}: [sdk] version `{}` does not start with a CUDA major",
                        sdk.version
                    ))
                })?;
            let mut majors: Vec<u32> = resolved
                .bundle
                .requires_dist
                .keys()
                .filter_map(|k| k.parse().ok())
                .filter(|m| *m >= floor)
                .collect();
            if majors.is_empty() || !label.contains(SDK_MAJOR) {
                majors = vec![floor];
            }
            majors.sort_unstable();
            let requested = resolved.cuda_arch.as_deref().unwrap_or("Auto");
            let mut builds = Vec::new();
            for major in majors {
                let coverage = nvidia(major, requested).map_err(|why| {
                    InputError::new(format!(
                        "{file}: cuda-arch `{requested}` of variant `{name}`: {why}"
                    ))
                    .note("give cuda-arch as `Common` or as compute capabilities, e.g. \"7.5;8.6;8.6+PTX\"")
                })?;
                builds.push(build(
                    label.replace(SDK_MAJOR, &major.to_string()),
                    Some(coverage),
                    None,
                ));
            }
            builds
        }
    };
    Ok(VariantCoverage {
        name: name.into(),
        description: catalog.description(name).into(),
        ctranslate2: version,
        platforms,
        builds,
    })
}

/// One row of the card table, in words: the README's markdown ([`markdown`]) and the Pages
/// site's HTML render the same rows.
pub(crate) struct CardRow {
    /// `NVIDIA Pascal: GTX 1080 Ti … 1050, Titan Xp`.
    pub gpu: String,
    /// `cc 6.1` or `gfx1030`.
    pub target: String,
    /// The variants that serve the card, in the order of its builds; empty: only `cpu`.
    pub served: Vec<ServedCell>,
}

/// One variant serving a card: its builds that do, and the platforms when not all.
pub(crate) struct ServedCell {
    pub variant: String,
    /// `(local version, through PTX)`.
    pub builds: Vec<(String, bool)>,
    /// `Windows` when the variant is released for fewer than every platform.
    pub only: Option<String>,
}

/// How [`CardRow::served_text`] writes code (a variant, `+cu12`) and plain words.
pub(crate) struct Style {
    pub code: fn(&str) -> String,
    pub text: fn(&str) -> String,
}

impl CardRow {
    /// The "served by" cell: ``None`: `cpu` `` or `` `cuda` (`+cu12` through PTX) ``.
    pub(crate) fn served_text(&self, style: &Style) -> String {
        if self.served.is_empty() {
            return format!("{}{}", (style.text)("not served: "), (style.code)("cpu"));
        }
        let cells: Vec<String> = self
            .served
            .iter()
            .map(|cell| {
                let labels: Vec<String> = cell
                    .builds
                    .iter()
                    .map(|(local, ptx)| {
                        let label = (style.code)(&format!("+{local}"));
                        if *ptx { label + " through PTX" } else { label }
                    })
                    .collect();
                let only = match &cell.only {
                    Some(only) => format!(", {} only", (style.text)(only)),
                    None => String::new(),
                };
                format!(
                    "{} ({}{only})",
                    (style.code)(&cell.variant),
                    labels.join(", ")
                )
            })
            .collect();
        cells.join("; ")
    }
}

/// The card table's rows: one per card of `coverage`.
pub(crate) fn card_rows(coverage: &Coverage) -> Vec<CardRow> {
    let all = Platform::names().len();
    let only = |variant: &str| {
        let platforms = coverage
            .variants
            .iter()
            .find(|v| v.name == variant)
            .map(|v| v.platforms.clone())
            .unwrap_or_default();
        (platforms.len() < all).then(|| {
            platforms
                .iter()
                .map(|p| match p.split('-').next().unwrap_or(p) {
                    "windows" => "Windows",
                    "linux" => "Linux",
                    other => other,
                })
                .collect::<Vec<_>>()
                .join(", ")
        })
    };
    let mut rows = Vec::new();
    for card in &coverage.cards {
        let mut served: Vec<ServedCell> = Vec::new();
        for s in &card.served_by {
            let build = (s.local_version.clone(), s.how == "ptx");
            match served.iter_mut().find(|c| c.variant == s.variant) {
                Some(cell) => cell.builds.push(build),
                None => served.push(ServedCell {
                    variant: s.variant.clone(),
                    builds: vec![build],
                    only: only(&s.variant),
                }),
            }
        }
        rows.push(CardRow {
            gpu: format!(
                "{} {}{}: {}",
                card.vendor,
                card.generation,
                if card.integrated { " (integrated)" } else { "" },
                card.products
            ),
            target: if card.vendor == "NVIDIA" {
                format!("cc {}", card.target)
            } else {
                card.target.clone()
            },
            served,
        });
    }
    rows
}

/// The card table of the README: one row per card, the builds that serve it or `cpu`.
pub fn markdown(coverage: &Coverage) -> String {
    let style = Style {
        code: |t| format!("`{t}`"),
        text: str::to_string,
    };
    let mut out = String::from("| GPU | target | served by |\n|---|---|---|\n");
    for row in card_rows(coverage) {
        out.push_str(&format!(
            "| {} | {} | {} |\n",
            row.gpu,
            row.target,
            row.served_text(&style)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cuda(major: u32) -> NvidiaCoverage {
        nvidia(major, "Common").unwrap()
    }

    #[test]
    fn common_serves_pascal_to_blackwell_with_cuda_12() {
        let c = cuda(12);
        assert_eq!(c.cc_min, "5.3");
        assert_eq!(serves_cc(&c, "5.0"), None, "no sm_50 cubin, no older PTX");
        assert_eq!(serves_cc(&c, "5.2"), None);
        assert_eq!(serves_cc(&c, "6.1"), Some("native"));
        for (device, why) in [
            ("8.9", "RTX 40: sm_89"),
            ("9.0", "H100: sm_90"),
            ("10.0", "B200: sm_100"),
            ("10.3", "B300: sm_100 runs on 10.3"),
            ("12.0", "RTX 50: sm_120"),
            ("12.1", "sm_120 runs on 12.1"),
        ] {
            assert_eq!(serves_cc(&c, device), Some("native"), "{why}");
        }
        assert_eq!(
            serves_cc(&c, "13.0"),
            Some("ptx"),
            "compute_120 for what comes next"
        );
        assert_eq!(c.ptx, ["12.0"], "PTX for the newest only");
        assert_eq!(c.driver_min_windows, "528.33");
    }

    #[test]
    fn common_starts_at_turing_with_cuda_13() {
        let c = cuda(13);
        assert_eq!(c.cc_min, "7.5");
        assert_eq!(serves_cc(&c, "6.1"), None);
        assert_eq!(serves_cc(&c, "7.0"), None);
        assert_eq!(serves_cc(&c, "7.5"), Some("native"));
        assert_eq!(c.driver_min_linux, "580");
    }

    /// `nvcc --list-gpu-code` of CUDA 13.0.88 on the GPU machine
    /// (docs/runs/2026-11-29-h200-cuda-targets.md).
    const NVCC_13_0_CODES: &[&str] = &[
        "7.5", "8.0", "8.6", "8.7", "8.8", "8.9", "9.0", "10.0", "11.0", "10.3", "12.0", "12.1",
    ];

    #[test]
    fn cuda_13_serves_everything_it_knows_natively_but_jetson_thor() {
        let c = cuda(13);
        for device in NVCC_13_0_CODES.iter().filter(|d| **d != "11.0") {
            assert_eq!(
                serves_cc(&c, device),
                Some("native"),
                "compute capability {device}"
            );
        }
        assert_eq!(
            serves_cc(&c, "11.0"),
            None,
            "Jetson Thor: ARM only, not built for"
        );
        for sass in &c.sass {
            assert!(
                NVCC_13_0_CODES.contains(&sass.as_str()),
                "CUDA 13.0 cannot build {sass}"
            );
        }
    }

    #[test]
    fn lists_that_say_nothing_fixed_are_refused() {
        assert!(
            nvidia(12, "Auto")
                .unwrap_err()
                .contains("depends on the machine")
        );
        assert!(nvidia(12, "Turing").unwrap_err().contains("`Turing`"));
        assert!(nvidia(14, "7.5").unwrap_err().contains("CUDA 14"));
        let c = nvidia(12, "9.0").unwrap();
        assert_eq!(serves_cc(&c, "8.9"), None);
        assert_eq!(serves_cc(&c, "12.0"), None, "no PTX");
    }

    #[test]
    fn pci_ids_are_unique_and_name_declared_targets() {
        let mut seen = std::collections::BTreeSet::new();
        for (device, gfx, _) in AMD_PCI_IDS {
            assert!(seen.insert(device), "{device:04x} twice");
            assert!(
                AMD_CARDS.iter().any(|(g, ..)| g == gfx),
                "{gfx} has no card row"
            );
        }
    }
}
