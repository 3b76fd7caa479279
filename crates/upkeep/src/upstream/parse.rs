//! Tolerant readers, one per upstream file: each returns the fact with its file and lines, or
//! says why the file's shape could not be read. None guesses.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::facts::normalize;
use super::facts::{DllFolders, Fact, FactKind, Place, RocmSdk, Unreadable, Value, Wheel};
use super::shell::{Script, written};

type Read = Result<Fact, Unreadable>;

fn unreadable(kind: FactKind, at: Place, why: impl Into<String>) -> Unreadable {
    Unreadable {
        kind,
        at,
        why: why.into(),
    }
}

/// `pybind11==X` in a requirements file (`python/install_requirements.txt`).
pub(crate) fn requirements_pybind11(file: &str, text: &str) -> Read {
    for (n, line) in text.lines().enumerate() {
        let spec = line.split('#').next().unwrap_or("").trim();
        if spec.is_empty() {
            continue;
        }
        let name_end = spec
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
            .unwrap_or(spec.len());
        if normalize(&spec[..name_end]) != "pybind11" {
            continue;
        }
        return pin_of(FactKind::Pybind11, spec, Place::line(file, n + 1));
    }
    Err(unreadable(
        FactKind::Pybind11,
        Place::line(file, 1),
        "no line names pybind11",
    ))
}

/// `name==X` → X; anything else is not a pin.
fn pin_of(kind: FactKind, spec: &str, at: Place) -> Read {
    let spec = spec.split(';').next().unwrap_or(spec).trim();
    match spec.split_once("==") {
        Some((_, version))
            if !version.is_empty()
                && version
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '!')) =>
        {
            Ok(Fact {
                kind,
                value: Value::Version(version.to_string()),
                at,
            })
        }
        _ => Err(unreadable(
            kind,
            at,
            format!("`{spec}` is not pinned to one version with `==`"),
        )),
    }
}

/// `[build-system] requires = [..., "pybind11==X"]` in `python/pyproject.toml`.
pub(crate) fn pyproject_pybind11(file: &str, text: &str) -> Read {
    #[derive(Deserialize)]
    struct Pyproject {
        #[serde(rename = "build-system")]
        build_system: Option<BuildSystem>,
    }
    #[derive(Deserialize)]
    struct BuildSystem {
        requires: Option<Vec<toml::Spanned<String>>>,
    }
    let line_of = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
    let parsed: Pyproject = toml::from_str(text).map_err(|e| {
        let line = e.span().map_or(1, |s| line_of(s.start));
        unreadable(
            FactKind::Pybind11,
            Place::line(file, line),
            format!("not TOML: {}", e.message()),
        )
    })?;
    let requires = parsed
        .build_system
        .and_then(|b| b.requires)
        .ok_or_else(|| {
            unreadable(
                FactKind::Pybind11,
                Place::line(file, 1),
                "no [build-system] requires",
            )
        })?;
    for spec in &requires {
        let name_end = spec
            .get_ref()
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
            .unwrap_or(spec.get_ref().len());
        if normalize(&spec.get_ref()[..name_end]) == "pybind11" {
            let at = Place::line(file, line_of(spec.span().start));
            return pin_of(FactKind::Pybind11, spec.get_ref(), at);
        }
    }
    Err(unreadable(
        FactKind::Pybind11,
        Place::line(file, 1),
        "[build-system] requires names no pybind11",
    ))
}

/// What a script is expected to declare.
pub(crate) fn script_fact(script: &Script, kind: FactKind) -> Option<Read> {
    match kind {
        FactKind::OnednnVersion => onednn_version(script),
        FactKind::OnednnCmake => onednn_cmake(script),
        FactKind::CudaVersion => cuda_version(script),
        FactKind::RocmSdk => rocm_sdk(script),
        FactKind::HipArchitectures => hip_architectures(script),
        FactKind::Pybind11 | FactKind::DllFolders => None,
    }
}

/// Says where a needle is when it is only inside a heredoc; else that it is absent.
fn absent(script: &Script, kind: FactKind, needle: &str, what: &str) -> Read {
    match script.in_heredoc(needle) {
        Some((a, b)) => Err(unreadable(
            kind,
            Place::lines(&script.file, a, b),
            format!("{what} is inside a heredoc, text this script writes rather than runs"),
        )),
        None => Err(unreadable(
            kind,
            Place::line(&script.file, 1),
            format!("{what} is not in this script"),
        )),
    }
}

