//! NETWORK TESTS: the official CTranslate2 4.7.1 Windows wheel and the NVIDIA cuBLAS 12.8
//! wheel, downloaded from PyPI into the repository's default cache (`target/xtask/cache`, so
//! a rerun downloads nothing), verified and unpacked; their DLLs' import tables are compared
//! with what GNU objdump printed for them (`tests/data/real-wheels/`, see its README.md), and
//! the CTranslate2 wheel is bundled against cuBLAS with the real `xtask` binary.
//!
//! They need https to files.pythonhosted.org. Without it (or with `CT2V_SKIP_NETWORK_TESTS=1`)
//! each test is skipped and counted; under `CI=true` an unreachable host fails it.

use crate::common;
use crate::needs_network;
use ct2v_support::report::Reporter;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use common::{repo_root, xtask_in};
use ct2v_bundle::binary::{self, BinaryFormat};
use ct2v_fetch::cache::{Cache, Pin};
use ct2v_fetch::download::{self, Options, Request};
use ct2v_fetch::unpack::{self, ArchiveFormat, Limits};
use sha2::{Digest, Sha256};

/// The hosts the tests of this file download from.
const HOSTS: &[&str] = &["files.pythonhosted.org:443"];

struct Wheel {
    url: &'static str,
    sha256: &'static str,
    size: u64,
}

impl Wheel {
    fn file_name(&self) -> &'static str {
        self.url.rsplit('/').next().expect("a URL with a path")
    }

    fn request(&self) -> Request {
        Request {
            name: self.file_name().to_string(),
            pin: Pin {
                url: self.url.to_string(),
                sha256: self.sha256.to_string(),
                size: Some(self.size),
                file_name: self.file_name().to_string(),
            },
        }
    }
}

const CT2: Wheel = Wheel {
    url: "https://files.pythonhosted.org/packages/4a/f4/d23dbfb9c62cb642c114a30f05d753ba61d6ffbfd8a3a4012fe85a073bcb/ctranslate2-4.7.1-cp312-cp312-win_amd64.whl",
    sha256: "d0f734dc3757118094663bdaaf713f5090c55c1927fb330a76bb8b84173940e8",
    size: 18_844_949,
};

const CUBLAS: Wheel = Wheel {
    url: "https://files.pythonhosted.org/packages/70/61/7d7b3c70186fb651d0fbd35b01dbfc8e755f69fd58f817f3d0f642df20c3/nvidia_cublas_cu12-12.8.4.1-py3-none-win_amd64.whl",
    sha256: "47e9b82132fa8d2b4944e708049229601448aaad7e6f296f630f2d1a32de35af",
    size: 567_544_208,
};

/// The binaries whose objdump import lists are in `tests/data/real-wheels/`, by the wheel
/// (`true`: cuBLAS) and path inside it.
const BINARIES: [(bool, &str); 7] = [
    (false, "ctranslate2/ctranslate2.dll"),
    (false, "ctranslate2/_ext.cp312-win_amd64.pyd"),
    (false, "ctranslate2/libiomp5md.dll"),
    (false, "ctranslate2/cudnn64_9.dll"),
    (true, "nvidia/cublas/bin/cublas64_12.dll"),
    (true, "nvidia/cublas/bin/cublasLt64_12.dll"),
    (true, "nvidia/cublas/bin/nvblas64_12.dll"),
];

const CUBLAS_BIN: &str = "nvidia/cublas/bin";

/// Both wheels, in the cache, and unpacked once for every test of this file that runs at
/// the same time (the unpacked copy, about 800 MB, goes when the last of them is done).
struct Wheels {
    ct2_wheel: PathBuf,
    ct2: PathBuf,
    cublas: PathBuf,
    _dir: tempfile::TempDir,
}

/// `requests` downloaded into (or found in) the repository's default cache.
fn fetch(requests: &[Request]) -> Vec<download::Fetched> {
    let cache = Cache::new(repo_root().join("target/xtask/cache"));
    let options = Options {
        progress: false,
        timeout: Duration::from_secs(60),
        ..Options::default()
    };
    download::fetch_all(&cache, requests, &options)
        .unwrap_or_else(|e| panic!("downloading the wheels: {e}"))
}

