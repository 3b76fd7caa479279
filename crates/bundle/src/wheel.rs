//! Wheels as files: writing a wheel from an unpacked tree with its RECORD rewritten (sha256
//! and size of every file), reproducibly — entries sorted with the `.dist-info` folder last
//! and RECORD the very last entry (PEP 427's recommendation, as `wheel`, auditwheel and
//! delvewheel write them), fixed timestamps (`SOURCE_DATE_EPOCH`, else 1980-01-01) and
//! permissions — changing a wheel's platform tag, and checking a wheel's RECORD. [`ZipOut`]
//! is the one zip writer: wheels and the release's zips alike.

use std::collections::BTreeSet;
use std::fs;
use std::io::{Read, Seek, Write};
use std::path::Path;

use anyhow::{Context, Result, bail};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, DateTime, ZipArchive, ZipWriter};

use ct2v_fetch::wheel_record::{self, Record};

/// `sha256=<urlsafe base64, no padding>`, as RECORD files write hashes (PEP 376/427).
pub fn record_hash(data: &[u8]) -> String {
    format!("sha256={}", base64_urlsafe(&Sha256::digest(data)))
}

fn base64_urlsafe(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// The names of the `*.dist-info` entries directly in `dir`, sorted.
pub(crate) fn dist_info_dirs(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut found: Vec<String> = fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".dist-info"))
        .collect();
    found.sort();
    Ok(found)
}

/// The single `*.dist-info` folder at the top of an unpacked wheel.
pub fn dist_info(tree: &Path) -> Result<String> {
    let found = dist_info_dirs(tree).with_context(|| format!("cannot list {}", tree.display()))?;
    match found.as_slice() {
        [one] => Ok(one.clone()),
        [] => bail!(
            "{} has no *.dist-info folder: not an unpacked wheel",
            tree.display()
        ),
        many => bail!(
            "{} has several *.dist-info folders: {}",
            tree.display(),
            many.join(", ")
        ),
    }
}

/// The timestamp every entry gets: `SOURCE_DATE_EPOCH` if set (clamped to 1980, the
/// earliest a zip can hold), else 1980-01-01 00:00:00.
fn fixed_time() -> DateTime {
    let epoch = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|v| v.trim().parse::<i64>().ok());
    zip_time(epoch)
}

/// A zip timestamp for seconds since 1970 (UTC), clamped to 1980-01-01.
fn zip_time(epoch: Option<i64>) -> DateTime {
    let epoch = epoch.unwrap_or(0).max(315_532_800);
    let days = epoch.div_euclid(86_400);
    let secs = epoch.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    DateTime::from_date_and_time(
        year.min(2107) as u16,
        month as u8,
        day as u8,
        (secs / 3600) as u8,
        (secs % 3600 / 60) as u8,
        (secs % 60) as u8,
    )
    .unwrap_or_default()
}

#[cfg(unix)]
fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

/// Windows keeps no exec bit, so the file's first bytes decide: an ELF file (a program or
/// a shared library) or a `#!` script is executable, as the Linux build that made it had it.
/// A release of Linux artifacts cut on Windows then zips the modes a Linux host would.
#[cfg(not(unix))]
fn executable(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 4];
    fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| head == *b"\x7fELF" || head.starts_with(b"#!"))
}

/// The mode a zip entry for `path` gets: 0755 for executables and shared libraries that
/// are executable on disk (on Windows: that are ELF files or scripts), else 0644 (so
/// `unzip` restores what the wheel tree had).
pub fn zip_mode(path: &Path) -> u32 {
    if executable(path) { 0o755 } else { 0o644 }
}

/// The options of every entry we write into a wheel or a release zip: deflated, the fixed
/// time, `mode`, and "made by" Unix on every host (the zip crate records the host's system
/// otherwise: DOS on Windows, so the same inputs gave other bytes there than on Linux).
fn entry_options(time: DateTime, mode: u32, size: u64) -> SimpleFileOptions {
    SimpleFileOptions::default()
        .compression_method(CompressionMethod::Deflated)
        .last_modified_time(time)
        .unix_permissions(mode)
        .system(zip::System::Unix)
        .large_file(size >= u64::from(u32::MAX))
}

