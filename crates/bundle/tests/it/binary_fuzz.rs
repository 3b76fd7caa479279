//! Robustness of the PE and ELF readers (`binary::parse`): real binaries (DLLs and a program
//! built with mingw-w64, shared libraries and a program built with gcc, the host's /bin/ls,
//! from `common/binaries.rs`) damaged in tens of
//! thousands of deterministic ways: every truncation of the first 4 KiB, every bit of the
//! headers and of the import and dynamic tables flipped, header fields and table entries
//! overwritten with edge values (0, -1, 0x80000000, the file's length…), table pointers
//! redirected anywhere in the file, and random havoc concentrated on the tables
//! (`CT2V_FUZZ_CASES` rounds per fixture when set, for a longer hunt).
//!
//! Whatever the input, `parse` must return (never panic), an error must name the file, and
//! what it returns must be well-formed (non-empty names without NUL, at most 4096 bytes).
//! A failure prints the mutation, the panic's message and backtrace, and saves the input
//! under `target/tmp/binary-fuzz-failures/`.
//!
//! Fixtures whose compiler is missing are skipped with a message (apt-get install
//! gcc-mingw-w64-x86-64 gcc). Runs in a few seconds in a debug build.

use crate::common::fuzz::{self as harness, Rng};
use crate::common::{self, binaries};

use common::installed;
use std::fs;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ct2v_bundle::binary::{self, BinaryError, BinaryInfo};
use object::endian::Endianness;
use object::read::elf::{FileHeader, ProgramHeader as _};
use object::read::pe::ImageNtHeaders;
use object::{elf, pe};

/// The path errors must name: spaces and non-ASCII on purpose.
const FUZZ_PATH: &str = "fuzz dir/ünïcode/input.bin";
/// The longest name `parse` accepts.
const MAX_NAME: usize = 4096;
/// Failing inputs kept (and printed) per fixture; the rest are only counted.
const KEPT_FAILURES: usize = 8;
/// Rounds of random havoc per fixture, unless `CT2V_FUZZ_CASES` says.
const HAVOC_ROUNDS: usize = 8000;

// --- Running one case ------------------------------------------------------------------

struct Failure {
    label: String,
    problem: String,
    input: Vec<u8>,
}

/// Counts the cases run and keeps the first failures of one fixture.
struct Fuzz<'a> {
    fixture: &'a str,
    cases: usize,
    ok: usize,
    failures: Vec<Failure>,
    failed: usize,
    /// The longest a single parse took, and the input's length.
    slowest: (Duration, String),
}

type Parse<'p> = &'p dyn Fn(&[u8], &Path) -> Result<BinaryInfo, BinaryError>;