fn wheels() -> Arc<Wheels> {
    static SHARED: Mutex<Weak<Wheels>> = Mutex::new(Weak::new());
    let mut shared = SHARED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(wheels) = shared.upgrade() {
        return wheels;
    }
    let fetched = fetch(&[CT2.request(), CUBLAS.request()]);
    for f in &fetched {
        eprintln!(
            "{}: {} ({})",
            f.name,
            f.path.display(),
            if f.downloaded {
                "downloaded"
            } else {
                "from the cache"
            }
        );
    }
    let dir = tempfile::Builder::new()
        .prefix("bundle-real-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let unpacked = |wheel: &Path, name: &str| {
        let dest = dir.path().join(name);
        unpack::unpack(
            wheel,
            ArchiveFormat::Zip,
            None,
            &dest,
            &Limits::default(),
            &Reporter::captured(),
        )
        .unwrap_or_else(|e| panic!("unpacking {}: {e}", wheel.display()));
        dest
    };
    let wheels = Arc::new(Wheels {
        ct2_wheel: fetched[0].path.clone(),
        ct2: unpacked(&fetched[0].path, "ct2"),
        cublas: unpacked(&fetched[1].path, "cublas"),
        _dir: dir,
    });
    *shared = Arc::downgrade(&wheels);
    wheels
}

fn file_name(relative: &str) -> &str {
    relative.rsplit('/').next().unwrap()
}

