//! The Windows build of xtask (`xtask.exe` for x86_64-pc-windows-gnu, cross-built with
//! mingw-w64 by `.ci/run`) run under wine through `scripts/wine-run` (the ProcessPrng
//! stand-in wine 8 lacks, quiet wine), in a wine prefix of its own per test.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::mingw::{self, Prefix};
use super::{Run, repo_root, skip};

/// Where `cargo build --target x86_64-pc-windows-gnu -p xtask` leaves the program
/// (`CT2V_WINDOWS_XTASK` overrides).
pub fn exe_path() -> PathBuf {
    std::env::var_os("CT2V_WINDOWS_XTASK")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/x86_64-pc-windows-gnu/debug/xtask.exe"))
}

pub struct WinXtask {
    exe: PathBuf,
    prefix: Prefix,
    /// A program of the test's own (a holder) was started in the prefix and may still run:
    /// then nothing waits for the wineserver to wind down, which it would not.
    others: std::cell::Cell<bool>,
}

impl WinXtask {
    /// `None` when mingw-w64, wine or xtask.exe is missing: the test is skipped (and fails
    /// under `CI=true`, where `.ci/run` builds xtask.exe first).
    pub fn new() -> Option<WinXtask> {
        if !mingw::available(true) {
            return None;
        }
        let exe = exe_path();
        if !exe.is_file() {
            let ci = std::env::var("CI").is_ok_and(|v| v == "true");
            skip::missing_in(
                &exe.display().to_string(),
                "cargo build --target x86_64-pc-windows-gnu -p xtask",
                ci,
                &skip::record_file(),
            );
            return None;
        }
        if let Some(newer) = newer_source(&exe) {
            panic!(
                "{} is older than {}: rebuild it (cargo build --target x86_64-pc-windows-gnu -p xtask) \
                 so that the tests run the code they read",
                exe.display(),
                newer.display()
            );
        }
        Some(WinXtask {
            exe,
            prefix: Prefix::new(),
            others: std::cell::Cell::new(false),
        })
    }

    /// Before a program starts: waits until the previous one's wineserver has wound down,
    /// unless another program of the test runs in the prefix (see
    /// [`super::mingw::Prefix::wait_until_idle`]).
    fn before_start(&self) {
        if !self.others.get() {
            self.prefix.wait_until_idle();
        }
    }

    /// The wine prefix's `C:` drive.
    pub fn drive_c(&self) -> PathBuf {
        self.prefix.path().join("drive_c")
    }

    /// `LongPathsEnabled = 1` in the prefix's registry, with wine's own reg.exe, as the
    /// advice tells a Windows user.
    pub fn enable_long_paths(&self) {
        self.before_start();
        let reg = Command::new("wine")
            .args([
                "reg",
                "add",
                r"HKLM\SYSTEM\CurrentControlSet\Control\FileSystem",
                "/v",
                "LongPathsEnabled",
                "/t",
                "REG_DWORD",
                "/d",
                "1",
                "/f",
            ])
            .env("WINEPREFIX", self.prefix.path())
            .env("WINEDEBUG", "-all")
            .output()
            .unwrap();
        assert!(reg.status.success(), "{reg:?}");
    }

    /// `xtask.exe --root <root> args…`; paths among `args` are given as [`win`] makes them.
    pub fn run(&self, root: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut command = self.command();
        command.arg("--root").arg(win(root));
        super::output_of(command, args, env, &[])
    }

    /// `scripts/wine-run xtask.exe` in this test's prefix, to add arguments to.
    pub fn command(&self) -> Command {
        self.command_for(&self.exe)
    }

    /// Another Windows program, in the same prefix (so that it shares the wineserver).
    pub fn command_for(&self, program: &Path) -> Command {
        // A program started while the previous one's wineserver winds down can fail with no
        // output or be killed (seen in CI: `reg add` exit 1, a fetch ended by a signal).
        self.before_start();
        if program != self.exe {
            self.others.set(true);
        }
        let mut command = Command::new(repo_root().join("scripts/wine-run"));
        command.arg(program).env("WINEPREFIX", self.prefix.path());
        command
    }
}

/// A source file of `exe` changed after it was built, if any: the files cargo's dep-info
/// (`xtask.d` beside it) lists, so that a test-only change does not count.
fn newer_source(exe: &Path) -> Option<PathBuf> {
    let built = std::fs::metadata(exe).and_then(|m| m.modified()).ok()?;
    let deps = std::fs::read_to_string(exe.with_extension("d")).ok()?;
    let (_, listed) = deps.split_once(": ")?;
    listed.split_whitespace().map(PathBuf::from).find(|f| {
        std::fs::metadata(f)
            .and_then(|m| m.modified())
            .is_ok_and(|t| t > built)
    })
}

/// `Z:\…`: a host path as the Windows program names it.
pub fn win(path: &Path) -> String {
    mingw::windows_path(path)
}

/// Every verbatim (`\\?\`, `//?/`) path in `text`, for the assertion message.
pub fn verbatim_paths(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| l.contains(r"\\?\") || l.contains("//?/") || l.contains(r"\\\\?\\"))
        .collect()
}

/// Every word of `text` that is a path with both separators (`C:\\out\\portable/_internal`):
/// what a Windows program prints when it joins a `/`-spelt relative path to a folder.
pub fn mixed_separators(text: &str) -> Vec<&str> {
    text.split_whitespace()
        .filter(|w| w.contains('\\') && w.contains('/') && !w.contains("://"))
        .collect()
}
