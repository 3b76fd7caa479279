#![cfg(unix)]
//! `cargo xtask doctor`: its parsers on recorded real outputs (tests/data/doctor/SOURCES.md
//! says where each came from), and the whole command on this machine and on stand-ins: fake
//! `nvidia-smi`/`nvcc`/`hipinfo` on PATH that print those recorded outputs, and a fake
//! `Program Files\AMD\ROCm` tree. Stand-ins that hang or flood: `probes.rs`.

use crate::common;
use ct2v_support::report::Reporter;

use std::fs;
use std::path::{Path, PathBuf};

use ct2v_pipeline::doctor;

fn data(name: &str) -> String {
    let path = common::repo_root()
        .join("xtask/tests/data/doctor")
        .join(name);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn gfx(gpus: &[doctor::AmdGpu]) -> Vec<(&str, &str)> {
    gpus.iter()
        .map(|g| (g.name.as_str(), g.gfx.as_str()))
        .collect()
}

#[test]
fn rocminfo_outputs_give_the_gpu_agents_only() {
    assert_eq!(
        gfx(&doctor::rocminfo(&data("rocminfo-gfx1010.txt"))),
        [("AMD Radeon RX 5700 XT", "gfx1010")]
    );
    let gpus = doctor::rocminfo(&data("rocminfo-gfx1100.txt"));
    assert!(gpus.iter().all(|g| g.gfx == "gfx1100"), "{gpus:?}");
    assert!(!gpus.is_empty());
    let gpus = doctor::rocminfo(&data("rocminfo-gfx1030.txt"));
    assert!(gpus.iter().any(|g| g.gfx == "gfx1030"), "{gpus:?}");
    let both = doctor::rocminfo(&data("rocminfo-gfx1010-gfx1036.txt"));
    let targets: Vec<&str> = both.iter().map(|g| g.gfx.as_str()).collect();
    assert!(
        targets.contains(&"gfx1010") && targets.contains(&"gfx1036"),
        "{targets:?}"
    );
    assert!(doctor::rocminfo("ROCk module is NOT loaded").is_empty());
}

#[test]
fn hipinfo_outputs_give_each_device_without_feature_flags() {
    assert_eq!(
        gfx(&doctor::hipinfo(&data("hipinfo-gfx1010.txt"))),
        [
            ("AMD Radeon RX 5700", "gfx1010"),
            ("AMD Radeon(TM) 890M Graphics", "gfx1150")
        ]
    );
    assert_eq!(
        gfx(&doctor::hipinfo(&data("hipinfo-gfx1036-gfx1100.txt"))),
        [
            ("AMD Radeon(TM) Graphics", "gfx1036"),
            ("AMD Radeon RX 7900 XTX", "gfx1100")
        ]
    );
    assert_eq!(
        gfx(&doctor::hipinfo(&data("hipinfo-gfx1100.txt"))),
        [("AMD Radeon RX 7900 XTX", "gfx1100")]
    );
}

#[test]
fn nvidia_smi_outputs_give_the_gpus_and_the_drivers_cuda() {
    let gpus = doctor::nvidia_smi_csv(&data("nvidia-smi-h100.csv"));
    assert_eq!(gpus.len(), 1);
    assert_eq!(gpus[0].name, "NVIDIA H100 80GB HBM3");
    assert_eq!(gpus[0].compute_capability, "9.0");
    assert_eq!(
        doctor::nvidia_smi_cuda_version(&data("nvidia-smi-h100.txt")).as_deref(),
        Some("12.4")
    );
    assert_eq!(
        doctor::nvidia_smi_cuda_version(&data("nvidia-smi-v100-legacy.txt")).as_deref(),
        Some("10.2")
    );
    assert_eq!(
        doctor::nvidia_smi_cuda_version(&data("nvidia-smi-h100-cuda13.txt")).as_deref(),
        Some("13.0")
    );
}

/// A `bin` folder of fake tools (so `nvcc` there makes its parent a CUDA toolkit's root):
/// each prints a recorded output.
struct FakeBin {
    _root: tempfile::TempDir,
    bin: PathBuf,
}

impl FakeBin {
    fn new() -> FakeBin {
        let root = tempfile::tempdir().unwrap();
        let bin = root.path().join("bin");
        fs::create_dir_all(&bin).unwrap();
        FakeBin { _root: root, bin }
    }

    /// `name` prints `output` (or `query_output` when called with `--query-gpu=…`).
    fn tool(&self, name: &str, output: &str, query_output: Option<&str>) {
        let out = self.bin.join(format!("{name}.out"));
        fs::write(&out, output).unwrap();
        let mut script = String::from("#!/bin/sh\n");
        if let Some(query) = query_output {
            let q = self.bin.join(format!("{name}.query"));
            fs::write(&q, query).unwrap();
            script.push_str(&format!(
                "case \"$1\" in --query-gpu=*) cat '{}'; exit 0;; esac\n",
                q.display()
            ));
        }
        script.push_str(&format!("cat '{}'\n", out.display()));
        common::write_script(&self.bin.join(name), &script);
    }

    /// PATH with only these tools and the system's basic folders (no real GPU tools).
    fn path(&self) -> String {
        format!("{}:/usr/bin:/bin", self.bin.display())
    }
}

fn doctor(args: &[&str], env: &[(&str, String)], removed: &[&str]) -> common::Run {
    let mut all = vec!["doctor"];
    all.extend_from_slice(args);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    common::xtask_with_env(&common::repo_root(), &all, &env, removed)
}

pub(crate) const GPU_ENV: [&str; 5] = [
    "HIP_PATH",
    "ProgramFiles",
    "CUDA_PATH",
    "CUDA_HOME",
    "ROCM_PATH",
];

#[test]
fn on_this_machine_it_recommends_what_fits() {
    let run = doctor(&[], &[], &[]);
    let has = |tool: &str| common::installed(tool) || which(tool);
    if has("nvidia-smi") || has("rocminfo") {
        eprintln!("skipping the cpu expectation: this machine has GPU tools");
        return;
    }
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(run.stdout.contains("Verdict: cpu"), "{}", run.stdout);
    assert!(run.stdout.contains("no NVIDIA GPU"), "{}", run.stdout);
    assert!(run.stdout.contains("no AMD GPU"), "{}", run.stdout);
}

fn which(tool: &str) -> bool {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .any(|d| d.join(tool).is_file())
}

/// `<pf>/AMD/ROCm/<version>/bin` with `files`, and rocBLAS kernels for `targets`.
fn rocm_install(pf: &Path, version: &str, files: &[&str], targets: &[&str]) -> PathBuf {
    let root = pf.join("AMD/ROCm").join(version);
    let library = root.join("bin/rocblas/library");
    fs::create_dir_all(&library).unwrap();
    for f in files {
        fs::write(root.join("bin").join(f), "MZ").unwrap();
    }
    for t in targets {
        fs::write(library.join(format!("TensileLibrary_lazy_{t}.dat")), "k").unwrap();
    }
    root
}

#[test]
fn with_hip_sdk_6_2_and_7_1_and_hip_path_at_7_1_gfx1010_gets_6_2_and_hip_path_is_explained() {
    let pf = tempfile::tempdir().unwrap();
    let v62 = rocm_install(
        pf.path(),
        "6.2",
        &[
            "amdhip64_6.dll",
            "amd_comgr_2.dll",
            "hipblas.dll",
            "rocblas.dll",
        ],
        &["gfx1010", "gfx1030", "gfx1100"],
    );
    let v71 = rocm_install(
        pf.path(),
        "7.1",
        &["amdhip64_7.dll", "amd_comgr0701.dll", "hipblas.dll"],
        &["gfx1030", "gfx1100"],
    );
    let bin = FakeBin::new();
    bin.tool("hipinfo", &data("hipinfo-gfx1010.txt"), None);
    // The display driver's HIP 6 runtime in System32, version 6.4 (2025 Adrenalin).
    let windows = tempfile::tempdir().unwrap();
    let system32 = windows.path().join("System32");
    if common::mingw::available(false) {
        common::mingw::build_versioned(&system32, "amdhip64_6.dll", [6, 4, 43482, 7]);
    } else {
        return;
    }
    let env = [
        ("PATH", bin.path()),
        ("ProgramFiles", pf.path().display().to_string()),
        ("HIP_PATH", v71.display().to_string()),
        ("SystemRoot", windows.path().display().to_string()),
    ];
    let run = doctor(&[], &env, &GPU_ENV);
    assert_eq!(run.code, 0, "{}", run.stdout);
    for needle in [
        "AMD Radeon RX 5700  gfx1010  (from hipinfo",
        "    the runtime reports it as gfx1010:xnack-\n",
        "runtime: amdhip64_6.dll",
        "runtime: amdhip64_7.dll",
        "Verdict: rocm-gfx1010\n",
        "which the official ROCm wheel has no kernels for: rocm-gfx1010 is built for it from \
         source against HIP 6.2",
        &format!(
            "HIP_PATH is {}, which has amdhip64_7.dll, not amdhip64_6.dll",
            v71.display()
        ),
        &format!("using {} instead", v62.display()),
        &format!("setx HIP_PATH \"{}\"", v62.display()),
        &format!(
            "cargo xtask build --variant rocm-gfx1010 --sdk-dir \"{}\"",
            v62.display()
        ),
    ] {
        assert!(
            run.stdout.contains(needle),
            "`{needle}` in:\n{}",
            run.stdout
        );
    }

    assert!(
        run.stdout.contains(&format!(
            "HIP runtime of the display driver: {} (6.4.43482.7)",
            system32.join("amdhip64_6.dll").display()
        )),
        "{}",
        run.stdout
    );
    let run = doctor(&["--json"], &env, &GPU_ENV);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["verdict"]["variant"], "rocm-gfx1010");
    assert_eq!(json["verdict"]["ready"], true);
    assert_eq!(json["facts"]["hip_installs"].as_array().unwrap().len(), 2);

    // A driver whose HIP runtime is older than the SDK the wheel is built with, then none.
    common::mingw::build_versioned(&system32, "amdhip64_6.dll", [6, 1, 40091, 0]);
    let run = doctor(&[], &env, &GPU_ENV);
    assert_eq!(run.code, 1, "{}", run.stdout);
    for needle in [
        "Verdict: rocm-gfx1010 (not ready yet)",
        "is 6.1.40091.0, older than the HIP SDK 6.2 the wheel is built with",
        "install or update the AMD Adrenalin display driver",
    ] {
        assert!(
            run.stdout.contains(needle),
            "`{needle}` in:\n{}",
            run.stdout
        );
    }
    fs::remove_file(system32.join("amdhip64_6.dll")).unwrap();
    let run = doctor(&[], &env, &GPU_ENV);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stdout
            .contains("no HIP 6 runtime from the display driver"),
        "{}",
        run.stdout
    );
    common::mingw::build_versioned(&system32, "amdhip64_6.dll", [6, 4, 43482, 7]);

    // A stock SDK (no gfx1010 rocBLAS kernels) fits: the build bundles the community
    // rocBLAS, a pinned input of the variant, so nothing is copied into the SDK.
    fs::remove_file(v62.join("bin/rocblas/library/TensileLibrary_lazy_gfx1010.dat")).unwrap();
    let run = doctor(&[], &env, &GPU_ENV);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(
        run.stdout.contains("Verdict: rocm-gfx1010\n"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("community build"), "{}", run.stdout);

    // Without amd_comgr, 6.2 does not fit: exit 1 and the fix.
    fs::remove_file(v62.join("bin/amd_comgr_2.dll")).unwrap();
    let run = doctor(&[], &env, &GPU_ENV);
    assert_eq!(run.code, 1, "{}", run.stdout);
    for needle in [
        "Verdict: rocm-gfx1010 (not ready yet)",
        "amd_comgr: MISSING",
        "no ROCm-capable device",
        "HIP Runtime Compiler",
    ] {
        assert!(
            run.stdout.contains(needle),
            "`{needle}` in:\n{}",
            run.stdout
        );
    }
}

