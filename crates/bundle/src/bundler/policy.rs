//! The libraries the operating system provides, which are never bundled. One source per
//! platform:
//!
//! - manylinux_2_28: the policy's `lib_whitelist` in auditwheel's policy file
//!   (`crates/bundle/policy/manylinux-x86_64.json`, pypa/auditwheel
//!   `src/auditwheel/policy/manylinux-policy.json` reduced to x86_64; read by
//!   [`super::manylinux`]), the ELF interpreter ([`super::manylinux::LOADERS`]), and the GPU
//!   drivers ([`GPU_DRIVERS`]);
//! - Windows: `crates/bundle/policy/windows.txt` (API sets, KnownDLLs, system32, as delvewheel keeps
//!   its list) and the GPU drivers.

use std::collections::BTreeSet;

use serde::Deserialize;

/// The user-mode libraries of the GPU drivers, by platform (Linux, Windows): no system list
/// names them (auditwheel's and delvewheel's do not), yet a bundle must never copy them. They
/// are installed with the kernel driver and must match its version, so a copy in a wheel
/// breaks on every machine with another driver; NVIDIA's container toolkit mounts the same
/// libraries from the host for that reason (NVIDIA/libnvidia-container `src/nvc_info.c`,
/// `compute_libs` and `utility_libs`). The names are the CUDA driver API and NVML, the ones
/// CTranslate2's CUDA binaries import. ROCm needs none here: its user-mode runtime (HIP) ships
/// in the SDK and is bundled.
pub(crate) const GPU_DRIVERS: [(&str, &str); 2] = [
    ("libcuda.so.1", "nvcuda.dll"),
    ("libnvidia-ml.so.1", "nvml.dll"),
];

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
                let mut libraries = Self::parse(include_str!("../../policy/windows.txt"), true);
                libraries.assume(GPU_DRIVERS.map(|(_, windows)| windows));
                libraries
            }
            Policy::Manylinux2_28 => {
                let name = super::manylinux::target(policy).unwrap_or_default();
                let manylinux = super::manylinux::policy(name)
                    .expect("auditwheel's policy file has every manylinux policy a variant names");
                let mut libraries = Self::empty(false);
                libraries.assume(manylinux.libraries());
                libraries.assume(super::manylinux::LOADERS);
                libraries.assume(GPU_DRIVERS.map(|(linux, _)| linux));
                libraries
            }
        }
    }

    fn empty(ignore_case: bool) -> SystemLibraries {
        SystemLibraries {
            exact: BTreeSet::new(),
            patterns: Vec::new(),
            ignore_case,
        }
    }

    /// One name or file-name glob per line; `#` comments.
    pub fn parse(text: &str, ignore_case: bool) -> SystemLibraries {
        let mut libraries = Self::empty(ignore_case);
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
    pub fn assume<S: AsRef<str>>(&mut self, patterns: impl IntoIterator<Item = S>) {
        for pattern in patterns {
            self.add(pattern.as_ref());
        }
    }

    /// Every name and pattern, sorted (lower-cased where case is ignored).
    pub fn entries(&self) -> Vec<&str> {
        let mut entries: Vec<&str> = self.exact.iter().map(String::as_str).collect();
        entries.extend(self.patterns.iter().map(String::as_str));
        entries.sort_unstable();
        entries
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
        system.assume(["msvcp140*.dll", "vcruntime140?.dll"]);
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

    /// What a manylinux_2_28 bundle keeps out, pinned: auditwheel's manylinux_2_28 list, the
    /// ELF interpreter and the GPU drivers. libcrypt.so.1 is not on it: auditwheel took it off
    /// every policy (pypa/auditwheel#182) because distributions ship libxcrypt's libcrypt.so.2
    /// instead, so a wheel that needs it carries it.
    #[test]
    fn manylinux_2_28_keeps_out_exactly_auditwheels_list_the_loader_and_the_gpu_drivers() {
        let system = SystemLibraries::for_policy(Policy::Manylinux2_28);
        assert_eq!(
            system.entries(),
            [
                "*ld-linux*",
                "ld64.so.1",
                "ld64.so.2",
                "libGL.so.1",
                "libICE.so.6",
                "libSM.so.6",
                "libX11.so.6",
                "libXext.so.6",
                "libXrender.so.1",
                "libanl.so.1",
                "libatomic.so.1",
                "libc.so.6",
                "libcuda.so.1",
                "libdl.so.2",
                "libexpat.so.1",
                "libgcc_s.so.1",
                "libglib-2.0.so.0",
                "libgobject-2.0.so.0",
                "libgthread-2.0.so.0",
                "libm.so.6",
                "libmvec.so.1",
                "libnsl.so.1",
                "libnvidia-ml.so.1",
                "libpthread.so.0",
                "libresolv.so.2",
                "librt.so.1",
                "libstdc++.so.6",
                "libutil.so.1",
                "libz.so.1",
            ]
        );
        assert!(system.contains("ld-linux-x86-64.so.2"));
        assert!(!system.contains("libcrypt.so.1"));
    }

    #[test]
    fn the_gpu_drivers_are_never_bundled_on_either_platform() {
        let linux = SystemLibraries::for_policy(Policy::Manylinux2_28);
        let windows = SystemLibraries::for_policy(Policy::Windows);
        for (so, dll) in GPU_DRIVERS {
            assert!(linux.contains(so), "{so}");
            assert!(windows.contains(dll), "{dll}");
        }
        assert!(windows.contains("NVCUDA.DLL"));
    }
}
