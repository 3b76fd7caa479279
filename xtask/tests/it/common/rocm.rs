//! A synthetic ROCm 7.2 for Windows: real PE DLLs (mingw-w64) with the names and import
//! graph of the official CTranslate2 ROCm wheel and AMD's `rocm_sdk_core` /
//! `rocm_sdk_libraries_custom` wheels, laid out as those wheels unpack, plus a
//! `msvc-runtime` wheel with the VC++ runtime's layout. Every fact it follows is listed with
//! its upstream source in `rocm-facts.md`, next to this file.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use std::io::Write;
use std::sync::Arc;

use super::mingw::{self, Dll};
use super::server::Server;
use super::wheel::{ct2_dist_info, dist_info, zip_wheel};
use super::{Run, Scratch};

pub const WHEEL: &str = "ctranslate2-4.7.1-cp312-cp312-win_amd64.whl";
pub const EXT: &str = "_ext.cp312-win_amd64.pyd";
pub const CORE_DEST: &str = "_rocm_sdk_core/bin";
pub const LIBS_DEST: &str = "_rocm_sdk_libraries_custom/bin";
pub const DATA_DEST: &str = "_rocm_sdk_libraries_custom/bin/rocblas/library";
pub const MSVC_DIR: &str = "msvc_runtime-14.51.36231.data/data/Scripts";
/// The official wheel's GPU targets (CTranslate2 v4.7.1's PYTORCH_ROCM_ARCH).
pub const WHEEL_TARGETS: [&str; 8] = [
    "gfx1030", "gfx1100", "gfx1101", "gfx1102", "gfx1150", "gfx1151", "gfx1200", "gfx1201",
];
/// The size of each synthetic kernel file.
pub const KERNEL_BYTES: usize = 16 * 1024;

/// The synthetic input: a CTranslate2 wheel, two unpacked ROCm SDK wheels and the unpacked
/// VC++ runtime wheel.
pub struct Rocm {
    pub wheel: PathBuf,
    pub core_bin: PathBuf,
    pub libs_bin: PathBuf,
    /// The unpacked SDK wheels' trees: `rocm_sdk_core/` and `rocm_sdk_libraries_custom/`,
    /// each with its `_rocm_sdk_*/bin` and `*.dist-info`.
    pub core_tree: PathBuf,
    pub libs_tree: PathBuf,
    /// The unpacked `msvc_runtime` wheel: its DLLs in `.data/data/Scripts`.
    pub msvc_tree: PathBuf,
    /// The files of the input wheel.
    pub wheel_files: BTreeSet<String>,
}

/// Builds the synthetic CTranslate2 ROCm wheel, SDK and VC++ runtime under `dir`.
pub fn rocm(dir: &Path) -> Rocm {
    rocm_with(dir, None)
}