/// An RX 7900 XTX (gfx1100) on this Linux host: its ROCm 10 family wheel, which carries the ROCm
/// runtime (the official ROCm wheel is Windows-only), as the selector answers (gpu_select.rs
/// compares them on every card).
#[test]
fn an_rdna3_card_on_linux_gets_its_rocm_10_family_wheel() {
    let bin = FakeBin::new();
    bin.tool("hipinfo", &data("hipinfo-gfx1100.txt"), None);
    let run = doctor(&[], &[("PATH", bin.path())], &GPU_ENV);
    assert_eq!(run.code, 0, "{}", run.stdout);
    for needle in [
        "Verdict: rocm-rdna3\n",
        "(gfx1100, RDNA 3) is served by rocm-rdna3, its family's wheel built against ROCm 10.0.0",
        "the amdgpu kernel driver (no ROCm install)",
        "rocm-sdk path --root",
        "  wheel: ctranslate2==4.7.1+rocm10.rdna3",
    ] {
        assert!(
            run.stdout.contains(needle),
            "`{needle}` in:\n{}",
            run.stdout
        );
    }
}

#[test]
fn an_nvidia_gpu_with_a_toolkit_gets_cuda() {
    let bin = FakeBin::new();
    bin.tool(
        "nvidia-smi",
        &data("nvidia-smi-h100-cuda13.txt"),
        Some(&data("nvidia-smi-h100.csv")),
    );
    bin.tool(
        "nvcc",
        "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 13.0, V13.0.88\n",
        None,
    );
    let run = doctor(&[], &[("PATH", bin.path())], &GPU_ENV);
    assert_eq!(run.code, 0, "{}", run.stdout);
    for needle in [
        "NVIDIA H100 80GB HBM3  compute capability 9.0",
        "CUDA toolkit 13.0",
        "the driver supports CUDA up to 13.0",
        "Verdict: cuda",
        "cargo xtask build --variant cuda --cuda-arch 9.0",
    ] {
        assert!(
            run.stdout.contains(needle),
            "`{needle}` in:\n{}",
            run.stdout
        );
    }
}

