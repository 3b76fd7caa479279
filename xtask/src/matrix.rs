//! The GitHub Actions build matrix: one entry per variant × platform × Python, as the
//! `include` list that `strategy.matrix` takes through `fromJSON`.

use serde::Serialize;

use crate::diagnostic::InputError;
use crate::platform::Platform;
use crate::variant::{Catalog, Choices};

#[derive(Debug, Clone, Serialize)]
pub struct Matrix {
    pub include: Vec<Entry>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    /// A readable job name, e.g. `rocm windows-x86_64 py3.12`.
    pub name: String,
    pub variant: String,
    pub platform: Platform,
    pub python: String,
    /// A hosted runner's name, or a self-hosted runner's labels (see [`runs_on`]).
    #[serde(rename = "runs-on")]
    pub runs_on: serde_json::Value,
    /// Whether the job needs the compiler cache (source builds) or not (repackaging).
    pub compiles: bool,
}

/// Hosted runners have no HIP SDK, and AMD's HIP SDK installer cannot be fetched from where
/// CI may download (nor does a gfx1010 rocBLAS come with it): a source build against a HIP
/// SDK runs on a self-hosted runner labelled with the SDK it has, e.g. `hip-sdk-6.2`.
fn runs_on(resolved: &crate::variant::Resolved, platform: Platform) -> serde_json::Value {
    match (&resolved.build, &resolved.sdk) {
        (crate::variant::Build::FromSource(_), Some(sdk))
            if sdk.kind == crate::variant::SdkKind::Hip =>
        {
            let os = if platform.is_windows() {
                "windows"
            } else {
                "linux"
            };
            serde_json::json!(["self-hosted", os, "x64", format!("hip-sdk-{}", sdk.version)])
        }
        _ => serde_json::Value::from(platform.runner()),
    }
}

pub fn matrix(catalog: &Catalog) -> Result<Matrix, InputError> {
    let mut include = Vec::new();
    for name in catalog.variant_names() {
        for platform in Platform::ALL {
            let choices = Choices {
                platform: Some(platform),
                ..Choices::default()
            };
            let Some(pythons) = catalog.pythons_for(name, platform)? else {
                continue;
            };
            for python in pythons {
                let resolved = catalog.resolve(
                    name,
                    &Choices {
                        python: Some(python.clone()),
                        ..choices.clone()
                    },
                )?;
                include.push(Entry {
                    name: format!("{name} {platform} py{python}"),
                    variant: name.to_string(),
                    platform,
                    python,
                    runs_on: runs_on(&resolved, platform),
                    compiles: matches!(resolved.build, crate::variant::Build::FromSource(_)),
                });
            }
        }
    }
    Ok(Matrix { include })
}
