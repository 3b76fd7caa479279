//! Which GPUs each variant serves, as data: NVIDIA compute capabilities and the driver each
//! CUDA major needs, AMD gfx targets, and the consumer cards they come down to.
//!
//! Made from the resolved variant files (`gpu-targets`, `cuda-arch`, `[sdk]`,
//! `[bundle.requires-dist]`, `local-version`), so the README's card table, `variants --json`,
//! the release's `variants.json` and the selector an app runs
//! (`crates/pipeline/python/ct2_variant_select.py`, whose data block is this module's JSON) never
//! disagree.
//!
//! Sources of the facts that are not in the variant files:
//! - `cuda-arch = "Common"`: this project's explicit list per CUDA major ([`COMMON_CUDA_12`],
//!   [`COMMON_CUDA_13`]), never CTranslate2's own `Common` (CMake's
//!   `CUDA_COMMON_GPU_ARCHITECTURES`: `5.3 6.0 6.1 7.0 7.5 8.0 8.6 8.6+PTX` for every toolkit
//!   since 11.1, so RTX 40/50 and H100 got PTX only). Which toolkit builds what: `sdk/cuda_arch.rs`.
//!   A cubin for sm_XY runs on devices of compute capability X.Z with Z >= Y; PTX for
//!   compute_XY is compiled by the driver for any newer device (NVIDIA's CUDA C++ Programming
//!   Guide, "Binary Compatibility" and "PTX Compatibility").
//! - NVIDIA cards, the minimum driver of each CUDA major, AMD targets, their PCI IDs and AMD's
//!   key for each family: the GPU data file, `variants/gpus.toml` ([`super::gpus`]), which
//!   cites its sources.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::variant::gpus::Gpus;
use crate::variant::{Catalog, Choices, SDK_MAJOR, SdkKind};
use ct2v_support::diagnostic::InputError;
use ct2v_support::platform::Platform;

/// The version of the JSON layout (`variants --json`, a release's `variants.json`, the
/// selector's data block).
pub(crate) const SCHEMA_VERSION: u32 = ct2v_support::contracts::VARIANTS;

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
    /// AMD's own key for the family this build is (rocm-bootstrap's sub-family: `gfx10_3` for
    /// `rocm-rdna2`), from the GPU data file's `[amd.families]`; added to schema 1, absent for
    /// builds that are no such family.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amd_sub_family: Option<String>,
    /// Platform → those of `gfx` AMD lists there as "Build Passing" only (the SDK's table in
    /// the GPU data file, `build-passing-only`), for the platforms the build is released for;
    /// added to schema 1, absent when there are none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub build_passing_only: BTreeMap<String, Vec<String>>,
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
    /// Platform → AMD's own status of the target there where it is less than release-ready
    /// (`amd_status`: "build passing only"); empty for every other card and build.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub amd_status: BTreeMap<String, String>,
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

