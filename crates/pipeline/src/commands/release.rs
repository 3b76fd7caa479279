//! `release`: the built artifacts of the matrix gathered into a release folder with checksums.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use crate::release::{select, wheel_index};
use crate::variant::{Catalog, coverage};
use ct2v_support::diagnostic::escaped;
use ct2v_support::out_folder;
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

/// A release as `cargo xtask release` asks for it.
pub struct ReleaseRequest {
    /// Which matrix entries, and where their artifacts are.
    pub asked: select::Asked,
    /// The release's version (default: the CTranslate2 version).
    pub version: Option<String>,
    /// The release folder (default: target/dist/<version>).
    pub out: Option<PathBuf>,
    pub allow_linux_tag: bool,
    pub index_base_url: Option<String>,
    pub partial: bool,
}

impl ReleaseRequest {
    pub fn run(self, workspace: &Workspace, reporter: &Reporter) -> Result<ExitCode> {
        if let Some(out) = &self.out {
            crate::release::check_dest(out)?;
        }
        if let Some(from) = &self.asked.from {
            out_folder::check_in("--from", from)?;
        }
        let catalog = Catalog::load_for(&workspace.root, &[], self.asked.ctranslate2.as_deref())?;
        let built = select::builds(workspace, &self.asked, reporter)?;
        let mut released: Vec<&str> = built.iter().map(|b| b.plan.variant.as_str()).collect();
        released.dedup();
        let coverage = coverage::of_variants(&catalog, &released)?;
        let Some(first) = built.first() else {
            anyhow::bail!("no matrix entry matches the --variants/--platforms/--pythons given");
        };
        let version = self
            .version
            .unwrap_or_else(|| first.plan.ctranslate2.clone());
        let out = self
            .out
            .unwrap_or_else(|| workspace.root.join("target").join("dist").join(&version));
        let manifest = crate::release::release(
            &built,
            &version,
            &out,
            &crate::release::ReleaseOptions {
                allow_linux_tag: self.allow_linux_tag,
                index_base_url: self.index_base_url.as_deref(),
                partial: self.partial,
            },
            &coverage,
            reporter,
        )?;
        for a in &manifest.artifacts {
            reporter.outln(format_args!("{}  {}", a.sha256, a.path))?;
        }
        reporter.say(format_args!(
            "released {} artifact(s) of {} build(s) into {} (publish its files; host {}/ for pip: \
             pip install --extra-index-url <where>/{}/<variant> \"ctranslate2==<version>+<local>\"; \
             check it with `cargo xtask verify-release {} --install`)",
            manifest.artifacts.len(),
            built.len(),
            escaped(&out.display().to_string()),
            wheel_index::DIR,
            wheel_index::DIR,
            escaped(&out.display().to_string())
        ));
        Ok(ExitCode::SUCCESS)
    }
}