/// `doctor --variant V` checks what that build needs here (CI runs it after
/// its installs): ready for cpu; for cuda it names the missing toolkit, and finds one (its
/// version read from nvcc) once `nvcc` is on PATH; a Windows build here names the platform
/// and the unpinned inputs.
#[test]
fn doctor_for_a_variant_names_what_that_build_lacks_here() {
    let python =
        ct2v_support::host::python_version(&Reporter::captured()).unwrap_or_else(|| "3.11".into());
    let bin = FakeBin::new();
    // The host's C++ compiler and Python stay reachable.
    let path = format!("{}:/usr/local/bin:/usr/bin:/bin", bin.path());
    let ready = doctor(
        &["--variant", "cpu", "--python", &python],
        &[("PATH", path.clone())],
        &GPU_ENV,
    );
    assert_eq!(ready.code, 0, "{}{}", ready.stdout, ready.stderr);
    assert!(ready.stdout.starts_with("ready: "), "{}", ready.stdout);

    let cuda = doctor(
        &["--variant", "cuda", "--python", &python],
        &[("PATH", path.clone())],
        &GPU_ENV,
    );
    assert_eq!(cuda.code, 1, "{}", cuda.stdout);
    assert!(
        cuda.stdout
            .contains("not ready to build cuda for linux-x86_64"),
        "{}",
        cuda.stdout
    );
    assert!(
        cuda.stdout.contains("no CUDA toolkit found"),
        "{}",
        cuda.stdout
    );
    // A wheel job on top of a native job's library needs no toolkit (the cuda bundle copies
    // nothing from it; the library's record gives the version).
    let wheel_job = doctor(
        &[
            "--variant",
            "cuda",
            "--python",
            &python,
            "--prebuilt-native",
        ],
        &[("PATH", path.clone())],
        &GPU_ENV,
    );
    assert_eq!(
        wheel_job.code, 0,
        "{}{}",
        wheel_job.stdout, wheel_job.stderr
    );
    bin.tool(
        "nvcc",
        "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 12.8, V12.8.93\n",
        None,
    );
    let found = doctor(
        &["--variant", "cuda", "--python", &python],
        &[("PATH", path.clone())],
        &GPU_ENV,
    );
    assert_eq!(found.code, 0, "{}{}", found.stdout, found.stderr);

    // A pyenv shim for a version pyenv has but does not select: its own words are passed on.
    common::write_script(
        &bin.bin.join("python3.12"),
        "#!/bin/sh\necho \"pyenv: python3.12: command not found\" >&2\n\
         echo \"The \\`python3.12' command exists in these Python versions:\" >&2\n\
         echo '  3.12.1' >&2\nexit 127\n",
    );
    let shimmed = doctor(
        &["--variant", "cpu", "--python", "3.12"],
        &[("PATH", path)],
        &GPU_ENV,
    );
    assert_eq!(shimmed.code, 1, "{}", shimmed.stdout);
    for needle in [
        "`python3.12` (Python 3.12) cannot be started",
        "It said: \"pyenv: python3.12: command not found The `python3.12' command exists in these Python versions: 3.12.1\"",
        "`pyenv global <default> <3.12 version>`",
    ] {
        assert!(
            shimmed.stdout.contains(needle),
            "`{needle}` in:\n{}",
            shimmed.stdout
        );
    }

    let windows = doctor(
        &["--variant", "rocm", "--platform", "windows-x86_64"],
        &[],
        &[],
    );
    assert_eq!(windows.code, 1, "{}", windows.stdout);
    for needle in [
        "a windows-x86_64 build runs on a windows-x86_64 machine, not here",
        "input `ctranslate2-wheels` is not pinned",
        "cargo xtask pin --variant rocm",
    ] {
        assert!(
            windows.stdout.contains(needle),
            "`{needle}` in:\n{}",
            windows.stdout
        );
    }
}