/// [`rocm`], with the CTranslate2 wheel made from `official` (an unpacked official 4.7.1
/// win_amd64 wheel, the CPU side of upstream's build) when given: its Python files and its
/// real `_ext` extension module, with a `ctranslate2.dll` in front of the real one that
/// imports the HIP runtime and hipBLAS as the ROCm build's does and forwards every function
/// `_ext` imports to the real library (renamed `ctranslate2_cpu.dll`). So the wheel imports
/// only with TheRock's DLLs in reach, and then really transcribes (on the CPU).
pub fn rocm_with(dir: &Path, official: Option<&Path>) -> Rocm {
    let build = dir.join("build");
    let dll = |name, imports, loads| Dll {
        name,
        imports,
        loads,
    };
    mingw::build(
        &build,
        &[
            dll("amd_comgr0702.dll", &[], &[]),
            // The HIP runtime loads the code-object manager at run time: no import names it.
            dll("amdhip64_7.dll", &[], &["amd_comgr0702.dll"]),
            dll("hiprtc-builtins0702.dll", &[], &[]),
            dll(
                "hiprtc0702.dll",
                &["amdhip64_7.dll", "hiprtc-builtins0702.dll"],
                &[],
            ),
            dll("decoy_core.dll", &[], &[]),
            dll("libhipblaslt.dll", &["amdhip64_7.dll"], &[]),
            dll("rocblas.dll", &["amdhip64_7.dll", "libhipblaslt.dll"], &[]),
            dll("rocsolver.dll", &["rocblas.dll", "amdhip64_7.dll"], &[]),
            dll(
                "hipblas.dll",
                &["rocblas.dll", "rocsolver.dll", "amdhip64_7.dll"],
                &[],
            ),
            dll("hipsparse.dll", &["amdhip64_7.dll"], &[]),
            dll("libiomp5md.dll", &[], &[]),
            dll("MSVCP140.dll", &[], &[]),
            dll("VCRUNTIME140_1.dll", &[], &[]),
            // Never shipped anywhere: the policy says Python provides it.
            dll("python312.dll", &[], &[]),
            dll(
                "ctranslate2.dll",
                &[
                    "amdhip64_7.dll",
                    "hipblas.dll",
                    "libiomp5md.dll",
                    "MSVCP140.dll",
                ],
                &[],
            ),
            dll(
                EXT,
                &["ctranslate2.dll", "python312.dll", "MSVCP140.dll"],
                &[],
            ),
        ],
    );
    let place = |name: &str, to: &Path| {
        fs::create_dir_all(to).unwrap();
        fs::copy(build.join(name), to.join(name)).unwrap();
    };

    let tree = dir.join("wheel-tree");
    match official {
        None => {
            for name in ["ctranslate2.dll", EXT, "libiomp5md.dll"] {
                place(name, &tree.join("ctranslate2"));
            }
            fs::write(
                tree.join("ctranslate2/__init__.py"),
                "import os\n# adds ctranslate2/, _rocm_sdk_core/bin, _rocm_sdk_libraries_custom/bin\n",
            )
            .unwrap();
        }
        Some(official) => forwarding_package(official, &build, &tree.join("ctranslate2")),
    }
    ct2_dist_info(&tree, Some("cp312-cp312-win_amd64"));
    let wheel = dir.join("in").join(WHEEL);
    let wheel_files = zip_wheel(&tree, &wheel);

    let sdk = dir.join("sdk");
    let core = sdk.join("rocm_sdk_core");
    let core_bin = core.join(CORE_DEST);
    for name in [
        "amdhip64_7.dll",
        "amd_comgr0702.dll",
        "hiprtc0702.dll",
        "hiprtc-builtins0702.dll",
        "decoy_core.dll",
    ] {
        place(name, &core_bin);
    }
    dist_info(
        &core.join("rocm_sdk_core-7.2.0.dev0.dist-info"),
        "rocm_sdk_core",
        "7.2.0.dev0",
    );
    let libs = sdk.join("rocm_sdk_libraries_custom");
    let libs_bin = libs.join(LIBS_DEST);
    for name in [
        "hipblas.dll",
        "rocblas.dll",
        "rocsolver.dll",
        "libhipblaslt.dll",
        "hipsparse.dll",
    ] {
        place(name, &libs_bin);
    }
    kernels(&libs_bin);
    dist_info(
        &libs.join("rocm_sdk_libraries_custom-7.2.0.dev0.dist-info"),
        "rocm_sdk_libraries_custom",
        "7.2.0.dev0",
    );

    let msvc = dir.join("msvc-runtime");
    for name in ["MSVCP140.dll", "VCRUNTIME140_1.dll"] {
        place(name, &msvc.join(MSVC_DIR));
    }
    dist_info(
        &msvc.join("msvc_runtime-14.51.36231.dist-info"),
        "msvc_runtime",
        "14.51.36231",
    );
    Rocm {
        wheel,
        core_bin,
        libs_bin,
        core_tree: core,
        libs_tree: libs,
        msvc_tree: msvc,
        wheel_files,
    }
}

/// The official wheel's `ctranslate2/` folder with the real library renamed and a
/// forwarding `ctranslate2.dll` (mingw-w64, a .def file of forwarders) that also imports
/// `amdhip64_7.dll` and `hipblas.dll` from `build`.
fn forwarding_package(official: &Path, build: &Path, package: &Path) {
    super::copy_tree(&official.join("ctranslate2"), package);
    // The official CUDA build's cuDNN loader has no place in a ROCm wheel.
    let _ = fs::remove_file(package.join("cudnn64_9.dll"));
    fs::rename(
        package.join("ctranslate2.dll"),
        package.join("ctranslate2_cpu.dll"),
    )
    .unwrap();
    let ext = package.join(EXT);
    let dump = std::process::Command::new("x86_64-w64-mingw32-objdump")
        .arg("-p")
        .arg(&ext)
        .output()
        .unwrap();
    let dump = String::from_utf8_lossy(&dump.stdout).into_owned();
    let section = dump
        .split("DLL Name: ")
        .find(|s| s.starts_with("ctranslate2.dll"))
        .expect("_ext imports ctranslate2.dll");
    let names: Vec<&str> = section
        .lines()
        .skip(2)
        .filter_map(|l| l.split('\t').nth(2))
        .filter_map(|l| l.trim().split_once("  ").map(|(_, name)| name.trim()))
        .filter(|n| !n.is_empty())
        .collect();
    assert!(
        names.len() > 50,
        "{} names from {}",
        names.len(),
        ext.display()
    );
    let mut def = String::from("LIBRARY ctranslate2.dll\nEXPORTS\n  ct2_rocm_probe\n");
    for name in names {
        def.push_str(&format!("  \"{name}\" = ctranslate2_cpu.\"{name}\"\n"));
    }
    let work = build.join("forwarder");
    fs::create_dir_all(&work).unwrap();
    fs::write(work.join("ctranslate2.def"), def).unwrap();
    fs::write(
        work.join("ctranslate2.c"),
        "__declspec(dllimport) int f_amdhip64_7(void);\n\
         __declspec(dllimport) int f_hipblas(void);\n\
         int ct2_rocm_probe(void) { return f_amdhip64_7() + f_hipblas(); }\n",
    )
    .unwrap();
    super::run_ok(
        std::process::Command::new("x86_64-w64-mingw32-gcc")
            .arg("-shared")
            .arg("-o")
            .arg(package.join("ctranslate2.dll"))
            .arg(work.join("ctranslate2.c"))
            .arg(work.join("ctranslate2.def"))
            .arg(build.join("amdhip64_7.dll"))
            .arg(build.join("hipblas.dll")),
    );
}

