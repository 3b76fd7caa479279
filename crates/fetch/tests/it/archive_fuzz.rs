//! Robustness of the unpacker (`unpack::unpack`) against damaged and hostile archives: small
//! valid `.tar.gz`, `.zip` and `.7z` archives made here, then damaged in deterministic ways
//! (bytes flipped, cut short, size and count fields set to edge values, entries duplicated,
//! dropped or retyped, names and link targets replaced by hostile ones) and unpacked into a
//! sandbox, with each case's folder, limits and Windows rules picked at random.
//!
//! Whatever the input, `unpack` must return (never panic); nothing may appear outside the
//! destination; the destination is either the complete result (what `Unpacked` says is
//! there, every link inside it) or exactly what it was before; an error names the archive and
//! shows no raw control character. A failure prints the case, the panic's message and
//! backtrace, and saves the input under `target/tmp/archive-fuzz-failures/`.
//!
//! `CT2V_FUZZ_CASES` sets the random cases per format (a longer hunt); the default keeps the
//! three tests to a few seconds each in a debug build.

use crate::common::fuzz::{self as harness, Rng};

use std::collections::HashSet;
use std::fs;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use ct2v_fetch::unpack::{self, ANY_TOP_FOLDER, ArchiveFormat, Limits, Unpacked};
use ct2v_support::report::Reporter;
use flate2::Compression;
use flate2::write::GzEncoder;
use tar::{EntryType, Header};
use zip::ZipWriter;
use zip::write::SimpleFileOptions;

/// Random cases per format, unless `CT2V_FUZZ_CASES` says.
const CASES: usize = 1500;
/// Failing inputs kept (and printed) per format; the rest are only counted.
const KEPT_FAILURES: usize = 8;
/// What an existing destination holds before a case: it must survive a refused archive.
const SENTINEL: &str = "sentinel-before-the-unpack";

