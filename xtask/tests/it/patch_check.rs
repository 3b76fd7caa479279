//! NETWORK TESTS (crates.io): `cargo xtask patch` on the real pinned CTranslate2 4.7.1
//! source (the ct2rs 0.9.17 crate, downloaded once into the checkout's cache). Without
//! static.crates.io (or with `CT2V_SKIP_NETWORK_TESTS=1`) they are skipped and counted; under
//! `CI=true` an unreachable host fails them.

use crate::common;
use crate::needs_network;
use ct2v_support::report::Reporter;

use std::fs;
use std::path::{Path, PathBuf};

use common::command_args::patch_gfx1010;
use common::{Run, xtask};
use ct2v_fetch::unpack::{self, ArchiveFormat, Limits};

const HOSTS: &[&str] = &["static.crates.io:443"];
const CT2_CRATE_SHA256: &str = "616201b950832f4dd5fe95fd34fb557e3187233641235a5bb98f9432fe513bb1";
const PRIMITIVES: &str = "src/cuda/primitives.cu";

fn patch(extra: &[&str]) -> Run {
    xtask(&patch_gfx1010(extra))
}

/// The pinned source unpacked into `dir` (the crate is in the cache once `patch --check`
/// has run).
fn pinned_tree(dir: &Path) -> PathBuf {
    let crate_file = common::repo_root()
        .join("target/xtask/cache/sha256")
        .join(CT2_CRATE_SHA256);
    let tree = dir.join("CTranslate2");
    unpack::unpack(
        &crate_file,
        ArchiveFormat::TarGz,
        Some("ct2rs-0.9.17/CTranslate2"),
        &tree,
        &Limits::default(),
        &Reporter::captured(),
    )
    .unwrap();
    tree
}