/// The DLL names `objdump -p` found in `name`'s import table, in order.
fn objdump_imports(name: &str) -> Vec<String> {
    let path = repo_root()
        .join("xtask/tests/data/real-wheels")
        .join(format!("{name}.imports"));
    let text =
        fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

fn sha256_of(path: &Path) -> String {
    let mut file = fs::File::open(path).unwrap();
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn real_dll_imports_match_objdump() {
    needs_network!(HOSTS);
    let wheels = wheels();
    for (in_cublas, relative) in BINARIES {
        let root = if in_cublas {
            &wheels.cublas
        } else {
            &wheels.ct2
        };
        let path = root.join(relative);
        let info = binary::read(&path).unwrap_or_else(|e| panic!("{e}"));
        let expected = objdump_imports(file_name(relative));
        assert!(!expected.is_empty(), "{relative}: an empty data file");
        assert_eq!(info.imports, expected, "{relative}: imports vs objdump -p");
        assert!(
            info.delay_imports.is_empty(),
            "{relative}: {:?}",
            info.delay_imports
        );
        assert_eq!(info.format, BinaryFormat::Pe, "{relative}");
        assert_eq!(info.machine, "x86_64", "{relative}");
        assert!(info.is_dll, "{relative}");
        assert_eq!(
            binary::parse(&fs::read(&path).unwrap(), &path).unwrap(),
            info,
            "{relative}: mapping and parsing bytes agree"
        );
    }
}

/// What the bundle should find, worked out from the objdump lists alone.
struct Expected {
    /// Library file name → (the folder it was found in: `true` for cuBLAS, importers).
    found: BTreeMap<String, (bool, BTreeSet<String>)>,
    /// Names found in no folder → importers (the operating system's, or missing).
    elsewhere: BTreeMap<String, BTreeSet<String>>,
}

/// A breadth-first walk over the objdump import lists: roots from the CTranslate2 wheel's
/// folder, `forced` loaded at run time; a name is looked up (ignoring case, as Windows does)
/// in the wheel's folder, then cuBLAS's; anything found in neither is the system's.
fn expected_closure(wheels: &Wheels, roots: &[&str], forced: &[&str]) -> Expected {
    let folders = [
        (false, wheels.ct2.join("ctranslate2")),
        (true, wheels.cublas.join(CUBLAS_BIN)),
    ];
    let locate = |name: &str| -> Option<(bool, String)> {
        folders.iter().find_map(|(in_cublas, dir)| {
            fs::read_dir(dir).unwrap().flatten().find_map(|e| {
                let file = e.file_name().to_string_lossy().into_owned();
                (file.eq_ignore_ascii_case(name) && e.path().is_file())
                    .then_some((*in_cublas, file))
            })
        })
    };
    let mut expected = Expected {
        found: BTreeMap::new(),
        elsewhere: BTreeMap::new(),
    };
    let mut queue = VecDeque::new();
    for (name, why) in roots
        .iter()
        .map(|r| (r, None))
        .chain(forced.iter().map(|f| (f, Some("loaded at run time"))))
    {
        let (in_cublas, file) = locate(name).unwrap_or_else(|| panic!("{name} is nowhere"));
        let importers = why.into_iter().map(str::to_string).collect();
        expected.found.insert(file.clone(), (in_cublas, importers));
        queue.push_back(file);
    }
    while let Some(importer) = queue.pop_front() {
        for import in objdump_imports(&importer) {
            match locate(&import) {
                Some((in_cublas, file)) => {
                    let entry = expected.found.entry(file.clone()).or_insert_with(|| {
                        queue.push_back(file.clone());
                        (in_cublas, BTreeSet::new())
                    });
                    entry.1.insert(importer.clone());
                }
                None => {
                    expected
                        .elsewhere
                        .entry(import)
                        .or_default()
                        .insert(importer.clone());
                }
            }
        }
    }
    expected
}

#[test]
fn bundling_the_real_cuda_wheel_against_real_cublas() {
    needs_network!(HOSTS);
    let wheels = wheels();
    let work = tempfile::Builder::new()
        .prefix("bundle-real-run-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    // The cache names files by sha256; the bundle reads the platform from the wheel's name.
    let wheel = work.path().join(CT2.file_name());
    fs::copy(&wheels.ct2_wheel, &wheel).unwrap();
    let search = wheels.cublas.join(CUBLAS_BIN);
    let out = work.path().join("out");
    let mut args: Vec<&str> = vec![
        "bundle",
        "--wheel",
        wheel.to_str().unwrap(),
        "--binary",
        "ctranslate2/ctranslate2.dll",
        "--binary",
        "ctranslate2/_ext*.pyd",
        "--force",
        "cublas64_*.dll",
        "--search",
        search.to_str().unwrap(),
        "--output",
        "report",
        "--out",
        out.to_str().unwrap(),
    ];

    let expected = expected_closure(
        &wheels,
        &["ctranslate2.dll", "_ext.cp312-win_amd64.pyd"],
        &["cublas64_12.dll"],
    );
    let msvcp = expected
        .elsewhere
        .get("MSVCP140.dll")
        .expect("the objdump lists import MSVCP140.dll");
    assert_eq!(
        msvcp.iter().map(String::as_str).collect::<Vec<_>>(),
        ["_ext.cp312-win_amd64.pyd", "ctranslate2.dll"]
    );

    // The VC++ runtime (MSVCP140.dll, VCRUNTIME140*.dll) is not part of Windows: found
    // nowhere, it is an error (the variants bundle it from the msvc-runtime input).
    let missing = xtask_in(&repo_root(), &args);
    assert_eq!(missing.code, 1, "{}", missing.stderr);
    let line = format!(
        "  MSVCP140.dll  (imported by {})",
        msvcp.iter().cloned().collect::<Vec<_>>().join(", ")
    );
    assert!(missing.stderr.contains(&line), "{}", missing.stderr);
    assert!(
        missing
            .stderr
            .contains("3 imported libraries are found nowhere"),
        "{}",
        missing.stderr
    );
    assert!(
        missing.stderr.contains(search.to_str().unwrap()),
        "the message lists the folders searched:\n{}",
        missing.stderr
    );
    assert!(!out.exists(), "nothing is written when the bundle fails");

    // Globs, as a maintainer who requires the VC++ redistributable would write them.
    args.extend([
        "--assume-present",
        "msvcp140*.dll",
        "--assume-present",
        "vcruntime140*.dll",
    ]);
    let run = xtask_in(&repo_root(), &args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let mut written: Vec<String> = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != ct2v_support::owned_output::RECORD)
        .collect();
    written.sort();
    assert_eq!(written, ["provenance.json", "provenance.md"]);
    let report: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("provenance.json")).unwrap()).unwrap();

    // The files: exactly what the walk over objdump's lists found in the cuBLAS folder.
    let bundled: Vec<(&String, &BTreeSet<String>)> = expected
        .found
        .iter()
        .filter(|(_, (in_cublas, _))| *in_cublas)
        .map(|(name, (_, importers))| (name, importers))
        .collect();
    let names: Vec<&str> = bundled.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["cublas64_12.dll", "cublasLt64_12.dll"]);
    let files = report["files"].as_array().unwrap();
    assert_eq!(files.len(), bundled.len(), "{report:#}");
    for (name, importers) in &bundled {
        let path = format!("ctranslate2/{name}");
        let entry = files
            .iter()
            .find(|f| f["path"] == path.as_str())
            .unwrap_or_else(|| panic!("{path} is not in the report: {report:#}"));
        let source = search.join(name);
        assert_eq!(entry["package"], "nvidia_cublas_cu12 12.8.4.1", "{path}");
        assert_eq!(entry["sha256"], sha256_of(&source).as_str(), "{path}");
        assert_eq!(
            entry["size"],
            fs::metadata(&source).unwrap().len(),
            "{path}"
        );
        let reason = importers.iter().cloned().collect::<Vec<_>>().join(", ");
        assert_eq!(entry["reason"], reason.as_str(), "{path}");
    }
    assert_eq!(
        files[0]["reason"], "loaded at run time",
        "cublas64_12.dll: {report:#}"
    );
    assert_eq!(files[1]["reason"], "cublas64_12.dll", "cublasLt64_12.dll");
    assert!(
        !report.to_string().contains("nvblas64_12.dll"),
        "nvblas64_12.dll is imported by nothing: {report:#}"
    );

    // Everything found nowhere is the system's, or assumed present.
    let strings = |key: &str| -> Vec<String> {
        report[key]
            .as_array()
            .unwrap_or_else(|| panic!("{key}: {report:#}"))
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    let system = strings("system");
    let assumed = strings("assumed_present");
    assert_eq!(
        assumed,
        ["MSVCP140.dll", "VCRUNTIME140.dll", "VCRUNTIME140_1.dll"]
    );
    for name in ["KERNEL32.dll", "python312.dll"] {
        assert!(system.iter().any(|s| s == name), "{name}: {system:?}");
    }
    let reported: BTreeSet<&String> = system.iter().chain(&assumed).collect();
    let walked: BTreeSet<&String> = expected.elsewhere.keys().collect();
    assert_eq!(reported, walked);

    let bundled_bytes: u64 = files.iter().map(|f| f["size"].as_u64().unwrap()).sum();
    assert_eq!(report["bundled_bytes"], bundled_bytes);
    assert!(
        report["sdk_bytes"].as_u64().unwrap() > bundled_bytes,
        "{report:#}"
    );
    assert!(run.stdout.contains("provenance.json"), "{}", run.stdout);
}

const MSVC_RUNTIME: Wheel = Wheel {
    url: "https://files.pythonhosted.org/packages/98/33/be9ef68901200813fc174a06758b4ae48ca4eb58fa783280dd879d5fd048/msvc_runtime-14.51.36231-cp312-cp312-win_amd64.whl",
    sha256: "89f70d1a37bb64164cdb09d02dd82d6b1400e1310be2995b4ed5a9f23efe2222",
    size: 2_052_033,
};

/// `bundle --wheel` of the official win_amd64 wheel with PyPI's VC++ runtime, by
/// `xtask.exe` under wine and by the Linux binary: the same closure (msvcp140, vcruntime140,
/// vcruntime140_1), and the same bytes in every output (fat wheel, portable, reports).
#[test]
fn the_windows_binary_bundles_the_official_wheel_into_the_linux_binarys_bytes() {
    needs_network!(HOSTS);
    let Some(wine) = common::windows_exe::WinXtask::new() else {
        return;
    };
    let fetched = fetch(&[CT2.request(), MSVC_RUNTIME.request()]);
    let work = tempfile::tempdir().unwrap();
    let wheel = work.path().join(CT2.file_name());
    fs::copy(&fetched[0].path, &wheel).unwrap();
    let runtime = work.path().join("msvc");
    unpack::unpack(
        &fetched[1].path,
        ArchiveFormat::Zip,
        None,
        &runtime,
        &Limits::default(),
        &Reporter::captured(),
    )
    .unwrap();
    let folder = common::wheel::files_below(&runtime)
        .into_iter()
        .find(|f| f.to_ascii_lowercase().ends_with("/msvcp140.dll"))
        .map(|f| runtime.join(f).parent().unwrap().to_path_buf())
        .expect("msvcp140.dll in the msvc-runtime wheel");
    let args = |wheel: &str, search: &str, out: &str| -> Vec<String> {
        [
            "bundle",
            "--wheel",
            wheel,
            "--binary",
            "ctranslate2/ctranslate2.dll",
            "--binary",
            "ctranslate2/_ext*.pyd",
            "--search",
            &format!("{search}=ctranslate2"),
            "--out",
            out,
        ]
        .map(str::to_string)
        .to_vec()
    };
    let linux_out = work.path().join("linux");
    let linux_args = args(
        wheel.to_str().unwrap(),
        folder.to_str().unwrap(),
        linux_out.to_str().unwrap(),
    );
    let run = xtask_in(
        &repo_root(),
        &linux_args.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let windows_out = work.path().join("windows");
    use common::windows_exe::win;
    let windows_args = args(&win(&wheel), &win(&folder), &win(&windows_out));
    let run = wine.run(
        &repo_root(),
        &windows_args.iter().map(String::as_str).collect::<Vec<_>>(),
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        common::windows_exe::verbatim_paths(&run.stdout).is_empty(),
        "{}",
        run.stdout
    );
    assert_eq!(
        common::windows_exe::mixed_separators(&run.stdout),
        Vec::<&str>::new()
    );
    let files = common::wheel::output_files(&linux_out);
    for dll in ["msvcp140.dll", "vcruntime140.dll", "vcruntime140_1.dll"] {
        assert!(
            files
                .iter()
                .any(|f| f.to_ascii_lowercase() == format!("portable/_internal/ctranslate2/{dll}")),
            "{dll} in {files:?}"
        );
    }
    assert_eq!(common::wheel::output_files(&windows_out), files);
    for file in &files {
        assert!(
            fs::read(linux_out.join(file)).unwrap() == fs::read(windows_out.join(file)).unwrap(),
            "{file} differs between the Linux and the Windows binary"
        );
    }
}
