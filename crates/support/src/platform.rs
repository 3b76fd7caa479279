//! The platforms a variant can be built for, and what differs between them.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Platform {
    #[serde(rename = "linux-x86_64")]
    LinuxX86_64,
    #[serde(rename = "windows-x86_64")]
    WindowsX86_64,
}

impl Platform {
    pub const ALL: [Platform; 2] = [Platform::LinuxX86_64, Platform::WindowsX86_64];

    pub fn name(self) -> &'static str {
        match self {
            Platform::LinuxX86_64 => "linux-x86_64",
            Platform::WindowsX86_64 => "windows-x86_64",
        }
    }

    pub fn names() -> Vec<&'static str> {
        Self::ALL.iter().map(|p| p.name()).collect()
    }

    /// The platform this tool is running on, if it is one we build for.
    pub fn host() -> Option<Platform> {
        match (std::env::consts::OS, std::env::consts::ARCH) {
            ("linux", "x86_64") => Some(Platform::LinuxX86_64),
            ("windows", "x86_64") => Some(Platform::WindowsX86_64),
            _ => None,
        }
    }

    pub fn is_windows(self) -> bool {
        self == Platform::WindowsX86_64
    }

    /// The GitHub Actions runner image a matrix job for this platform runs on.
    pub fn runner(self) -> &'static str {
        match self {
            Platform::LinuxX86_64 => "ubuntu-24.04",
            Platform::WindowsX86_64 => "windows-2022",
        }
    }

    /// Where a virtual environment keeps its interpreter and scripts.
    pub fn venv_bin(self) -> &'static str {
        if self.is_windows() { "Scripts" } else { "bin" }
    }

    pub fn exe(self, name: &str) -> String {
        if self.is_windows() {
            format!("{name}.exe")
        } else {
            name.to_string()
        }
    }

    /// How a base interpreter of a given version is started on this platform.
    pub fn python_launcher(self, version: &str) -> Vec<String> {
        if self.is_windows() {
            vec!["py".into(), format!("-{version}")]
        } else {
            vec![format!("python{version}")]
        }
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Platform {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| format!("unknown platform `{s}`"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for p in Platform::ALL {
            assert_eq!(p.name().parse::<Platform>(), Ok(p));
        }
        assert!("linux".parse::<Platform>().is_err());
    }
}
