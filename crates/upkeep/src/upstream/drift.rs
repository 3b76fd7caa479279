//! Each upstream fact against what our data uses: same, drift (each difference said), accepted
//! (`[upstream.accepted]`, with its reason), or not compared (with why).

use std::collections::BTreeMap;

use serde::Serialize;

use super::facts::{Fact, FactKind, Place, RocmSdk, UpstreamFacts, Value, normalize};
use ct2v_bundle::bundler::glob;
use ct2v_support::platform::Platform;

/// A value of ours and where it is written (`variants/defaults.toml:24`).
#[derive(Debug, Clone)]
pub(crate) struct Ours<T> {
    pub value: T,
    pub at: String,
}

/// One SDK wheel of ours as the comparison sees it: the input's name, its `package` ("name
/// version"), where it is downloaded from, and its `sdk-folder`.
#[derive(Debug, Clone)]
pub(crate) struct OurWheel {
    pub name: String,
    pub package: Option<String>,
    /// The URL today; the index it comes from once inputs can say so.
    pub location: String,
    pub(crate) sdk_folder: String,
    pub at: String,
}

#[derive(Debug, Clone)]
pub(crate) struct OurRocm {
    pub wheels: Vec<OurWheel>,
    pub gpu_targets: Option<Ours<Vec<String>>>,
}

