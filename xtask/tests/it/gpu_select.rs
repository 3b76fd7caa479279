//! Which GPUs each variant serves, and the selector an app runs: the generated data block of
//! `crates/pipeline/python/ct2_variant_select.py` and the README's card table must be what
//! `variants --json` / `--markdown` print now (`CT2V_UPDATE_SELECTOR=1` rewrites both); the
//! selector passes its fixtures (xtask/tests/python/, recorded outputs in
//! xtask/tests/data/gpu_select/) under the system python3; bad variant data is refused with
//! the file named; `release` writes `variants.json` into the manifest and SHA256SUMS; `doctor`
//! names what the selector names on every card; the selector answers `cpu` cleanly in
//! python.org's Windows CPython under wine 8.

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::common::{Scratch, repo_root, xtask};

pub(crate) const SELECTOR: &str = "crates/pipeline/python/ct2_variant_select.py";
pub(crate) const DATA_BEGIN: &str = "# --- generated data: begin ---\n";
pub(crate) const DATA_END: &str = "# --- generated data: end ---";
const README_BEGIN: &str = "<!-- cards: begin -->\n";
const README_END: &str = "<!-- cards: end -->";

/// `text` with what lies between `begin` and `end` replaced by `block`; `None` when the markers
/// are missing.
pub(crate) fn replaced(text: &str, begin: &str, end: &str, block: &str) -> Option<String> {
    let start = text.find(begin)? + begin.len();
    let stop = start + text[start..].find(end)?;
    Some(format!("{}{block}{}", &text[..start], &text[stop..]))
}

pub(crate) fn data_block(json: &str) -> String {
    format!("DATA = json.loads(r\"\"\"\n{}\n\"\"\")\n", json.trim_end())
}

fn check_or_update(path: &str, begin: &str, end: &str, block: &str) {
    let file = repo_root().join(path);
    let text = fs::read_to_string(&file).unwrap();
    let want = replaced(&text, begin, end, block)
        .unwrap_or_else(|| panic!("{path} lacks the markers {begin:?} … {end:?}"));
    if want == text {
        return;
    }
    if std::env::var_os("CT2V_UPDATE_SELECTOR").is_some() {
        fs::write(&file, want).unwrap();
        return;
    }
    panic!(
        "{path} is not what the variant files say now: run \
         `CT2V_UPDATE_SELECTOR=1 cargo test -p xtask --test it -- gpu_select` and commit the result"
    );
}

#[test]
fn the_selector_data_and_the_readme_table_are_current() {
    let json = xtask(&["variants", "--json"]);
    assert_eq!(json.code, 0, "{}", json.stderr);
    let parsed: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(parsed["schema_version"], 1);
    check_or_update(SELECTOR, DATA_BEGIN, DATA_END, &data_block(&json.stdout));
    let table = xtask(&["variants", "--markdown"]);
    assert_eq!(table.code, 0, "{}", table.stderr);
    check_or_update("README.md", README_BEGIN, README_END, &table.stdout);
}

