//! The GPU data file, `variants/gpus.toml`: NVIDIA cards and the driver each CUDA major needs,
//! AMD targets with their PCI IDs and AMD's key for each of our families, and TheRock's
//! per-release target tables. Read once with the variant files and checked as a whole, so that
//! the coverage, the plan's target tables, the bundle's target filter, `doctor` and the
//! selector's data all read the same facts (the file says where each comes from).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Deserialize;

use super::{Files, toml_error};
use ct2v_bundle::gpu_targets::{Table, looks_like_target};
use ct2v_support::diagnostic::{InputError, Location, quoted};
use ct2v_support::platform::Platform;

/// The GPU data file's name in `variants/`; it is not a variant.
pub(crate) const GPUS_FILE: &str = "gpus.toml";

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct GpusFile {
    nvidia: NvidiaFile,
    amd: AmdFile,
    therock: BTreeMap<String, Table>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct NvidiaFile {
    cards: Vec<NvidiaCard>,
    cuda_drivers: BTreeMap<String, CudaDriverFloor>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct AmdFile {
    targets: Vec<AmdTarget>,
    pci_ids: PciIdsFile,
    families: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct PciIdsFile {
    source: String,
    version: String,
    devices: Vec<PciId>,
}

/// An NVIDIA GPU generation by compute capability.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NvidiaCard {
    /// `8.6`.
    pub cc: String,
    pub generation: String,
    pub products: String,
}

/// The oldest drivers that run what a CUDA toolkit of one major builds.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CudaDriverFloor {
    pub linux: String,
    pub windows: String,
}

/// An AMD GPU target and the consumer products it is.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AmdTarget {
    pub gfx: String,
    pub generation: String,
    pub products: String,
    #[serde(default)]
    pub integrated: bool,
}

/// One AMD PCI device ID and its target.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PciId {
    /// Four lower-case hex digits.
    pub id: String,
    pub gfx: String,
    pub name: String,
}

/// The GPU data, checked.
#[derive(Debug, Clone)]
pub struct Gpus {
    pub nvidia_cards: Vec<NvidiaCard>,
    /// `(CUDA major, drivers)`, by major.
    pub cuda_drivers: Vec<(u32, CudaDriverFloor)>,
    pub amd_targets: Vec<AmdTarget>,
    pub pci_source: String,
    pub pci_version: String,
    pub pci_ids: Vec<PciId>,
    /// Our family (a variant name) → AMD's sub-family key (rocm-bootstrap's `gfx10_3`).
    pub amd_families: BTreeMap<String, String>,
    /// `(SDK major the table starts at, table)`, oldest first.
    tables: Vec<(u32, Table)>,
}

impl Gpus {
    /// Reads `variants/gpus.toml` into `files` and checks it; `variants` are the names of the
    /// variant files (what `[amd.families]` may name).
    pub(crate) fn load(files: &mut Files, variants: &[String]) -> Result<Gpus, InputError> {
        let id = files
            .read(&Path::new("variants").join(GPUS_FILE))
            .map_err(|e| {
                e.note(format!(
                    "variants/{GPUS_FILE} is the GPU data every variant reads (cards, PCI IDs, \
                 TheRock's target tables): restore it from the checkout"
                ))
            })?;
        let (path, text) = &files.files[id];
        Gpus::parse(path, text, variants)
    }

    /// The GPU data of `text`, the file at `path` (for messages).
    pub(crate) fn parse(path: &Path, text: &str, variants: &[String]) -> Result<Gpus, InputError> {
        let file: GpusFile = toml::from_str(text).map_err(|e| toml_error(path, text, &e))?;
        let bad = Bad { path, text };
        let cuda_drivers = check_nvidia(&bad, &file.nvidia)?;
        let tables = check_tables(&bad, &file.therock)?;
        check_amd(&bad, &file.amd, &tables, variants)?;
        Ok(Gpus {
            nvidia_cards: file.nvidia.cards,
            cuda_drivers,
            amd_targets: file.amd.targets,
            pci_source: file.amd.pci_ids.source,
            pci_version: file.amd.pci_ids.version,
            pci_ids: file.amd.pci_ids.devices,
            amd_families: file.amd.families,
            tables,
        })
    }