/// An RX 5500 XT (gfx1012, RDNA 1) on Windows with HIP SDK 6.2 installed: the verdict is the
/// HIP 6 build the coverage names for it (RDNA 1 stays on the HIP 6 runtime), built with that
/// SDK, with the ROCm 10 family wheel named as the alternative; without the driver's HIP 6
/// runtime, installing the driver comes first and the note names the variant. An RX 6600
/// (RDNA 2) gets its ROCm 10 family wheel instead.
#[test]
fn an_rdna1_card_the_official_wheel_skips_gets_its_hip_sdk_build() {
    use ct2v_pipeline::doctor::{AmdGpu, DriverRuntime, Facts, recommend};
    use ct2v_pipeline::sdk::hip::HipInstall;
    use std::collections::BTreeSet;
    let catalog = ct2v_pipeline::variant::Catalog::load(&common::repo_root(), &[]).unwrap();
    let coverage = ct2v_pipeline::variant::coverage::of_catalog(&catalog).unwrap();
    let sdk = HipInstall {
        root: PathBuf::from(r"C:\Program Files\AMD\ROCm\6.2"),
        version: Some("6.2".into()),
        lib_dir: Some(PathBuf::from(r"C:\Program Files\AMD\ROCm\6.2\bin")),
        runtime: vec!["amdhip64_6.dll".into()],
        comgr: vec!["amd_comgr_2.dll".into()],
        rocblas_library: Some(PathBuf::from(
            r"C:\Program Files\AMD\ROCm\6.2\bin\rocblas\library",
        )),
        rocblas_targets: BTreeSet::from(["gfx1030".to_string(), "gfx1100".to_string()]),
        device_libs: None,
    };
    let mut facts = Facts {
        os: "windows".into(),
        arch: "x86_64".into(),
        amd_gpus: vec![AmdGpu {
            name: "AMD Radeon RX 5500 XT".into(),
            gfx: "gfx1012".into(),
            arch: "gfx1012".into(),
        }],
        windows_layout: true,
        hip_installs: vec![sdk],
        driver_hip_runtime: Some(DriverRuntime {
            path: PathBuf::from(r"C:\Windows\System32\amdhip64_6.dll"),
            version: Some([6, 4, 43482, 7]),
        }),
        ..Facts::default()
    };
    let verdict = recommend(&facts, &coverage);
    assert_eq!(verdict.variant, "rocm-gfx1012");
    assert_eq!(verdict.local_version.as_deref(), Some("gfx1012"));
    assert!(verdict.ready, "{verdict:#?}");
    assert!(
        verdict.why.starts_with(
            "AMD Radeon RX 5500 XT (gfx1012, RDNA 1), which the official ROCm wheel has no \
             kernels for: rocm-gfx1012 is built for it from source against HIP 6.2"
        ),
        "{verdict:#?}"
    );
    assert_eq!(
        verdict.next_steps,
        [
            r#"build it: cargo xtask build --variant rocm-gfx1012 --sdk-dir "C:\Program Files\AMD\ROCm\6.2""#
        ]
    );
    assert!(
        verdict.notes.iter().any(|n| n
            .starts_with("the alternative: rocm-rdna1 (+rocm10.rdna1), built against ROCm 10.0.0")),
        "{verdict:#?}"
    );
    let mut rx6600 = facts.clone();
    rx6600.amd_gpus[0] = AmdGpu {
        name: "AMD Radeon RX 6600".into(),
        gfx: "gfx1032".into(),
        arch: "gfx1032".into(),
    };
    let verdict = recommend(&rx6600, &coverage);
    assert_eq!(verdict.variant, "rocm-rdna2", "{verdict:#?}");
    assert!(
        verdict.why.contains("the Adrenalin display driver only"),
        "{verdict:#?}"
    );

    facts.driver_hip_runtime = None;
    let verdict = recommend(&facts, &coverage);
    assert!(!verdict.ready);
    assert!(
        verdict.next_steps[0].starts_with("install or update the AMD Adrenalin display driver"),
        "{verdict:#?}"
    );
    assert!(
        verdict
            .notes
            .iter()
            .any(|n| n.contains("the rocm-gfx1012 wheel does not bundle one")),
        "{verdict:#?}"
    );
}

/// `--site-packages` names a folder: a path that does not exist, a file, a FIFO (never
/// opened, so never waited on) or a link to a file is exit 2 naming the flag and the path,
/// with how to find the folder.
#[test]
fn doctor_site_packages_that_is_not_a_folder_is_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("site.txt");
    fs::write(&file, "not a folder").unwrap();
    let mut bad = vec![dir.path().join("missing"), file.clone()];
    #[cfg(unix)]
    {
        let fifo = dir.path().join("fifo");
        common::mkfifo(&fifo);
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        bad.extend([fifo, link]);
    }
    for path in bad {
        let run = doctor(&["--site-packages", path.to_str().unwrap()], &[], &[]);
        assert_eq!(
            run.code,
            2,
            "{}: {}{}",
            path.display(),
            run.stdout,
            run.stderr
        );
        assert!(
            run.stderr.contains(&format!(
                "--site-packages {} is not a folder",
                path.display()
            )) && run.stderr.contains("sysconfig.get_paths()['platlib']"),
            "{}",
            run.stderr
        );
    }
    let run = doctor(
        &[
            "--site-packages",
            dir.path().to_str().unwrap(),
            "--variant",
            "cpu",
        ],
        &[],
        &[],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
}
