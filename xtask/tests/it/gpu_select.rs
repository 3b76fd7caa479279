//! Which GPUs each variant serves, and the selector an app runs: the generated data block of
//! `xtask/python/ct2_variant_select.py` and the README's card table must be what
//! `variants --json` / `--markdown` print now (`CT2V_UPDATE_SELECTOR=1` rewrites both); the
//! selector passes its fixtures (xtask/tests/python/, recorded outputs in
//! xtask/tests/data/gpu_select/) under the system python3; bad variant data is refused with
//! the file named; `release` writes `variants.json` into the manifest and SHA256SUMS.

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::common::{Scratch, repo_root, xtask};

const SELECTOR: &str = "xtask/python/ct2_variant_select.py";
const DATA_BEGIN: &str = "# --- generated data: begin ---\n";
const DATA_END: &str = "# --- generated data: end ---";
const README_BEGIN: &str = "<!-- cards: begin -->\n";
const README_END: &str = "<!-- cards: end -->";

/// `text` with what lies between `begin` and `end` replaced by `block`; `None` when the markers
/// are missing.
fn replaced(text: &str, begin: &str, end: &str, block: &str) -> Option<String> {
    let start = text.find(begin)? + begin.len();
    let stop = start + text[start..].find(end)?;
    Some(format!("{}{block}{}", &text[..start], &text[stop..]))
}

fn data_block(json: &str) -> String {
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
    assert_eq!(served("gfx1010"), ["rocm-gfx1010+gfx1010"]);
    assert!(served("gfx1012").is_empty(), "RX 5500: not served");
    assert_eq!(served("gfx1030"), ["rocm+rocm72"]);
    for unserved in ["gfx1031", "gfx1032", "gfx1034", "5.0", "5.2"] {
        assert!(
            served(unserved).is_empty(),
            "{unserved}: {:?}",
            served(unserved)
        );
    }
    for rocm in [
        "gfx1100", "gfx1101", "gfx1102", "gfx1150", "gfx1151", "gfx1200", "gfx1201",
    ] {
        assert_eq!(served(rocm), ["rocm+rocm72"], "{rocm}");
    }
    assert_eq!(served("6.1"), ["cuda+cu12"], "CUDA 13 dropped Pascal");
    assert_eq!(served("8.6"), ["cuda+cu12", "cuda+cu13"]);
    assert_eq!(served("12.0"), ["cuda+cu12", "cuda+cu13"], "through PTX");
    let cuda = v["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "cuda")
        .unwrap();
    let cu12 = &cuda["builds"][0]["nvidia"];
    assert_eq!(
        cu12["cuda_arch_list"],
        "5.3;6.0;6.1;7.0;7.5;8.0;8.6;8.6+PTX"
    );
    assert_eq!(cu12["driver_min_linux"], "525.60.13");
    assert_eq!(cu12["driver_min_windows"], "528.33");
    assert_eq!(cuda["builds"][1]["nvidia"]["driver_min_windows"], "580");
    let markdown = xtask(&["variants", "--markdown"]).stdout;
    assert!(
        markdown
            .contains("| AMD RDNA 2: RX 6650 XT, 6600 XT, 6600 | gfx1032 | not served: `cpu` |"),
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
        .env("PYTHONPATH", root.join("xtask/python"))
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
