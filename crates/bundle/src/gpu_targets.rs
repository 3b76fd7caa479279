//! AMD GPU targets (`gfx1100`) and TheRock's target families (`gfx110X-dgpu`), as data.
//!
//! The families are those ROCm/TheRock defines in `cmake/therock_amdgpu_targets.cmake`
//! (`therock_add_amdgpu_target(<target> "<product>" FAMILY <families…>)`); every target is
//! also a family of its own. `ROCM_SDK_TARGET_FAMILY` takes these names
//! (build_tools/packaging/python/templates/rocm/src/rocm_sdk/_dist_info.py). `custom` is not
//! a family there: it is the bundle name of `rocm_sdk_libraries_custom`, whose targets are
//! whatever that wheel was built for.

/// One TheRock release's targets, families and exclusions, as its
/// `cmake/therock_amdgpu_targets.cmake` declares them. They differ between releases (ROCm 10
/// adds gfx1031/gfx1033/gfx1034, builds hipBLASLt for gfx1102, puts gfx1035 in `igpu-all`),
/// so a variant uses the table of the SDK it names ([`Table::for_sdk`]).
#[derive(Debug)]
pub struct Table {
    /// What the table follows, for messages: `TheRock 7.2`.
    pub name: &'static str,
    /// `(family, targets)`, as the cmake file assigns them.
    pub families: &'static [(&'static str, &'static [&'static str])],
    /// Every target the cmake file declares, in its order.
    pub targets: &'static [&'static str],
    /// Libraries not built for some targets (`EXCLUDE_TARGET_PROJECTS`), so their kernel
    /// files lack those targets by design. Only libraries whose kernels a variant bundles.
    pub excluded: &'static [(&'static str, &'static [&'static str])],
}

/// The table the ROCm 7.2 variants (HIP SDK and TheRock 7.2 wheels) follow. Upstream's
/// gfx1035 line there lists `igpu-all` before the FAMILY keyword, so gfx1035 is not in
/// `igpu-all`: kept as upstream.
pub const ROCM_7_2: Table = Table {
    name: "TheRock 7.2",
    families: &[
        (
            "dgpu-all",
            &[
                "gfx906", "gfx1010", "gfx1011", "gfx1012", "gfx1030", "gfx1032", "gfx1100",
                "gfx1101", "gfx1102", "gfx1200", "gfx1201",
            ],
        ),
        ("dcgpu-all", &["gfx908", "gfx90a", "gfx942", "gfx950"]),
        (
            "igpu-all",
            &[
                "gfx1036", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153",
            ],
        ),
        ("gfx90X-all", &["gfx906", "gfx908", "gfx90a"]),
        ("gfx90X-dgpu", &["gfx906"]),
        ("gfx90X-dcgpu", &["gfx906", "gfx908", "gfx90a"]),
        ("gfx94X-all", &["gfx942"]),
        ("gfx94X-dcgpu", &["gfx942"]),
        ("gfx950-all", &["gfx950"]),
        ("gfx950-dcgpu", &["gfx950"]),
        ("gfx101X-all", &["gfx1010", "gfx1011", "gfx1012"]),
        ("gfx101X-dgpu", &["gfx1010", "gfx1011", "gfx1012"]),
        ("gfx103X-all", &["gfx1030", "gfx1032", "gfx1035", "gfx1036"]),
        ("gfx103X-dgpu", &["gfx1030", "gfx1032"]),
        ("gfx103X-igpu", &["gfx1035", "gfx1036"]),
        ("gfx110X-all", &["gfx1100", "gfx1101", "gfx1102", "gfx1103"]),
        ("gfx110X-dgpu", &["gfx1100", "gfx1101", "gfx1102"]),
        ("gfx110X-igpu", &["gfx1103"]),
        ("gfx115X-all", &["gfx1150", "gfx1151", "gfx1152", "gfx1153"]),
        (
            "gfx115X-igpu",
            &["gfx1150", "gfx1151", "gfx1152", "gfx1153"],
        ),
        ("gfx120X-all", &["gfx1200", "gfx1201"]),
    ],
    targets: &[
        "gfx906", "gfx908", "gfx90a", "gfx942", "gfx950", "gfx1010", "gfx1011", "gfx1012",
        "gfx1030", "gfx1032", "gfx1035", "gfx1036", "gfx1100", "gfx1101", "gfx1102", "gfx1103",
        "gfx1150", "gfx1151", "gfx1152", "gfx1153", "gfx1200", "gfx1201",
    ],
    excluded: &[(
        "hipblaslt",
        &[
            "gfx906", "gfx1010", "gfx1011", "gfx1012", "gfx1030", "gfx1032", "gfx1035", "gfx1036",
            "gfx1102",
        ],
    )],
};

