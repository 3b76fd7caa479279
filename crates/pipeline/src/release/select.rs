//! Which builds a release takes: the matrix entries asked for by variant, platform and
//! Python, each with its plan and the folder its artifacts are in.

use std::collections::BTreeSet;
use std::path::PathBuf;

use anyhow::Result;

use super::Built;
use crate::plan::{self, matrix};
use crate::variant::{Catalog, Choices};
use ct2v_support::diagnostic::{InputError, escaped};
use ct2v_support::platform::Platform;
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

/// The artifact name prefix under which CI uploads an entry whose check failed (its build and
/// logs, to look at): never released.
pub const FAILED_PREFIX: &str = "failed-";

/// What `release` was asked for; an empty list means all.
pub struct Asked {
    pub variants: Vec<String>,
    pub platforms: Vec<Platform>,
    pub pythons: Vec<String>,
    pub ctranslate2: Option<String>,
    /// Downloaded CI artifacts: each entry's files are in `from/<artifact>/`.
    pub from: Option<PathBuf>,
    pub include: matrix::Opt,
}

impl Asked {
    fn wants(&self, e: &matrix::Entry) -> bool {
        (self.variants.is_empty() || self.variants.contains(&e.variant))
            && (self.platforms.is_empty() || self.platforms.contains(&e.platform))
            && (self.pythons.is_empty() || self.pythons.contains(&e.python))
    }
}

/// The builds of the entries asked for, in matrix order. Entries that are asked for but left
/// out of the matrix (not built) are said through `reporter`; an unknown variant or a Python
/// no variant builds for is bad input.
pub fn builds(workspace: &Workspace, asked: &Asked, reporter: &Reporter) -> Result<Vec<Built>> {
    let catalog = Catalog::load_for(&workspace.root, &[], asked.ctranslate2.as_deref())?;
    let names: Vec<&str> = catalog.variant_names().collect();
    for v in &asked.variants {
        if !names.contains(&v.as_str()) {
            return Err(
                InputError::new(format!("--variants: unknown variant `{v}`"))
                    .allowed(v, &names)
                    .into(),
            );
        }
    }
    let versions: Vec<String> = asked.ctranslate2.iter().cloned().collect();
    let every = matrix::matrix(&workspace.root, &versions, reporter)?.include;
    // Said only for what was asked for: a release of one variant does not list the others.
    let asked_for: Vec<matrix::Entry> = every.iter().filter(|e| asked.wants(e)).cloned().collect();
    let (_, left_out) = matrix::select(asked_for, asked.include);
    for line in &left_out {
        reporter.say(format_args!(
            "note: not in this release (not built): {}",
            escaped(line)
        ));
    }
    let (all, _) = matrix::select(every, asked.include);
    check_pythons(&asked.pythons, &all)?;
    let mut built = Vec::new();
    for entry in all.into_iter().filter(|e| asked.wants(e)) {
        let choices = Choices {
            platform: Some(entry.platform),
            python: Some(entry.python.clone()),
            ..Choices::default()
        };
        let plan = plan::plan(workspace, &catalog.resolve(&entry.variant, &choices)?);
        let dist = match &asked.from {
            Some(dir) => dir.join(&entry.artifact),
            None => PathBuf::from(&plan.outputs.dir),
        };
        let failed_check = asked
            .from
            .as_ref()
            .map(|dir| dir.join(format!("{FAILED_PREFIX}{}", entry.artifact)))
            .filter(|dir| dir.is_dir());
        built.push(Built {
            plan,
            dist,
            job: entry.name.clone(),
            artifact: entry.artifact.clone(),
            failed_check,
        });
    }
    Ok(built)
}

fn check_pythons(pythons: &[String], all: &[matrix::Entry]) -> Result<()> {
    for p in pythons {
        if !all.iter().any(|e| &e.python == p) {
            let known: BTreeSet<&str> = all.iter().map(|e| e.python.as_str()).collect();
            let known: Vec<&str> = known.into_iter().collect();
            return Err(
                InputError::new(format!("--pythons: no variant builds for Python {p}"))
                    .allowed(p, &known)
                    .into(),
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_asked_for_but_not_built_are_said_and_not_taken() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let workspace = Workspace::locate(Some(root.into()), None).unwrap();
        let every = matrix::matrix(&workspace.root, &[], &Reporter::captured())
            .unwrap()
            .include;
        let (_, left_out) = matrix::select(every.clone(), matrix::Opt::default());
        let skipped = every
            .iter()
            .find(|e| {
                left_out
                    .iter()
                    .any(|l| l.starts_with(&format!("{}: ", e.name)))
            })
            .expect("the variants leave some entry out of the default matrix");
        let asked = Asked {
            variants: vec![skipped.variant.clone()],
            platforms: vec![skipped.platform],
            pythons: vec![skipped.python.clone()],
            ctranslate2: None,
            from: None,
            include: matrix::Opt::default(),
        };
        let reporter = Reporter::captured();
        let built = builds(&workspace, &asked, &reporter).unwrap();
        assert!(
            built.is_empty(),
            "{:?}",
            built.iter().map(|b| &b.job).collect::<Vec<_>>()
        );
        let said = reporter.said();
        assert!(said.out.is_empty(), "{said:?}");
        assert!(
            said.err.contains(&format!(
                "note: not in this release (not built): {}: ",
                skipped.name
            )),
            "{said:?}"
        );
    }
}
