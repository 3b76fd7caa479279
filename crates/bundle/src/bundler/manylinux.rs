//! The manylinux tag a Linux wheel's binaries prove, computed as `auditwheel show` computes
//! its "consistent with" tag (pypa/auditwheel src/auditwheel/wheel_abi.py,
//! `analyze_wheel_abi`; policy/__init__.py, `versioned_symbols_policy` and
//! `lddtree_external_references`):
//!
//! | auditwheel's check | here |
//! |---|---|
//! | symbol versions: every `GLIBC_*`, `GLIBCXX_*`, `CXXABI_*`, `GCC_*`, … any ELF in the wheel needs (`.gnu.version_r`, ld-linux skipped) is in the policy's `symbol_versions` for its prefix | [`Analysis::symbol_policy`], from [`crate::binary`]'s `DT_VERNEED` reader |
//! | libraries: every `DT_NEEDED` not in the wheel is on the policy's `lib_whitelist` | [`Analysis::library_policy`] |
//! | blacklist: no undefined dynamic symbol of an ELF is on the policy's blacklist for a library it needs (e.g. libz's newer functions) | [`Analysis::blacklist_policy`] |
//! | overall: the least compatible of these | [`Analysis::proven`] |
//!
//! Not repeated: the ISA-extension check (x86-64-v2+ GNU property notes; auditwheel's
//! `--disable-isa-ext-check` skips it too) and the Python 2 checks (UCS2, PyFPE_jbuf).
//! Libraries the project's own policy treats as provided (the GPU driver's `libcuda.so.1`,
//! `--assume-present`) are left out of the library check, as `auditwheel repair --exclude`
//! leaves them out; they are listed in [`Analysis::excluded`].
//!
//! The data is `crates/bundle/policy/manylinux-x86_64.json`, auditwheel's policy file reduced to
//! x86_64 by `scripts/manylinux-policy.py`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::binary::BinaryInfo;

#[derive(Debug, Deserialize)]
struct PolicyFile {
    policies: Vec<ManylinuxPolicy>,
}

/// One manylinux policy (x86_64).
#[derive(Debug, Deserialize)]
pub struct ManylinuxPolicy {
    /// e.g. `manylinux_2_28`
    pub name: String,
    /// Higher is more compatible (older glibc): manylinux_2_5 is 100.
    pub(crate) priority: u32,
    /// Legacy names, e.g. `manylinux2014` for manylinux_2_17.
    #[cfg(test)]
    pub(crate) aliases: Vec<String>,
    lib_whitelist: BTreeSet<String>,
    blacklist: BTreeMap<String, BTreeSet<String>>,
    symbol_versions: BTreeMap<String, BTreeSet<String>>,
}

impl ManylinuxPolicy {
    /// The libraries outside a wheel its binaries may need (`lib_whitelist`), sorted.
    pub fn libraries(&self) -> impl Iterator<Item = &str> {
        self.lib_whitelist.iter().map(String::as_str)
    }

    /// The platform tag: `manylinux_2_28_x86_64`.
    pub fn tag(&self) -> String {
        format!("{}_x86_64", self.name)
    }

    /// Every version needed, grouped by prefix, is one the policy allows for that prefix
    /// (prefixes the policy does not name are not checked, as in auditwheel).
    fn allows_versions(&self, needed: &BTreeSet<String>) -> Result<(), String> {
        for version in needed {
            let (prefix, rest) = version.split_once('_').unwrap_or((version.as_str(), ""));
            if let Some(allowed) = self.symbol_versions.get(prefix)
                && !allowed.contains(rest)
            {
                return Err(version.clone());
            }
        }
        Ok(())
    }
}

/// All manylinux policies, most compatible first.
pub(crate) fn policies() -> &'static [ManylinuxPolicy] {
    static POLICIES: OnceLock<Vec<ManylinuxPolicy>> = OnceLock::new();
    POLICIES.get_or_init(|| {
        let file: PolicyFile =
            serde_json::from_str(include_str!("../../policy/manylinux-x86_64.json"))
                .expect("crates/bundle/policy/manylinux-x86_64.json is valid (checked by a test)");
        let mut policies = file.policies;
        policies.sort_by_key(|p| std::cmp::Reverse(p.priority));
        policies
    })
}

