//! The libraries the operating system provides, which are never bundled. The lists are the
//! reviewed data files in `xtask/policy/`, as auditwheel and delvewheel keep theirs.

use std::collections::BTreeSet;

use crate::variant::Policy;

#[derive(Debug, Clone)]
pub struct SystemLibraries {
    exact: BTreeSet<String>,
    prefixes: Vec<String>,
    ignore_case: bool,
}

impl SystemLibraries {
    pub fn for_policy(policy: Policy) -> SystemLibraries {
        match policy {
            Policy::Windows => Self::parse(include_str!("../../policy/windows.txt"), true),
            Policy::Manylinux2_28 => {
                Self::parse(include_str!("../../policy/manylinux_2_28.txt"), false)
            }
        }
    }

    /// One name per line; `#` comments; a trailing `*` makes a prefix pattern.
    pub fn parse(text: &str, ignore_case: bool) -> SystemLibraries {
        let mut libraries = SystemLibraries {
            exact: BTreeSet::new(),
            prefixes: Vec::new(),
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

    /// Adds file-name patterns (`name` or `prefix*`) of libraries the target system is
    /// expected to provide, e.g. the VC++ runtime a maintainer requires users to install.
    pub fn assume(&mut self, patterns: &[String]) {
        for pattern in patterns {
            self.add(pattern);
        }
    }

    fn add(&mut self, pattern: &str) {
        let key = self.key(pattern);
        match key.strip_suffix('*') {
            Some(prefix) => self.prefixes.push(prefix.to_string()),
            None => {
                self.exact.insert(key);
            }
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
        self.exact.contains(&key) || self.prefixes.iter().any(|p| key.starts_with(p))
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
        assert!(system.contains("VCRUNTIME140.dll"));
        assert!(!system.contains("msvcp140.dll"));
        assert!(!system.contains("amdhip64_7.dll"));
        assert!(!system.contains("libiomp5md.dll"));
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