/// A zip written the same way every time: entries in the order added, each with
/// [`entry_options`] at the [`fixed_time`].
pub struct ZipOut<W: Write + Seek> {
    zip: ZipWriter<FailOnce<W>>,
    time: DateTime,
}

impl<W: Write + Seek> ZipOut<W> {
    pub fn new(out: W) -> ZipOut<W> {
        ZipOut {
            zip: ZipWriter::new(FailOnce {
                file: out,
                broken: None,
            }),
            time: fixed_time(),
        }
    }

    pub fn add(&mut self, name: &str, mode: u32, data: &[u8]) -> Result<()> {
        let options = entry_options(self.time, mode, data.len() as u64);
        self.zip.start_file(name, options)?;
        self.zip.write_all(data)?;
        Ok(())
    }

    pub fn finish(self) -> Result<W> {
        Ok(self.zip.finish()?.file)
    }
}

/// What a [`ZipOut`] writes through. The write that fails (a full disk) fails; after it, the
/// file is left alone and stood in for, as if the writes went on: the zip crate finishes an
/// archive it is dropped with, and that second try on the broken file would fail again and
/// print its own error. The file, unfinished, is its owner's to delete.
struct FailOnce<W> {
    file: W,
    /// After the failure: the position and length the file would have.
    broken: Option<(u64, u64)>,
}

impl<W: Write + Seek> Write for FailOnce<W> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if let Some((at, len)) = &mut self.broken {
            *at += bytes.len() as u64;
            *len = (*len).max(*at);
            return Ok(bytes.len());
        }
        let written = self.file.write(bytes);
        if written
            .as_ref()
            .is_err_and(|e| e.kind() != std::io::ErrorKind::Interrupted)
        {
            let at = self.file.stream_position().unwrap_or(0);
            let len = self.file.seek(std::io::SeekFrom::End(0)).unwrap_or(at);
            self.broken = Some((at, len.max(at)));
        }
        written
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.broken {
            Some(_) => Ok(()),
            None => self.file.flush(),
        }
    }
}

impl<W: Seek> Seek for FailOnce<W> {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        use std::io::SeekFrom;
        let Some((at, len)) = &mut self.broken else {
            return self.file.seek(to);
        };
        let moved = match to {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::End(d) => len.checked_add_signed(d),
            SeekFrom::Current(d) => at.checked_add_signed(d),
        };
        *at = moved.ok_or(std::io::ErrorKind::InvalidInput)?;
        Ok(*at)
    }
}

/// A wheel being written to a temp file: every entry listed in its RECORD as it is added,
/// RECORD itself the last entry.
struct WheelOut {
    temp: tempfile::NamedTempFile,
    zip: ZipOut<fs::File>,
    record_name: String,
    record: String,
}

impl WheelOut {
    /// A new wheel in the folder `dir` whose `.dist-info` folder is `info`.
    fn create(dir: &Path, info: &str) -> Result<WheelOut> {
        let temp = tempfile::NamedTempFile::new_in(dir)
            .with_context(|| format!("cannot create a file in {}", dir.display()))?;
        let zip = ZipOut::new(temp.reopen()?);
        Ok(WheelOut {
            temp,
            zip,
            record_name: format!("{info}/RECORD"),
            record: String::new(),
        })
    }

    fn add(&mut self, name: &str, mode: u32, data: &[u8]) -> Result<()> {
        self.record.push_str(&format!(
            "{},{},{}\n",
            csv_field(name),
            record_hash(data),
            data.len()
        ));
        self.zip
            .add(name, mode, data)
            .with_context(|| format!("cannot write {}", self.temp.path().display()))
    }

    /// The wheel complete, RECORD last, in its temp file, for the caller to rename into place.
    fn finish(mut self) -> Result<tempfile::NamedTempFile> {
        self.record.push_str(&format!("{},,\n", self.record_name));
        self.zip
            .add(&self.record_name, 0o644, self.record.as_bytes())
            .with_context(|| format!("cannot write {}", self.temp.path().display()))?;
        self.zip
            .finish()
            .with_context(|| format!("cannot write {}", self.temp.path().display()))?;
        // Temp files are created private (0600); a release artifact is readable by all.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(self.temp.path(), fs::Permissions::from_mode(0o644))?;
        }
        Ok(self.temp)
    }
}