/// Names that break something somewhere: parents, absolute and drive paths, Windows device
/// and stream names, trailing dots, case twins, control characters, bidi overrides, the root
/// itself (`./`, what `tar -C dir .` writes), NUL, and long or deep paths.
fn hostile_names(sandbox: &Path) -> Vec<String> {
    let mut names: Vec<String> = [
        "../evil",
        "pkg/../../evil",
        "pkg/../../../evil",
        "..",
        "/evil-absolute",
        "\\evil",
        "C:\\evil",
        "C:evil",
        "c:/evil",
        "\\\\server\\share\\evil",
        "..\\..\\evil",
        "pkg\\..\\..\\evil",
        "pkg/NUL",
        "pkg/com1.txt",
        "pkg/a:stream",
        "pkg/a.",
        "pkg/a ",
        "pkg/...",
        "PKG/A",
        "pkg/A",
        "pkg/\u{1b}[2J\u{1b}[31mred",
        "pkg/line\rover",
        "pkg/new\nline",
        "pkg/\u{202e}txt.exe",
        "pkg/\u{7f}\u{9b}",
        "./",
        ".",
        "",
        "/",
        "./pkg/a",
        "./pkg/",
        "pkg//a",
        "pkg/./a",
        "pkg/a/",
        "pkg/nul\0byte",
        "*",
        "pkg/*",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    names.push(format!("{}/evil-absolute", sandbox.display()));
    names.push(format!("pkg/{}", "x".repeat(300)));
    names.push(format!("pkg/{}", "y".repeat(5000)));
    names.push(format!("pkg/{}z", "d/".repeat(1500)));
    names
}

/// Link targets: outside, absolute, loops, the root, parents.
fn hostile_targets(sandbox: &Path) -> Vec<String> {
    let mut targets: Vec<String> = [
        "..",
        "../..",
        "../../..",
        ".",
        "./",
        "",
        "/",
        "/etc/passwd",
        "a",
        "pkg",
        "pkg/a",
        "./pkg/a",
        "l",
        "pkg/l",
        "sub/..",
        "sub/../..",
        "C:\\x",
        "\\x",
        "up/..",
        "*",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    targets.push(sandbox.join("evil-link").display().to_string());
    targets.push("../".repeat(40));
    targets
}

// --- The sandbox and one case -----------------------------------------------------------

/// `root/work/` holds the archive and the destination; nothing else may ever appear in
/// `root` or `work`.
struct Sandbox {
    root: tempfile::TempDir,
    work: PathBuf,
    archive: PathBuf,
    dest: PathBuf,
}

impl Sandbox {
    fn new(format: ArchiveFormat) -> Sandbox {
        let root = tempfile::tempdir().unwrap();
        let work = root.path().join("work");
        fs::create_dir(&work).unwrap();
        let name = match format {
            ArchiveFormat::TarGz => "fuzz input.tar.gz",
            ArchiveFormat::Zip => "fuzz input.zip",
            ArchiveFormat::SevenZ => "fuzz input.7z",
        };
        Sandbox {
            archive: work.join(name),
            dest: work.join("out"),
            work,
            root,
        }
    }
}

/// The folder, limits and Windows rules of one case.
#[derive(Debug, Clone)]
struct Setup {
    subdir: Option<&'static str>,
    limits: Limits,
    existing: bool,
}

impl Setup {
    fn random(rng: &mut Rng) -> Setup {
        let windows = rng.below(3) == 0;
        Setup {
            subdir: *rng.pick(&[None, None, Some(ANY_TOP_FOLDER), Some("pkg")]),
            limits: Limits {
                max_bytes: 1 << 20,
                max_entries: 48,
                max_ratio: 100,
                ratio_floor: 1 << 20,
                longest_path: windows.then_some(260),
                case_insensitive: windows,
                links_as_copies: windows || rng.below(4) == 0,
            },
            existing: rng.below(2) == 0,
        }
    }

    fn plain() -> Setup {
        Setup {
            subdir: None,
            limits: Limits {
                max_bytes: 1 << 20,
                max_entries: 48,
                max_ratio: 100,
                ratio_floor: 1 << 20,
                longest_path: None,
                case_insensitive: false,
                links_as_copies: false,
            },
            existing: false,
        }
    }
}

/// Counts the cases of one format and keeps its first failures.
struct Fuzz {
    format: ArchiveFormat,
    sandbox: Sandbox,
    cases: usize,
    unpacked: usize,
    failed: usize,
    failures: Vec<(String, String, Vec<u8>)>,
}

impl Fuzz {
    fn new(format: ArchiveFormat) -> Fuzz {
        Fuzz {
            format,
            sandbox: Sandbox::new(format),
            cases: 0,
            unpacked: 0,
            failed: 0,
            failures: Vec::new(),
        }
    }

    /// Unpacks `bytes` as `setup` says and checks what happened.
    fn case(&mut self, bytes: &[u8], setup: &Setup, label: impl FnOnce() -> String) {
        self.cases += 1;
        let problem = self.run(bytes, setup);
        if let Some(problem) = problem {
            self.failed += 1;
            if self.failures.len() < KEPT_FAILURES {
                let label = format!("{} with {setup:?} ({} bytes)", label(), bytes.len());
                self.failures.push((label, problem, bytes.to_vec()));
            }
        }
    }

    fn run(&mut self, bytes: &[u8], setup: &Setup) -> Option<String> {
        let s = &self.sandbox;
        fs::write(&s.archive, bytes).unwrap();
        if setup.existing {
            // An earlier output of this tool there: recorded, so that it may be replaced.
            fs::create_dir(&s.dest).unwrap();
            fs::write(s.dest.join(SENTINEL), b"before").unwrap();
            ct2v_support::owned_output::record(&s.dest, &s.dest).unwrap();
        }
        let result = harness::catch(|| {
            unpack::unpack(
                &s.archive,
                self.format,
                setup.subdir,
                &s.dest,
                &setup.limits,
                &Reporter::captured(),
            )
        });
        let problem = match result {
            Err(panicked) => Some(panicked),
            Ok(Ok(unpacked)) => {
                self.unpacked += 1;
                complete(&s.dest, unpacked)
            }
            Ok(Err(e)) => {
                let message = e.to_string();
                let name = s.archive.file_name().unwrap().to_string_lossy();
                if !message.contains(&*name) {
                    Some(format!("the error does not name the archive: `{message}`"))
                } else if message.chars().any(|c| c.is_control() && c != '\n') {
                    Some(format!(
                        "the error shows a raw control character: {message:?}"
                    ))
                } else {
                    as_before(&s.dest, setup.existing)
                }
            }
        };
        let outside = outside(s);
        if s.dest.exists() {
            make_writable(&s.dest);
            fs::remove_dir_all(&s.dest).unwrap();
        }
        problem.or(outside)
    }

    fn finish(self) {
        eprintln!(
            "{:?}: {} cases, {} unpacked, {} refused, {} failures",
            self.format,
            self.cases,
            self.unpacked,
            self.cases - self.unpacked - self.failed,
            self.failed
        );
        if self.failed == 0 {
            return;
        }
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("archive-fuzz-failures");
        fs::create_dir_all(&dir).unwrap();
        let mut report = String::new();
        for (n, (label, problem, input)) in self.failures.iter().enumerate() {
            let saved = dir.join(format!("{:?}-{n}", self.format));
            fs::write(&saved, input).unwrap();
            report.push_str(&format!(
                "\n--- {label}, saved as {}:\n{problem}\n",
                saved.display()
            ));
        }
        panic!(
            "{:?}: {} of {} cases failed; the first {}:{report}",
            self.format,
            self.failed,
            self.cases,
            self.failures.len()
        );
    }
}

/// Anything in the sandbox beside the archive and the destination: an entry written outside
/// the destination, or a staging folder left behind.
fn outside(s: &Sandbox) -> Option<String> {
    let names = |dir: &Path| -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let root = names(s.root.path());
    let work: Vec<String> = names(&s.work)
        .into_iter()
        .filter(|n| Path::new(n) != s.archive.file_name().unwrap() && n != "out")
        .collect();
    let mut problems = Vec::new();
    if root != ["work"] {
        problems.push(format!("beside the work folder: {root:?}"));
    }
    if !work.is_empty() {
        problems.push(format!("beside the destination: {work:?}"));
    }
    for name in root.iter().filter(|n| *n != "work") {
        let _ = fs::remove_file(s.root.path().join(name))
            .or_else(|_| fs::remove_dir_all(s.root.path().join(name)));
    }
    for name in &work {
        let path = s.work.join(name);
        make_writable(&path);
        let _ = fs::remove_file(&path).or_else(|_| fs::remove_dir_all(&path));
    }
    (!problems.is_empty()).then(|| format!("written outside the destination: {problems:?}"))
}

/// A refused archive leaves the destination as it was: absent, or holding the sentinel only.
fn as_before(dest: &Path, existing: bool) -> Option<String> {
    if !existing {
        return dest
            .exists()
            .then(|| "refused, yet the destination exists".to_string());
    }
    let names: Vec<String> = match fs::read_dir(dest) {
        Ok(entries) => entries
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != ct2v_support::owned_output::RECORD)
            .collect(),
        Err(e) => return Some(format!("refused, and the old destination is gone: {e}")),
    };
    let intact = names == [SENTINEL]
        && fs::read(dest.join(SENTINEL)).is_ok_and(|b| b == b"before".as_slice());
    (!intact).then(|| format!("refused, and the old destination changed: {names:?}"))
}

/// An unpacked destination holds what `unpacked` says (regular files, hard links counted
/// each, bytes counted once per file) and every symbolic link in it stays inside it.
fn complete(dest: &Path, unpacked: Unpacked) -> Option<String> {
    if !fs::symlink_metadata(dest).is_ok_and(|m| m.is_dir()) {
        return Some("unpacked, yet the destination is no folder".into());
    }
    if dest.join(SENTINEL).exists() {
        return Some("unpacked, yet the old destination's file is still there".into());
    }
    let (mut files, mut bytes) = (0u64, 0u64);
    let mut inodes = HashSet::new();
    let mut pending = vec![dest.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                pending.push(path);
            } else if meta.is_file() {
                files += 1;
                if inodes.insert(meta.ino()) {
                    bytes += meta.len();
                }
            } else if meta.file_type().is_symlink() {
                if let Some(problem) = link_outside(dest, &path) {
                    return Some(problem);
                }
            } else {
                return Some(format!(
                    "{} is neither file, folder nor link",
                    path.display()
                ));
            }
        }
    }
    (files != unpacked.files || bytes != unpacked.bytes).then(|| {
        format!("unpacked {unpacked:?}, but the destination holds {files} files of {bytes} bytes")
    })
}

