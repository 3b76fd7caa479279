//! Parsers for what the GPU tools print: `nvidia-smi` (its CSV query and its table's
//! header), `rocminfo` (Linux) and `hipinfo` (the Windows HIP SDK's). Each takes the text and
//! keeps what the doctor needs; text it does not recognise gives nothing, never an error.

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NvidiaGpu {
    pub name: String,
    /// `9.0`
    pub compute_capability: String,
    pub driver: String,
    pub memory: String,
}

/// The arguments whose output [`nvidia_smi_csv`] reads.
pub(crate) const NVIDIA_SMI_QUERY: [&str; 2] = [
    "--query-gpu=name,compute_cap,driver_version,memory.total",
    "--format=csv,noheader",
];

/// `nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv,noheader`.
pub fn nvidia_smi_csv(text: &str) -> Vec<NvidiaGpu> {
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            let [name, cc, driver, memory] = fields.as_slice() else {
                return None;
            };
            let looks_like_cc = crate::variant::coverage::is_cc_text(cc);
            (!name.is_empty() && looks_like_cc).then(|| NvidiaGpu {
                name: name.to_string(),
                compute_capability: cc.to_string(),
                driver: driver.to_string(),
                memory: memory.to_string(),
            })
        })
        .collect()
}

/// The newest CUDA version the driver supports, from the table `nvidia-smi` prints
/// (`| NVIDIA-SMI 580.159.04   Driver Version: 580.159.04   CUDA Version: 13.0 |`).
pub fn nvidia_smi_cuda_version(text: &str) -> Option<String> {
    let after = text.split("CUDA Version:").nth(1)?;
    let version: String = after
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    (!version.is_empty()).then_some(version)
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AmdGpu {
    pub name: String,
    /// The ISA without feature flags: `gfx1010` (from `gfx1010:xnack-`).
    pub gfx: String,
    /// The target as the runtime reports it, features included (`gfx1010:xnack-`): what
    /// decides which code objects the runtime accepts, e.g. the `xnack-` rocBLAS build.
    pub arch: String,
}

/// `rocminfo`: every agent whose `Device Type` is GPU, with its `Name` (the gfx target) and
/// `Marketing Name`.
pub fn rocminfo(text: &str) -> Vec<AmdGpu> {
    let mut gpus = Vec::new();
    for agent in text.split("*******").filter(|b| b.contains("Device Type:")) {
        let field = |key: &str| {
            agent.lines().find_map(|l| {
                let rest = l.trim_start().strip_prefix(key)?;
                Some(rest.trim().to_string())
            })
        };
        if field("Device Type:").as_deref() != Some("GPU") {
            continue;
        }
        let Some(gfx) = field("Name:").filter(|n| is_target(&isa(n))) else {
            continue;
        };
        gpus.push(AmdGpu {
            name: field("Marketing Name:").unwrap_or_else(|| gfx.clone()),
            gfx: isa(&gfx),
            arch: gfx,
        });
    }
    gpus
}

/// `hipinfo` (Windows HIP SDK): a block per `device#`, with `Name:` and `gcnArchName:`.
pub fn hipinfo(text: &str) -> Vec<AmdGpu> {
    let mut gpus = Vec::new();
    let mut name: Option<String> = None;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("device#") {
            name = None;
        } else if let Some(rest) = line.strip_prefix("Name:") {
            name = Some(rest.trim().to_string());
        } else if let Some(rest) = line.strip_prefix("gcnArchName:") {
            let gfx = isa(rest.trim());
            if !is_target(&gfx) {
                name = None;
                continue;
            }
            gpus.push(AmdGpu {
                name: name.take().unwrap_or_else(|| gfx.clone()),
                gfx,
                arch: rest.trim().to_string(),
            });
        }
    }
    gpus
}

/// `clinfo` (the OpenCL runtime of the AMD display driver, or of ROCm): each
/// `CL_DEVICE_TYPE_GPU` device, its `Name:` the target (`gfx1153`, `gfx90a:sramecc+:xnack-`),
/// its `Board name:` the card's.
pub fn clinfo(text: &str) -> Vec<AmdGpu> {
    let mut gpus = Vec::new();
    let (mut is_gpu, mut board) = (false, None::<String>);
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match key.trim() {
            "Device Type" => (is_gpu, board) = (value.contains("CL_DEVICE_TYPE_GPU"), None),
            "Board name" if is_gpu => board = Some(value.to_string()),
            "Name" if is_gpu => {
                let gfx = isa(value).to_ascii_lowercase();
                if is_target(&gfx) {
                    gpus.push(AmdGpu {
                        name: board.take().unwrap_or_else(|| gfx.clone()),
                        gfx,
                        arch: value.to_string(),
                    });
                }
                is_gpu = false;
            }
            _ => {}
        }
    }
    gpus
}