/// rocBLAS's and hipBLASLt's kernels: per-architecture sub-folders of `library/`, some
/// compressed (`.dat.zlib`), some flat with the target in the name, as TheRock's builds lay
/// them out. hipBLASLt has none for gfx1030 and gfx1102 (TheRock excludes it there); both
/// have targets the official wheel was not built for (gfx906, gfx942, gfx1103).
fn kernels(libs_bin: &Path) {
    let rocblas = libs_bin.join("rocblas/library");
    let hipblaslt = libs_bin.join("hipblaslt/library");
    let mut files: Vec<PathBuf> = vec![
        rocblas.join("TensileManifest.txt"),
        rocblas.join("TensileLibrary_lazy_gfx1030.dat"),
        rocblas.join("Kernels.so-000-gfx1030.hsaco"),
        rocblas.join("TensileLibrary_lazy_gfx906.dat"),
        hipblaslt.join("gfx942/TensileLibrary_gfx942.dat.zlib"),
    ];
    for target in WHEEL_TARGETS.iter().skip(1).chain(&["gfx1103"]) {
        files.push(rocblas.join(format!("{target}/TensileLibrary_lazy_{target}.dat.zlib")));
        files.push(rocblas.join(format!("{target}/Kernels.so-000-{target}.co")));
        if *target != "gfx1102" {
            files.push(hipblaslt.join(format!("{target}/TensileLibrary_{target}.dat.zlib")));
            files.push(hipblaslt.join(format!("{target}/extop_{target}.co")));
        }
    }
    for file in files {
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        let line = format!("kernels of {}\n", file.display());
        fs::write(&file, line.repeat(KERNEL_BYTES / line.len() + 1)).unwrap();
    }
}

pub const RELEASE: &str =
    "/github.com/OpenNMT/CTranslate2/releases/download/v4.7.1/rocm-python-wheels-Windows.zip";
pub const INDEX: &str = "/repo.radeon.com/rocm/windows/rocm-rel-7.2/";
pub const CORE_WHEEL: &str = "rocm_sdk_core-7.2.0.dev0-py3-none-win_amd64.whl";
pub const LIBS_WHEEL: &str = "rocm_sdk_libraries_custom-7.2.0.dev0-py3-none-win_amd64.whl";
pub const DIST: &str = "target/xtask/rocm/windows-x86_64/dist/py3.12";
pub const MSVC: &str = "/files.pythonhosted.org/packages/98/33/be9ef68901200813fc174a06758b4ae48ca4eb58fa783280dd879d5fd048/msvc_runtime-14.51.36231-cp312-cp312-win_amd64.whl";
/// The pins in variants/ of the SDK wheels (published digests) and the VC++ runtime (PyPI).
pub const CORE_PIN: (&str, u64) = (
    "f8dac46ea54d570dd73a694e9f6793e80889a8168dd484be57b0d2f65079dde3",
    636833391,
);
pub const LIBS_PIN: (&str, u64) = (
    "29a155b8f0da7b4ea05481ba665dc08749462a66bfc7cee27a6976bdea41f0cc",
    492439790,
);
pub const MSVC_PIN: (&str, u64) = (
    "89f70d1a37bb64164cdb09d02dd82d6b1400e1310be2995b4ed5a9f23efe2222",
    2052033,
);

