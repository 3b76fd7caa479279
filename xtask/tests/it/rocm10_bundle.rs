//! The ROCm 10 families (variants/rocm-rdna1.toml … rocm-rdna4.toml) bundled on a faithful stand-in
//! for TheRock's multi-arch wheels (common/rocm10.rs, facts in common/rocm10-facts.md): the
//! stand-in wheels are served as TheRock's index over loopback and pinned by `pin` into a scratch
//! checkout, unpacked by the unpack step's code into the folders the plan names, next to a
//! built-looking CTranslate2 4.8.4 wheel and prefix; `bundle --variant` (the code of `build`'s
//! bundle step, with the plan's folders) makes the fat wheel. Then the wheel is imported by
//! python.org's Windows CPython under wine with CTranslate2 4.8.4's `__init__.py` preamble as the
//! rocm10 series patches it (the folder it adds, the DLLs it preloads), and a wheel with one DLL
//! taken out fails, naming that DLL. On Linux the same families are bundled from ELF stand-ins
//! (gcc, real SONAMEs, DT_NEEDED and DT_RPATHs, core's `rocm_sysdeps`, `host-math` and `llvm`
//! folders), loaded from a fresh venv with an empty `LD_LIBRARY_PATH`, and checked `ldd`-clean.
//!
//! The stand-in's device files are 1/1000 of a size model with the real wheel's proportions
//! (common/rocm10.rs `device_files`): the `SIZE` lines printed are the family's device data
//! at real scale, the figures of docs/variants.md's size table. Its host libraries are not to
//! scale.

use crate::common;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use common::Scratch;
use common::mingw;
use common::rocm10::{self, CORE, CT2, Family, LIBS, Os, VENDORED, VERSION, Wheels};
use common::server::Server;
use common::skip;
use common::wheel::{read_report, unzip, zip_names, zip_wheel};

const WHEEL: &str = "ctranslate2-4.8.4-cp312-cp312-win_amd64.whl";

/// What [`bundle_windows`] leaves for more checks.
pub(crate) struct Bundled {
    _staged: Staged,
    #[cfg_attr(not(feature = "wine"), allow(dead_code))] // used by the wine harness's tests
    pub(crate) fat: PathBuf,
    names: BTreeSet<String>,
}

fn tools() -> bool {
    mingw::available(false) && !skip::missing("gcc", "apt-get install gcc")
}

/// The variant's plan for `platform` and Python 3.12, as JSON.
fn plan(scratch: &Scratch, variant: &str, platform: &str) -> serde_json::Value {
    let run = scratch.run(&common::plan_args(
        variant,
        platform,
        "3.12",
        &["--ctranslate2", CT2, "--json"],
    ));
    assert_eq!(run.code, 0, "{}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap()
}

/// CTranslate2 4.8.4's `python/` package with the rocm10 series applied, into `package`:
/// `_rocm_runtime.py`, and `__init__.py` up to its `_ext` import (the Windows preamble: the
/// DLL folders it adds, the HIP runtime and the DLLs HIP loads by name preloaded, every DLL of
/// the package folder loaded).
fn write_python_package(work: &Path, package: &Path) {
    let patched = rocm10::patched_package(CT2, &work.join("patched"));
    let init = fs::read_to_string(patched.join("__init__.py")).unwrap();
    let preamble = init
        .split("try:\n    from ctranslate2._ext import")
        .next()
        .unwrap();
    assert!(preamble.contains("_rocm_runtime.preload"), "{preamble}");
    fs::create_dir_all(package).unwrap();
    fs::write(
        package.join("__init__.py"),
        format!("{preamble}# The stand-in ends here: the real package imports _ext.\n"),
    )
    .unwrap();
    fs::copy(
        patched.join("_rocm_runtime.py"),
        package.join("_rocm_runtime.py"),
    )
    .unwrap();
}

/// The stand-in wheels of `family` for both platforms (libraries in `work`'s `dlls/`, `sos/`),
/// served as TheRock's index and pinned by `pin` into a fresh scratch checkout.
struct Pinned {
    work: tempfile::TempDir,
    scratch: Scratch,
    windows: Wheels,
    linux: Wheels,
}

fn pin_stand_ins(family: &Family) -> Pinned {
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

    Pinned {
        work,
        scratch,
        windows,
        linux,
    }
}

/// A scratch checkout with the stand-in pinned, the plan of `family` for one platform, and
/// the ROCm inputs unpacked by the unpack step's code into the folders that plan reads.
pub(crate) struct Staged {
    pub(crate) work: tempfile::TempDir,
    scratch: Scratch,
    plan: serde_json::Value,
    /// The plan's work folder (`target/xtask/<variant>@<ct2>/<platform>`).
    base: PathBuf,
}

impl Staged {
    fn new(family: &Family, os: Os) -> Staged {
        let Pinned {
            work,
            scratch,
            windows,
            linux,
        } = pin_stand_ins(family);
        let (wheels, platform) = match os {
            Os::Windows => (windows, "windows-x86_64"),
            Os::Linux => (linux, "linux-x86_64"),
        };
        let plan = plan(&scratch, family.variant, platform);
        let base = PathBuf::from(plan["work_dir"].as_str().unwrap());
        let mut inputs = vec![
            ("rocm-sdk-core".to_string(), "rocm-sdk-core".to_string()),
            (
                "rocm-sdk-libraries".to_string(),
                "rocm-sdk-libraries".to_string(),
            ),
        ];
        for t in family.targets {
            inputs.push((format!("rocm-sdk-device-{t}"), format!("device-{t}")));
        }
        for (project, input) in &inputs {
            let dest = base.join("deps").join(input);
            rocm10::unpack(&wheels, project, input, work.path(), &dest);
        }
        for data in common::plan_step(&plan, "bundle")["data"]
            .as_array()
            .unwrap()
        {
            assert!(
                Path::new(data["base"].as_str().unwrap()).is_dir(),
                "{data} unpacked"
            );
        }
        Staged {
            work,
            scratch,
            plan,
            base,
        }
    }

    fn bundle_step(&self) -> &serde_json::Value {
        common::plan_step(&self.plan, "bundle")
    }

    /// The wheel CTranslate2's python/ makes: `tree` with its dist-info (`tag`), zipped to
    /// where the plan's bundle step reads it. Returns its files.
    fn ct2_wheel(&self, tree: &Path, tag: &str) -> BTreeSet<String> {
        let info = tree.join(format!("ctranslate2-{CT2}.dist-info"));
        fs::create_dir_all(&info).unwrap();
        fs::write(
            info.join("METADATA"),
            format!("Metadata-Version: 2.1\nName: ctranslate2\nVersion: {CT2}\n"),
        )
        .unwrap();
        fs::write(
            info.join("WHEEL"),
            format!("Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: {tag}\n"),
        )
        .unwrap();
        zip_wheel(
            tree,
            Path::new(self.bundle_step()["wheel"].as_str().unwrap()),
        )
    }

    /// `bundle --variant` for the plan's platform, plus `extra`; the fat wheel it wrote.
    fn bundle(&self, extra: &[&str]) -> PathBuf {
        let mut args = vec![
            "bundle",
            "--variant",
            self.plan["variant"].as_str().unwrap(),
            "--platform",
            self.plan["platform"].as_str().unwrap(),
            "--python",
            "3.12",
            "--ctranslate2",
            CT2,
        ];
        args.extend_from_slice(extra);
        let run = self.scratch.run(&args);
        assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
        fs::read_dir(self.dist())
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|e| e == "whl"))
            .expect("a fat wheel")
    }

    fn dist(&self) -> PathBuf {
        self.base.join("dist/py3.12")
    }
}

