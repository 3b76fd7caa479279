//! A release installed the way its users install it (`verify-release DIR --install`). The
//! release folder is served over loopback HTTP (its `whl/<variant>/` index and the wheels it
//! links), a fresh Python that already has PyPI's `ctranslate2==X` (as the consumer's app
//! has, PinW/whisper-key-local `pyproject.toml`) runs the consumer's onboarding command
//! (`src/whisper_key/onboarding.py`: `pip install --force-reinstall …`, here with
//! `--index-url` and the variant's local version), and the result must report `X+<local>`,
//! import and transcribe. On Linux with the host's Python in a venv; a Windows wheel on a
//! Linux host in python.org's Windows Python under wine.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::interpreter::Interpreter;
use crate::serve::Server;
use ct2v_fetch::wheel_name::WheelName;
use ct2v_pipeline::release::links::{Target, links};
use ct2v_pipeline::release::{Artifact, Manifest};
use ct2v_support::diagnostic::{InputError, escaped};
use ct2v_support::platform::Platform;
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

/// What to install, and from where.
pub struct InstallRequest<'a> {
    pub dir: &'a Path,
    /// The variants to install (empty: every variant with a wheel for the platform and Python).
    pub variants: &'a [String],
    pub platform: Platform,
    pub python: String,
    /// More folders of wheels the installs may take dependencies from (e.g. a stand-in for
    /// NVIDIA's cuBLAS wheel).
    pub find_links: &'a [PathBuf],
    pub transcribe: bool,
    pub download: ct2v_fetch::download::Options,
}

/// One wheel of the release to install: its variant and the requirement that names it.
pub struct InstallTarget {
    pub variant: String,
    pub file: String,
    /// `ctranslate2==4.7.1+cpu`
    pub requirement: String,
    /// `ctranslate2==4.7.1`, what PyPI has and the app starts from.
    pub baseline: String,
    pub version: String,
}

/// The manifest's `platform` wheels (of `variants`; empty: any), for every Python.
fn wheels_for<'a>(
    manifest: &'a Manifest,
    platform: Platform,
    variants: &'a [String],
) -> impl Iterator<Item = &'a Artifact> {
    manifest.artifacts.iter().filter(move |a| {
        a.kind == "wheel"
            && a.platform == platform.name()
            && (variants.is_empty() || variants.contains(&a.variant))
    })
}

/// The Python to install with when none is asked: `preferred` (the host's, or the Windows
/// check's default) when the release has wheels for it, else the one Python it has wheels for.
pub(crate) fn default_python(
    manifest: &Manifest,
    platform: Platform,
    variants: &[String],
    preferred: String,
) -> String {
    let mut held: BTreeSet<&str> = wheels_for(manifest, platform, variants)
        .map(|a| a.python.as_str())
        .collect();
    match held.pop_first() {
        Some(only) if held.is_empty() && only != preferred => only.to_string(),
        _ => preferred,
    }
}

/// The wheels of `request` in the release's `manifest`.
pub(crate) fn targets(request: &InstallRequest, manifest: &Manifest) -> Result<Vec<InstallTarget>> {
    let of_platform = || wheels_for(manifest, request.platform, request.variants);
    let mut out = Vec::new();
    for a in of_platform().filter(|a| a.python == request.python) {
        let name = WheelName::parse(Path::new(&a.path))?;
        let version = match &name.local {
            Some(local) => format!("{}+{local}", name.public_version),
            None => name.public_version.clone(),
        };
        out.push(InstallTarget {
            variant: a.variant.clone(),
            file: a.path.clone(),
            requirement: format!("ctranslate2=={version}"),
            baseline: format!("ctranslate2=={}", name.public_version),
            version,
        });
    }
    if out.is_empty() {
        let held: BTreeSet<&str> = of_platform().map(|a| a.python.as_str()).collect();
        let error = InputError::new(format!(
            "{} has no {} wheel for Python {}{} (it has {} wheels for: {})",
            request.dir.display(),
            request.platform,
            request.python,
            if request.variants.is_empty() {
                String::new()
            } else {
                format!(" of {}", request.variants.join(", "))
            },
            request.platform,
            if held.is_empty() {
                "none".to_string()
            } else {
                held.into_iter().collect::<Vec<_>>().join(", ")
            }
        ))
        .note("see its manifest.json for what it holds; --platform and --python choose");
        let error = left_out_all(manifest, request)
            .into_iter()
            .fold(error, InputError::note);
        return Err(error.into());
    }
    for variant in request.variants {
        if !out.iter().any(|t| &t.variant == variant) {
            let error = InputError::new(format!(
                "{} has no {} Python {} wheel of variant `{variant}`",
                request.dir.display(),
                request.platform,
                request.python
            ));
            return Err(match left_out(manifest, request.platform, variant) {
                Some(note) => error.note(note),
                None => error,
            }
            .into());
        }
    }
    Ok(out)
}

