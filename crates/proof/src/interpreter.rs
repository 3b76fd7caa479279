//! Where a check's Python runs: a venv on this host, or (with the `wine` feature) python.org's
//! Windows Python under wine, for a Windows wheel on a Linux host. Every check takes one and
//! is written once; what differs between the two places is answered here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;

#[cfg(feature = "wine")]
use crate::winpython::{STEP_LIMIT, Session, wine};
use ct2v_pipeline::plan::VerifyJob;
use ct2v_support::platform::Platform;
use ct2v_support::process::{CommandLine, run_logged};
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

/// A venv's python on this host.
pub struct Venv {
    pub python: PathBuf,
    /// How progress lines name it.
    pub label: String,
}

/// Where a check's Python runs.
pub enum Interpreter {
    Venv(Venv),
    /// A fresh copy of the Windows Python in a fresh wine prefix.
    #[cfg(feature = "wine")]
    Wine(Box<Session>),
}

/// A program and its arguments as they run in an interpreter's place, with the variables
/// that place adds to this process's environment.
pub(crate) struct Wrapped {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
}

impl Wrapped {
    pub(crate) fn command(&self) -> CommandLine {
        CommandLine::new(self.program.display().to_string()).args(self.args.iter().cloned())
    }

    /// This process's environment with the place's variables added, or `None` (inherit it)
    /// when the place adds none.
    pub(crate) fn full_env(&self) -> Option<BTreeMap<String, String>> {
        (!self.env.is_empty()).then(|| {
            let mut env: BTreeMap<String, String> = std::env::vars().collect();
            env.extend(self.env.clone());
            env
        })
    }
}

impl Interpreter {
    pub fn venv(python: PathBuf, label: impl Into<String>) -> Interpreter {
        Interpreter::Venv(Venv {
            python,
            label: label.into(),
        })
    }

    /// The Windows Python `minor` in a fresh prefix under `work` (`what` names the check in
    /// the error of a binary built without the harness).
    pub fn wine(
        workspace: &Workspace,
        minor: &str,
        work: &Path,
        options: &ct2v_fetch::download::Options,
        what: &str,
    ) -> Result<Interpreter> {
        #[cfg(feature = "wine")]
        {
            let _ = what;
            Ok(Interpreter::Wine(Box::new(Session::start(
                workspace, minor, work, options,
            )?)))
        }
        #[cfg(not(feature = "wine"))]
        {
            let _ = (workspace, minor, work, options);
            Err(crate::winpython::harness_missing(what).into())
        }
    }

    /// `python 3.12.9 (Windows, under wine)`, or the venv's label.
    pub fn label(&self) -> String {
        match self {
            Interpreter::Venv(venv) => venv.label.clone(),
            #[cfg(feature = "wine")]
            Interpreter::Wine(session) => session.label(),
        }
    }

    /// Whether this is the Windows Python under wine, which starts without the wheel (a venv
    /// check reuses the build's verify venv, which has it).
    pub(crate) fn under_wine(&self) -> bool {
        !matches!(self, Interpreter::Venv(_))
    }

    /// The python program, as this host names it.
    pub(crate) fn python_path(&self) -> PathBuf {
        match self {
            Interpreter::Venv(venv) => venv.python.clone(),
            #[cfg(feature = "wine")]
            Interpreter::Wine(session) => session.python.python_exe(),
        }
    }

    /// `program args` made to run in this place (under wine: `wine program args`).
    pub(crate) fn wrap(&self, program: &Path, args: Vec<String>) -> Wrapped {
        match self {
            Interpreter::Venv(_) => Wrapped {
                program: program.to_path_buf(),
                args,
                env: BTreeMap::new(),
            },
            #[cfg(feature = "wine")]
            Interpreter::Wine(session) => Wrapped {
                program: "wine".into(),
                args: std::iter::once(program.display().to_string())
                    .chain(args)
                    .collect(),
                env: session.wine.env().clone(),
            },
        }
    }