/// Windows: pins the stand-in wheels of `family` into a scratch checkout, unpacks them where the plan
/// reads them, writes what a build leaves, runs `bundle --variant` and checks the fat wheel
/// and its report.
pub(crate) fn bundle_windows(family: &Family) -> Bundled {
    let (staged, input_files) = prepare_windows(family);
    bundled_windows(family, staged, &input_files)
}

/// The Windows stand-ins of `family` staged where the plan reads them, with what a build
/// leaves (the prefix, the CPU side's DLLs, the CTranslate2 wheel); returns the wheel's files.
fn prepare_windows(family: &Family) -> (Staged, BTreeSet<String>) {
    let staged = Staged::new(family, Os::Windows);
    let dlls = staged.work.path().join("dlls");
    let deps = staged.base.join("deps");
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

    // What the build leaves: the prefix and the wheel CTranslate2's python/ makes.
    place(
        "ctranslate2.dll",
        &staged.base.join("prefix/ctranslate2/bin"),
    );
    let tree = staged.work.path().join("ct2-wheel");
    place("ctranslate2.dll", &tree.join("ctranslate2"));
    place(rocm10::EXT, &tree.join("ctranslate2"));
    write_python_package(staged.work.path(), &tree.join("ctranslate2"));
    assert!(
        staged.bundle_step()["wheel"]
            .as_str()
            .unwrap()
            .ends_with(WHEEL),
        "{}",
        staged.bundle_step()["wheel"]
    );
    let input_files = staged.ct2_wheel(&tree, "cp312-cp312-win_amd64");
    (staged, input_files)
}

/// `bundle --variant` of the staged `family`, and the checks of the fat wheel and its report.
fn bundled_windows(family: &Family, staged: Staged, input_files: &BTreeSet<String>) -> Bundled {
    // The bundle step.
    let fat = staged.bundle(&[]);
    let dist = staged.dist();
    let names = zip_names(&fat);
    assert_eq!(
        ct2v_bundle::wheel::check_record(&fat).unwrap(),
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
        expected.insert(format!("{VENDORED}/bin/{dll}"));
    }
    for dll in rocm10::WINDOWS_LIBS_CLOSURE {
        expected.insert(format!("{VENDORED}/bin/{dll}"));
    }
    let device = expected_device_files(family, Os::Windows);
    expected.extend(device.iter().cloned());
    let arch_less: Vec<String> = rocm10::arch_less_tensile_files(Os::Windows)
        .iter()
        .map(|f| format!("{VENDORED}/{f}"))
        .collect();
    expected.extend(arch_less.iter().cloned());
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
        assert!(
            !names.contains(&format!("{VENDORED}/bin/{decoy}")),
            "{decoy}"
        );
    }
    for left_out in [
        "hiprtc0715.dll",
        "hiprtc-builtins0715.dll",
        "rocm-openblas.dll",
    ] {
        assert!(
            !names.contains(&format!("{VENDORED}/bin/{left_out}")),
            "{left_out}"
        );
    }
    // No other family's (or target's) device files; `.kpack/` beside `bin/`, as the host
    // libraries look for `../.kpack/<artifact>_lib_<target>.kpack`.
    for name in &names {
        for t in ct2v_bundle::gpu_targets::targets_in(name) {
            assert!(family.targets.contains(&t), "{name} in {}", family.variant);
        }
    }
    for target in family.targets {
        let kpack = format!("{VENDORED}/.kpack/blas_lib_{target}.kpack");
        assert!(names.contains(&kpack), "{kpack}");
    }
    assert!(
        !names.iter().any(|n| n.contains(".devel_links/")),
        "rocm-sdk init's manifests stay out"
    );
    owns_its_folders(&names, family);
    assert_only_the_closures_kernels(family, &names, Os::Windows);

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
        let target = ct2v_bundle::gpu_targets::targets_in(path)[0];
        let package = package_of(path);
        assert!(
            package.contains(&format!("rocm-sdk-device-{target}")) && package.contains(VERSION),
            "{path}: {package}"
        );
    }
    for path in &arch_less {
        assert!(package_of(path).contains("rocm-sdk-libraries"), "{path}");
    }
    assert_sizes_by_library(family, &report, Os::Windows);
    assert!(package_of(&format!("{VENDORED}/bin/amdhip64_7.dll")).contains("rocm-sdk-core"));
    assert!(package_of(&format!("{VENDORED}/bin/rocblas.dll")).contains("rocm-sdk-libraries"));
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
    Bundled {
        _staged: staged,
        fat,
        names,
    }
}

