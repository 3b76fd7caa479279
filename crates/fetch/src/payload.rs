//! Whether a downloaded file is the kind of file it claims to be, before `pin` records it: a
//! server that answers 200 with an HTML page, or a connection that ends early, must not get
//! its bytes pinned as the input.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;

use anyhow::{Result, anyhow};
use flate2::read::GzDecoder;
use object::LittleEndian as LE;
use object::pe::{
    IMAGE_DIRECTORY_ENTRY_SECURITY, IMAGE_NT_OPTIONAL_HDR32_MAGIC, IMAGE_NT_OPTIONAL_HDR64_MAGIC,
    ImageDosHeader, ImageNtHeaders32, ImageNtHeaders64,
};
use object::read::ReadCache;
use object::read::pe::{ImageNtHeaders, PeFile};

use super::unpack::{ANY_TOP_FOLDER, ArchiveFormat, Limits};

/// How many of the first bytes a refusal shows: of a page, enough to read; of a binary file,
/// its magic number.
const SHOWN_BYTES: usize = 48;
const SHOWN_MAGIC: usize = 16;
/// What a 7z header may ask for its decoder, as the unpacker allows (`unpack::sevenz`).
const SEVEN_Z_MEMORY_LIMIT_KB: usize = 1536 * 1024;

/// What a file claims to be, from its name or from what the plan does with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A Windows program (the SDK installer).
    Exe,
    Archive(ArchiveFormat),
    /// Anything else: only refused when it is a page.
    Other,
}

impl Kind {
    pub fn from_name(file_name: &str) -> Kind {
        if let Some(format) = ArchiveFormat::from_name(file_name) {
            Kind::Archive(format)
        } else if file_name.to_ascii_lowercase().ends_with(".exe") {
            Kind::Exe
        } else {
            Kind::Other
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Kind::Exe => "a Windows program (.exe)",
            Kind::Archive(ArchiveFormat::Zip) => "a zip archive (.zip, .whl)",
            Kind::Archive(ArchiveFormat::TarGz) => "a gzip-compressed tar (.tar.gz, .tgz, .crate)",
            Kind::Archive(ArchiveFormat::SevenZ) => "a 7z archive",
            Kind::Other => "a file",
        }
    }
}

/// What the file must be: its kind and, for an archive the plan unpacks, the paths it must
/// hold below `subdir` (the input's `expect`).
#[derive(Debug, Clone, Copy)]
pub struct Claim<'a> {
    pub kind: Kind,
    pub subdir: Option<&'a str>,
    pub expect: &'a [String],
}

/// One archive entry: its name and whether it is a folder.
type Entry = (String, bool);

/// Checks the file at `path`, downloaded from `url`, against `claim`; the error names the URL
/// and what is wrong.
pub fn check(path: &Path, url: &str, claim: &Claim) -> Result<()> {
    let open = || File::open(path).map_err(|e| anyhow!("cannot read {}: {e}", path.display()));
    let file = open()?;
    let len = file.metadata()?.len();
    let mut head = Vec::with_capacity(512);
    file.take(512).read_to_end(&mut head)?;
    if looks_like_a_page(&head) {
        return Err(anyhow!(
            "{url} answered with a page, not the file: it starts with `{}` ({len} bytes). The \
             server sent an HTML, XML or JSON page (an error, login or download page) instead \
             of {}; open the URL in a browser and fix it, or pin again once it serves the \
             file. Not pinned",
            first_bytes(&head, SHOWN_BYTES),
            claim.kind.describe()
        ));
    }
    let entries = match claim.kind {
        Kind::Other => return Ok(()),
        Kind::Exe => check_exe(open()?, len).map(|()| Vec::new()),
        Kind::Archive(ArchiveFormat::Zip) => zip_entries(open()?, len),
        Kind::Archive(ArchiveFormat::TarGz) => tar_gz_entries(open()?, len),
        Kind::Archive(ArchiveFormat::SevenZ) => seven_z_entries(open()?),
    };
    let refused = |why: String| {
        anyhow!(
            "{url} is not {}: {why} ({len} bytes, starting `{}`). A truncated or damaged \
             download, or another file; download it again, and check the URL if it repeats. \
             Not pinned",
            claim.kind.describe(),
            first_bytes(&head, SHOWN_MAGIC)
        )
    };
    let entries = entries.map_err(refused)?;
    missing_expected(&entries, claim).map_err(|why| anyhow!("{url}: {why}. Not pinned"))
}

