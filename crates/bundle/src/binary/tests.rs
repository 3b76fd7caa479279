//! Parsing checked against the real tools: DLLs built with mingw-w64 and read back by
//! objdump, shared libraries built with gcc and read back by readelf; damaged input.

use super::elf::split_path;
use super::*;
use std::fs;
use std::ops::Range;

use object::endian::Endianness;
use object::read::elf::{FileHeader, ProgramHeader as _};
use object::read::pe::ImageNtHeaders;
use object::{elf, pe};

#[path = "../../tests/it/common/binaries.rs"]
mod fixtures;

const OBJDUMP: &str = "x86_64-w64-mingw32-objdump";

fn installed(tool: &str) -> bool {
    ct2v_support::process::probe(tool, ["--version"]).is_some()
}

/// Prints why a test skips and returns false when a tool is missing.
fn tools(needed: &[&str], package: &str) -> bool {
    match needed.iter().find(|tool| !installed(tool)) {
        Some(tool) => {
            eprintln!("skipping: {tool} is not installed (apt-get install {package})");
            false
        }
        None => true,
    }
}

/// Runs a tool on `path`, in its folder; its stdout.
fn run_on(tool: &str, flags: &[&str], path: &Path) -> String {
    let name = path.file_name().unwrap().to_str().unwrap();
    fixtures::run(path.parent().unwrap(), tool, &[flags, &[name]].concat())
}

fn write(dir: &Path, name: &str, text: &str) {
    fs::write(dir.join(name), text).unwrap();
}

fn hex(text: &str) -> u64 {
    u64::from_str_radix(text.trim_start_matches("0x"), 16)
        .unwrap_or_else(|e| panic!("`{text}` is not hex: {e}"))
}