/// The place of a resolved value: the assignment it came from, else the line that uses it.
fn origin(script: &Script, line: (usize, usize), origins: &[usize]) -> Place {
    match origins.first() {
        Some(&l) => Place::line(&script.file, l),
        None => Place::lines(&script.file, line.0, line.1),
    }
}

const ONEDNN_URL: &str = "oneDNN/archive/refs/tags/v";

/// The version in oneDNN's download URL (`…/oneDNN/archive/refs/tags/v${ONEDNN_VERSION}.tar.gz`).
fn onednn_version(script: &Script) -> Option<Read> {
    let kind = FactKind::OnednnVersion;
    let words = script.words_with(ONEDNN_URL);
    let Some((line, word)) = words.first() else {
        return Some(absent(script, kind, ONEDNN_URL, "oneDNN's download"));
    };
    let here = Place::lines(&script.file, line.first, line.last);
    Some(
        script
            .resolve(word)
            .map_err(|why| unreadable(kind, here.clone(), why))
            .and_then(|r| {
                let version = r
                    .text
                    .split_once(ONEDNN_URL)
                    .map(|(_, v)| v)
                    .and_then(|v| v.strip_suffix(".tar.gz").or(v.strip_suffix(".zip")));
                match version {
                    Some(v)
                        if !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.') =>
                    {
                        Ok(Fact {
                            kind,
                            value: Value::Version(v.to_string()),
                            at: origin(script, (line.first, line.last), &r.origins),
                        })
                    }
                    _ => Err(unreadable(
                        kind,
                        here.clone(),
                        format!("`{}` does not end in v<version>.tar.gz", r.text),
                    )),
                }
            }),
    )
}

/// `-DNAME=VALUE` / `-DNAME:TYPE=VALUE`.
fn define(word: &str) -> Option<(&str, &str)> {
    let (name, value) = word.strip_prefix("-D")?.split_once('=')?;
    Some((name.split(':').next().unwrap_or(name), value))
}

/// oneDNN's own options on the `cmake` command that configures it: `ONEDNN_*` and `DNNL_*`
/// (`CMAKE_*` and `OpenMP_*` are the host's plumbing, not how oneDNN is built).
fn onednn_cmake(script: &Script) -> Option<Read> {
    let kind = FactKind::OnednnCmake;
    let commands = script.commands("cmake");
    let Some((line, words)) = commands
        .iter()
        .find(|(_, words)| words.iter().any(|w| written(w).starts_with("-DONEDNN_")))
    else {
        return Some(absent(
            script,
            kind,
            "-DONEDNN_",
            "the cmake command that configures oneDNN",
        ));
    };
    let at = Place::lines(&script.file, line.first, line.last);
    let mut options = BTreeMap::new();
    for word in words {
        let text = written(word);
        let Some((name, _)) = define(&text) else {
            continue;
        };
        if !(name.starts_with("ONEDNN_") || name.starts_with("DNNL_")) {
            continue;
        }
        let resolved = match script.resolve(word) {
            Ok(r) => r.text,
            Err(why) => return Some(Err(unreadable(kind, at, format!("`{text}`: {why}")))),
        };
        if let Some((name, value)) = define(&resolved) {
            options.insert(name.to_string(), value.to_string());
        }
    }
    Some(Ok(Fact {
        kind,
        value: Value::Options(options),
        at,
    }))
}