/// The manylinux policy a bundle policy stands for (`None` on Windows).
pub fn target(policy: super::Policy) -> Option<&'static str> {
    match policy {
        super::Policy::Manylinux2_28 => Some("manylinux_2_28"),
        super::Policy::Windows => None,
    }
}

/// The manylinux policy a wheel built on a host with glibc `host` is tagged for: the
/// variant's policy, or, where the host's glibc is newer, the oldest policy that allows it.
/// A compiler links against the host's glibc, so binaries built there may need any symbol
/// version up to it (e.g. `pthread_create@GLIBC_2.34` on glibc 2.34 and newer): only a build
/// on an old enough glibc (the manylinux_2_28 image) can prove manylinux_2_28.
pub fn target_for(policy: super::Policy, host: Option<(u32, u32)>) -> Option<String> {
    let base = target(policy)?;
    let glibc = |name: &str| -> Option<(u32, u32)> {
        let rest = name.strip_prefix("manylinux_")?;
        let (major, minor) = rest.split_once('_')?;
        Some((major.parse().ok()?, minor.parse().ok()?))
    };
    let Some(host) = host.filter(|h| glibc(base).is_some_and(|b| *h > b)) else {
        return Some(base.to_string());
    };
    policies()
        .iter()
        .filter_map(|p| glibc(&p.name).map(|g| (g, &p.name)))
        .filter(|(g, _)| *g >= host)
        .min()
        .map(|(_, name)| name.clone())
}

/// The file name of the fat wheel made from `wheel_name` for manylinux policy `target`
/// (none: the name is kept), which the bundle proves before writing it.
pub fn fat_wheel_name(wheel_name: &str, target: Option<&str>) -> String {
    match target {
        Some(name) => crate::wheel::platform_tagged_name(wheel_name, &format!("{name}_x86_64"))
            .unwrap_or_else(|_| wheel_name.to_string()),
        None => wheel_name.to_string(),
    }
}

pub fn policy(name: &str) -> Option<&'static ManylinuxPolicy> {
    policies().iter().find(|p| p.name == name)
}

/// One ELF file of a wheel: its path in the wheel, its dynamic facts and its undefined
/// dynamic symbols.
pub struct Elf {
    pub path: String,
    pub info: BinaryInfo,
    pub undefined: BTreeSet<String>,
}

/// Why a policy is not met: the first problem found, for the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Limit {
    /// The most compatible policy this check allows (None: not even the newest).
    pub policy: Option<&'static str>,
    /// What keeps the next more compatible policy out, e.g. `ctranslate2/_ext.so needs
    /// GLIBC_2.29 (from libm.so.6)`.
    pub(crate) because: Option<String>,
}

#[derive(Debug)]
pub(crate) struct Analysis {
    pub(crate) symbol_policy: Limit,
    pub(crate) library_policy: Limit,
    pub(crate) blacklist_policy: Limit,
    /// Needed libraries outside the wheel that no manylinux policy allows but the project's
    /// policy declares provided (left out of the check, as `auditwheel repair --exclude`).
    pub excluded: BTreeSet<String>,
    /// Versions needed from libraries outside the wheel, by library (ld-linux left out).
    pub versioned: BTreeMap<String, BTreeSet<String>>,
}

/// The ELF interpreter's names (file-name globs), which no policy lists and no check counts:
/// the kernel maps it before any library, so it is always the system's. auditwheel skips the
/// same names (policy/__init__.py, `lddtree_external_references`: `ld-linux*` on x86_64,
/// `ld64.so.2` on s390x, `ld64.so.1` on ppc64le).
pub(crate) const LOADERS: [&str; 3] = ["*ld-linux*", "ld64.so.1", "ld64.so.2"];

fn is_loader(name: &str) -> bool {
    LOADERS.iter().any(|p| super::glob::matches(p, name))
}

