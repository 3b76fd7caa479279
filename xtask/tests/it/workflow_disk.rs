//! The disk and cache budget of the jobs that meet ROCm 10's device wheels (~380 MB per GPU
//! target, about 7.5 GB for the 20 targets): such a job frees the Linux runner's disk before
//! it downloads anything, keeps the wheels out of the repository's 10 GB of Actions cache, and
//! `pin` holds one variant's downloads at a time.

use crate::common;
use crate::common::command_args::job;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::workflows::{WORKFLOWS, jobs, json_of, run_of, setup_steps, steps, yaml};

const FREE_DISK: &str = ".github/scripts/free-disk";

/// The folders free-disk empties, from its `folders=(…)` line.
fn freed_folders() -> Vec<String> {
    let text = std::fs::read_to_string(common::repo_root().join(FREE_DISK)).unwrap();
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("folders=("))
        .expect("a folders=( line");
    let folders: Vec<String> = line
        .trim_end_matches(')')
        .split_whitespace()
        .map(str::to_string)
        .collect();
    assert!(folders.len() >= 3, "{folders:?}");
    folders
}

fn uses(step: &Value, action: &str) -> bool {
    step["uses"]
        .as_str()
        .is_some_and(|u| u.starts_with(&format!("{action}@")))
}

/// Whether `step` saves or restores an Actions cache (`actions/cache`, or its `restore` and
/// `save` halves).
fn is_cache(step: &Value) -> bool {
    [
        "actions/cache",
        "actions/cache/restore",
        "actions/cache/save",
    ]
    .iter()
    .any(|a| uses(step, a))
}

/// Every cache step of the workflows and of the composite actions, named by where it is.
fn cache_steps() -> Vec<(String, Value)> {
    let mut found = Vec::new();
    for (name, workflow) in crate::workflows::workflows() {
        for (job_name, job) in jobs(&workflow) {
            for step in steps(job).iter().filter(|s| is_cache(s)) {
                found.push((format!("{name} job {job_name}"), step.clone()));
            }
        }
    }
    let actions = common::repo_root().join(".github/actions");
    for entry in std::fs::read_dir(&actions).unwrap() {
        let file = format!(
            ".github/actions/{}/action.yml",
            entry.unwrap().file_name().to_string_lossy()
        );
        let action = crate::workflows::yaml(&file);
        for step in action["runs"]["steps"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|s| is_cache(s))
        {
            found.push((file.clone(), step.clone()));
        }
    }
    found
}