/// The device-wheel files the bundle must take: each target's files the closure loads (the
/// blas archive, rocBLAS's and hipBLASLt's Tensile files, by the stand-in's own account, not
/// the plan's), none of the archives of libraries CTranslate2 never loads.
fn expected_device_files(family: &Family, os: Os) -> BTreeSet<String> {
    let mut files = BTreeSet::new();
    for target in family.targets {
        for file in rocm10::device_files(target, os) {
            if file.loaded {
                files.insert(format!("{VENDORED}/{}", file.path));
            }
        }
    }
    files
}

/// Only the closure's kernels: per target the blas archive, no fft/rand/miopen/rccl/
/// hipkernelprovider archive, no MIOpen database or hipDNN arch content, no `.kpm`; every
/// arch-less Tensile file of the libraries wheel.
fn assert_only_the_closures_kernels(family: &Family, names: &BTreeSet<String>, os: Os) {
    for target in family.targets {
        for file in rocm10::device_files(target, os) {
            let path = format!("{VENDORED}/{}", file.path);
            assert_eq!(
                names.contains(&path),
                file.loaded,
                "{}: {path} bundled iff the closure loads it",
                family.variant
            );
        }
    }
    for file in rocm10::arch_less_tensile_files(os) {
        assert!(names.contains(&format!("{VENDORED}/{file}")), "{file}");
    }
    assert!(
        !names.iter().any(|n| n.ends_with(".kpm")),
        "the loader reads no manifest: {names:?}"
    );
}

