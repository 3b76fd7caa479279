//! Windows wheels this Linux machine can make, for the checks that run them in a Windows
//! Python under wine: the official CTranslate2 4.7.1 win_amd64 wheel (upstream's CUDA build,
//! from PyPI) stands in for our MSVC compile, and the variant's own post-compile steps (from
//! its plan: the pinned intel-openmp and msvc-runtime inputs, copy-dlls, the bundle) make the
//! fat wheel, as `cargo xtask build --variant V --platform windows-x86_64` would on Windows.
//!
//! | fact | source |
//! |---|---|
//! | `*.dll` in python/ctranslate2 go into the wheel | OpenNMT/CTranslate2 v4.7.1 python/setup.py (package_data) |
//! | ctranslate2.dll and libiomp5md.dll are copied there first | python/tools/prepare_build_environment_windows.sh |
//! | the DLL folder is added with os.add_dll_directory | python/ctranslate2/__init__.py |
//! | NVIDIA's cuBLAS 12 wheel is `nvidia-cublas-cu12`, its DLLs in `nvidia/cublas/bin` | the wheel's RECORD (PyPI nvidia-cublas-cu12 12.8.4.1, win_amd64) |

use ct2v_support::report::Reporter;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ct2v_fetch::cache::{Cache, Pin};
use ct2v_fetch::download::{self, Options, Request};
use serde_json::Value;

use super::wheel::{dist_info, unzip, zip_wheel};
use super::{Scratch, repo_root};

/// The official wheel whose ctranslate2.dll stands in for ours.
pub const CT2_URL: &str = "https://files.pythonhosted.org/packages/4a/f4/d23dbfb9c62cb642c114a30f05d753ba61d6ffbfd8a3a4012fe85a073bcb/ctranslate2-4.7.1-cp312-cp312-win_amd64.whl";
pub const CT2_SHA256: &str = "d0f734dc3757118094663bdaaf713f5090c55c1927fb330a76bb8b84173940e8";
pub const CT2_SIZE: u64 = 18_844_949;
pub const PYTHON: &str = "3.12";
pub const HOSTS: &[&str] = &["files.pythonhosted.org:443"];

pub fn request(name: &str, url: &str, sha256: &str, size: u64) -> Request {
    Request {
        name: name.to_string(),
        pin: Pin {
            url: url.to_string(),
            sha256: sha256.to_string(),
            size: Some(size),
            file_name: url.rsplit('/').next().unwrap().to_string(),
        },
    }
}

/// The repository's download cache (the tests share it, so a second run downloads nothing).
pub fn cache_dir() -> PathBuf {
    repo_root().join("target/xtask/cache")
}

fn options() -> Options {
    Options {
        progress: false,
        timeout: Duration::from_secs(60),
        ..Options::default()
    }
}

/// The official wheel, downloaded into the shared cache and verified.
#[cfg_attr(not(feature = "wine"), allow(dead_code))] // used by the wine harness's tests
pub fn official_wheel() -> PathBuf {
    let cache = Cache::new(cache_dir());
    let fetched = download::fetch_all(
        &cache,
        &[request("ct2-official", CT2_URL, CT2_SHA256, CT2_SIZE)],
        &options(),
    )
    .unwrap_or_else(|e| panic!("downloading the official wheel: {e}"));
    fetched[0].path.clone()
}

/// What [`fat_wheel`] made.
pub struct Fat {
    pub plan: Value,
    /// The bundle's output folder (the fat wheel, portable/, the report).
    pub out: PathBuf,
    /// The fat wheel.
    pub wheel: PathBuf,
    /// The DLLs the copy-dlls step copied into the package folder.
    pub copied: Vec<PathBuf>,
    /// The official wheel, unpacked.
    pub official: PathBuf,
}