/// Writes the unpacked wheel at `tree` to `out` with a new RECORD. The zip is written to a
/// temp file next to `out` and renamed into place only when complete.
pub fn write(tree: &Path, out: &Path) -> Result<()> {
    let info = dist_info(tree)?;
    let parent = out.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(parent)?;
    let mut wheel = WheelOut::create(parent, &info)?;
    let (mut entries, metadata): (Vec<_>, Vec<_>) = ct2v_support::fsx::files_below(tree)?
        .into_iter()
        .filter(|(n, _)| *n != wheel.record_name)
        .partition(|(n, _)| !n.starts_with(&format!("{info}/")));
    entries.extend(metadata);
    for (name, path) in entries {
        let data = fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
        wheel.add(&name, zip_mode(&path), &data)?;
    }
    wheel
        .finish()?
        .persist(out)
        .with_context(|| format!("cannot move the new wheel to {}", out.display()))?;
    Ok(())
}

/// Adds `Requires-Dist:` lines to the unpacked wheel's METADATA, after its other headers (core
/// metadata: the headers end at the first empty line, the description follows). A line
/// already there is not repeated.
pub(crate) fn add_requires_dist(tree: &Path, requirements: &[String]) -> Result<()> {
    if requirements.is_empty() {
        return Ok(());
    }
    let path = tree.join(dist_info(tree)?).join("METADATA");
    let text =
        fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let (headers, body) = match text.find("\n\n") {
        Some(end) => text.split_at(end + 1),
        None => (text.as_str(), ""),
    };
    let mut headers = headers.to_string();
    if !headers.ends_with('\n') {
        headers.push('\n');
    }
    for requirement in requirements {
        let line = format!("Requires-Dist: {requirement}");
        if !headers.lines().any(|l| l == line) {
            headers.push_str(&line);
            headers.push('\n');
        }
    }
    ct2v_support::fsx::write(&path, headers + body)
}

/// Gives the unpacked wheel at `tree` (file name `wheel_name`) the platform tag `platform`,
/// e.g. `manylinux_2_28_x86_64`: every `Tag:` line of its WHEEL file, and the file name it
/// should be written under (returned). As `auditwheel repair --only-plat` does, the new tag
/// replaces the old one (pypa/auditwheel src/auditwheel/wheeltools.py, `add_platforms` with
/// `remove_platforms=("linux_<arch>",)`).
pub(crate) fn set_platform_tag(tree: &Path, wheel_name: &str, platform: &str) -> Result<String> {
    let renamed = platform_tagged_name(wheel_name, platform)?;
    let path = tree.join(dist_info(tree)?).join("WHEEL");
    let text =
        fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut lines: Vec<String> = Vec::new();
    for line in text.lines() {
        let new = match line.strip_prefix("Tag:") {
            Some(tag) => match tag.trim().rsplit_once('-') {
                Some((python_abi, _)) => format!("Tag: {python_abi}-{platform}"),
                None => bail!("{}: `{line}` is not a wheel tag", path.display()),
            },
            None => line.to_string(),
        };
        if !lines.contains(&new) || !new.starts_with("Tag:") {
            lines.push(new);
        }
    }
    ct2v_support::fsx::write(&path, lines.join("\n") + "\n")?;
    Ok(renamed)
}

/// `wheel_name` with its platform tag (the last `-` field) replaced by `platform`.
pub(crate) fn platform_tagged_name(wheel_name: &str, platform: &str) -> Result<String> {
    match wheel_name
        .strip_suffix(".whl")
        .and_then(|n| n.rsplit_once('-'))
    {
        Some((prefix, _)) => Ok(format!("{prefix}-{platform}.whl")),
        None => {
            bail!("{wheel_name} is not a wheel file name (name-version-python-abi-platform.whl)")
        }
    }
}

fn csv_field(name: &str) -> String {
    if name.contains([',', '"', '\n']) {
        format!("\"{}\"", name.replace('"', "\"\""))
    } else {
        name.to_string()
    }
}

/// How many bytes a wheel may expand to when it is read (the unpacker's limits: a multiple
/// of its size, with a floor), so that a small wheel of zeros cannot take gigabytes.
struct Budget {
    left: u64,
    wheel: String,
}