/// Both ways in: mapping the file and parsing bytes must agree.
fn info(path: &Path) -> BinaryInfo {
    let info = read(path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(parse(&fs::read(path).unwrap(), path).unwrap(), info);
    assert_eq!(sniff(path).unwrap(), Some(info.format));
    info
}

// --- PE fixtures (tests/it/common/binaries.rs) ------------------------------------

fn build_pe(dir: &Path) -> Option<fixtures::Pe> {
    let needed = [&fixtures::PE_TOOLS[..], &[OBJDUMP]].concat();
    tools(&needed, fixtures::PE_PACKAGE).then(|| fixtures::pe(dir))
}

fn build_pe32(dir: &Path) -> Option<PathBuf> {
    if !fixtures::host_ld_links_pe32() {
        eprintln!(
            "skipping PE32: the host's ld has no i386pe emulation (apt-get install binutils)"
        );
        return None;
    }
    Some(fixtures::pe32(dir))
}

/// The "DLL Name:" lines of `objdump -p`: the import table as binutils reads it.
fn objdump_imports(path: &Path) -> Vec<String> {
    run_on(OBJDUMP, &["-p"], path)
        .lines()
        .filter_map(|l| l.trim().strip_prefix("DLL Name:"))
        .map(|name| name.trim().to_string())
        .collect()
}

fn objdump_subsystem(path: &Path) -> String {
    let headers = run_on(OBJDUMP, &["-p"], path);
    let line = headers
        .lines()
        .find_map(|l| l.strip_prefix("Subsystem"))
        .expect("objdump prints the subsystem");
    match hex(line.split_whitespace().next().unwrap()) {
        2 => "windows-gui".to_string(),
        3 => "windows-cui".to_string(),
        other => format!("unknown-{other}"),
    }
}

#[test]
fn pe_imports_match_mingw_and_objdump() {
    let dir = tempfile::tempdir().unwrap();
    let Some(pe) = build_pe(dir.path()) else {
        return;
    };

    let a = info(&pe.a);
    assert_eq!(a.format, BinaryFormat::Pe);
    assert_eq!(a.machine, "x86_64");
    assert!(a.is_dll);
    assert_eq!(
        a.subsystem.as_deref(),
        Some(objdump_subsystem(&pe.a).as_str())
    );
    assert_eq!(a.imports, objdump_imports(&pe.a));
    let lower: Vec<String> = a.imports.iter().map(|n| n.to_ascii_lowercase()).collect();
    assert!(lower.contains(&"b.dll".to_string()), "{lower:?}");
    assert!(lower.contains(&"kernel32.dll".to_string()), "{lower:?}");
    assert!(!lower.contains(&"c.dll".to_string()), "{lower:?}");
    assert_eq!(a.delay_imports, ["c.dll"]);
    assert_eq!(
        (a.soname.as_ref(), a.rpath.len(), a.runpath.len()),
        (None, 0, 0)
    );

    let b = info(&pe.b);
    assert!(b.is_dll);
    assert_eq!(b.imports, objdump_imports(&pe.b));
    assert!(b.delay_imports.is_empty());

    let exe = info(&pe.exe);
    assert!(!exe.is_dll);
    assert_eq!(exe.machine, "x86_64");
    assert_eq!(exe.subsystem.as_deref(), Some("windows-cui"));
    assert_eq!(exe.imports, objdump_imports(&pe.exe));
    assert!(
        exe.imports.contains(&"a.dll".to_string()),
        "{:?}",
        exe.imports
    );

    if let Some(p32) = build_pe32(dir.path()) {
        let info32 = info(&p32);
        assert_eq!(info32.machine, "i386");
        assert!(info32.is_dll);
        assert_eq!(info32.imports, objdump_imports(&p32));
        assert_eq!(info32.imports, ["k32.dll"]);
        assert_eq!(info32.delay_imports, ["d32.dll"]);
    }
}

// --- ELF fixtures (tests/it/common/binaries.rs) -----------------------------------

fn build_elf(dir: &Path) -> Option<fixtures::Elf> {
    tools(&["gcc", "readelf"], "gcc binutils").then(|| fixtures::elf(dir))
}

/// `readelf -d`: (needed, soname, rpath, runpath), the last three unsplit.
fn readelf_dynamic(path: &Path) -> (Vec<String>, Option<String>, Option<String>, Option<String>) {
    let text = run_on("readelf", &["-d"], path);
    let value = |line: &str| {
        let start = line.find('[').unwrap() + 1;
        line[start..line.rfind(']').unwrap()].to_string()
    };
    let (mut needed, mut soname, mut rpath, mut runpath) = (Vec::new(), None, None, None);
    for line in text.lines() {
        if line.contains("(NEEDED)") {
            needed.push(value(line));
        } else if line.contains("(SONAME)") {
            soname = Some(value(line));
        } else if line.contains("(RPATH)") {
            rpath = Some(value(line));
        } else if line.contains("(RUNPATH)") {
            runpath = Some(value(line));
        }
    }
    (needed, soname, rpath, runpath)
}

#[test]
fn elf_dynamic_matches_gcc_and_readelf() {
    let dir = tempfile::tempdir().unwrap();
    let Some(elf) = build_elf(dir.path()) else {
        return;
    };
    for (path, machine) in &elf.libraries {
        let info = info(path);
        let (needed, soname, rpath, runpath) = readelf_dynamic(path);
        let name = path.display();
        assert_eq!(info.format, BinaryFormat::Elf, "{name}");
        assert_eq!(info.machine, *machine, "{name}");
        assert!(info.is_dll, "{name}");
        assert_eq!(info.subsystem, None, "{name}");
        assert!(info.delay_imports.is_empty(), "{name}");
        assert_eq!(info.imports, needed, "{name}");
        assert_eq!(info.soname, soname, "{name}");
        assert_eq!(
            info.rpath,
            rpath.map(|r| split_path(&r)).unwrap_or_default(),
            "{name}"
        );
        assert_eq!(
            info.runpath,
            runpath.map(|r| split_path(&r)).unwrap_or_default(),
            "{name}"
        );
    }

    let libb = info(&dir.path().join("libb.so"));
    assert_eq!(libb.soname.as_deref(), Some("libb.so.1"));
    assert!(libb.rpath.is_empty() && libb.runpath.is_empty());

    let liba = info(&dir.path().join("liba.so"));
    assert!(
        liba.imports.contains(&"libb.so.1".to_string()),
        "{:?}",
        liba.imports
    );
    assert_eq!(liba.runpath, ["$ORIGIN/../lib"]);
    assert!(liba.rpath.is_empty());
    assert_eq!(
        expand_origin(&liba.runpath[0], Path::new("/w/pkg")),
        Path::new("/w/pkg/../lib")
    );

    let rpath = info(&dir.path().join("liba_rpath.so"));
    assert_eq!(rpath.rpath, ["$ORIGIN/../lib", "/opt/x", "", "${ORIGIN}"]);
    assert!(rpath.runpath.is_empty());

    let exe = info(&elf.exe);
    assert!(!exe.is_dll, "a -no-pie program is ET_EXEC");
    assert_eq!(exe.imports, readelf_dynamic(&elf.exe).0);
    assert!(
        exe.imports.contains(&"liba.so".to_string()),
        "{:?}",
        exe.imports
    );
    assert_eq!(exe.soname, None);
}

/// `readelf -V`'s version needs: (file, [version name]) in file order.
fn readelf_version_needs(path: &Path) -> Vec<(String, Vec<String>)> {
    let text = run_on("readelf", &["-V", "--wide"], path);
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let section = text.split(".gnu.version_r").nth(1).unwrap_or_default();
    for line in section.lines() {
        if let Some((_, rest)) = line.split_once("File: ") {
            out.push((rest.split_whitespace().next().unwrap().to_string(), vec![]));
        } else if let Some((_, rest)) = line.split_once("Name: ") {
            let name = rest.split_whitespace().next().unwrap().to_string();
            out.last_mut().unwrap().1.push(name);
        }
    }
    out
}

#[test]
fn elf_version_needs_match_gcc_and_readelf() {
    if !tools(&["g++", "readelf"], "g++ binutils") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "v.cpp",
        "#include <string>\n#include <thread>\n#include <stdexcept>\n#include <cstdlib>\n\
         extern \"C\" int v(int n) { if (std::getenv(\"V\")) n++; std::string s(n, 'x'); std::thread t([&]{ s += 'y'; }); \
         t.join(); if (n < 0) throw std::runtime_error(s); return s.size(); }\n",
    );
    fixtures::run(
        dir.path(),
        "g++",
        &["-shared", "-fPIC", "-O2", "-o", "libv.so", "v.cpp"],
    );
    let path = dir.path().join("libv.so");
    let ours = info(&path).version_needs;
    assert_eq!(ours, readelf_version_needs(&path));
    let libc = ours.iter().find(|(f, _)| f == "libc.so.6").expect("libc");
    assert!(libc.1.iter().all(|v| v.starts_with("GLIBC_")), "{ours:?}");
    assert!(
        ours.iter()
            .any(|(f, v)| f == "libstdc++.so.6" && v.iter().any(|v| v.starts_with("GLIBCXX_"))),
        "{ours:?}"
    );
    let Some(elf) = build_elf(dir.path()) else {
        return;
    };
    // A C library linked without glibc's versioned symbols needs none.
    let libb32 = elf.libraries.iter().find(|(p, _)| p.ends_with("libb32.so"));
    if let Some((p, _)) = libb32 {
        assert!(info(p).version_needs.is_empty());
    }
}