/// The most compatible policy for which `fails` finds nothing, with the reason the next
/// more compatible one fails. Policies are nested (each allows what the newer ones allow),
/// so walking from the newest down finds the boundary.
fn most_compatible(fails: impl Fn(&ManylinuxPolicy) -> Option<String>) -> Limit {
    let mut limit = Limit {
        policy: None,
        because: None,
    };
    for p in policies().iter().rev() {
        match fails(p) {
            None => limit.policy = Some(p.name.as_str()),
            Some(reason) => {
                limit.because = Some(format!("{}: {reason}", p.name));
                break;
            }
        }
    }
    limit
}

/// Analyses the ELF files of a wheel. `excluded` says which needed libraries outside the
/// wheel the project's policy treats as provided even though no manylinux policy lists them.
pub(crate) fn analyze(elves: &[Elf], excluded: &dyn Fn(&str) -> bool) -> Analysis {
    let in_wheel: BTreeSet<&str> = elves
        .iter()
        .flat_map(|e| {
            let name = ct2v_support::paths::last_segment(&e.path);
            std::iter::once(name).chain(e.info.soname.as_deref())
        })
        .collect();
    let mut versioned: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut all_versions: BTreeMap<String, String> = BTreeMap::new(); // version -> who
    for e in elves {
        for (library, versions) in &e.info.version_needs {
            if is_loader(library) {
                continue;
            }
            for v in versions {
                all_versions
                    .entry(v.clone())
                    .or_insert_with(|| format!("{} needs {v} (from {library})", e.path));
                if !in_wheel.contains(library.as_str()) {
                    versioned
                        .entry(library.clone())
                        .or_default()
                        .insert(v.clone());
                }
            }
        }
    }
    let needed: BTreeSet<String> = all_versions.keys().cloned().collect();
    let symbol_policy = most_compatible(|p| {
        p.allows_versions(&needed)
            .err()
            .map(|v| all_versions[&v].clone())
    });

    let mut external: BTreeMap<&str, &str> = BTreeMap::new(); // library -> first importer
    let mut excluded_found = BTreeSet::new();
    for e in elves {
        for library in &e.info.imports {
            if is_loader(library) || in_wheel.contains(library.as_str()) {
                continue;
            }
            let anywhere = policies().iter().any(|p| p.lib_whitelist.contains(library));
            if !anywhere && excluded(library) {
                excluded_found.insert(library.clone());
                continue;
            }
            external.entry(library).or_insert(&e.path);
        }
    }
    let library_policy = most_compatible(|p| {
        external
            .iter()
            .find(|(lib, _)| !p.lib_whitelist.contains(**lib))
            .map(|(lib, by)| format!("{by} needs {lib}, which it does not list"))
    });

    let blacklist_policy = most_compatible(|p| {
        elves.iter().find_map(|e| {
            e.info.imports.iter().find_map(|lib| {
                let banned = p.blacklist.get(lib)?;
                let hit = banned.intersection(&e.undefined).next()?;
                Some(format!(
                    "{} uses {hit} from {lib}, which it does not guarantee",
                    e.path
                ))
            })
        })
    });

    Analysis {
        symbol_policy,
        library_policy,
        blacklist_policy,
        excluded: excluded_found,
        versioned,
    }
}

impl Analysis {
    /// The most compatible policy every check allows (auditwheel's `overall_policy`).
    pub(crate) fn proven(&self) -> Option<&'static ManylinuxPolicy> {
        let limits = [
            &self.symbol_policy,
            &self.library_policy,
            &self.blacklist_policy,
        ];
        let found: Option<Vec<&'static ManylinuxPolicy>> =
            limits.iter().map(|l| l.policy.and_then(policy)).collect();
        found?.into_iter().min_by_key(|p| p.priority)
    }

    /// Whether the binaries meet `target` (a policy name); if not, why.
    pub(crate) fn check(&self, target: &str) -> Result<(), String> {
        let target = policy(target).ok_or_else(|| format!("unknown policy {target}"))?;
        let mut problems = Vec::new();
        for (what, limit) in [
            ("symbol versions", &self.symbol_policy),
            ("libraries", &self.library_policy),
            ("blacklisted symbols", &self.blacklist_policy),
        ] {
            let meets = limit
                .policy
                .and_then(policy)
                .is_some_and(|p| p.priority >= target.priority);
            if !meets {
                problems.push(format!(
                    "{what}: {}",
                    limit.because.as_deref().unwrap_or("no policy allows them")
                ));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n  "))
        }
    }
}

