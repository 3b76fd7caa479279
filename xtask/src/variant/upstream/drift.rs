//! Each upstream fact against what our data uses: same, drift (each difference said), accepted
//! (`[upstream.accepted]`, with its reason), or not compared (with why).

use std::collections::BTreeMap;

use serde::Serialize;

use super::facts::{Fact, FactKind, Place, RocmSdk, UpstreamFacts, Value, normalize};
use crate::package::bundle::glob;
use crate::support::platform::Platform;

/// A value of ours and where it is written (`variants/defaults.toml:24`).
#[derive(Debug, Clone)]
pub struct Ours<T> {
    pub value: T,
    pub at: String,
}

/// One SDK wheel of ours as the comparison sees it: the input's name, its `package` ("name
/// version"), where it is downloaded from, and its `sdk-folder`.
#[derive(Debug, Clone)]
pub struct OurWheel {
    pub name: String,
    pub package: Option<String>,
    /// The URL today; the index it comes from once inputs can say so.
    pub location: String,
    pub sdk_folder: String,
    pub at: String,
}

#[derive(Debug, Clone)]
pub struct OurRocm {
    pub wheels: Vec<OurWheel>,
    pub gpu_targets: Option<Ours<Vec<String>>>,
}

/// What our data says, for one CTranslate2 version.
#[derive(Debug, Clone, Default)]
pub struct OurData {
    /// The pybind11 pin of the build-tools requirements file, or why there is none.
    pub pybind11: Option<Result<Ours<String>, String>>,
    pub onednn_version: Option<Result<Ours<String>, String>>,
    pub onednn_cmake: BTreeMap<Platform, Ours<BTreeMap<String, String>>>,
    /// The CUDA majors `[bundle.requires-dist]` of the cuda variant has entries for.
    pub cuda_majors: BTreeMap<Platform, Ours<Vec<String>>>,
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
pub struct Row {
    pub fact: FactKind,
    pub upstream: String,
    pub at: Place,
    pub ours: String,
    pub ours_at: Option<String>,
    #[serde(flatten)]
    pub verdict: Verdict,
    /// Each difference, for a drift.
    pub differences: Vec<String>,
}

/// The platform an upstream file builds for: `…_windows*.sh` and `__init__.py` (its DLL
/// folders are Windows') → Windows, `…_linux*.sh` → Linux, macOS → none of ours.
pub fn platform_of(file: &str) -> Option<Platform> {
    let name = crate::support::paths::last_segment(file);
    if name.contains("_windows") || name == "__init__.py" {
        Some(Platform::WindowsX86_64)
    } else if name.contains("_linux") {
        Some(Platform::LinuxX86_64)
    } else {
        None
    }
}

/// Every fact against ours, without `[upstream.accepted]` (see [`accept`]).
pub fn compare(facts: &UpstreamFacts, ours: &OurData) -> Vec<Row> {
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
    let platform = platform_of(&fact.at.file);
    let not_compared = |mut row: Row, why: String| {
        row.verdict = Verdict::NotCompared(why);
        row
    };
    let rocm = |platform: Option<Platform>| match platform {
        None => Err("none of our platforms builds with this file".to_string()),
        Some(p) => ours
            .rocm
            .get(&p)
            .ok_or(format!("the rocm variant is not built for {}", p.name())),
    };
    let differences = match (&fact.value, fact.kind) {
        (Value::Version(up), FactKind::Pybind11 | FactKind::OnednnVersion) => {
            let (what, mine) = match fact.kind {
                FactKind::Pybind11 => ("the build tools install pybind11", &ours.pybind11),
                _ => ("our oneDNN is", &ours.onednn_version),
            };
            match mine {
                None => return not_compared(row, "no data of ours to compare".into()),
                Some(Err(why)) => return not_compared(row, why.clone()),
                Some(Ok(mine)) => {
                    row.ours = mine.value.clone();
                    row.ours_at = Some(mine.at.clone());
                    if &mine.value == up {
                        vec![]
                    } else {
                        vec![format!(
                            "upstream {up} ({}), {what} {} ({})",
                            fact.at, mine.value, mine.at
                        )]
                    }
                }
            }
        }
        (Value::Options(up), _) => {
            let Some(mine) = platform.and_then(|p| ours.onednn_cmake.get(&p)) else {
                return not_compared(row, "none of our platforms builds with this file".into());
            };
            // Ours as far as upstream sets options; what only ours sets is counted.
            let named: BTreeMap<String, String> = mine
                .value
                .iter()
                .filter(|(k, _)| up.contains_key(*k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let more = mine.value.len() - named.len();
            row.ours = Value::Options(named).to_string();
            if more > 0 {
                row.ours.push_str(&format!(" (+{more} of ours)"));
            }
            row.ours_at = Some(mine.at.clone());
            up.iter()
                .filter_map(|(name, value)| match mine.value.get(name) {
                    Some(v) if cmake_value(v) == cmake_value(value) => None,
                    Some(v) => Some(format!("{name}: upstream {value}, ours {v}")),
                    None => Some(format!("{name}={value} upstream, not set by ours")),
                })
                .collect()
        }
        (Value::Version(up), FactKind::CudaVersion) => {
            let Some(mine) = platform.and_then(|p| ours.cuda_majors.get(&p)) else {
                return not_compared(
                    row,
                    "the cuda variant is not built for this platform".into(),
                );
            };
            row.ours = format!("requires-dist for CUDA {}", mine.value.join(", "));
            row.ours_at = Some(mine.at.clone());
            let major = up.split('.').next().unwrap_or(up);
            if mine.value.iter().any(|m| m == major) {
                vec![]
            } else {
                vec![format!(
                    "upstream builds with CUDA {up} ({}); [bundle.requires-dist] ({}) has no \
                     entry \"{major}\"",
                    fact.at, mine.at
                )]
            }
        }
        (Value::Rocm(up), _) => match rocm(platform) {
            Err(why) => return not_compared(row, why),
            Ok(mine) => {
                row.ours = wheels_text(&mine.wheels);
                row.ours_at = mine.wheels.first().map(|w| w.at.clone());
                rocm_differences(up, &fact.at, &mine.wheels)
            }
        },
        (Value::List(up), _) => match rocm(platform) {
            Err(why) => return not_compared(row, why),
            Ok(OurRocm {
                gpu_targets: None, ..
            }) => return not_compared(row, "the rocm variant has no gpu-targets".into()),
            Ok(OurRocm {
                gpu_targets: Some(mine),
                ..
            }) => {
                row.ours = mine.value.join(";");
                row.ours_at = Some(mine.at.clone());
                let mut d: Vec<String> = up
                    .iter()
                    .filter(|t| !mine.value.contains(t))
                    .map(|t| format!("upstream builds {t}, ours has no {t}"))
                    .collect();
                d.extend(
                    mine.value
                        .iter()
                        .filter(|t| !up.contains(t))
                        .map(|t| format!("ours has {t}, which upstream does not build")),
                );
                d
            }
        },
        (Value::Folders(up), _) => match rocm(platform) {
            Err(why) => return not_compared(row, why),
            Ok(mine) => {
                let folders: Vec<String> = mine
                    .wheels
                    .iter()
                    .map(|w| format!("{}/bin", w.sdk_folder))
                    .collect();
                row.ours = folders.join(", ");
                row.ours_at = mine.wheels.first().map(|w| w.at.clone());
                up.folders
                    .iter()
                    .filter(|f| !folders.iter().any(|o| glob::matches(f, o)))
                    .map(|f| {
                        format!(
                            "upstream's __init__.py adds {f} ({}), which is no <sdk-folder>/bin \
                             of ours",
                            fact.at
                        )
                    })
                    .collect()
            }
        },
        (value, kind) => vec![format!("a {kind} fact of an unexpected kind: {value}")],
    };
    if !differences.is_empty() {
        row.verdict = Verdict::Drift;
        row.differences = differences;
    }
    row
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
pub fn site_folder(name: &str) -> String {
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
pub struct Acceptance {
    pub fact: String,
    pub reason: String,
    pub at: String,
}

/// Marks the drifts an acceptance names as accepted; returns the acceptances that matched no
/// drift (stale: the data now agrees, or upstream moved).
pub fn accept(rows: &mut [Row], accepted: &[Acceptance]) -> Vec<Acceptance> {
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
