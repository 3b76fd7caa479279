//! A ROCm 10 family wheel beside AMD's own `rocm-sdk-*` wheels in one venv (AMD's ROCm torch
//! depends on them): ours vendors the runtime in its own package folder, so `pip install` of
//! it changes no file of AMD's and `pip uninstall ctranslate2` deletes none. pip installs a
//! wheel's files over whatever is at their paths and uninstalls exactly the paths its RECORD
//! lists (pip `src/pip/_internal/operations/install/wheel.py` `install_unpacked_wheel`,
//! `src/pip/_internal/req/req_uninstall.py` `uninstallation_paths`: read here as pip 23.2
//! behaves, not from its source), which is why a file of ours under `_rocm_sdk_*` would
//! overwrite AMD's and take it with it on uninstall.

use crate::common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::rocm10::{self, Os};
use common::skip;

/// Every file of AMD's distributions in `site` (their import packages `_rocm_sdk_*` and
/// their `.dist-info` folders), by path, with its SHA-256.
fn amd_files(site: &Path) -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    for entry in fs::read_dir(site).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("_rocm_sdk_") || name.starts_with("rocm_sdk_") {
            for file in common::wheel::files_below(&path) {
                let bytes = fs::read(path.join(&file)).unwrap();
                files.insert(format!("{name}/{file}"), common::rocm::sha256(&bytes));
            }
        }
    }
    files
}

/// `python -c script` in the venv with no library path and no bytecode written (a `.pyc`
/// written into AMD's folders would itself be a change).
fn python(venv: &Path, script: &str) -> (bool, String) {
    let out = Command::new(venv.join("bin/python"))
        .args(["-c", script])
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("LD_PRELOAD")
        .output()
        .unwrap();
    (out.status.success(), common::stdout_and_stderr(&out))
}

fn pip(venv: &Path, args: &[&str]) {
    common::run_ok(
        Command::new(venv.join("bin/python"))
            .args(["-m", "pip", "--disable-pip-version-check", "--no-input"])
            .args(args)
            .env("PYTHONDONTWRITEBYTECODE", "1"),
    );
}

/// The venv's site-packages.
fn site_packages(venv: &Path) -> PathBuf {
    let (ok, out) = python(
        venv,
        "import sysconfig; print(sysconfig.get_paths()['platlib'])",
    );
    assert!(ok, "{out}");
    PathBuf::from(out.trim())
}

/// In a venv holding stand-ins of AMD's `rocm-sdk-core`, `rocm-sdk-libraries` and one device
/// wheel (real wheels, AMD's folder names, installed by pip), `pip install` of the family's
/// fat wheel then `pip uninstall ctranslate2` leaves every AMD file byte-identical; while both
/// are installed, both import, and `_ext` runs on the fat wheel's own runtime, not AMD's.
#[test]
fn installing_and_uninstalling_a_family_wheel_leaves_amds_rocm_wheels_byte_identical() {
    if !(common::mingw::available(false)
        && !skip::missing("gcc", "apt-get install gcc")
        && !skip::missing("patchelf", "apt-get install patchelf"))
    {
        return;
    }
    let family = rocm10::family("rocm-rdna2");
    let bundled =
        crate::rocm10_bundle::bundle_linux(family, crate::rocm10_bundle::Rpaths::Therocks);
    let work = bundled.staged.work.path();
    let venv = work.join("coexist-venv");
    common::run_ok(Command::new("python3").args(["-m", "venv"]).arg(&venv));
    let site = site_packages(&venv);

    // AMD's wheels, as AMD's torch brings them in.
    let target = family.targets[0];
    let amd: Vec<PathBuf> = [
        "rocm_sdk_core".to_string(),
        "rocm_sdk_libraries".to_string(),
        format!("rocm_sdk_device_{target}"),
    ]
    .iter()
    .map(|dist| {
        work.join("wheels")
            .join(rocm10::wheel_name(dist, Os::Linux))
    })
    .collect();
    let mut args = vec!["install", "--no-index", "--no-deps"];
    args.extend(amd.iter().map(|p| p.to_str().unwrap()));
    pip(&venv, &args);
    let before = amd_files(&site);
    assert!(
        before.contains_key("_rocm_sdk_core/lib/libamdhip64.so.7")
            && before.contains_key(&format!(
                "_rocm_sdk_libraries/.kpack/blas_lib_{target}.kpack"
            )),
        "AMD's stand-ins installed: {before:?}"
    );

    // Ours: the fat wheel under a tag this host's Python takes (its files are what matter).
    let name = bundled
        .fat
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let (stem, _) = name.split_once("-cp312-cp312-").expect("a cp312 wheel");
    let ours = work.join(format!("{stem}-py3-none-linux_x86_64.whl"));
    fs::copy(&bundled.fat, &ours).unwrap();
    pip(
        &venv,
        &["install", "--no-index", "--no-deps", ours.to_str().unwrap()],
    );
    let record = fs::read_to_string(
        fs::read_dir(&site)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| {
                let n = p.file_name().unwrap().to_string_lossy();
                n.starts_with("ctranslate2-") && n.ends_with(".dist-info")
            })
            .expect("ctranslate2's dist-info")
            .join("RECORD"),
    )
    .unwrap();
    for line in record.lines() {
        assert!(
            !line.contains("_rocm_sdk_"),
            "RECORD names AMD's folder: {line}"
        );
    }
    assert_eq!(
        amd_files(&site),
        before,
        "pip install of ours changed AMD's files"
    );

    // Both import; `_ext` runs, with the HIP runtime, and every other library mapped from a
    // `_rocm` folder, from our folder only (no search path of ours leads into AMD's).
    let ext = site.join("ctranslate2").join(bundled.ext);
    let (ok, out) = python(
        &venv,
        &format!(
            "import ctypes, _rocm_sdk_core, _rocm_sdk_libraries, ctranslate2\n\
             print('VALUE', ctypes.CDLL({:?}).ct2_value())\n\
             maps = open('/proc/self/maps').read()\n\
             print('\\n'.join(sorted({{l.split()[-1] for l in maps.splitlines() if '_rocm' in l}})))\n",
            ext.to_str().unwrap()
        ),
    );
    assert!(ok && out.contains("VALUE "), "{out}");
    assert!(
        out.contains("ctranslate2/_rocm/lib/libamdhip64.so.7")
            && out.contains("ctranslate2/_rocm/lib/rocm_sysdeps/lib/librocm_sysdeps_numa.so.1")
            && !out.contains("_rocm_sdk_"),
        "the HIP runtime comes from our folder: {out}"
    );

    pip(&venv, &["uninstall", "-y", "ctranslate2"]);
    assert_eq!(
        amd_files(&site),
        before,
        "pip uninstall of ours changed AMD's files"
    );
    assert!(!site.join("ctranslate2").exists(), "uninstalled");
    let (ok, out) = python(&venv, "import _rocm_sdk_core, _rocm_sdk_libraries");
    assert!(ok, "AMD's packages still import: {out}");
}
