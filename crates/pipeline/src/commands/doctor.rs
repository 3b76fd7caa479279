//! `doctor`: what this machine has for GPU acceleration and which variant fits it; with
//! `--variant`, what that build needs here.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use crate::doctor::examine;
use crate::execute::readiness;
use crate::plan::request::PlanRequest;
use crate::variant::{Catalog, coverage};
use ct2v_support::diagnostic::{InputError, escaped};
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

/// What `doctor` is asked: this machine's report, or only what one build needs here.
pub struct DoctorRequest {
    /// The report as JSON.
    pub json: bool,
    /// `--variant`: the build to check instead of the whole machine.
    pub build: Option<BuildCheck>,
    /// The Python environment's site-packages whose installed ROCm 10 family wheel to examine.
    pub site_packages: Option<PathBuf>,
}

/// The build `doctor --variant` checks.
pub struct BuildCheck {
    pub plan: PlanRequest,
    /// The C++ library comes from another run: the SDK is needed only where the bundle copies
    /// from it.
    pub prebuilt_native: bool,
}

impl DoctorRequest {
    /// This machine's report, or with a build only what it needs here. Exit 1 when it is not
    /// ready.
    pub fn run(&self, workspace: &Workspace, reporter: &Reporter) -> Result<ExitCode> {
        if let Some(dir) = self.site_packages.as_deref().filter(|d| !d.is_dir()) {
            return Err(InputError::new(format!(
                "--site-packages {} is not a folder",
                escaped(&dir.display().to_string())
            ))
            .note(
                "name the site-packages folder ctranslate2 is installed in: \
                 python -c \"import sysconfig; print(sysconfig.get_paths()['platlib'])\"",
            )
            .into());
        }
        if let Some(build) = &self.build {
            return build.run(workspace, reporter);
        }
        let catalog = Catalog::load(&workspace.root, &[])?;
        let coverage = coverage::of_catalog(&catalog)?;
        let report = examine(&coverage, self.site_packages.as_deref());
        if self.json {
            reporter.outln(serde_json::to_string_pretty(&report.versioned())?)?;
        } else {
            reporter.out(report.text())?;
        }
        Ok(exit(report.verdict.ready))
    }
}

impl BuildCheck {
    /// What the build needs here, each missing thing on a line.
    fn run(&self, workspace: &Workspace, reporter: &Reporter) -> Result<ExitCode> {
        let plan = self.plan.plan(workspace, reporter)?;
        let problems = readiness::problems(
            &plan,
            self.plan.sdk_dir.clone(),
            self.prebuilt_native,
            reporter,
        );
        reporter.out(readiness_text(
            &format!(
                "{} for {} (Python {})",
                plan.variant, plan.platform, plan.python
            ),
            &problems,
        ))?;
        Ok(exit(problems.is_empty()))
    }
}

/// `ready: …`, or `not ready to build …:` and each problem, its own lines indented under it.
fn readiness_text(what: &str, problems: &[String]) -> String {
    if problems.is_empty() {
        return format!("ready: this machine has what building {what} needs\n");
    }
    let mut text = format!("not ready to build {what}:\n");
    for problem in problems {
        text.push_str(&format!("  - {}\n", problem.replace('\n', "\n    ")));
    }
    text
}

fn exit(ready: bool) -> ExitCode {
    if ready {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_with_problems_lists_each_with_its_later_lines_indented() {
        assert_eq!(
            readiness_text("cpu for linux-x86_64 (Python 3.12)", &[]),
            "ready: this machine has what building cpu for linux-x86_64 (Python 3.12) needs\n"
        );
        assert_eq!(
            readiness_text(
                "cuda for windows-x86_64 (Python 3.12)",
                &[
                    "no MSVC\ninstall it".into(),
                    "input `x` is not pinned".into()
                ]
            ),
            "not ready to build cuda for windows-x86_64 (Python 3.12):\n  - no MSVC\n    install it\n  - input `x` is not pinned\n"
        );
    }

    #[test]
    fn a_site_packages_that_is_not_a_folder_is_bad_input_and_nothing_is_said() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let workspace = Workspace::locate(Some(root.into()), None).unwrap();
        let request = DoctorRequest {
            json: false,
            build: None,
            site_packages: Some(workspace.root.join("Cargo.toml")),
        };
        let reporter = Reporter::captured();
        let error = request.run(&workspace, &reporter).unwrap_err();
        assert!(error.downcast_ref::<InputError>().is_some(), "{error:#}");
        assert!(
            error.to_string().contains("Cargo.toml is not a folder"),
            "{error:#}"
        );
        assert_eq!(reporter.said(), Default::default());
    }
}
