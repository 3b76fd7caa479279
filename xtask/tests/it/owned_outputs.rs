//! No folder is replaced that the tool did not prove its own: a bundle's `--out`, its portable
//! folder, an unpacked or assembled tree are replaced only while they are exactly what this
//! tool wrote there (their record, `.ct2v-owned`, names the folder and lists every file with
//! its size and sha256). Anything else exits 2 naming what differs, and nothing is touched.
//! Also the exit codes of `bundle` flags that name paths outside the wheel.

use crate::common;
use ct2v_support::report::Reporter;

use std::fs;
use std::path::{Path, PathBuf};

use common::{Run, assert_exit, xtask};
use ct2v_fetch::unpack::{self, ArchiveFormat, Limits};
use ct2v_support::owned_output::RECORD;

fn bundle(wheel: &Path, out: &Path, extra: &[&str]) -> Run {
    xtask(&common::command_args::bundle(wheel, out, extra))
}

/// A bundle output in `dir/out`, written by a first run.
fn bundled(dir: &Path) -> (PathBuf, PathBuf) {
    let wheel = common::wheel::linux_wheel(dir, &[]);
    let out = dir.join("out");
    assert_exit(&bundle(&wheel, &out, &[]), 0, &[]);
    assert!(out.join(RECORD).is_file());
    (wheel, out)
}

/// Every file below `dir` with its bytes.
pub(crate) fn contents(dir: &Path) -> Vec<(String, Vec<u8>)> {
    common::wheel::files_below(dir)
        .into_iter()
        .map(|name| {
            let bytes = fs::read(dir.join(&name)).unwrap();
            (name, bytes)
        })
        .collect()
}

/// `bundle` of `wheel` into `out` exits 2 naming each of `needles`, and `out` holds what it
/// held before.
fn refused_untouched(wheel: &Path, out: &Path, needles: &[&str]) {
    let before = contents(out);
    let run = bundle(wheel, out, &[]);
    assert_exit(&run, 2, needles);
    assert!(run.stderr.contains("not replaced"), "{}", run.stderr);
    assert_eq!(contents(out), before, "{} changed", out.display());
}

#[test]
fn a_file_added_to_an_output_stops_the_next_bundle() {
    let dir = tempfile::tempdir().unwrap();
    let (wheel, out) = bundled(dir.path());
    fs::write(out.join("notes.txt"), "mine").unwrap();
    fs::create_dir_all(out.join("portable/mine")).unwrap();
    fs::write(out.join("portable/mine/app.spec"), "mine").unwrap();
    refused_untouched(
        &wheel,
        &out,
        &[
            "--out",
            "notes.txt: not written by this tool",
            "portable/mine/app.spec: not written by this tool",
        ],
    );
}

#[test]
fn an_output_copied_elsewhere_with_the_users_files_is_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let (wheel, out) = bundled(dir.path());
    let copy = dir.path().join("copy");
    common::copy_tree(&out, &copy);
    fs::write(copy.join("thesis.txt"), "years of work").unwrap();
    refused_untouched(
        &wheel,
        &copy,
        &[
            "names another folder",
            "thesis.txt: not written by this tool",
        ],
    );
    // An untouched copy is not ours either: its record names `out`.
    let bare = dir.path().join("bare");
    common::copy_tree(&out, &bare);
    refused_untouched(&wheel, &bare, &["names another folder"]);
}

#[test]
fn an_edited_file_of_the_output_stops_the_next_bundle_even_at_the_same_size() {
    let dir = tempfile::tempdir().unwrap();
    let (wheel, out) = bundled(dir.path());
    let report = out.join("provenance.md");
    let text = fs::read_to_string(&report).unwrap();
    // Another size: caught before any work.
    fs::write(&report, format!("{text}my notes\n")).unwrap();
    refused_untouched(
        &wheel,
        &out,
        &["provenance.md: changed since this tool wrote it"],
    );
    // The same size: caught by the digests, checked at the swap.
    fs::write(&report, text.to_uppercase()).unwrap();
    assert_eq!(text.len(), text.to_uppercase().len());
    refused_untouched(
        &wheel,
        &out,
        &["provenance.md: changed since this tool wrote it"],
    );
    assert_no_leftovers(dir.path());
}

/// A folder of the user's dressed as an output: a record naming this very folder (and the
/// old marker), sizes right, one digest wrong.
#[test]
fn a_forged_record_with_the_right_path_but_a_changed_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let wheel = common::wheel::linux_wheel(dir.path(), &[]);
    let mine = dir.path().join("mine");
    fs::create_dir_all(&mine).unwrap();
    fs::write(mine.join("thesis.txt"), "years of work").unwrap();
    fs::write(mine.join(".ct2v-bundle"), "").unwrap();
    let empty_sha = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    let record = serde_json::json!({
        "written_by": "ct2-variants xtask",
        "token": "0123",
        "folder": fs::canonicalize(&mine).unwrap().display().to_string(),
        "entries": {
            ".ct2v-bundle": { "file": { "size": 0, "sha256": empty_sha } },
            "thesis.txt": { "file": { "size": 13, "sha256": "0".repeat(64) } },
        },
    });
    fs::write(mine.join(RECORD), record.to_string()).unwrap();
    refused_untouched(
        &wheel,
        &mine,
        &["thesis.txt: changed since this tool wrote it"],
    );
}