    /// `python args`, output in `log` (and to `watch`), loopback reached directly
    /// ([`crate::serve::loopback_direct`]).
    pub fn python(&self, args: &[String], log: &Path, watch: &mut dyn FnMut(&str)) -> Result<()> {
        match self {
            Interpreter::Venv(venv) => {
                let command =
                    CommandLine::new(venv.python.display().to_string()).args(args.iter().cloned());
                run_logged(&command, &crate::serve::loopback_direct(), log, watch)?;
                Ok(())
            }
            #[cfg(feature = "wine")]
            Interpreter::Wine(session) => session.python(args, log, watch),
        }
    }

    /// `python args`, its output returned (and in `log`).
    pub fn output(&self, args: &[String], log: &Path) -> Result<String> {
        let mut out = String::new();
        self.python(args, log, &mut |line| {
            out.push_str(line);
            out.push('\n');
        })?;
        Ok(out)
    }

    /// `pip install` of `args` from `wheelhouse` alone.
    pub(crate) fn pip_install(&self, wheelhouse: &Path, args: &[String], log: &Path) -> Result<()> {
        match self {
            Interpreter::Venv(_) => {
                // `--isolated`: no PIP_* variable or pip.conf adds an index or an http
                // find-links to the wheelhouse (as under wine, winpython/session.rs).
                let mut all: Vec<String> = [
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--isolated",
                    "--no-index",
                ]
                .map(String::from)
                .to_vec();
                all.extend(["--find-links".into(), wheelhouse.display().to_string()]);
                all.extend(args.iter().cloned());
                self.python(&all, log, &mut |_| {})
            }
            #[cfg(feature = "wine")]
            Interpreter::Wine(session) => session.pip_install(wheelhouse, args, log),
        }
    }

    /// The numpy version pip is pinned to here, if any (wine 8 imports no numpy 2).
    pub fn numpy(&self) -> Option<&str> {
        match self {
            Interpreter::Venv(_) => None,
            #[cfg(feature = "wine")]
            Interpreter::Wine(session) => Some(&session.numpy),
        }
    }

    /// A constraints file for this place's pins, in its work folder (none for a venv).
    pub(crate) fn constraints(&self) -> Result<Option<PathBuf>> {
        match self {
            Interpreter::Venv(_) => Ok(None),
            #[cfg(feature = "wine")]
            Interpreter::Wine(session) => {
                Ok(Some(numpy_constraints(&session.work, &session.numpy)?))
            }
        }
    }

    /// The plan's verify job run here with `wheel` as its wheel, its output echoed through
    /// `reporter`: in a venv, the job's venv made and its installs and check run as the build
    /// runs them (pip kept off every index when `from.offline`); under wine, in the fresh
    /// Windows Python itself, its installs from `from.wheelhouse` alone, and a failed check's
    /// missing DLLs named.
    pub(crate) fn install_and_check(
        &self,
        job: &VerifyJob,
        wheel: &str,
        env: &BTreeMap<String, String>,
        from: PackageSource,
        log: &Path,
        reporter: &Reporter,
    ) -> Result<()> {
        let PackageSource {
            offline,
            wheelhouse,
        } = from;
        let mut echo = |line: &str| {
            if !line.starts_with("Requirement already satisfied") {
                // A closed stdout only loses the echo; the log keeps every line.
                let _ = reporter.outln(line);
            }
        };
        match self {
            Interpreter::Venv(_) => {
                let _ = wheelhouse;
                let pip = |args: Vec<String>| match offline {
                    true => job.pip_install(
                        OFFLINE_PIP
                            .map(String::from)
                            .into_iter()
                            .chain(args)
                            .collect(),
                    ),
                    false => job.pip_install(args),
                };
                for command in [
                    job.venv_at(&job.venv),
                    pip(job.requirements_args()),
                    pip(job.wheel_args(wheel)),
                    job.check_command(),
                ] {
                    ct2v_pipeline::execute::executor::run_logged(&command, env, log, &mut echo)?;
                }
                Ok(())
            }
            #[cfg(feature = "wine")]
            Interpreter::Wine(session) => {
                let _ = (env, offline);
                session.pip_install(wheelhouse, &job.requirements, log)?;
                session.pip_install(
                    wheelhouse,
                    &["--no-deps".to_string(), wheel.to_string()],
                    log,
                )?;
                session.check(&job.check, log, &mut echo)
            }
        }
    }

