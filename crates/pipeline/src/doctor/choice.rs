//! The variant this machine's GPUs get from the coverage (`variant::coverage`), by the rule of
//! the selector an app runs (`crates/pipeline/python/ct2_variant_select.py`), so the doctor and the
//! selector name the same build and the same device: tests/it/gpu_select.rs compares them on
//! every card and on the machines of `xtask/tests/data/gpu_select/machines.json`.
//!
//! The rule: each GPU's options are the builds that serve it on this platform (an NVIDIA
//! driver at least the build's minimum). The GPU served is the strongest with an option: a
//! discrete GPU before an integrated one, an NVIDIA GPU before an AMD one, then the newer
//! generation (compute capability; the gfx target's family), then the lower device index. Of
//! its options: an AMD build that fits its generation at all (`AmdCoverage::fit` above 0),
//! then the build serving the most GPUs present, one served natively before one through PTX,
//! the lowest CUDA major, then for an AMD card the build that fits its generation best. No option: `cpu`, with why each GPU is not used; no `cpu` for this
//! platform: no variant. A GPU's device index is its place in its tool's list (rocminfo,
//! hipinfo and clinfo list in the runtime's order, nvidia-smi in PCI bus order).

use std::collections::BTreeMap;

use serde::Serialize;

use super::facts::Facts;
use crate::variant::coverage::{BuildCoverage, Coverage, VariantCoverage, serves_cc};

/// Which GPU of the facts was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "vendor", content = "index", rename_all = "lowercase")]
pub enum Chosen {
    Nvidia(usize),
    Amd(usize),
}

#[derive(Debug, Clone, Serialize)]
pub struct Choice {
    /// `linux-x86_64`, from the facts' OS and architecture.
    pub platform: String,
    /// `None`: no variant is built for this platform.
    pub variant: Option<String>,
    pub local_version: Option<String>,
    pub requirement: Option<String>,
    /// `native` or `ptx` when a GPU was chosen.
    pub how: Option<String>,
    pub gpu: Option<Chosen>,
    /// The chosen GPU's device index in its runtime (CTranslate2's `device_index`).
    pub device_index: Option<usize>,
    /// The variables that make the chosen GPU the only device, index 0.
    pub visible_devices: BTreeMap<String, String>,
    /// Every GPU the chosen build serves, the chosen one among them.
    pub served: Vec<Chosen>,
    /// Each GPU that is not used, and why (`NAME (gfx1032, RDNA 2): not served yet: …`).
    pub(crate) unused: Vec<(Chosen, String)>,
    /// The unused GPUs whose only obstacle is this platform or the driver: a variant serves
    /// them elsewhere or with a newer driver.
    pub(crate) served_elsewhere: Vec<Chosen>,
}

struct Candidate<'a> {
    variant: &'a VariantCoverage,
    build: &'a BuildCoverage,
    how: &'static str,
    /// The card's generation (`RDNA 1`), "" when the card table has none.
    generation: &'a str,
}

impl Candidate<'_> {
    /// Of the chosen GPU's options, higher first; `served`: how many GPUs present the build
    /// serves.
    fn rank(&self, served: usize) -> (bool, usize, bool, i64, u32) {
        let cuda = self.build.nvidia.as_ref().map_or(0, |n| n.cuda_major);
        let fit = self
            .build
            .amd
            .as_ref()
            .map_or(1, |a| a.fit(self.generation));
        (fit > 0, served, self.how == "native", -i64::from(cuda), fit)
    }

    fn same_build(&self, other: &Candidate) -> bool {
        std::ptr::eq(self.variant, other.variant) && std::ptr::eq(self.build, other.build)
    }
}

/// `gfx1201` → `[12, 0]`, `gfx90a` → `[9, 0]`; `8.6` → `[8, 6]`: a generation, to compare
/// within a vendor. A target's last digit is left out: within a family it says nothing of
/// strength (gfx1102, an RX 7600, is no stronger than gfx1100, an RX 7900 XTX).
fn generation_key(target: &str) -> Vec<u32> {
    if let Some(digits) = target.strip_prefix("gfx") {
        let ok = (3..=5).contains(&digits.len())
            && digits.is_ascii()
            && digits[..digits.len() - 2]
                .bytes()
                .all(|b| b.is_ascii_digit())
            && digits[digits.len() - 2..]
                .bytes()
                .all(|b| b.is_ascii_hexdigit());
        if !ok {
            return Vec::new();
        }
        let (major, rest) = digits.split_at(digits.len() - 2);
        return [major.parse().ok(), u32::from_str_radix(&rest[..1], 16).ok()]
            .into_iter()
            .collect::<Option<Vec<u32>>>()
            .unwrap_or_default();
    }
    target.split('.').filter_map(|p| p.parse().ok()).collect()
}

