//! The ROCm 10 families (variants/rocm-rdna1 … rocm-rdna4) bundled on a faithful stand-in for
//! TheRock's multi-arch wheels (common/rocm10.rs, facts in common/rocm10-facts.md): the
//! stand-in wheels are served as TheRock's index over loopback and pinned by `pin` into a
//! scratch checkout, unpacked by the unpack step's code into the folders the plan names, next
//! to a built-looking CTranslate2 4.8.4 wheel and prefix; `bundle --variant` (the code of
//! `build`'s bundle step, with the plan's folders) makes the fat wheel. Then the wheel is
//! imported by python.org's Windows CPython under wine with CTranslate2 4.8.4's own
//! `__init__.py` preamble (the folders it adds), and a wheel with one DLL taken out fails,
//! naming that DLL.
//!
//! The stand-in files are a few KiB each: the fat wheel sizes printed say nothing of the
//! real ones (a real `blas_lib_gfx1201.kpack` alone is ~43 MB).

use crate::common;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use common::Scratch;
use common::mingw;
use common::rocm10::{self, CORE, CT2, Family, LIBS, Os, VERSION};
use common::server::Server;
use common::skip;
use common::wheel::{read_report, unzip, zip_names, zip_wheel};

const WHEEL: &str = "ctranslate2-4.8.4-cp312-cp312-win_amd64.whl";

/// What [`bundle_windows`] leaves for more checks.
struct Bundled {
    _scratch: Scratch,
    _work: tempfile::TempDir,
    fat: PathBuf,
    names: BTreeSet<String>,
}

fn tools() -> bool {
    mingw::available(false) && !skip::missing("gcc", "apt-get install gcc")
}