#[test]
fn the_series_applies_to_the_pinned_source_and_a_corrupted_tree_fails_cleanly() {
    needs_network!(HOSTS);
    let run = patch(&["--check"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("0001-hip-use-hipblasGemmEx_v2.patch: applies"),
        "{}",
        run.stdout
    );
    assert!(run.stderr.contains("nothing was changed"), "{}", run.stderr);

    let dir = tempfile::tempdir().unwrap();
    let tree = pinned_tree(dir.path());
    let file = tree.join(PRIMITIVES);
    let pristine = fs::read_to_string(&file).unwrap();

    // The v1 names CTranslate2 maps the GEMMs to, changed as a newer upstream might.
    let corrupted = pristine.replace(
        "#define cublasGemmEx hipblasGemmEx\n",
        "#define cublasGemmEx hipblasGemmEx_with_a_new_name\n",
    );
    assert_ne!(corrupted, pristine, "the line the patch changes is there");
    fs::write(&file, &corrupted).unwrap();
    let source = tree.to_str().unwrap();
    for extra in [&["--check", "--source", source][..], &["--source", source]] {
        let run = patch(extra);
        assert_eq!(run.code, 1, "{extra:?}: {}", run.stderr);
        for needle in [
            "0001-hip-use-hipblasGemmEx_v2.patch does not apply",
            "src/cuda/primitives.cu: hunk #1 @@ -22,8 +22,10 @@ FAILED",
            "the patch expects, at line 22:",
            "      | #define cublasGemmEx hipblasGemmEx\n",
            "the file has, at lines 19-",
            "| #define cublasGemmEx hipblasGemmEx_with_a_new_name",
        ] {
            assert!(
                run.stderr.contains(needle),
                "`{needle}` in:\n{}",
                run.stderr
            );
        }
        assert_eq!(
            fs::read_to_string(&file).unwrap(),
            corrupted,
            "the tree is left as it was"
        );
        assert!(!tree.join(".ct2v-patches").exists());
    }

    // The pristine tree: patched once, and a second run recognises it.
    fs::write(&file, &pristine).unwrap();
    let run = patch(&["--source", source]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let patched = fs::read_to_string(&file).unwrap();
    assert!(patched.contains("#define cublasGemmEx hipblasGemmEx_v2\n"));
    let run = patch(&["--source", source]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(fs::read_to_string(&file).unwrap(), patched, "not twice");
    // Patched by hand (no marker): --check says the change is already there.
    fs::remove_file(tree.join(".ct2v-patches")).unwrap();
    let run = patch(&["--check", "--source", source]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains(": already in the tree"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_variant_without_patches_is_told_so() {
    let run = xtask(&["patch", "--check", "--variant", "cpu"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("variant `cpu` has no patch series"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_4_8_4_series_applies_to_the_4_8_4_source() {
    needs_network!(HOSTS);
    let run = patch(&["--check", "--ctranslate2", "4.8.4"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("0001-hip-use-hipblasGemmEx_v2.patch: applies"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("0002-hip-6-define-syncwarp.patch: applies"),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr.contains("patches/ctranslate2-4.8.4/series"),
        "{}",
        run.stderr
    );
}

/// `bump` makes 4.8.4's data again from 4.7.1's, as a maintainer would have: the source pin
/// is downloaded and written, the series copied and checked on the new source.
#[test]
fn bump_makes_a_version_from_the_previous_one_pins_it_and_checks_the_series() {
    needs_network!(HOSTS);
    let scratch = common::Scratch::new();
    fs::remove_file(scratch.path().join("variants/ctranslate2/4.8.4.toml")).unwrap();
    fs::remove_dir_all(scratch.path().join("patches/ctranslate2-4.8.4")).unwrap();
    let run = scratch.run(&[
        "bump",
        "--ctranslate2",
        "4.8.4",
        "--from",
        "4.7.1",
        "--source",
        "https://static.crates.io/crates/ct2rs/ct2rs-0.10.3.crate",
    ]);
    let all = format!("{}{}", run.stdout, run.stderr);
    assert!(run.code == 0 || run.code == 1, "{all}");
    let file = fs::read_to_string(scratch.path().join("variants/ctranslate2/4.8.4.toml")).unwrap();
    assert!(
        file.starts_with("# CTranslate2 4.8.4: what is specific"),
        "{file}"
    );
    assert!(
        file.contains("subdir = \"ct2rs-0.10.3/CTranslate2\""),
        "{file}"
    );
    assert!(
        file.contains(
            "sha256 = \"edf9167bb229e98360fe2ae650bf44936bf043f11cf6e620994bd0ef51c6cf8c\""
        ),
        "{file}"
    );
    assert!(file.contains("size = 6567680"), "{file}");
    assert!(
        file.contains("patches = \"patches/ctranslate2-4.8.4/series\""),
        "{file}"
    );
    let series =
        fs::read_to_string(scratch.path().join("patches/ctranslate2-4.8.4/series")).unwrap();
    assert!(series.contains("Patches for CTranslate2 4.8.4"), "{series}");
    assert!(all.contains("== patch --check rocm-gfx1010"), "{all}");
    assert!(
        all.contains("0002-hip-6-define-syncwarp.patch: applies"),
        "{all}"
    );
    // A second bump of the same version replaces nothing.
    let again = scratch.run(&["bump", "--ctranslate2", "4.8.4", "--no-pin"]);
    assert_eq!(again.code, 2, "{}", again.stderr);
    assert!(again.stderr.contains("already exists"), "{}", again.stderr);
}

/// The in-process patcher writes what GNU patch writes: the pinned 4.7.1 source patched
/// with the series by `cargo xtask patch` and by `patch -p1` is the same, byte for byte,
/// also when the patches are checked out with CRLF (`core.autocrlf=true`).
#[test]
fn the_series_patches_the_pinned_source_as_gnu_patch_does() {
    needs_network!(HOSTS);
    if common::skip::missing("patch", "apt-get install patch") {
        return;
    }
    let run = patch(&["--check"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let dir = tempfile::tempdir().unwrap();
    let ours = pinned_tree(&dir.path().join("ours"));
    let gnu = pinned_tree(&dir.path().join("gnu"));
    let series_dir = common::repo_root().join("patches/ctranslate2-4.7.1");
    let crlf_dir = dir.path().join("crlf");
    fs::create_dir_all(&crlf_dir).unwrap();
    let mut touched = Vec::new();
    for name in [
        "0001-hip-use-hipblasGemmEx_v2.patch",
        "0002-hip-6-define-syncwarp.patch",
    ] {
        let text = fs::read_to_string(series_dir.join(name)).unwrap();
        fs::write(crlf_dir.join(name), text.replace('\n', "\r\n")).unwrap();
        let status = std::process::Command::new("patch")
            .args(["-p1", "--forward", "--batch", "-d"])
            .arg(&gnu)
            .arg("-i")
            .arg(series_dir.join(name))
            .output()
            .unwrap();
        assert!(status.status.success(), "{status:?}");
        touched.extend(
            text.lines()
                .filter_map(|l| l.strip_prefix("+++ b/"))
                .map(str::to_string),
        );
    }
    let run = patch(&["--source", ours.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for file in &touched {
        assert_eq!(
            fs::read(ours.join(file)).unwrap(),
            fs::read(gnu.join(file)).unwrap(),
            "{file}"
        );
    }
    // The same series with CRLF patch files, on a fresh tree.
    let crlf_tree = pinned_tree(&dir.path().join("crlf-tree"));
    let scratch = common::Scratch::new();
    let scratch_series = scratch.path().join("patches/ctranslate2-4.7.1");
    for entry in fs::read_dir(&crlf_dir).unwrap() {
        let entry = entry.unwrap();
        fs::copy(entry.path(), scratch_series.join(entry.file_name())).unwrap();
    }
    let run = scratch.run(&patch_gfx1010(&["--source", crlf_tree.to_str().unwrap()]));
    assert_eq!(run.code, 0, "{}", run.stderr);
    for file in &touched {
        assert_eq!(
            fs::read(crlf_tree.join(file)).unwrap(),
            fs::read(gnu.join(file)).unwrap(),
            "{file} (CRLF patches)"
        );
    }
}