/// ROCm 10.0: ROCm/TheRock branch `release/therock-10.0` @16adc4d
/// `cmake/therock_amdgpu_targets.cmake` L48-258 (gfx1031 L138-146, gfx1033 L156-164,
/// gfx1034 L165-173, gfx1035 in `igpu-all` L174-182; gfx1102 excludes only hipSPARSELt and
/// rocprofiler-compute, L204-208, since "Include gfx1102 target to hipBLASLt build (#2908)";
/// rccl excluded for gfx1103, gfx1150, gfx1152, gfx1153).
pub const ROCM_10_0: Table = Table {
    name: "TheRock 10.0",
    families: &[
        (
            "dgpu-all",
            &[
                "gfx900", "gfx906", "gfx1010", "gfx1011", "gfx1012", "gfx1030", "gfx1031",
                "gfx1032", "gfx1034", "gfx1100", "gfx1101", "gfx1102", "gfx1200", "gfx1201",
            ],
        ),
        (
            "igpu-all",
            &[
                "gfx90c", "gfx1033", "gfx1035", "gfx1036", "gfx1103", "gfx1150", "gfx1151",
                "gfx1152", "gfx1153",
            ],
        ),
        (
            "dcgpu-all",
            &["gfx908", "gfx90a", "gfx942", "gfx950", "gfx1250"],
        ),
        ("gfx900-dgpu", &["gfx900"]),
        ("gfx90c-igpu", &["gfx90c"]),
        ("gfx906-dgpu", &["gfx906"]),
        ("gfx908-dcgpu", &["gfx908"]),
        ("gfx90a-dcgpu", &["gfx90a"]),
        ("gfx94X-all", &["gfx942"]),
        ("gfx94X-dcgpu", &["gfx942"]),
        ("gfx950-all", &["gfx950"]),
        ("gfx950-dcgpu", &["gfx950"]),
        ("gfx101X-all", &["gfx1010", "gfx1011", "gfx1012"]),
        ("gfx101X-dgpu", &["gfx1010", "gfx1011", "gfx1012"]),
        (
            "gfx103X-all",
            &[
                "gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036",
            ],
        ),
        (
            "gfx103X-dgpu",
            &["gfx1030", "gfx1031", "gfx1032", "gfx1034"],
        ),
        ("gfx103X-igpu", &["gfx1033", "gfx1035", "gfx1036"]),
        ("gfx110X-all", &["gfx1100", "gfx1101", "gfx1102", "gfx1103"]),
        ("gfx110X-dgpu", &["gfx1100", "gfx1101", "gfx1102"]),
        ("gfx110X-igpu", &["gfx1103"]),
        ("gfx115X-all", &["gfx1150", "gfx1151", "gfx1152", "gfx1153"]),
        (
            "gfx115X-igpu",
            &["gfx1150", "gfx1151", "gfx1152", "gfx1153"],
        ),
        ("gfx120X-all", &["gfx1200", "gfx1201"]),
        ("gfx125X-all", &["gfx1250"]),
        ("gfx125X-dcgpu", &["gfx1250"]),
    ],
    targets: &[
        "gfx900", "gfx90c", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx950", "gfx1010", "gfx1011",
        "gfx1012", "gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036",
        "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153",
        "gfx1200", "gfx1201", "gfx1250",
    ],
    excluded: &[
        (
            "hipblaslt",
            &[
                "gfx900", "gfx90c", "gfx906", "gfx1010", "gfx1011", "gfx1012", "gfx1030",
                "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036",
            ],
        ),
        ("rccl", &["gfx1103", "gfx1150", "gfx1152", "gfx1153"]),
    ],
};

