//! What CTranslate2's tree declares, as values with the file and lines they were read from,
//! and the facts that could not be read, with why.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

/// The facts read, by name as the table prints them and `[upstream.accepted]` keys them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub(crate) enum FactKind {
    /// `pybind11==X` in `install_requirements.txt` and `pyproject.toml`.
    #[serde(rename = "pybind11")]
    Pybind11,
    /// `ONEDNN_VERSION=`, as the oneDNN download URL uses it.
    #[serde(rename = "onednn.version")]
    OnednnVersion,
    /// oneDNN's own `-DONEDNN_…`/`-DDNNL_…` options on the `cmake` line that configures it.
    #[serde(rename = "onednn.cmake")]
    OnednnCmake,
    /// The CUDA toolkit the wheels are built with.
    #[serde(rename = "cuda.version")]
    CudaVersion,
    /// The ROCm SDK wheels `pip install` puts in the Windows ROCm build's environment.
    #[serde(rename = "rocm.sdk")]
    RocmSdk,
    /// `-DCMAKE_HIP_ARCHITECTURES=`.
    #[serde(rename = "rocm.gpu-targets")]
    HipArchitectures,
    /// The folders `__init__.py` adds to the DLL search path on Windows.
    #[serde(rename = "rocm.dll-folders")]
    DllFolders,
}

impl FactKind {
    pub(crate) const ALL: [FactKind; 7] = [
        FactKind::Pybind11,
        FactKind::OnednnVersion,
        FactKind::OnednnCmake,
        FactKind::CudaVersion,
        FactKind::RocmSdk,
        FactKind::HipArchitectures,
        FactKind::DllFolders,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            FactKind::Pybind11 => "pybind11",
            FactKind::OnednnVersion => "onednn.version",
            FactKind::OnednnCmake => "onednn.cmake",
            FactKind::CudaVersion => "cuda.version",
            FactKind::RocmSdk => "rocm.sdk",
            FactKind::HipArchitectures => "rocm.gpu-targets",
            FactKind::DllFolders => "rocm.dll-folders",
        }
    }

    /// What the fact is, for "could not read <what>".
    pub(crate) fn what(self) -> &'static str {
        match self {
            FactKind::Pybind11 => "the pybind11 pin",
            FactKind::OnednnVersion => "the oneDNN version",
            FactKind::OnednnCmake => "oneDNN's CMake options",
            FactKind::CudaVersion => "the CUDA version",
            FactKind::RocmSdk => "the ROCm SDK wheels",
            FactKind::HipArchitectures => "the HIP architectures",
            FactKind::DllFolders => "the DLL folders",
        }
    }
}

impl fmt::Display for FactKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Lines of a file inside the CTranslate2 tree (`python/tools/…sh`), 1-based, inclusive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Place {
    pub file: String,
    pub first: usize,
    pub last: usize,
}

impl Place {
    pub(crate) fn line(file: &str, line: usize) -> Place {
        Place::lines(file, line, line)
    }

    pub(crate) fn lines(file: &str, first: usize, last: usize) -> Place {
        Place {
            file: file.to_string(),
            first,
            last: last.max(first),
        }
    }
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.last > self.first {
            write!(f, "{}:{}-{}", self.file, self.first, self.last)
        } else {
            write!(f, "{}:{}", self.file, self.first)
        }
    }
}

/// A Python distribution a requirement or URL names: PEP 503-normalized name, exact version,
/// and the URL when the script names the file itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Wheel {
    pub name: String,
    pub version: String,
    pub url: Option<String>,
}

/// What the Windows ROCm script installs: from an index (`--index-url`, a `rocm[…]==V`
/// requirement) or file by file (URLs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RocmSdk {
    pub index: Option<String>,
    /// The requirement as written (`rocm[libraries,devel]==10.0.0`), when there is one.
    pub requirement: Option<String>,
    /// The wheels whose DLLs the built wheel loads at run time (core, libraries).
    pub runtime: Vec<Wheel>,
    /// What only the build uses (`rocm-sdk-devel`, the `rocm` meta package).
    pub(crate) build_only: Vec<String>,
}