/// What the bundle found and wrote, for the report.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Tagging {
    /// The platform tag the fat wheel got, e.g. `manylinux_2_28_x86_64` (or `linux_x86_64`
    /// when the policy was not proven and the maintainer asked to keep it).
    pub tag: String,
    /// The most compatible tag the binaries prove, as `auditwheel show` reports it
    /// ("consistent with the following platform tag"), e.g. `manylinux_2_27_x86_64`.
    pub proven: Option<String>,
    /// Needed libraries left out of the check as provided by the system (driver, assumed).
    pub excluded: Vec<String>,
    /// Symbol versions needed from system libraries, by library.
    pub versioned_symbols: BTreeMap<String, BTreeSet<String>>,
}

/// Reads every ELF file below `tree` (an unpacked wheel) and decides its platform tag for
/// the manylinux policy `target`: the policy's tag when proven; else `linux_x86_64` when
/// `keep_linux_tag`, else an error naming what needs what, and the ways out.
pub(crate) fn tag_wheel(
    tree: &Path,
    target: &str,
    excluded: &dyn Fn(&str) -> bool,
    keep_linux_tag: bool,
    newer_ok: bool,
) -> anyhow::Result<Tagging> {
    let mut elves = Vec::new();
    for (relative, path) in ct2v_support::fsx::files_below(tree)? {
        if crate::binary::sniff(&path)? != Some(crate::binary::BinaryFormat::Elf) {
            continue;
        }
        let info = crate::binary::read(&path)?;
        let data = std::fs::read(&path)?;
        elves.push(Elf {
            path: relative,
            undefined: undefined_symbols(&data),
            info,
        });
    }
    let analysis = analyze(&elves, excluded);
    let proven = analysis.proven().map(ManylinuxPolicy::tag);
    let tag = match analysis.check(target) {
        Ok(()) => format!("{target}_x86_64"),
        Err(_) if keep_linux_tag => "linux_x86_64".to_string(),
        Err(_) if newer_ok && proven.is_some() => proven.clone().unwrap_or_default(),
        Err(why) => {
            return Err(ct2v_support::diagnostic::InputError::new(format!(
                "the wheel's binaries do not meet {target}, so it cannot be tagged \
                 {target}_x86_64 (checked as auditwheel checks it):\n  {why}\n\
                 The most compatible tag they prove: {}.\n\
                 Next: build on an older toolchain/glibc (CTranslate2's own Linux wheels are built \
                 in the manylinux_2_28 image, quay.io/pypa/manylinux_2_28_x86_64), bundle the \
                 missing libraries too (--search), or, for a wheel used only on this machine, \
                 bundle with --keep-linux-tag (`release` then refuses it unless \
                 --allow-linux-tag).",
                proven.as_deref().unwrap_or("none (only linux_x86_64)")
            ))
            .into());
        }
    };
    Ok(Tagging {
        tag,
        proven,
        excluded: analysis.excluded.into_iter().collect(),
        versioned_symbols: analysis.versioned,
    })
}

