//! Checks that the tools a build starts with are there, with the next step when they are not.

use ct2v_support::process;

use anyhow::{Result, bail};

use crate::plan::Plan;
use ct2v_support::host;

/// Linux: a C++ compiler on PATH (or $CXX), else how to install one.
pub(crate) fn check_compiler(plan: &Plan) -> Result<()> {
    if plan.platform.is_windows() || std::env::var_os("CXX").is_some() {
        return Ok(());
    }
    if ["c++", "g++", "clang++"].iter().any(|c| host::on_path(c)) {
        return Ok(());
    }
    bail!(
        "no C++ compiler found (looked for $CXX, c++, g++, clang++ on PATH). Install one:\n  \
         Debian/Ubuntu: sudo apt-get install build-essential\n  \
         Fedora/RHEL:   sudo dnf install gcc-c++ make\n  \
         Arch:          sudo pacman -S base-devel"
    )
}

/// The Python that creates a venv (the tools venv, the verify step's: both are made by the
/// plan's launcher, `Platform::python_launcher`) can be started; `needs` says who needs it.
pub(crate) fn check_python(plan: &Plan, needs: &str) -> Result<()> {
    let launcher = plan.platform.python_launcher(&plan.python);
    // Started, not just found: a pyenv shim exists for versions it cannot run.
    let version = launcher[1..]
        .iter()
        .map(String::as_str)
        .chain(["--version"]);
    let said = match process::capture(&launcher[0], version) {
        Ok(o) if o.success => return Ok(()),
        Ok(o) => said_by_launcher(&o.stderr),
        Err(e) if e.not_found() => String::new(),
        Err(e) => format!(" {e}."),
    };
    bail!(
        "`{}` (Python {}) cannot be started; {needs} needs it.{said} Install it \
         (where the distribution packages it: sudo apt-get install python{}-venv, Debian 12 \
         has 3.11 only; pyenv: name it beside the default, `pyenv global <default> <{} version>`; \
         Windows: the python.org installer, which provides the `py` launcher), or pick an \
         installed version with --python",
        launcher[0],
        plan.python,
        plan.python,
        plan.python
    )
}

/// What a launcher that ran but failed said (a pyenv shim names the versions that have the
/// command), on one line, for the message.
fn said_by_launcher(stderr: &str) -> String {
    let words: Vec<&str> = stderr.split_whitespace().collect();
    if words.is_empty() {
        return String::new();
    }
    let text = words.join(" ");
    let text: String = text.chars().take(300).collect();
    format!(" It said: \"{text}\".")
}