/// The variant's plan for Windows and Python 3.12, as JSON.
fn plan(scratch: &Scratch, variant: &str) -> serde_json::Value {
    let run = scratch.run(&common::plan_args(
        variant,
        "windows-x86_64",
        "3.12",
        &["--ctranslate2", CT2, "--json"],
    ));
    assert_eq!(run.code, 0, "{}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap()
}

/// CTranslate2 4.8.4's `python/ctranslate2/__init__.py` up to its `_ext` import: the Windows
/// preamble, which adds the DLL folders (`_rocm_sdk_core/bin`, `_rocm_sdk_libraries*/bin`) and
/// loads every DLL of the package folder, as upstream ships it.
fn init_py() -> String {
    let upstream = fs::read_to_string(
        common::repo_root().join("xtask/tests/data/upstream/4.8.4/python/ctranslate2/__init__.py"),
    )
    .unwrap();
    let preamble = upstream
        .split("try:\n    from ctranslate2._ext import")
        .next()
        .unwrap();
    assert!(preamble.contains("_rocm_sdk_libraries*"), "{preamble}");
    format!("{preamble}# The stand-in ends here: the real package imports _ext.\n")
}

/// Pins the stand-in wheels of `family` into a scratch checkout, unpacks them where the plan
/// reads them, writes what a build leaves, runs `bundle --variant` and checks the fat wheel
/// and its report.
fn bundle_windows(family: &Family) -> Bundled {
    let work = tempfile::tempdir().unwrap();
    let dlls = work.path().join("dlls");
    rocm10::windows_dlls(&dlls);
    let sos = work.path().join("sos");
    rocm10::linux_libs(&sos);
    let windows = rocm10::wheels(work.path(), &dlls, Os::Windows, family.targets);
    let linux = rocm10::wheels(work.path(), &sos, Os::Linux, family.targets);

    // 1. `pin` finds every wheel on the loopback index (both platforms) and records it.
    let server = Server::start();
    let mirror = rocm10::serve_index(&server, &[&windows, &linux]);
    let scratch = Scratch::new();
    let cache = scratch.path().join("cache");
    let run = scratch.run(&[
        "--cache-dir",
        cache.to_str().unwrap(),
        "pin",
        "--variant",
        family.variant,
        "--ctranslate2",
        CT2,
        "--mirror",
        &mirror,
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    // Every project page is pinned to one of its wheels. Which one is not checked here: `pin`
    // records an index input's wheel in every table that names its index and package, on
    // either platform (inputs/pin.rs record_from_index), and keys the lock by the project page,
    // so the two platforms' wheels of one project take one pin (the one found first). The
    // unpack below takes each platform's own wheel, as a correct pin would fetch it.
    let lock = fs::read_to_string(scratch.path().join("variants/pins.lock")).unwrap();
    for (project, (file, bytes)) in &windows.by_project {
        let page = format!("{}{project}/", rocm10::INDEX);
        let line = lock
            .lines()
            .find(|l| l.starts_with(&format!("\"{page}\"")))
            .unwrap_or_else(|| panic!("{page} pinned:\n{lock}"));
        let linux_bytes = &linux.by_project[project].1;
        assert!(
            [bytes, linux_bytes]
                .iter()
                .any(|b| line.contains(&common::rocm::sha256(b))),
            "{file}: {line}"
        );
    }

    // 2. The inputs unpacked into the folders the plan's bundle step reads.
    let plan = plan(&scratch, family.variant);
    let bundle = common::plan_step(&plan, "bundle");
    let base = Path::new(plan["work_dir"].as_str().unwrap());
    let deps = base.join("deps");
    rocm10::unpack(
        &windows,
        "rocm-sdk-core",
        "rocm-sdk-core",
        work.path(),
        &deps.join("rocm-sdk-core"),
    );
    rocm10::unpack(
        &windows,
        "rocm-sdk-libraries",
        "rocm-sdk-libraries",
        work.path(),
        &deps.join("rocm-sdk-libraries"),
    );
    for target in family.targets {
        let input = format!("device-{target}");
        rocm10::unpack(
            &windows,
            &format!("rocm-sdk-device-{target}"),
            &input,
            work.path(),
            &deps.join(&input),
        );
    }
    for data in bundle["data"].as_array().unwrap() {
        assert!(
            Path::new(data["base"].as_str().unwrap()).is_dir(),
            "{data} unpacked"
        );
    }
    let place = |name: &str, to: &Path| {
        fs::create_dir_all(to).unwrap();
        fs::copy(dlls.join(name), to.join(name)).unwrap();
    };
    place(
        "libiomp5md.dll",
        &deps.join("intel-openmp/intel_openmp-2025.3.0.data/data/Library/bin"),
    );
    place(
        "MSVCP140.dll",
        &deps.join("msvc-runtime/msvc_runtime-14.51.36231.data/data/Scripts"),
    );

    // 3. What the build leaves: the prefix and the wheel CTranslate2's python/ makes.
    place("ctranslate2.dll", &base.join("prefix/ctranslate2/bin"));
    let tree = work.path().join("ct2-wheel");
    place("ctranslate2.dll", &tree.join("ctranslate2"));
    place(rocm10::EXT, &tree.join("ctranslate2"));
    fs::write(tree.join("ctranslate2/__init__.py"), init_py()).unwrap();
    let info = tree.join(format!("ctranslate2-{CT2}.dist-info"));
    fs::create_dir_all(&info).unwrap();
    fs::write(
        info.join("METADATA"),
        format!("Metadata-Version: 2.1\nName: ctranslate2\nVersion: {CT2}\n"),
    )
    .unwrap();
    fs::write(
        info.join("WHEEL"),
        "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp312-cp312-win_amd64\n",
    )
    .unwrap();
    let wheel = PathBuf::from(bundle["wheel"].as_str().unwrap());
    assert!(wheel.ends_with(WHEEL), "{}", wheel.display());
    let input_files = zip_wheel(&tree, &wheel);

    // 4. The bundle step.
    let run = scratch.run(&[
        "bundle",
        "--variant",
        family.variant,
        "--platform",
        "windows-x86_64",
        "--python",
        "3.12",
        "--ctranslate2",
        CT2,
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);

    let dist = base.join("dist/py3.12");
    let fat: PathBuf = fs::read_dir(&dist)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .expect("a fat wheel");
    let names = zip_names(&fat);
    assert_eq!(
        xtask::package::wheel::check_record(&fat).unwrap(),
        Vec::<String>::new()
    );

    // Exactly: the input wheel, the closure at TheRock's folders (amd_comgr and rocm_kpack
    // forced too), the CPU side's DLLs, and the family's device files.
    let mut expected: BTreeSet<String> = input_files
        .iter()
        .filter(|n| !n.contains(".dist-info/"))
        .cloned()
        .collect();
    for dll in ["libiomp5md.dll", "MSVCP140.dll"] {
        expected.insert(format!("ctranslate2/{dll}"));
    }
    for dll in rocm10::WINDOWS_CORE_CLOSURE {
        expected.insert(format!("{CORE}/bin/{dll}"));
    }
    for dll in rocm10::WINDOWS_LIBS_CLOSURE {
        expected.insert(format!("{LIBS}/bin/{dll}"));
    }
    let device = expected_device_files(family, &plan);
    expected.extend(device.iter().cloned());
    let got: BTreeSet<String> = names
        .iter()
        .filter(|n| !n.contains(".dist-info/"))
        .cloned()
        .collect();
    assert_eq!(
        got, expected,
        "{}: the closure and the family's device files, nothing else",
        family.variant
    );
    for decoy in [
        "MIOpen.dll",
        "rocfft.dll",
        "hipsparse.dll",
        "hiprand.dll",
        "hipsolver.dll",
    ] {
        assert!(!names.contains(&format!("{LIBS}/bin/{decoy}")), "{decoy}");
    }
    for left_out in [
        "hiprtc0715.dll",
        "hiprtc-builtins0715.dll",
        "rocm-openblas.dll",
    ] {
        assert!(
            !names.contains(&format!("{CORE}/bin/{left_out}")),
            "{left_out}"
        );
    }
    // No other family's (or target's) device files; `.kpack/` beside `bin/`, as the host
    // libraries look for `../.kpack/<artifact>_lib_<target>.kpack`.
    for name in &names {
        for t in xtask::gpu_targets::targets_in(name) {
            assert!(family.targets.contains(&t), "{name} in {}", family.variant);
        }
    }
    for target in family.targets {
        let kpack = format!("{LIBS}/.kpack/blas_lib_{target}.kpack");
        assert!(names.contains(&kpack), "{kpack}");
        assert!(names.contains(&format!(
            "{LIBS}/bin/rocblas/library/TensileLibrary_lazy_{target}.dat"
        )));
    }
    assert!(
        !names.iter().any(|n| n.contains(".devel_links/")),
        "rocm-sdk init's manifests stay out"
    );

    // The report names each device wheel as the package of its files.
    let report = read_report(&dist);
    let files = report["files"].as_array().unwrap();
    let package_of = |path: &str| {
        files
            .iter()
            .find(|f| f["path"] == path)
            .unwrap_or_else(|| panic!("{path} in {report:#}"))["package"]
            .as_str()
            .unwrap()
            .replace('_', "-")
    };
    for path in &device {
        let target = xtask::gpu_targets::targets_in(path)[0];
        let package = package_of(path);
        assert!(
            package.contains(&format!("rocm-sdk-device-{target}")) && package.contains(VERSION),
            "{path}: {package}"
        );
    }
    assert!(package_of(&format!("{CORE}/bin/amdhip64_7.dll")).contains("rocm-sdk-core"));
    assert!(package_of(&format!("{LIBS}/bin/rocblas.dll")).contains("rocm-sdk-libraries"));
    let md = fs::read_to_string(dist.join("provenance.md")).unwrap();
    for target in family.targets {
        assert!(
            md.contains(&format!("device-{target}")) || md.contains(&format!("device_{target}")),
            "{target} in {md}"
        );
    }
    eprintln!(
        "{}: fat wheel {} is {} bytes with {} files (stand-in files of a few KiB: says nothing of the real size)",
        family.variant,
        fat.file_name().unwrap().to_string_lossy(),
        fs::metadata(&fat).unwrap().len(),
        names.len()
    );
    drop(server);
    Bundled {
        _scratch: scratch,
        _work: work,
        fat,
        names,
    }
}

/// The device files the variant's data entries take: every file of each target's device
/// wheel below the folders the entries name (hipBLASLt's only where the plan has an entry for
/// that target's wheel: the tool leaves it out where it believes TheRock does not build it).
fn expected_device_files(family: &Family, plan: &serde_json::Value) -> BTreeSet<String> {
    let data = common::plan_step(plan, "bundle")["data"]
        .as_array()
        .unwrap();
    let mut files = BTreeSet::new();
    for target in family.targets {
        for file in rocm10::device_files(target, Os::Windows) {
            let folder = file.rsplit_once('/').unwrap().0;
            let glob = format!("{LIBS}/{folder}/*");
            let asked = data
                .iter()
                .any(|d| d["from"] == format!("device-{target}") && d["glob"] == glob);
            if asked {
                files.insert(format!("{LIBS}/{file}"));
            }
        }
    }
    files
}

#[test]
fn rdna1_bundles_its_closure_and_only_gfx1010_to_gfx1012_device_files() {
    if tools() {
        bundle_windows(rocm10::family("rocm-rdna1"));
    }
}

#[test]
fn rdna2_bundles_its_closure_and_only_gfx1030_to_gfx1036_device_files() {
    if tools() {
        bundle_windows(rocm10::family("rocm-rdna2"));
    }
}

#[test]
fn rdna3_bundles_its_closure_and_only_gfx1100_to_gfx1103_device_files() {
    if !tools() {
        return;
    }
    let bundled = bundle_windows(rocm10::family("rocm-rdna3"));
    // hipBLASLt's Tensile files come with the family.
    assert!(bundled.names.contains(&format!(
        "{LIBS}/bin/hipblaslt/library/TensileLibrary_lazy_gfx1100.dat"
    )));
}

#[test]
fn rdna35_bundles_its_closure_and_only_gfx1150_to_gfx1153_device_files() {
    if tools() {
        bundle_windows(rocm10::family("rocm-rdna35"));
    }
}

#[test]
fn rdna4_bundles_its_closure_and_only_gfx1200_to_gfx1201_device_files() {
    if tools() {
        bundle_windows(rocm10::family("rocm-rdna4"));
    }
}

/// `wheel` unpacked into `site` without the member `left_out` (a path in the wheel).
fn unpack_without(wheel: &Path, site: &Path, left_out: Option<&str>) {
    unzip(wheel, site);
    if let Some(path) = left_out {
        fs::remove_file(site.join(path)).unwrap();
    }
}

/// NETWORK TEST (python.org's embeddable CPython, once into the shared cache): every family's
/// fat wheel imported by the Windows CPython under wine, through the folders CTranslate2
/// 4.8.4's `__init__.py` adds; with a DLL taken out, the import fails naming it.
#[test]
fn every_family_imports_in_the_windows_python_and_a_missing_dll_is_named() {
    use xtask::check::winpython::{Session, wine::windows_path};
    crate::needs_network!(&["files.pythonhosted.org:443"]);
    if !(mingw::available(true) && tools())
        || skip::missing_from_path("osslsigncode", "apt-get install osslsigncode")
    {
        return;
    }
    let workspace = xtask::support::workspace::Workspace::locate(
        Some(common::repo_root()),
        Some(common::winwheels::cache_dir()),
    )
    .unwrap();
    let work = tempfile::tempdir().unwrap();
    let options = xtask::inputs::download::Options {
        progress: false,
        ..Default::default()
    };
    let session = Session::start(&workspace, "3.12", work.path(), &options).unwrap();
    // `import ctranslate2`, then ctranslate2.dll's `probe_init` (the HIP runtime's run-time
    // loads of amd_comgr.dll and rocm_kpack.dll), after loading `preload` (paths below
    // site-packages) by full path as TheRock's `rocm_sdk.preload_libraries` does.
    let import = |site: &Path, preload: &[&str]| {
        let mut env = session.env();
        env.insert("WINEDEBUG".into(), "err+module".into());
        // The stand-in MSVCP140.dll, never wine's built-in one.
        let overrides = env.get("WINEDLLOVERRIDES").cloned().unwrap_or_default();
        env.insert(
            "WINEDLLOVERRIDES".into(),
            format!("{overrides};msvcp140=n")
                .trim_start_matches(';')
                .into(),
        );
        let preloads: Vec<String> = preload
            .iter()
            .map(|p| {
                format!(
                    "ctypes.CDLL(os.path.join(site, r'{}'))",
                    p.replace('/', "\\")
                )
            })
            .collect();
        let script = format!(
            "import sys, os, ctypes\n\
             site = r'{}'\n\
             sys.path.insert(0, site)\n\
             import ctranslate2\n\
             print('IMPORTED', flush=True)\n\
             {}\n\
             status = ctypes.CDLL(os.path.join(site, 'ctranslate2', 'ctranslate2.dll')).probe_init()\n\
             print('PROBED', status, flush=True)\n",
            windows_path(site),
            preloads.join("\n")
        );
        let out = std::process::Command::new("wine")
            .arg(session.python.python_exe())
            .arg("-c")
            .arg(script)
            .envs(env)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let text = common::stdout_and_stderr(&out);
        let imported = text.lines().any(|l| l.trim() == "IMPORTED");
        let probed = text.lines().any(|l| l.trim() == "PROBED 0");
        (imported, probed, text)
    };
    let forced = [
        "_rocm_sdk_core/bin/amd_comgr.dll",
        "_rocm_sdk_core/bin/rocm_kpack.dll",
    ];
    let cases: [(&str, Option<(&str, &str)>); 5] = [
        ("rocm-rdna1", None),
        ("rocm-rdna2", None),
        // Imported by rocm_sdk_libraries/bin/hipblas.dll: wine's loader names it.
        (
            "rocm-rdna3",
            Some(("_rocm_sdk_libraries/bin/rocblas.dll", "rocblas.dll")),
        ),
        ("rocm-rdna35", None),
        // Forced in by the variant, and imported by rocblas.dll.
        (
            "rocm-rdna4",
            Some(("_rocm_sdk_core/bin/rocm_kpack.dll", "rocm_kpack.dll")),
        ),
    ];
    for (variant, broken) in cases {
        let bundled = bundle_windows(rocm10::family(variant));
        let site = work.path().join(format!("site-{variant}"));
        unpack_without(&bundled.fat, &site, None);
        // The import: every DLL of the closure found through the folders __init__.py adds.
        // The run-time loads: a plain LoadLibraryA("amd_comgr.dll") from amdhip64_7.dll does
        // not search those folders (os.add_dll_directory serves imports and ctypes only), so
        // it fails unless amd_comgr is loaded already; with it preloaded, it succeeds.
        let (imported, probed, output) = import(&site, &[]);
        assert!(imported, "{variant}: {output}");
        assert!(!probed, "{variant}: {output}");
        assert!(
            output.contains("FAILED LoadLibraryA(amd_comgr.dll)"),
            "{variant}: {output}"
        );
        let (imported, probed, output) = import(&site, &forced);
        assert!(
            imported && probed,
            "{variant} with amd_comgr and rocm_kpack preloaded: {output}"
        );
        if let Some((path, dll)) = broken {
            let site = work.path().join(format!("site-{variant}-without-{dll}"));
            unpack_without(&bundled.fat, &site, Some(path));
            let (imported, _, output) = import(&site, &[]);
            assert!(!imported, "{variant} without {dll}: {output}");
            assert!(
                output.contains(&format!("Library {dll} (")),
                "{variant} without {dll}: the failure names it:\n{output}"
            );
        }
    }
}
