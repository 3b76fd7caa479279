//! docs/ci.md's claims against what they describe: the versions against the variant data, the
//! entries left out against the matrix, the job names against the workflows, the parallel
//! downloads and uploads against the release job. A claim here that drifts fails.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::common;
use crate::workflows::{WORKFLOWS, jobs, steps, yaml};

fn ci_md() -> String {
    std::fs::read_to_string(common::repo_root().join("docs/ci.md")).unwrap()
}

/// The doc's paragraph (or list item) that starts with `start`.
fn paragraph<'a>(doc: &'a str, start: &str) -> &'a str {
    let at = doc
        .find(start)
        .unwrap_or_else(|| panic!("no `{start}` in docs/ci.md"));
    let rest = &doc[at..];
    let end = rest[start.len()..]
        .find("\n- **")
        .or_else(|| rest.find("\n\n"))
        .map_or(rest.len(), |e| e + start.len());
    &rest[..end]
}

/// The backticked names in `text`.
fn ticked(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

fn covered(name: &str, names: &[&str]) -> bool {
    names.iter().any(|n| match n.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => *n == name,
    })
}

#[test]
fn the_onednn_versions_are_ours_and_upstreams_as_the_variant_data_says() {
    let doc = ci_md();
    let row = doc
        .lines()
        .find(|l| l.starts_with("| oneDNN |"))
        .expect("the oneDNN row");
    let defaults =
        std::fs::read_to_string(common::repo_root().join("variants/defaults.toml")).unwrap();
    let ours = defaults
        .lines()
        .find_map(|l| l.strip_prefix("package = \"oneDNN "))
        .and_then(|v| v.strip_suffix('"'))
        .expect("[inputs.onednn] package");
    let accepted = defaults
        .lines()
        .find(|l| l.starts_with("\"onednn.version\" = "))
        .expect("the accepted oneDNN drift");
    assert!(row.contains(&format!("**{ours}**")), "{row}");
    for upstream in ["3.1.1", "3.10.2"] {
        assert!(
            row.contains(upstream) && accepted.contains(upstream),
            "{row}\n{accepted}"
        );
    }
    assert!(accepted.contains(ours), "{accepted}");
    assert!(!row.contains("the same version"), "{row}");
    // The claim of a C++-free re-tag is bounded: the extension compiles in every wheel job.
    assert!(!doc.contains("a re-tag compiles no C++"));
    let caching = doc.lines().find(|l| l.starts_with("| caching |")).unwrap();
    assert!(
        caching.contains("compiles neither oneDNN nor CTranslate2")
            && caching.contains("still compiles the Python extension"),
        "{caching}"
    );
}