/// The fat wheel of `variant` for Windows and Python 3.12, made in `scratch` by the
/// variant's post-compile steps on the official ctranslate2.dll. cuda's bundle declares the
/// cuBLAS wheel of the CUDA it was built with: a stand-in toolkit says 12.8.
pub fn fat_wheel(scratch: &Scratch, variant: &str) -> Fat {
    let cache_dir = cache_dir();
    let cache = Cache::new(&cache_dir);
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let xtask = |args: &[&str]| {
        let mut all = vec!["--cache-dir".to_string(), s(&cache_dir)];
        all.extend(args.iter().map(|a| a.to_string()));
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        scratch.run(&all)
    };
    let selection = [
        "--variant",
        variant,
        "--platform",
        "windows-x86_64",
        "--python",
        PYTHON,
    ];
    let mut plan_args = vec!["plan"];
    plan_args.extend_from_slice(&selection);
    plan_args.extend(["--compiler-cache", "off", "--json"]);
    let run = xtask(&plan_args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let plan: Value = serde_json::from_str(&run.stdout).unwrap();
    let step = |id: &str| super::plan_step(&plan, id).clone();

    let mut requests = vec![request("ct2-official", CT2_URL, CT2_SHA256, CT2_SIZE)];
    for name in ["intel-openmp", "msvc-runtime"] {
        let input = plan["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["name"] == name)
            .unwrap_or_else(|| panic!("input {name}"));
        requests.push(request(
            name,
            input["url"].as_str().unwrap(),
            input["sha256"].as_str().unwrap(),
            input["size"].as_u64().unwrap(),
        ));
    }
    let fetched = download::fetch_all(&cache, &requests, &options())
        .unwrap_or_else(|e| panic!("downloading the wheels: {e}"));
    for (r, f) in requests.iter().zip(&fetched).skip(1) {
        let unpack = step(&format!("unpack-{}", r.name))["dest"].clone();
        ct2v_fetch::unpack::unpack_input(
            &ct2v_fetch::unpack::CachedInput {
                name: &r.name,
                archive: &f.path,
                file_name: &r.pin.file_name,
                url: &r.pin.url,
            },
            None,
            Path::new(unpack.as_str().unwrap()),
            ct2v_fetch::unpack::Kept::Recorded,
            &Reporter::captured(),
        )
        .unwrap();
    }
    let official = scratch.path().join(format!("official-{variant}"));
    unzip(&fetched[0].path, &official);

    // The stand-in install prefix, then the copy-dlls step into the source's package folder.
    let copy = step("copy-dlls");
    let files: Vec<String> = copy["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    let dest = PathBuf::from(copy["dest"].as_str().unwrap());
    fs::create_dir_all(Path::new(&files[0]).parent().unwrap()).unwrap();
    fs::copy(official.join("ctranslate2/ctranslate2.dll"), &files[0]).unwrap();
    fs::create_dir_all(&dest).unwrap();
    let copied = ct2v_pipeline::execute::copy_dlls::copy(&files, &dest).unwrap();

    // The stand-in `pip wheel`: the official wheel's Python files and extension, and the
    // package folder's DLLs (exactly what copy-dlls put there).
    let tree = scratch.path().join(format!("wheel-tree-{variant}"));
    unzip(&fetched[0].path, &tree);
    for entry in fs::read_dir(tree.join("ctranslate2")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "dll") {
            fs::remove_file(path).unwrap();
        }
    }
    fs::remove_file(tree.join("ctranslate2-4.7.1.dist-info/RECORD")).unwrap();
    for dll in &copied {
        fs::copy(dll, tree.join("ctranslate2").join(dll.file_name().unwrap())).unwrap();
    }
    let bundle = step("bundle");
    let wheel = PathBuf::from(bundle["wheel"].as_str().unwrap());
    zip_wheel(&tree, &wheel);

    let mut bundle_args = vec!["bundle".to_string()];
    bundle_args.extend(selection.iter().map(|a| a.to_string()));
    let toolkit = scratch.path().join("cuda-12.8");
    if variant == "cuda" {
        fake_cuda(&toolkit);
        bundle_args.extend(["--sdk-dir".to_string(), s(&toolkit)]);
    }
    let args: Vec<&str> = bundle_args.iter().map(String::as_str).collect();
    let run = xtask(&args);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let out = PathBuf::from(bundle["out"].as_str().unwrap());
    // What the checksum step writes after the bundle: the tools, the SDK found.
    let sdk = if variant == "cuda" {
        serde_json::json!({"root": s(&toolkit), "version": "12.8", "found_by": "--sdk-dir"})
    } else {
        Value::Null
    };
    fs::write(
        out.join("build-info.json"),
        serde_json::json!({"variant": variant, "compiler": "stand-in: the official wheel's", "sdk": sdk})
            .to_string(),
    )
    .unwrap();
    let fat = out.join(wheel.file_name().unwrap());
    assert!(fat.is_file(), "{}", fat.display());
    Fat {
        plan,
        out,
        wheel: fat,
        copied,
        official,
    }
}

/// A CUDA toolkit folder whose nvcc says 12.8 (all `bundle --sdk-dir` reads of it).
fn fake_cuda(root: &Path) {
    let bin = root.join("bin");
    fs::create_dir_all(&bin).unwrap();
    super::write_script(
        &bin.join("nvcc"),
        "#!/bin/sh\necho 'nvcc: NVIDIA (R) Cuda compiler driver'\necho 'Cuda compilation tools, release 12.8, V12.8.93'\n",
    );
}

/// A folder holding a stand-in of NVIDIA's `nvidia-cublas-cu12` 12.8.4.1 win_amd64 wheel:
/// its layout and name, with mingw-built cublas64_12.dll and cublasLt64_12.dll (the cuda
/// wheel declares it; on the CPU nothing loads it).
#[cfg_attr(not(feature = "wine"), allow(dead_code))] // used by the wine harness's tests
pub fn cublas_wheel(dir: &Path) -> PathBuf {
    let tree = dir.join("cublas-tree");
    let bin = tree.join("nvidia/cublas/bin");
    super::mingw::build(
        &bin,
        &[
            super::mingw::Dll {
                name: "cublasLt64_12.dll",
                imports: &[],
                loads: &[],
            },
            super::mingw::Dll {
                name: "cublas64_12.dll",
                imports: &["cublasLt64_12.dll"],
                loads: &[],
            },
        ],
    );
    fs::write(tree.join("nvidia/__init__.py"), "").unwrap();
    let info = tree.join("nvidia_cublas_cu12-12.8.4.1.dist-info");
    dist_info(&info, "nvidia_cublas_cu12", "12.8.4.1");
    fs::write(
        info.join("WHEEL"),
        "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: py3-none-win_amd64\n",
    )
    .unwrap();
    let links = dir.join("cublas-wheels");
    let wheel = links.join("nvidia_cublas_cu12-12.8.4.1-py3-none-win_amd64.whl");
    zip_wheel(&tree, &wheel);
    links
}