/// Which GPU to serve first, higher first (the selector's `strength`).
fn strength(f: &Facts, gpu: Chosen, coverage: &Coverage) -> (bool, bool, Vec<u32>) {
    match gpu {
        Chosen::Nvidia(i) => (
            true,
            true,
            generation_key(&f.nvidia_gpus[i].compute_capability),
        ),
        Chosen::Amd(i) => {
            let gfx = &f.amd_gpus[i].gfx;
            let integrated = card_of(coverage, gfx).is_some_and(|c| c.integrated);
            (!integrated, false, generation_key(gfx))
        }
    }
}

/// The variables that make `gpu` the only device its runtime lists.
fn visible_devices(gpu: Chosen) -> BTreeMap<String, String> {
    let pairs: Vec<(&str, String)> = match gpu {
        Chosen::Nvidia(i) => vec![
            ("CUDA_DEVICE_ORDER", "PCI_BUS_ID".into()),
            ("CUDA_VISIBLE_DEVICES", i.to_string()),
        ],
        Chosen::Amd(i) => vec![("HIP_VISIBLE_DEVICES", i.to_string())],
    };
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// `560.94` → `[560, 94]`: the digit runs, compared as the selector compares them.
fn version_key(text: &str) -> Vec<u64> {
    text.split(|c: char| !c.is_ascii_digit())
        .filter(|p| !p.is_empty())
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// How the selector describes a GPU: `NAME (compute capability X, driver Y)` or
/// `NAME (gfx1032, RDNA 2)`.
pub(super) fn describe(f: &Facts, gpu: Chosen, coverage: &Coverage) -> String {
    match gpu {
        Chosen::Nvidia(i) => {
            let g = &f.nvidia_gpus[i];
            format!(
                "{} (compute capability {}, driver {})",
                g.name, g.compute_capability, g.driver
            )
        }
        Chosen::Amd(i) => {
            let g = &f.amd_gpus[i];
            match card_of(coverage, &g.gfx) {
                Some(card) => format!("{} ({}, {})", g.name, g.gfx, card.generation),
                None => format!("{} ({})", g.name, g.gfx),
            }
        }
    }
}

fn card_of<'a>(coverage: &'a Coverage, target: &str) -> Option<&'a crate::variant::coverage::Card> {
    coverage.cards.iter().find(|c| c.target == target)
}

/// Why no build serves `gpu` at all, with what the builds do serve.
fn not_served(f: &Facts, gpu: Chosen, coverage: &Coverage) -> String {
    let builds = coverage
        .variants
        .iter()
        .flat_map(|v| v.builds.iter().map(move |b| (v, b)));
    match gpu {
        Chosen::Nvidia(i) => {
            let from: Vec<String> = builds
                .filter_map(|(v, b)| {
                    let n = b.nvidia.as_ref()?;
                    Some(format!("{} +{} from {}", v.name, b.local_version, n.cc_min))
                })
                .collect();
            format!(
                "not served yet: no build has code for compute capability {} ({})",
                f.nvidia_gpus[i].compute_capability,
                if from.is_empty() {
                    "no variant is for NVIDIA GPUs".to_string()
                } else {
                    from.join(", ")
                }
            )
        }
        Chosen::Amd(i) => {
            let has: Vec<String> = builds
                .filter_map(|(v, b)| {
                    let a = b.amd.as_ref()?;
                    Some(format!("{}: {}", v.name, a.gfx.join(", ")))
                })
                .collect();
            format!(
                "not served yet: no build has kernels for {} ({})",
                f.amd_gpus[i].gfx,
                if has.is_empty() {
                    "no variant is for AMD GPUs".to_string()
                } else {
                    has.join("; ")
                }
            )
        }
    }
}