/// The matrix says which entries download device wheels, and it says so exactly where the
/// entry's plan has a `device-<target>` input (a family's own targets, no other's);
/// build-setup's download cache is skipped for them, and no cache anywhere holds a place
/// device wheels or their kernels land.
#[test]
fn device_wheels_stay_out_of_the_actions_cache() {
    let scratch = common::Scratch::new();
    let all = ["--json", "--include-unpinned", "--include-self-hosted"];
    let matrix = json_of(&scratch, &[&["matrix"][..], &all[..]].concat());
    let native = json_of(&scratch, &[&["matrix", "--native"][..], &all[..]].concat());
    // Each family's targets, from the coverage (`variants --json`).
    let coverage = json_of(&scratch, &["variants", "--json"]);
    let targets_of = |variant: &str| -> Vec<String> {
        let v = coverage["variants"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == variant)
            .unwrap();
        let mut gfx: Vec<String> = v["builds"][0]["amd"]["gfx"]
            .as_array()
            .map(|a| a.iter().map(|g| g.as_str().unwrap().to_string()).collect())
            .unwrap_or_default();
        gfx.sort();
        gfx
    };
    let mut planned: BTreeMap<(String, String), bool> = BTreeMap::new();
    let entries = matrix["include"].as_array().unwrap();
    let natives = native["include"].as_array().unwrap();
    for entry in entries.iter().chain(natives) {
        let variant = entry["variant"].as_str().unwrap().to_string();
        let platform = entry["platform"].as_str().unwrap().to_string();
        let python = entry["python"].as_str().unwrap();
        let expected = *planned
            .entry((variant.clone(), platform.clone()))
            .or_insert_with(|| {
                let plan = json_of(
                    &scratch,
                    &[
                        "plan",
                        "--variant",
                        &variant,
                        "--platform",
                        &platform,
                        "--python",
                        python,
                        "--json",
                    ],
                );
                // A family's job downloads its own targets' device wheels, no other's.
                let mut devices: Vec<String> = plan["inputs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(|i| i["name"].as_str().unwrap().strip_prefix("device-"))
                    .map(str::to_string)
                    .collect();
                devices.sort();
                if !devices.is_empty() {
                    assert_eq!(devices, targets_of(&variant), "{variant} {platform}");
                }
                !devices.is_empty()
            });
        assert_eq!(entry["device-wheels"], expected, "{entry}");
    }
    let with: Vec<&String> = planned
        .iter()
        .filter(|(_, d)| **d)
        .map(|(k, _)| &k.0)
        .collect();
    assert!(
        with.iter().any(|v| v.starts_with("rocm-rdna")) && planned.values().any(|d| !d),
        "{planned:?}"
    );

    // Where the downloads go: CT2V_CACHE_DIR, set by build-setup's first step.
    let setup = setup_steps();
    let folder = run_of(crate::workflows::step_named(
        &setup,
        "Download cache folder",
    ));
    assert!(
        folder.contains("CT2V_CACHE_DIR=$GITHUB_WORKSPACE/.ct2v-cache"),
        "{folder}"
    );
    let caches = cache_steps();
    assert!(caches.len() >= 4, "the caches moved? {caches:?}");
    for (at, step) in &caches {
        let path = step["with"]["path"].as_str().unwrap_or("");
        for landing in [".kpack", "rocm-sdk-device", "_rocm", "device"] {
            assert!(
                !path.contains(landing),
                "{at}: the cache path `{path}` holds device wheels or their kernels"
            );
        }
        if path.contains(".ct2v-cache") {
            assert_eq!(
                step["if"], "inputs.device-wheels != 'true'",
                "{at}: the download cache must skip jobs whose plan downloads device wheels"
            );
        }
    }
    let lane = yaml(&format!("{WORKFLOWS}/lane.yml"));
    for job in ["native", "build"] {
        let setup = steps(&lane["jobs"][job])
            .iter()
            .find(|s| s["uses"] == "./.github/actions/build-setup")
            .unwrap();
        assert_eq!(
            setup["with"]["device-wheels"], "${{ matrix.device-wheels }}",
            "lane.yml {job}"
        );
    }
}

/// On Linux a job whose plan downloads device wheels frees the runner's disk before its first
/// download (the input cache, Python, the SDK installs), also from inside the manylinux
/// container, where the host folders are mounted for it; `pin` frees it before its loop.
#[test]
fn device_wheel_jobs_free_the_linux_runners_disk_first() {
    let setup = setup_steps();
    let free = setup
        .iter()
        .position(|s| run_of(s).contains("/.github/scripts/free-disk"))
        .expect("a build-setup step runs free-disk");
    let condition = setup[free]["if"].as_str().unwrap();
    assert!(
        condition.contains("runner.os == 'Linux'")
            && condition.contains("inputs.device-wheels == 'true'"),
        "{condition}"
    );
    assert_eq!(
        setup[free]["env"]["HOST_ROOT"],
        "${{ inputs.container != '' && '/host' || '' }}"
    );
    let downloads: Vec<usize> = setup
        .iter()
        .enumerate()
        .filter(|(_, s)| {
            uses(s, "actions/cache")
                || uses(s, "actions/setup-python")
                || s["name"].as_str().is_some_and(|n| n.starts_with("Install"))
        })
        .map(|(i, _)| i)
        .collect();
    assert!(downloads.len() >= 4, "{downloads:?}");
    for at in downloads {
        assert!(
            free < at,
            "`{}` downloads before the disk is freed",
            setup[at]["name"]
        );
    }

    let folders = freed_folders();
    let lane = yaml(&format!("{WORKFLOWS}/lane.yml"));
    for job in ["native", "build"] {
        let volumes: Vec<&str> = lane["jobs"][job]["container"]["volumes"]
            .as_array()
            .unwrap_or_else(|| panic!("lane.yml {job}: no container volumes"))
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        for folder in &folders {
            let mount = format!("/{folder}:/host/{folder}");
            assert!(
                volumes.contains(&mount.as_str()),
                "{job}: {mount} in {volumes:?}"
            );
        }
    }

    let pin = yaml(&format!("{WORKFLOWS}/pin.yml"));
    let pin_steps = steps(&pin["jobs"]["pin"]);
    let free = pin_steps
        .iter()
        .position(|s| run_of(s).trim() == FREE_DISK)
        .expect("pin.yml runs free-disk");
    let first_pin = pin_steps
        .iter()
        .position(|s| run_of(s).contains("cargo xtask pin"))
        .unwrap();
    assert!(free < first_pin);
}

/// `pin` over every variant keeps one (variant, version)'s downloads on the runner at a time:
/// each gets a fresh cache folder, removed after its pins are written.
#[test]
fn pin_holds_one_variants_downloads_at_a_time() {
    let pin = yaml(&format!("{WORKFLOWS}/pin.yml"));
    let run = steps(&pin["jobs"]["pin"])
        .iter()
        .map(run_of)
        .find(|r| r.contains("cargo xtask pin"))
        .unwrap();
    let lines: Vec<&str> = run.lines().map(str::trim).collect();
    let at = |needle: &str| {
        lines
            .iter()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("`{needle}` in:\n{run}"))
    };
    let inner = at("for variant in");
    let fresh = at("cache=$(mktemp -d \"$RUNNER_TEMP/");
    let pinned = at("CT2V_CACHE_DIR=\"$cache\" cargo xtask pin --variant \"$variant\"");
    let removed = at("rm -rf -- \"$cache\"");
    let done = inner + lines[inner..].iter().position(|l| *l == "done").unwrap();
    assert!(
        inner < fresh && fresh < pinned && pinned < removed && removed < done,
        "the fresh cache, the pin and the removal inside the loop over variants:\n{run}"
    );
}