#[test]
fn the_coverage_says_what_the_maintainers_know() {
    let json = xtask(&["variants", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let served = |target: &str| -> Vec<String> {
        let card = v["cards"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["target"] == target)
            .unwrap_or_else(|| panic!("no card {target}"));
        card["served_by"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                format!(
                    "{}+{}",
                    s["variant"].as_str().unwrap(),
                    s["local_version"].as_str().unwrap()
                )
            })
            .collect()
    };
    // Every target of TheRock's `[device-*]` table has its ROCm 10 family wheel; RDNA 1 beside
    // the HIP SDK 6.2 builds that doctor and the selector keep choosing for it.
    assert_eq!(
        served("gfx1010"),
        ["rocm-gfx1010+gfx1010", "rocm-rdna1+rocm10.rdna1"]
    );
    for rdna1 in ["gfx1011", "gfx1012"] {
        assert_eq!(
            served(rdna1),
            ["rocm-gfx1012+gfx1012", "rocm-rdna1+rocm10.rdna1"],
            "{rdna1}"
        );
    }
    let family = |target: &str| -> &'static str {
        match &target[..6] {
            "gfx103" => "rocm-rdna2+rocm10.rdna2",
            "gfx110" => "rocm-rdna3+rocm10.rdna3",
            "gfx115" => "rocm-rdna35+rocm10.rdna35",
            _ => "rocm-rdna4+rocm10.rdna4",
        }
    };
    for (target, others) in [
        ("gfx1030", &["rocm+rocm72"][..]),
        ("gfx1031", &["rocm-gfx1031+gfx1031"]),
        ("gfx1032", &["rocm-gfx1032+gfx1032"]),
        ("gfx1033", &[]),
        ("gfx1034", &["rocm-gfx1034+gfx1034"]),
        ("gfx1035", &["rocm-gfx1034+gfx1034"]),
        ("gfx1036", &["rocm-gfx1034+gfx1034"]),
        ("gfx1100", &["rocm+rocm72"]),
        ("gfx1101", &["rocm+rocm72"]),
        ("gfx1102", &["rocm+rocm72"]),
        ("gfx1103", &["rocm-gfx1103+gfx1103"]),
        ("gfx1150", &["rocm+rocm72"]),
        ("gfx1151", &["rocm+rocm72"]),
        ("gfx1152", &[]),
        ("gfx1153", &[]),
        ("gfx1200", &["rocm+rocm72"]),
        ("gfx1201", &["rocm+rocm72"]),
    ] {
        let mut want: Vec<String> = others.iter().map(|s| s.to_string()).collect();
        want.push(family(target).to_string());
        want.sort();
        let mut got = served(target);
        got.sort();
        assert_eq!(got, want, "{target}");
    }
    for unserved in ["5.0", "5.2"] {
        assert!(
            served(unserved).is_empty(),
            "{unserved}: {:?}",
            served(unserved)
        );
    }
    assert_eq!(served("6.1"), ["cuda+cu12"], "CUDA 13 dropped Pascal");
    assert_eq!(served("8.6"), ["cuda+cu12", "cuda+cu13"]);
    assert_eq!(served("12.0"), ["cuda+cu12", "cuda+cu13"], "RTX 50: sm_120");
    let cuda = v["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "cuda")
        .unwrap();
    let cu12 = &cuda["builds"][0]["nvidia"];
    assert_eq!(
        cu12["cuda_arch_list"],
        "5.3;6.0;6.1;7.0;7.5;8.0;8.6;8.9;9.0;10.0;12.0;12.0+PTX"
    );
    assert_eq!(cu12["ptx"], serde_json::json!(["12.0"]));
    assert_eq!(cu12["driver_min_linux"], "525.60.13");
    assert_eq!(cu12["driver_min_windows"], "528.33");
    assert_eq!(cuda["builds"][1]["nvidia"]["driver_min_windows"], "580");
    let markdown = xtask(&["variants", "--markdown"]).stdout;
    assert!(
        markdown.contains(
            "| AMD RDNA 2: RX 6650 XT, 6600 XT, 6600 | gfx1032 | `rocm-gfx1032` (`+gfx1032`); `rocm-rdna2` (`+rocm10.rdna2`) |"
        ),
        "{markdown}"
    );
    assert!(
        markdown.contains("`rocm` (`+rocm72`, Windows only)"),
        "{markdown}"
    );
}

#[test]
fn the_selector_passes_its_fixtures_under_the_system_python() {
    let root = repo_root();
    let version = Command::new("python3")
        .args(["-c", "import sys; print(sys.version_info >= (3, 10))"])
        .output();
    match version {
        Ok(out) if String::from_utf8_lossy(&out.stdout).trim() == "True" => {}
        _ => {
            eprintln!("skipped: no python3 3.10 or newer");
            return;
        }
    }
    let out = Command::new("python3")
        .args(["-B", "-m", "unittest", "discover", "-v", "-s"])
        .arg(root.join("xtask/tests/python"))
        .args(["-p", "test_ct2_variant_select.py"])
        .env("PYTHONPATH", root.join("crates/pipeline/python"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("OK"), "{stderr}");
}

#[test]
fn coverage_that_cannot_be_known_is_refused_with_the_file() {
    let scratch = Scratch::new();
    let cuda = scratch.path().join("variants/cuda.toml");
    let text = fs::read_to_string(&cuda).unwrap();
    fs::write(
        &cuda,
        text.replace("cuda-arch = \"Common\"", "cuda-arch = \"Turing\""),
    )
    .unwrap();
    let run = scratch.run(&["variants", "--json"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("variants/cuda.toml"), "{}", run.stderr);
    assert!(run.stderr.contains("`Turing`"), "{}", run.stderr);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);

    let scratch = Scratch::new();
    let rocm = scratch.path().join("variants/rocm.toml");
    let text = fs::read_to_string(&rocm).unwrap();
    let without: String = text
        .lines()
        .filter(|l| !l.starts_with("gpu-targets"))
        .map(|l| format!("{l}\n"))
        .collect();
    fs::write(&rocm, without).unwrap();
    let run = scratch.run(&["variants", "--markdown"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("variants/rocm.toml"), "{}", run.stderr);
    assert!(run.stderr.contains("gpu-targets"), "{}", run.stderr);
}

#[test]
fn a_release_carries_its_selector_data() {
    let scratch = Scratch::new();
    crate::release::fake_build(&scratch, "3.12");
    let out = scratch.path().join("target/dist/sel");
    let run = crate::release::release(&scratch, &out, "3.12");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let data: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("variants.json")).unwrap()).unwrap();
    let variants = data["variants"].as_array().unwrap();
    assert_eq!(variants.len(), 1, "only what was released: {variants:?}");
    assert_eq!(variants[0]["name"], "cpu");
    assert_eq!(
        variants[0]["platforms"],
        serde_json::json!(["linux-x86_64"])
    );
    let build = &variants[0]["builds"][0];
    assert_eq!(build["requirement"], "ctranslate2==4.7.1+cpu");
    assert!(build["download_size"]["linux-x86_64"].as_u64().unwrap() > 0);
    let manifest: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    let row = manifest["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["path"] == "variants.json")
        .expect("variants.json in the manifest");
    assert_eq!(row["kind"], "selector-data");
    let sums = fs::read_to_string(out.join("SHA256SUMS")).unwrap();
    assert!(sums.contains("  variants.json\n"), "{sums}");
    let verify = scratch.run(&["verify-release", out.to_str().unwrap()]);
    assert_eq!(verify.code, 0, "{}{}", verify.stdout, verify.stderr);
    // The selector reads it (only cpu was released, so any machine gets cpu).
    let answer = Command::new("python3")
        .arg(repo_root().join(SELECTOR))
        .args(["--json", "--platform", "linux-x86_64", "--root"])
        .arg(Path::new(scratch.path()))
        .arg("--data")
        .arg(out.join("variants.json"))
        .output()
        .unwrap();
    assert!(
        answer.status.success(),
        "{}",
        String::from_utf8_lossy(&answer.stderr)
    );
    let answer: serde_json::Value = serde_json::from_slice(&answer.stdout).unwrap();
    assert_eq!(answer["requirement"], "ctranslate2==4.7.1+cpu");
}

/// A GPU as both tools see it: the doctor's facts (nvidia-smi's query, rocminfo/hipinfo's gfx)
/// and the selector's recorded outputs (nvidia-smi's query, the PnP device ID on Windows, the
/// PCI IDs in sysfs on Linux).
#[derive(Debug, Clone)]
pub(crate) enum Gpu {
    Nvidia { cc: String, driver: String },
    Amd { gfx: String },
}

/// The selector's answer (`--json`) on `platform` for a machine with `gpus`: a fake
/// `nvidia-smi` and `powershell.exe` on a PATH of their own, a sysfs tree as `--root`.
fn selector_answer(
    python: &Path,
    platform: &str,
    gpus: &[Gpu],
    pci: &dyn Fn(&str) -> String,
) -> serde_json::Value {
    selector_answer_of(&repo_root().join(SELECTOR), python, platform, gpus, pci)
}

/// [`selector_answer`] of the selector script `selector` (a scratch copy).
pub(crate) fn selector_answer_of(
    selector: &Path,
    python: &Path,
    platform: &str,
    gpus: &[Gpu],
    pci: &dyn Fn(&str) -> String,
) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    let root = dir.path().join("root");
    fs::create_dir_all(&bin).unwrap();
    fs::create_dir_all(&root).unwrap();
    let fake = |name: &str, text: &str| {
        let out = bin.join(format!("{name}.out"));
        fs::write(&out, text).unwrap();
        crate::common::write_script(
            &bin.join(name),
            &format!("#!/bin/sh\nexec /bin/cat '{}'\n", out.display()),
        );
    };
    let smi: String = gpus
        .iter()
        .filter_map(|g| match g {
            Gpu::Nvidia { cc, driver } => Some(format!("NVIDIA Test {cc}, {cc}, {driver}\n")),
            Gpu::Amd { .. } => None,
        })
        .collect();
    if !smi.is_empty() {
        fake("nvidia-smi", &smi);
    }
    let amd: Vec<String> = gpus
        .iter()
        .filter_map(|g| match g {
            Gpu::Amd { gfx } => Some(pci(gfx)),
            Gpu::Nvidia { .. } => None,
        })
        .collect();
    if platform.starts_with("windows") {
        let lines: String = amd
            .iter()
            .map(|d| {
                format!(
                    "PCI\\VEN_1002&DEV_{}&SUBSYS_0&REV_00\\6&0|AMD Test\r\n",
                    d.to_uppercase()
                )
            })
            .collect();
        fake(
            "powershell.exe",
            &format!("ROOT\\BASICDISPLAY\\0000|Microsoft Basic Display Adapter\r\n{lines}"),
        );
    } else {
        for (n, device) in amd.iter().enumerate() {
            let card = root.join(format!("sys/class/drm/card{n}/device"));
            fs::create_dir_all(&card).unwrap();
            fs::write(card.join("vendor"), "0x1002\n").unwrap();
            fs::write(card.join("device"), format!("0x{device}\n")).unwrap();
        }
    }
    let out = Command::new(python)
        .arg("-B")
        .arg(selector)
        .args(["--json", "--platform", platform, "--root"])
        .arg(&root)
        .env("PATH", &bin)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The doctor's verdict and the selector's answer name the same variant and build for every
/// card of the coverage table, on every platform a variant is built for, and for a few
/// machines with several GPUs, an old driver or none; an unserved card is "not served yet" in
/// the doctor's words, with the reason.
#[test]
fn the_doctor_and_the_selector_agree_on_every_card() {
    use ct2v_pipeline::doctor::{AmdGpu, Chosen, Facts, NvidiaGpu, recommend};
    // The interpreter itself (a pyenv shim needs a PATH the selector's runs do not have).
    let python = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|p| !p.is_empty());
    let Some(python) = python.map(std::path::PathBuf::from) else {
        eprintln!("skipped: no python3");
        return;
    };
    let catalog = ct2v_pipeline::variant::Catalog::load(&repo_root(), &[]).unwrap();
    let coverage = ct2v_pipeline::variant::coverage::of_catalog(&catalog).unwrap();
    let pci = |gfx: &str| -> String {
        coverage
            .amd_pci_ids
            .devices
            .iter()
            .find(|d| d.gfx == gfx)
            .unwrap_or_else(|| panic!("no PCI ID for {gfx}"))
            .device
            .clone()
    };
    let nvidia = |cc: &str, driver: &str| Gpu::Nvidia {
        cc: cc.into(),
        driver: driver.into(),
    };
    let amd = |gfx: &str| Gpu::Amd { gfx: gfx.into() };
    // A target with no PCI ID in the GPU data (pci.ids has none of the Radeon 820M, gfx1153,
    // yet) cannot be shown to the selector by its PCI ID, so it is left out here (the
    // selector's own test names it).
    let has_pci_id = |gfx: &str| coverage.amd_pci_ids.devices.iter().any(|d| d.gfx == gfx);
    let mut machines: Vec<Vec<Gpu>> = coverage
        .cards
        .iter()
        .filter(|card| card.vendor == "NVIDIA" || has_pci_id(&card.target))
        .map(|card| {
            vec![if card.vendor == "NVIDIA" {
                nvidia(&card.target, "999.99")
            } else {
                amd(&card.target)
            }]
        })
        .collect();
    assert!(machines.len() > 20, "{}", machines.len());
    machines.extend([
        vec![],
        vec![nvidia("8.6", "500.10")],
        vec![nvidia("5.2", "999.99"), amd("gfx1010")],
        vec![nvidia("8.6", "999.99"), amd("gfx1032")],
        vec![nvidia("12.0", "999.99"), amd("gfx1100")],
        vec![amd("gfx1103"), amd("gfx1100")],
        vec![amd("gfx1151"), amd("gfx1100")],
        vec![amd("gfx1032"), amd("gfx1030")],
    ]);
    let platforms: std::collections::BTreeSet<&str> = coverage
        .variants
        .iter()
        .flat_map(|v| v.platforms.iter().map(String::as_str))
        .collect();
    let mut compared = 0;
    for platform in platforms {
        let (os, arch) = platform.split_once('-').unwrap();
        for gpus in &machines {
            let facts = Facts {
                os: os.into(),
                arch: arch.into(),
                nvidia_gpus: gpus
                    .iter()
                    .filter_map(|g| match g {
                        Gpu::Nvidia { cc, driver } => Some(NvidiaGpu {
                            name: format!("NVIDIA Test {cc}"),
                            compute_capability: cc.clone(),
                            driver: driver.clone(),
                            memory: "8192 MiB".into(),
                        }),
                        Gpu::Amd { .. } => None,
                    })
                    .collect(),
                amd_gpus: gpus
                    .iter()
                    .filter_map(|g| match g {
                        Gpu::Amd { gfx } => Some(AmdGpu {
                            name: "AMD Test".into(),
                            gfx: gfx.clone(),
                            arch: gfx.clone(),
                        }),
                        Gpu::Nvidia { .. } => None,
                    })
                    .collect(),
                ..Facts::default()
            };
            let verdict = recommend(&facts, &coverage);
            let answer = selector_answer(&python, platform, gpus, &pci);
            let what = format!("{gpus:?} on {platform}: doctor {verdict:#?}\nselector {answer:#}");
            assert_eq!(
                answer["variant"].as_str(),
                Some(verdict.variant.as_str()),
                "{what}"
            );
            assert_eq!(
                answer["local_version"].as_str(),
                verdict.local_version.as_deref(),
                "{what}"
            );
            assert_eq!(
                answer["requirement"].as_str(),
                verdict.requirement.as_deref(),
                "{what}"
            );
            // The same GPU, of several, at the same device index where the selector knows one
            // (an AMD card it finds in sysfs without a KFD node has none: HIP cannot see it).
            let choice = ct2v_pipeline::doctor::choose(&facts, &coverage);
            if !answer["device_index"].is_null() {
                assert_eq!(
                    answer["device_index"],
                    serde_json::json!(choice.device_index),
                    "{what}"
                );
            }
            let chosen = match choice.gpu {
                Some(Chosen::Nvidia(i)) => Some(facts.nvidia_gpus[i].compute_capability.clone()),
                Some(Chosen::Amd(i)) => Some(facts.amd_gpus[i].gfx.clone()),
                None => None,
            };
            let answered = ["compute_capability", "gfx"]
                .iter()
                .find_map(|k| answer["gpu"][k].as_str().map(str::to_string));
            assert_eq!(answered, chosen, "{what}");
            let reasons: Vec<&str> = answer["reasons"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|r| r.as_str())
                .collect();
            let said = format!("{}\n{}", verdict.why, verdict.notes.join("\n"));
            for reason in &reasons {
                if reason.ends_with("no variant serves it yet") {
                    assert!(said.contains("not served yet: no build has"), "{what}");
                }
                if let Some((_, problem)) = reason.split_once("): ")
                    && (problem.contains("is built for") || problem.contains("needs NVIDIA driver"))
                {
                    assert!(said.contains(problem), "`{problem}`: {what}");
                }
            }
            compared += 1;
        }
    }
    assert!(compared >= 2 * machines.len(), "{compared}");
}

/// NETWORK TEST (the interpreter, once into the shared cache): the selector in python.org's
/// Windows CPython 3.12 under wine 8, in a prefix of its own. Wine has no NVIDIA driver, and
/// the display adapter it lists is not a GPU any variant serves, so the answer is `cpu` with
/// the reason, no traceback, in bounded time; `sources` says which detection path ran (under
/// wine 8: no nvidia-smi, a powershell.exe stub that prints nothing, then wmic's UTF-16 table).
#[cfg(feature = "wine")]
#[test]
fn the_selector_answers_cpu_in_the_windows_python_under_wine() {
    use ct2v_proof::winpython::{Session, wine::windows_path};
    use std::time::{Duration, Instant};
    crate::needs_network!(&["files.pythonhosted.org:443"]);
    if !crate::common::mingw::available(true)
        || crate::common::skip::missing_from_path("osslsigncode", "apt-get install osslsigncode")
    {
        return;
    }
    let workspace = ct2v_support::workspace::Workspace::locate(
        Some(repo_root()),
        Some(crate::common::winwheels::cache_dir()),
    )
    .unwrap();
    let work = tempfile::tempdir().unwrap();
    let options = ct2v_fetch::download::Options {
        progress: false,
        ..Default::default()
    };
    let session = Session::start(&workspace, "3.12", work.path(), &options).unwrap();
    let limit = Duration::from_secs(180);
    let guard = session.wine.watchdog(limit);
    let started = Instant::now();
    let out = Command::new("wine")
        .arg(session.python.python_exe())
        .arg(windows_path(&repo_root().join(SELECTOR)))
        .arg("--json")
        .envs(session.env())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let took = started.elapsed();
    assert!(!guard.fired(), "stopped after {} s", limit.as_secs());
    drop(guard);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let both = format!("stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(out.status.success(), "{both}");
    assert!(!stderr.contains("Traceback"), "{both}");
    let answer: serde_json::Value = serde_json::from_str(&stdout).expect(&both);
    assert_eq!(answer["platform"], "windows-x86_64", "{both}");
    assert_eq!(answer["variant"], "cpu", "{both}");
    assert_eq!(answer["gpu"], serde_json::Value::Null, "{both}");
    assert!(
        answer["requirement"]
            .as_str()
            .is_some_and(|r| r.starts_with("ctranslate2==") && r.ends_with("+cpu")),
        "{both}"
    );
    let sentence = answer["sentence"].as_str().unwrap();
    assert!(
        sentence.ends_with("; cpu") && sentence.len() > "; cpu".len(),
        "{both}"
    );
    // The text entries of one of the answer's lists.
    let texts = |key: &str| -> Vec<&str> {
        answer[key]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|v| v.as_str())
            .collect()
    };
    let reasons = texts("reasons");
    assert!(
        reasons.contains(&"nvidia-smi not found (no NVIDIA driver)"),
        "{both}"
    );
    let sources = texts("sources");
    eprintln!(
        "the selector under wine answered in {:.1} s; detection path: {}",
        took.as_secs_f64(),
        sources.join(" -> ")
    );
    assert_eq!(sources.first(), Some(&"nvidia-smi: not found"), "{both}");
    // The adapters were listed by one of the two tools, or the answer says they could not be.
    let listed = sources
        .iter()
        .any(|s| s.ends_with(": listed the display adapters"));
    if listed {
        assert!(
            reasons
                .iter()
                .any(|r| r.contains("is not an AMD or NVIDIA GPU")
                    || r.contains("no PCI display adapter")),
            "{both}"
        );
    } else {
        assert!(
            reasons.iter().any(|r| r.contains("could not be listed")),
            "{both}"
        );
    }
}
