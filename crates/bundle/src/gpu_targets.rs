//! AMD GPU targets (`gfx1100`) and TheRock's target families (`gfx110X-dgpu`), as data.
//!
//! The families are those ROCm/TheRock defines in `cmake/therock_amdgpu_targets.cmake`
//! (`therock_add_amdgpu_target(<target> "<product>" FAMILY <families…>)`); every target is
//! also a family of its own. `ROCM_SDK_TARGET_FAMILY` takes these names
//! (build_tools/packaging/python/templates/rocm/src/rocm_sdk/_dist_info.py). `custom` is not
//! a family there: it is the bundle name of `rocm_sdk_libraries_custom`, whose targets are
//! whatever that wheel was built for.

/// `(family, targets)`, as TheRock's cmake file assigns them. Upstream's gfx1035 line lists
/// `igpu-all` before the FAMILY keyword, so gfx1035 is not in `igpu-all`: kept as upstream.
pub const FAMILIES: &[(&str, &[&str])] = &[
    (
        "dgpu-all",
        &[
            "gfx906", "gfx1010", "gfx1011", "gfx1012", "gfx1030", "gfx1032", "gfx1100", "gfx1101",
            "gfx1102", "gfx1200", "gfx1201",
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
];

/// The bundle name of `rocm_sdk_libraries_custom`: "the targets this wheel has".
pub const CUSTOM: &str = "custom";

/// Every target TheRock declares, in its file's order.
pub const TARGETS: &[&str] = &[
    "gfx906", "gfx908", "gfx90a", "gfx942", "gfx950", "gfx1010", "gfx1011", "gfx1012", "gfx1030",
    "gfx1032", "gfx1035", "gfx1036", "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150",
    "gfx1151", "gfx1152", "gfx1153", "gfx1200", "gfx1201",
];

/// Libraries TheRock does not build for some targets (`EXCLUDE_TARGET_PROJECTS` in the
/// same cmake file), so their kernel folders lack those targets by design. Only the
/// libraries whose kernel data a variant bundles are listed.
const EXCLUDED: &[(&str, &[&str])] = &[(
    "hipblaslt",
    &[
        "gfx906", "gfx1010", "gfx1011", "gfx1012", "gfx1030", "gfx1032", "gfx1035", "gfx1036",
        "gfx1102",
    ],
)];

/// Whether TheRock leaves `library` (a folder name such as `hipblaslt`) out for `target`.
pub fn excluded(target: &str, library: &str) -> bool {
    EXCLUDED
        .iter()
        .any(|(l, ts)| l.eq_ignore_ascii_case(library) && ts.contains(&target))
}

/// The targets of a family name, a single target standing for itself.
pub fn family(name: &str) -> Option<Vec<String>> {
    if let Some((_, targets)) = FAMILIES.iter().find(|(f, _)| *f == name) {
        return Some(targets.iter().map(|t| t.to_string()).collect());
    }
    TARGETS.contains(&name).then(|| vec![name.to_string()])
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

/// Every family name and target, for [`closest`].
pub fn all_names() -> impl Iterator<Item = &'static str> {
    FAMILIES
        .iter()
        .map(|(f, _)| *f)
        .chain(TARGETS.iter().copied())
        .chain([CUSTOM])
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
        assert_eq!(
            family("gfx110X-dgpu").unwrap(),
            ["gfx1100", "gfx1101", "gfx1102"]
        );
        assert_eq!(family("gfx110X-igpu").unwrap(), ["gfx1103"]);
        assert_eq!(family("gfx103X-dgpu").unwrap(), ["gfx1030", "gfx1032"]);
        assert_eq!(family("gfx120X-all").unwrap(), ["gfx1200", "gfx1201"]);
        assert_eq!(family("gfx1151").unwrap(), ["gfx1151"]);
        assert!(family("dgpu-all").unwrap().contains(&"gfx1201".to_string()));
        assert!(!family("igpu-all").unwrap().contains(&"gfx1035".to_string()));
        assert!(family("custom").is_none(), "a bundle name, not a family");
        assert!(family("gfx110X").is_none(), "not a name TheRock defines");
    }

    #[test]
    fn hipblaslt_is_not_built_for_rdna2_or_gfx1102() {
        assert!(excluded("gfx1030", "hipblaslt"));
        assert!(excluded("gfx1102", "hipBLASLt"));
        assert!(!excluded("gfx1100", "hipblaslt"));
        assert!(!excluded("gfx1030", "rocblas"));
    }

    #[test]
    fn every_family_target_is_declared() {
        for (name, targets) in FAMILIES {
            for t in *targets {
                assert!(TARGETS.contains(t), "{t} of {name}");
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
        assert_eq!(closest("gfx110x-dgpu", all_names()), Some("gfx110X-dgpu"));
        assert_eq!(closest("gfx1100-dgpu", all_names()), Some("gfx110X-dgpu"));
        assert_eq!(closest("dgpu_all", all_names()), Some("dgpu-all"));
        assert_eq!(closest("nvidia", all_names()), None);
    }
}