    /// The target table of the SDK a variant names (`[sdk] version`, e.g. "10.0"): the table
    /// starting at the highest major not above the SDK's; the first one for no version or an
    /// older one.
    pub fn table_for_sdk(&self, version: Option<&str>) -> &Table {
        let major = version
            .and_then(|v| v.split('.').next())
            .and_then(|m| m.trim().parse::<u32>().ok());
        let first = &self.tables[0].1;
        match major {
            Some(m) => self
                .tables
                .iter()
                .rev()
                .find(|(from, _)| *from <= m)
                .map_or(first, |(_, t)| t),
            None => first,
        }
    }

    /// The minimum drivers for CUDA `major`.
    pub(crate) fn cuda_driver(&self, major: u32) -> Option<&CudaDriverFloor> {
        self.cuda_drivers
            .iter()
            .find(|(m, _)| *m == major)
            .map(|(_, d)| d)
    }
}

/// Errors about the file, each pointing at the first place its value is written.
struct Bad<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Bad<'_> {
    /// An error naming the file and `key`, at the first `"value"` in the file when there is
    /// one (the `nth` one, 0-based, for a duplicate).
    fn at(&self, key: &str, value: &str, nth: usize, why: &str) -> InputError {
        let needle = format!("\"{value}\"");
        let at = self.text.match_indices(&needle).nth(nth).map(|(i, _)| i);
        let error = InputError::new(format!(
            "{}: `{key}` {}: {why}",
            self.path.display(),
            quoted(value)
        ));
        match at {
            Some(i) => error.at(Location::from_span(
                self.path,
                self.text,
                i..i + needle.len(),
            )),
            None => error,
        }
    }
}

fn check_nvidia(bad: &Bad, nvidia: &NvidiaFile) -> Result<Vec<(u32, CudaDriverFloor)>, InputError> {
    let mut seen = BTreeSet::new();
    for card in &nvidia.cards {
        if !super::coverage::is_cc_text(&card.cc) {
            return Err(bad
                .at("nvidia.cards cc", &card.cc, 0, "not a compute capability")
                .note("write it as NVIDIA's CUDA GPUs list does, e.g. \"8.6\""));
        }
        if !seen.insert(&card.cc) {
            return Err(bad
                .at("nvidia.cards cc", &card.cc, 1, "listed twice")
                .note("keep one line per compute capability"));
        }
    }
    let mut drivers = Vec::new();
    for (major, floor) in &nvidia.cuda_drivers {
        let Some(m) = major
            .parse::<u32>()
            .ok()
            .filter(|_| major.bytes().all(|b| b.is_ascii_digit()))
        else {
            return Err(InputError::new(format!(
                "{}: [nvidia.cuda-drivers] key {} is not a CUDA major",
                bad.path.display(),
                quoted(major)
            ))
            .note("key each line by the CUDA major, e.g. `13 = { linux = \"580\", windows = \"580\" }`"));
        };
        drivers.push((m, floor.clone()));
    }
    drivers.sort_by_key(|(m, _)| *m);
    Ok(drivers)
}

fn check_tables(
    bad: &Bad,
    therock: &BTreeMap<String, Table>,
) -> Result<Vec<(u32, Table)>, InputError> {
    let mut tables = Vec::new();
    for (version, table) in therock {
        let major = version
            .split('.')
            .next()
            .filter(|m| !m.is_empty() && m.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|m| m.parse::<u32>().ok());
        let Some(major) = major else {
            return Err(InputError::new(format!(
                "{}: [therock.{}] is not keyed by an SDK version",
                bad.path.display(),
                quoted(version)
            ))
            .note("name each table by the ROCm version it starts at, e.g. [therock.\"10.0\"]"));
        };
        let key = |what: &str| format!("therock.\"{version}\".{what}");
        for target in &table.targets {
            if !looks_like_target(target) {
                return Err(bad
                    .at(&key("targets"), target, 0, "not a GPU target")
                    .note("targets are `gfx` and hex digits, e.g. gfx1100"));
            }
        }
        let named = table
            .families
            .iter()
            .map(|(f, ts)| (key(&format!("families.{f}")), ts))
            .chain(
                table
                    .excluded
                    .iter()
                    .map(|(l, ts)| (key(&format!("excluded.{l}")), ts)),
            )
            .chain(
                table
                    .build_passing_only
                    .iter()
                    .map(|(p, ts)| (key(&format!("build-passing-only.{p}")), ts)),
            );
        for (key, targets) in named {
            if let Some(unknown) = targets.iter().find(|t| !table.targets.contains(t)) {
                return Err(bad
                    .at(&key, unknown, 0, "a target this table does not declare")
                    .note(format!(
                        "add it to {} `targets`, or correct the name",
                        table.name
                    )));
            }
        }
        if let Some(platform) = table
            .build_passing_only
            .keys()
            .find(|p| p.parse::<Platform>().is_err())
        {
            return Err(bad
                .at(&key("build-passing-only"), platform, 0, "not a platform")
                .note("name a platform: linux-x86_64 or windows-x86_64"));
        }
        tables.push((major, table.clone()));
    }
    tables.sort_by_key(|(m, _)| *m);
    if tables.is_empty() {
        return Err(InputError::new(format!(
            "{}: no [therock.\"<version>\"] table",
            bad.path.display()
        ))
        .note("the AMD variants need TheRock's target table of their SDK"));
    }
    Ok(tables)
}