/// [`left_out`] of each variant asked for (none asked: every variant the release left out).
fn left_out_all(manifest: &Manifest, request: &InstallRequest) -> Vec<String> {
    let mut variants: Vec<&str> = request.variants.iter().map(String::as_str).collect();
    if variants.is_empty() {
        variants = manifest
            .left_out
            .iter()
            .map(|l| l.variant.as_str())
            .collect();
        variants.dedup();
    }
    variants
        .into_iter()
        .filter_map(|v| left_out(manifest, request.platform, v))
        .collect()
}

/// What the release says of `variant` on `platform` when `release --partial` left it out
/// there (its build did not pass): the jobs, and where the reasons are.
fn left_out(manifest: &Manifest, platform: Platform, variant: &str) -> Option<String> {
    let jobs: Vec<&str> = manifest
        .left_out
        .iter()
        .filter(|l| l.variant == variant)
        .filter(|l| l.platform.is_empty() || l.platform == platform.name())
        .map(|l| l.job.as_str())
        .collect();
    (!jobs.is_empty()).then(|| {
        format!(
            "this release left `{variant}` out on {platform} (its builds did not pass: {}); \
             its RELEASE_NOTES.md says why, and a re-run of those jobs and of the release adds it",
            jobs.join(", ")
        )
    })
}

/// Every link of the variant's index must lead into the release folder, which this check
/// serves on loopback: pip installs from nothing else. Checked before any install. A release
/// made for GitHub (`--index-base-url`) links its assets there by absolute URL, which is bad
/// input here; any other link out of the folder is a broken release.
pub(crate) fn check_index_is_local(dir: &Path, variant: &str) -> Result<()> {
    let index = format!("{}/{variant}", ct2v_pipeline::release::wheel_index::DIR);
    let mut absolute = Vec::new();
    let mut outside = Vec::new();
    for (name, path) in ct2v_support::fsx::files_below(&dir.join(&index))? {
        let page = format!("{index}/{name}");
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        for (href, target) in links(&page, &text) {
            let link = format!("{}: link `{}`", dir.join(&page).display(), escaped(&href));
            match target {
                Ok(Target::Inside) => {}
                Ok(Target::Absolute) => absolute.push(link),
                Err(why) => outside.push(format!("{link} {why}")),
            }
        }
    }
    if !outside.is_empty() {
        bail!(
            "the index of `{variant}` links out of the release, so nothing is installed from \
             it:\n  {}",
            outside.join("\n  ")
        );
    }
    if !absolute.is_empty() {
        return Err(InputError::new(format!(
            "the index of `{variant}` links by absolute URL, where this check serves the \
             release folder on loopback:\n  {}",
            absolute.join("\n  ")
        ))
        .note("release it without --index-base-url to check it here")
        .into());
    }
    Ok(())
}

/// The steps of one install, with `python` already holding the app's baseline.
pub(crate) struct Install<'a> {
    pub python: &'a Interpreter,
    pub(crate) index_url: String,
    pub find_links: Vec<PathBuf>,
    pub(crate) constraints: Option<PathBuf>,
    pub log: PathBuf,
}