/// The report's size by library: the blas archive, rocBLAS's Tensile files (and hipBLASLt's
/// where TheRock builds it) at the stand-in's sizes, summed over the family's targets; no
/// other archive. Prints the row docs/variants.md's size table is made of.
fn assert_sizes_by_library(family: &Family, report: &serde_json::Value, os: Os) {
    let by_library = &report["library_bytes"];
    let mut expected: std::collections::BTreeMap<String, u64> = Default::default();
    for target in family.targets {
        for file in rocm10::device_files(target, os)
            .into_iter()
            .filter(|f| f.loaded)
        {
            let key = match file.path.as_str() {
                p if p.starts_with(".kpack/") => "blas (.kpack)",
                p if p.contains("/rocblas/") => "rocblas (Tensile)",
                _ => "hipblaslt (Tensile)",
            };
            *expected.entry(key.to_string()).or_default() += file.real_bytes / rocm10::SCALE;
        }
    }
    let arch_less = rocm10::arch_less_tensile_files(os).len() as u64;
    *expected.entry("rocblas (Tensile)".into()).or_default() +=
        arch_less * rocm10::ARCH_LESS_REAL_BYTES / rocm10::SCALE;
    for (library, bytes) in &expected {
        assert_eq!(
            by_library[library].as_u64(),
            Some(*bytes),
            "{}: {library} in {by_library}",
            family.variant
        );
    }
    for artifact in ["fft", "rand", "miopen", "rccl", "hipkernelprovider"] {
        assert!(
            by_library.get(format!("{artifact} (.kpack)")).is_none(),
            "{by_library}"
        );
    }
    let device: u64 = expected.values().sum();
    eprintln!(
        "SIZE {} {:?}: device data {} stand-in bytes = {:.0} MB real at 1:{} ({})",
        family.variant,
        os,
        device,
        (device * rocm10::SCALE) as f64 / 1e6,
        rocm10::SCALE,
        expected
            .iter()
            .map(|(l, b)| format!("{l} {:.1} MB", (b * rocm10::SCALE) as f64 / 1e6))
            .collect::<Vec<_>>()
            .join(", ")
    );
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
    // hipBLASLt's Tensile files come with the family, gfx1102's too (ROCm 10 builds them).
    for target in ["gfx1100", "gfx1102"] {
        assert!(bundled.names.contains(&format!(
            "{VENDORED}/bin/hipblaslt/library/TensileLiteLibrary_lazy_{target}_Mapping.dat"
        )));
    }
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
#[cfg_attr(not(feature = "wine"), allow(dead_code))] // used by the wine harness's tests
fn unpack_without(wheel: &Path, site: &Path, left_out: Option<&str>) {
    unzip(wheel, site);
    if let Some(path) = left_out {
        fs::remove_file(site.join(path)).unwrap();
    }
}

/// The tools the wine tests need (else they say why and skip), and python.org's Windows
/// CPython 3.12 started under wine in a temporary folder.
#[cfg(feature = "wine")]
pub(crate) fn windows_python() -> Option<(tempfile::TempDir, ct2v_proof::winpython::Session)> {
    if !(mingw::available(true) && tools())
        || skip::missing_from_path("osslsigncode", "apt-get install osslsigncode")
    {
        return None;
    }
    let workspace = ct2v_support::workspace::Workspace::locate(
        Some(common::repo_root()),
        Some(common::winwheels::cache_dir()),
    )
    .unwrap();
    let work = tempfile::tempdir().unwrap();
    let options = ct2v_fetch::download::Options {
        progress: false,
        ..Default::default()
    };
    let session =
        ct2v_proof::winpython::Session::start(&workspace, "3.12", work.path(), &options).unwrap();
    Some((work, session))
}

/// The environment a script of `session` runs with: the loader's errors shown, and the
/// stand-in MSVCP140.dll, never wine's built-in one.
#[cfg(feature = "wine")]
pub(crate) fn python_env(
    session: &ct2v_proof::winpython::Session,
) -> std::collections::BTreeMap<String, String> {
    let mut env = session.env();
    env.insert("WINEDEBUG".into(), "err+module".into());
    let overrides = env.get("WINEDLLOVERRIDES").cloned().unwrap_or_default();
    env.insert(
        "WINEDLLOVERRIDES".into(),
        format!("{overrides};msvcp140=n")
            .trim_start_matches(';')
            .into(),
    );
    env
}

/// `python -c script` of `session` under wine with `env`: its stdout and stderr.
#[cfg(feature = "wine")]
pub(crate) fn run_python(
    session: &ct2v_proof::winpython::Session,
    env: std::collections::BTreeMap<String, String>,
    script: &str,
) -> String {
    let out = std::process::Command::new("wine")
        .arg(session.python.python_exe())
        .arg("-c")
        .arg(script)
        .envs(env)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    common::stdout_and_stderr(&out)
}

/// NETWORK TEST (python.org's embeddable CPython, once into the shared cache): every family's
/// fat wheel imported by the Windows CPython under wine, through the folders CTranslate2
/// 4.8.4's `__init__.py` adds; with a DLL taken out, the import fails naming it.
#[cfg(feature = "wine")]
#[test]
fn every_family_imports_in_the_windows_python_and_a_missing_dll_is_named() {
    use ct2v_proof::winpython::wine::windows_path;
    crate::needs_network!(&["files.pythonhosted.org:443"]);
    let Some((work, session)) = windows_python() else {
        return;
    };
    // `import ctranslate2` (the patched preamble preloads the HIP runtime, amd_comgr and
    // rocm_kpack), then ctranslate2.dll's `probe_init` (the HIP runtime's run-time loads of
    // amd_comgr.dll and rocm_kpack.dll, which succeed only once those are loaded).
    let import = |site: &Path| {
        let env = python_env(&session);
        let script = format!(
            "import sys, os, ctypes\n\
             site = r'{}'\n\
             sys.path.insert(0, site)\n\
             import ctranslate2\n\
             print('IMPORTED', flush=True)\n\
             status = ctypes.CDLL(os.path.join(site, 'ctranslate2', 'ctranslate2.dll')).probe_init()\n\
             print('PROBED', status, flush=True)\n",
            windows_path(site),
        );
        let text = run_python(&session, env, &script);
        let imported = text.lines().any(|l| l.trim() == "IMPORTED");
        let probed = text.lines().any(|l| l.trim() == "PROBED 0");
        (imported, probed, text)
    };
    let cases: [(&str, Option<(&str, &str)>); 5] = [
        ("rocm-rdna1", None),
        ("rocm-rdna2", None),
        // Imported by rocm_sdk_libraries/bin/hipblas.dll: wine's loader names it.
        (
            "rocm-rdna3",
            Some(("ctranslate2/_rocm/bin/rocblas.dll", "rocblas.dll")),
        ),
        ("rocm-rdna35", None),
        // Forced in by the variant, and imported by rocblas.dll.
        (
            "rocm-rdna4",
            Some(("ctranslate2/_rocm/bin/rocm_kpack.dll", "rocm_kpack.dll")),
        ),
    ];
    for (variant, broken) in cases {
        let bundled = bundle_windows(rocm10::family(variant));
        let site = work.path().join(format!("site-{variant}"));
        unpack_without(&bundled.fat, &site, None);
        // The import: every DLL of the closure found in ctranslate2/_rocm/bin, the folder the
        // patched __init__.py adds. The run-time loads: a plain LoadLibraryA("amd_comgr.dll")
        // from amdhip64_7.dll does not search that folder (os.add_dll_directory serves imports
        // and ctypes only); it succeeds because the preamble preloaded amd_comgr.
        let (imported, probed, output) = import(&site);
        assert!(imported && probed, "{variant}: {output}");
        if let Some((path, dll)) = broken {
            let site = work.path().join(format!("site-{variant}-without-{dll}"));
            unpack_without(&bundled.fat, &site, Some(path));
            let (imported, _, output) = import(&site);
            assert!(!imported, "{variant} without {dll}: {output}");
            assert!(
                output.contains(&format!("Library {dll} (")),
                "{variant} without {dll}: the failure names it:\n{output}"
            );
        }
    }
}

/// Linux: each family's fat wheel from the stand-in's ELF libraries (real SONAMEs, DT_NEEDED,
/// TheRock's DT_RPATHs, common/rocm10.rs) through `bundle --variant --platform linux-x86_64`:
/// the closure at `ctranslate2/_rocm/lib` (core's `rocm_sysdeps`, `host-math` and `llvm`
/// folders below it, as below core's `lib/`) with RUNPATHs leading only inside the wheel, the
/// forced libraries, the family's device files beside `lib/`; unpacked into a fresh venv's
/// site-packages, `_ext` loads and calls through the chain with an empty `LD_LIBRARY_PATH`,
/// mapping only the wheel's libraries and the allow-list's, and `ldd` resolves every
/// dependency inside the wheel or to the manylinux allow-list.
#[test]
fn every_family_bundles_on_linux_and_loads_ldd_clean_in_a_venv() {
    if !tools() || skip::missing("patchelf", "apt-get install patchelf") {
        return;
    }
    for family in rocm10::families() {
        let bundled = bundle_linux(family, Rpaths::Therocks);
        loads_ldd_clean_in_a_venv(&bundled, family);
    }
}

/// Linux, the family every other extends (rocm-rdna2), on a core wheel laid out as TheRock's:
/// the HSA runtime's libraries in `lib/rocm_sysdeps/lib` (symbol-versioned, one unversioned
/// SONAME among the decoys), the host BLAS in `lib/host-math/lib` reached from the other wheel
/// (hipBLASLt), the OpenMP runtime in `lib/llvm/lib` (unversioned SONAME), comgr loaded by name
/// and needing `rocm_sysdeps` too. The closure takes each to the same folder below
/// `ctranslate2/_rocm/lib` and leaves the decoys; a fresh process with an empty
/// `LD_LIBRARY_PATH` loads `_ext` and maps every bundled library from inside the wheel and
/// nothing of ROCm from outside it. Three forms: with the DT_RPATHs TheRock's packaging writes
/// (the bundle drops those leading outside the wheel), with none (the bundle's own RUNPATHs
/// must suffice), and with a variant whose search lists core's `lib/` only (refused, naming
/// each unlisted folder).
#[test]
fn linux_bundle_finds_rocm_sysdeps_host_math_and_llvm_and_loads_with_no_rocm_on_the_path() {
    if !tools() || skip::missing("patchelf", "apt-get install patchelf") {
        return;
    }
    let family = rocm10::family("rocm-rdna2");
    for rpaths in [Rpaths::Therocks, Rpaths::Removed] {
        let bundled = bundle_linux(family, rpaths);
        loads_ldd_clean_in_a_venv(&bundled, family);
    }
    let staged = stage_linux(family, Rpaths::Therocks);
    refused_naming_the_unlisted_folders(&staged.staged, &staged.toolchain);
}

/// What `libctranslate2.so.4`, `_ext` and the forced libraries need of rocm-sdk-core, below
/// `_rocm_sdk_core/` (and below `ctranslate2/_rocm/` in the fat wheel): the HIP runtime and
/// through it the HSA runtime and its `rocm_sysdeps` (elfutils, libdrm, numactl, zlib, zstd),
/// comgr and its `rocm_sysdeps`, the host BLAS hipBLASLt needs, the OpenMP runtime in
/// `lib/llvm/lib`. Not the decoys: `librocm_sysdeps_dw`, `_bz2`, `_liblzma`, `libLLVM`,
/// `librocm_smi64`, `libhiprtc`.
const LINUX_CORE_CLOSURE: [&str; 13] = [
    "lib/libamd_comgr.so.3",
    "lib/libamdhip64.so.7",
    "lib/libhsa-runtime64.so.1",
    "lib/librocm_kpack.so.0",
    "lib/librocprofiler-register.so.0",
    "lib/rocm_sysdeps/lib/librocm_sysdeps_drm.so.2",
    "lib/rocm_sysdeps/lib/librocm_sysdeps_drm_amdgpu.so.1",
    "lib/rocm_sysdeps/lib/librocm_sysdeps_elf.so.1",
    "lib/rocm_sysdeps/lib/librocm_sysdeps_numa.so.1",
    "lib/rocm_sysdeps/lib/librocm_sysdeps_z.so.1",
    "lib/rocm_sysdeps/lib/librocm_sysdeps_zstd.so.1",
    "lib/host-math/lib/librocm-openblas.so.0",
    "lib/llvm/lib/libomp.so",
];

/// `bundle --variant` with the variant's search cut to core's `lib/` (the scratch checkout's
/// rocm-rdna2.toml edited): it fails, naming each library found only in an unlisted folder
/// below it with that folder, and writes no wheel.
fn refused_naming_the_unlisted_folders(staged: &Staged, toolchain: &Path) {
    let file = staged.scratch.path().join("variants/rocm-rdna2.toml");
    let text = fs::read_to_string(&file).unwrap();
    let cut: String = text
        .lines()
        .filter(|l| !l.contains("dir = \"_rocm_sdk_core/lib/"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(cut, text, "the variant lists core's subfolders");
    fs::write(&file, cut).unwrap();
    let run = staged.scratch.run(&[
        "bundle",
        "--variant",
        staged.plan["variant"].as_str().unwrap(),
        "--platform",
        "linux-x86_64",
        "--python",
        "3.12",
        "--ctranslate2",
        CT2,
        "--toolchain-dir",
        toolchain.to_str().unwrap(),
    ]);
    assert_ne!(run.code, 0, "{}", run.stderr);
    let core = staged.base.join("deps/rocm-sdk-core").join(CORE);
    for path in LINUX_CORE_CLOSURE
        .iter()
        .filter(|p| p.matches('/').count() > 1)
    {
        let copy = core.join(path);
        let said = format!(
            "but {} is there, in a folder no search entry lists: add {} to the bundle's search",
            copy.display(),
            copy.parent().unwrap().display()
        );
        assert!(run.stderr.contains(&said), "{path}: {}", run.stderr);
    }
    assert!(
        !staged.dist().exists()
            || !fs::read_dir(staged.dist()).unwrap().any(|e| e
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "whl")),
        "no wheel written"
    );
}

/// The search paths the ROCm wheels' ELF files carry into the bundle.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Rpaths {
    /// The `$ORIGIN` DT_RPATHs TheRock's packaging writes (the stand-in has them).
    Therocks,
    /// None: removed from the unpacked wheels, so only the bundle's RUNPATHs can find anything.
    Removed,
}

/// What [`stage_linux`] leaves: the scratch checkout and its work folder, the toolchain folder
/// to give `bundle`, and the name of `_ext` in the CTranslate2 wheel.
struct LinuxStaged {
    staged: Staged,
    toolchain: PathBuf,
    ext: &'static str,
}

/// What [`bundle_linux`] leaves: the scratch checkout and its work folder, the fat wheel, and
/// the name of `_ext` in it.
pub(crate) struct LinuxBundled {
    pub staged: Staged,
    pub fat: PathBuf,
    pub ext: &'static str,
    names: BTreeSet<String>,
}

/// Linux: the stand-in wheels of `family` pinned and unpacked where the plan reads them (their
/// DT_RPATHs as `rpaths` says), the build's prefix and wheel written, the build-tools'
/// patchelf in place.
fn stage_linux(family: &Family, rpaths: Rpaths) -> LinuxStaged {
    use std::process::Command;
    let staged = Staged::new(family, Os::Linux);
    let work = staged.work.path();
    let sos = work.join("sos");
    if rpaths == Rpaths::Removed {
        for input in ["rocm-sdk-core", "rocm-sdk-libraries"] {
            for file in common::wheel::files_below(&staged.base.join("deps").join(input)) {
                let path = staged.base.join("deps").join(input).join(file);
                if fs::read(&path).unwrap().starts_with(b"\x7fELF") {
                    common::run_ok(Command::new("patchelf").arg("--remove-rpath").arg(&path));
                }
            }
        }
    }
    // The build's prefix (libctranslate2.so.4) and wheel (`_ext` needing it), and the
    // patchelf of the build-tools venv the plan names.
    let prefix_lib = staged.base.join("prefix/ctranslate2/lib");
    fs::create_dir_all(&prefix_lib).unwrap();
    fs::copy(
        sos.join("libctranslate2.so.4"),
        prefix_lib.join("libctranslate2.so.4"),
    )
    .unwrap();
    let tree = work.join("ct2-linux-wheel");
    let package = tree.join("ctranslate2");
    fs::create_dir_all(&package).unwrap();
    let ext = "_ext.cpython-312-x86_64-linux-gnu.so";
    let source = work.join("ext.c");
    fs::write(
        &source,
        "int f_libctranslate2(void);\nint ct2_value(void) { return f_libctranslate2(); }\n",
    )
    .unwrap();
    common::run_ok(
        Command::new("gcc")
            .args(["-shared", "-fPIC", "-o"])
            .arg(package.join(ext))
            .arg(&source)
            .arg("-Wl,--no-as-needed")
            .arg(sos.join("libctranslate2.so.4")),
    );
    fs::write(package.join("__init__.py"), "").unwrap();
    staged.ct2_wheel(&tree, "cp312-cp312-linux_x86_64");
    let patchelf = Path::new(staged.bundle_step()["patchelf"].as_str().unwrap());
    fs::create_dir_all(patchelf.parent().unwrap()).unwrap();
    let which = Command::new("sh")
        .args(["-c", "command -v patchelf"])
        .output()
        .unwrap();
    std::os::unix::fs::symlink(String::from_utf8_lossy(&which.stdout).trim(), patchelf).unwrap();
    let toolchain = work.join("toolchain");
    fs::create_dir_all(&toolchain).unwrap();
    LinuxStaged {
        staged,
        toolchain,
        ext,
    }
}

/// Linux: [`stage_linux`], then `bundle --variant`; the fat wheel's files checked: the closure
/// and nothing else, every file in the package's own folders, every RUNPATH inside the wheel.
pub(crate) fn bundle_linux(family: &Family, rpaths: Rpaths) -> LinuxBundled {
    let LinuxStaged {
        staged,
        toolchain,
        ext,
    } = stage_linux(family, rpaths);
    let work = staged.work.path();
    let fat = staged.bundle(&["--toolchain-dir", toolchain.to_str().unwrap()]);
    let names = zip_names(&fat);
    let libs: BTreeSet<&str> = names
        .iter()
        .filter(|n| n.contains(".so") && !n.contains("/library/"))
        .map(String::as_str)
        .collect();
    let mut expected: BTreeSet<String> = [
        format!("ctranslate2/{ext}"),
        "ctranslate2/libctranslate2.so.4".to_string(),
    ]
    .into();
    // Each at the same place below `ctranslate2/_rocm/` as below `_rocm_sdk_core/`,
    // `rocm_sysdeps`, `host-math` and `llvm` included.
    for path in LINUX_CORE_CLOSURE {
        expected.insert(format!("{VENDORED}/{path}"));
    }
    for lib in [
        "libhipblas.so.3",
        "libhipblaslt.so.1",
        "librocblas.so.5",
        "librocsolver.so.0",
    ] {
        expected.insert(format!("{VENDORED}/lib/{lib}"));
    }
    let got: BTreeSet<String> = libs.iter().map(|s| s.to_string()).collect();
    assert_eq!(got, expected, "{}: the closure, no decoy", family.variant);
    for target in family.targets {
        let file = format!("{VENDORED}/.kpack/blas_lib_{target}.kpack");
        assert!(names.contains(&file), "{file}");
    }
    for name in &names {
        for t in ct2v_bundle::gpu_targets::targets_in(name) {
            assert!(family.targets.contains(&t), "{name} in {}", family.variant);
        }
    }
    assert_only_the_closures_kernels(family, &names, Os::Linux);
    assert_sizes_by_library(family, &read_report(&staged.dist()), Os::Linux);
    owns_its_folders(&names, family);
    runpaths_lead_to_the_vendored_folder(&fat, &names, work, family);
    // The report names each search path dropped: TheRock's, which lead to AMD's folders.
    let report = read_report(&staged.dist());
    let dropped = report["dropped_search_paths"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(dropped.is_empty(), rpaths == Rpaths::Removed, "{report:#}");
    for d in &dropped {
        assert!(
            d["entry"].as_str().unwrap().contains("/_rocm_sdk_core/"),
            "{d}"
        );
        assert!(names.contains(d["file"].as_str().unwrap()), "{d}");
    }
    LinuxBundled {
        staged,
        fat,
        ext,
        names,
    }
}

/// No file of the fat wheel lies in a folder of another distribution: none under AMD's
/// `_rocm_sdk_*` import packages, where pip would overwrite AMD's files and `pip uninstall`
/// delete them; every file is in `ctranslate2/` or the wheel's own `.dist-info`.
fn owns_its_folders(names: &BTreeSet<String>, family: &Family) {
    for name in names {
        let top = name.split('/').next().unwrap();
        assert!(
            top == "ctranslate2"
                || (top.starts_with("ctranslate2-") && top.ends_with(".dist-info")),
            "{}: {name} is outside the package's own folders",
            family.variant
        );
        assert!(!name.contains("_rocm_sdk_"), "{}: {name}", family.variant);
    }
}

/// Every library's RUNPATH leads into the wheel's own folders: each entry, read from the
/// library's folder, is a folder of the wheel below `ctranslate2/` (libctranslate2's are
/// `_rocm/lib` and the OpenMP runtime's `_rocm/lib/llvm/lib`, the runtime's libraries their own
/// folder), none reaches AMD's packages, even the DT_RPATHs TheRock wrote; and none has an
/// RPATH (which would outrank LD_LIBRARY_PATH).
fn runpaths_lead_to_the_vendored_folder(
    fat: &Path,
    names: &BTreeSet<String>,
    work: &Path,
    family: &Family,
) {
    let tree = work.join("fat-unzipped");
    unzip(fat, &tree);
    let runpath = |path: &str| {
        let info = ct2v_bundle::binary::read(&tree.join(path)).unwrap();
        assert!(
            info.rpath.is_empty(),
            "{}: {path} has an RPATH {:?}",
            family.variant,
            info.rpath
        );
        let folder = Path::new(path).parent().unwrap();
        for entry in &info.runpath {
            let rest = entry.strip_prefix("$ORIGIN").unwrap_or_else(|| {
                panic!(
                    "{}: {path} RUNPATH {entry} is not $ORIGIN-relative",
                    family.variant
                )
            });
            let mut led: Vec<&str> = folder.to_str().unwrap().split('/').collect();
            for part in rest.split('/').filter(|p| !p.is_empty()) {
                if part == ".." {
                    assert!(
                        led.pop().is_some(),
                        "{}: {path} RUNPATH {entry} leaves the wheel",
                        family.variant
                    );
                } else {
                    led.push(part);
                }
            }
            let led = led.join("/");
            assert!(
                led.starts_with("ctranslate2")
                    && !led.contains("_rocm_sdk")
                    && tree.join(&led).is_dir(),
                "{}: {path} RUNPATH {entry} leads to {led}, not a folder of the wheel's own",
                family.variant
            );
        }
        info.runpath
    };
    for name in names
        .iter()
        .filter(|n| n.contains(".so") && !n.contains("/library/"))
    {
        runpath(name);
    }
    assert_eq!(
        runpath("ctranslate2/libctranslate2.so.4"),
        ["$ORIGIN/_rocm/lib", "$ORIGIN/_rocm/lib/llvm/lib"],
        "{}",
        family.variant
    );
    assert_eq!(
        runpath(&format!("{VENDORED}/lib/libhipblas.so.3")),
        ["$ORIGIN"],
        "{}",
        family.variant
    );
    fs::remove_dir_all(&tree).unwrap();
}

/// The fat wheel's files in a fresh venv's site-packages: `_ext` loads and calls through the
/// chain with no `LD_LIBRARY_PATH`, and `ldd` resolves every library inside the wheel or to
/// the manylinux allow-list.
fn loads_ldd_clean_in_a_venv(bundled: &LinuxBundled, family: &Family) {
    use std::process::Command;
    let (work, fat, ext) = (bundled.staged.work.path(), &bundled.fat, bundled.ext);
    let libs: BTreeSet<&str> = bundled
        .names
        .iter()
        .filter(|n| n.contains(".so") && !n.contains("/library/"))
        .map(String::as_str)
        .collect();

    // A fresh venv with the wheel's files in its site-packages (the host's Python, not 3.12:
    // `_ext` is loaded with ctypes, as the extension module's loader would load it).
    let venv = work.join("venv");
    common::run_ok(Command::new("python3").args(["-m", "venv"]).arg(&venv));
    let site = String::from_utf8(
        common::run_ok(Command::new(venv.join("bin/python")).args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['platlib'])",
        ]))
        .stdout,
    )
    .unwrap();
    let site = PathBuf::from(site.trim());
    unzip(fat, &site);
    // A fresh process with an empty library path loads `_ext` and calls through the chain;
    // every file the load mapped (/proc/self/maps after, less before) is inside the wheel or
    // a system library of the allow-list.
    let script = format!(
        "import ctypes\n\
         def mapped():\n    \
             with open('/proc/self/maps') as f:\n        \
                 return {{l.split(None, 5)[5].strip() for l in f if len(l.split(None, 5)) == 6}}\n\
         before = mapped()\n\
         lib = ctypes.CDLL({:?})\n\
         print('VALUE', lib.ct2_value())\n\
         for path in sorted(mapped() - before):\n    \
             print('MAPPED', path)\n",
        site.join("ctranslate2").join(ext).to_str().unwrap()
    );
    let out = Command::new(venv.join("bin/python"))
        .arg("-c")
        .arg(script)
        .env("LD_LIBRARY_PATH", "")
        .env_remove("LD_PRELOAD")
        .output()
        .unwrap();
    let text = common::stdout_and_stderr(&out);
    assert!(
        out.status.success() && text.contains("VALUE ") && !text.contains("FAILED dlopen"),
        "{}: {text}",
        family.variant
    );
    let allowed = ct2v_bundle::bundler::policy::SystemLibraries::for_policy(
        ct2v_bundle::bundler::Policy::Manylinux2_28,
    );
    let loaded: BTreeSet<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("MAPPED "))
        .collect();
    for path in &loaded {
        let inside = Path::new(path).starts_with(&site);
        let name = path.rsplit('/').next().unwrap();
        assert!(
            inside || allowed.contains(name),
            "{}: {path} loaded from outside the wheel:\n{text}",
            family.variant
        );
    }
    for lib in &libs {
        let path = site.join(lib);
        assert!(
            loaded.contains(path.to_str().unwrap()),
            "{}: {lib} was not loaded by the chain:\n{text}",
            family.variant
        );
    }
    for lib in &libs {
        let path = site.join(lib);
        let out = Command::new("ldd")
            .arg(&path)
            .env_remove("LD_LIBRARY_PATH")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        for line in text.lines().map(str::trim) {
            assert!(!line.contains("not found"), "{lib}: {text}");
            let Some((name, resolved)) = line.split_once(" => ") else {
                continue;
            };
            let resolved = resolved.split(" (").next().unwrap();
            let inside = Path::new(resolved).starts_with(&site);
            assert!(
                inside || allowed.contains(name),
                "{lib}: {name} resolved outside the wheel to {resolved}, not in the allow-list"
            );
        }
    }
    // The report names rocm-sdk-core as the package of what came from its subfolders.
    let report = read_report(&bundled.staged.dist());
    for path in LINUX_CORE_CLOSURE {
        let path = format!("{VENDORED}/{path}");
        let entry = report["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == path.as_str())
            .unwrap_or_else(|| panic!("{path} in {report:#}"));
        let package = entry["package"].as_str().unwrap().replace('_', "-");
        assert!(package.contains("rocm-sdk-core"), "{path}: {package}");
    }
    eprintln!(
        "{} (Linux): fat wheel {} is {} bytes with {} files (stand-in files: says nothing of the real size)",
        family.variant,
        fat.file_name().unwrap().to_string_lossy(),
        fs::metadata(fat).unwrap().len(),
        bundled.names.len()
    );
}