// --- Robustness -----------------------------------------------------------------

/// xorshift64: deterministic, so a failure names a reproducible mutation.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Parses without panicking; an error must name the file.
fn survives(data: &[u8], label: &str) {
    let path = Path::new("fuzzed/input.bin");
    let result = std::panic::catch_unwind(|| parse(data, path));
    match result {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => {
            let message = e.to_string();
            assert!(message.contains("fuzzed/input.bin"), "{label}: `{message}`");
        }
        Err(_) => panic!("parse panicked on {label} ({} bytes)", data.len()),
    }
}

/// The headers (first 4 KiB), the tables the parser walks as file ranges (found with
/// `object`'s own readers), and where the names they point at sit.
fn hot_ranges(data: &[u8], info: &BinaryInfo) -> Vec<Range<usize>> {
    let mut ranges = match object::read::pe::optional_header_magic(data) {
        Ok(pe::IMAGE_NT_OPTIONAL_HDR64_MAGIC) => pe_tables::<pe::ImageNtHeaders64>(data),
        Ok(pe::IMAGE_NT_OPTIONAL_HDR32_MAGIC) => pe_tables::<pe::ImageNtHeaders32>(data),
        _ if data.get(4) == Some(&1) => elf_tables::<elf::FileHeader32<Endianness>>(data),
        _ => elf_tables::<elf::FileHeader64<Endianness>>(data),
    };
    assert!(!ranges.is_empty(), "no import or dynamic table found");
    ranges.push(0..data.len().min(4096));
    let names = info
        .imports
        .iter()
        .chain(&info.delay_imports)
        .chain(&info.soname);
    for name in names
        .chain(&info.rpath)
        .chain(&info.runpath)
        .filter(|n| !n.is_empty())
    {
        let needle = name.as_bytes();
        if let Some(at) = data.windows(needle.len()).position(|w| w == needle) {
            ranges.push(at.saturating_sub(16)..(at + needle.len() + 16).min(data.len()));
        }
    }
    ranges
}