/// The undefined dynamic symbols of an ELF file (`.dynsym` entries with `SHN_UNDEF`), as
/// auditwheel's `get_undefined_symbols` reads them.
pub(crate) fn undefined_symbols(data: &[u8]) -> BTreeSet<String> {
    use object::{Object, ObjectSymbol};
    let Ok(file) = object::File::parse(data) else {
        return BTreeSet::new();
    };
    file.dynamic_symbols()
        .filter(|s| s.is_undefined())
        .filter_map(|s| s.name().ok().filter(|n| !n.is_empty()).map(str::to_string))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::binary::BinaryFormat;

    fn elf(path: &str, imports: &[&str], needs: &[(&str, &[&str])], undefined: &[&str]) -> Elf {
        Elf {
            path: path.into(),
            info: BinaryInfo {
                format: BinaryFormat::Elf,
                machine: "x86_64".into(),
                subsystem: None,
                is_dll: true,
                imports: imports.iter().map(|s| s.to_string()).collect(),
                delay_imports: vec![],
                soname: None,
                rpath: vec![],
                runpath: vec![],
                version_needs: needs
                    .iter()
                    .map(|(l, v)| (l.to_string(), v.iter().map(|s| s.to_string()).collect()))
                    .collect(),
            },
            undefined: undefined.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn the_policy_data_is_auditwheels_and_ordered() {
        let names: Vec<&str> = policies().iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names[0], "manylinux_2_5");
        assert!(names.contains(&"manylinux_2_28"));
        assert_eq!(policy("manylinux_2_17").unwrap().aliases, ["manylinux2014"]);
        assert!(policy("manylinux_2_28").unwrap().aliases.is_empty());
    }

    #[test]
    fn the_newest_glibc_and_libstdcxx_versions_decide() {
        let wheel = [
            elf(
                "ctranslate2/_ext.so",
                &[
                    "libctranslate2.so.4",
                    "libstdc++.so.6",
                    "libc.so.6",
                    "ld-linux-x86-64.so.2",
                ],
                &[
                    ("libc.so.6", &["GLIBC_2.2.5", "GLIBC_2.14"]),
                    ("libstdc++.so.6", &["GLIBCXX_3.4.21", "CXXABI_1.3.9"]),
                    ("ld-linux-x86-64.so.2", &["GLIBC_2.99"]),
                ],
                &["memcpy"],
            ),
            elf(
                "ctranslate2/libctranslate2.so.4",
                &["libgomp.so.1", "libm.so.6"],
                &[("libm.so.6", &["GLIBC_2.27"])],
                &[],
            ),
            elf(
                "ctranslate2/libgomp.so.1",
                &["libc.so.6"],
                &[("libc.so.6", &["GLIBC_2.17"])],
                &[],
            ),
        ];
        let a = analyze(&wheel, &|_| false);
        assert_eq!(a.symbol_policy.policy, Some("manylinux_2_27"));
        assert!(
            a.symbol_policy
                .because
                .as_deref()
                .unwrap()
                .contains("GLIBC_2.27"),
            "{:?}",
            a.symbol_policy
        );
        assert_eq!(a.library_policy.policy, Some("manylinux_2_5"));
        assert_eq!(a.proven().unwrap().name, "manylinux_2_27");
        assert_eq!(a.check("manylinux_2_28"), Ok(()));
        assert!(
            a.check("manylinux_2_24")
                .unwrap_err()
                .contains("GLIBC_2.27")
        );
    }

    #[test]
    fn an_unlisted_library_or_a_newer_libstdcxx_is_refused() {
        let wheel = [elf(
            "pkg/_ext.so",
            &["libcublas.so.12", "libstdc++.so.6", "libcuda.so.1"],
            &[("libstdc++.so.6", &["GLIBCXX_3.4.30"])],
            &[],
        )];
        let a = analyze(&wheel, &|lib| lib == "libcuda.so.1");
        assert_eq!(a.library_policy.policy, None);
        assert!(a.excluded.contains("libcuda.so.1"));
        let why = a.check("manylinux_2_28").unwrap_err();
        assert!(why.contains("pkg/_ext.so needs libcublas.so.12"), "{why}");
        assert!(why.contains("GLIBCXX_3.4.30"), "{why}");
        assert!(a.proven().is_none());
    }

    #[test]
    fn blacklisted_symbols_of_a_needed_library_lower_the_tag() {
        let banned = policy("manylinux_2_28").unwrap().blacklist["libz.so.1"]
            .iter()
            .next()
            .unwrap()
            .clone();
        let wheel = [elf("pkg/_z.so", &["libz.so.1"], &[], &[&banned])];
        let a = analyze(&wheel, &|_| false);
        assert!(a.check("manylinux_2_28").unwrap_err().contains(&banned));
    }
}