/// Linux: the `cuda-nvcc-X-Y-…` package (and the `# Install CUDA X.Y` comment, which must
/// agree); Windows: the `cuda_X.Y.Z_…_windows.exe` installer (and `CUDA_ROOT=…/vX.Y`).
fn cuda_version(script: &Script) -> Option<Read> {
    let kind = FactKind::CudaVersion;
    let comment = script.comments().find_map(|(line, text)| {
        let v = text.strip_prefix("Install CUDA ")?;
        Some((line, v.trim_end_matches(':').trim().to_string()))
    });
    if let Some((line, word)) = script.words_with("cuda-nvcc-").first() {
        let here = Place::lines(&script.file, line.first, line.last);
        let text = match script.resolve(word) {
            Ok(r) => r.text,
            Err(why) => return Some(Err(unreadable(kind, here, why))),
        };
        let rest = text.strip_prefix("cuda-nvcc-").unwrap_or("");
        let mut parts = rest.split('-');
        let version = match (parts.next(), parts.next()) {
            (Some(a), Some(b)) if is_number(a) && is_number(b) => format!("{a}.{b}"),
            _ => {
                return Some(Err(unreadable(
                    kind,
                    here,
                    format!("`{text}` is not cuda-nvcc-<major>-<minor>-…"),
                )));
            }
        };
        if let Some((cline, said)) = comment
            && said != version
        {
            return Some(Err(unreadable(
                kind,
                Place::lines(&script.file, cline, line.last),
                format!("the comment says CUDA {said} (line {cline}), the package is {text}"),
            )));
        }
        return Some(Ok(Fact {
            kind,
            value: Value::Version(version),
            at: here,
        }));
    }
    let installers = script.words_with("_windows.exe");
    let Some((line, word)) = installers
        .iter()
        .find(|(_, w)| written(w).contains("/compute/cuda/"))
    else {
        return comment.map(|(line, said)| {
            Err(unreadable(
                kind,
                Place::line(&script.file, line),
                format!(
                    "a comment says CUDA {said}, but no cuda-nvcc package or installer is named"
                ),
            ))
        });
    };
    let here = Place::lines(&script.file, line.first, line.last);
    let url = match script.resolve(word) {
        Ok(r) => r.text,
        Err(why) => return Some(Err(unreadable(kind, here, why))),
    };
    let file = ct2v_support::paths::last_segment(&url);
    let Some(version) = file
        .strip_prefix("cuda_")
        .and_then(|v| v.split('_').next())
        .filter(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.'))
    else {
        return Some(Err(unreadable(
            kind,
            here,
            format!("`{file}` is not cuda_<version>_…_windows.exe"),
        )));
    };
    if let Ok(root) = script.variable("CUDA_ROOT", 0)
        && let Some((_, v)) = root.text.rsplit_once("/v")
        && !(version == v || version.starts_with(&format!("{v}.")))
    {
        return Some(Err(unreadable(
            kind,
            Place::lines(&script.file, root.origins[0], line.last),
            format!(
                "CUDA_ROOT is v{v} (line {}), the installer {file}",
                root.origins[0]
            ),
        )));
    }
    Some(Ok(Fact {
        kind,
        value: Value::Version(version.to_string()),
        at: here,
    }))
}

fn is_number(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// What `rocm[extras]==V` installs, after TheRock's `_dist_info.py` (kpack-split builds):
/// `rocm-sdk-core` always; `libraries` → `rocm-sdk-libraries` (arch-neutral); `devel` →
/// `rocm-sdk-devel`, which only the build uses.
fn rocm_extra(extra: &str) -> Option<(&'static str, bool)> {
    match extra {
        "libraries" => Some(("rocm-sdk-libraries", true)),
        "devel" => Some(("rocm-sdk-devel", false)),
        _ => None,
    }
}

/// The `pip install` of the ROCm SDK: `--index-url URL "rocm[libraries,devel]==V"`, or
/// the wheels' URLs one by one.
fn rocm_sdk(script: &Script) -> Option<Read> {
    let kind = FactKind::RocmSdk;
    let commands = script.commands("pip");
    let Some((line, words)) = commands.iter().find(|(_, words)| {
        words.get(1).map(|w| written(w)) == Some("install".into())
            && words
                .iter()
                .any(|w| written(w).to_ascii_lowercase().contains("rocm"))
    }) else {
        return Some(absent(
            script,
            kind,
            "rocm",
            "the pip install of the ROCm SDK",
        ));
    };
    let at = Place::lines(&script.file, line.first, line.last);
    let fail = |why: String| Some(Err(unreadable(kind, at.clone(), why)));
    let mut sdk = RocmSdk {
        index: None,
        requirement: None,
        runtime: Vec::new(),
        build_only: Vec::new(),
    };
    let mut args = words[2..].iter();
    while let Some(word) = args.next() {
        let text = match script.resolve(word) {
            Ok(r) => r.text,
            Err(why) => return fail(format!("`{}`: {why}", written(word))),
        };
        if let Some(option) = text.strip_prefix('-') {
            let (name, inline) = match option.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (option, None),
            };
            match name {
                "-index-url" | "i" => {
                    let value = match inline {
                        Some(v) => v,
                        None => match args.next().map(|w| script.resolve(w)) {
                            Some(Ok(r)) => r.text,
                            Some(Err(why)) => return fail(format!("--index-url: {why}")),
                            None => return fail("--index-url has no value".into()),
                        },
                    };
                    sdk.index = Some(value);
                }
                "-no-cache-dir" | "-upgrade" | "U" | "-pre" | "q" | "-quiet" | "v" => {}
                _ => return fail(format!("`{text}`: an option this reader does not know")),
            }
            continue;
        }
        let added = if text.contains("://") {
            add_wheel_url(&mut sdk, &text)
        } else {
            add_requirement(&mut sdk, &text)
        };
        if let Err(why) = added {
            return fail(why);
        }
    }
    if sdk.runtime.is_empty() {
        return fail("the pip install names no ROCm SDK run-time wheel".into());
    }
    Some(Ok(Fact {
        kind,
        value: Value::Rocm(sdk),
        at,
    }))
}

/// A wheel or sdist given by URL in the pip install.
fn add_wheel_url(sdk: &mut RocmSdk, text: &str) -> Result<(), String> {
    let file = ct2v_support::paths::last_segment(text);
    let Some((name, version)) = distribution_of(file) else {
        return Err(format!(
            "`{file}` is neither a wheel nor an sdist file name"
        ));
    };
    if name == "rocm" || name == "rocm-sdk-devel" {
        sdk.build_only.push(name);
    } else {
        sdk.runtime.push(Wheel {
            name,
            version,
            url: Some(text.to_string()),
        });
    }
    Ok(())
}

/// A requirement `NAME[extras]==V`: TheRock's `rocm` meta package stands for rocm-sdk-core
/// and, per extra, the wheels it pulls in (`_dist_info.py`).
fn add_requirement(sdk: &mut RocmSdk, text: &str) -> Result<(), String> {
    let (head, version) = match text.split_once("==") {
        Some((h, v)) if !v.is_empty() => (h.trim(), v.trim().to_string()),
        _ => return Err(format!("`{text}` is not pinned to one version with `==`")),
    };
    let (name, extras) = match head.split_once('[') {
        Some((n, e)) => (n, e.trim_end_matches(']')),
        None => (head, ""),
    };
    let name = normalize(name);
    sdk.requirement = Some(text.to_string());
    if name != "rocm" {
        if name == "rocm-sdk-devel" {
            sdk.build_only.push(name);
        } else {
            sdk.runtime.push(Wheel {
                name,
                version,
                url: None,
            });
        }
        return Ok(());
    }
    sdk.build_only.push("rocm".into());
    sdk.runtime.push(Wheel {
        name: "rocm-sdk-core".into(),
        version: version.clone(),
        url: None,
    });
    for extra in extras.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        match rocm_extra(extra) {
            Some((package, true)) => sdk.runtime.push(Wheel {
                name: package.into(),
                version: version.clone(),
                url: None,
            }),
            Some((package, false)) => sdk.build_only.push(package.into()),
            None => {
                return Err(format!(
                    "the extra `{extra}` of `{text}`: this reader knows `libraries` and `devel`"
                ));
            }
        }
    }
    Ok(())
}