fn check_amd(
    bad: &Bad,
    amd: &AmdFile,
    tables: &[(u32, Table)],
    variants: &[String],
) -> Result<(), InputError> {
    let mut targets = BTreeSet::new();
    for target in &amd.targets {
        if !looks_like_target(&target.gfx) {
            return Err(bad
                .at("amd.targets gfx", &target.gfx, 0, "not a GPU target")
                .note("targets are `gfx` and hex digits, e.g. gfx1100"));
        }
        if !targets.insert(target.gfx.as_str()) {
            return Err(bad
                .at("amd.targets gfx", &target.gfx, 1, "listed twice")
                .note("keep one line per target"));
        }
        if !tables.iter().any(|(_, t)| t.targets.contains(&target.gfx)) {
            return Err(bad
                .at("amd.targets gfx", &target.gfx, 0, "in no [therock.*] table")
                .note(
                    "add it to the `targets` (and families) of the TheRock release that builds it",
                ));
        }
    }
    let mut ids: BTreeMap<&str, &PciId> = BTreeMap::new();
    for device in &amd.pci_ids.devices {
        let hex = device.id.len() == 4
            && device
                .id
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !hex {
            return Err(bad
                .at(
                    "amd.pci-ids.devices id",
                    &device.id,
                    0,
                    "not a PCI device ID",
                )
                .note("write four lower-case hex digits, as sysfs and pci.ids do, e.g. \"73ff\""));
        }
        if let Some(first) = ids.insert(&device.id, device) {
            return Err(bad
                .at("amd.pci-ids.devices id", &device.id, 1, "listed twice")
                .note(format!(
                    "its first line says {} ({}); keep one line per device ID, as pci.ids has",
                    first.gfx,
                    quoted(&first.name)
                )));
        }
        if !targets.contains(device.gfx.as_str()) {
            return Err(bad
                .at(
                    "amd.pci-ids.devices gfx",
                    &device.gfx,
                    0,
                    "not one of [amd] targets",
                )
                .note("add the target to [amd] `targets` (generation, products) first"));
        }
    }
    for (family, key) in &amd.families {
        if !variants.contains(family) {
            return Err(InputError::new(format!(
                "{}: [amd.families] names {}, which is no variant",
                bad.path.display(),
                quoted(family)
            ))
            .allowed(family, variants)
            .note("each key is a variant file variants/<name>.toml"));
        }
        let ok = !key.is_empty()
            && key
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        if !ok {
            return Err(bad
                .at(
                    &format!("amd.families.{family}"),
                    key,
                    0,
                    "not an AMD sub-family key",
                )
                .note("use rocm-bootstrap's key, e.g. \"gfx10_3\" or \"gfx110x\""));
        }
    }
    Ok(())
}