#[test]
fn a_link_planted_in_the_output_is_refused_and_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let (wheel, out) = bundled(dir.path());
    let elsewhere = dir.path().join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    fs::write(elsewhere.join("keep.txt"), "keep").unwrap();
    std::os::unix::fs::symlink(&elsewhere, out.join("portable/link")).unwrap();
    let run = bundle(&wheel, &out, &[]);
    assert_exit(&run, 2, &["portable/link: not written by this tool"]);
    assert!(out.join("portable/link").is_symlink());
    assert_eq!(
        fs::read_to_string(elsewhere.join("keep.txt")).unwrap(),
        "keep"
    );
}

#[test]
fn rerunning_bundle_into_its_own_untouched_output_replaces_it() {
    let dir = tempfile::tempdir().unwrap();
    let (wheel, out) = bundled(dir.path());
    let record = fs::read_to_string(out.join(RECORD)).unwrap();
    assert_exit(&bundle(&wheel, &out, &[]), 0, &[]);
    let again = fs::read_to_string(out.join(RECORD)).unwrap();
    assert_ne!(record, again, "a new output, with a new token");
    assert!(again.contains("provenance.json") && again.contains("sha256"));
    assert_no_leftovers(dir.path());
}

/// No staging or moved-aside folder is left beside the outputs.
fn assert_no_leftovers(dir: &Path) {
    let left: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn a_users_folder_at_the_portable_folders_place_is_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let wheel = common::wheel::linux_wheel(dir.path(), &[]);
    let work = dir.path().join("work");
    let folders = ["ctranslate2".to_string()];
    let portable_of = || {
        ct2v_bundle::bundler::run::portable_of_fat_wheel(
            &wheel,
            &folders,
            &work,
            &Reporter::captured(),
        )
    };
    portable_of().unwrap();
    portable_of().unwrap();
    let portable = work.join("portable");
    fs::write(portable.join("my.spec"), "mine").unwrap();
    let before = contents(&portable);
    let e = format!("{:#}", portable_of().unwrap_err());
    assert!(e.contains("my.spec: not written by this tool"), "{e}");
    assert_eq!(contents(&portable), before);
}