/// The stand-in: the synthetic ROCm files, and the four downloads made from them.
pub struct StandIn {
    pub dir: tempfile::TempDir,
    pub rocm: Rocm,
    pub release_zip: Vec<u8>,
    pub core_wheel: Vec<u8>,
    pub libs_wheel: Vec<u8>,
    pub msvc_wheel: Vec<u8>,
}

pub fn stand_in() -> StandIn {
    stand_in_with(None)
}

/// [`stand_in`] with the CTranslate2 wheel of [`rocm_with`].
pub fn stand_in_with(official: Option<&Path>) -> StandIn {
    let dir = tempfile::tempdir().unwrap();
    let rocm = rocm_with(dir.path(), official);
    let zipped = |tree: &Path, name: &str| {
        let path = dir.path().join("index").join(name);
        zip_wheel(tree, &path);
        fs::read(path).unwrap()
    };
    StandIn {
        release_zip: release_zip(&rocm.wheel),
        core_wheel: zipped(&rocm.core_tree, CORE_WHEEL),
        libs_wheel: zipped(&rocm.libs_tree, LIBS_WHEEL),
        msvc_wheel: zipped(&rocm.msvc_tree, "msvc_runtime.whl"),
        rocm,
        dir,
    }
}

/// Where the rocm variant's official zip and SDK wheels of the default CTranslate2 are pinned.
pub const ROCM_VERSION_FILE: &str = "variants/ctranslate2/4.7.1.toml";

/// A scratch copy of variants/ whose pins of the SDK and VC++ runtime wheels are those of
/// the stand-in's wheels (in the variant files and in pins.lock alike).
pub fn scratch_for(s: &StandIn) -> Scratch {
    let scratch = Scratch::new();
    repin(&scratch, CORE_PIN, &s.core_wheel, ROCM_VERSION_FILE);
    repin(&scratch, LIBS_PIN, &s.libs_wheel, ROCM_VERSION_FILE);
    repin(&scratch, MSVC_PIN, &s.msvc_wheel, "variants/defaults.toml");
    scratch
}

/// Replaces the pin `(sha, size)` in `file` and pins.lock by that of `bytes`.
pub fn repin(scratch: &Scratch, (sha, size): (&str, u64), bytes: &[u8], file: &str) {
    let digest = sha256(bytes);
    for f in [file, "variants/pins.lock"] {
        scratch.edit(f, sha, &digest);
    }
    scratch.edit(
        file,
        &format!("size = {size}\n"),
        &format!("size = {}\n", bytes.len()),
    );
    scratch.edit(
        "variants/pins.lock",
        &format!("size = {size} }}"),
        &format!("size = {} }}", bytes.len()),
    );
}

pub fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The GitHub release asset: a zip of the wheels under `temp-windows/`.
pub fn release_zip(wheel: &Path) -> Vec<u8> {
    let mut bytes = std::io::Cursor::new(Vec::new());
    let mut zip = zip::ZipWriter::new(&mut bytes);
    zip.start_file(
        format!("temp-windows/{WHEEL}"),
        zip::write::SimpleFileOptions::default(),
    )
    .unwrap();
    zip.write_all(&fs::read(wheel).unwrap()).unwrap();
    zip.finish().unwrap();
    bytes.into_inner()
}

/// Serves the stand-in's files at their real hosts' paths; `without_libs` leaves
/// `rocm_sdk_libraries_custom` out of the index.
pub fn serve(s: &StandIn, without_libs: bool) -> Server {
    let server = Server::start();
    server.serve(RELEASE, Arc::new(s.release_zip.clone()));
    server.serve(
        &format!("{INDEX}{CORE_WHEEL}"),
        Arc::new(s.core_wheel.clone()),
    );
    if !without_libs {
        server.serve(
            &format!("{INDEX}{LIBS_WHEEL}"),
            Arc::new(s.libs_wheel.clone()),
        );
    }
    server.serve(MSVC, Arc::new(s.msvc_wheel.clone()));
    server
}

pub fn build(scratch: &Scratch, server: &Server, extra: &[&str], env: &[(&str, &str)]) -> Run {
    let mirror = format!("{}/", server.base());
    let cache = scratch.path().join("cache");
    let args = build_args(cache.to_str().unwrap(), &mirror, extra);
    super::xtask_with_env(scratch.path(), &args, env, &["ROCM_SDK_TARGET_FAMILY"])
}

/// `build` of the rocm variant for Windows and Python 3.12 from `mirror`, into `cache`.
pub fn build_args<'a>(cache: &'a str, mirror: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "--cache-dir",
        cache,
        "build",
        "--variant",
        "rocm",
        "--platform",
        "windows-x86_64",
        "--python",
        "3.12",
        "--mirror",
        mirror,
    ];
    args.extend_from_slice(extra);
    args
}