/// HTML, XML or JSON text: what a server sends instead of a file (an error or login page).
fn looks_like_a_page(head: &[u8]) -> bool {
    let text = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let start = text
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(text.len());
    let text = &text[start..];
    let starts = |prefix: &[u8]| {
        text.len() >= prefix.len() && text[..prefix.len()].eq_ignore_ascii_case(prefix)
    };
    starts(b"<!doctype") || starts(b"<html") || starts(b"<?xml") || starts(b"{")
}

/// The first bytes, escaped so that a terminal shows them and never interprets them.
fn first_bytes(head: &[u8], count: usize) -> String {
    let shown = &head[..head.len().min(count)];
    let more = if head.len() > count { "…" } else { "" };
    format!("{}{more}", shown.escape_ascii())
}

/// An `MZ` header whose `PE\0\0` header is inside the file, headers that parse, and every
/// section's data, and the signature a signed installer ends with, inside the file.
fn check_exe(file: File, len: u64) -> Result<(), String> {
    let cache = ReadCache::new(file);
    let data = &cache;
    let dos = ImageDosHeader::parse(data)
        .map_err(|e| format!("no DOS header (a program starts with `MZ`): {e}"))?;
    let offset = u64::from(dos.nt_headers_offset());
    if offset.saturating_add(4) > len {
        return Err(format!(
            "its PE header offset ({offset}) is past the end of the file"
        ));
    }
    match object::read::pe::optional_header_magic(data) {
        Ok(IMAGE_NT_OPTIONAL_HDR64_MAGIC) => pe_fits::<ImageNtHeaders64>(data, len),
        Ok(IMAGE_NT_OPTIONAL_HDR32_MAGIC) => pe_fits::<ImageNtHeaders32>(data, len),
        Ok(magic) => Err(format!(
            "its PE optional header has the unknown magic {magic:#x}"
        )),
        Err(e) => Err(format!("no PE header (`PE\\0\\0`) at offset {offset}: {e}")),
    }
}

fn pe_fits<Pe: ImageNtHeaders>(data: &ReadCache<File>, len: u64) -> Result<(), String> {
    let pe =
        PeFile::<Pe, _>::parse(data).map_err(|e| format!("its PE headers do not read: {e}"))?;
    let past_end = |what: String, start: u32, size: u32| {
        let end = u64::from(start) + u64::from(size);
        (size != 0 && end > len)
            .then(|| format!("{what} ends at byte {end}, past the end of the file (truncated)"))
    };
    for section in pe.section_table().iter() {
        let name = String::from_utf8_lossy(section.raw_name()).into_owned();
        let start = section.pointer_to_raw_data.get(LE);
        if let Some(why) = past_end(
            format!("section `{name}`"),
            start,
            section.size_of_raw_data.get(LE),
        ) {
            return Err(why);
        }
    }
    // The certificate table's address is a file offset; signatures are appended last, so a
    // cut in the installer's payload after the sections shows here.
    if let Some(dir) = pe.data_directory(IMAGE_DIRECTORY_ENTRY_SECURITY) {
        let (start, size) = (dir.virtual_address.get(LE), dir.size.get(LE));
        if let Some(why) = past_end("its signature".to_string(), start, size) {
            return Err(why);
        }
    }
    Ok(())
}

