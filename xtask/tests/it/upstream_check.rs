//! `upstream --check` run as users run it, offline, on a `.crate`-shaped archive made of the
//! real 4.8.4 files (crates/upkeep/tests/data/upstream/4.8.4) and the [source] pin of a scratch copy set to
//! it: today's data drifts (exit 1), a corrected copy does not (exit 0), an unknown version
//! or an upstream file of a new shape is bad input (exit 2).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::common::{Run, Scratch, assert_exit, repo_root, xtask_in};

const WIN_ROCM: &str = "python/tools/prepare_build_environment_windows_rocm.sh";

/// The committed 4.8.4 files, by path inside the CTranslate2 tree.
fn files_4_8_4() -> BTreeMap<String, Vec<u8>> {
    let dir = repo_root().join("crates/upkeep/tests/data/upstream/4.8.4");
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path
                    .strip_prefix(&dir)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                files.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

/// A scratch checkout whose 4.8.4 [source] is a crate made of `files`, in a cache of its own.
struct Checkout {
    scratch: Scratch,
    cache: tempfile::TempDir,
}

impl Checkout {
    fn new(files: &BTreeMap<String, Vec<u8>>) -> Checkout {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        {
            let mut tar = tar::Builder::new(&mut gz);
            for (path, bytes) in files {
                let mut header = tar::Header::new_gnu();
                header.set_size(bytes.len() as u64);
                header.set_mode(0o644);
                header.set_cksum();
                tar.append_data(
                    &mut header,
                    format!("ct2rs-0.10.3/CTranslate2/{path}"),
                    bytes.as_slice(),
                )
                .unwrap();
            }
            tar.finish().unwrap();
        }
        let archive = gz.finish().unwrap();
        let sha256: String = Sha256::digest(&archive)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let cache = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(cache.path().join("sha256")).unwrap();
        std::fs::File::create(cache.path().join("sha256").join(&sha256))
            .unwrap()
            .write_all(&archive)
            .unwrap();
        let scratch = Scratch::new();
        let file = "variants/ctranslate2/4.8.4.toml";
        scratch.edit(
            file,
            "sha256 = \"edf9167bb229e98360fe2ae650bf44936bf043f11cf6e620994bd0ef51c6cf8c\"",
            &format!("sha256 = \"{sha256}\""),
        );
        scratch.edit(file, "size = 6567680", &format!("size = {}", archive.len()));
        Checkout { scratch, cache }
    }

    fn check(&self, extra: &[&str]) -> Run {
        let cache = self.cache.path().to_str().unwrap();
        let mut args = vec!["--cache-dir", cache, "upstream", "--check", "--offline"];
        args.extend_from_slice(extra);
        xtask_in(self.scratch.path(), &args)
    }

    fn path(&self) -> &Path {
        self.scratch.path()
    }
}

/// The 4.8.4 version file as it was before the check existed (crates/upkeep/tests/data/upstream/README.md).
const BEFORE_THE_FIX: &str = include_str!(
    "../../../crates/upkeep/tests/data/upstream/4.8.4-version-file-before-the-fix.toml"
);

#[test]
fn the_4_8_4_data_before_the_fix_drifts_from_upstream() {
    let checkout = Checkout::new(&files_4_8_4());
    let file = checkout.path().join("variants/ctranslate2/4.8.4.toml");
    let today = std::fs::read_to_string(&file).unwrap();
    // The same source pin as today's file (the checkout's archive), the data of before.
    let pin = |text: &str| {
        text.lines()
            .skip_while(|l| *l != "[source]")
            .take(6)
            .collect::<Vec<_>>()
            .join("\n")
    };
    std::fs::write(
        &file,
        BEFORE_THE_FIX.replace(&pin(BEFORE_THE_FIX), &pin(&today)),
    )
    .unwrap();
    let run = checkout.check(&["--ctranslate2", "4.8.4"]);
    assert_exit(
        &run,
        1,
        &[
            "pybind11: upstream 2.13.6 (python/install_requirements.txt:1)",
            "pybind11 2.11.1 (wheels/build-tools.txt:",
            "rocm.sdk: upstream's rocm[libraries,devel]==10.0.0 from https://stable.repo.amd.com/rocm/whl-next/ (python/tools/prepare_build_environment_windows_rocm.sh:6-7)",
            "rocm-sdk-core 7.2.0.dev0",
            "repo.radeon.com",
            "(variants/ctranslate2/4.8.4.toml:",
        ],
    );
    // The accepted oneDNN version is said with its reason, and not counted.
    assert!(
        run.stdout.contains("accepted: onednn.version"),
        "{}",
        run.stdout
    );
    assert!(!run.stderr.contains("onednn.version"), "{}", run.stderr);
}

#[test]
fn todays_data_passes_and_a_stale_acceptance_fails() {
    let checkout = Checkout::new(&files_4_8_4());
    let run = checkout.check(&["--ctranslate2", "4.8.4"]);
    assert_exit(&run, 0, &["upstream --check: no drift"]);
    assert!(
        run.stdout
            .contains("ours      2.13.6  (wheels/build-tools-pybind11-2.13.6.txt:"),
        "{}",
        run.stdout
    );

    checkout.scratch.edit(
        "variants/defaults.toml",
        "[upstream.accepted]\n",
        "[upstream.accepted]\n\"rocm.gpu-targets\" = \"we keep fewer\"\n",
    );
    let run = checkout.check(&["--ctranslate2", "4.8.4"]);
    assert_exit(
        &run,
        1,
        &[
            "[upstream.accepted] \"rocm.gpu-targets\" (variants/defaults.toml:",
            "matches no drift",
        ],
    );
    assert!(checkout.path().join("variants").is_dir());
}

#[test]
fn an_unknown_version_or_fact_is_bad_input() {
    let checkout = Checkout::new(&files_4_8_4());
    let run = checkout.check(&["--ctranslate2", "9.9.9"]);
    assert_exit(&run, 2, &["no data for CTranslate2 9.9.9"]);

    checkout.scratch.edit(
        "variants/defaults.toml",
        "[upstream.accepted]\n",
        "[upstream.accepted]\n\"onednn.versoin\" = \"typo\"\n",
    );
    let run = checkout.check(&["--ctranslate2", "4.8.4"]);
    assert_exit(&run, 2, &["`onednn.versoin` is no fact", "onednn.version"]);
}

#[test]
fn an_upstream_file_of_a_new_shape_is_bad_input_naming_every_fact() {
    let mut files = files_4_8_4();
    let script = files.get_mut(WIN_ROCM).unwrap();
    let text = String::from_utf8(script.clone())
        .unwrap()
        .replace("ONEDNN_VERSION=3.10.2", "DNNL_VERSION=3.10.2")
        .replace(
            "export PYTORCH_ROCM_ARCH=\"gfx1030;",
            "export PYTORCH_ROCM_ARCH=$(cat archs.txt)\nexport UNUSED=\"gfx1030;",
        );
    *script = text.into_bytes();
    let checkout = Checkout::new(&files);
    let run = checkout.check(&["--ctranslate2", "4.8.4"]);
    assert_exit(
        &run,
        2,
        &[
            "2 upstream fact(s) could not be read",
            &format!(
                "could not read the oneDNN version (onednn.version) in {WIN_ROCM}:33: `$ONEDNN_VERSION` is not assigned in this script"
            ),
            &format!(
                "could not read the HIP architectures (rocm.gpu-targets) in {WIN_ROCM}:42: `$PYTORCH_ROCM_ARCH` is set from a command (line 19)"
            ),
        ],
    );
}
