//! Facts about the machine the tool runs on.

use std::sync::OnceLock;

use crate::process;
use crate::report::Reporter;

/// How the host's default Python 3 is started: the launcher `py -3` on Windows, `python3`
/// elsewhere (a base interpreter of one version is `Platform::python_launcher`).
pub fn python3() -> (&'static str, &'static [&'static str]) {
    if cfg!(windows) {
        ("py", &["-3"])
    } else {
        ("python3", &[])
    }
}

/// The `major.minor` version of the host's default Python 3, if one can be started (asked
/// once a run).
pub fn python_version(reporter: &Reporter) -> Option<String> {
    static ASKED: OnceLock<Option<String>> = OnceLock::new();
    ASKED
        .get_or_init(|| {
            let (program, args) = python3();
            let script = ["-c", "import sys; print('%d.%d' % sys.version_info[:2])"];
            let args: Vec<&str> = args.iter().chain(&script).copied().collect();
            let version = asked(
                program,
                &args,
                "the host's Python version was not read",
                reporter,
            )?;
            let version = version.trim();
            (!version.is_empty()).then(|| version.to_string())
        })
        .clone()
}

/// What `program args` printed, through the bounded runner; a program that hangs, floods or
/// leaves a process behind is said on stderr with `skipped` (what was not read because of it).
fn asked(program: &str, args: &[&str], skipped: &str, reporter: &Reporter) -> Option<String> {
    let probed = process::probe_bounded(program, args, process::Limits::probe());
    let out = probed.stdout().map(str::to_string);
    if let Some(problem) = probed.problem() {
        let said = match out {
            Some(_) => problem,
            None => format!("{problem}; {skipped}"),
        };
        reporter.warn(crate::diagnostic::escaped(&said));
    }
    out
}

/// `ccache`, else `sccache`, if one is on PATH.
pub fn compiler_cache() -> Option<String> {
    ["ccache", "sccache"]
        .into_iter()
        .find(|name| on_path(name))
        .map(str::to_string)
}

/// Whether an executable called `name` (`name.exe` on Windows) is in a folder of PATH.
pub fn on_path(name: &str) -> bool {
    which(name).is_some()
}

/// The executable called `name` (`name.exe` on Windows) in the first folder of PATH that has it.
pub fn which(name: &str) -> Option<std::path::PathBuf> {
    let file = exe(name);
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(&file))
        .find(|p| p.is_file())
}

/// `name.exe` on Windows, `name` elsewhere.
pub fn exe(name: &str) -> String {
    if cfg!(windows) {
        format!("{name}.exe")
    } else {
        name.to_string()
    }
}

/// Overrides the host's glibc version as [`glibc_version`] reads it (e.g. `2.28`), so that a
/// plan made elsewhere reads the same as one made on the build machine.
pub const GLIBC_ENV: &str = "CT2V_HOST_GLIBC";

/// The host's glibc `(major, minor)` on Linux (`getconf GNU_LIBC_VERSION`: `glibc 2.36`), or
/// `$CT2V_HOST_GLIBC`; `None` elsewhere or when it cannot be told.
pub fn glibc_version(reporter: &Reporter) -> Option<(u32, u32)> {
    let text = match std::env::var(GLIBC_ENV) {
        Ok(text) => text,
        Err(_) if cfg!(target_os = "linux") => {
            static ASKED: OnceLock<Option<String>> = OnceLock::new();
            ASKED
                .get_or_init(|| {
                    asked(
                        "getconf",
                        &["GNU_LIBC_VERSION"],
                        &format!("the host's glibc version was not read ({GLIBC_ENV} sets it)"),
                        reporter,
                    )
                })
                .clone()?
        }
        Err(_) => return None,
    };
    let version = text.trim().trim_start_matches("glibc").trim();
    let (major, minor) = version.split_once('.')?;
    Some((major.parse().ok()?, minor.split('.').next()?.parse().ok()?))
}