/// A `.tar.gz` of `files` below `top/`, with the pax header `git archive` writes (`commit`).
fn tar_gz(path: &Path, top: &str, commit: &str, files: &[(&str, &str)]) {
    let gz =
        flate2::write::GzEncoder::new(fs::File::create(path).unwrap(), flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    let record = format!("comment={commit}\n");
    let record = format!("{} {record}", record.len() + 3);
    let mut header = tar::Header::new_ustar();
    header.set_entry_type(tar::EntryType::XGlobalHeader);
    header.set_size(record.len() as u64);
    tar.append_data(&mut header, "pax_global_header", record.as_bytes())
        .unwrap();
    for (name, text) in files {
        let mut header = tar::Header::new_ustar();
        header.set_size(text.len() as u64);
        header.set_mode(0o644);
        tar.append_data(&mut header, format!("{top}/{name}"), text.as_bytes())
            .unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap();
}

/// A folder of the user's where an unpack would put its tree.
fn users_folder(dir: &Path) -> PathBuf {
    let dest = dir.join("deps/onednn");
    fs::create_dir_all(&dest).unwrap();
    fs::write(dest.join("my-fix.patch"), "mine").unwrap();
    dest
}

#[test]
fn an_unpack_destination_of_the_users_is_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("a.tar.gz");
    tar_gz(&archive, "a-1.0", "c", &[("CMakeLists.txt", "x")]);
    let dest = users_folder(dir.path());
    let before = contents(&dest);
    let limits = Limits::default();
    let e = unpack::unpack(
        &archive,
        ArchiveFormat::TarGz,
        None,
        &dest,
        &limits,
        &Reporter::captured(),
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("my-fix.patch: not written by"),
        "{e}"
    );
    assert_eq!(contents(&dest), before);
}

#[test]
fn an_assembled_source_destination_of_the_users_is_not_replaced() {
    use ct2v_fetch::assemble::{Assembly, Part, assemble};
    let dir = tempfile::tempdir().unwrap();
    let commit = "a".repeat(40);
    let archive = dir.path().join("tag.tar.gz");
    tar_gz(&archive, "ct2-1.0", &commit, &[("CMakeLists.txt", "x")]);
    let assembly = |dest: &Path| Assembly {
        tag: Part {
            input: "ctranslate2-source".into(),
            file_name: "v1.0.tar.gz".into(),
            url: "https://github.com/o/r/archive/v1.0.tar.gz".into(),
            archive: archive.clone(),
            subdir: "ct2-1.0".into(),
            commit: commit.clone(),
        },
        submodules: Vec::new(),
        dest: dest.to_path_buf(),
    };
    let ours = dir.path().join("src/ctranslate2");
    assemble(&assembly(&ours), &Reporter::captured()).unwrap();
    assemble(&assembly(&ours), &Reporter::captured()).unwrap();
    assert_eq!(
        fs::read_to_string(ours.join("CMakeLists.txt")).unwrap(),
        "x"
    );
    fs::write(ours.join("CMakeLists.txt"), "y").unwrap();
    let e = assemble(&assembly(&ours), &Reporter::captured()).unwrap_err();
    assert!(
        e.downcast_ref::<ct2v_support::diagnostic::InputError>()
            .is_some()
    );
    assert!(
        format!("{e:#}").contains("CMakeLists.txt: changed"),
        "{e:#}"
    );

    let dest = users_folder(dir.path());
    let before = contents(&dest);
    let e = format!(
        "{:#}",
        assemble(&assembly(&dest), &Reporter::captured()).unwrap_err()
    );
    assert!(e.contains("my-fix.patch: not written by"), "{e}");
    assert_eq!(contents(&dest), before);
}

/// A build's unpacked tree is replaced by the next unpack (a new pin) while it is as the tool
/// left it, including what the tool's own later steps wrote into it; a user's edit stops it
/// with exit 2 naming the file.
#[test]
fn an_unpacked_tree_is_replaced_while_only_this_tool_changed_it() {
    use ct2v_fetch::unpack::{CachedInput, Kept, unpack_input};
    use ct2v_support::owned_output::rerecord_after;
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("a.tar.gz");
    tar_gz(&archive, "a-1.0", "c", &[("python/setup.py", "x")]);
    let dest = dir.path().join("src/ctranslate2");
    let unpack_it = || {
        unpack_input(
            &CachedInput {
                name: "ctranslate2-source",
                archive: &archive,
                file_name: "a-1.0.tar.gz",
                url: "https://example.org/a-1.0.tar.gz",
            },
            Some("a-1.0"),
            &dest,
            Kept::Recorded,
            &Reporter::captured(),
        )
    };
    unpack_it().unwrap();
    // What a patch step and pip's in-tree build write, as steps of this tool.
    rerecord_after(&dest, || {
        Ok(fs::write(dest.join("python/setup.py"), "patched")?)
    })
    .unwrap();
    rerecord_after(&dest.join("python"), || {
        fs::create_dir_all(dest.join("python/build"))?;
        Ok(fs::write(dest.join("python/build/_ext.so"), "built")?)
    })
    .unwrap();
    unpack_it().unwrap();
    assert_eq!(
        fs::read_to_string(dest.join("python/setup.py")).unwrap(),
        "x"
    );
    assert!(!dest.join("python/build").exists());

    fs::write(dest.join("python/setup.py"), "mine").unwrap();
    let e = unpack_it().unwrap_err();
    let input = e
        .downcast_ref::<ct2v_support::diagnostic::InputError>()
        .expect("bad input (exit 2)");
    assert!(
        input.message.contains("ctranslate2-source")
            && input.message.contains("python/setup.py: changed"),
        "{input}"
    );
    assert_eq!(
        fs::read_to_string(dest.join("python/setup.py")).unwrap(),
        "mine"
    );
}

#[test]
fn a_force_glob_with_a_folder_is_bad_input_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let wheel = common::wheel::linux_wheel(dir.path(), &[]);
    let out = dir.path().join("out");
    for glob in ["../x/*.so", "/lib/libz.so", "sub\\x.dll", ".."] {
        let run = bundle(&wheel, &out, &["--force", glob]);
        assert_exit(&run, 2, &["--force", "file-name glob"]);
        assert!(!run.stderr.contains(".bundle-"), "{}", run.stderr);
        assert!(!out.exists());
    }
}

#[test]
fn a_binary_glob_that_matches_nothing_names_the_wheel_not_a_staging_folder() {
    let dir = tempfile::tempdir().unwrap();
    let wheel = common::wheel::linux_wheel(dir.path(), &[]);
    let out = dir.path().join("out");
    for glob in [
        "nothere/*.so",
        "ctranslate2/*.dll",
        "ctranslate2/__init__.py/x",
    ] {
        let run = bundle(&wheel, &out, &["--binary", glob]);
        assert_exit(&run, 2, &[glob, common::wheel::LINUX_WHEEL]);
        assert!(!run.stderr.contains(".bundle-"), "{}", run.stderr);
        assert!(!out.exists());
    }
}
