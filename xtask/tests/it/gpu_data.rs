//! The GPU data file (`variants/gpus.toml`) drives every consumer: a GPU family added there
//! (its target, a PCI ID, its products, TheRock's table, AMD's key) plus one variant file is
//! known to `variants --json`, the plan's targets and target families, the bundle's target
//! filter and exclusions, `doctor`'s choice and the selector's answer, with no code touched.
//! A broken data file is exit 2 naming the file, the key and the next step.

use std::fs;

use crate::common::{Scratch, plan_args, plan_step};
use crate::gpu_select::{
    DATA_BEGIN, DATA_END, Gpu, SELECTOR, data_block, replaced, selector_answer_of,
};

/// A family like the next one AMD ships (gfx1250 is in TheRock 10.0 already): a target no
/// code names, in TheRock 10.0's table with a family of its own and an rccl exclusion.
fn add_family_in_data(scratch: &Scratch) {
    let gpus = "variants/gpus.toml";
    let rdna4 = "  { gfx = \"gfx1201\", generation = \"RDNA 4\", products = \"RX 9070 XT, 9070, 9070 GRE\" },\n";
    scratch.edit(
        gpus,
        rdna4,
        &format!(
            "{rdna4}  {{ gfx = \"gfx1260\", generation = \"RDNA 5\", products = \"Radeon Test 1260\" }},\n"
        ),
    );
    let last_id =
        "  { id = \"7590\", gfx = \"gfx1200\", name = \"Navi 44 [Radeon RX 9050 / 9060 XT]\" },\n";
    scratch.edit(
        gpus,
        last_id,
        &format!("{last_id}  {{ id = \"7f10\", gfx = \"gfx1260\", name = \"Test 60 [Radeon Test 1260]\" }},\n"),
    );
    scratch.edit(
        gpus,
        "rocm-rdna4 = \"gfx12_0\"\n",
        "rocm-rdna4 = \"gfx12_0\"\nrocm-rdna5 = \"gfx12_6\"\n",
    );
    scratch.edit(
        gpus,
        "\"gfx1201\", \"gfx1250\"]",
        "\"gfx1201\", \"gfx1250\", \"gfx1260\"]",
    );
    scratch.edit(
        gpus,
        "gfx125X-dcgpu = [\"gfx1250\"]\n",
        "gfx125X-dcgpu = [\"gfx1250\"]\ngfx126X-all = [\"gfx1260\"]\n",
    );
    scratch.edit(
        gpus,
        "rccl = [\"gfx1103\", \"gfx1150\", \"gfx1152\", \"gfx1153\"]",
        "rccl = [\"gfx1103\", \"gfx1150\", \"gfx1152\", \"gfx1153\", \"gfx1260\"]",
    );
    fs::write(
        scratch.path().join("variants/rocm-rdna5.toml"),
        "extends = \"rocm-rdna2\"\n\
         description = \"AMD test family (gfx1260): from source against ROCm 10's Python wheels\"\n\
         local-version = \"rocm10.rdna5\"\n\
         gpu-targets = [\"gfx1260\"]\n",
    )
    .unwrap();
}

