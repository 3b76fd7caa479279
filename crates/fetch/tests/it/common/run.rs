//! Running a tool from a test: whether it is installed, its output when it must succeed.

use std::process::{Command, Output};

/// Whether `tool --version` runs and succeeds.
pub fn installed(tool: &str) -> bool {
    ct2v_support::process::probe(tool, ["--version"]).is_some()
}

/// Runs `cmd` and asserts that it succeeds (its stderr is the message when it does not).
pub fn run_ok(cmd: &mut Command) -> Output {
    let output = cmd.output().unwrap();
    assert!(
        output.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// A process's stdout followed by its stderr, as text.
pub fn stdout_and_stderr(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}