/// Whether `text` is written as a compute capability (`8.6`): one to three ASCII digits on
/// each side of the dot, no sign, no other scripts' digits (what nvidia-smi and NVIDIA's
/// "CUDA GPUs" list write).
pub(crate) fn is_cc_text(text: &str) -> bool {
    text.split_once('.').is_some_and(|(major, minor)| {
        [major, minor]
            .iter()
            .all(|p| (1..=3).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// A compute capability as `(major, minor)`.
pub(crate) fn cc(text: &str) -> Option<(u32, u32)> {
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

fn nvidia(gpus: &Gpus, major: u32, requested: &str) -> Result<NvidiaCoverage, String> {
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
    let (linux, windows) = gpus
        .cuda_driver(major)
        .map(|d| (d.linux.clone(), d.windows.clone()))
        .ok_or_else(|| {
            format!(
                "no minimum driver is known for CUDA {major} (variants/gpus.toml, \
                 [nvidia.cuda-drivers])"
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
    Ok(with_cards(&catalog.gpus, variants))
}

/// The coverage around `variants`: the card table, the driver table and the PCI IDs, from the
/// GPU data `gpus`.
pub(crate) fn with_cards(gpus: &Gpus, variants: Vec<VariantCoverage>) -> Coverage {
    let card = |vendor: &str, generation: &str, target: &str, products: &str, integrated| Card {
        vendor: vendor.into(),
        generation: generation.into(),
        target: target.into(),
        products: products.into(),
        integrated,
        served_by: Vec::new(),
    };
    let cards = gpus
        .nvidia_cards
        .iter()
        .map(|c| card("NVIDIA", &c.generation, &c.cc, &c.products, false))
        .chain(
            gpus.amd_targets
                .iter()
                .map(|t| card("AMD", &t.generation, &t.gfx, &t.products, t.integrated)),
        )
        .collect();
    let frame = Coverage {
        schema_version: SCHEMA_VERSION,
        variants: Vec::new(),
        cards,
        cuda_drivers: gpus
            .cuda_drivers
            .iter()
            .map(|(major, floor)| CudaDriver {
                cuda_major: *major,
                linux: floor.linux.clone(),
                windows: floor.windows.clone(),
            })
            .collect(),
        amd_pci_ids: PciIds {
            source: gpus.pci_source.clone(),
            version: gpus.pci_version.clone(),
            vendor: "1002".into(),
            devices: gpus
                .pci_ids
                .iter()
                .map(|d| PciDevice {
                    device: d.id.clone(),
                    gfx: d.gfx.clone(),
                    name: d.name.clone(),
                })
                .collect(),
        },
    };
    frame.with_variants(variants)
}

impl Coverage {
    /// This coverage's cards, drivers and PCI IDs around `variants` (a release's): each card
    /// served by the builds of `variants` that serve it.
    pub(crate) fn with_variants(&self, variants: Vec<VariantCoverage>) -> Coverage {
        let cards = self
            .cards
            .iter()
            .map(|card| Card {
                served_by: served_by(&variants, card),
                ..card.clone()
            })
            .collect();
        Coverage {
            schema_version: SCHEMA_VERSION,
            variants,
            cards,
            cuda_drivers: self.cuda_drivers.clone(),
            amd_pci_ids: self.amd_pci_ids.clone(),
        }
    }
}

/// The builds of `variants` that serve `card`: an NVIDIA card by a cubin or PTX, an AMD one
/// by its target's kernels.
fn served_by(variants: &[VariantCoverage], card: &Card) -> Vec<ServedBy> {
    let mut served = Vec::new();
    for v in variants {
        for b in &v.builds {
            let how = if card.vendor == "NVIDIA" {
                b.nvidia.as_ref().and_then(|n| serves_cc(n, &card.target))
            } else {
                b.amd
                    .as_ref()
                    .filter(|a| a.gfx.contains(&card.target))
                    .map(|_| "native")
            };
            if let Some(how) = how {
                let amd_status = b
                    .amd
                    .iter()
                    .flat_map(|a| &a.build_passing_only)
                    .filter(|(_, targets)| targets.contains(&card.target))
                    .map(|(platform, _)| (platform.clone(), BUILD_PASSING_ONLY.to_string()))
                    .collect();
                served.push(ServedBy {
                    variant: v.name.clone(),
                    local_version: b.local_version.clone(),
                    how: how.into(),
                    amd_status,
                });
            }
        }
    }
    served
}

/// What the card table and `variants.json` say beside a build of a target AMD lists as
/// "Build Passing" only on a platform.
pub const BUILD_PASSING_ONLY: &str = "build passing only";

/// Platform → those of `targets` that `table` lists as "Build Passing" only there, for the
/// `platforms` a build is released for.
fn build_passing_only(
    table: &ct2v_bundle::gpu_targets::Table,
    targets: &[String],
    platforms: &[String],
) -> BTreeMap<String, Vec<String>> {
    let mut said = table.build_passing_only_for(targets);
    said.retain(|platform, _| platforms.contains(platform));
    said
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
                build_passing_only: build_passing_only(
                    catalog.gpus.table_for_sdk(rocm.as_deref()),
                    &resolved.gpu_targets,
                    &platforms,
                ),
                rocm,
                amd_sub_family: catalog.gpus.amd_families.get(name).cloned(),
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
            let mut majors = crate::variant::declared_majors(floor, &resolved.bundle.requires_dist);
            if majors.is_empty() || !label.contains(SDK_MAJOR) {
                majors = vec![floor];
            }
            let requested = resolved.cuda_arch.as_deref().unwrap_or("Auto");
            let mut builds = Vec::new();
            for major in majors {
                let coverage = nvidia(&catalog.gpus, major, requested).map_err(|why| {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_builds_targets_on_its_platforms_are_said_to_be_build_passing_only() {
        let gpus = crate::variant::gpus::checkout_gpus();
        let both = ["linux-x86_64".to_string(), "windows-x86_64".to_string()];
        let rdna4 = ["gfx1200".to_string(), "gfx1201".to_string()];
        let rocm10 = gpus.table_for_sdk(Some("10.0.0"));
        assert_eq!(
            build_passing_only(rocm10, &rdna4, &both),
            BTreeMap::from([("windows-x86_64".to_string(), rdna4.to_vec())])
        );
        assert!(
            build_passing_only(rocm10, &rdna4, &both[..1]).is_empty(),
            "not released for Windows"
        );
        let rdna35 = ["gfx1151".to_string(), "gfx1153".to_string()];
        let said = build_passing_only(rocm10, &rdna35, &both);
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(
            said.values().all(|t| t == &["gfx1153".to_string()]),
            "{said:?}"
        );
        assert!(
            build_passing_only(gpus.table_for_sdk(Some("7.2.0")), &rdna4, &both).is_empty(),
            "another ROCm's table"
        );
        assert!(
            build_passing_only(gpus.table_for_sdk(None), &rdna4, &both).is_empty(),
            "a HIP SDK build"
        );
    }

    fn cuda(major: u32) -> NvidiaCoverage {
        nvidia(&crate::variant::gpus::checkout_gpus(), major, "Common").unwrap()
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
        let gpus = crate::variant::gpus::checkout_gpus();
        let nvidia = |major, list| nvidia(&gpus, major, list);
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
}