/// The DLL folders `__init__.py` adds, relative to site-packages (`_rocm_sdk_core/bin`,
/// globs like `_rocm_sdk_libraries*/bin`), and the fallback it uses when none exists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DllFolders {
    pub folders: Vec<String>,
    pub fallback: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "value")]
pub enum Value {
    Version(String),
    Options(BTreeMap<String, String>),
    Rocm(RocmSdk),
    List(Vec<String>),
    Folders(DllFolders),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Version(v) => f.write_str(v),
            Value::Options(options) => {
                let list: Vec<String> = options.iter().map(|(k, v)| format!("{k}={v}")).collect();
                f.write_str(&list.join(" "))
            }
            Value::Rocm(sdk) => {
                let wheels: Vec<String> = sdk
                    .runtime
                    .iter()
                    .map(|w| format!("{} {}", w.name, w.version))
                    .collect();
                match (&sdk.requirement, &sdk.index) {
                    (Some(req), Some(index)) => {
                        write!(f, "{req} from {index} (run time: {})", wheels.join(", "))
                    }
                    (Some(req), None) => write!(f, "{req} (run time: {})", wheels.join(", ")),
                    (None, _) => {
                        let urls: Vec<&str> = sdk
                            .runtime
                            .iter()
                            .filter_map(|w| w.url.as_deref())
                            .collect();
                        write!(f, "{} from {}", wheels.join(", "), common_folder(&urls))
                    }
                }
            }
            Value::List(items) => f.write_str(&items.join(";")),
            Value::Folders(dirs) => {
                f.write_str(&dirs.folders.join(", "))?;
                if let Some(fallback) = &dirs.fallback {
                    write!(f, " (else {fallback})")?;
                }
                Ok(())
            }
        }
    }
}

/// The folder URL every one of `urls` is in (`https://h/a/` for `https://h/a/x.whl` and
/// `https://h/a/y.whl`), for a short table cell.
pub(crate) fn common_folder(urls: &[&str]) -> String {
    let Some(first) = urls.first() else {
        return String::new();
    };
    let mut prefix = first
        .rsplit_once('/')
        .map_or("", |(dir, _)| dir)
        .to_string()
        + "/";
    while !urls.iter().all(|u| u.starts_with(&prefix)) && prefix.len() > 1 {
        let trimmed = prefix.trim_end_matches('/');
        prefix = trimmed
            .rsplit_once('/')
            .map_or("", |(dir, _)| dir)
            .to_string()
            + "/";
    }
    prefix
}

/// One fact read from the tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Fact {
    pub kind: FactKind,
    pub value: Value,
    pub at: Place,
}

/// A fact whose file did not have the shape the reader knows: never guessed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Unreadable {
    pub kind: FactKind,
    pub at: Place,
    pub why: String,
}

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "could not read {} ({}) in {}: {}",
            self.kind.what(),
            self.kind,
            self.at,
            self.why
        )
    }
}

/// Everything read from one tree.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct UpstreamFacts {
    pub facts: Vec<Fact>,
    pub(crate) unreadable: Vec<Unreadable>,
}

impl UpstreamFacts {
    pub(crate) fn push(&mut self, read: Result<Fact, Unreadable>) {
        match read {
            Ok(fact) => self.facts.push(fact),
            Err(e) => self.unreadable.push(e),
        }
    }

    pub(crate) fn of(&self, kind: FactKind) -> impl Iterator<Item = &Fact> {
        self.facts.iter().filter(move |f| f.kind == kind)
    }
}

pub(crate) use ct2v_fetch::wheel_name::normalize;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_normalized_as_pep_503_says() {
        assert_eq!(normalize("rocm_sdk_core"), "rocm-sdk-core");
        assert_eq!(normalize("Rocm.SDK__Libraries"), "rocm-sdk-libraries");
    }

    #[test]
    fn a_common_folder_of_urls() {
        assert_eq!(
            common_folder(&["https://h/a/b/x.whl", "https://h/a/b/y.whl"]),
            "https://h/a/b/"
        );
        assert_eq!(
            common_folder(&["https://h/a/b/x.whl", "https://h/a/c/y.whl"]),
            "https://h/a/"
        );
    }
}
