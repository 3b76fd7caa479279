//! What AMD itself lists as untested: for ROCm 10, gfx1200 and gfx1201 are "Build Passing" only
//! on Windows, gfx1153 on Windows and Linux (ROCm/TheRock release/therock-10.0 @16adc4d
//! SUPPORTED_GPUS.md L50, L80-82). The card table (README, `variants --markdown`, the index's
//! front page) and `variants.json` say so beside the ROCm 10 build, and only there.

use crate::common;

use serde_json::Value;

const WORDS: &str = "AMD lists the target as build passing only";

fn coverage_of(scratch: &common::Scratch) -> (Value, String) {
    let json = scratch.run(&["variants", "--json"]);
    assert_eq!(json.code, 0, "{}", json.stderr);
    let table = scratch.run(&["variants", "--markdown"]);
    assert_eq!(table.code, 0, "{}", table.stderr);
    (serde_json::from_str(&json.stdout).unwrap(), table.stdout)
}

/// The `amd_status` of `variant`'s build on the card of `target`.
fn status<'a>(coverage: &'a Value, target: &str, variant: &str) -> &'a Value {
    let card = coverage["cards"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["target"] == target)
        .unwrap_or_else(|| panic!("no card {target}"));
    let served = card["served_by"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["variant"] == variant)
        .unwrap_or_else(|| panic!("{target} not served by {variant}: {card}"));
    &served["amd_status"]
}

fn row<'a>(table: &'a str, target: &str) -> &'a str {
    table
        .lines()
        .find(|l| l.contains(&format!("| {target} |")))
        .unwrap_or_else(|| panic!("no row {target}:\n{table}"))
}

#[test]
fn the_card_table_says_which_rocm_10_targets_amd_lists_as_build_passing_only() {
    let scratch = common::Scratch::new();
    let (coverage, table) = coverage_of(&scratch);
    let windows = serde_json::json!({"windows-x86_64": "build passing only"});
    let both = serde_json::json!({
        "linux-x86_64": "build passing only",
        "windows-x86_64": "build passing only",
    });
    for target in ["gfx1200", "gfx1201"] {
        assert_eq!(
            status(&coverage, target, "rocm-rdna4"),
            &windows,
            "{target}"
        );
        // ROCm 7.2's build: another release's list, not this one's.
        assert!(status(&coverage, target, "rocm").is_null(), "{target}");
        let line = row(&table, target);
        assert!(line.contains(&format!("on Windows {WORDS}")), "{line}");
        assert!(!line.contains(&format!("on Linux {WORDS}")), "{line}");
    }
    assert_eq!(status(&coverage, "gfx1153", "rocm-rdna35"), &both);
    let line = row(&table, "gfx1153");
    assert!(
        line.contains(&format!("on Linux and Windows {WORDS}")),
        "{line}"
    );
    for target in [
        "gfx1150", "gfx1151", "gfx1152", "gfx1100", "gfx1030", "gfx1010",
    ] {
        assert!(!row(&table, target).contains("AMD lists"), "{target}");
    }
    let descriptions: Vec<(&str, &str)> = coverage["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["name"].as_str().unwrap(),
                v["description"].as_str().unwrap(),
            )
        })
        .collect();
    for (variant, needle) in [
        (
            "rocm-rdna4",
            "on Windows AMD lists gfx1200 and gfx1201 as build passing only",
        ),
        ("rocm-rdna35", "AMD lists gfx1153 as build passing only"),
    ] {
        let (_, text) = descriptions.iter().find(|(n, _)| *n == variant).unwrap();
        assert!(text.contains(needle), "{variant}: {text}");
    }

    // From the data: a family released for Linux only says nothing of Windows.
    scratch.edit(
        "variants/rocm-rdna4.toml",
        "extends = \"rocm-rdna2\"\n",
        "extends = \"rocm-rdna2\"\nplatforms = [\"linux-x86_64\"]\n",
    );
    let (coverage, table) = coverage_of(&scratch);
    assert!(status(&coverage, "gfx1201", "rocm-rdna4").is_null());
    assert!(!row(&table, "gfx1201").contains("AMD lists"), "{table}");
}