/// Which variants the default matrix leaves out and why, from `matrix --json`'s notes.
fn left_out(why: &str) -> BTreeSet<(String, String)> {
    let out = common::xtask(&["matrix", "--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    out.stderr
        .lines()
        .filter_map(|l| l.strip_prefix("note: left out of the matrix: "))
        .filter(|l| l.contains(why))
        .map(|l| {
            let mut words = l.split_whitespace();
            let variant = words.next().unwrap().to_string();
            let platform = words.next().unwrap().to_string();
            (variant, platform)
        })
        .collect()
}

#[test]
fn the_entries_that_wait_for_pin_or_a_self_hosted_runner_are_the_matrixs() {
    let doc = ci_md();
    let pins = paragraph(&doc, "- **Pins**:");
    let named = ticked(pins);
    let unpinned = left_out("inputs not pinned yet");
    assert!(unpinned.len() >= 10, "{unpinned:?}");
    for (variant, platform) in &unpinned {
        assert!(
            covered(variant, &named),
            "{variant} ({platform}) not named in:\n{pins}"
        );
        // A family named for one platform only must be left out only there.
        let windows_only = pins.contains(&format!("`{variant}` on Windows"))
            || named
                .iter()
                .filter(|n| n.ends_with('*') && variant.starts_with(n.trim_end_matches('*')))
                .any(|n| pins.contains(&format!("`{n}` on Windows")));
        if windows_only {
            assert_eq!(platform, "windows-x86_64", "{variant}: {pins}");
        }
    }
    let hosted = paragraph(&doc, "- **Self-hosted runner**");
    let named = ticked(hosted);
    let self_hosted = left_out("needs a self-hosted runner");
    assert!(!self_hosted.is_empty());
    for (variant, platform) in &self_hosted {
        assert_eq!(platform, "linux-x86_64");
        assert!(
            covered(variant, &named),
            "{variant} not named in:\n{hosted}"
        );
    }
}

/// The Python jobs that install the SDK (the matrix's `needs-sdk`) are those the doc names.
#[test]
fn the_python_jobs_that_install_the_sdk_are_the_ones_the_doc_names() {
    let doc = ci_md();
    let at = doc
        .find("only where its bundle copies files from it (")
        .expect("the sentence on Python jobs and the SDK");
    let sentence = &doc[at..at + doc[at..].find(')').unwrap()];
    let named = ticked(sentence);
    let out = common::xtask(&[
        "matrix",
        "--json",
        "--include-unpinned",
        "--include-self-hosted",
    ]);
    let matrix: Value = serde_json::from_str(&out.stdout).unwrap();
    let mut installing = BTreeSet::new();
    for e in matrix["include"].as_array().unwrap() {
        let variant = e["variant"].as_str().unwrap();
        if e["needs-sdk"] == true {
            installing.insert(variant);
        }
        let sdk_from_source = e["compiles"] == true && e["sdk"] != "";
        if sdk_from_source && covered(variant, &named) {
            assert_eq!(e["needs-sdk"], true, "the doc names {variant}: {e}");
        }
    }
    assert!(installing.len() >= 6, "{installing:?}");
    for variant in installing {
        assert!(
            covered(variant, &named),
            "{variant} not named in: {sentence}"
        );
    }
}

/// The job ids and display names of the workflows a tag runs.
fn job_names() -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for file in ["build.yml", "lane.yml", "release.yml", "tool.yml"] {
        for (id, job) in jobs(&yaml(&format!("{WORKFLOWS}/{file}"))) {
            names.insert(id.clone());
            if let Some(name) = job["name"].as_str() {
                names.insert(name.to_string());
            }
        }
    }
    names
}

#[test]
fn every_job_the_doc_times_or_names_exists() {
    let doc = ci_md();
    let names = job_names();
    let mut checked = 0;
    for section in ["## Time per job", "What each job must print"] {
        let at = doc.find(section).unwrap();
        let table = doc[at..]
            .lines()
            .skip_while(|l| !l.starts_with('|'))
            .take_while(|l| l.starts_with('|'))
            .skip(2);
        for row in table {
            let first = row.split('|').nth(1).unwrap();
            for job in ticked(first) {
                if job.contains('…') {
                    continue; // a lane's jobs are named by the matrix
                }
                let job = job.split(" / ").last().unwrap();
                assert!(
                    names.contains(job),
                    "{section}: `{job}` is no job: {names:?}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 8, "{checked}");
}

/// The release fetches every entry in one download step and publishes every file in one gh
/// call: both run 5 at a time (the sources the doc and the workflow cite), not one by one.
#[test]
fn the_release_downloads_and_uploads_five_at_a_time_as_cited() {
    let release = yaml(&format!("{WORKFLOWS}/release.yml"));
    let all = steps(&release["jobs"]["release"]);
    let downloads: Vec<&Value> = all
        .iter()
        .filter(|s| s["with"]["pattern"].is_string())
        .collect();
    assert_eq!(downloads.len(), 1);
    assert!(
        downloads[0]["uses"]
            .as_str()
            .unwrap()
            .starts_with("actions/download-artifact@")
    );
    let publish = all.iter().find(|s| s["name"] == "Publish").unwrap()["run"]
        .as_str()
        .unwrap();
    assert_eq!(publish.matches("\"${files[@]}\"").count(), 2, "{publish}");
    assert!(!publish.contains("for "), "one call, not a loop: {publish}");
    let text =
        std::fs::read_to_string(common::repo_root().join(".github/workflows/release.yml")).unwrap();
    let doc = ci_md();
    for cited in ["PARALLEL_DOWNLOADS = 5", "`Concurrency = 5`"] {
        assert!(text.contains(cited) && doc.contains(cited), "{cited}");
    }
}