fn pe_tables<Pe: ImageNtHeaders>(data: &[u8]) -> Vec<Range<usize>> {
    let file = object::read::pe::PeFile::<Pe>::parse(data).unwrap();
    [
        pe::IMAGE_DIRECTORY_ENTRY_IMPORT,
        pe::IMAGE_DIRECTORY_ENTRY_DELAY_IMPORT,
    ]
    .into_iter()
    .filter_map(|id| file.data_directory(id))
    .filter_map(|dir| dir.file_range(&file.section_table()).ok())
    .map(|(offset, size)| offset as usize..(offset + size.max(64)) as usize)
    .map(|r| r.start..r.end.min(data.len()))
    .collect()
}

fn elf_tables<Elf: FileHeader<Endian = Endianness>>(data: &[u8]) -> Vec<Range<usize>> {
    let header = Elf::parse(data).unwrap();
    let endian = header.endian().unwrap();
    header
        .program_headers(endian, data)
        .unwrap()
        .iter()
        .filter(|s| s.p_type(endian) == elf::PT_DYNAMIC)
        .map(|s| s.file_range(endian))
        .map(|(offset, size)| offset as usize..(offset + size) as usize)
        .collect()
}

/// Mutates `data` `rounds` times: truncations (often inside a table), and byte flips
/// and planted 32-bit values, mostly in the headers and the import/dynamic tables.
fn mutate(name: &str, data: &[u8], rounds: usize, rng: &mut Rng) {
    let info = parse(data, Path::new(name)).unwrap();
    let hot = hot_ranges(data, &info);
    let mut buf = data.to_vec();
    let len = data.len();
    for round in 0..rounds {
        let label = format!("{name} round {round}");
        let pick = |rng: &mut Rng| -> usize {
            let range = match rng.below(4) {
                0 => 0..len,
                _ => hot[rng.below(hot.len())].clone(),
            };
            range.start + rng.below(range.len())
        };
        if rng.below(4) == 0 {
            let cut = if rng.below(2) == 0 {
                rng.below(len)
            } else {
                pick(rng)
            };
            survives(&data[..cut], &format!("{label}: cut at {cut}"));
            continue;
        }
        let mut undo = Vec::new();
        for _ in 0..1 + rng.below(4) {
            let at = pick(rng);
            if rng.below(2) == 0 {
                undo.push((at, buf[at]));
                buf[at] ^= 1 + rng.below(255) as u8;
            } else {
                let values = [0, u32::MAX, 0x8000_0000, len as u32, rng.next() as u32];
                let value = values[rng.below(values.len())];
                for (i, byte) in value.to_le_bytes().into_iter().enumerate() {
                    if let Some(slot) = buf.get_mut(at + i) {
                        undo.push((at + i, *slot));
                        *slot = byte;
                    }
                }
            }
        }
        survives(&buf, &label);
        if rng.below(8) == 0 {
            let cut = pick(rng);
            survives(&buf[..cut], &format!("{label}, then cut at {cut}"));
        }
        for (at, byte) in undo.into_iter().rev() {
            buf[at] = byte;
        }
    }
}

