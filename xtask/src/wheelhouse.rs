//! The Python wheels a build installs (the pinned build tools, and what the built wheel needs
//! in the verify venv), downloaded by `fetch` into the cache, so that a machine with no network
//! builds with `--offline` from a copied cache. pip itself checks the build tools' hashes.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::platform::Platform;
use crate::process::{Command, run_logged};

/// What the built ctranslate2 wheel depends on (its setup.py's install_requires).
pub const RUNTIME_REQUIREMENTS: [&str; 3] = ["numpy", "pyyaml", "setuptools"];

pub fn dir(cache: &Path, platform: Platform, python: &str) -> PathBuf {
    cache.join("wheels").join(format!("{platform}-py{python}"))
}

/// pip's `--platform` tags for a platform.
fn platform_tags(platform: Platform) -> &'static [&'static str] {
    match platform {
        Platform::LinuxX86_64 => &[
            "manylinux_2_28_x86_64",
            "manylinux_2_27_x86_64",
            "manylinux_2_17_x86_64",
            "manylinux2014_x86_64",
            "manylinux_2_5_x86_64",
            "manylinux1_x86_64",
        ],
        Platform::WindowsX86_64 => &["win_amd64"],
    }
}

/// Downloads the wheels for `platform` and `python` into the wheelhouse with this machine's
/// Python (`pip download`, binary wheels for the target, whatever the host is): the pinned
/// build tools, the built wheel's runtime requirements, and `extra` (the official ctranslate2
/// wheel that `bench` compares against, with its dependencies).
pub fn download(
    cache: &Path,
    platform: Platform,
    python: &str,
    requirements: &Path,
    extra: &[String],
    log: &Path,
) -> Result<PathBuf> {
    let dest = dir(cache, platform, python);
    let pinned = pip_download(platform, python, &dest)?
        .args(["--no-deps", "--require-hashes", "-r"])
        .arg(requirements.display().to_string());
    let runtime = pip_download(platform, python, &dest)?
        .args(RUNTIME_REQUIREMENTS)
        .args(extra.iter().cloned());
    for command in [pinned, runtime] {
        warm_first(&command, &dest, log)?;
    }
    Ok(dest)
}

/// Downloads exactly the packages `requirements` lists (`--no-deps`: the file names every
/// one) into the wheelhouse, e.g. faster-whisper and what it imports for the speech check.
pub fn download_listed(
    cache: &Path,
    platform: Platform,
    python: &str,
    requirements: &Path,
    log: &Path,
) -> Result<PathBuf> {
    let dest = dir(cache, platform, python);
    let text = std::fs::read_to_string(requirements)
        .with_context(|| format!("cannot read {}", requirements.display()))?;
    let command = pip_download(platform, python, &dest)?
        .arg("--no-deps")
        .args(for_platform(&text, platform));
    warm_first(&command, &dest, log)?;
    Ok(dest)
}

/// The requirement lines of a requirements file for `platform`: `pip download --platform`
/// evaluates environment markers for the machine it runs on, not the target, so the
/// `sys_platform` / `platform_system` markers are decided here (others are left to pip).
fn for_platform(text: &str, platform: Platform) -> Vec<String> {
    let windows = platform.is_windows();
    text.lines()
        .map(|l| l.split('#').next().unwrap_or_default().trim())
        .filter(|l| !l.is_empty())
        .filter_map(|line| {
            let Some((requirement, marker)) = line.split_once(';') else {
                return Some(line.to_string());
            };
            let marker = marker.replace(['\'', '"'], "").replace(' ', "");
            let decided = match marker.as_str() {
                "sys_platform==win32" | "platform_system==Windows" => Some(windows),
                "sys_platform!=win32" | "platform_system!=Windows" => Some(!windows),
                "sys_platform==linux" | "platform_system==Linux" => Some(!windows),
                _ => None,
            };
            match decided {
                Some(true) => Some(requirement.trim().to_string()),
                Some(false) => None,
                None => Some(line.to_string()),
            }
        })
        .collect()
}

/// Downloads `specs` (requirement strings, with their dependencies) into the wheelhouse.
pub fn download_packages(
    cache: &Path,
    platform: Platform,
    python: &str,
    specs: &[String],
    log: &Path,
) -> Result<PathBuf> {
    let dest = dir(cache, platform, python);
    let command = pip_download(platform, python, &dest)?.args(specs.iter().cloned());
    warm_first(&command, &dest, log)?;
    Ok(dest)
}

/// `pip download` with this machine's Python of binary wheels for `platform` and `python`
/// (whatever the host is) into `dest`.
fn pip_download(platform: Platform, python: &str, dest: &Path) -> Result<Command> {
    let (host, host_args) = crate::host::python3();
    if !crate::host::on_path(host) {
        bail!("`{host}` is not on PATH: it downloads the wheels into the cache's wheelhouse");
    }
    let mut command = Command::new(host).args(host_args.iter().copied());
    command = command.args(["-m", "pip", "download", "--quiet", "--only-binary=:all:"]);
    for tag in platform_tags(platform) {
        command = command.args(["--platform", tag]);
    }
    Ok(command
        .args(["--python-version", python, "--implementation", "cp", "-d"])
        .arg(dest.display().to_string()))
}

/// A warm wheelhouse needs no network: pip first tries it alone, and asks the index only when
/// something is missing there.
fn warm_first(command: &Command, dest: &Path, log: &Path) -> Result<()> {
    let offline = command
        .clone()
        .args(["--no-index", "--find-links"])
        .arg(dest.display().to_string());
    if run_logged(&offline, &Default::default(), log, &mut |_| {}).is_err() {
        run_logged(command, &Default::default(), log, &mut |_| {})?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn platform_markers_are_decided_for_the_target_not_the_host() {
        let text = "# c\nfaster-whisper==1.2.0\ncolorama==0.4.6 ; sys_platform == \"win32\"\n\
                    uvloop==1 ; sys_platform != 'win32'\nx==1 ; python_version >= \"3.11\"\n";
        assert_eq!(
            for_platform(text, Platform::WindowsX86_64),
            [
                "faster-whisper==1.2.0",
                "colorama==0.4.6",
                "x==1 ; python_version >= \"3.11\""
            ]
        );
        assert_eq!(
            for_platform(text, Platform::LinuxX86_64),
            [
                "faster-whisper==1.2.0",
                "uvloop==1",
                "x==1 ; python_version >= \"3.11\""
            ]
        );
    }
}