/// The device wheels (`device-<target>` inputs) a plan takes, and the hipBLASLt data entries.
fn device_inputs_and_hipblaslt(plan: &serde_json::Value) -> (Vec<String>, Vec<String>) {
    let devices = plan["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| {
            i["name"]
                .as_str()?
                .strip_prefix("device-")
                .map(str::to_string)
        })
        .collect();
    let hipblaslt = common::plan_step(plan, "bundle")["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["glob"].as_str().unwrap().contains("/hipblaslt/library/"))
        .map(|d| {
            d["base"]
                .as_str()
                .unwrap()
                .rsplit('/')
                .next()
                .unwrap()
                .to_string()
        })
        .collect();
    (devices, hipblaslt)
}

/// Target tables are per SDK: ROCm 10 (TheRock release/therock-10.0
/// cmake/therock_amdgpu_targets.cmake) builds hipBLASLt for gfx1102, so its device wheel's
/// hipBLASLt files are taken, and knows gfx1031/gfx1033/gfx1034, so the RDNA 2 family names
/// reach them; the 7.2 variant keeps 7.2's table (no gfx1031 there).
#[test]
fn rocm10_families_follow_rocm10s_target_table_and_rocm72_its_own() {
    let scratch = Scratch::new();
    for platform in ["windows-x86_64", "linux-x86_64"] {
        let rdna3 = plan(&scratch, "rocm-rdna3", platform);
        let (devices, hipblaslt) = device_inputs_and_hipblaslt(&rdna3);
        assert_eq!(devices, ["gfx1100", "gfx1101", "gfx1102", "gfx1103"]);
        assert_eq!(
            hipblaslt,
            [
                "device-gfx1100",
                "device-gfx1101",
                "device-gfx1102",
                "device-gfx1103"
            ],
            "{platform}: gfx1102's hipBLASLt files are bundled for ROCm 10"
        );
    }
    for (family, expected) in [
        (
            "gfx103X-dgpu",
            &["gfx1030", "gfx1031", "gfx1032", "gfx1034"][..],
        ),
        ("gfx103X-igpu", &["gfx1033", "gfx1035", "gfx1036"][..]),
        (
            "gfx103X-all",
            &[
                "gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036",
            ][..],
        ),
    ] {
        let run = scratch.run(&common::plan_args(
            "rocm-rdna2",
            "linux-x86_64",
            "3.12",
            &["--ctranslate2", CT2, "--gpu-targets", family, "--json"],
        ));
        assert_eq!(run.code, 0, "{family}: {}", run.stderr);
        let plan: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        let (devices, hipblaslt) = device_inputs_and_hipblaslt(&plan);
        let mut devices = devices;
        devices.sort();
        assert_eq!(devices, expected, "{family}");
        assert!(hipblaslt.is_empty(), "{family}: no hipBLASLt for RDNA 2");
    }
    // ROCm 7.2's table has no gfx1031 or gfx1034: its gfx103X-dgpu is gfx1030 and gfx1032.
    let run = scratch.run(&common::plan_args(
        "rocm",
        "windows-x86_64",
        "3.12",
        &["--gpu-targets", "gfx103X-dgpu", "--json"],
    ));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let plan: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let notes = plan["notes"].to_string();
    assert!(notes.contains("gfx103X-dgpu: gfx1032 left out"), "{notes}");
}

