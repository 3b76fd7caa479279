//! `bump`: a new CTranslate2 version added: its data file, pins, patch check, upstream facts.

use std::process::ExitCode;

use anyhow::Result;

use crate::commands::pin::PinRequest;
use crate::version_file::{self, Bumped, NewVersion};
use ct2v_fetch::download::Options;
use ct2v_pipeline::commands::patch::check_or_apply;
use ct2v_pipeline::plan::{self, request::PlanRequest};
use ct2v_pipeline::variant::Catalog;
use ct2v_support::platform::Platform;
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

/// What `bump` is asked: the new version's file and where its source comes from, and whether
/// to pin and check it here.
#[derive(Debug, Clone)]
pub struct BumpRequest {
    pub new: NewVersion,
    /// Write the files only: no downloads, no patch check.
    pub no_pin: bool,
    pub download: Options,
}

impl BumpRequest {
    /// The version file written, then (unless `no_pin`) every variant's inputs pinned and
    /// patch series checked, the upstream facts compared, and what is left to do by hand
    /// listed (exit 1 when anything is).
    pub fn run(&self, workspace: &Workspace, reporter: &Reporter) -> Result<ExitCode> {
        let version = self.new.version.as_str();
        let mut bumped = version_file::write_new(&workspace.root, &self.new, &self.download)?;
        say_written(&bumped, reporter)?;
        if self.no_pin {
            bumped.by_hand.push(format!(
                "pin the inputs: `cargo xtask pin --variant V --ctranslate2 {version}` for each variant"
            ));
        } else {
            bumped
                .by_hand
                .extend(self.pin_variants(workspace, reporter)?);
            bumped
                .by_hand
                .extend(self.check_patches(workspace, reporter)?);
        }
        bumped
            .by_hand
            .extend(self.facts_table(workspace, reporter)?);
        if bumped.by_hand.is_empty() {
            reporter.outln(format_args!(
                "CTranslate2 {version} is ready: `cargo xtask build --variant cpu --ctranslate2 {version}`"
            ))?;
            return Ok(ExitCode::SUCCESS);
        }
        reporter.outln("left to do by hand:")?;
        for item in &bumped.by_hand {
            reporter.outln(format_args!("  - {item}"))?;
        }
        Ok(ExitCode::FAILURE)
    }

    /// `pin` for every variant that has a source at the new version; what is left by hand.
    fn pin_variants(&self, workspace: &Workspace, reporter: &Reporter) -> Result<Vec<String>> {
        let version = self.new.version.as_str();
        let mut by_hand = Vec::new();
        for variant in Catalog::names(&workspace.root)? {
            let catalog = Catalog::load_for(&workspace.root, &[variant.as_str()], Some(version))?;
            if Platform::ALL
                .iter()
                .all(|p| !catalog.has_source(&variant, *p))
            {
                by_hand.push(format!(
                    "{variant}: no source for CTranslate2 {version} yet"
                ));
                continue;
            }
            reporter.outln(format_args!("== pin {variant}"))?;
            let pin = PinRequest {
                variant: variant.clone(),
                ctranslate2: Some(version.to_string()),
                download: self.download.clone(),
            };
            if pin.run(workspace, reporter)? != ExitCode::SUCCESS {
                by_hand.push(format!(
                    "{variant}: some inputs could not be downloaded from here (above); pin them \
                     where a network reaches them: `cargo xtask pin --variant {variant} --ctranslate2 {version}`"
                ));
            }
        }
        Ok(by_hand)
    }