/// Where symbolic link `link` leads, followed on disk one part at a time: a problem if it
/// leaves `dest`.
fn link_outside(dest: &Path, link: &Path) -> Option<String> {
    let mut at: Vec<PathBuf> = link
        .parent()
        .unwrap()
        .strip_prefix(dest)
        .unwrap()
        .components()
        .map(|c| PathBuf::from(c.as_os_str()))
        .collect();
    let mut pending: Vec<PathBuf> = vec![PathBuf::from(link.file_name().unwrap())];
    let mut hops = 0;
    while let Some(part) = pending.pop() {
        let here = dest.join(at.iter().collect::<PathBuf>()).join(&part);
        match fs::read_link(&here) {
            Ok(target) => {
                hops += 1;
                if hops > 64 {
                    return None; // A loop: the system refuses to follow it too.
                }
                if target.is_absolute() {
                    return Some(format!(
                        "{} links to the absolute {}",
                        link.display(),
                        target.display()
                    ));
                }
                for c in target.components().rev() {
                    pending.push(PathBuf::from(c.as_os_str()));
                }
            }
            Err(_) => match Path::new(&part).components().next() {
                Some(Component::ParentDir) => {
                    if at.pop().is_none() {
                        return Some(format!("{} leads outside the tree", link.display()));
                    }
                }
                Some(Component::CurDir) | None => {}
                _ => at.push(part),
            },
        }
    }
    None
}

fn make_writable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let Ok(meta) = fs::symlink_metadata(path) else {
        return;
    };
    if meta.is_dir() {
        let _ = fs::set_permissions(path, fs::Permissions::from_mode(0o755));
        for entry in fs::read_dir(path).into_iter().flatten().flatten() {
            make_writable(&entry.path());
        }
    }
}

// --- Shared mutations --------------------------------------------------------------------

/// Values for size, count and offset fields.
fn edge_value(rng: &mut Rng, len: usize) -> u64 {
    let len = len as u64;
    *rng.pick(&[
        0,
        1,
        2,
        0x7f,
        0x80,
        0xff,
        0xffff,
        0x7fff_ffff,
        0x8000_0000,
        0xffff_ffff,
        0x1_0000_0000,
        u64::MAX,
        u64::MAX - 1,
        i64::MAX as u64,
        len,
        len + 1,
        len.saturating_sub(1),
        1 << 20,
        (1 << 20) + 1,
        1 << 40,
    ])
}

/// 1 to 4 raw changes: bits flipped, bytes set, a stretch copied over another.
fn havoc(rng: &mut Rng, bytes: &mut [u8], steps: &mut Vec<String>) {
    let len = bytes.len();
    if len == 0 {
        return;
    }
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(len);
        match rng.below(3) {
            0 => {
                bytes[at] ^= 1 << rng.below(8);
                steps.push(format!("flip@{at}"));
            }
            1 => {
                let value = edge_value(rng, len).to_le_bytes();
                let width = (*rng.pick(&[1, 2, 4, 8])).min(len - at);
                bytes[at..at + width].copy_from_slice(&value[..width]);
                steps.push(format!("{width}B@{at}"));
            }
            _ => {
                let from = rng.below(len);
                let n = (1 + rng.below(32)).min(len - at).min(len - from);
                bytes.copy_within(from..from + n, at);
                steps.push(format!("copy {n}B {from}->{at}"));
            }
        }
    }
}

/// Sometimes cut short.
fn maybe_cut(rng: &mut Rng, bytes: &mut Vec<u8>, steps: &mut Vec<String>) {
    if rng.below(6) == 0 {
        let cut = rng.below(bytes.len().max(1));
        bytes.truncate(cut);
        steps.push(format!("cut at {cut}"));
    }
}

// --- tar.gz ------------------------------------------------------------------------------

/// One tar member: a 512-byte header and its data (padded when written).
#[derive(Clone)]
struct Member {
    header: [u8; 512],
    data: Vec<u8>,
}

