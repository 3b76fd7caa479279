//! The argument lists of commands that several test files run.

use std::path::Path;

/// `bundle --wheel WHEEL --out OUT`, plus `extra`.
pub fn bundle<'a>(wheel: &'a Path, out: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "bundle",
        "--wheel",
        wheel.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    args
}

/// `patch` of the rocm-gfx1010 variant for linux-x86_64, plus `extra`.
pub fn patch_gfx1010<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "patch",
        "--variant",
        "rocm-gfx1010",
        "--platform",
        "linux-x86_64",
    ];
    args.extend_from_slice(extra);
    args
}

/// `release` of `variants` built for `platforms` and `pythons` into `out`, plus `extra`.
pub fn release<'a>(
    variants: &'a str,
    platforms: &'a str,
    pythons: &'a str,
    out: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec![
        "release",
        "--variants",
        variants,
        "--platforms",
        platforms,
        "--pythons",
        pythons,
        "--out",
        out,
    ];
    args.extend_from_slice(extra);
    args
}

/// [`release`] of the cpu builds for linux-x86_64.
pub fn release_cpu<'a>(out: &'a str, pythons: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    release("cpu", "linux-x86_64", pythons, out, extra)
}

/// `command` (`plan`, `fetch`, `build`, `bench`, `install-sdk`…) of `variant` for `platform`
/// and Python `python`, plus `extra`.
pub fn job<'a>(
    command: &'a str,
    variant: &'a str,
    platform: &'a str,
    python: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec![
        command,
        "--variant",
        variant,
        "--platform",
        platform,
        "--python",
        python,
    ];
    args.extend_from_slice(extra);
    args
}

/// [`job`] of the cpu variant for linux-x86_64 and Python 3.12.
pub fn cpu_job<'a>(command: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    job(command, "cpu", "linux-x86_64", "3.12", extra)
}