impl Install<'_> {
    /// The consumer's onboarding command, as shown to the user and as run.
    pub(crate) fn onboarding_args(&self, target: &InstallTarget) -> Vec<String> {
        let mut args: Vec<String> = ["-m", "pip", "install", "--isolated", "--force-reinstall"]
            .map(String::from)
            .to_vec();
        args.extend(["--index-url".into(), self.index_url.clone()]);
        for dir in &self.find_links {
            args.extend(["--find-links".into(), dir.display().to_string()]);
        }
        if let Some(c) = &self.constraints {
            args.extend(["--constraint".into(), c.display().to_string()]);
        }
        args.push(target.requirement.clone());
        args
    }

    /// `python args`, its output returned.
    pub(crate) fn run(&self, args: &[String]) -> Result<String> {
        self.python.output(args, &self.log)
    }

    /// `pip install` of the PyPI baseline (from the wheelhouse).
    pub(crate) fn baseline(&self, target: &InstallTarget) -> Result<()> {
        let mut args: Vec<String> = ["-m", "pip", "install", "--isolated", "--no-index"]
            .map(String::from)
            .to_vec();
        for dir in &self.find_links {
            args.extend(["--find-links".into(), dir.display().to_string()]);
        }
        if let Some(c) = &self.constraints {
            args.extend(["--constraint".into(), c.display().to_string()]);
        }
        args.push(target.baseline.clone());
        self.python.output(&args, &self.log)?;
        Ok(())
    }

    /// The installed ctranslate2's version, as pip recorded it and as it imports.
    pub(crate) fn installed_version(&self) -> Result<String> {
        let out = self.python.output(
            &[
                "-c".into(),
                "import importlib.metadata as m, ctranslate2; print('installed', m.version('ctranslate2'), ctranslate2.__version__)".into(),
            ],
            &self.log,
        )?;
        let line = out
            .lines()
            .find_map(|l| l.strip_prefix("installed "))
            .with_context(|| format!("no version printed (log: {})", self.log.display()))?;
        Ok(line
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_string())
    }
}

/// Checks the installed version is the target's.
pub(crate) fn expect_version(found: &str, target: &InstallTarget, stage: &str) -> Result<()> {
    if found != target.version {
        bail!(
            "{stage}: ctranslate2 {found} is installed, not {} ({})",
            target.version,
            target.file
        );
    }
    Ok(())
}

/// The loopback server for the release folder.
pub(crate) fn serve(dir: &Path) -> Result<Server> {
    Server::start(dir)
}

/// The wheelhouse the installs take dependencies from: the wheel's runtime requirements and
/// the PyPI baseline, for `platform` and `python` (numpy pinned to `numpy` under wine).
pub(crate) fn wheelhouse(
    workspace: &Workspace,
    request: &InstallRequest,
    targets: &[InstallTarget],
    numpy: Option<&str>,
    log: &Path,
) -> Result<PathBuf> {
    let cache = &workspace.cache_dir;
    if request.download.offline {
        return Ok(ct2v_fetch::wheelhouse::dir(
            cache,
            request.platform,
            &request.python,
        ));
    }
    let mut specs: Vec<String> = ct2v_fetch::wheelhouse::RUNTIME_REQUIREMENTS
        .iter()
        .map(|r| pin_numpy(r, numpy))
        .collect();
    specs.extend(targets.iter().map(|t| t.baseline.clone()));
    specs.sort();
    specs.dedup();
    ct2v_fetch::wheelhouse::download_packages(cache, request.platform, &request.python, &specs, log)
}

/// `requirement`, with numpy pinned to `numpy` when there is a pin.
pub(crate) fn pin_numpy(requirement: &str, numpy: Option<&str>) -> String {
    match (requirement, numpy) {
        ("numpy", Some(v)) => format!("numpy=={v}"),
        _ => requirement.to_string(),
    }
}