    /// `patch --check` for every variant whose plan at the new version patches the source;
    /// what is left by hand.
    fn check_patches(&self, workspace: &Workspace, reporter: &Reporter) -> Result<Vec<String>> {
        let version = self.new.version.as_str();
        let mut by_hand = Vec::new();
        for variant in Catalog::names(&workspace.root)? {
            let request = PlanRequest {
                ctranslate2: Some(version.to_string()),
                ..PlanRequest::only(variant.clone())
            };
            let Ok(plan) = request.plan(workspace, reporter) else {
                continue;
            };
            if plan
                .step(|a| matches!(a, plan::Action::Patch { .. }))
                .is_none()
            {
                continue;
            }
            reporter.outln(format_args!("== patch --check {variant}"))?;
            if let Err(e) = check_or_apply(workspace, &plan, true, None, &self.download, reporter) {
                reporter.say(format_args!("error: {e:#}"));
                by_hand.push(format!(
                    "{variant}: the patch series does not apply to {version} (above): refresh it \
                     in patches/ctranslate2-{version}/ and run `cargo xtask patch --check --variant \
                     {variant} --ctranslate2 {version}`"
                ));
            }
        }
        Ok(by_hand)
    }

    /// The facts the new version's own tree declares, where each came from, what could not be
    /// read, and how ours compare: read from its pinned source (from the cache with
    /// `--no-pin`); what is left by hand, if anything.
    fn facts_table(&self, workspace: &Workspace, reporter: &Reporter) -> Result<Option<String>> {
        let version = self.new.version.as_str();
        let cache = ct2v_fetch::cache::Cache::new(&workspace.cache_dir);
        let mut options = self.download.clone();
        options.offline |= self.no_pin;
        reporter.outln(format_args!("== upstream facts of CTranslate2 {version}"))?;
        match crate::upstream::report_for_new_version(&workspace.root, &cache, &options, version) {
            Ok(report) => {
                reporter.out(report.table())?;
                Ok((!report.passes()).then(|| {
                    format!(
                        "our data differs from what CTranslate2 {version} declares (above): fix it or \
                         accept it with a reason, then `cargo xtask upstream --check --ctranslate2 {version}`"
                    )
                }))
            }
            Err(e) => {
                reporter.outln(format_args!("could not read the facts: {e:#}"))?;
                Ok(Some(format!(
                    "read its facts once its source is pinned: `cargo xtask upstream --check --ctranslate2 {version}`"
                )))
            }
        }
    }
}

/// What writing the version file did: the file, the series copied, the source read, the URLs
/// left to pin, and the notes.
fn say_written(bumped: &Bumped, reporter: &Reporter) -> Result<()> {
    reporter.outln(format_args!(
        "wrote {} (from {})",
        bumped.file.display(),
        bumped.from
    ))?;
    for (from, to) in &bumped.series {
        reporter.outln(format_args!(
            "copied {} to {}",
            from.display(),
            to.display()
        ))?;
    }
    if let Some(tag) = &bumped.tag {
        reporter.outln(format_args!(
            "source: {} at {} ({}), {} submodule(s)",
            tag.url,
            tag.tag,
            tag.commit,
            tag.submodules.len()
        ))?;
    }
    for url in &bumped.renamed {
        reporter.outln(format_args!("renamed, to pin: {url}"))?;
    }
    for note in &bumped.notes {
        reporter.outln(format_args!("note: {note}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn what_was_written_is_said_on_stdout_in_order() {
        let reporter = Reporter::captured();
        let bumped = Bumped {
            from: "4.8.4".into(),
            file: PathBuf::from("variants/ctranslate2/4.8.5.toml"),
            series: vec![(
                PathBuf::from("patches/ctranslate2-4.8.4"),
                PathBuf::from("patches/ctranslate2-4.8.5"),
            )],
            renamed: vec!["https://x/v4.8.5/a.zip".into()],
            notes: vec!["read the comments".into()],
            ..Bumped::default()
        };
        say_written(&bumped, &reporter).unwrap();
        let said = reporter.said();
        assert_eq!(
            said.out,
            "wrote variants/ctranslate2/4.8.5.toml (from 4.8.4)\n\
             copied patches/ctranslate2-4.8.4 to patches/ctranslate2-4.8.5\n\
             renamed, to pin: https://x/v4.8.5/a.zip\n\
             note: read the comments\n"
        );
        assert_eq!(said.err, "");
    }
}