/// The checkout's GPU data, for unit tests.
#[cfg(test)]
pub(crate) fn checkout_gpus() -> Gpus {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let path = root.join("variants").join(GPUS_FILE);
    let text = std::fs::read_to_string(&path).unwrap();
    let variants = crate::variant::Catalog::names(&root).unwrap();
    Gpus::parse(&path, &text, &variants).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn real() -> Gpus {
        checkout_gpus()
    }

    #[test]
    fn families_are_therocks() {
        let gpus = real();
        let t = gpus.table_for_sdk(Some("7.2"));
        assert_eq!(
            t.family("gfx110X-dgpu").unwrap(),
            ["gfx1100", "gfx1101", "gfx1102"]
        );
        assert_eq!(t.family("gfx110X-igpu").unwrap(), ["gfx1103"]);
        assert_eq!(t.family("gfx103X-dgpu").unwrap(), ["gfx1030", "gfx1032"]);
        assert_eq!(t.family("gfx120X-all").unwrap(), ["gfx1200", "gfx1201"]);
        assert_eq!(t.family("gfx1151").unwrap(), ["gfx1151"]);
        assert!(t.family("dgpu-all").unwrap().contains(&"gfx1201".into()));
        assert!(!t.family("igpu-all").unwrap().contains(&"gfx1035".into()));
        assert!(t.family("custom").is_none(), "a bundle name, not a family");
        assert!(t.family("gfx110X").is_none(), "not a name TheRock defines");
    }

    #[test]
    fn rocm_10_has_every_rdna2_target_and_gfx1035_in_igpu_all() {
        let gpus = real();
        let t = gpus.table_for_sdk(Some("10.0"));
        assert_eq!(t.name, "TheRock 10.0");
        assert_eq!(
            t.family("gfx103X-all").unwrap(),
            [
                "gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036"
            ]
        );
        assert_eq!(
            t.family("gfx103X-dgpu").unwrap(),
            ["gfx1030", "gfx1031", "gfx1032", "gfx1034"]
        );
        assert_eq!(t.family("gfx1033").unwrap(), ["gfx1033"]);
        for igpu in ["gfx1033", "gfx1035"] {
            assert!(
                t.family("igpu-all").unwrap().contains(&igpu.into()),
                "{igpu}"
            );
        }
        let old = gpus.table_for_sdk(Some("7.2"));
        for gone in ["gfx1031", "gfx1033", "gfx1034"] {
            assert!(old.family(gone).is_none(), "{gone} is not in 7.2's table");
        }
        assert_eq!(old.name, "TheRock 7.2");
        assert_eq!(gpus.table_for_sdk(None).name, "TheRock 7.2");
        assert_eq!(gpus.table_for_sdk(Some("6.2")).name, "TheRock 7.2");
        assert_eq!(gpus.table_for_sdk(Some("11.0")).name, "TheRock 10.0");
    }

    #[test]
    fn hipblaslt_is_not_built_for_rdna2_and_for_gfx1102_only_before_rocm_10() {
        let gpus = real();
        let (old, new) = (
            gpus.table_for_sdk(Some("7.2")),
            gpus.table_for_sdk(Some("10.0")),
        );
        for t in [old, new] {
            assert!(t.excluded("gfx1030", "hipblaslt"), "{}", t.name);
            assert!(!t.excluded("gfx1100", "hipblaslt"), "{}", t.name);
            assert!(!t.excluded("gfx1030", "rocblas"), "{}", t.name);
        }
        assert!(old.excluded("gfx1102", "hipBLASLt"));
        assert!(!new.excluded("gfx1102", "hipBLASLt"));
        for t in ["gfx1031", "gfx1033", "gfx1034"] {
            assert!(new.excluded(t, "hipblaslt"), "{t}");
        }
        assert!(new.excluded("gfx1103", "rccl"));
        assert!(!new.excluded("gfx1151", "rccl"));
    }

    #[test]
    fn amds_keys_name_each_rocm_10_family() {
        let gpus = real();
        let keys: Vec<(&str, &str)> = gpus
            .amd_families
            .iter()
            .map(|(f, k)| (f.as_str(), k.as_str()))
            .collect();
        assert_eq!(
            keys,
            [
                ("rocm-rdna1", "gfx10_1"),
                ("rocm-rdna2", "gfx10_3"),
                ("rocm-rdna3", "gfx110x"),
                ("rocm-rdna35", "gfx115x"),
                ("rocm-rdna4", "gfx12_0"),
            ]
        );
    }

    /// Each mistake in the data file is refused naming the file, the key, the value and where
    /// it is written, with the next step; nothing panics.
    #[test]
    fn mistakes_in_the_gpu_data_are_named_with_the_key_and_the_next_step() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let path = Path::new("variants/gpus.toml");
        let text = std::fs::read_to_string(root.join(path)).unwrap();
        let variants = crate::variant::Catalog::names(&root).unwrap();
        let cases: &[(&str, &str, &[&str])] = &[
            (
                "{ id = \"7590\",",
                "{ id = \"73ff\",",
                &[
                    "`amd.pci-ids.devices id` `73ff`: listed twice",
                    "keep one line per device ID",
                ],
            ),
            (
                "{ id = \"7590\",",
                "{ id = \"75G0\",",
                &["`75G0`: not a PCI device ID", "four lower-case hex digits"],
            ),
            (
                "{ id = \"7590\",",
                "{ id = \"07590\",",
                &["`07590`: not a PCI device ID"],
            ),
            (
                "{ id = \"7590\", gfx = \"gfx1200\"",
                "{ id = \"7590\", gfx = \"gfx1299\"",
                &["`amd.pci-ids.devices gfx` `gfx1299`: not one of [amd] targets"],
            ),
            (
                "{ gfx = \"gfx1153\",",
                "{ gfx = \"gfx1163\",",
                &["`amd.targets gfx` `gfx1163`: in no [therock.*] table"],
            ),
            (
                "gfx120X-all = [\"gfx1200\", \"gfx1201\"]\n\n[therock.\"7.2\".excluded]",
                "gfx120X-all = [\"gfx1200\", \"gfx1209\"]\n\n[therock.\"7.2\".excluded]",
                &[
                    "`therock.\"7.2\".families.gfx120X-all` `gfx1209`: a target this table does not declare",
                    "add it to TheRock 7.2 `targets`",
                ],
            ),
            (
                "rccl = [\"gfx1103\"",
                "rccl = [\"gfx1303\"",
                &["`therock.\"10.0\".excluded.rccl` `gfx1303`"],
            ),
            (
                "windows-x86_64 = [\"gfx1153\", \"gfx1200\"",
                "windows-x86_64 = [\"gfx1153\", \"gfx1290\"",
                &[
                    "`therock.\"10.0\".build-passing-only.windows-x86_64` `gfx1290`: a target this table does not declare",
                ],
            ),
            (
                "windows-x86_64 = [\"gfx1153\", \"gfx1200\"",
                "macos-arm64 = [\"gfx1153\", \"gfx1200\"",
                &[
                    "`therock.\"10.0\".build-passing-only` `macos-arm64`: not a platform",
                    "linux-x86_64 or windows-x86_64",
                ],
            ),
            (
                "rocm-rdna4 = \"gfx12_0\"",
                "rocm-rdna9 = \"gfx12_0\"",
                &[
                    "[amd.families] names `rocm-rdna9`, which is no variant",
                    "did you mean `rocm-rdna",
                ],
            ),
            (
                "rocm-rdna4 = \"gfx12_0\"",
                "rocm-rdna4 = \"gfx12-0\"",
                &["`amd.families.rocm-rdna4` `gfx12-0`: not an AMD sub-family key"],
            ),
            (
                "{ cc = \"8.6\",",
                "{ cc = \"8,6\",",
                &["`nvidia.cards cc` `8,6`: not a compute capability"],
            ),
            (
                "13 = { linux",
                "x13 = { linux",
                &["[nvidia.cuda-drivers] key `x13` is not a CUDA major"],
            ),
            (
                "[therock.\"10.0\"]\n",
                "[therock.ten]\nname = \"x\"\ntargets = []\nfamilies = {}\n\n[therock.\"10.0\"]\n",
                &["[therock.`ten`] is not keyed by an SDK version"],
            ),
            (
                "[amd.pci-ids]\n",
                "[amd.pci-ids]\nvendor = \"1002\"\n",
                &["unknown key `vendor`", "variants/gpus.toml"],
            ),
            (
                "products = \"RX 9060 XT\"",
                "products = 9060",
                &["variants/gpus.toml"],
            ),
        ];
        for (from, to, needles) in cases {
            assert_eq!(text.matches(from).count(), 1, "`{from}` once");
            let broken = text.replacen(from, to, 1);
            let err = Gpus::parse(path, &broken, &variants)
                .expect_err(to)
                .to_string();
            for needle in *needles {
                assert!(err.contains(needle), "`{to}`: {needle} in\n{err}");
            }
            assert!(err.contains("variants/gpus.toml"), "{err}");
            if !to.starts_with("products") && !to.starts_with("[amd.pci") {
                assert!(err.contains("  = "), "a next step: {err}");
            }
        }
    }
}