#[test]
fn parse_survives_damaged_input() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for (data, label) in [
        (&b""[..], "empty file"),
        (b"MZ", "MZ only"),
        (b"\x7fELF", "ELF magic only"),
        (b"\x7fELF\x02\x01\x01", "ELF ident cut short"),
    ] {
        survives(data, label);
        assert!(parse(data, Path::new("x")).is_err(), "{label}");
    }
    let blob: Vec<u8> = (0..1 << 20).map(|_| rng.next() as u8).collect();
    survives(&blob, "1 MiB of noise");
    for magic in [&b"MZ"[..], b"\x7fELF\x02\x01\x01", b"\x7fELF\x01\x01\x01"] {
        let mut blob = blob.clone();
        blob[..magic.len()].copy_from_slice(magic);
        survives(&blob, &format!("noise after {magic:?}"));
    }

    let dir = tempfile::tempdir().unwrap();
    let mut inputs = Vec::new();
    let pe_dir = dir.path().join("pe");
    fs::create_dir(&pe_dir).unwrap();
    if let Some(pe) = build_pe(&pe_dir) {
        inputs.extend([pe.a, pe.exe]);
        inputs.extend(build_pe32(&pe_dir));
    }
    let elf_dir = dir.path().join("elf");
    fs::create_dir(&elf_dir).unwrap();
    if let Some(elf) = build_elf(&elf_dir) {
        inputs.extend(elf.libraries.into_iter().map(|(path, _)| path).skip(1));
    }
    for path in &inputs {
        let data = fs::read(path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy();
        mutate(&name, &data, 3000 / inputs.len(), &mut rng);
    }
}

#[test]
fn errors_name_the_file_and_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("gone.dll");
    let err = read(&missing).unwrap_err().to_string();
    assert!(
        err.starts_with("cannot read ") && err.contains("gone.dll"),
        "{err}"
    );

    let empty = dir.path().join("empty.so");
    fs::write(&empty, b"").unwrap();
    let err = read(&empty).unwrap_err().to_string();
    assert!(
        err.contains("empty.so") && err.contains("it is empty"),
        "{err}"
    );
    assert_eq!(sniff(&empty).unwrap(), None);

    let err = read(dir.path()).unwrap_err().to_string();
    assert!(err.contains("not a regular file"), "{err}");

    let err = parse(b"MZ", Path::new("w/cut.dll"))
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "w/cut.dll is truncated: DOS header at 0x0..0x40 runs past the end of the file \
         (0x2 bytes)"
    );
    let mut no_pe = vec![0u8; 0x80];
    no_pe[..2].copy_from_slice(b"MZ");
    no_pe[0x3c] = 0x40;
    let err = parse(&no_pe, Path::new("dos.exe")).unwrap_err().to_string();
    assert!(
        err.starts_with("dos.exe is not a valid PE file: no PE signature at 0x40"),
        "{err}"
    );
}

#[test]
fn truncated_import_table_is_reported_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let Some(pe) = build_pe(dir.path()) else {
        return;
    };
    let data = fs::read(&pe.a).unwrap();
    let import = pe_tables::<pe::ImageNtHeaders64>(&data)[0].clone();
    let err = parse(&data[..import.start + 4], Path::new("a.dll")).unwrap_err();
    let message = err.to_string();
    assert!(matches!(err, BinaryError::Truncated { .. }), "{message}");
    assert!(
        message.starts_with("a.dll is truncated: import descriptor 0 at 0x"),
        "{message}"
    );
}

#[test]
fn origin_is_expanded_in_both_spellings_and_only_as_a_whole_word() {
    let dir = Path::new("/opt/pkg/lib");
    assert_eq!(expand_origin("$ORIGIN", dir), Path::new("/opt/pkg/lib"));
    assert_eq!(
        expand_origin("$ORIGIN/../x", dir),
        Path::new("/opt/pkg/lib/../x")
    );
    assert_eq!(
        expand_origin("${ORIGIN}/x:$ORIGIN", dir),
        Path::new("/opt/pkg/lib/x:/opt/pkg/lib")
    );
    assert_eq!(expand_origin("$ORIGINAL/x", dir), Path::new("$ORIGINAL/x"));
    assert_eq!(expand_origin("/usr/lib", dir), Path::new("/usr/lib"));
    assert_eq!(expand_origin("$LIB/$", dir), Path::new("$LIB/$"));
}

#[test]
fn sniff_reads_the_magic_only() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes, format) in [
        ("a.dll", &b"MZ\x90\0"[..], Some(BinaryFormat::Pe)),
        ("a.so", b"\x7fELF\x02", Some(BinaryFormat::Elf)),
        ("a.txt", b"hello", None),
        ("m", b"M", None),
    ] {
        let path = dir.path().join(name);
        fs::write(&path, bytes).unwrap();
        assert_eq!(sniff(&path).unwrap(), format, "{name}");
    }
}