fn member(kind: EntryType, name: &str, link: &str, mode: u32, data: &[u8]) -> Vec<Member> {
    let mut out = Vec::new();
    // A name or target past the header's 100 bytes goes first, as GNU tar writes it.
    for (value, long_kind) in [
        (name, EntryType::GNULongName),
        (link, EntryType::GNULongLink),
    ] {
        if value.len() > 100 {
            let mut bytes = value.as_bytes().to_vec();
            bytes.push(0);
            out.extend(member(long_kind, "././@LongLink", "", 0o644, &bytes));
        }
    }
    let mut header = Header::new_gnu();
    let old = header.as_old_mut();
    let n = name.len().min(100);
    old.name[..n].copy_from_slice(&name.as_bytes()[..n]);
    let n = link.len().min(100);
    old.linkname[..n].copy_from_slice(&link.as_bytes()[..n]);
    header.set_entry_type(kind);
    header.set_mode(mode);
    header.set_size(data.len() as u64);
    header.set_mtime(0);
    header.set_cksum();
    out.push(Member {
        header: *header.as_bytes(),
        data: data.to_vec(),
    });
    out
}

fn tar_seed() -> Vec<Member> {
    let long_name = format!("./pkg/{}", "n".repeat(120));
    [
        member(
            EntryType::XGlobalHeader,
            "pax_global_header",
            "",
            0o644,
            b"52 comment=0123456789abcdef0123456789abcdef01234567\n",
        ),
        member(EntryType::Directory, "./", "", 0o755, b""),
        member(EntryType::Directory, "./pkg/", "", 0o755, b""),
        member(EntryType::Regular, "./pkg/a", "", 0o644, b"hello"),
        member(EntryType::Regular, "./pkg/exe", "", 0o755, &[7u8; 700]),
        member(EntryType::Directory, "./pkg/sub/", "", 0o555, b""),
        member(EntryType::Regular, "./pkg/sub/b", "", 0o600, b"b"),
        member(EntryType::Symlink, "./pkg/l", "a", 0o777, b""),
        member(EntryType::Link, "./pkg/h", "./pkg/a", 0o644, b""),
        member(EntryType::Symlink, "./pkg/sub/up", "..", 0o777, b""),
        member(EntryType::Regular, &long_name, "", 0o644, b"long"),
    ]
    .concat()
}

fn fix_checksum(header: &mut [u8; 512]) {
    header[148..156].fill(b' ');
    let sum: u32 = header.iter().map(|&b| u32::from(b)).sum();
    let text = format!("{sum:06o}\0 ");
    header[148..156].copy_from_slice(text.as_bytes());
}