impl<'a> Fuzz<'a> {
    fn new(fixture: &'a str) -> Fuzz<'a> {
        Fuzz {
            fixture,
            cases: 0,
            ok: 0,
            failures: Vec::new(),
            failed: 0,
            slowest: (Duration::ZERO, String::new()),
        }
    }

    /// Parses `data`, which must not panic; errors must name the file; results must be sane.
    fn case(&mut self, data: &[u8], label: impl FnOnce() -> String) {
        self.case_with(&binary::parse, data, label);
    }

    fn case_with(&mut self, parse: Parse, data: &[u8], label: impl FnOnce() -> String) {
        self.cases += 1;
        let path = Path::new(FUZZ_PATH);
        let start = Instant::now();
        let result = harness::catch(|| parse(data, path));
        let took = start.elapsed();
        let problem = match result {
            Ok(Ok(info)) => {
                self.ok += 1;
                ill_formed(&info)
            }
            Ok(Err(e)) => {
                let message = e.to_string();
                (!message.contains(FUZZ_PATH))
                    .then(|| format!("the error does not name the file: `{message}`"))
            }
            Err(panicked) => Some(panicked),
        };
        let keep = problem.is_some() && self.failures.len() < KEPT_FAILURES;
        if !keep && took <= self.slowest.0 {
            self.failed += usize::from(problem.is_some());
            return;
        }
        let label = format!("{} ({} bytes)", label(), data.len());
        if took > self.slowest.0 {
            self.slowest = (took, label.clone());
        }
        if let Some(problem) = problem {
            self.failed += 1;
            if keep {
                self.failures.push(Failure {
                    label,
                    problem,
                    input: data.to_vec(),
                });
            }
        }
    }

    /// Saves and prints the failures, then fails the test if there were any.
    fn finish(self) {
        if let Some(report) = self.verdict() {
            panic!("{report}");
        }
    }

    /// The report of the failures, if any (saving their inputs).
    fn verdict(self) -> Option<String> {
        eprintln!(
            "{}: {} cases, {} parsed, {} rejected with an error naming the file, {} failures; \
             slowest parse {:.1} ms ({})",
            self.fixture,
            self.cases,
            self.ok,
            self.cases - self.ok - self.failed,
            self.failed,
            self.slowest.0.as_secs_f64() * 1e3,
            self.slowest.1,
        );
        if self.failed == 0 {
            return None;
        }
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("binary-fuzz-failures");
        fs::create_dir_all(&dir).unwrap();
        let mut report = String::new();
        for (n, f) in self.failures.iter().enumerate() {
            let saved = dir.join(format!("{}-{n}.bin", self.fixture));
            fs::write(&saved, &f.input).unwrap();
            report.push_str(&format!(
                "\n--- {}, saved as {}:\n{}\n",
                f.label,
                saved.display(),
                f.problem
            ));
        }
        Some(format!(
            "{}: {} of {} cases failed; the first {}:{report}",
            self.fixture,
            self.failed,
            self.cases,
            self.failures.len()
        ))
    }
}

/// Why a successful parse's result cannot be right, if it cannot.
fn ill_formed(info: &BinaryInfo) -> Option<String> {
    let names = info
        .imports
        .iter()
        .chain(&info.delay_imports)
        .chain(&info.soname);
    for name in names {
        if name.is_empty() || name.len() > MAX_NAME || name.contains('\0') {
            return Some(format!("an impossible library name {name:?} in {info:?}"));
        }
    }
    for entry in info.rpath.iter().chain(&info.runpath) {
        if entry.len() > MAX_NAME || entry.contains('\0') || entry.contains(':') {
            return Some(format!("an impossible search path entry {entry:?}"));
        }
    }
    info.machine
        .is_empty()
        .then(|| "an empty machine name".to_string())
}

// --- Where the parser looks ------------------------------------------------------------

/// The parts of a file the reader walks: header fields, tables, and the names they point at.
struct Map {
    /// Offsets of header fields and table entries worth overwriting (2-byte aligned).
    fields: Vec<usize>,
    /// File ranges of the import/delay-import/dynamic tables and the names they use.
    hot: Vec<Range<usize>>,
    /// Offsets of 4-byte pointers (RVAs, offsets, string-table indexes) to redirect.
    pointers: Vec<usize>,
}

fn u16_at(data: &[u8], at: usize) -> usize {
    u16::from_le_bytes(data[at..at + 2].try_into().unwrap()).into()
}

fn u32_at(data: &[u8], at: usize) -> usize {
    u32::from_le_bytes(data[at..at + 4].try_into().unwrap()) as usize
}

fn map_of(data: &[u8], info: &BinaryInfo) -> Map {
    let mut map = match info.format {
        binary::BinaryFormat::Pe => match object::read::pe::optional_header_magic(data) {
            Ok(pe::IMAGE_NT_OPTIONAL_HDR64_MAGIC) => pe_map::<pe::ImageNtHeaders64>(data),
            _ => pe_map::<pe::ImageNtHeaders32>(data),
        },
        binary::BinaryFormat::Elf if data[4] == elf::ELFCLASS32.0 => {
            elf_map::<elf::FileHeader32<Endianness>>(data)
        }
        binary::BinaryFormat::Elf => elf_map::<elf::FileHeader64<Endianness>>(data),
    };
    let names = info
        .imports
        .iter()
        .chain(&info.delay_imports)
        .chain(&info.soname)
        .chain(&info.rpath)
        .chain(&info.runpath);
    for name in names.filter(|n| !n.is_empty()) {
        let needle = name.as_bytes();
        if let Some(at) = data.windows(needle.len()).position(|w| w == needle) {
            map.hot
                .push(at.saturating_sub(4)..(at + needle.len() + 4).min(data.len()));
        }
    }
    map.hot.retain(|r| !r.is_empty());
    assert!(!map.hot.is_empty(), "no table found to damage");
    map
}

fn pe_map<Pe: ImageNtHeaders>(data: &[u8]) -> Map {
    let file = object::read::pe::PeFile::<Pe>::parse(data).unwrap();
    let nt = u32_at(data, 0x3c);
    let optional = nt + 4 + 20;
    let sections = optional + u16_at(data, nt + 4 + 16);
    let headers_end = sections + 40 * u16_at(data, nt + 4 + 2);
    let mut fields: Vec<usize> = (0x3c..0x40).chain(nt..headers_end).step_by(2).collect();
    fields.dedup();
    let mut pointers = Vec::new();
    let mut hot = Vec::new();
    let directories = optional
        + if file.nt_headers().is_type_64() {
            112
        } else {
            96
        };
    for (id, record) in [
        (pe::IMAGE_DIRECTORY_ENTRY_IMPORT, 20),
        (pe::IMAGE_DIRECTORY_ENTRY_DELAY_IMPORT, 32),
    ] {
        pointers.extend([directories + id * 8, directories + id * 8 + 4]);
        let Some(range) = file
            .data_directory(id)
            .and_then(|d| d.file_range(&file.section_table()).ok())
        else {
            continue;
        };
        let start = range.0 as usize;
        // The directory's size may be 0 or short of the terminator: take a few records more.
        let end = (start + range.1 as usize + 2 * record).min(data.len());
        hot.push(start..end);
        fields.extend((start..end).step_by(2));
        pointers.extend((start..end).step_by(4));
    }
    // Section headers: virtual address, sizes and raw pointer, which map RVAs to offsets.
    for s in (sections..headers_end).step_by(40) {
        pointers.extend([s + 8, s + 12, s + 16, s + 20]);
    }
    Map {
        fields,
        hot,
        pointers,
    }
}

fn elf_map<Elf: FileHeader<Endian = Endianness>>(data: &[u8]) -> Map {
    let header = Elf::parse(data).unwrap();
    let endian = header.endian().unwrap();
    let phoff: u64 = header.e_phoff(endian).into();
    let phoff = phoff as usize;
    let phsize = usize::from(header.e_phentsize(endian)) * usize::from(header.e_phnum(endian));
    let ehsize = usize::from(header.e_ehsize(endian));
    let mut fields: Vec<usize> = (0..ehsize)
        .chain(phoff..phoff + phsize)
        .step_by(2)
        .collect();
    fields.dedup();
    let mut hot = Vec::new();
    let mut pointers: Vec<usize> = (phoff..phoff + phsize).step_by(4).collect();
    for segment in header.program_headers(endian, data).unwrap() {
        if segment.p_type(endian) == elf::PT_DYNAMIC {
            let (offset, size) = segment.file_range(endian);
            let range = offset as usize..(offset + size) as usize;
            fields.extend(range.clone().step_by(2));
            pointers.extend(range.clone().step_by(4));
            hot.push(range);
        }
    }
    Map {
        fields,
        hot,
        pointers,
    }
}

// --- Mutations -------------------------------------------------------------------------

/// Values that break size and offset arithmetic: the ones near the top of 2, 4 and 8 bytes
/// overflow a sum or a product with another field (e_lfanew + header sizes, a section's raw
/// pointer + offset, e_phnum × e_phentsize, DT_STRTAB + DT_STRSZ).
fn edge_values(len: usize) -> [u64; 17] {
    let len = len as u64;
    [
        0,
        1,
        0x7f,
        0x80,
        0xff,
        0xffff,
        0x7fff_ffff,
        0x8000_0000,
        0xffff_ffff,
        u64::MAX,
        u64::MAX - 0xff,
        0x7fff_ffff_ffff_ffff,
        0xffff_fff0_ffff_fff0,
        len,
        len - 1,
        len + 1,
        len / 2,
    ]
}

fn put(buf: &mut [u8], at: usize, value: u64, width: usize) {
    let bytes = value.to_le_bytes();
    let end = (at + width).min(buf.len());
    buf[at..end].copy_from_slice(&bytes[..end - at]);
}

/// Every kind of damage to one valid binary.
fn fuzz(fixture: &str, data: &[u8]) {
    let info = binary::parse(data, Path::new(fixture))
        .unwrap_or_else(|e| panic!("the undamaged fixture does not parse: {e}"));
    assert!(
        !info.imports.is_empty(),
        "{fixture}: a fixture with imports: {info:?}"
    );
    let map = map_of(data, &info);
    let len = data.len();
    let mut rng = Rng::seeded(fixture);
    let mut fuzz = Fuzz::new(fixture);
    fuzz.case(data, || "the undamaged file".into());

    // Truncations: every length of the first 4 KiB, every length around each table, and a
    // spread of the rest.
    for cut in 0..len.min(4096) {
        fuzz.case(&data[..cut], || format!("cut at {cut}"));
    }
    for range in &map.hot {
        for cut in range.start.saturating_sub(8)..(range.end + 8).min(len) {
            fuzz.case(&data[..cut], || format!("cut at {cut} (in a table)"));
        }
    }
    for _ in 0..256 {
        let cut = rng.below(len);
        fuzz.case(&data[..cut], || format!("cut at {cut}"));
    }

    let mut buf = data.to_vec();

    // Every bit of the headers (the first 1 KiB) and of the tables, one at a time.
    let flips: Vec<usize> = (0..len.min(1024))
        .chain(map.hot.iter().flat_map(|r| r.clone()))
        .collect();
    for &at in &flips {
        for bit in 0..8 {
            buf[at] ^= 1 << bit;
            fuzz.case(&buf, || format!("bit {bit} of byte {at} flipped"));
            buf[at] = data[at];
        }
    }

    // Header fields and table entries overwritten with edge values, 2, 4 and 8 bytes wide.
    for &at in &map.fields {
        for value in edge_values(len) {
            for width in [2, 4, 8] {
                put(&mut buf, at, value, width);
                fuzz.case(&buf, || {
                    format!("{width} bytes at {at} (0x{at:x}) set to 0x{value:x}")
                });
                let end = (at + width).min(len);
                buf[at..end].copy_from_slice(&data[at..end]);
            }
        }
    }

    // Pointers redirected: anywhere in the file, near its end, into the headers, and at
    // each table and name (so one table is read as another).
    let targets: Vec<u64> = map
        .hot
        .iter()
        .flat_map(|r| [r.start as u64, r.end as u64 - 1])
        .collect();
    for &at in &map.pointers {
        for n in 0..24 {
            let value = match n {
                0..=7 => rng.below(len) as u64,
                8..=11 => (len - 1 - rng.below(64.min(len))) as u64,
                12..=15 => rng.below(4096) as u64,
                _ => targets[rng.below(targets.len())] + rng.below(3) as u64,
            };
            put(&mut buf, at, value, 4);
            fuzz.case(&buf, || format!("pointer at 0x{at:x} set to 0x{value:x}"));
            let end = (at + 4).min(len);
            buf[at..end].copy_from_slice(&data[at..end]);
        }
    }

    // Havoc: 1-8 random mutations at once, three in four in the tables and headers, then
    // sometimes a truncation.
    for round in 0..harness::cases(HAVOC_ROUNDS) {
        let mut undo: Vec<(usize, u8)> = Vec::new();
        let mut steps = Vec::new();
        for _ in 0..1 + rng.below(8) {
            let at = match rng.below(4) {
                0 => rng.below(len),
                1 => rng.below(len.min(1024)),
                2 => map.fields[rng.below(map.fields.len())],
                _ => {
                    let range = map.hot[rng.below(map.hot.len())].clone();
                    rng.in_range(&range)
                }
            };
            let width = match rng.below(7) {
                0 => {
                    undo.push((at, buf[at]));
                    buf[at] ^= 1 << rng.below(8);
                    steps.push(format!("flip@{at}"));
                    continue;
                }
                6 => {
                    // Splice: bytes from elsewhere (often another table) copied over `at`.
                    let from = rng.below(len);
                    let n = (1 + rng.below(64)).min(len - at).min(len - from);
                    for i in 0..n {
                        undo.push((at + i, buf[at + i]));
                        buf[at + i] = data[from + i];
                    }
                    steps.push(format!("copy {n}B {from}->{at}"));
                    continue;
                }
                1 => 1,
                2 => 2,
                3 | 4 => 4,
                _ => 8,
            };
            let value = match rng.below(3) {
                0 => *rng.pick(&edge_values(len)),
                1 => rng.below(len) as u64,
                _ => rng.next(),
            };
            let end = (at + width).min(len);
            undo.extend((at..end).zip(buf[at..end].iter().copied()));
            put(&mut buf, at, value, width);
            steps.push(format!("{width}B@{at}=0x{value:x}"));
        }
        let cut = match rng.below(5) {
            0 => rng.below(len),
            _ => len,
        };
        fuzz.case(&buf[..cut], || {
            format!("havoc round {round}: {}, cut at {cut}", steps.join(" "))
        });
        for (at, byte) in undo.into_iter().rev() {
            buf[at] = byte;
        }
    }
    assert_eq!(buf, data, "every mutation was undone");
    fuzz.finish();
}

/// `read` (memory-mapped) and `parse` (bytes) agree on damaged files too.
fn read_agrees_with_parse(fixture: &str, data: &[u8]) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("damaged.bin");
    let mut rng = Rng::seeded(&format!("{fixture} read"));
    for round in 0..200 {
        let mut buf = data.to_vec();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(buf.len().min(2048));
            buf[at] ^= 1 << rng.below(8);
        }
        buf.truncate(match round % 4 {
            0 => rng.below(buf.len()),
            _ => buf.len(),
        });
        fs::write(&path, &buf).unwrap();
        let read = binary::read(&path).map_err(|e| e.to_string());
        let parsed = binary::parse(&buf, &path).map_err(|e| e.to_string());
        assert_eq!(read, parsed, "{fixture} round {round}");
    }
}