/// `rocm_sdk_core-7.2.0.dev0-py3-none-win_amd64.whl` → (`rocm-sdk-core`, `7.2.0.dev0`);
/// `rocm-7.2.0.dev0.tar.gz` → (`rocm`, `7.2.0.dev0`).
fn distribution_of(file: &str) -> Option<(String, String)> {
    if let Some(stem) = file.strip_suffix(".whl") {
        let mut parts = stem.split('-');
        let (name, version) = (parts.next()?, parts.next()?);
        return Some((normalize(name), version.to_string()));
    }
    let stem = file.strip_suffix(".tar.gz").or(file.strip_suffix(".zip"))?;
    let (name, version) = stem.rsplit_once('-')?;
    Some((normalize(name), version.to_string()))
}

/// `-DCMAKE_HIP_ARCHITECTURES="$PYTORCH_ROCM_ARCH"` with that variable's plain assignment.
fn hip_architectures(script: &Script) -> Option<Read> {
    let kind = FactKind::HipArchitectures;
    let words = script.words_with("-DCMAKE_HIP_ARCHITECTURES=");
    let Some((line, word)) = words.first() else {
        return Some(absent(
            script,
            kind,
            "CMAKE_HIP_ARCHITECTURES",
            "-DCMAKE_HIP_ARCHITECTURES",
        ));
    };
    let here = Place::lines(&script.file, line.first, line.last);
    let resolved = match script.resolve(word) {
        Ok(r) => r,
        Err(why) => return Some(Err(unreadable(kind, here, why))),
    };
    let list = define(&resolved.text).map(|(_, v)| v).unwrap_or("");
    let targets: Vec<String> = list
        .split(';')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect();
    if targets.is_empty() || !targets.iter().all(|t| t.starts_with("gfx")) {
        return Some(Err(unreadable(
            kind,
            here,
            format!("`{list}` is not a list of gfx targets"),
        )));
    }
    Some(Ok(Fact {
        kind,
        value: Value::List(targets),
        at: origin(script, (line.first, line.last), &resolved.origins),
    }))
}