/// The bundle name of `rocm_sdk_libraries_custom`: "the targets this wheel has".
pub const CUSTOM: &str = "custom";

impl Table {
    /// The table of the SDK a variant names (`[sdk] version`, e.g. "10.0"): ROCm 10 and
    /// later take [`ROCM_10_0`]; anything older, or no version, [`ROCM_7_2`].
    pub fn for_sdk(version: Option<&str>) -> &'static Table {
        let major = version
            .and_then(|v| v.split('.').next())
            .and_then(|m| m.trim().parse::<u32>().ok());
        match major {
            Some(m) if m >= 10 => &ROCM_10_0,
            _ => &ROCM_7_2,
        }
    }

    /// Whether this release leaves `library` (a folder name such as `hipblaslt`) out for
    /// `target`.
    pub fn excluded(&self, target: &str, library: &str) -> bool {
        self.excluded
            .iter()
            .any(|(l, ts)| l.eq_ignore_ascii_case(library) && ts.contains(&target))
    }

    /// The targets of a family name, a single target standing for itself.
    pub fn family(&self, name: &str) -> Option<Vec<String>> {
        if let Some((_, targets)) = self.families.iter().find(|(f, _)| *f == name) {
            return Some(targets.iter().map(|t| t.to_string()).collect());
        }
        self.targets.contains(&name).then(|| vec![name.to_string()])
    }

    /// Every family name and target, for [`closest`].
    pub fn all_names(&self) -> impl Iterator<Item = &'static str> + use<> {
        let (families, targets) = (self.families, self.targets);
        families
            .iter()
            .map(|(f, _)| *f)
            .chain(targets.iter().copied())
            .chain([CUSTOM])
    }
}