fn tar_bytes(members: &[Member]) -> Vec<u8> {
    let mut out = Vec::new();
    for m in members {
        out.extend_from_slice(&m.header);
        out.extend_from_slice(&m.data);
        out.resize(out.len().div_ceil(512) * 512, 0);
    }
    out.resize(out.len() + 1024, 0);
    out
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// A numeric header field (offset, width) set to `value`: octal, base-256 (as GNU tar writes
/// large sizes), a negative base-256 number, or garbage.
fn set_number(rng: &mut Rng, header: &mut [u8; 512], at: usize, width: usize, value: u64) {
    let field = &mut header[at..at + width];
    match rng.below(4) {
        0 | 1 => {
            let text = format!("{value:o}");
            let text = &text.as_bytes()[text.len().saturating_sub(width - 1)..];
            field.fill(b'0');
            field[width - 1 - text.len()..width - 1].copy_from_slice(text);
            field[width - 1] = 0;
        }
        2 => {
            field.fill(0);
            field[0] = 0x80;
            let be = value.to_be_bytes();
            let n = be.len().min(width - 1);
            field[width - n..].copy_from_slice(&be[be.len() - n..]);
        }
        _ => {
            field.fill(0xff);
            field[rng.below(width)] = b'9';
        }
    }
}

fn tar_mutant(
    rng: &mut Rng,
    seed: &[Member],
    names: &[String],
    targets: &[String],
) -> (Vec<u8>, String) {
    let mut members = seed.to_vec();
    let mut steps = Vec::new();
    for _ in 0..1 + rng.below(3) {
        let i = rng.below(members.len());
        match rng.below(9) {
            0 => {
                let at = *rng.pick(&[124usize, 100, 108, 116, 136, 329, 337]);
                let width = if at == 124 || at == 136 { 12 } else { 8 };
                let value = edge_value(rng, 512);
                set_number(rng, &mut members[i].header, at, width, value);
                steps.push(format!("member {i}: field@{at} = {value:#x}"));
            }
            1 => {
                let kind = *rng.pick(b"0123456789gxLKSVMDA\0\xff");
                members[i].header[156] = kind;
                steps.push(format!("member {i}: type {:?}", kind as char));
            }
            2 => {
                let name = rng.pick(names).clone();
                let kind = EntryType::new(members[i].header[156]);
                let link = String::from_utf8_lossy(&members[i].header[157..257])
                    .trim_end_matches('\0')
                    .to_string();
                let data = members[i].data.clone();
                members.splice(i..=i, member(kind, &name, &link, 0o644, &data));
                steps.push(format!("member {i}: named {name:?}"));
            }
            3 => {
                let target = rng.pick(targets).clone();
                let kind = *rng.pick(&[EntryType::Symlink, EntryType::Link]);
                let name = rng
                    .pick(&["./pkg/l2", "pkg/sub/l3", "./pkg/a", "x"])
                    .to_string();
                members.splice(i..i, member(kind, &name, &target, 0o777, b""));
                steps.push(format!("link {name} -> {target:?} at {i}"));
            }
            4 => {
                let copy = members[rng.below(members.len())].clone();
                members.insert(i, copy);
                steps.push(format!("duplicate before {i}"));
            }
            5 => {
                members.remove(i);
                steps.push(format!("member {i} dropped"));
                if members.is_empty() {
                    members = seed.to_vec();
                }
            }
            6 => {
                // Data longer or shorter than the header says.
                let n = rng.below(2048);
                members[i].data.resize(n, 0x41);
                steps.push(format!("member {i}: {n} data bytes"));
            }
            7 => {
                // Many small entries: the entry and byte limits.
                let n = 20 + rng.below(60);
                let many: Vec<Member> = (0..n)
                    .flat_map(|k| member(EntryType::Regular, &format!("pkg/m{k}"), "", 0o644, b""))
                    .collect();
                members.splice(i..i, many);
                steps.push(format!("{n} empty files at {i}"));
            }
            _ => {
                let mut header = members[i].header;
                header[rng.below(512)] ^= 1 << rng.below(8);
                members[i].header = header;
                steps.push(format!("member {i}: header bit flipped"));
            }
        }
        if rng.below(4) != 0 {
            let last = members.len() - 1;
            fix_checksum(&mut members[i.min(last)].header);
        }
    }
    let mut tar = tar_bytes(&members);
    if rng.below(4) == 0 {
        havoc(rng, &mut tar, &mut steps);
    }
    maybe_cut(rng, &mut tar, &mut steps);
    let mut gz = gzip(&tar);
    if rng.below(8) == 0 {
        havoc(rng, &mut gz, &mut steps);
        steps.push("(in the gzip stream)".into());
    }
    (gz, steps.join(", "))
}

// --- zip ---------------------------------------------------------------------------------

/// Where the zip's records are, for field edits.
struct ZipMap {
    local: Vec<usize>,
    central: Vec<usize>,
    end: usize,
}

fn zip_map(bytes: &[u8]) -> ZipMap {
    let find = |sig: &[u8; 4]| -> Vec<usize> {
        bytes
            .windows(4)
            .enumerate()
            .filter(|(_, w)| w == sig)
            .map(|(i, _)| i)
            .collect()
    };
    ZipMap {
        local: find(b"PK\x03\x04"),
        central: find(b"PK\x01\x02"),
        end: *find(b"PK\x05\x06").last().unwrap(),
    }
}

fn zip_of(entries: &[(&str, u32, &[u8])]) -> Option<Vec<u8>> {
    let mut writer = ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for &(name, mode, data) in entries {
        let options = SimpleFileOptions::default()
            .unix_permissions(mode & 0o7777)
            .compression_method(if data.len() > 100 {
                zip::CompressionMethod::Deflated
            } else {
                zip::CompressionMethod::Stored
            });
        if name.ends_with('/') {
            writer.add_directory(name, options).ok()?;
        } else if mode & 0o170_000 == 0o120_000 {
            let target = String::from_utf8_lossy(data).into_owned();
            writer.add_symlink(name, target, options).ok()?;
        } else {
            writer.start_file(name, options).ok()?;
            writer.write_all(data).ok()?;
        }
    }
    Some(writer.finish().ok()?.into_inner())
}

/// Same-length names, so that one can be renamed to another in place (a duplicate).
fn zip_seed() -> Vec<u8> {
    zip_of(&[
        ("pkg/", 0o755, b""),
        ("pkg/a", 0o644, b"hello"),
        ("pkg/b", 0o755, &[9u8; 3000]),
        ("pkg/c", 0o644, b""),
        ("pkg/d/", 0o555, b""),
        ("pkg/l", 0o120_777, b"a"),
        (
            "pkg/e",
            0o644,
            &(0..2000u32).map(|i| (i * 7) as u8).collect::<Vec<_>>(),
        ),
    ])
    .unwrap()
}

fn put(bytes: &mut [u8], at: usize, value: u64, width: usize) {
    if at >= bytes.len() {
        return;
    }
    let end = (at + width).min(bytes.len());
    bytes[at..end].copy_from_slice(&value.to_le_bytes()[..end - at]);
}

fn zip_mutant(
    rng: &mut Rng,
    seed: &[u8],
    names: &[String],
    targets: &[String],
) -> (Vec<u8>, String) {
    let mut steps = Vec::new();
    let mut bytes = match rng.below(6) {
        0 => {
            // Rebuilt with hostile names and link targets.
            let name = rng.pick(names).clone();
            let target = rng.pick(targets).clone();
            let entries: Vec<(&str, u32, &[u8])> = vec![
                ("pkg/a", 0o644, b"a"),
                (
                    &name,
                    *rng.pick(&[0o644, 0o755, 0o040_755, 0o120_777]),
                    b"x",
                ),
                ("pkg/link", 0o120_777, target.as_bytes()),
            ];
            steps.push(format!("names {name:?}, link target {target:?}"));
            zip_of(&entries).unwrap_or_else(|| seed.to_vec())
        }
        _ => seed.to_vec(),
    };
    let map = zip_map(&bytes);
    for _ in 0..1 + rng.below(3) {
        match rng.below(6) {
            0 | 1 => {
                let Some(&at) = map.central.get(rng.below(map.central.len())) else {
                    continue;
                };
                // Method, crc, sizes, name/extra/comment lengths, attributes, offset.
                let (field, width) = *rng.pick(&[
                    (10, 2),
                    (16, 4),
                    (20, 4),
                    (24, 4),
                    (28, 2),
                    (30, 2),
                    (32, 2),
                    (38, 4),
                    (42, 4),
                    (8, 2),
                ]);
                let value = if field == 38 {
                    u64::from(*rng.pick(&[
                        0o120_777u32,
                        0o020_644,
                        0o060_644,
                        0o010_644,
                        0o140_644,
                        0o040_755,
                        0o100_644,
                        0o170_777,
                    ])) << 16
                } else {
                    edge_value(rng, bytes.len())
                };
                put(&mut bytes, at + field, value, width);
                steps.push(format!("central@{at}+{field} = {value:#x}"));
            }
            2 => {
                let Some(&at) = map.local.get(rng.below(map.local.len())) else {
                    continue;
                };
                let (field, width) =
                    *rng.pick(&[(8, 2), (14, 4), (18, 4), (22, 4), (26, 2), (28, 2), (6, 2)]);
                let value = edge_value(rng, bytes.len());
                put(&mut bytes, at + field, value, width);
                steps.push(format!("local@{at}+{field} = {value:#x}"));
            }
            3 => {
                let (field, width) =
                    *rng.pick(&[(8, 2), (10, 2), (12, 4), (16, 4), (20, 2), (4, 2)]);
                let value = edge_value(rng, bytes.len());
                put(&mut bytes, map.end + field, value, width);
                steps.push(format!("end record +{field} = {value:#x}"));
            }
            4 => {
                // One entry renamed to another's name (a duplicate), in both records.
                let (i, j) = (rng.below(map.central.len()), rng.below(map.central.len()));
                let name_of = |bytes: &[u8], at: usize, name_at: usize| {
                    let n =
                        u16::from_le_bytes([bytes[at + name_at], bytes[at + name_at + 1]]) as usize;
                    (at + if name_at == 28 { 46 } else { 30 }, n)
                };
                let (from, n) = name_of(&bytes, map.central[i], 28);
                let (to, m) = name_of(&bytes, map.central[j], 28);
                if n == m && from + n <= bytes.len() && to + n <= bytes.len() {
                    let name = bytes[from..from + n].to_vec();
                    bytes[to..to + n].copy_from_slice(&name);
                    if let Some(&local) = map.local.get(j) {
                        let (to, m) = name_of(&bytes, local, 26);
                        if m == n && to + n <= bytes.len() {
                            bytes[to..to + n].copy_from_slice(&name);
                        }
                    }
                    steps.push(format!("entry {j} renamed as entry {i}"));
                }
            }
            _ => havoc(rng, &mut bytes, &mut steps),
        }
    }
    maybe_cut(rng, &mut bytes, &mut steps);
    (bytes, steps.join(", "))
}

// --- 7z ----------------------------------------------------------------------------------

/// A piece of a hand-written 7z header: kept apart so that numbers can be replaced by
/// larger ones (7z numbers have a variable length) and the header written again.
#[derive(Clone, Debug)]
enum Token {
    Byte(u8),
    Number(u64),
    Bytes(Vec<u8>),
}

fn number(out: &mut Vec<u8>, value: u64) {
    for extra in 0..8u32 {
        if value < 1u64 << (7 * (extra + 1)) {
            let mask = !(0xffu16 >> extra) as u8;
            out.push(mask | (value >> (8 * extra)) as u8);
            out.extend_from_slice(&value.to_le_bytes()[..extra as usize]);
            return;
        }
    }
    out.push(0xff);
    out.extend_from_slice(&value.to_le_bytes());
}

fn utf16(name: &str) -> Vec<u8> {
    name.encode_utf16()
        .chain([0])
        .flat_map(|u| u.to_le_bytes())
        .collect()
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = flate2::Crc::new();
    crc.update(bytes);
    crc.sum()
}

/// A 7z entry: a folder (no data), or a file with data and Windows attributes.
struct Seven {
    name: String,
    data: Option<Vec<u8>>,
    attributes: u32,
}

/// The packed data (stored, the "copy" method) and the header as tokens: what 7-Zip writes
/// with `-m0=copy -mhc=off`.
fn seven_tokens(entries: &[Seven]) -> (Vec<u8>, Vec<Token>) {
    use Token::*;
    let packed: Vec<u8> = entries
        .iter()
        .filter_map(|e| e.data.clone())
        .flatten()
        .collect();
    let streams: Vec<&Vec<u8>> = entries
        .iter()
        .filter_map(|e| e.data.as_ref())
        .filter(|d| !d.is_empty())
        .collect();
    let mut t = vec![Byte(0x01), Byte(0x04)];
    // Pack info: one stream at 0.
    t.extend([
        Byte(0x06),
        Number(0),
        Number(1),
        Byte(0x09),
        Number(packed.len() as u64),
        Byte(0x00),
    ]);
    // Unpack info: one folder, one coder: copy.
    t.extend([
        Byte(0x07),
        Byte(0x0b),
        Number(1),
        Byte(0x00),
        Number(1),
        Byte(0x01),
        Byte(0x00),
    ]);
    t.extend([Byte(0x0c), Number(packed.len() as u64), Byte(0x00)]);
    // Substreams: one per non-empty file, with CRCs.
    t.extend([
        Byte(0x08),
        Byte(0x0d),
        Number(streams.len() as u64),
        Byte(0x09),
    ]);
    for s in streams.iter().take(streams.len().saturating_sub(1)) {
        t.push(Number(s.len() as u64));
    }
    t.extend([Byte(0x0a), Byte(0x01)]);
    for s in &streams {
        t.push(Bytes(crc32(s).to_le_bytes().to_vec()));
    }
    t.extend([Byte(0x00), Byte(0x00)]);
    // Files: which have no stream, which of those are files, names, attributes.
    t.extend([Byte(0x05), Number(entries.len() as u64)]);
    let bits = |set: &dyn Fn(&Seven) -> bool, of: &[&Seven]| -> Vec<u8> {
        let mut v = vec![0u8; of.len().div_ceil(8)];
        for (i, e) in of.iter().enumerate() {
            if set(e) {
                v[i / 8] |= 0x80 >> (i % 8);
            }
        }
        v
    };
    let all: Vec<&Seven> = entries.iter().collect();
    let empty = |e: &Seven| e.data.as_ref().is_none_or(|d| d.is_empty());
    let empty_stream = bits(&empty, &all);
    t.extend([
        Byte(0x0e),
        Number(empty_stream.len() as u64),
        Bytes(empty_stream),
    ]);
    let empties: Vec<&Seven> = entries.iter().filter(|e| empty(e)).collect();
    let empty_file = bits(&|e: &Seven| e.data.is_some(), &empties);
    t.extend([
        Byte(0x0f),
        Number(empty_file.len() as u64),
        Bytes(empty_file),
    ]);
    let names: Vec<u8> = entries.iter().flat_map(|e| utf16(&e.name)).collect();
    t.extend([
        Byte(0x11),
        Number(names.len() as u64 + 1),
        Byte(0x00),
        Bytes(names),
    ]);
    let attributes: Vec<u8> = entries
        .iter()
        .flat_map(|e| e.attributes.to_le_bytes())
        .collect();
    t.extend([
        Byte(0x15),
        Number(attributes.len() as u64 + 2),
        Byte(0x01),
        Byte(0x00),
        Bytes(attributes),
    ]);
    t.extend([Byte(0x00), Byte(0x00)]);
    (packed, t)
}

/// The archive: signature header (its CRCs right unless `keep_crcs` says the mutated header
/// keeps the old ones), packed data, header.
fn seven_bytes(packed: &[u8], tokens: &[Token], right_crcs: bool) -> Vec<u8> {
    let mut header = Vec::new();
    for token in tokens {
        match token {
            Token::Byte(b) => header.push(*b),
            Token::Number(n) => number(&mut header, *n),
            Token::Bytes(bytes) => header.extend_from_slice(bytes),
        }
    }
    let mut start = Vec::new();
    start.extend_from_slice(&(packed.len() as u64).to_le_bytes());
    start.extend_from_slice(&(header.len() as u64).to_le_bytes());
    let header_crc = if right_crcs {
        crc32(&header)
    } else {
        0x1234_5678
    };
    start.extend_from_slice(&header_crc.to_le_bytes());
    let mut out = b"7z\xbc\xaf\x27\x1c\x00\x04".to_vec();
    out.extend_from_slice(&crc32(&start).to_le_bytes());
    out.extend_from_slice(&start);
    out.extend_from_slice(packed);
    out.extend_from_slice(&header);
    out
}

/// Fixes both CRCs of a 7z signature header after the bytes it covers changed.
fn fix_seven_crcs(bytes: &mut [u8]) {
    if bytes.len() < 32 {
        return;
    }
    let offset = u64::from_le_bytes(bytes[12..20].try_into().unwrap());
    let size = u64::from_le_bytes(bytes[20..28].try_into().unwrap());
    let start = 32u64.saturating_add(offset);
    if let Some(end) = start.checked_add(size)
        && end <= bytes.len() as u64
    {
        let crc = crc32(&bytes[start as usize..end as usize]);
        bytes[28..32].copy_from_slice(&crc.to_le_bytes());
    }
    let crc = crc32(&bytes[12..32]);
    bytes[8..12].copy_from_slice(&crc.to_le_bytes());
}

const DIRECTORY: u32 = 0x10;
const UNIX: u32 = 0x8000;

fn seven_seed() -> Vec<Seven> {
    let file = |name: &str, data: &[u8]| Seven {
        name: name.into(),
        data: Some(data.to_vec()),
        attributes: 0x20,
    };
    vec![
        Seven {
            name: "pkg".into(),
            data: None,
            attributes: DIRECTORY,
        },
        file("pkg/a", b"hello"),
        file("pkg/empty", b""),
        Seven {
            name: "pkg/exe".into(),
            data: Some(vec![7; 300]),
            attributes: UNIX | (0o100_755 << 16),
        },
        Seven {
            name: "pkg/sub".into(),
            data: None,
            attributes: DIRECTORY,
        },
        file("pkg/sub/b", b"b"),
    ]
}

/// An archive as the writer makes it (BCJ then LZMA2, the header compressed): what the real
/// assets are, for damage to the compressed streams.
fn seven_compressed() -> Vec<u8> {
    use sevenz_rust2::{ArchiveEntry, ArchiveWriter, EncoderMethod};
    let mut writer = ArchiveWriter::new(std::io::Cursor::new(Vec::new())).unwrap();
    writer.set_content_methods(vec![
        EncoderMethod::BCJ_X86_FILTER.into(),
        EncoderMethod::LZMA2.into(),
    ]);
    writer
        .push_archive_entry::<&[u8]>(ArchiveEntry::new_directory("pkg"), None)
        .unwrap();
    for (name, data) in [("pkg/a", &b"hello"[..]), ("pkg/b", &[3u8; 2000][..])] {
        writer
            .push_archive_entry(ArchiveEntry::new_file(name), Some(data))
            .unwrap();
    }
    writer.finish().unwrap().into_inner()
}

fn seven_mutant(
    rng: &mut Rng,
    compressed: &[u8],
    names: &[String],
    targets: &[String],
) -> (Vec<u8>, String) {
    let mut steps = Vec::new();
    if rng.below(5) == 0 {
        let mut bytes = compressed.to_vec();
        havoc(rng, &mut bytes, &mut steps);
        if rng.below(2) == 0 {
            fix_seven_crcs(&mut bytes);
            steps.push("CRCs fixed".into());
        }
        maybe_cut(rng, &mut bytes, &mut steps);
        return (bytes, format!("compressed: {}", steps.join(", ")));
    }
    let mut entries = seven_seed();
    for _ in 0..rng.below(3) {
        let i = rng.below(entries.len());
        match rng.below(4) {
            0 => {
                entries[i].name = rng.pick(names).clone();
                steps.push(format!("entry {i} named {:?}", entries[i].name));
            }
            1 => {
                let j = rng.below(entries.len());
                entries[i].name = entries[j].name.clone();
                steps.push(format!("entry {i} named as entry {j}"));
            }
            2 => {
                let mode: u32 = *rng.pick(&[0o120_777, 0o020_644, 0o010_644, 0o040_755, 0o170_000]);
                let attributes =
                    *rng.pick(&[UNIX | (mode << 16), 0x400, 0x400 | DIRECTORY, DIRECTORY]);
                entries[i].attributes = attributes;
                if mode == 0o120_777 {
                    entries[i].data = Some(rng.pick(targets).as_bytes().to_vec());
                }
                steps.push(format!("entry {i} attributes {attributes:#x}"));
            }
            _ => {
                let n = 20 + rng.below(60);
                for k in 0..n {
                    entries.push(Seven {
                        name: format!("pkg/m{k}"),
                        data: Some(Vec::new()),
                        attributes: 0x20,
                    });
                }
                steps.push(format!("{n} empty files"));
            }
        }
    }
    let (mut packed, mut tokens) = seven_tokens(&entries);
    let token_changes = if steps.is_empty() {
        1 + rng.below(3)
    } else {
        rng.below(3)
    };
    for _ in 0..token_changes {
        let i = rng.below(tokens.len());
        match rng.below(5) {
            0 | 1 => {
                let value = edge_value(rng, packed.len());
                tokens[i] = Token::Number(value);
                steps.push(format!("token {i} = number {value:#x}"));
            }
            2 => {
                let byte = rng.next() as u8;
                tokens[i] = Token::Byte(byte);
                steps.push(format!("token {i} = byte {byte:#x}"));
            }
            3 => {
                let token = tokens[rng.below(tokens.len())].clone();
                if rng.below(2) == 0 {
                    tokens.insert(i, token);
                    steps.push(format!("token copied to {i}"));
                } else {
                    tokens.remove(i);
                    steps.push(format!("token {i} dropped"));
                }
            }
            _ => {
                havoc(rng, &mut packed, &mut steps);
                steps.push("(in the data)".into());
            }
        }
    }
    let right = rng.below(8) != 0;
    let mut bytes = seven_bytes(&packed, &tokens, right);
    if rng.below(6) == 0 {
        havoc(rng, &mut bytes, &mut steps);
        fix_seven_crcs(&mut bytes);
    }
    maybe_cut(rng, &mut bytes, &mut steps);
    (bytes, steps.join(", "))
}

// --- Tests ------------------------------------------------------------------------------

/// A damaged archive and what was done to it, from the hostile names and link targets.
type Mutant<'m> = &'m dyn Fn(&mut Rng, &[String], &[String]) -> (Vec<u8>, String);

/// The seed unpacks completely; then every cut of it, and the random cases.
fn run_format(format: ArchiveFormat, seed: &[u8], mutant: Mutant) {
    let mut fuzz = Fuzz::new(format);
    let names = hostile_names(fuzz.sandbox.root.path());
    let targets = hostile_targets(fuzz.sandbox.root.path());
    let s = &fuzz.sandbox;
    let done = unpack::unpack(
        &s.archive_with(seed),
        format,
        None,
        &s.dest,
        &Setup::plain().limits,
        &Reporter::captured(),
    )
    .unwrap_or_else(|e| panic!("the undamaged {format:?} seed: {e}"));
    assert!(done.files >= 3, "{done:?}");
    fs::remove_dir_all(&s.dest).unwrap();
    for cut in (0..seed.len()).step_by((seed.len() / 150).max(1)) {
        fuzz.case(&seed[..cut], &Setup::plain(), || format!("cut at {cut}"));
    }
    let mut rng = Rng::seeded(&format!("{format:?}"));
    for round in 0..harness::cases(CASES) {
        let (bytes, steps) = mutant(&mut rng, &names, &targets);
        let setup = Setup::random(&mut rng);
        fuzz.case(&bytes, &setup, || format!("round {round}: {steps}"));
    }
    fuzz.finish();
}

impl Sandbox {
    fn archive_with(&self, bytes: &[u8]) -> PathBuf {
        fs::write(&self.archive, bytes).unwrap();
        self.archive.clone()
    }
}

#[test]
fn tar_gz_archives_survive_damage_and_hostile_entries() {
    let seed = tar_seed();
    let bytes = gzip(&tar_bytes(&seed));
    run_format(ArchiveFormat::TarGz, &bytes, &|rng, names, targets| {
        tar_mutant(rng, &seed, names, targets)
    });
}

#[test]
fn zip_archives_survive_damage_and_hostile_entries() {
    let seed = zip_seed();
    run_format(ArchiveFormat::Zip, &seed, &|rng, names, targets| {
        zip_mutant(rng, &seed, names, targets)
    });
}

#[test]
fn seven_z_archives_survive_damage_and_hostile_entries() {
    let (packed, tokens) = seven_tokens(&seven_seed());
    let plain = seven_bytes(&packed, &tokens, true);
    let compressed = seven_compressed();
    let sandbox = Sandbox::new(ArchiveFormat::SevenZ);
    unpack::unpack(
        &sandbox.archive_with(&compressed),
        ArchiveFormat::SevenZ,
        None,
        &sandbox.dest,
        &Setup::plain().limits,
        &Reporter::captured(),
    )
    .unwrap_or_else(|e| panic!("the undamaged compressed 7z: {e}"));
    run_format(ArchiveFormat::SevenZ, &plain, &|rng, names, targets| {
        seven_mutant(rng, &compressed, names, targets)
    });
}
