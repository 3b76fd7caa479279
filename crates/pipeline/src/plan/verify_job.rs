//! The verify step's job: a fresh venv made by the plan's Python, the wheel's runtime
//! requirements and then the wheel installed from the wheelhouse, and the check script run by
//! the venv's Python. The step's commands are made from it; `verify`, `smoke` and `bench`
//! read it, never the commands.

use serde::Serialize;

use ct2v_support::process::CommandLine;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VerifyJob {
    /// The program, then its arguments, that starts the plan's Python (`python3.12`,
    /// `py -3.12`).
    pub launcher: Vec<String>,
    /// The venv the wheel goes into, made afresh.
    pub venv: String,
    /// The venv's python.
    pub python: String,
    /// The `--find-links` folder pip installs from.
    pub wheelhouse: String,
    /// What the wheel needs at run time, installed before it.
    pub requirements: Vec<String>,
    /// The wheel installed (without its dependencies).
    pub wheel: String,
    /// What the venv's python runs to check the wheel: the script, then its arguments.
    pub check: Vec<String>,
}

impl VerifyJob {
    /// The launcher making a venv at `dir` (emptied first).
    pub fn venv_at(&self, dir: &str) -> CommandLine {
        CommandLine::new(&self.launcher[0])
            .args(self.launcher[1..].iter().cloned())
            .args(["-m", "venv", "--clear", dir])
    }

    /// pip's arguments after `install` for the runtime requirements.
    pub fn requirements_args(&self) -> Vec<String> {
        let mut args = self.find_links();
        args.extend(self.requirements.iter().cloned());
        args
    }

    /// pip's arguments after `install` for `wheel`, its dependencies left to the
    /// requirements (those it declares for GPU libraries are the user's download).
    pub fn wheel_args(&self, wheel: &str) -> Vec<String> {
        let mut args = vec!["--no-deps".to_string()];
        args.extend(self.find_links());
        args.push(wheel.to_string());
        args
    }

    /// `python -m pip install args` in the venv.
    pub fn pip_install(&self, args: Vec<String>) -> CommandLine {
        CommandLine::new(&self.python)
            .args(["-m", "pip", "install"])
            .args(args)
    }

    pub fn check_command(&self) -> CommandLine {
        CommandLine::new(&self.python).args(self.check.iter().cloned())
    }

    /// The step's commands, in the order the build runs them.
    pub fn commands(&self) -> Vec<CommandLine> {
        vec![
            self.venv_at(&self.venv),
            self.pip_install(self.requirements_args()),
            self.pip_install(self.wheel_args(&self.wheel)),
            self.check_command(),
        ]
    }

    fn find_links(&self) -> Vec<String> {
        vec!["--find-links".to_string(), self.wheelhouse.clone()]
    }
}
