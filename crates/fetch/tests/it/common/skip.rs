//! Tests that need a tool this machine may lack (mingw-w64, wine, patchelf). Under `CI=true`
//! a missing tool fails the test: CI must run every check. Elsewhere the test is skipped, and
//! says so twice: a `SKIPPED` line on stderr, and a line in `target/tmp/skipped-checks.txt`,
//! which `.ci/run` (and `scripts/skipped-checks`) count and print after `cargo test`, since
//! libtest shows a skipped test as `ok`.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::installed;

/// The run-wide list of skipped checks.
pub fn record_file() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("skipped-checks.txt")
}

/// Whether `tool` is missing, so that the calling test must stop here. Panics under CI.
pub fn missing(tool: &str, install: &str) -> bool {
    if installed(tool) {
        return false;
    }
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    missing_in(tool, install, ci, &record_file())
}

/// [`missing`] for a program with no `--version` (7-Zip's `7zz`): found on PATH is enough.
pub fn missing_from_path(tool: &str, install: &str) -> bool {
    if ct2v_support::host::on_path(tool) {
        return false;
    }
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    missing_in(tool, install, ci, &record_file())
}

/// [`missing`] for a tool known to be absent, with CI and the record file given.
pub fn missing_in(tool: &str, install: &str, ci: bool, record: &Path) -> bool {
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    let line = format!("{test}: {tool} is not installed ({install})");
    if ci {
        panic!("CI=true and {line}: CI must run every check, so a missing tool fails the run");
    }
    record_skip(&line, record);
    true
}

fn record_skip(line: &str, record: &Path) {
    eprintln!("SKIPPED {line}");
    if let Some(dir) = record.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(record)
    {
        let _ = writeln!(file, "{line}");
    }
}

/// Records a network test skipped because `reason` (a host cannot be reached, or the opt-out).
pub fn record_network(reason: &str) {
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    record_skip(&format!("{test}: network test: {reason}"), &record_file());
}

/// Records a check skipped because a heavy artifact (a full build's wheel) is not there. Not
/// a failure under CI either: full builds stay out of the default test run, so CI never has
/// one; the skip is still counted and printed by `scripts/skipped-checks`.
pub fn not_built(what: &str, build: &str) {
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    record_skip(
        &format!("{test}: {what} is not built ({build})"),
        &record_file(),
    );
}

/// Whether this run lacks root, which `what` needs (a mount namespace). Like [`missing`]:
/// a failure under `CI=true` (CI runs as root), a counted skip elsewhere.
pub fn not_root(what: &str) -> bool {
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    if root {
        return false;
    }
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    missing_in("root", what, ci, &record_file())
}