/// The folders `python/ctranslate2/__init__.py` adds to the DLL search path on Windows.
///
/// 4.7.1: `os.add_dll_directory(f"{package_dir}/../_rocm_sdk_core/bin")`, one line per
/// folder. 4.8.3+: `os.path.join(site_dir, "_rocm_sdk_core", "bin")` and
/// `glob.glob(os.path.join(site_dir, "_rocm_sdk_libraries*", "bin"))` with
/// `site_dir = os.path.dirname(package_dir)`, and `HIP_PATH\bin` only when none exists.
pub(crate) fn init_dll_folders(file: &str, text: &str) -> Read {
    let kind = FactKind::DllFolders;
    let mut folders = Vec::new();
    let mut fallback = None;
    let mut first = 0;
    let mut last = 0;
    let mut seen = |n: usize| {
        if first == 0 {
            first = n;
        }
        last = n;
    };
    let site_dir = text
        .lines()
        .any(|l| l.replace(' ', "") == "site_dir=os.path.dirname(package_dir)");
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let code = line.split('#').next().unwrap_or("");
        if let Some(rest) = code.split("add_dll_directory(f\"{package_dir}/../").nth(1) {
            let Some(folder) = rest.split('"').next() else {
                continue;
            };
            folders.push(folder.to_string());
            seen(n);
            continue;
        }
        if code.contains("os.environ") && code.contains("HIP_PATH") && code.contains("join(") {
            fallback = Some("%HIP_PATH%\\bin".to_string());
            seen(n);
            continue;
        }
        for join in code.split("os.path.join(").skip(1) {
            let args = join.split(')').next().unwrap_or("");
            let mut parts = args.split(',').map(str::trim);
            let base = parts.next().unwrap_or("");
            if base != "site_dir" {
                continue;
            }
            if !site_dir {
                return Err(unreadable(
                    kind,
                    Place::line(file, n),
                    "`site_dir` is not `os.path.dirname(package_dir)` in this file",
                ));
            }
            let mut path = Vec::new();
            for part in parts {
                match part.strip_prefix('"').and_then(|p| p.strip_suffix('"')) {
                    Some(p) => path.push(p),
                    None => {
                        return Err(unreadable(
                            kind,
                            Place::line(file, n),
                            format!("`{part}` in os.path.join is not a string literal"),
                        ));
                    }
                }
            }
            folders.push(path.join("/"));
            seen(n);
        }
    }
    if folders.is_empty() {
        let line = text
            .lines()
            .position(|l| l.contains("add_dll_directory"))
            .map_or(1, |i| i + 1);
        return Err(unreadable(
            kind,
            Place::line(file, line),
            "no DLL folder in a shape this reader knows (f\"{package_dir}/../X\" or \
             os.path.join(site_dir, …))",
        ));
    }
    Ok(Fact {
        kind,
        value: Value::Folders(DllFolders { folders, fallback }),
        at: Place::lines(file, first, last),
    })
}