/// `gfx` and 2 to 5 ASCII digits or lower-case hex letters (`gfx90a`, `gfx1032`): a target as
/// the runtime names one, not other scripts' digits nor a long run.
fn is_target(isa: &str) -> bool {
    isa.strip_prefix("gfx").is_some_and(|rest| {
        (2..=5).contains(&rest.len())
            && rest
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// `gfx1010:xnack-` → `gfx1010`.
fn isa(text: &str) -> String {
    text.split(':').next().unwrap_or(text).trim().to_string()
}

/// The gfx target of a Radeon card from its name, for when no HIP tool sees it (a HIP 7
/// runtime sees no RDNA 1 card at all): the desktop RX 5000/6000/7000/9000 series.
/// The ranges are code; the GPU data's products and PCI names are the facts they must agree with.
pub(crate) fn gfx_from_marketing_name(name: &str) -> Option<&'static str> {
    let upper = name.to_ascii_uppercase();
    if !upper.contains("RADEON") {
        return None;
    }
    let model: u32 = upper
        .split(|c: char| !c.is_ascii_digit())
        .find(|w| w.len() == 4)?
        .parse()
        .ok()?;
    // The desktop models of the GPU data's products and its pci.ids names (variants/gpus.toml;
    // a test holds the two together).
    Some(match model {
        5600..=5799 => "gfx1010",
        5300..=5599 => "gfx1012",
        6800..=6999 => "gfx1030",
        6700..=6799 => "gfx1031",
        6600..=6699 => "gfx1032",
        6300..=6599 => "gfx1034",
        7900..=7999 => "gfx1100",
        7700..=7899 => "gfx1101",
        7300..=7699 => "gfx1102",
        9070..=9079 => "gfx1201",
        9050..=9069 => "gfx1200",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_csv_query_gives_each_gpu() {
        let gpus = nvidia_smi_csv("NVIDIA H100 80GB HBM3, 9.0, 580.159.04, 81559 MiB\n");
        assert_eq!(
            gpus,
            [NvidiaGpu {
                name: "NVIDIA H100 80GB HBM3".into(),
                compute_capability: "9.0".into(),
                driver: "580.159.04".into(),
                memory: "81559 MiB".into(),
            }]
        );
        assert!(nvidia_smi_csv("No devices were found\n").is_empty());
    }

    /// clinfo's GPU devices (the AMD OpenCL runtime's layout, tabs and all), each with its
    /// board name; features after the target dropped; a CPU device, a name that is no target
    /// (other scripts' digits, a marketing name, a long run) left out and the others kept.
    #[test]
    fn clinfo_gives_each_gpu_device_with_its_board_name() {
        let device = |board: &str, name: &str, kind: &str| {
            format!(
                "  Device Type:\t\t\t\t\t {kind}\r\n  Board name:\t\t\t\t\t {board}\r\n  \
                 Max compute units:\t\t\t\t 4\r\n  Name:\t\t\t\t\t\t {name}\r\n"
            )
        };
        let gpu = |board: &str, name: &str| device(board, name, "CL_DEVICE_TYPE_GPU");
        let text = [
            "Number of platforms:\t\t\t\t 1\r\n".to_string(),
            gpu("AMD Radeon(TM) 820M", "gfx1153"),
            device("AMD Ryzen 5 220", "gfx1153", "CL_DEVICE_TYPE_CPU"),
            gpu("Odd", "gfx\u{661}\u{661}\u{665}\u{663}"),
            gpu("Odd", "Radeon 820M"),
            gpu("Odd", &format!("gfx{}", "1".repeat(5000))),
            gpu("AMD Instinct MI210", "gfx90a:sramecc+:xnack-"),
        ]
        .concat();
        let gpus = clinfo(&text);
        let found: Vec<(&str, &str, &str)> = gpus
            .iter()
            .map(|g| (g.name.as_str(), g.gfx.as_str(), g.arch.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                ("AMD Radeon(TM) 820M", "gfx1153", "gfx1153"),
                ("AMD Instinct MI210", "gfx90a", "gfx90a:sramecc+:xnack-"),
            ]
        );
        assert!(clinfo("").is_empty());
        assert!(clinfo("Number of platforms: 0\n").is_empty());
    }

    /// A number or target of other scripts' digits, of thousands of digits or with a sign is
    /// not one a tool prints: that line or agent is left out and the others kept.
    #[test]
    fn odd_numbers_and_targets_leave_out_their_gpu_and_keep_the_others() {
        let good = "NVIDIA GeForce RTX 3060, 8.6, 560.94, 12288 MiB\n";
        for odd in [
            "NVIDIA A, \u{668}.\u{666}, 560.94, 1 MiB".to_string(),
            "NVIDIA B, \u{ff18}.\u{ff16}, 560.94, 1 MiB".to_string(),
            format!("NVIDIA C, {}.6, 560.94, 1 MiB", "8".repeat(5000)),
            "NVIDIA D, +8.+6, 560.94, 1 MiB".to_string(),
            "NVIDIA E, 8., 560.94, 1 MiB".to_string(),
        ] {
            let gpus = nvidia_smi_csv(&format!("{odd}\n{good}"));
            let names: Vec<&str> = gpus.iter().map(|g| g.name.as_str()).collect();
            assert_eq!(names, ["NVIDIA GeForce RTX 3060"], "{}", &odd[..20]);
        }
        let agent = |name: &str| {
            format!(
                "*******\nAgent 2\n*******\n  Name:                    {name}\n  Marketing Name:          Odd\n  Device Type:             GPU\n"
            )
        };
        let real = agent("gfx1032");
        for odd in [
            "gfx\u{ff11}\u{ff10}\u{ff13}\u{ff10}".to_string(),
            "gfx\u{661}\u{660}\u{663}\u{660}".to_string(),
            format!("gfx{}", "1".repeat(5000)),
            "gfx1030\u{202e}".to_string(),
            "gfx".to_string(),
        ] {
            let gpus = rocminfo(&format!("{}{real}", agent(&odd)));
            assert_eq!(gpus.len(), 1, "{gpus:?}");
            assert_eq!(gpus[0].gfx, "gfx1032");
            let hip = format!(
                "device# 0\nName: Odd\ngcnArchName: {odd}:xnack-\ndevice# 1\nName: RX 6600\ngcnArchName: gfx1032\n"
            );
            let gpus = hipinfo(&hip);
            assert_eq!(gpus.len(), 1, "{gpus:?}");
            assert_eq!(
                (gpus[0].name.as_str(), gpus[0].gfx.as_str()),
                ("RX 6600", "gfx1032")
            );
        }
        assert_eq!(
            gfx_from_marketing_name("AMD Radeon RX \u{ff16}\u{ff16}\u{ff10}\u{ff10}"),
            None
        );
    }

    #[test]
    fn marketing_names_map_to_targets() {
        assert_eq!(
            gfx_from_marketing_name("AMD Radeon RX 5700 XT"),
            Some("gfx1010")
        );
        assert_eq!(
            gfx_from_marketing_name("AMD Radeon RX 7900 XTX"),
            Some("gfx1100")
        );
        assert_eq!(gfx_from_marketing_name("NVIDIA GeForce RTX 4090"), None);
    }

    /// Every desktop Radeon RX model the GPU data names (its products, and the first model of
    /// each pci.ids name) maps to that data's target: a model the name table misses (RX 5300,
    /// RX 6500 XT, RX 7500, RX 9050) would leave a Windows machine's card unknown.
    #[test]
    fn marketing_names_agree_with_the_gpu_data() {
        let gpus = crate::variant::gpus::checkout_gpus();
        let mut checked = 0;
        let mut check = |model: &str, gfx: &str, from: &str| {
            let name = format!("AMD Radeon RX {model}");
            assert_eq!(gfx_from_marketing_name(&name), Some(gfx), "{name} ({from})");
            checked += 1;
        };
        for target in gpus.amd_targets.iter().filter(|t| !t.integrated) {
            let mut rx = false;
            for entry in target.products.split(", ") {
                rx = entry.starts_with("RX ")
                    || (rx && entry.starts_with(|c: char| c.is_ascii_digit()));
                let model = entry
                    .trim_start_matches("RX ")
                    .split(' ')
                    .next()
                    .unwrap_or("");
                if rx && model.len() == 4 && model.bytes().all(|b| b.is_ascii_digit()) {
                    check(model, &target.gfx, &target.products);
                }
            }
        }
        for device in &gpus.pci_ids {
            if let Some((_, rest)) = device.name.split_once("Radeon RX ") {
                let model: String = rest.chars().take_while(char::is_ascii_digit).collect();
                if model.len() == 4 {
                    check(&model, &device.gfx, &device.name);
                }
            }
        }
        assert!(checked > 40, "{checked}");
    }
}
