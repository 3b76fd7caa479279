//! Wheels for tests: a folder zipped into a wheel with a true RECORD, and back; the report
//! `bundle` writes next to a fat wheel.

use std::collections::BTreeSet;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The file name of [`linux_wheel`]'s wheel.
pub const LINUX_WHEEL: &str = "ctranslate2-4.7.1-cp312-cp312-manylinux_2_28_x86_64.whl";

/// A small Linux wheel at `dir/in/`: one ELF (a copy of `true`, which needs only libc), the
/// files `extra` (path in the wheel, bytes) and a true RECORD.
pub fn linux_wheel(dir: &Path, extra: &[(&str, &[u8])]) -> PathBuf {
    let tree = dir.join("tree");
    fs::create_dir_all(tree.join("ctranslate2")).unwrap();
    fs::copy("/bin/true", tree.join("ctranslate2/_ext.so")).unwrap();
    fs::write(tree.join("ctranslate2/__init__.py"), "").unwrap();
    for (name, bytes) in extra {
        fs::write(tree.join(name), bytes).unwrap();
    }
    ct2_dist_info(&tree, Some("cp312-cp312-manylinux_2_28_x86_64"));
    let out = dir.join("in").join(LINUX_WHEEL);
    zip_wheel(&tree, &out);
    fs::remove_dir_all(&tree).unwrap();
    out
}

/// The record this tool writes into an output it may replace later: a random token and the
/// folder's path, so it differs from run to run (and between two folders) by design.
pub const OUTPUT_RECORD: &str = ".ct2v-owned";

/// The files of an output folder two runs must agree on: [`files_below`] but the record.
pub fn output_files(dir: &Path) -> BTreeSet<String> {
    let mut files = files_below(dir);
    files.remove(OUTPUT_RECORD);
    files
}

/// Every file below `dir`, `/`-separated and relative to it.
pub fn files_below(dir: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in fs::read_dir(&at).unwrap().flatten() {
            if entry.file_type().unwrap().is_dir() {
                stack.push(entry.path());
            } else {
                let relative = entry.path().strip_prefix(dir).unwrap().to_owned();
                out.insert(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out
}

/// A `.dist-info` folder `dir` with the METADATA of package `name` at `version`.
pub fn dist_info(dir: &Path, name: &str, version: &str) {
    fs::create_dir_all(dir).unwrap();
    fs::write(
        dir.join("METADATA"),
        format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"),
    )
    .unwrap();
}

/// Writes `ctranslate2-4.7.1.dist-info/` (METADATA, and WHEEL with `tag` where given) into
/// the wheel tree `tree`.
pub fn ct2_dist_info(tree: &Path, tag: Option<&str>) {
    let info = tree.join("ctranslate2-4.7.1.dist-info");
    dist_info(&info, "ctranslate2", "4.7.1");
    let tag = tag.map_or_else(String::new, |tag| format!("Tag: {tag}\n"));
    fs::write(
        info.join("WHEEL"),
        format!("Wheel-Version: 1.0\nRoot-Is-Purelib: false\n{tag}"),
    )
    .unwrap();
}

/// The name of [`small_linux_wheel`].
/// Zips `tree` into a wheel at `out`, with a true RECORD; returns the file names in it.
pub fn zip_wheel(tree: &Path, out: &Path) -> BTreeSet<String> {
    let files = files_below(tree);
    let info = files
        .iter()
        .find_map(|f| f.split_once(".dist-info/").map(|(stem, _)| stem))
        .expect("a .dist-info")
        .to_string();
    let record_name = format!("{info}.dist-info/RECORD");
    fs::create_dir_all(out.parent().unwrap()).unwrap();
    let mut zip = zip::ZipWriter::new(fs::File::create(out).unwrap());
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let mut record = String::new();
    for name in &files {
        let data = fs::read(tree.join(name)).unwrap();
        record.push_str(&format!(
            "{name},{},{}\n",
            ct2v_bundle::wheel::record_hash(&data),
            data.len()
        ));
        zip.start_file(name.as_str(), options).unwrap();
        zip.write_all(&data).unwrap();
    }
    record.push_str(&format!("{record_name},,\n"));
    zip.start_file(record_name.as_str(), options).unwrap();
    zip.write_all(record.as_bytes()).unwrap();
    zip.finish().unwrap();
    let mut names = files;
    names.insert(record_name);
    names
}

/// The names of the files in the zip archive `wheel`.
pub fn zip_names(wheel: &Path) -> BTreeSet<String> {
    let archive = zip::ZipArchive::new(fs::File::open(wheel).unwrap()).unwrap();
    archive
        .file_names()
        .map(|n| n.unwrap().into_owned())
        .collect()
}

/// Extracts the zip archive `wheel` into `to`.
pub fn unzip(wheel: &Path, to: &Path) {
    let mut archive = zip::ZipArchive::new(fs::File::open(wheel).unwrap()).unwrap();
    archive.extract(to).unwrap();
}

/// The `provenance.json` that `bundle` wrote into `out`.
pub fn read_report(out: &Path) -> serde_json::Value {
    serde_json::from_str(&fs::read_to_string(out.join("provenance.json")).unwrap()).unwrap()
}

/// The `files` of a `provenance.json` report as (path, package, reason), in its order.
pub fn report_files(report: &serde_json::Value) -> Vec<(&str, &str, &str)> {
    report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap(),
                f["package"].as_str().unwrap(),
                f["reason"].as_str().unwrap(),
            )
        })
        .collect()
}