fn options_of<'a>(
    f: &Facts,
    gpu: Chosen,
    platform: &str,
    coverage: &'a Coverage,
    problems: &mut Vec<String>,
) -> Vec<Candidate<'a>> {
    let os = platform.split('-').next().unwrap_or_default();
    let mut found = Vec::new();
    for variant in &coverage.variants {
        let built_here = variant.platforms.iter().any(|p| p == platform);
        for build in &variant.builds {
            match gpu {
                Chosen::Nvidia(i) => {
                    let g = &f.nvidia_gpus[i];
                    let Some(nvidia) = &build.nvidia else {
                        continue;
                    };
                    let Some(how) = serves_cc(nvidia, &g.compute_capability) else {
                        continue;
                    };
                    if !built_here {
                        problems.push(format!("`{}` is not built for {platform}", variant.name));
                        continue;
                    }
                    let need = match os {
                        "windows" => Some(&nvidia.driver_min_windows),
                        "linux" => Some(&nvidia.driver_min_linux),
                        _ => None,
                    };
                    if let Some(need) = need
                        && version_key(&g.driver) < version_key(need)
                    {
                        let mut os_name = os.to_string();
                        os_name[..1].make_ascii_uppercase();
                        problems.push(format!(
                            "`{}` +{} needs NVIDIA driver >= {need} on {os_name}, this one is {}: \
                             update it",
                            variant.name, build.local_version, g.driver
                        ));
                        continue;
                    }
                    found.push(Candidate {
                        variant,
                        build,
                        how,
                        generation: "",
                    });
                }
                Chosen::Amd(i) => {
                    let g = &f.amd_gpus[i];
                    if !build.amd.as_ref().is_some_and(|a| a.gfx.contains(&g.gfx)) {
                        continue;
                    }
                    if !built_here {
                        let shown = if variant.platforms.is_empty() {
                            "no platform".to_string()
                        } else {
                            variant.platforms.join(", ")
                        };
                        problems.push(format!(
                            "`{}` serves it but is built for {shown} only",
                            variant.name
                        ));
                        continue;
                    }
                    let card = card_of(coverage, &g.gfx);
                    found.push(Candidate {
                        variant,
                        build,
                        how: "native",
                        generation: card.map_or("", |c| c.generation.as_str()),
                    });
                }
            }
        }
    }
    found
}

/// Of `mine` (the chosen GPU's options), the first of the best, with every GPU its build
/// serves; `options`: each GPU's.
fn best_option<'o, 'a>(
    mine: &'o [Candidate<'a>],
    options: &[(Chosen, Vec<Candidate<'a>>)],
) -> Option<(&'o Candidate<'a>, Vec<Chosen>)> {
    let serves = |option: &Candidate| -> Vec<Chosen> {
        options
            .iter()
            .filter(|(_, theirs)| theirs.iter().any(|o| o.same_build(option)))
            .map(|(gpu, _)| *gpu)
            .collect()
    };
    let mut best: Option<(&Candidate, Vec<Chosen>)> = None;
    for option in mine {
        let served = serves(option);
        if best
            .as_ref()
            .is_none_or(|(b, s)| option.rank(served.len()) > b.rank(s.len()))
        {
            best = Some((option, served));
        }
    }
    best
}

/// The variant for the GPUs of `f` on its platform, as the selector chooses.
pub fn choose(f: &Facts, coverage: &Coverage) -> Choice {
    let platform = format!("{}-{}", f.os, f.arch);
    let gpus = (0..f.nvidia_gpus.len())
        .map(Chosen::Nvidia)
        .chain((0..f.amd_gpus.len()).map(Chosen::Amd));
    let mut options = Vec::new();
    let mut unused = Vec::new();
    let mut served_elsewhere = Vec::new();
    for gpu in gpus {
        let mut problems = Vec::new();
        let mine = options_of(f, gpu, &platform, coverage, &mut problems);
        if mine.is_empty() {
            let why = if problems.is_empty() {
                not_served(f, gpu, coverage)
            } else {
                served_elsewhere.push(gpu);
                problems.join("; ")
            };
            unused.push((gpu, format!("{}: {why}", describe(f, gpu, coverage))));
        }
        options.push((gpu, mine));
    }
    // The first of the strongest, and of its best option, as Python's max() keeps them.
    let mut chosen: Option<&(Chosen, Vec<Candidate>)> = None;
    for entry in options.iter().filter(|(_, mine)| !mine.is_empty()) {
        if chosen.is_none_or(|(c, _)| strength(f, entry.0, coverage) > strength(f, *c, coverage)) {
            chosen = Some(entry);
        }
    }
    if let Some((gpu, mine)) = chosen
        && let Some((best, served)) = best_option(mine, &options)
    {
        return Choice {
            platform,
            variant: Some(best.variant.name.clone()),
            local_version: Some(best.build.local_version.clone()),
            requirement: Some(best.build.requirement.clone()),
            how: Some(best.how.to_string()),
            gpu: Some(*gpu),
            device_index: Some(match gpu {
                Chosen::Nvidia(i) | Chosen::Amd(i) => *i,
            }),
            visible_devices: visible_devices(*gpu),
            served,
            unused,
            served_elsewhere,
        };
    }
    let cpu = coverage
        .variants
        .iter()
        .find(|v| v.name == "cpu" && v.platforms.contains(&platform))
        .and_then(|v| v.builds.first());
    Choice {
        variant: cpu.map(|_| "cpu".to_string()),
        local_version: cpu.map(|b| b.local_version.clone()),
        requirement: cpu.map(|b| b.requirement.clone()),
        platform,
        how: None,
        gpu: None,
        device_index: None,
        visible_devices: BTreeMap::new(),
        served: Vec::new(),
        unused,
        served_elsewhere,
    }
}