    /// `f` run, stopped with every process of the place when it outlasts one step's limit
    /// (under wine; `timeout` words the error).
    pub(crate) fn bounded<T>(
        &self,
        f: impl FnOnce() -> Result<T>,
        timeout: impl FnOnce(Duration) -> String,
    ) -> Result<T> {
        match self {
            Interpreter::Venv(_) => {
                let _ = timeout;
                f()
            }
            #[cfg(feature = "wine")]
            Interpreter::Wine(session) => {
                let guard = session.wine.watchdog(STEP_LIMIT);
                let result = f();
                if guard.fired() {
                    anyhow::bail!("{}", timeout(STEP_LIMIT));
                }
                result
            }
        }
    }

    /// The platform whose variables a scrubbed run leaves out: under wine this host's (wine
    /// makes the Windows environment out of them).
    pub(crate) fn scrub_platform(&self, target: Platform) -> Platform {
        match self {
            Interpreter::Venv(_) => target,
            #[cfg(feature = "wine")]
            Interpreter::Wine(_) => Platform::host().unwrap_or(target),
        }
    }

    /// `path` as a program running here sees it.
    pub(crate) fn seen_path(&self, path: &Path) -> PathBuf {
        match self {
            Interpreter::Venv(_) => path.to_path_buf(),
            #[cfg(feature = "wine")]
            Interpreter::Wine(_) => PathBuf::from(wine::windows_path(path)),
        }
    }

    /// Variables that make the loader say which library it loaded from where (wine's
    /// `+loaddll`; none natively).
    pub(crate) fn loader_trace_env(&self) -> BTreeMap<String, String> {
        match self {
            Interpreter::Venv(_) => BTreeMap::new(),
            #[cfg(feature = "wine")]
            Interpreter::Wine(_) => [("WINEDEBUG".to_string(), "+loaddll".to_string())].into(),
        }
    }

    /// Modules PyInstaller leaves out here besides onnxruntime.
    pub(crate) fn freeze_excludes(&self) -> &'static [&'static str] {
        match self {
            Interpreter::Venv(_) => &[],
            #[cfg(feature = "wine")]
            Interpreter::Wine(_) => &["_wmi"],
        }
    }
}

/// Where the verify job's installs take their packages from.
#[derive(Clone, Copy)]
pub(crate) struct PackageSource<'a> {
    /// In a venv: pip kept off every index (the job's `--find-links` wheelhouse only).
    pub offline: bool,
    /// Under wine: the wheelhouse pip installs from alone.
    pub wheelhouse: &'a Path,
}

/// The options that keep a `pip install` off every index: `--no-index` (only the job's
/// `--find-links` wheelhouse, which pip otherwise adds to PyPI rather than puts in its place),
/// `--isolated` (no PIP_* variable or pip.conf adds an index or an http find-links; pip's own
/// `--help` describes both).
const OFFLINE_PIP: [&str; 2] = ["--isolated", "--no-index"];

/// A constraints file pinning numpy (under wine), in `work`.
#[cfg(feature = "wine")]
pub(crate) fn numpy_constraints(work: &Path, numpy: &str) -> Result<PathBuf> {
    let path = work.join("constraints.txt");
    ct2v_support::fsx::write(&path, format!("numpy=={numpy}\n"))?;
    Ok(path)
}