/// Whether `text` is spelled like a target (`gfx` and hex digits, e.g. gfx1031 or gfx90a):
/// compilers know targets TheRock does not package.
pub fn looks_like_target(text: &str) -> bool {
    text.strip_prefix("gfx")
        .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The GPU targets named in a kernel file's name or path (`…_gfx1030.co`,
/// `gfx1100/TensileLibrary.dat`, `…-gfx90a-xnack+.hsaco`).
pub fn targets_in(name: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = name;
    while let Some(at) = rest.find("gfx") {
        let tail = &rest[at + 3..];
        let len = tail.bytes().take_while(u8::is_ascii_alphanumeric).count();
        if len > 0 {
            found.push(&rest[at..at + 3 + len]);
        }
        rest = &tail[len..];
    }
    found
}

/// The known name closest to `word` (edit distance at most 3), for a "did you mean".
pub fn closest<'a>(word: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    known
        .into_iter()
        .map(|k| (distance(word, k), k))
        .filter(|(d, _)| *d <= 3)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_ascii_lowercase().chars().collect();
    let b: Vec<char> = b.to_ascii_lowercase().chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (prev + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            prev = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_are_therocks() {
        let t = &ROCM_7_2;
        assert_eq!(
            t.family("gfx110X-dgpu").unwrap(),
            ["gfx1100", "gfx1101", "gfx1102"]
        );
        assert_eq!(t.family("gfx110X-igpu").unwrap(), ["gfx1103"]);
        assert_eq!(t.family("gfx103X-dgpu").unwrap(), ["gfx1030", "gfx1032"]);
        assert_eq!(t.family("gfx120X-all").unwrap(), ["gfx1200", "gfx1201"]);
        assert_eq!(t.family("gfx1151").unwrap(), ["gfx1151"]);
        assert!(
            t.family("dgpu-all")
                .unwrap()
                .contains(&"gfx1201".to_string())
        );
        assert!(
            !t.family("igpu-all")
                .unwrap()
                .contains(&"gfx1035".to_string())
        );
        assert!(t.family("custom").is_none(), "a bundle name, not a family");
        assert!(t.family("gfx110X").is_none(), "not a name TheRock defines");
    }

    #[test]
    fn rocm_10_has_every_rdna2_target_and_gfx1035_in_igpu_all() {
        let t = Table::for_sdk(Some("10.0"));
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
        assert!(
            t.family("igpu-all")
                .unwrap()
                .contains(&"gfx1035".to_string())
        );
        assert!(
            t.family("igpu-all")
                .unwrap()
                .contains(&"gfx1033".to_string())
        );
        for gone in ["gfx1031", "gfx1033", "gfx1034"] {
            assert!(
                ROCM_7_2.family(gone).is_none(),
                "{gone} is not in 7.2's table"
            );
        }
        assert_eq!(Table::for_sdk(Some("7.2")).name, "TheRock 7.2");
        assert_eq!(Table::for_sdk(None).name, "TheRock 7.2");
        assert_eq!(Table::for_sdk(Some("11.0")).name, "TheRock 10.0");
    }

    #[test]
    fn hipblaslt_is_not_built_for_rdna2_and_for_gfx1102_only_before_rocm_10() {
        for t in [&ROCM_7_2, &ROCM_10_0] {
            assert!(t.excluded("gfx1030", "hipblaslt"), "{}", t.name);
            assert!(!t.excluded("gfx1100", "hipblaslt"), "{}", t.name);
            assert!(!t.excluded("gfx1030", "rocblas"), "{}", t.name);
        }
        assert!(ROCM_7_2.excluded("gfx1102", "hipBLASLt"));
        assert!(!ROCM_10_0.excluded("gfx1102", "hipBLASLt"));
        for t in ["gfx1031", "gfx1033", "gfx1034"] {
            assert!(ROCM_10_0.excluded(t, "hipblaslt"), "{t}");
        }
        assert!(ROCM_10_0.excluded("gfx1103", "rccl"));
        assert!(!ROCM_10_0.excluded("gfx1151", "rccl"));
    }

    #[test]
    fn every_family_target_is_declared() {
        for table in [&ROCM_7_2, &ROCM_10_0] {
            for (name, targets) in table.families {
                for t in *targets {
                    assert!(table.targets.contains(t), "{t} of {name} in {}", table.name);
                }
            }
            for (library, targets) in table.excluded {
                for t in *targets {
                    assert!(
                        table.targets.contains(t),
                        "{t} of {library} in {}",
                        table.name
                    );
                }
            }
        }
    }

    #[test]
    fn targets_in_names_and_folders() {
        assert_eq!(targets_in("TensileLibrary_lazy_gfx1030.dat"), ["gfx1030"]);
        assert_eq!(targets_in("Kernels.so-000-gfx90a-xnack+.hsaco"), ["gfx90a"]);
        assert_eq!(targets_in("gfx1100/TensileLibrary.dat.zlib"), ["gfx1100"]);
        assert!(targets_in("TensileManifest.txt").is_empty());
    }

    #[test]
    fn near_misses_are_suggested() {
        let names = || ROCM_10_0.all_names();
        assert_eq!(closest("gfx110x-dgpu", names()), Some("gfx110X-dgpu"));
        assert_eq!(closest("gfx1100-dgpu", names()), Some("gfx110X-dgpu"));
        assert_eq!(closest("dgpu_all", names()), Some("dgpu-all"));
        assert_eq!(closest("nvidia", names()), None);
    }
}