/// The zip's entries, once its central directory reads and every entry's data lies inside
/// the file.
fn zip_entries(file: File, len: u64) -> Result<Vec<Entry>, String> {
    let mut zip = zip::ZipArchive::new(BufReader::new(file))
        .map_err(|e| format!("its zip directory does not read: {e}"))?;
    let mut entries = Vec::with_capacity(zip.len());
    for i in 0..zip.len() {
        let entry = zip
            .by_index_raw(i)
            .map_err(|e| format!("zip entry {i} does not read: {e}"))?;
        let name = String::from_utf8_lossy(entry.name_raw()).into_owned();
        let start = entry.data_start().unwrap_or(entry.header_start());
        let end = start.saturating_add(entry.compressed_size());
        if end > len {
            return Err(format!(
                "entry `{}` ends at byte {end}, past the end of the file (truncated)",
                name.escape_debug()
            ));
        }
        entries.push((name, entry.is_dir()));
    }
    Ok(entries)
}

/// The tar's entries, once the gzip stream decodes to its end (its CRC and length checked)
/// and the tar lists to its end; no more is decoded than the unpacker would accept.
fn tar_gz_entries(file: File, len: u64) -> Result<Vec<Entry>, String> {
    let cap = Limits::default().for_archive(len).max_bytes;
    let stream = GzDecoder::new(BufReader::new(file)).take(cap.saturating_add(1));
    let mut tar = tar::Archive::new(stream);
    let mut entries = Vec::new();
    let read_error = |e: io::Error| format!("it does not read to its end as gzip and tar: {e}");
    for entry in tar.entries().map_err(read_error)? {
        let entry = entry.map_err(read_error)?;
        let name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        entries.push((name, entry.header().entry_type().is_dir()));
    }
    // The tar ends at its end marker; the gzip trailer after it is checked by reading on.
    let mut rest = tar.into_inner();
    io::copy(&mut rest, &mut io::sink()).map_err(read_error)?;
    if rest.limit() == 0 {
        return Err(format!(
            "it unpacks to more than {}, past what the unpacker accepts from it",
            ct2v_support::units::human_size(cap)
        ));
    }
    Ok(entries)
}

/// The 7z's entries, once its header (at the end of the file, so the first thing a cut
/// loses) reads.
fn seven_z_entries(file: File) -> Result<Vec<Entry>, String> {
    use sevenz_rust2::{Archive, Password};
    let archive = Archive::read_with_memory_limit(
        &mut BufReader::new(file),
        &Password::empty(),
        SEVEN_Z_MEMORY_LIMIT_KB,
    )
    .map_err(|e| format!("its 7z header does not read: {e}"))?;
    Ok(archive
        .files
        .iter()
        .map(|e| (e.name().to_string(), e.is_directory()))
        .collect())
}