impl Budget {
    fn of(wheel: &Path) -> Result<Budget> {
        let size = fs::metadata(wheel)
            .with_context(|| format!("cannot read {}", wheel.display()))?
            .len();
        Ok(Budget {
            left: ct2v_fetch::unpack::Limits::default()
                .for_archive(size)
                .max_bytes,
            wheel: wheel.display().to_string(),
        })
    }

    /// Streams `reader` into `out`, taking what it reads from the budget.
    fn copy(&mut self, reader: &mut impl Read, out: &mut dyn Write) -> Result<u64> {
        let copied = std::io::copy(&mut reader.take(self.left.saturating_add(1)), out)?;
        if copied > self.left {
            bail!(
                "{} expands to more than its unpacking limit allows (a compressed bomb?): not read",
                self.wheel
            );
        }
        self.left -= copied;
        Ok(copied)
    }

    fn read(&mut self, reader: &mut impl Read) -> Result<Vec<u8>> {
        let mut data = Vec::new();
        self.copy(reader, &mut data)?;
        Ok(data)
    }
}

/// The members of `wheel` whose name `wanted` accepts, with their bytes, in the wheel's order
/// (read within the wheel's unpacking limit).
pub fn read_members(wheel: &Path, wanted: impl Fn(&str) -> bool) -> Result<Vec<(String, Vec<u8>)>> {
    let mut zip = ZipArchive::new(fs::File::open(wheel)?)
        .with_context(|| format!("{} is not a zip", wheel.display()))?;
    let mut budget = Budget::of(wheel)?;
    let mut found = Vec::new();
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i)?;
        let name = entry.name()?.to_string();
        if entry.is_file() && wanted(&name) {
            found.push((name, budget.read(&mut entry)?));
        }
    }
    Ok(found)
}

/// Checks that a wheel's RECORD lists every file with the digest and size it has, as the
/// binary distribution format says (`ct2v_fetch::wheel_record`). Returns the problems found
/// (empty when the wheel is consistent). Members are hashed as they are read, within the
/// wheel's unpacking limit.
pub fn check_record(wheel: &Path) -> Result<Vec<String>> {
    let file = fs::File::open(wheel).with_context(|| format!("cannot open {}", wheel.display()))?;
    let mut archive = ZipArchive::new(file)
        .with_context(|| format!("{} is not a zip archive", wheel.display()))?;
    let mut budget = Budget::of(wheel)?;
    let mut names = Vec::with_capacity(archive.len());
    for i in 0..archive.len() {
        let entry = archive.by_index_raw(i)?;
        names.push(
            (!entry.is_dir())
                .then(|| entry.name().map(|n| n.to_string()))
                .transpose()?,
        );
    }
    let files = names.iter().flatten().map(String::as_str);
    let record = match wheel_record::record_name(files) {
        Ok(name) => Record::parse(name, &budget.read(&mut archive.by_name(name)?)?),
        Err(why) => Err(why),
    };
    let record = match record {
        Ok(record) => record,
        Err(why) => return Ok(vec![format!("{}: {why}", wheel.display())]),
    };
    let mut checked = Checked::new(&record);
    for (i, name) in names.iter().enumerate() {
        if let Some(name) = name {
            checked.file(name, |out| budget.copy(&mut archive.by_index(i)?, out))?;
        }
    }
    Ok(checked.problems())
}

/// [`check_record`] for a wheel already unpacked at `tree` (files hashed from disk, one at a
/// time, so a large wheel is never held in memory).
pub(crate) fn check_record_tree(tree: &Path) -> Result<Vec<String>> {
    let files = ct2v_support::fsx::files_below(tree)?;
    let record = match wheel_record::record_name(files.iter().map(|(n, _)| n.as_str())) {
        Ok(name) => Record::parse(name, &fs::read(tree.join(name))?),
        Err(why) => Err(why),
    };
    let record = match record {
        Ok(record) => record,
        Err(why) => return Ok(vec![format!("{}: {why}", tree.display())]),
    };
    let mut checked = Checked::new(&record);
    for (name, path) in &files {
        checked.file(name, |out| {
            Ok(std::io::copy(&mut fs::File::open(path)?, out)?)
        })?;
    }
    Ok(checked.problems())
}

/// Files checked one by one against a RECORD, and what differs.
struct Checked<'a> {
    record: &'a Record,
    present: BTreeSet<String>,
    problems: Vec<String>,
}

