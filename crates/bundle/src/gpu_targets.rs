//! AMD GPU targets (`gfx1100`) and TheRock's target families (`gfx110X-dgpu`): the table type
//! and what is read from target names. The tables themselves are data (`variants/gpus.toml`).
//!
//! The families are those ROCm/TheRock defines in `cmake/therock_amdgpu_targets.cmake`
//! (`therock_add_amdgpu_target(<target> "<product>" FAMILY <families…>)`); every target is
//! also a family of its own. `ROCM_SDK_TARGET_FAMILY` takes these names
//! (build_tools/packaging/python/templates/rocm/src/rocm_sdk/_dist_info.py). `custom` is not
//! a family there: it is the bundle name of `rocm_sdk_libraries_custom`, whose targets are
//! whatever that wheel was built for.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One TheRock release's targets, families and exclusions, as its
/// `cmake/therock_amdgpu_targets.cmake` declares them. They differ between releases, so a
/// variant uses the table of the SDK it names: the pipeline reads them from the GPU data file
/// (`variants/gpus.toml`, `[therock.*]`) and hands the variant's own table over.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Table {
    /// What the table follows, for messages: `TheRock 7.2`.
    pub name: String,
    /// Every target the cmake file declares, in its order.
    pub targets: Vec<String>,
    /// Family → its targets, as the cmake file assigns them.
    pub families: BTreeMap<String, Vec<String>>,
    /// Library (folder name) → the targets it is not built for (`EXCLUDE_TARGET_PROJECTS`),
    /// so its kernel files lack those targets by design. Only libraries whose kernels a
    /// variant bundles.
    #[serde(default)]
    pub excluded: BTreeMap<String, Vec<String>>,
    /// Platform (`windows-x86_64`) → the targets AMD lists there as "Build Passing" only
    /// (compiled, never run by AMD): said beside a build, never used to choose files.
    #[serde(default, rename = "build-passing-only")]
    pub build_passing_only: BTreeMap<String, Vec<String>>,
}

/// `lists` cut to `targets`: each key with those of `targets` it lists, keys listing none of
/// them left out.
fn those_of(
    lists: &BTreeMap<String, Vec<String>>,
    targets: &[String],
) -> BTreeMap<String, Vec<String>> {
    lists
        .iter()
        .map(|(key, listed)| {
            let hit: Vec<String> = targets
                .iter()
                .filter(|t| listed.contains(t))
                .cloned()
                .collect();
            (key.clone(), hit)
        })
        .filter(|(_, hit)| !hit.is_empty())
        .collect()
}

/// The bundle name of `rocm_sdk_libraries_custom`: "the targets this wheel has".
pub const CUSTOM: &str = "custom";

impl Table {
    /// Whether this release leaves `library` (a folder name such as `hipblaslt`) out for
    /// `target`.
    pub fn excluded(&self, target: &str, library: &str) -> bool {
        self.excluded
            .iter()
            .any(|(l, ts)| l.eq_ignore_ascii_case(library) && ts.iter().any(|t| t == target))
    }

    /// The exclusions that concern `targets`: library → those of `targets` it is not built
    /// for (what a bundle of those targets must not expect kernel files for).
    pub fn excluded_for(&self, targets: &[String]) -> BTreeMap<String, Vec<String>> {
        those_of(&self.excluded, targets)
    }

    /// Platform → those of `targets` AMD lists there as "Build Passing" only.
    pub fn build_passing_only_for(&self, targets: &[String]) -> BTreeMap<String, Vec<String>> {
        those_of(&self.build_passing_only, targets)
    }

    /// The targets of a family name, a single target standing for itself.
    pub fn family(&self, name: &str) -> Option<Vec<String>> {
        if let Some(targets) = self.families.get(name) {
            return Some(targets.clone());
        }
        self.targets
            .iter()
            .any(|t| t == name)
            .then(|| vec![name.to_string()])
    }

    /// Every family name and target, for [`closest`].
    pub fn all_names(&self) -> impl Iterator<Item = &str> {
        self.families
            .keys()
            .map(String::as_str)
            .chain(self.targets.iter().map(String::as_str))
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
    fn targets_in_names_and_folders() {
        assert_eq!(targets_in("TensileLibrary_lazy_gfx1030.dat"), ["gfx1030"]);
        assert_eq!(targets_in("Kernels.so-000-gfx90a-xnack+.hsaco"), ["gfx90a"]);
        assert_eq!(targets_in("gfx1100/TensileLibrary.dat.zlib"), ["gfx1100"]);
        assert!(targets_in("TensileManifest.txt").is_empty());
    }

    #[test]
    fn near_misses_are_suggested() {
        let table = Table {
            name: "t".into(),
            targets: vec!["gfx1100".into()],
            families: [
                ("gfx110X-dgpu".to_string(), vec!["gfx1100".to_string()]),
                ("dgpu-all".to_string(), vec!["gfx1100".to_string()]),
            ]
            .into(),
            ..Table::default()
        };
        let names = || table.all_names();
        assert_eq!(closest("gfx110x-dgpu", names()), Some("gfx110X-dgpu"));
        assert_eq!(closest("gfx1100-dgpu", names()), Some("gfx110X-dgpu"));
        assert_eq!(closest("dgpu_all", names()), Some("dgpu-all"));
        assert_eq!(closest("nvidia", names()), None);
    }

    #[test]
    fn exclusions_are_kept_for_the_targets_asked() {
        let table = Table {
            name: "t".into(),
            targets: vec!["gfx1030".into(), "gfx1100".into()],
            families: BTreeMap::new(),
            excluded: [("hipblaslt".to_string(), vec!["gfx1030".to_string()])].into(),
            ..Table::default()
        };
        assert!(table.excluded("gfx1030", "hipBLASLt"));
        assert!(!table.excluded("gfx1100", "hipblaslt"));
        assert_eq!(
            table.excluded_for(&["gfx1030".into(), "gfx1100".into()]),
            BTreeMap::from([("hipblaslt".to_string(), vec!["gfx1030".to_string()])])
        );
        assert!(table.excluded_for(&["gfx1100".into()]).is_empty());
    }
}