/// Whether the listing holds every `expect` path below `subdir`, as the unpacked folder must
/// (a trailing `/`: a folder).
fn missing_expected(entries: &[Entry], claim: &Claim) -> Result<(), String> {
    let parts = |name: &str| -> Vec<String> {
        name.split(['/', '\\'])
            .filter(|p| !p.is_empty() && *p != ".")
            .map(str::to_string)
            .collect()
    };
    let subdir = claim.subdir.map(parts);
    let below: Vec<(Vec<String>, bool)> = entries
        .iter()
        .filter_map(|(name, is_dir)| {
            let all = parts(name);
            let rest = match subdir.as_deref() {
                Some([any]) if any == ANY_TOP_FOLDER => all.get(1..)?,
                Some(sub) => all.strip_prefix(sub)?,
                None => &all[..],
            };
            Some((rest.to_vec(), *is_dir || name.ends_with('/')))
        })
        .collect();
    let missing: Vec<String> = claim
        .expect
        .iter()
        .filter(|expected| {
            let want = parts(expected);
            let folder = expected.ends_with('/');
            !below.iter().any(|(have, is_dir)| {
                (have.len() > want.len() && folder && have.starts_with(&want))
                    || (*have == want && *is_dir == folder)
            })
        })
        .map(|m| format!("`{m}`"))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let inside = match claim.subdir {
        None => "at its top".to_string(),
        Some(ANY_TOP_FOLDER) => "in its top folder".to_string(),
        Some(s) => format!("in its folder `{s}`"),
    };
    Err(format!(
        "the archive does not hold what the variant expects {inside}: {} missing (expected: \
         {}). Its layout differs from the one the variant was written for: list it (7z l / \
         unzip -l) and set the input's `subdir` and `expect` to match",
        missing.join(", "),
        claim.expect.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::io::Write;

    use flate2::Compression;
    use flate2::write::GzEncoder;
    use tempfile::TempDir;

    const URL: &str = "https://example.org/files/input";

    /// Bytes that do not compress, so that a cut lands inside the compressed data.
    fn noise(len: usize, seed: u32) -> Vec<u8> {
        (0..len as u32)
            .map(|i| (i.wrapping_add(seed).wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect()
    }

    fn zip_bytes(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut writer = zip::ZipWriter::new(io::Cursor::new(Vec::new()));
        for (name, data) in entries {
            let options = zip::write::SimpleFileOptions::default();
            writer.start_file(*name, options).unwrap();
            writer.write_all(data).unwrap();
        }
        writer.finish().unwrap().into_inner()
    }

    fn tar_gz_bytes(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut builder = tar::Builder::new(GzEncoder::new(Vec::new(), Compression::fast()));
        for (name, data) in entries {
            let mut header = tar::Header::new_gnu();
            header.set_size(data.len() as u64);
            header.set_mode(0o644);
            builder.append_data(&mut header, name, *data).unwrap();
        }
        builder.into_inner().unwrap().finish().unwrap()
    }

    /// A `.7z` as the community rocBLAS assets are: one top folder, BCJ then LZMA2.
    fn seven_z_bytes(dir: &TempDir, entries: &[(&str, Option<&[u8]>)]) -> Vec<u8> {
        use sevenz_rust2::{ArchiveEntry, ArchiveWriter, EncoderMethod};
        let path = dir.path().join("made.7z");
        let mut writer = ArchiveWriter::create(&path).unwrap();
        writer.set_content_methods(vec![
            EncoderMethod::BCJ_X86_FILTER.into(),
            EncoderMethod::LZMA2.into(),
        ]);
        for (name, data) in entries {
            match data {
                Some(data) => writer
                    .push_archive_entry(ArchiveEntry::new_file(name), Some(*data))
                    .unwrap(),
                None => writer
                    .push_archive_entry::<&[u8]>(ArchiveEntry::new_directory(name), None)
                    .unwrap(),
            };
        }
        writer.finish().unwrap();
        std::fs::read(&path).unwrap()
    }

    /// A minimal PE (PE32+ when `wide`, else PE32): one section whose data is the file's
    /// second 512 bytes, and a certificate table appended after it when `signed`.
    fn pe_bytes(wide: bool, signed: bool) -> Vec<u8> {
        let put16 =
            |b: &mut Vec<u8>, at: usize, v: u16| b[at..at + 2].copy_from_slice(&v.to_le_bytes());
        let put32 =
            |b: &mut Vec<u8>, at: usize, v: u32| b[at..at + 4].copy_from_slice(&v.to_le_bytes());
        let mut b = vec![0u8; 0x400];
        b[..2].copy_from_slice(b"MZ");
        put32(&mut b, 0x3c, 0x40);
        b[0x40..0x44].copy_from_slice(b"PE\0\0");
        let optional_size: u16 = if wide { 240 } else { 224 };
        put16(&mut b, 0x44, if wide { 0x8664 } else { 0x14c });
        put16(&mut b, 0x46, 1);
        put16(&mut b, 0x54, optional_size);
        put16(&mut b, 0x56, 0x0102);
        let opt = 0x58;
        put16(&mut b, opt, if wide { 0x20b } else { 0x10b });
        put32(&mut b, opt + 32, 0x1000);
        put32(&mut b, opt + 36, 0x200);
        put32(&mut b, opt + 56, 0x2000);
        put32(&mut b, opt + 60, 0x200);
        let directories = opt + if wide { 112 } else { 96 };
        put32(&mut b, directories - 4, 16);
        if signed {
            put32(&mut b, directories + 8 * 4, 0x400);
            put32(&mut b, directories + 8 * 4 + 4, 0x100);
            b.resize(0x500, 0xab);
        }
        let section = opt + usize::from(optional_size);
        b[section..section + 5].copy_from_slice(b".text");
        put32(&mut b, section + 8, 0x200);
        put32(&mut b, section + 12, 0x1000);
        put32(&mut b, section + 16, 0x200);
        put32(&mut b, section + 20, 0x200);
        b
    }

    /// Writes `bytes` as `name` and checks it as `Kind::from_name(name)` claims.
    fn check_as(
        dir: &TempDir,
        name: &str,
        bytes: &[u8],
        subdir: Option<&str>,
        expect: &[String],
    ) -> Result<()> {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let claim = Claim {
            kind: Kind::from_name(name),
            subdir,
            expect,
        };
        check(&path, &format!("{URL}/{name}"), &claim)
    }

    /// One good file of every kind the variants download, by name.
    fn good_files(dir: &TempDir) -> Vec<(&'static str, Vec<u8>)> {
        let data = noise(40_000, 1);
        vec![
            (
                "w-1.0-py3-none-win_amd64.whl",
                zip_bytes(&[("w/__init__.py", b""), ("w/lib.dll", &data)]),
            ),
            (
                "rocm-python-wheels-Windows.zip",
                zip_bytes(&[("a.whl", &data)]),
            ),
            (
                "v4.7.1.tar.gz",
                tar_gz_bytes(&[("src/a.c", &data), ("src/b.h", b"int b;")]),
            ),
            ("x.tgz", tar_gz_bytes(&[("x", &data)])),
            (
                "ct2rs-0.9.17.crate",
                tar_gz_bytes(&[("ct2rs-0.9.17/Cargo.toml", &data)]),
            ),
            (
                "rocm.gfx1031.7z",
                seven_z_bytes(dir, &[("top", None), ("top/rocblas.dll", Some(&data))]),
            ),
            ("setup64.exe", pe_bytes(true, false)),
            ("setup32.exe", pe_bytes(false, true)),
            ("notes.bin", data.clone()),
        ]
    }

    #[test]
    fn a_whole_file_of_each_kind_is_accepted() {
        let dir = TempDir::new().unwrap();
        for (name, bytes) in good_files(&dir) {
            check_as(&dir, name, &bytes, None, &[]).unwrap_or_else(|e| panic!("{name}: {e:#}"));
        }
    }

    #[test]
    fn a_page_is_refused_for_every_kind_naming_the_url_and_its_first_bytes() {
        let dir = TempDir::new().unwrap();
        let pages: [&[u8]; 5] = [
            b"<!DOCTYPE html>\n<html><body>Not Found</body></html>",
            b"\xEF\xBB\xBF  \r\n<HTML lang=en>",
            b"<?xml version=\"1.0\"?><Error><Code>AccessDenied</Code></Error>",
            b"\n {\"message\": \"Bad credentials\"}",
            b"<html>\x1b[31m",
        ];
        for (name, _) in good_files(&dir) {
            for page in pages {
                let e = check_as(&dir, name, page, None, &[])
                    .unwrap_err()
                    .to_string();
                assert!(
                    e.contains(&format!("{URL}/{name} answered with a page")),
                    "{e}"
                );
                let shown = page[..page.len().min(SHOWN_BYTES)]
                    .escape_ascii()
                    .to_string();
                assert!(e.contains(&shown), "{e}");
                assert!(!e.contains('\x1b'), "escaped: {e}");
            }
        }
    }

    #[test]
    fn a_truncated_file_of_each_kind_is_refused() {
        let dir = TempDir::new().unwrap();
        for (name, bytes) in good_files(&dir) {
            if name.ends_with(".bin") {
                continue;
            }
            let len = bytes.len();
            for cut in [len - 1, len - 40, len * 3 / 4, len / 2, 70, 10] {
                let e = check_as(&dir, name, &bytes[..cut], None, &[])
                    .expect_err(&format!("{name} cut to {cut} of {len} bytes"))
                    .to_string();
                assert!(e.contains(&format!("{URL}/{name} is not a")), "{e}");
                assert!(
                    e.contains(&format!("({cut} bytes")) && e.contains("Not pinned"),
                    "{e}"
                );
            }
        }
    }

    #[test]
    fn a_program_whose_sections_or_signature_pass_its_end_is_named_truncated() {
        let dir = TempDir::new().unwrap();
        let unsigned = pe_bytes(true, false);
        let e = check_as(&dir, "a.exe", &unsigned[..0x300], None, &[]).unwrap_err();
        assert!(e.to_string().contains("section `.text"), "{e}");
        let signed = pe_bytes(false, true);
        let e = check_as(&dir, "a.exe", &signed[..0x480], None, &[]).unwrap_err();
        assert!(
            e.to_string().contains("its signature ends at byte 1280"),
            "{e}"
        );
        let mut far = unsigned.clone();
        far[0x3c..0x40].copy_from_slice(&0x10_0000u32.to_le_bytes());
        let e = check_as(&dir, "a.exe", &far, None, &[]).unwrap_err();
        assert!(
            e.to_string()
                .contains("PE header offset (1048576) is past the end"),
            "{e}"
        );
    }

    #[test]
    fn a_zip_whose_directory_claims_data_past_its_end_is_refused() {
        let dir = TempDir::new().unwrap();
        let mut zip = zip_bytes(&[("a.bin", &noise(5_000, 2))]);
        let central = zip.windows(4).position(|w| w == b"PK\x01\x02").unwrap();
        zip[central + 20..central + 24].copy_from_slice(&60_000u32.to_le_bytes());
        let e = check_as(&dir, "a.zip", &zip, None, &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("entry `a.bin` ends at byte 60"), "{e}");
    }

    #[test]
    fn an_archive_without_the_expected_paths_is_refused_naming_them() {
        let dir = TempDir::new().unwrap();
        let expect = ["rocblas.dll".to_string(), "library/".to_string()];
        let whole = seven_z_bytes(
            &dir,
            &[
                ("rocm gfx1031", None),
                ("rocm gfx1031/rocblas.dll", Some(b"MZ")),
                ("rocm gfx1031/library/TensileLibrary.dat", Some(b"x")),
            ],
        );
        check_as(&dir, "r.7z", &whole, Some("*"), &expect).unwrap();
        let without = seven_z_bytes(
            &dir,
            &[
                ("top/rocblas.dll", Some(b"MZ")),
                ("top/library", Some(b"not a folder")),
            ],
        );
        let e = check_as(&dir, "r.7z", &without, Some("*"), &expect)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/r.7z:") && e.contains("in its top folder: `library/` missing"),
            "{e}"
        );
        let zip = zip_bytes(&[("pkg/library/a.dat", b"x"), ("pkg/rocblas.dll", b"MZ")]);
        check_as(&dir, "r.zip", &zip, Some("pkg"), &expect).unwrap();
        let e = check_as(&dir, "r.zip", &zip, None, &expect)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("at its top: `rocblas.dll`, `library/` missing"),
            "{e}"
        );
    }

    #[test]
    fn the_kind_comes_from_the_file_name() {
        assert_eq!(Kind::from_name("A.WHL"), Kind::Archive(ArchiveFormat::Zip));
        assert_eq!(
            Kind::from_name("a.crate"),
            Kind::Archive(ArchiveFormat::TarGz)
        );
        assert_eq!(
            Kind::from_name("b.7z"),
            Kind::Archive(ArchiveFormat::SevenZ)
        );
        assert_eq!(Kind::from_name("Setup.EXE"), Kind::Exe);
        assert_eq!(Kind::from_name("rocm-sdk-core/"), Kind::Other);
    }
}
