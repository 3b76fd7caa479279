//! The libraries the operating system provides, which are never bundled. The lists are the
//! reviewed data files in `xtask/policy/`, as auditwheel and delvewheel keep theirs.

use std::collections::BTreeSet;

use serde::Deserialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
pub enum Policy {
    /// Windows: API sets, KnownDLLs and system32 are never bundled.
    #[serde(rename = "windows")]
    Windows,
    /// Linux: the manylinux_2_28 list of libraries every system provides.
    #[serde(rename = "manylinux_2_28")]
    Manylinux2_28,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Output {
    /// The input wheel with the libraries inside and RECORD rewritten.
    FatWheel,
    /// A PyInstaller-style `_internal/` folder and a `binaries` list for a `.spec`.
    Portable,
    /// Which file came from which package, sizes, sha256, who needs it.
    Report,
}

impl Output {
    pub const ALL: [Output; 3] = [Output::FatWheel, Output::Portable, Output::Report];
}

#[derive(Debug, Clone)]
pub struct SystemLibraries {
    exact: BTreeSet<String>,
    /// Patterns with `*` or `?` (see `glob.rs`), lower-cased where case is ignored.
    patterns: Vec<String>,
    ignore_case: bool,
}

impl SystemLibraries {
    pub fn for_policy(policy: Policy) -> SystemLibraries {
        match policy {
            Policy::Windows => {
                Self::parse(include_str!("../../../../xtask/policy/windows.txt"), true)
            }
            Policy::Manylinux2_28 => Self::parse(
                include_str!("../../../../xtask/policy/manylinux_2_28.txt"),
                false,
            ),
        }
    }

    /// One name or file-name glob per line; `#` comments.
    pub fn parse(text: &str, ignore_case: bool) -> SystemLibraries {
        let mut libraries = SystemLibraries {
            exact: BTreeSet::new(),
            patterns: Vec::new(),
            ignore_case,
        };
        for line in text.lines() {
            let entry = line.split('#').next().unwrap_or("").trim();
            if !entry.is_empty() {
                libraries.add(entry);
            }
        }
        libraries
    }

    /// Adds file-name globs (`name`, `msvcp140*.dll`, `libfoo.so.?`) of libraries the target system is
    /// expected to provide, e.g. the VC++ runtime a maintainer requires users to install.
    pub fn assume(&mut self, patterns: &[String]) {
        for pattern in patterns {
            self.add(pattern);
        }
    }

    fn add(&mut self, pattern: &str) {
        let key = self.key(pattern);
        if key.contains(['*', '?']) {
            self.patterns.push(key);
        } else {
            self.exact.insert(key);
        }
    }

    pub fn key(&self, name: &str) -> String {
        if self.ignore_case {
            name.to_lowercase()
        } else {
            name.to_string()
        }
    }

    pub fn ignore_case(&self) -> bool {
        self.ignore_case
    }

    pub fn contains(&self, name: &str) -> bool {
        let key = self.key(name);
        self.exact.contains(&key) || self.patterns.iter().any(|p| super::glob::matches(p, &key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_matches_api_sets_known_dlls_and_ignores_case() {
        let system = SystemLibraries::for_policy(Policy::Windows);
        assert!(system.contains("KERNEL32.dll"));
        assert!(system.contains("api-ms-win-crt-runtime-l1-1-0.dll"));
        assert!(system.contains("EXT-MS-WIN-foo.dll"));
        // The VC++ runtime is bundled from the pinned msvc-runtime wheel, never assumed.
        for name in [
            "VCRUNTIME140.dll",
            "vcruntime140_1.dll",
            "MSVCP140.dll",
            "concrt140.dll",
        ] {
            assert!(!system.contains(name), "{name}");
        }
        assert!(!system.contains("amdhip64_7.dll"));
        assert!(!system.contains("libiomp5md.dll"));
    }

    #[test]
    fn assumed_present_patterns_are_real_globs() {
        let mut system = SystemLibraries::for_policy(Policy::Windows);
        system.assume(&["msvcp140*.dll".into(), "vcruntime140?.dll".into()]);
        assert!(system.contains("MSVCP140.dll"));
        assert!(system.contains("msvcp140_2.dll"));
        assert!(
            !system.contains("msvcp140.pdb"),
            "the suffix after * counts"
        );
        assert!(!system.contains("VCRUNTIME140.dll"), "? is one character");
        assert!(system.contains("vcruntime1401.dll"));
    }

    #[test]
    fn manylinux_keeps_glibc_and_the_compiler_runtime_but_not_openmp() {
        let system = SystemLibraries::for_policy(Policy::Manylinux2_28);
        for lib in [
            "libc.so.6",
            "libm.so.6",
            "libstdc++.so.6",
            "libgcc_s.so.1",
            "libpthread.so.0",
        ] {
            assert!(system.contains(lib), "{lib}");
        }
        assert!(!system.contains("libgomp.so.1"));
        assert!(!system.contains("LIBC.so.6"), "case matters on Linux");
    }
}