/// A fresh venv in `dir` of this host's Python `python` (`python3` when it is that version,
/// else `python3.X` on PATH; on Windows `py -3.X`).
pub(crate) fn native_venv(
    python: &str,
    dir: &Path,
    log: &Path,
    reporter: &Reporter,
) -> Result<PathBuf> {
    let command = if cfg!(windows) {
        ct2v_support::process::CommandLine::new("py").arg(format!("-{python}"))
    } else if ct2v_support::host::python_version(reporter).as_deref() == Some(python) {
        ct2v_support::process::CommandLine::new("python3")
    } else if ct2v_support::host::on_path(&format!("python{python}")) {
        ct2v_support::process::CommandLine::new(format!("python{python}"))
    } else {
        return Err(InputError::new(format!(
            "this release's wheels for Python {python} need a Python {python} here: neither \
             python3 nor python{python} is one"
        ))
        .note("install it, or check the wheels of the host's Python with --python")
        .into());
    };
    let command = command
        .args(["-m", "venv", "--clear"])
        .arg(dir.display().to_string());
    ct2v_support::process::run_logged(&command, &Default::default(), log, &mut |_| {})?;
    let host = Platform::host().unwrap_or(Platform::LinuxX86_64);
    Ok(dir.join(host.venv_bin()).join(host.exe("python")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn release_with(pythons: &[(&str, &str)]) -> Manifest {
        let artifacts = pythons
            .iter()
            .map(|(platform, python)| Artifact {
                path: format!(
                    "ctranslate2-4.7.1+cpu-cp{0}-cp{0}-x.whl",
                    python.replace('.', "")
                ),
                kind: "wheel".into(),
                variant: "cpu".into(),
                description: String::new(),
                platform: platform.to_string(),
                python: python.to_string(),
                ctranslate2: "4.7.1".into(),
                size: 0,
                sha256: String::new(),
                inputs: Vec::new(),
                sdk: None,
                bundled: Vec::new(),
                toolchain: None,
            })
            .collect();
        Manifest {
            schema_version: 1,
            version: "4.7.1".into(),
            artifacts,
            index_base_url: None,
            left_out: Vec::new(),
        }
    }

    /// A proxy that answers every request as `answer` does, counting the connections.
    #[cfg(unix)]
    fn hostile_proxy(
        answer: &'static str,
    ) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        use std::io::{Read, Write};
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = count.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                counted.fetch_add(1, Ordering::SeqCst);
                std::thread::spawn(move || {
                    let _ = stream.read(&mut [0u8; 4096]);
                    match answer {
                        "stall" => std::thread::sleep(std::time::Duration::from_secs(30)),
                        "redirect" => {
                            let _ = stream.write_all(
                                b"HTTP/1.1 302 Found\r\nLocation: http://example.invalid/x/\r\n\
                                  Content-Length: 0\r\n\r\n",
                            );
                        }
                        _ => {
                            let _ = stream.write_all(
                                b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n",
                            );
                        }
                    }
                });
            }
        });
        (url, count)
    }

    /// pip reaches the release served on loopback directly, whatever proxy the environment
    /// names: one that answers 502, stalls or redirects out of the release is never asked,
    /// and the wheel comes from the release. (pip honours `http_proxy` for a loopback index,
    /// `--isolated` or not.) It runs the host's `python3`, which the Windows build's unit tests
    /// under wine do not have; a Windows Python under wine gets the same `no_proxy`
    /// ([`crate::serve::loopback_direct`], in `winpython/session.rs`).
    #[cfg(unix)]
    #[test]
    fn pip_reaches_the_served_release_directly_whatever_proxy_the_environment_names() {
        let dir = tempfile::tempdir().unwrap();
        let tree = dir.path().join("tree");
        std::fs::create_dir_all(tree.join("x")).unwrap();
        std::fs::create_dir_all(tree.join("x-1.0.dist-info")).unwrap();
        std::fs::write(tree.join("x/__init__.py"), "").unwrap();
        std::fs::write(
            tree.join("x-1.0.dist-info/METADATA"),
            "Metadata-Version: 2.1\nName: x\nVersion: 1.0\n",
        )
        .unwrap();
        std::fs::write(
            tree.join("x-1.0.dist-info/WHEEL"),
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        .unwrap();
        let site = dir.path().join("site");
        let wheel = "x-1.0-py3-none-any.whl";
        std::fs::create_dir_all(site.join("x")).unwrap();
        ct2v_bundle::wheel::write(&tree, &site.join("x").join(wheel)).unwrap();
        std::fs::write(
            site.join("x/index.html"),
            format!("<a href=\"{wheel}\">{wheel}</a>\n"),
        )
        .unwrap();
        let server = serve(&site).unwrap();
        let python = Interpreter::venv("python3".into(), "host python3");
        for answer in ["502", "stall", "redirect"] {
            let (proxy, asked) = hostile_proxy(answer);
            let dest = dir.path().join(format!("got-{answer}"));
            let script = format!(
                "import os, runpy, sys\n\
                 for name in ('http_proxy', 'HTTP_PROXY', 'all_proxy', 'ALL_PROXY'):\n    \
                 os.environ[name] = '{proxy}'\n\
                 sys.argv = ['pip', 'download', '--isolated', '--disable-pip-version-check', \
                 '--no-deps', '--retries', '0', '--timeout', '5', '-d', r'{}', \
                 '--index-url', '{}', 'x']\n\
                 runpy.run_module('pip', run_name='__main__', alter_sys=True)\n",
                dest.display(),
                server.url("/"),
            );
            let log = dir.path().join(format!("{answer}.log"));
            let started = std::time::Instant::now();
            let run = python.output(&["-c".to_string(), script], &log);
            let shown = std::fs::read_to_string(&log).unwrap_or_default();
            assert!(run.is_ok(), "{answer}: {run:?}\n{shown}");
            assert_eq!(
                asked.load(std::sync::atomic::Ordering::SeqCst),
                0,
                "{answer}: the proxy was asked\n{shown}"
            );
            assert_eq!(
                std::fs::read(dest.join(wheel)).unwrap(),
                std::fs::read(site.join("x").join(wheel)).unwrap(),
                "{answer}"
            );
            assert!(started.elapsed() < std::time::Duration::from_secs(60));
        }
    }

    /// A variant asked for on a platform a `--partial` release left out is named as left
    /// out, with its job; one the release never had is not.
    #[test]
    fn a_variant_left_out_on_the_platform_asked_for_is_said_to_be() {
        let mut manifest = release_with(&[("linux-x86_64", "3.12")]);
        manifest.left_out.push(ct2v_pipeline::release::LeftOut {
            variant: "cpu".into(),
            platform: "windows-x86_64".into(),
            job: "cpu4.7.1 windows-x86_64 py3.12".into(),
            reason: "its check failed".into(),
        });
        let variants = ["cpu".to_string()];
        let request = |platform: Platform| InstallRequest {
            dir: Path::new("dist"),
            variants: &variants,
            platform,
            python: "3.12".into(),
            find_links: &[],
            transcribe: false,
            download: Default::default(),
        };
        let error = targets(&request(Platform::WindowsX86_64), &manifest)
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("has no windows-x86_64 wheel"), "{error}");
        assert!(
            error.contains("this release left `cpu` out on windows-x86_64")
                && error.contains("cpu4.7.1 windows-x86_64 py3.12"),
            "{error}"
        );
        assert_eq!(
            targets(&request(Platform::LinuxX86_64), &manifest)
                .unwrap()
                .len(),
            1
        );
    }

    #[test]
    fn the_default_python_is_the_preferred_one_unless_the_release_has_one_other_only() {
        let linux = Platform::LinuxX86_64;
        let only_312 = release_with(&[("linux-x86_64", "3.12"), ("windows-x86_64", "3.11")]);
        let pick = |manifest: &Manifest| default_python(manifest, linux, &[], "3.11".into());
        assert_eq!(pick(&only_312), "3.12");
        let both = release_with(&[("linux-x86_64", "3.12"), ("linux-x86_64", "3.11")]);
        assert_eq!(pick(&both), "3.11");
        let two_others = release_with(&[("linux-x86_64", "3.12"), ("linux-x86_64", "3.13")]);
        assert_eq!(pick(&two_others), "3.11", "no guess among several");
        let cuda_only = default_python(&only_312, linux, &["cuda".into()], "3.11".into());
        assert_eq!(
            cuda_only, "3.11",
            "nothing of that variant: the error comes later"
        );
    }
}