// --- Fixtures (common/binaries.rs, shared with src/binary/tests.rs) -------------------

/// a.dll (imports b.dll and KERNEL32, delay-loads c.dll), b.dll and main.exe.
fn mingw_files(dir: &Path) -> Option<Vec<PathBuf>> {
    let install = format!("apt-get install {}", binaries::PE_PACKAGE);
    if binaries::PE_TOOLS
        .iter()
        .any(|tool| common::skip::missing(tool, &install))
    {
        return None;
    }
    let pe = binaries::pe(dir);
    Some(vec![pe.a, pe.b, pe.exe])
}

/// A PE32 (i386) DLL importing k32.dll and delay-loading d32.dll, linked by the host's GNU
/// ld (i386pe).
fn pe32_dll(dir: &Path) -> Option<PathBuf> {
    let install = format!("apt-get install {}", binaries::PE_PACKAGE);
    if binaries::PE_TOOLS
        .iter()
        .any(|tool| common::skip::missing(tool, &install))
    {
        return None;
    }
    if !binaries::host_ld_links_pe32() {
        eprintln!(
            "skipping PE32: the host's ld has no i386pe emulation (apt-get install binutils)"
        );
        return None;
    }
    Some(binaries::pe32(dir))
}

/// liba_rpath.so (ELF64, an RPATH with an empty entry), when gcc -m32 can link liba32.so
/// (ELF32, a RUNPATH), and a non-PIE program (ET_EXEC).
fn gcc_files(dir: &Path) -> Option<Vec<PathBuf>> {
    if !installed("gcc") {
        eprintln!("skipping ELF fixtures: gcc is not installed");
        return None;
    }
    let elf = binaries::elf(dir);
    let wanted = ["liba_rpath.so", "liba32.so"];
    let libraries = elf.libraries.into_iter().map(|(path, _)| path);
    let mut files: Vec<PathBuf> = libraries
        .filter(|p| wanted.iter().any(|w| p.ends_with(w)))
        .collect();
    files.push(elf.exe);
    Some(files)
}

