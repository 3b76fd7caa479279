#![cfg(unix)]
//! The machines of `xtask/tests/data/gpu_select/machines.json`, one table for the selector and
//! `doctor`: several GPUs (an iGPU beside the card, two cards of one PCI device ID, two NVIDIA
//! cards of different compute capabilities) and a card newer than the PCI-ID table. The
//! selector runs on each machine's recorded inputs (a sysfs tree as `--root`, fake tools on a
//! PATH of their own); doctor's choice runs on what its own tools print there (rocminfo,
//! clinfo, nvidia-smi); both must name the table's wheel, device index, variables and every
//! GPU. The Python tests read the same table (class `Machines`).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use ct2v_pipeline::doctor::{self, Chosen, Facts, MachineReport};

use crate::common::{repo_root, write_script};

fn data_dir() -> PathBuf {
    repo_root().join("xtask/tests/data/gpu_select")
}

fn read(path: &str) -> String {
    let path = data_dir().join(path);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The selector's `--json` answer on `machine`'s `selector` inputs.
fn selector(python: &Path, machine: &serde_json::Value) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    fs::create_dir_all(&bin).unwrap();
    let mut root = dir.path().join("empty");
    fs::create_dir_all(&root).unwrap();
    for (program, path) in machine["selector"].as_object().unwrap() {
        let path = path.as_str().unwrap();
        if program == "root" {
            root = data_dir().join(path);
            continue;
        }
        let file = data_dir().join(path);
        write_script(
            &bin.join(program),
            &format!("#!/bin/sh\nexec /bin/cat '{}'\n", file.display()),
        );
    }
    let out = Command::new(python)
        .arg("-B")
        .arg(repo_root().join("crates/pipeline/python/ct2_variant_select.py"))
        .args(["--json", "--platform"])
        .arg(machine["platform"].as_str().unwrap())
        .arg("--root")
        .arg(&root)
        .env("PATH", &bin)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.is_empty(), "{stderr}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The facts doctor gathers on `machine`: its `doctor` inputs read by doctor's own parsers.
fn facts(machine: &serde_json::Value) -> Facts {
    let (os, arch) = machine["platform"]
        .as_str()
        .unwrap()
        .split_once('-')
        .unwrap();
    let mut facts = Facts {
        os: os.into(),
        arch: arch.into(),
        ..Facts::default()
    };
    for (tool, path) in machine["doctor"].as_object().unwrap() {
        let text = read(path.as_str().unwrap());
        match tool.as_str() {
            "nvidia-smi" => facts.nvidia_gpus = doctor::nvidia_smi_csv(&text),
            "rocminfo" => facts.amd_gpus = doctor::rocminfo(&text),
            "hipinfo" => facts.amd_gpus = doctor::hipinfo(&text),
            "clinfo" => facts.amd_gpus = doctor::clinfo(&text),
            other => panic!("machines.json: no doctor tool `{other}`"),
        }
        facts.amd_gpus_from = Some(tool.clone());
    }
    facts
}

#[test]
fn the_doctor_and_the_selector_agree_on_each_machine_of_the_shared_table() {
    if crate::common::skip::missing(
        "python3",
        "the selector's interpreter: apt-get install python3",
    ) {
        return;
    }
    // The interpreter itself (a pyenv shim needs a PATH the selector's runs do not have).
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .unwrap();
    let python = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let catalog = ct2v_pipeline::variant::Catalog::load(&repo_root(), &[]).unwrap();
    let coverage = ct2v_pipeline::variant::coverage::of_catalog(&catalog).unwrap();
    let table: serde_json::Value = serde_json::from_str(&read("machines.json")).unwrap();
    let machines = table["machines"].as_array().unwrap();
    assert!(machines.len() >= 5, "{}", machines.len());
    for machine in machines {
        let name = machine["name"].as_str().unwrap();
        let want = &machine["expect"];
        let facts = facts(machine);
        let choice = doctor::choose(&facts, &coverage);
        let verdict = doctor::recommend(&facts, &coverage);
        let answer = selector(&python, machine);
        let what = format!("{name}: doctor {verdict:#?}\nselector {answer:#}");
        // The doctor's GPUs in the table's order (NVIDIA's, then AMD's, as both list them).
        let gpus: Vec<Chosen> = (0..facts.nvidia_gpus.len())
            .map(Chosen::Nvidia)
            .chain((0..facts.amd_gpus.len()).map(Chosen::Amd))
            .collect();
        let rows: Vec<serde_json::Value> = gpus
            .iter()
            .map(|g| {
                let (target, index) = match *g {
                    Chosen::Nvidia(i) => (facts.nvidia_gpus[i].compute_capability.clone(), i),
                    Chosen::Amd(i) => (facts.amd_gpus[i].gfx.clone(), i),
                };
                serde_json::json!({
                    "target": target, "index": index, "served": choice.served.contains(g)
                })
            })
            .collect();
        assert_eq!(serde_json::Value::from(rows), want["gpus"], "{what}");
        assert_eq!(verdict.variant, want["variant"].as_str().unwrap(), "{what}");
        assert_eq!(
            verdict.local_version.as_deref(),
            want["local_version"].as_str(),
            "{what}"
        );
        let device = verdict.device.as_ref().expect("a GPU is served");
        assert_eq!(
            serde_json::json!(device.index),
            want["device_index"],
            "{what}"
        );
        assert_eq!(
            serde_json::to_value(&device.visible_devices).unwrap(),
            want["visible_devices"],
            "{what}"
        );
        // The selector, on its own inputs, says the same.
        for key in [
            "variant",
            "local_version",
            "device_index",
            "visible_devices",
        ] {
            assert_eq!(answer[key], want[key], "{key}: {what}");
        }
        let said: Vec<serde_json::Value> = answer["gpus"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| {
                let target = g["gfx"].as_str().or(g["compute_capability"].as_str());
                serde_json::json!({"target": target, "index": g["index"], "served": g["served"]})
            })
            .collect();
        assert_eq!(serde_json::Value::from(said), want["gpus"], "{what}");
        // Doctor's report names every GPU, with its index, and the device line.
        let report = MachineReport {
            facts,
            verdict: verdict.clone(),
        }
        .text();
        assert!(
            report.contains(&format!(
                "device: index {}, or {} (then index 0)",
                device.index,
                device.variables()
            )),
            "{report}"
        );
        for (g, row) in gpus.iter().zip(want["gpus"].as_array().unwrap()) {
            let index = row["index"].as_u64().unwrap();
            assert!(report.contains(&format!("  {index}: ")), "{g:?}: {report}");
            if !row["served"].as_bool().unwrap() {
                let note = verdict
                    .notes
                    .iter()
                    .find(|n| n.contains(": not served by"))
                    .unwrap_or_else(|| panic!("no note on the GPU not served: {what}"));
                assert!(note.contains(&device.variables()), "{note}");
                let reasons = answer["reasons"].to_string();
                assert!(reasons.contains("not served by"), "{reasons}");
            }
        }
    }
}