#[test]
fn a_gpu_family_added_in_data_alone_reaches_coverage_plan_bundle_doctor_and_selector() {
    let scratch = Scratch::new();
    add_family_in_data(&scratch);

    // Coverage: the variant's build, its card, its PCI ID and AMD's key.
    let json = scratch.run(&["variants", "--json"]);
    assert_eq!(json.code, 0, "{}", json.stderr);
    let coverage: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let variant = coverage["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "rocm-rdna5")
        .expect("rocm-rdna5 in variants --json");
    let amd = &variant["builds"][0]["amd"];
    assert_eq!(amd["gfx"], serde_json::json!(["gfx1260"]));
    assert_eq!(amd["amd_sub_family"], "gfx12_6");
    assert_eq!(amd["rocm"], "10.0.0");
    let card = coverage["cards"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["target"] == "gfx1260")
        .expect("a card for gfx1260");
    assert_eq!(card["generation"], "RDNA 5");
    assert_eq!(
        card["served_by"],
        serde_json::json!([{"variant": "rocm-rdna5", "local_version": "rocm10.rdna5", "how": "native"}])
    );
    assert!(
        coverage["amd_pci_ids"]["devices"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["device"] == "7f10" && d["gfx"] == "gfx1260")
    );
    let table = scratch.run(&["variants", "--markdown"]);
    assert!(
        table.stdout.contains(
            "| AMD RDNA 5: Radeon Test 1260 | gfx1260 | `rocm-rdna5` (`+rocm10.rdna5`) |"
        ),
        "{}",
        table.stdout
    );

    // The plan: its targets, TheRock 10.0's new family name, and the bundle job's filter and
    // the exclusions of its table.
    for extra in [&[][..], &["--gpu-targets", "gfx126X-all"][..]] {
        let mut args = plan_args("rocm-rdna5", "linux-x86_64", "3.12", extra);
        args.push("--json");
        let plan = scratch.run(&args);
        assert_eq!(plan.code, 0, "{extra:?}: {}", plan.stderr);
        let plan: serde_json::Value = serde_json::from_str(&plan.stdout).unwrap();
        let bundle = plan_step(&plan, "bundle");
        assert_eq!(
            bundle["gpu_targets"],
            serde_json::json!(["gfx1260"]),
            "{extra:?}"
        );
        assert_eq!(
            bundle["not_built"],
            serde_json::json!({"rccl": ["gfx1260"]}),
            "{extra:?}"
        );
        let text = plan.to_string();
        assert!(
            text.contains("CMAKE_HIP_ARCHITECTURES=gfx1260"),
            "{extra:?}"
        );
        assert!(text.contains("rocm-sdk-device-gfx1260"), "{extra:?}");
    }

    // doctor: a machine whose runtime reports gfx1260 gets the new family.
    use ct2v_pipeline::doctor::{AmdGpu, Facts, recommend};
    let catalog = ct2v_pipeline::variant::Catalog::load(scratch.path(), &[]).unwrap();
    let covered = ct2v_pipeline::variant::coverage::of_catalog(&catalog).unwrap();
    for os in ["linux", "windows"] {
        let facts = Facts {
            os: os.into(),
            arch: "x86_64".into(),
            amd_gpus: vec![AmdGpu {
                name: "AMD Radeon Test 1260".into(),
                gfx: "gfx1260".into(),
                arch: "gfx1260".into(),
            }],
            ..Facts::default()
        };
        let verdict = recommend(&facts, &covered);
        assert_eq!(verdict.variant, "rocm-rdna5", "{os}: {verdict:#?}");
        assert_eq!(verdict.local_version.as_deref(), Some("rocm10.rdna5"));
    }

    // The selector, its data block generated from the scratch's data as the project does: a
    // machine showing PCI device 1002:7f10 (sysfs on Linux, the PnP ID on Windows).
    let selector = scratch.path().join(SELECTOR);
    let text = fs::read_to_string(&selector).unwrap();
    let generated = replaced(&text, DATA_BEGIN, DATA_END, &data_block(&json.stdout)).unwrap();
    fs::write(&selector, generated).unwrap();
    let Some(python) = crate::probes::python_exe() else {
        panic!("no python3: the selector cannot be asked");
    };
    for platform in ["linux-x86_64", "windows-x86_64"] {
        let gpus = [Gpu::Amd {
            gfx: "gfx1260".into(),
        }];
        let answer = selector_answer_of(&selector, &python, platform, &gpus, &|_| "7f10".into());
        assert_eq!(answer["variant"], "rocm-rdna5", "{platform}: {answer:#}");
        assert_eq!(answer["local_version"], "rocm10.rdna5", "{platform}");
        assert_eq!(answer["gpu"]["gfx"], "gfx1260", "{platform}");
    }
}

/// Mistakes in the data file stop every command that reads the variants, exit 2, naming the
/// file, the key, the line and the next step: a duplicate PCI ID, bad hex, a PCI ID of an
/// unknown target, a target in no TheRock table, a family naming a target its table does not
/// declare, AMD's key for a variant that does not exist, a missing data file.
#[test]
fn a_broken_gpu_data_file_is_exit_2_naming_the_file_and_key() {
    let gpus = "variants/gpus.toml";
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "{ id = \"7590\",",
            "{ id = \"73ff\",",
            &[
                "variants/gpus.toml",
                "`amd.pci-ids.devices id` `73ff`: listed twice",
                "-->",
                "keep one line per device ID",
            ],
        ),
        (
            "{ id = \"7590\",",
            "{ id = \"7z90\",",
            &["`7z90`: not a PCI device ID", "four lower-case hex digits"],
        ),
        (
            "{ id = \"7590\", gfx = \"gfx1200\"",
            "{ id = \"7590\", gfx = \"gfx1260\"",
            &[
                "`gfx1260`: not one of [amd] targets",
                "add the target to [amd]",
            ],
        ),
        (
            "{ gfx = \"gfx1201\",",
            "{ gfx = \"gfx1261\",",
            &["`amd.targets gfx` `gfx1261`: in no [therock.*] table"],
        ),
        (
            "gfx125X-dcgpu = [\"gfx1250\"]",
            "gfx125X-dcgpu = [\"gfx1260\"]",
            &[
                "`therock.\"10.0\".families.gfx125X-dcgpu` `gfx1260`: a target this table does not declare",
                "add it to TheRock 10.0 `targets`",
            ],
        ),
        (
            "rocm-rdna4 = \"gfx12_0\"",
            "rocm-rdna-4 = \"gfx12_0\"",
            &[
                "[amd.families] names `rocm-rdna-4`, which is no variant",
                "did you mean",
            ],
        ),
        (
            "[amd.families]",
            "[amd.family]",
            &["unknown key `family`", "variants/gpus.toml"],
        ),
    ];
    for (from, to, needles) in cases {
        let scratch = Scratch::new();
        scratch.edit(gpus, from, to);
        for args in [
            &["variants", "--json"][..],
            &plan_args("rocm-rdna2", "linux-x86_64", "3.12", &[])[..],
        ] {
            let run = scratch.run(args);
            assert_eq!(run.code, 2, "{to} {args:?}: {}", run.stderr);
            for needle in *needles {
                assert!(
                    run.stderr.contains(needle),
                    "{to}: `{needle}` in\n{}",
                    run.stderr
                );
            }
            assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
        }
    }
    let scratch = Scratch::new();
    fs::remove_file(scratch.path().join(gpus)).unwrap();
    let run = scratch.run(&["variants", "--json"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("variants/gpus.toml"), "{}", run.stderr);
    assert!(run.stderr.contains("restore it"), "{}", run.stderr);
}
