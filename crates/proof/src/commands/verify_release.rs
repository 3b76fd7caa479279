//! `verify-release`: a release folder's checksums, RECORDs and manifest; with `--install`,
//! each of its wheels installed as its users install it, from its index served on loopback.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;

use crate::checks::release::{self, PlanFor};
use crate::release_install::{InstallRequest, default_python};
use crate::winpython;
use ct2v_pipeline::plan::request::PlanRequest;
use ct2v_pipeline::release::Manifest;
use ct2v_support::diagnostic::{InputError, escaped};
use ct2v_support::platform::Platform;
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

/// `--install` and its options.
pub struct InstallOptions {
    pub install: bool,
    pub platform: Option<Platform>,
    pub python: Option<String>,
    pub variants: Vec<String>,
    pub find_links: Vec<PathBuf>,
    pub transcribe: bool,
    pub pyapp: bool,
    pub download: ct2v_fetch::download::Options,
}

/// `verify-release DIR`: exit 1 when the folder disagrees with itself.
pub fn run(
    workspace: &Workspace,
    dir: &Path,
    options: &InstallOptions,
    reporter: &Reporter,
) -> Result<ExitCode> {
    if !dir.is_dir() {
        return Err(
            InputError::new(format!("{}: no such folder", dir.display()))
                .note("give the folder `cargo xtask release` wrote, e.g. target/dist/4.7.1")
                .into(),
        );
    }
    let problems = ct2v_pipeline::release::recheck(dir)?;
    if !problems.is_empty() {
        for p in &problems {
            reporter.say(format_args!("error: {p}"));
        }
        reporter.say(format_args!(
            "{} problem(s) in {}",
            problems.len(),
            dir.display()
        ));
        return Ok(ExitCode::FAILURE);
    }
    reporter.say(format_args!(
        "{}: every checksum, RECORD and manifest entry agrees",
        dir.display()
    ));
    if let Some(note) = left_out(&Manifest::read(dir)?) {
        reporter.say(note);
    }
    if options.install {
        let plan_for = |variant: &str, platform: Platform, python: &str, version: &str| {
            PlanRequest {
                platform: Some(platform),
                python: Some(python.to_string()),
                ctranslate2: Some(version.to_string()),
                ..PlanRequest::only(variant.to_string())
            }
            .plan(workspace, reporter)
        };
        install(workspace, dir, options, &plan_for, reporter)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// What a `--partial` release leaves out, per variant and platform: it verifies, and is
/// still not whole.
fn left_out(manifest: &Manifest) -> Option<String> {
    let sets: std::collections::BTreeSet<String> = manifest
        .left_out
        .iter()
        .map(|l| match l.platform.as_str() {
            "" => l.variant.clone(),
            platform => format!("{} on {platform}", l.variant),
        })
        .collect();
    (!sets.is_empty()).then(|| {
        format!(
            "note: a partial release: it leaves out {} ({} matrix entries; RELEASE_NOTES.md, \
             \"Not in this release\", says why)",
            escaped(&sets.into_iter().collect::<Vec<_>>().join(", ")),
            manifest.left_out.len()
        )
    })
}

/// `--install`: the platform and Python the options name (else this host's), then every
/// wheel asked for installed and checked.
fn install(
    workspace: &Workspace,
    dir: &Path,
    options: &InstallOptions,
    plan_for: PlanFor,
    reporter: &Reporter,
) -> Result<()> {
    let platform = options
        .platform
        .or_else(Platform::host)
        .unwrap_or(Platform::LinuxX86_64);
    let manifest = Manifest::read(dir)?;
    let python = match &options.python {
        Some(p) => p.clone(),
        None => {
            let preferred = if platform.is_windows() {
                winpython::pins::PythonPins::load(&workspace.root)?.default
            } else {
                ct2v_support::host::python_version(reporter).unwrap_or_else(|| "3.12".into())
            };
            default_python(&manifest, platform, &options.variants, preferred)
        }
    };
    let request = InstallRequest {
        dir,
        variants: &options.variants,
        platform,
        python,
        find_links: &options.find_links,
        transcribe: options.transcribe,
        download: options.download.clone(),
    };
    release::install(
        workspace,
        &request,
        &manifest,
        options.pyapp,
        plan_for,
        reporter,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workspace() -> Workspace {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        Workspace::locate(Some(root), None).unwrap()
    }

    fn no_install() -> InstallOptions {
        InstallOptions {
            install: false,
            platform: None,
            python: None,
            variants: Vec::new(),
            find_links: Vec::new(),
            transcribe: false,
            pyapp: false,
            download: Default::default(),
        }
    }

    #[test]
    fn a_folder_that_disagrees_with_itself_is_said_to_problem_by_problem_and_fails() {
        let dir = tempfile::tempdir().unwrap();
        ct2v_support::fsx::write(&dir.path().join("SHA256SUMS"), "").unwrap();
        ct2v_support::fsx::write(&dir.path().join("stray.txt"), "not listed").unwrap();
        let reporter = Reporter::captured();
        let code = run(&workspace(), dir.path(), &no_install(), &reporter).unwrap();
        assert_eq!(code, ExitCode::FAILURE);
        let said = reporter.said();
        assert_eq!(said.out, "", "problems are progress, not a result");
        let lines: Vec<&str> = said.err.lines().collect();
        assert!(
            lines.contains(&"error: stray.txt is not in SHA256SUMS"),
            "{lines:?}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("error: cannot read manifest.json")),
            "{lines:?}"
        );
        assert_eq!(
            lines.last().unwrap(),
            &format!("{} problem(s) in {}", lines.len() - 1, dir.path().display())
        );
    }
}
