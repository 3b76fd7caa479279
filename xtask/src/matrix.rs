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
    #[serde(rename = "runs-on")]
    pub runs_on: String,
    /// Whether the job needs the compiler cache (source builds) or not (repackaging).
    pub compiles: bool,
}

pub fn matrix(catalog: &Catalog) -> Result<Matrix, InputError> {
    let mut include = Vec::new();
    for name in catalog.variant_names() {
        let mut listed = false;
        for platform in Platform::ALL {
            listed |= catalog.pythons_for(name, platform)?.is_some();
        }
        if !listed {
            return Err(InputError::new(format!(
                "variant `{name}` lists no platform, so the matrix would drop it silently"
            ))
            .allowed("", &Platform::names())
            .note(format!("set `platforms` in variants/{name}.toml")));
        }
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
                    runs_on: platform.runner().to_string(),
                    compiles: matches!(resolved.build, crate::variant::Build::FromSource(_)),
                });
            }
        }
    }
    Ok(Matrix { include })
}