impl<'a> Checked<'a> {
    fn new(record: &'a Record) -> Checked<'a> {
        Checked {
            record,
            present: BTreeSet::new(),
            problems: Vec::new(),
        }
    }

    /// The file `name`, its bytes streamed by `read` into the hash its RECORD line names.
    fn file(&mut self, name: &str, read: impl FnOnce(&mut dyn Write) -> Result<u64>) -> Result<()> {
        if self.record.is_exempt(name) {
            return Ok(());
        }
        self.present.insert(name.to_string());
        let Some(mut hash) = self.record.hasher(name) else {
            self.problems.push(self.record.unlisted(name));
            return Ok(());
        };
        read(&mut hash)?;
        if let Err(problem) = self.record.check(name, hash) {
            self.problems.push(problem);
        }
        Ok(())
    }

    fn problems(mut self) -> Vec<String> {
        self.problems.extend(self.record.missing(&self.present));
        self.problems
    }
}

/// Writes `wheel` to the folder `dest` with the PEP 440 local version `label` (`4.7.1` becomes
/// `4.7.1+cpu`, as PyTorch's `+cu121` wheels carry theirs): the `Version:` of METADATA, the
/// `.dist-info` folder's name and the file name; RECORD rewritten (last). Every other entry
/// keeps its bytes and mode, on any host. Returns the new file name. A wheel that already has
/// a local version is refused.
pub fn write_with_local_version(wheel: &Path, label: &str, dest: &Path) -> Result<String> {
    let wheel_name = wheel
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let mut zip = ZipArchive::new(fs::File::open(wheel)?)
        .with_context(|| format!("{} is not a zip", wheel.display()))?;
    let mut budget = Budget::of(wheel)?;
    let mut names = Vec::with_capacity(zip.len());
    for i in 0..zip.len() {
        names.push(zip.by_index(i)?.name()?.to_string());
    }
    let relabel = Relabel::read(&mut zip, &mut budget, &names, &wheel_name, label)?;

    let out = dest.join(&relabel.new_name);
    let mut writer = WheelOut::create(dest, &relabel.new_info)?;
    let old_record = format!("{}/RECORD", relabel.info);
    for name in names.iter().filter(|n| **n != old_record) {
        let mut entry = zip.by_name(name)?;
        if entry.is_dir() {
            continue;
        }
        let mode = entry.unix_mode().map_or(0o644, |m| m & 0o777);
        let data = budget.read(&mut entry)?;
        let (renamed, data) = relabel.entry(name, data);
        writer.add(&renamed, mode, &data)?;
    }
    writer
        .finish()?
        .persist(&out)
        .with_context(|| format!("cannot write {}", out.display()))?;
    Ok(relabel.new_name)
}

/// What a local version changes in a wheel: the `.dist-info` folder's name, METADATA's
/// `Version:` and the file name.
struct Relabel {
    info: String,
    new_info: String,
    new_name: String,
    /// The new METADATA.
    metadata: String,
}

impl Relabel {
    /// From the wheel's `.dist-info` folder and METADATA; refused when it has a local version.
    fn read(
        zip: &mut ZipArchive<fs::File>,
        budget: &mut Budget,
        names: &[String],
        wheel_name: &str,
        label: &str,
    ) -> Result<Relabel> {
        let Some(info) = names
            .iter()
            .filter_map(|n| n.split('/').next())
            .find(|top| top.ends_with(".dist-info"))
            .map(str::to_string)
        else {
            bail!("{wheel_name} has no .dist-info folder");
        };
        let metadata = budget.read(
            &mut zip
                .by_name(&format!("{info}/METADATA"))
                .with_context(|| format!("{wheel_name} has no {info}/METADATA"))?,
        )?;
        let metadata = String::from_utf8(metadata)
            .with_context(|| format!("{wheel_name}: {info}/METADATA is not UTF-8"))?;
        let Some(version) = metadata
            .lines()
            .find_map(|l| l.strip_prefix("Version:").map(str::trim))
            .map(str::to_string)
        else {
            bail!("{wheel_name}: its METADATA has no Version");
        };
        if version.contains('+') {
            bail!("{wheel_name} already has a local version ({version})");
        }
        let labelled = format!("{version}+{label}");
        let Some(project) = info.strip_suffix(&format!("-{version}.dist-info")) else {
            bail!("{wheel_name}: {info} does not name version {version}");
        };
        let prefix = format!("{project}-{version}-");
        let Some(tags) = wheel_name.strip_prefix(&prefix) else {
            bail!("{wheel_name} does not start with {prefix}");
        };
        let metadata: String = metadata
            .lines()
            .map(|l| match l.starts_with("Version:") {
                true => format!("Version: {labelled}\n"),
                false => format!("{l}\n"),
            })
            .collect();
        Ok(Relabel {
            new_info: format!("{project}-{labelled}.dist-info"),
            new_name: format!("{project}-{labelled}-{tags}"),
            info,
            metadata,
        })
    }