/// free-disk empties the folders it names below ROOT (the mount points stay), follows no link
/// out of them, and touches nothing beside them, whatever the names inside.
#[test]
fn free_disk_empties_its_folders_only_and_follows_no_link() {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("precious"), "kept").unwrap();
    let folders = freed_folders();
    for folder in &folders {
        let dir = root.path().join(folder);
        std::fs::create_dir_all(dir.join("sub/deeper")).unwrap();
        std::fs::write(dir.join("sub/deeper/file"), "x").unwrap();
        std::fs::write(dir.join("-rf name\nwith a newline"), "x").unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.join("link-out")).unwrap();
        common::mkfifo(&dir.join("fifo"));
    }
    // Beside the folders: kept.
    let sibling = root.path().join(&folders[0]).with_file_name("beside");
    std::fs::write(&sibling, "kept").unwrap();
    // One folder missing altogether: nothing to do there.
    std::fs::remove_dir_all(root.path().join(folders.last().unwrap())).unwrap();

    let out = Command::new(common::repo_root().join(FREE_DISK))
        .arg(root.path())
        .env("GITHUB_WORKSPACE", root.path())
        .output()
        .unwrap();
    let text = common::stdout_and_stderr(&out);
    assert!(out.status.success(), "{text}");
    assert!(!text.contains("::warning"), "{text}");
    for folder in &folders[..folders.len() - 1] {
        let dir = root.path().join(folder);
        assert!(dir.is_dir(), "{folder}: the folder itself stays");
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert!(left.is_empty(), "{folder}: {left:?}");
    }
    assert!(!root.path().join(folders.last().unwrap()).exists());
    assert_eq!(std::fs::read_to_string(&sibling).unwrap(), "kept");
    assert_eq!(
        std::fs::read_to_string(outside.path().join("precious")).unwrap(),
        "kept"
    );
    assert!(Path::new(outside.path()).is_dir());
}

/// The native job (`build --until install-ctranslate2`) stops before the bundle, the only step
/// that reads device wheels: it neither downloads nor unpacks them (a ROCm 10 family's are
/// ~380 MB per target). A later run that goes on to them fetches them then.
#[test]
fn a_run_that_stops_before_the_bundle_downloads_no_device_wheel() {
    let ct2 = crate::fetch_pin::bytes(4096, 1);
    let onednn = crate::fetch_pin::bytes(4096, 2);
    let scratch = crate::fetch_pin::scratch_pinned_to(&ct2, &onednn);
    let cache = tempfile::tempdir().unwrap();
    let in_cache = |bytes: &[u8]| {
        let dir = cache.path().join("sha256");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(crate::fetch_pin::sha256(bytes)), bytes).unwrap();
    };
    // Every input pinned; all but the device wheels in the cache (`--offline` fetches none).
    in_cache(&ct2);
    in_cache(&onednn);
    let variant = "variants/rocm-rdna2.toml";
    let index = "https://stable.repo.amd.com/rocm/whl-next/";
    for project in ["rocm-sdk-core", "rocm-sdk-libraries"] {
        let bytes = project.as_bytes();
        in_cache(bytes);
        let table = format!(
            "[platform.linux-x86_64.inputs.{project}]\nindex = \"{index}\"\npackage = \"{project} 10.0.0\"\n"
        );
        let pinned = format!(
            "{table}url = \"{index}x/{}-10.0.0-py3-none-linux_x86_64.whl\"\nsha256 = \"{}\"\nsize = {}\n",
            project.replace('-', "_"),
            crate::fetch_pin::sha256(bytes),
            bytes.len()
        );
        scratch.edit(variant, &table, &pinned);
    }
    let targets = [
        "gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036",
    ];
    let mut devices = String::new();
    for target in targets {
        let bytes = format!("device {target}");
        devices.push_str(&format!(
            "\n[platform.linux-x86_64.inputs.device-{target}]\nindex = \"{index}\"\npackage = \"rocm-sdk-device-{target} 10.0.0\"\nurl = \"{index}x/rocm_sdk_device_{target}-10.0.0-py3-none-linux_x86_64.whl\"\nsha256 = \"{}\"\nsize = {}\n",
            crate::fetch_pin::sha256(bytes.as_bytes()),
            bytes.len()
        ));
    }
    let path = scratch.path().join(variant);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text + &devices).unwrap();

    let cache_dir = cache.path().to_str().unwrap();
    let build = |until: &str| {
        let until = ["--offline", "--until", until];
        let build = job("build", "rocm-rdna2", "linux-x86_64", "3.12", &until);
        scratch.run(&[&["--cache-dir", cache_dir][..], &build].concat())
    };
    let native = build("fetch");
    let left_out = "7 device wheel(s) left out: only the bundle reads them";
    common::assert_exit(&native, 0, &[left_out]);
    // A run that goes on to a device wheel fetches again, and wants them (offline: named).
    let on = build("unpack-device-gfx1030");
    common::assert_exit(&on, 1, &["device-gfx1030"]);
}