fn fuzz_files(paths: &[PathBuf]) {
    for path in paths {
        let data = fs::read(path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy();
        fuzz(&name, &data);
        read_agrees_with_parse(&name, &data);
    }
}

// --- Tests -----------------------------------------------------------------------------

#[test]
fn mingw_pe32_plus_dlls_and_program_survive_damage() {
    let dir = tempfile::tempdir().unwrap();
    if let Some(files) = mingw_files(dir.path()) {
        let a = binary::read(&files[0]).unwrap();
        assert_eq!(a.delay_imports, ["c.dll"], "the fixture has a delay import");
        fuzz_files(&files);
    }
}

#[test]
fn pe32_dll_survives_damage() {
    let dir = tempfile::tempdir().unwrap();
    if let Some(dll) = pe32_dll(dir.path()) {
        fuzz_files(&[dll]);
    }
}

#[test]
fn gcc_libraries_and_program_survive_damage() {
    let dir = tempfile::tempdir().unwrap();
    if let Some(files) = gcc_files(dir.path()) {
        let a = binary::read(&files[0]).unwrap();
        assert_eq!(a.rpath, ["$ORIGIN/../lib", "/opt/x", "", "${ORIGIN}"]);
        fuzz_files(&files);
    }
}

#[test]
fn bin_ls_survives_damage() {
    let ls = Path::new("/bin/ls");
    match binary::read(ls) {
        Ok(info) if !info.imports.is_empty() => fuzz_files(&[ls.to_path_buf()]),
        _ => eprintln!("skipping: /bin/ls is not a dynamically linked ELF file here"),
    }
}

#[test]
fn noise_and_tiny_inputs_are_rejected_with_the_path() {
    let mut fuzz = Fuzz::new("noise");
    let mut rng = Rng::seeded("noise");
    let noise: Vec<u8> = (0..1 << 16).map(|_| rng.next() as u8).collect();
    for magic in [
        &b""[..],
        b"MZ",
        b"\x7fELF\x01\x01\x01",
        b"\x7fELF\x02\x01\x01",
        b"\x7fELF\x02\x02\x01",
    ] {
        let mut buf = noise.clone();
        buf[..magic.len()].copy_from_slice(magic);
        for cut in (0..256).chain((256..buf.len()).step_by(997)) {
            fuzz.case(&buf[..cut], || {
                format!("noise after {magic:?}, cut at {cut}")
            });
        }
        // A plausible e_lfanew / e_phoff pointing into more noise.
        for round in 0..500 {
            let at = [0x3c, 0x20, 0x1c][rng.below(3)];
            let value = rng.below(buf.len()) as u64;
            put(&mut buf, at, value, 4);
            fuzz.case(&buf, || format!("noise after {magic:?}, round {round}"));
        }
    }
    fuzz.finish();
}

/// The harness itself: a parser that panics, or whose error does not name the file, or that
/// returns an empty name, is caught and reported with the input that did it.
#[test]
fn the_harness_reports_panics_unnamed_errors_and_bad_results() {
    let parse = |data: &[u8], path: &Path| -> Result<BinaryInfo, BinaryError> {
        match data.first() {
            Some(1) => panic!("planted panic"),
            Some(2) => binary::parse(b"", Path::new("elsewhere")),
            Some(3) => {
                let mut info = binary::parse(&fs::read("/bin/ls").unwrap(), path)?;
                info.imports.push(String::new());
                Ok(info)
            }
            _ => binary::parse(data, path),
        }
    };
    let mut fuzz = Fuzz::new("harness");
    for first in 0..4u8 {
        fuzz.case_with(&parse, &[first, 0, 0], || format!("starts with {first}"));
    }
    let report = fuzz.verdict().expect("three failures");
    assert!(report.contains("3 of 4 cases failed"), "{report}");
    assert!(report.contains("PANIC: planted panic"), "{report}");
    assert!(
        report.contains("binary_fuzz.rs"),
        "the panic's location: {report}"
    );
    assert!(report.contains("backtrace:"), "{report}");
    assert!(report.contains("does not name the file"), "{report}");
    assert!(
        report.contains("an impossible library name \"\""),
        "{report}"
    );
    let saved = Path::new(env!("CARGO_TARGET_TMPDIR")).join("binary-fuzz-failures/harness-0.bin");
    assert_eq!(fs::read(saved).unwrap(), [1, 0, 0]);
}