    /// An entry's name and bytes in the relabelled wheel.
    fn entry(&self, name: &str, data: Vec<u8>) -> (String, Vec<u8>) {
        let renamed = match name.strip_prefix(&format!("{}/", self.info)) {
            Some(rest) => format!("{}/{rest}", self.new_info),
            None => name.to_string(),
        };
        if renamed == format!("{}/METADATA", self.new_info) {
            let metadata = self.metadata.clone().into_bytes();
            return (renamed, metadata);
        }
        (renamed, data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("pkg/lib")).unwrap();
        fs::create_dir_all(root.join("pkg-1.0.dist-info")).unwrap();
        fs::write(root.join("pkg/__init__.py"), "x = 1\n").unwrap();
        fs::write(root.join("pkg/lib/a.so"), vec![7u8; 5000]).unwrap();
        fs::write(
            root.join("pkg-1.0.dist-info/METADATA"),
            "Name: pkg\nVersion: 1.0\n",
        )
        .unwrap();
        fs::write(root.join("pkg-1.0.dist-info/RECORD"), "stale\n").unwrap();
        dir
    }

    #[test]
    fn requires_dist_goes_after_the_headers_once_and_keeps_the_description() {
        let tree = tree();
        let metadata = tree.path().join("pkg-1.0.dist-info/METADATA");
        fs::write(
            &metadata,
            "Name: pkg\nVersion: 1.0\nRequires-Dist: numpy\n\nA description.\n\nMore.\n",
        )
        .unwrap();
        let wanted = ["nvidia-cublas-cu12>=12.8,<13".to_string()];
        add_requires_dist(tree.path(), &wanted).unwrap();
        add_requires_dist(tree.path(), &wanted).unwrap();
        assert_eq!(
            fs::read_to_string(&metadata).unwrap(),
            "Name: pkg\nVersion: 1.0\nRequires-Dist: numpy\n\
             Requires-Dist: nvidia-cublas-cu12>=12.8,<13\n\nA description.\n\nMore.\n"
        );
        // No description: the line is simply appended.
        let bare = self::tree();
        add_requires_dist(bare.path(), &wanted).unwrap();
        assert_eq!(
            fs::read_to_string(bare.path().join("pkg-1.0.dist-info/METADATA")).unwrap(),
            "Name: pkg\nVersion: 1.0\nRequires-Dist: nvidia-cublas-cu12>=12.8,<13\n"
        );
    }

    #[test]
    fn record_hash_matches_pip() {
        // python3 -c "import hashlib,base64;print(base64.urlsafe_b64encode(hashlib.sha256(b'hello').digest()).rstrip(b'='))"
        assert_eq!(
            record_hash(b"hello"),
            "sha256=LPJNul-wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ"
        );
    }

    #[test]
    fn a_local_version_renames_file_dist_info_and_metadata_and_keeps_a_true_record() {
        let tree = tree();
        let out = tempfile::tempdir().unwrap();
        let wheel = out.path().join("pkg-1.0-py3-none-any.whl");
        write(tree.path(), &wheel).unwrap();
        let dest = tempfile::tempdir().unwrap();
        let name = write_with_local_version(&wheel, "cu12", dest.path()).unwrap();
        assert_eq!(name, "pkg-1.0+cu12-py3-none-any.whl");
        let labelled = dest.path().join(&name);
        assert_eq!(check_record(&labelled).unwrap(), Vec::<String>::new());
        let mut archive = ZipArchive::new(fs::File::open(&labelled).unwrap()).unwrap();
        let mut metadata = String::new();
        archive
            .by_name("pkg-1.0+cu12.dist-info/METADATA")
            .unwrap()
            .read_to_string(&mut metadata)
            .unwrap();
        assert!(
            metadata.lines().any(|l| l == "Version: 1.0+cu12"),
            "{metadata}"
        );
        let err = write_with_local_version(&labelled, "cpu", dest.path()).unwrap_err();
        assert!(
            err.to_string()
                .contains("already has a local version (1.0+cu12)"),
            "{err}"
        );
    }

