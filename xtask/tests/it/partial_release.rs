//! `release --partial`: what a failed matrix entry withholds (its own variant's platform, no
//! more), how the left-out entries are named (manifest, notes and so the job summary, stderr,
//! `verify-release`), and that a re-run with the entry adds it to the same index.

use crate::common;

use std::fs;
use std::path::Path;

use crate::release::{artifacts_of, fake_entry, run_verify_release};
use common::command_args;
use common::{Run, Scratch};

/// One failed job withholds only its own variant: `--partial` publishes every variant whose
/// entries are all there, names each left-out entry with its job and why (a check that failed
/// is told apart from a job that left nothing) in the manifest, the notes and on stderr, and
/// the release verifies; once the failed job has run again, a second release holds them all.
#[test]
fn a_partial_release_publishes_the_complete_variants_and_a_rerun_adds_the_rest() {
    let scratch = Scratch::new();
    let matrix = scratch.run(&["matrix", "--json"]);
    assert_eq!(matrix.code, 0, "{}", matrix.stderr);
    let matrix: serde_json::Value = serde_json::from_str(&matrix.stdout).unwrap();
    let pick = |variant: &str| -> Vec<serde_json::Value> {
        matrix["include"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["variant"] == variant && e["platform"] == "linux-x86_64")
            .filter(|e| e["python"] == "3.11" || e["python"] == "3.12")
            .cloned()
            .collect()
    };
    let (cpu, cuda) = (pick("cpu"), pick("cuda"));
    assert_eq!((cpu.len(), cuda.len()), (2, 2), "{matrix:#}");
    for entry in cpu.iter().chain(&cuda) {
        fake_entry(&scratch, entry);
    }
    let artifacts = scratch.path().join("artifacts");
    // cuda py3.11's check failed (CI uploaded its build under failed-…); cuda py3.12 passed.
    artifacts_of(&scratch, &[&cpu[0], &cpu[1], &cuda[1]], &artifacts);
    let failed = format!("failed-{}", cuda[0]["artifact"].as_str().unwrap());
    fs::create_dir_all(artifacts.join(&failed)).unwrap();
    fs::write(artifacts.join(&failed).join("verify.log"), "FAILED\n").unwrap();

    let release_from = |out: &Path, extra: &[&str]| {
        let mut from = vec!["--from", artifacts.to_str().unwrap()];
        from.extend(extra);
        let out = out.to_str().unwrap();
        scratch.run(&command_args::release(
            "cpu,cuda",
            "linux-x86_64",
            "3.11,3.12",
            out,
            &from,
        ))
    };
    // Without --partial a missing entry still stops the release, and says how to go on.
    let strict = release_from(&scratch.path().join("dist/strict"), &[]);
    assert_eq!(strict.code, 1, "{}", strict.stderr);
    assert!(strict.stderr.contains("--partial"), "{}", strict.stderr);
    assert!(!scratch.path().join("dist/strict").exists());

    let first = scratch.path().join("dist/first");
    let run = release_from(&first, &["--partial"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let cuda_jobs: Vec<&str> = cuda.iter().map(|e| e["name"].as_str().unwrap()).collect();
    for job in &cuda_jobs {
        assert!(
            run.stderr
                .contains(&format!("note: left out of this release: {job}:")),
            "{job} named:\n{}",
            run.stderr
        );
    }
    assert!(run.stderr.contains("its check failed"), "{}", run.stderr);
    assert!(run.stderr.contains(&failed), "{}", run.stderr);
    assert!(run.stderr.contains("held back"), "{}", run.stderr);
    let files = common::wheel::files_below(&first);
    let ct2_wheels = |files: &std::collections::BTreeSet<String>| {
        files
            .iter()
            .filter(|n| n.starts_with("ctranslate2-") && n.ends_with(".whl"))
            .count()
    };
    assert_eq!(ct2_wheels(&files), 2, "{files:?}");
    assert!(!files.iter().any(|n| n.contains("+cu")), "{files:?}");
    assert!(files.iter().any(|n| n == "whl/cpu/ctranslate2/index.html"));
    assert!(
        !files.iter().any(|n| n.starts_with("whl/cuda")),
        "{files:?}"
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(first.join("manifest.json")).unwrap()).unwrap();
    let left: Vec<&str> = manifest["left_out"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["job"].as_str().unwrap())
        .collect();
    assert_eq!(left, cuda_jobs);
    let notes = fs::read_to_string(first.join("RELEASE_NOTES.md")).unwrap();
    let section = &notes[notes.find("## Not in this release").expect("the section")..];
    for job in &cuda_jobs {
        assert!(section.contains(job), "{section}");
    }
    let ok = run_verify_release(&scratch, &first);
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    // The notes are checked too: the section is not a free-text file beside the manifest.
    fs::write(
        first.join("RELEASE_NOTES.md"),
        notes.replace("its check failed", "it passed"),
    )
    .unwrap();
    let bad = run_verify_release(&scratch, &first);
    assert_eq!(bad.code, 1, "{}", bad.stderr);
    assert!(bad.stderr.contains("RELEASE_NOTES.md"), "{}", bad.stderr);

    // The failed job ran again and passed: the same command releases everything.
    fs::remove_dir_all(artifacts.join(&failed)).unwrap();
    artifacts_of(&scratch, &[&cuda[0]], &artifacts);
    let second = scratch.path().join("dist/second");
    let run = release_from(&second, &["--partial"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stderr.contains("left out"), "{}", run.stderr);
    let files = common::wheel::files_below(&second);
    assert_eq!(ct2_wheels(&files), 4, "{files:?}");
    // What the first release published of each entry is published again byte for byte (the
    // re-run uploads over the same assets; the selector's wheel changes: its data gains the
    // added variant), and the notes lose their section.
    for name in fs::read_dir(&first)
        .unwrap()
        .map(|e| e.unwrap().file_name())
    {
        let name = name.to_string_lossy();
        if name.starts_with("ctranslate2-") || name.ends_with(".zip") {
            let same =
                fs::read(first.join(&*name)).unwrap() == fs::read(second.join(&*name)).unwrap();
            assert!(same, "{name} differs");
        }
    }
    let notes = fs::read_to_string(second.join("RELEASE_NOTES.md")).unwrap();
    assert!(!notes.contains("## Not in this release"), "{notes}");
    assert_eq!(run_verify_release(&scratch, &second).code, 0);

    // Nothing complete: nothing released, every entry named.
    fs::create_dir_all(scratch.path().join("empty")).unwrap();
    let none = scratch.run(&command_args::release(
        "cuda",
        "linux-x86_64",
        "3.11,3.12",
        scratch.path().join("dist/none").to_str().unwrap(),
        &[
            "--from",
            scratch.path().join("empty").to_str().unwrap(),
            "--partial",
        ],
    ));
    assert_ne!(none.code, 0, "{}", none.stderr);
    assert!(
        none.stderr.contains("nothing can be released"),
        "{}",
        none.stderr
    );
}

/// The matrix entries of `variants` on both platforms for `pythons`, each faked as built.
fn both_platforms(
    scratch: &Scratch,
    variants: &[&str],
    pythons: &[&str],
) -> Vec<serde_json::Value> {
    let matrix = scratch.run(&["matrix", "--json"]);
    assert_eq!(matrix.code, 0, "{}", matrix.stderr);
    let matrix: serde_json::Value = serde_json::from_str(&matrix.stdout).unwrap();
    let entries: Vec<serde_json::Value> = matrix["include"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| variants.iter().any(|v| e["variant"] == *v))
        .filter(|e| pythons.iter().any(|p| e["python"] == *p))
        .cloned()
        .collect();
    for entry in &entries {
        fake_entry(scratch, entry);
    }
    entries
}

/// `release --partial --from <artifacts>` of `variants` on both platforms for `pythons`.
fn release_both(
    scratch: &Scratch,
    artifacts: &Path,
    out: &Path,
    variants: &str,
    pythons: &str,
) -> Run {
    scratch.run(&command_args::release(
        variants,
        "linux-x86_64,windows-x86_64",
        pythons,
        out.to_str().unwrap(),
        &["--from", artifacts.to_str().unwrap(), "--partial"],
    ))
}

fn on(entries: &[serde_json::Value], platform: &str) -> Vec<serde_json::Value> {
    entries
        .iter()
        .filter(|e| e["platform"] == platform)
        .cloned()
        .collect()
}

/// The `ctranslate2` wheels linked by `whl/<variant>/ctranslate2/index.html`, by file name.
fn indexed(out: &Path, variant: &str) -> Vec<String> {
    let page =
        fs::read_to_string(out.join(format!("whl/{variant}/ctranslate2/index.html"))).unwrap();
    let mut names: Vec<String> = page
        .split("href=\"")
        .skip(1)
        .filter_map(|rest| rest.split('#').next())
        .map(|href| href.rsplit('/').next().unwrap().replace("%2B", "+"))
        .collect();
    names.sort();
    names
}

/// A Windows entry that failed withholds only its own platform: `--partial` publishes the
/// variant's Linux wheels in its index (pip picks by platform tag), and the manifest, the
/// notes' last section (the job summary) and stderr name what is missing per platform, the
/// other Python of that platform held back with it; verify-release passes, and the selector's
/// data says the variant serves Linux only. A re-run with the Windows build adds it to the
/// same index, the Linux wheels byte for byte as first published.
#[test]
fn a_failed_windows_entry_withholds_only_its_platform_and_a_rerun_adds_it() {
    let scratch = Scratch::new();
    let cpu = both_platforms(&scratch, &["cpu"], &["3.11", "3.12"]);
    let (linux, windows) = (on(&cpu, "linux-x86_64"), on(&cpu, "windows-x86_64"));
    assert_eq!((linux.len(), windows.len()), (2, 2), "{cpu:#?}");
    let artifacts = scratch.path().join("artifacts");
    // Windows py3.12's check failed (CI kept its build under failed-…); py3.11 passed.
    artifacts_of(&scratch, &[&linux[0], &linux[1], &windows[0]], &artifacts);
    let failed = format!("failed-{}", windows[1]["artifact"].as_str().unwrap());
    fs::create_dir_all(artifacts.join(&failed)).unwrap();

    let first = scratch.path().join("dist/first");
    let run = release_both(&scratch, &artifacts, &first, "cpu", "3.11,3.12");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let windows_jobs: Vec<&str> = windows
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    for job in &windows_jobs {
        assert!(
            run.stderr
                .contains(&format!("note: left out of this release: {job}:")),
            "{job}:\n{}",
            run.stderr
        );
    }
    assert!(run.stderr.contains("its check failed"), "{}", run.stderr);
    assert!(run.stderr.contains("held back"), "{}", run.stderr);
    let wheels = indexed(&first, "cpu");
    assert_eq!(wheels.len(), 2, "{wheels:?}");
    assert!(
        wheels
            .iter()
            .all(|w| w.contains("+cpu-") && w.ends_with("manylinux_2_28_x86_64.whl")),
        "{wheels:?}"
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(first.join("manifest.json")).unwrap()).unwrap();
    let left: Vec<(&str, &str, &str)> = manifest["left_out"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["variant"].as_str().unwrap(),
                l["platform"].as_str().unwrap(),
                l["job"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        left,
        windows_jobs
            .iter()
            .map(|j| ("cpu", "windows-x86_64", *j))
            .collect::<Vec<_>>()
    );
    let notes = fs::read_to_string(first.join("RELEASE_NOTES.md")).unwrap();
    let section = &notes[notes.find("## Not in this release").expect("the section")..];
    assert!(
        section.contains(
            "`cpu` for `windows-x86_64`: not in this release; its `linux-x86_64` wheels are"
        ),
        "{section}"
    );
    for job in &windows_jobs {
        assert!(section.contains(job), "{section}");
    }
    // The variant's own section says which platform it lacks, and where to read why.
    let cpu_section = &notes[notes.find("## `cpu`").unwrap()..notes.find("## Not in").unwrap()];
    assert!(
        cpu_section.contains("Not in this release for `windows-x86_64`"),
        "{cpu_section}"
    );
    let selector: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(first.join("variants.json")).unwrap()).unwrap();
    let cpu_data = selector["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "cpu")
        .unwrap();
    assert_eq!(cpu_data["platforms"], serde_json::json!(["linux-x86_64"]));
    let ok = run_verify_release(&scratch, &first);
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    assert!(
        ok.stderr.contains(
            "note: a partial release: it leaves out cpu on windows-x86_64 (2 matrix entries"
        ),
        "{}",
        ok.stderr
    );

    // The failed job ran again and passed: the re-run's index holds both platforms.
    fs::remove_dir_all(artifacts.join(&failed)).unwrap();
    artifacts_of(&scratch, &[&windows[1]], &artifacts);
    let second = scratch.path().join("dist/second");
    let run = release_both(&scratch, &artifacts, &second, "cpu", "3.11,3.12");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stderr.contains("left out"), "{}", run.stderr);
    let again = indexed(&second, "cpu");
    assert_eq!(again.len(), 4, "{again:?}");
    assert_eq!(
        again
            .iter()
            .filter(|w| w.ends_with("win_amd64.whl"))
            .count(),
        2,
        "{again:?}"
    );
    for wheel in &wheels {
        assert!(again.contains(wheel), "{wheel} in {again:?}");
        assert_eq!(
            fs::read(first.join(wheel)).unwrap(),
            fs::read(second.join(wheel)).unwrap(),
            "{wheel} differs"
        );
    }
    let notes = fs::read_to_string(second.join("RELEASE_NOTES.md")).unwrap();
    assert!(!notes.contains("Not in this release"), "{notes}");
    let whole = run_verify_release(&scratch, &second);
    assert_eq!(whole.code, 0, "{}", whole.stderr);
    assert!(!whole.stderr.contains("partial"), "{}", whole.stderr);
}

/// Both `cpu` and `cuda` failing on Windows still publishes both variants' Linux wheels,
/// each Windows entry named with its platform.
#[test]
fn windows_failing_for_every_variant_still_publishes_the_linux_sets() {
    let scratch = Scratch::new();
    let entries = both_platforms(&scratch, &["cpu", "cuda"], &["3.12"]);
    let linux = on(&entries, "linux-x86_64");
    let windows = on(&entries, "windows-x86_64");
    assert_eq!((linux.len(), windows.len()), (2, 2), "{entries:#?}");
    let artifacts = scratch.path().join("artifacts");
    artifacts_of(&scratch, &linux.iter().collect::<Vec<_>>(), &artifacts);
    let out = scratch.path().join("dist/linux-only");
    let run = release_both(&scratch, &artifacts, &out, "cpu,cuda", "3.12");
    assert_eq!(run.code, 0, "{}", run.stderr);
    for (variant, label) in [("cpu", "+cpu-"), ("cuda", "+cu12-")] {
        let wheels = indexed(&out, variant);
        assert_eq!(wheels.len(), 1, "{variant}: {wheels:?}");
        assert!(
            wheels[0].contains(label) && wheels[0].ends_with("manylinux_2_28_x86_64.whl"),
            "{wheels:?}"
        );
    }
    let manifest: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    let left = manifest["left_out"].as_array().unwrap();
    assert_eq!(left.len(), 2, "{left:#?}");
    assert!(
        left.iter().all(|l| l["platform"] == "windows-x86_64"),
        "{left:#?}"
    );
    let notes = fs::read_to_string(out.join("RELEASE_NOTES.md")).unwrap();
    for variant in ["cpu", "cuda"] {
        assert!(
            notes.contains(&format!(
                "`{variant}` for `windows-x86_64`: not in this release; its `linux-x86_64` wheels \
                 are"
            )),
            "{notes}"
        );
    }
    assert_eq!(run_verify_release(&scratch, &out).code, 0);
}