/// A device wheel whose `.kpack/` holds an archive of an artifact the bundle's table does not
/// map to libraries (a newer TheRock's), or a file that is no archive, stops the bundle with
/// exit 2 naming the file: it may hold code a bundled library loads, so it is neither taken
/// nor dropped by guess. Nothing is written.
#[test]
fn an_archive_the_table_does_not_know_stops_the_bundle_naming_it() {
    if !tools() {
        return;
    }
    let family = rocm10::family("rocm-rdna4");
    let (staged, _) = prepare_windows(family);
    let kpack = staged
        .base
        .join("deps/device-gfx1201")
        .join(LIBS)
        .join(".kpack");
    for (name, needle) in [
        ("hipsparselt2_lib_gfx1201.kpack", "artifact `hipsparselt2`"),
        ("README.txt", "is not a TheRock kernel archive"),
    ] {
        let file = kpack.join(name);
        fs::write(&file, "unknown").unwrap();
        let run = staged.scratch.run(&[
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
        assert_eq!(run.code, 2, "{name}: {}", run.stderr);
        for expected in [name, needle, "nothing was written"] {
            assert!(
                run.stderr.contains(expected),
                "{name}: `{expected}` in {}",
                run.stderr
            );
        }
        let wheels = fs::read_dir(staged.dist())
            .map(|d| {
                d.flatten()
                    .filter(|e| e.path().extension().is_some_and(|x| x == "whl"))
                    .count()
            })
            .unwrap_or(0);
        assert_eq!(wheels, 0, "{name}: no fat wheel");
        fs::remove_file(&file).unwrap();
    }
}