    #[test]
    fn written_wheels_have_a_true_record_and_are_reproducible() {
        let tree = tree();
        let out = tempfile::tempdir().unwrap();
        let (a, b) = (out.path().join("a.whl"), out.path().join("b.whl"));
        write(tree.path(), &a).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1100));
        write(tree.path(), &b).unwrap();
        assert_eq!(
            fs::read(&a).unwrap(),
            fs::read(&b).unwrap(),
            "byte-identical"
        );
        assert_eq!(check_record(&a).unwrap(), Vec::<String>::new());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&a).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o644, "readable by all, like any release file");
        }
        let mut archive = ZipArchive::new(fs::File::open(&a).unwrap()).unwrap();
        let names: Vec<String> = (0..archive.len())
            .map(|i| archive.by_index(i).unwrap().name().unwrap().to_string())
            .collect();
        assert_eq!(
            names,
            [
                "pkg/__init__.py",
                "pkg/lib/a.so",
                "pkg-1.0.dist-info/METADATA",
                "pkg-1.0.dist-info/RECORD"
            ],
            "the package sorted, then .dist-info, RECORD last (PEP 427)"
        );
    }

    #[test]
    fn the_platform_tag_is_replaced_in_wheel_and_file_name() {
        let tree = tree();
        let wheel = tree.path().join("pkg-1.0.dist-info/WHEEL");
        fs::write(
            &wheel,
            "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp312-cp312-linux_x86_64\n",
        )
        .unwrap();
        let name = set_platform_tag(
            tree.path(),
            "pkg-1.0-cp312-cp312-linux_x86_64.whl",
            "manylinux_2_28_x86_64",
        )
        .unwrap();
        assert_eq!(name, "pkg-1.0-cp312-cp312-manylinux_2_28_x86_64.whl");
        assert_eq!(
            fs::read_to_string(&wheel).unwrap(),
            "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp312-cp312-manylinux_2_28_x86_64\n"
        );
    }

    #[test]
    fn check_record_reports_tampering() {
        let tree = tree();
        let out = tempfile::tempdir().unwrap();
        let good = out.path().join("good.whl");
        write(tree.path(), &good).unwrap();
        // Rebuild the zip with one file changed but the old RECORD kept.
        let mut archive = ZipArchive::new(fs::File::open(&good).unwrap()).unwrap();
        let bad = out.path().join("bad.whl");
        let mut zip = ZipWriter::new(fs::File::create(&bad).unwrap());
        for i in 0..archive.len() {
            let mut entry = archive.by_index(i).unwrap();
            let name = entry.name().unwrap().to_string();
            let mut data = Vec::new();
            entry.read_to_end(&mut data).unwrap();
            if name == "pkg/__init__.py" {
                data = b"x = 2\n".to_vec();
            }
            zip.start_file(name.as_str(), SimpleFileOptions::default())
                .unwrap();
            zip.write_all(&data).unwrap();
        }
        zip.start_file("extra.txt", SimpleFileOptions::default())
            .unwrap();
        zip.finish().unwrap();
        let problems = check_record(&bad).unwrap();
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with("`pkg/__init__.py` has sha256=")),
            "{problems:?}"
        );
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with("`extra.txt` is in the wheel but not in `")),
            "{problems:?}"
        );
    }

    #[test]
    fn source_date_epoch_is_honoured_and_clamped() {
        // 2024-01-02 03:04:05 UTC; zip keeps seconds in steps of two.
        let t = zip_time(Some(1_704_164_645));
        assert_eq!(
            (
                t.year(),
                t.month(),
                t.day(),
                t.hour(),
                t.minute(),
                t.second()
            ),
            (2024, 1, 2, 3, 4, 4)
        );
        assert_eq!(zip_time(Some(5)).year(), 1980);
        assert_eq!(zip_time(None).year(), 1980);
    }
}