/// What our data says, for one CTranslate2 version.
#[derive(Debug, Clone, Default)]
pub(crate) struct OurData {
    /// The pybind11 pin of the build-tools requirements file, or why there is none.
    pub pybind11: Option<Result<Ours<String>, String>>,
    pub(crate) onednn_version: Option<Result<Ours<String>, String>>,
    pub(crate) onednn_cmake: BTreeMap<Platform, Ours<BTreeMap<String, String>>>,
    /// The CUDA majors `[bundle.requires-dist]` of the cuda variant has entries for.
    pub(crate) cuda_majors: BTreeMap<Platform, Ours<Vec<String>>>,
    /// The rocm variant, on each platform it is built for.
    pub rocm: BTreeMap<Platform, OurRocm>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", content = "reason", rename_all = "kebab-case")]
pub enum Verdict {
    Same,
    Drift,
    Accepted(String),
    NotCompared(String),
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Row {
    pub fact: FactKind,
    pub upstream: String,
    pub at: Place,
    pub ours: String,
    pub(crate) ours_at: Option<String>,
    #[serde(flatten)]
    pub verdict: Verdict,
    /// Each difference, for a drift.
    pub(crate) differences: Vec<String>,
}

/// The platform an upstream file builds for: `…_windows*.sh` and `__init__.py` (its DLL
/// folders are Windows') → Windows, `…_linux*.sh` → Linux, macOS → none of ours.
pub(crate) fn platform_of(file: &str) -> Option<Platform> {
    let name = ct2v_support::paths::last_segment(file);
    if name.contains("_windows") || name == "__init__.py" {
        Some(Platform::WindowsX86_64)
    } else if name.contains("_linux") {
        Some(Platform::LinuxX86_64)
    } else {
        None
    }
}

/// Every fact against ours, without `[upstream.accepted]` (see [`accept`]).
pub(crate) fn compare(facts: &UpstreamFacts, ours: &OurData) -> Vec<Row> {
    let mut rows: Vec<Row> = facts.facts.iter().map(|f| compare_one(f, ours)).collect();
    let pins: Vec<&Fact> = facts.of(FactKind::Pybind11).collect();
    if let [a, b, ..] = pins.as_slice()
        && a.value != b.value
    {
        rows.push(Row {
            fact: FactKind::Pybind11,
            upstream: format!("{} ({}) vs {} ({})", a.value, a.at, b.value, b.at),
            at: a.at.clone(),
            ours: String::new(),
            ours_at: None,
            verdict: Verdict::Drift,
            differences: vec![format!(
                "upstream disagrees with itself: {} says {}, {} says {}",
                a.at, a.value, b.at, b.value
            )],
        });
    }
    rows
}

fn compare_one(fact: &Fact, ours: &OurData) -> Row {
    let mut row = Row {
        fact: fact.kind,
        upstream: fact.value.to_string(),
        at: fact.at.clone(),
        ours: String::new(),
        ours_at: None,
        verdict: Verdict::Same,
        differences: Vec::new(),
    };
    match compare_value(fact, ours) {
        Err(why) => row.verdict = Verdict::NotCompared(why),
        Ok(compared) => {
            row.ours = compared.ours;
            row.ours_at = compared.ours_at;
            if !compared.differences.is_empty() {
                row.verdict = Verdict::Drift;
                row.differences = compared.differences;
            }
        }
    }
    row
}

/// Ours as the row shows it, and each difference in words.
struct Compared {
    ours: String,
    ours_at: Option<String>,
    differences: Vec<String>,
}

/// `Err`: why the fact is not compared.
type Comparison = Result<Compared, String>;

fn compare_value(fact: &Fact, ours: &OurData) -> Comparison {
    let platform = platform_of(&fact.at.file);
    let rocm = || match platform {
        None => Err("none of our platforms builds with this file".to_string()),
        Some(p) => ours
            .rocm
            .get(&p)
            .ok_or(format!("the rocm variant is not built for {}", p.name())),
    };
    match (&fact.value, fact.kind) {
        (Value::Version(up), FactKind::Pybind11) => compare_version(
            fact,
            up,
            "the build tools install pybind11",
            ours.pybind11.as_ref(),
        ),
        (Value::Version(up), FactKind::OnednnVersion) => {
            compare_version(fact, up, "our oneDNN is", ours.onednn_version.as_ref())
        }
        (Value::Options(up), _) => {
            let mine = platform
                .and_then(|p| ours.onednn_cmake.get(&p))
                .ok_or("none of our platforms builds with this file")?;
            Ok(compare_options(up, mine))
        }
        (Value::Version(up), FactKind::CudaVersion) => {
            let mine = platform
                .and_then(|p| ours.cuda_majors.get(&p))
                .ok_or("the cuda variant is not built for this platform")?;
            Ok(compare_cuda(fact, up, mine))
        }
        (Value::Rocm(up), _) => {
            let mine = rocm()?;
            Ok(Compared {
                ours: wheels_text(&mine.wheels),
                ours_at: mine.wheels.first().map(|w| w.at.clone()),
                differences: rocm_differences(up, &fact.at, &mine.wheels),
            })
        }
        (Value::List(up), _) => {
            let mine = rocm()?
                .gpu_targets
                .as_ref()
                .ok_or("the rocm variant has no gpu-targets")?;
            Ok(compare_targets(up, mine))
        }
        (Value::Folders(up), _) => Ok(compare_folders(fact, &up.folders, rocm()?)),
        (value, kind) => Ok(Compared {
            ours: String::new(),
            ours_at: None,
            differences: vec![format!("a {kind} fact of an unexpected kind: {value}")],
        }),
    }
}

fn compare_version(
    fact: &Fact,
    up: &str,
    what: &str,
    mine: Option<&Result<Ours<String>, String>>,
) -> Comparison {
    let mine = match mine {
        None => return Err("no data of ours to compare".into()),
        Some(Err(why)) => return Err(why.clone()),
        Some(Ok(mine)) => mine,
    };
    let differences = if mine.value == up {
        vec![]
    } else {
        vec![format!(
            "upstream {up} ({}), {what} {} ({})",
            fact.at, mine.value, mine.at
        )]
    };
    Ok(Compared {
        ours: mine.value.clone(),
        ours_at: Some(mine.at.clone()),
        differences,
    })
}

fn compare_options(
    up: &BTreeMap<String, String>,
    mine: &Ours<BTreeMap<String, String>>,
) -> Compared {
    // Ours as far as upstream sets options; what only ours sets is counted.
    let named: BTreeMap<String, String> = mine
        .value
        .iter()
        .filter(|(k, _)| up.contains_key(*k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let more = mine.value.len() - named.len();
    let mut shown = Value::Options(named).to_string();
    if more > 0 {
        shown.push_str(&format!(" (+{more} of ours)"));
    }
    Compared {
        ours: shown,
        ours_at: Some(mine.at.clone()),
        differences: up
            .iter()
            .filter_map(|(name, value)| match mine.value.get(name) {
                Some(v) if cmake_value(v) == cmake_value(value) => None,
                Some(v) => Some(format!("{name}: upstream {value}, ours {v}")),
                None => Some(format!("{name}={value} upstream, not set by ours")),
            })
            .collect(),
    }
}

fn compare_cuda(fact: &Fact, up: &str, mine: &Ours<Vec<String>>) -> Compared {
    let major = up.split('.').next().unwrap_or(up);
    let differences = if mine.value.iter().any(|m| m == major) {
        vec![]
    } else {
        vec![format!(
            "upstream builds with CUDA {up} ({}); [bundle.requires-dist] ({}) has no \
             entry \"{major}\"",
            fact.at, mine.at
        )]
    };
    Compared {
        ours: format!("requires-dist for CUDA {}", mine.value.join(", ")),
        ours_at: Some(mine.at.clone()),
        differences,
    }
}

fn compare_targets(up: &[String], mine: &Ours<Vec<String>>) -> Compared {
    let mut differences: Vec<String> = up
        .iter()
        .filter(|t| !mine.value.contains(t))
        .map(|t| format!("upstream builds {t}, ours has no {t}"))
        .collect();
    differences.extend(
        mine.value
            .iter()
            .filter(|t| !up.contains(t))
            .map(|t| format!("ours has {t}, which upstream does not build")),
    );
    Compared {
        ours: mine.value.join(";"),
        ours_at: Some(mine.at.clone()),
        differences,
    }
}

fn compare_folders(fact: &Fact, up: &[String], mine: &OurRocm) -> Compared {
    let folders: Vec<String> = mine
        .wheels
        .iter()
        .map(|w| format!("{}/bin", w.sdk_folder))
        .collect();
    let differences = up
        .iter()
        .filter(|f| !folders.iter().any(|o| glob::matches(f, o)))
        .map(|f| {
            format!(
                "upstream's __init__.py adds {f} ({}), which is no <sdk-folder>/bin of ours",
                fact.at
            )
        })
        .collect();
    Compared {
        ours: folders.join(", "),
        ours_at: mine.wheels.first().map(|w| w.at.clone()),
        differences,
    }
}

/// ON/TRUE/1 and OFF/FALSE/0 are the same to CMake.
fn cmake_value(value: &str) -> String {
    match value.to_ascii_uppercase().as_str() {
        "ON" | "TRUE" | "YES" | "1" => "ON".into(),
        "OFF" | "FALSE" | "NO" | "0" => "OFF".into(),
        _ => value.to_string(),
    }
}

fn wheels_text(wheels: &[OurWheel]) -> String {
    let packages: Vec<String> = wheels
        .iter()
        .map(|w| w.package.clone().unwrap_or_else(|| w.name.clone()))
        .collect();
    let locations: Vec<&str> = wheels.iter().map(|w| w.location.as_str()).collect();
    format!(
        "{} from {}",
        packages.join(", "),
        super::facts::common_folder(&locations)
    )
}

/// The folder a wheel installs into site-packages: `_` + its name with `-` as `_`
/// (TheRock's `py_packaging.py`: `rocm-sdk-core` → `_rocm_sdk_core`).
pub(crate) fn site_folder(name: &str) -> String {
    format!("_{}", normalize(name).replace('-', "_"))
}

fn rocm_differences(up: &RocmSdk, at: &Place, mine: &[OurWheel]) -> Vec<String> {
    let mut d = Vec::new();
    let source = match (&up.requirement, &up.index) {
        (Some(r), Some(i)) => format!("{r} from {i}"),
        (Some(r), None) => r.clone(),
        (None, _) => "its URLs".into(),
    };
    let parsed: Vec<Option<(String, String)>> = mine
        .iter()
        .map(|w| {
            let (name, version) = w.package.as_deref()?.split_once(' ')?;
            Some((normalize(name), version.trim().to_string()))
        })
        .collect();
    for wheel in &up.runtime {
        if !parsed
            .iter()
            .flatten()
            .any(|(n, v)| *n == wheel.name && *v == wheel.version)
        {
            d.push(format!(
                "upstream's {source} ({at}) installs {} {}, which no input of ours is",
                wheel.name, wheel.version
            ));
        }
    }
    let folders: Vec<String> = up.runtime.iter().map(|w| site_folder(&w.name)).collect();
    for (wheel, parsed) in mine.iter().zip(&parsed) {
        match parsed {
            None => d.push(format!(
                "input `{}` ({}) has no `package = \"name version\"`",
                wheel.name, wheel.at
            )),
            Some((n, v)) if !up.runtime.iter().any(|w| w.name == *n && w.version == *v) => {
                d.push(format!(
                    "input `{}` ({}) is {n} {v}, which upstream does not install",
                    wheel.name, wheel.at
                ))
            }
            Some(_) => {}
        }
        if let Some(index) = &up.index
            && !wheel.location.starts_with(index.as_str())
        {
            d.push(format!(
                "input `{}` comes from {}, not from upstream's index {index}",
                wheel.name, wheel.location
            ));
        }
        if let Some((n, _)) = parsed
            && let Some(url) = up
                .runtime
                .iter()
                .find(|w| w.name == *n)
                .and_then(|w| w.url.as_ref())
            && *url != wheel.location
        {
            d.push(format!(
                "input `{}` comes from {}, upstream from {url}",
                wheel.name, wheel.location
            ));
        }
        if !folders.contains(&wheel.sdk_folder) {
            d.push(format!(
                "input `{}` has sdk-folder `{}`; upstream's wheels install {}",
                wheel.name,
                wheel.sdk_folder,
                folders.join(" and ")
            ));
        }
    }
    d
}

/// An `[upstream.accepted]` entry: the fact's name, the reason, where it is written.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Acceptance {
    pub fact: String,
    pub reason: String,
    pub at: String,
}

/// Marks the drifts an acceptance names as accepted; returns the acceptances that matched no
/// drift (stale: the data now agrees, or upstream moved).
pub(crate) fn accept(rows: &mut [Row], accepted: &[Acceptance]) -> Vec<Acceptance> {
    let mut stale = Vec::new();
    for acceptance in accepted {
        let mut used = false;
        for row in rows.iter_mut() {
            if row.fact.name() == acceptance.fact && row.verdict == Verdict::Drift {
                row.verdict = Verdict::Accepted(acceptance.reason.clone());
                used = true;
            } else if row.fact.name() == acceptance.fact
                && matches!(row.verdict, Verdict::Accepted(_))
            {
                used = true;
            }
        }
        if !used {
            stale.push(acceptance.clone());
        }
    }
    stale
}
