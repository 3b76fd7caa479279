//! One check's Windows Python: a fresh copy of the prepared interpreter in a fresh wine
//! prefix.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;

use super::WindowsPython;
use super::pins::PythonPins;
use super::prepare;
use super::wine::{self, Wine};
use ct2v_fetch::cache::Cache;
use ct2v_fetch::download::Options;
use ct2v_support::diagnostic::InputError;
use ct2v_support::workspace::Workspace;

/// How long one pip install or one script may run under wine before it is stopped.
pub(crate) const STEP_LIMIT: Duration = Duration::from_secs(30 * 60);

/// A fresh copy of the Windows Python in a fresh wine prefix, for one check.
pub struct Session {
    pub python: WindowsPython,
    pub wine: Wine,
    /// The numpy version pip is pinned to (see `variants/windows/python.toml`).
    pub numpy: String,
    pub work: PathBuf,
}

impl Session {
    /// Starts a session for Python `minor` in `work` (its `python/` and `prefix/` are this
    /// session's, replaced when a killed run left them).
    pub fn start(
        workspace: &Workspace,
        minor: &str,
        work: &Path,
        options: &Options,
    ) -> Result<Session> {
        let spec = PythonPins::load(&workspace.root)?;
        spec.python(minor)?;
        if !spec.runs_under_wine(minor) {
            return Err(InputError::new(format!(
                "a Python {minor} wheel cannot be checked under wine 8: numpy {} (the newest \
                 wine 8 can import) has no cp{} wheel",
                spec.numpy,
                minor.replace('.', "")
            ))
            .note(format!(
                "check it on Windows, or check a --python {} wheel here",
                spec.max_python_under_wine
            ))
            .into());
        }
        std::fs::create_dir_all(work)?;
        // The prefix first: wine missing, or a folder there that is not ours, stops here.
        let wine = Wine::start(workspace, &work.join("prefix"), &options.reporter)?;
        let prepared = prepare::prepare(
            &workspace.root,
            &Cache::new(&workspace.cache_dir),
            &workspace.xtask_dir(),
            options,
            minor,
        )?;
        let python = prepared.copy_to(&work.join("python"))?;
        let session = Session {
            python,
            wine,
            numpy: spec.numpy,
            work: work.to_path_buf(),
        };
        let reporter = &options.reporter;
        reporter.say(session.label());
        reporter
            .say("  wine 8 accommodations of the harness (none of them is in a wheel or an app):");
        for line in wine::accommodations() {
            reporter.say(format_args!("  - {line}"));
        }
        Ok(session)
    }

    /// `python 3.12.9 (Windows, under wine)`
    pub fn label(&self) -> String {
        format!("python {} (Windows, under wine)", self.python.version)
    }

    /// `python.exe args`, output in `log` (and to `watch`).
    pub fn python(&self, args: &[String], log: &Path, watch: &mut dyn FnMut(&str)) -> Result<()> {
        self.wine.run(
            &self.python.python_exe(),
            args,
            &crate::serve::loopback_direct(),
            log,
            STEP_LIMIT,
            watch,
        )
    }

    /// `python.exe -m pip install --no-index --find-links WHEELHOUSE args` (numpy pinned).
    pub(crate) fn pip_install(&self, wheelhouse: &Path, args: &[String], log: &Path) -> Result<()> {
        let mut all: Vec<String> = [
            "-m",
            "pip",
            "install",
            // pip's PIP_* variables and config files are this host's, not the check's.
            "--isolated",
            "--disable-pip-version-check",
            "--no-warn-script-location",
            "--no-index",
            "--find-links",
        ]
        .map(String::from)
        .to_vec();
        all.push(wheelhouse.display().to_string());
        all.extend(args.iter().map(|a| self.pinned(a)));
        self.python(&all, log, &mut |_| {})
    }

    /// A requirement with numpy pinned to what wine can import.
    pub fn pinned(&self, requirement: &str) -> String {
        if requirement == "numpy" {
            format!("numpy=={}", self.numpy)
        } else {
            requirement.to_string()
        }
    }

    /// The whole environment a program of this session gets (for a caller that starts it
    /// itself): this process's, plus the prefix's.
    pub fn env(&self) -> BTreeMap<String, String> {
        let mut env: BTreeMap<String, String> = std::env::vars().collect();
        env.extend(self.wine.env().clone());
        env
    }

    /// The verify job's check, `args` (the script, then its arguments), whose failure names
    /// the DLLs the installed wheel lacks.
    pub(crate) fn check(
        &self,
        args: &[String],
        log: &Path,
        echo: &mut dyn FnMut(&str),
    ) -> Result<()> {
        self.python(args, log, echo).map_err(|e| {
            match super::diagnose::missing_dlls(&self.python.site_packages()) {
                Some(missing) => e.context(format!(
                    "the installed wheel needs DLLs that the Windows loader finds nowhere (not \
                     in the folders ctranslate2/__init__.py adds, nor Windows' own): {missing}"
                )),
                None => e,
            }
        })
    }
}
