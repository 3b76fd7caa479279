//! `payload::check` against hand-made files of every kind: whole, pages, truncated, damaged
//! inside, wheels whose RECORD lies, bombs.

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

const RECORD: &str = "w-1.0.dist-info/RECORD";

/// A wheel of `files` and the RECORD that lists them, its lines edited by `edit` first.
fn wheel_bytes(files: &[(&str, &[u8])], edit: impl FnOnce(&mut Vec<String>)) -> Vec<u8> {
    use base64::Engine;
    use sha2::{Digest, Sha256};
    let mut lines: Vec<String> = files
        .iter()
        .map(|(name, data)| {
            let digest =
                base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(data));
            format!("{name},sha256={digest},{}", data.len())
        })
        .collect();
    lines.push(format!("{RECORD},,"));
    edit(&mut lines);
    let text = lines.join("\r\n") + "\r\n";
    let mut all = files.to_vec();
    all.push((RECORD, text.as_bytes()));
    zip_bytes(&all)
}

/// A zip of one entry stored as is (no compression), and where its data starts.
fn stored_zip(name: &str, data: &[u8]) -> (Vec<u8>, usize) {
    let mut writer = zip::ZipWriter::new(io::Cursor::new(Vec::new()));
    let options =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    writer.start_file(name, options).unwrap();
    writer.write_all(data).unwrap();
    let bytes = writer.finish().unwrap().into_inner();
    (bytes.clone(), data_start(&bytes))
}

/// Where the first local entry's data starts.
fn data_start(zip: &[u8]) -> usize {
    let u16_at = |at: usize| usize::from(u16::from_le_bytes([zip[at], zip[at + 1]]));
    30 + u16_at(26) + u16_at(28)
}

/// The offset of the first central directory record.
fn central(zip: &[u8]) -> usize {
    zip.windows(4).position(|w| w == b"PK\x01\x02").unwrap()
}

/// The refusal of `bytes` as `name`: a [`BadArchive`], its message.
fn bad_archive(dir: &TempDir, name: &str, bytes: &[u8]) -> String {
    let e = check_as(dir, name, bytes, None, &[]).expect_err(name);
    assert!(e.downcast_ref::<BadArchive>().is_some(), "{name}: {e:#}");
    let text = e.to_string();
    assert!(text.contains(&format!("{URL}/{name} ")), "{text}");
    assert!(text.ends_with("Not pinned"), "{text}");
    assert!(!text.contains("download it again"), "{text}");
    text
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
            wheel_bytes(&[("w/__init__.py", b""), ("w/lib.dll", &data)], |_| {}),
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
fn a_zip_entry_failing_its_crc_or_its_deflate_stream_is_refused_as_damaged() {
    let dir = TempDir::new().unwrap();
    let data = noise(5_000, 3);
    let damaged = |e: &str| e.contains("is a damaged zip archive: entry `a/one.bin`: ");
    let (stored, at) = stored_zip("a/one.bin", &data);
    let mut flipped = stored.clone();
    flipped[at + 2_000] ^= 0x55;
    let e = bad_archive(&dir, "flipped.zip", &flipped);
    assert!(damaged(&e) && e.contains("Invalid checksum"), "{e}");
    let mut crc = stored.clone();
    let c = central(&crc);
    // Both headers agree on a CRC the data does not have.
    crc[c + 16] ^= 0x01;
    crc[14] ^= 0x01;
    let e = bad_archive(&dir, "crc.zip", &crc);
    assert!(damaged(&e) && e.contains("Invalid checksum"), "{e}");
    let mut longer = stored.clone();
    longer[c + 24..c + 28].copy_from_slice(&6_000u32.to_le_bytes());
    let e = bad_archive(&dir, "longer.zip", &longer);
    assert!(damaged(&e), "{e}");
    let mut shorter = stored.clone();
    shorter[c + 24..c + 28].copy_from_slice(&4_000u32.to_le_bytes());
    let e = bad_archive(&dir, "shorter.zip", &shorter);
    assert!(damaged(&e), "{e}");
    let text = b"compressible text, compressible text, compressible text. ".repeat(200);
    let deflated = zip_bytes(&[("a/one.bin", &text)]);
    let at = data_start(&deflated);
    let mut garbage = deflated.clone();
    garbage[at..at + 24].fill(0xff);
    let e = bad_archive(&dir, "garbage.zip", &garbage);
    assert!(damaged(&e) && e.contains("does not read to its end"), "{e}");
    let mut middle = deflated.clone();
    let length = central(&middle) - at;
    middle[at + length / 2] ^= 0x10;
    let e = bad_archive(&dir, "middle.zip", &middle);
    assert!(damaged(&e), "{e}");
    // The local header names another file than the directory does; a name given twice.
    let mut cloaked = stored.clone();
    cloaked[30] = b'b';
    let e = bad_archive(&dir, "cloaked.zip", &cloaked);
    assert!(damaged(&e) && e.contains("it does not open"), "{e}");
    let twice = zip_bytes(&[("a/one.bin", b"x")]);
    let e = bad_archive(
        &dir,
        "twice.zip",
        &overlapping_named(&twice, "a/one.bin", 2, false),
    );
    assert!(e.contains("names one file more than once"), "{e}");
    let as_wheel = bad_archive(&dir, "flipped-1.0-py3-none-any.whl", &flipped);
    assert!(as_wheel.contains("is a damaged wheel: "), "{as_wheel}");
}

#[test]
fn a_wheel_whose_record_lies_about_its_files_is_refused_naming_the_file() {
    let dir = TempDir::new().unwrap();
    let files: [(&str, &[u8]); 3] = [
        ("w/__init__.py", b""),
        ("w/lib.dll", b"MZ library"),
        ("w-1.0.dist-info/METADATA", b"Name: w\n"),
    ];
    let name = "w-1.0-py3-none-any.whl";
    // RECORD's signatures are not in RECORD; folders are no files.
    let mut signed = files.to_vec();
    signed.push(("w-1.0.dist-info/RECORD.jws", b"{}"));
    signed.push(("w-1.0.dist-info/RECORD.p7s", b"sig"));
    signed.push(("w/data/", b""));
    let signed = wheel_bytes(&signed, |lines| {
        lines.retain(|l| !l.contains("RECORD.") && !l.starts_with("w/data/,"))
    });
    check_as(&dir, name, &signed, None, &[]).unwrap();
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (
            wheel_bytes(&files, |lines| {
                lines.retain(|l| !l.starts_with("w/lib.dll,"))
            }),
            "entry `w/lib.dll`: `w/lib.dll` is in the wheel but not in `w-1.0.dist-info/RECORD`",
        ),
        (
            wheel_bytes(&files, |lines| lines.push("w/gone.py,sha256=AAAA,0".into())),
            "`w-1.0.dist-info/RECORD` lists `w/gone.py`, which is not in the wheel",
        ),
        (
            wheel_bytes(&files, |lines| {
                lines[1] = lines[1].replacen("sha256=", "sha256=AAAA", 1);
            }),
            "entry `w/lib.dll`: `w/lib.dll` has sha256=",
        ),
        (
            wheel_bytes(&files, |lines| lines[1] = lines[1].replace(",10", ",11")),
            "`w/lib.dll` is 10 bytes, where RECORD says 11",
        ),
        (
            wheel_bytes(&files, |lines| lines[1] = "w/lib.dll,md5=AAAA,10".into()),
            "is hashed with `md5`, where a wheel's RECORD uses sha256 or better",
        ),
        (
            wheel_bytes(&files, |lines| lines[0] = "w/__init__.py,,0".into()),
            "`w/__init__.py` has no hash",
        ),
        (
            zip_bytes(&files),
            "it has no `<name>.dist-info/RECORD`, which every wheel holds",
        ),
    ];
    for (bytes, said) in cases {
        let e = bad_archive(&dir, name, &bytes);
        assert!(
            e.contains("is a damaged wheel: ") && e.contains(said),
            "{said}: {e}"
        );
    }
    // The same bytes named .zip are not held to a wheel's rules.
    let unlisted = wheel_bytes(&files, |lines| {
        lines.retain(|l| !l.starts_with("w/lib.dll,"))
    });
    check_as(&dir, "w.zip", &unlisted, None, &[]).unwrap();
}

#[test]
fn a_tar_gz_or_7z_damaged_inside_is_refused_naming_the_entry() {
    let dir = TempDir::new().unwrap();
    let data = noise(40_000, 5);
    let good = tar_gz_bytes(&[("src/a.c", &data), ("src/b.h", &data)]);
    let len = good.len();
    let trailer = "tar: after its last entry, the gzip stream's CRC or length";
    for (what, at, said) in [
        ("its CRC", len - 8, trailer),
        ("its length", len - 4, trailer),
        // Inside a stored block only the CRC shows it; where it breaks a code, the
        // entry being read is named.
        ("a byte inside", len / 2, "tar: "),
    ] {
        let mut bad = good.clone();
        bad[at] ^= 0x20;
        let e = bad_archive(&dir, "v1.tar.gz", &bad);
        assert!(
            e.contains("is a damaged gzip-compressed tar: ") && e.contains(said),
            "{what}: {e}"
        );
    }
    let text = b"int compressible(void) { return 0; }\n".repeat(2_000);
    let coded = tar_gz_bytes(&[("src/a.c", &text), ("src/b.c", &text)]);
    let mut broken = coded.clone();
    broken[coded.len() / 2] ^= 0x20;
    let e = bad_archive(&dir, "coded.tar.gz", &broken);
    assert!(e.contains("is a damaged gzip-compressed tar: "), "{e}");
    let seven = seven_z_bytes(&dir, &[("top", None), ("top/a.dll", Some(&data))]);
    let mut bad = seven.clone();
    // Inside the packed streams, which lie between the signature header and the header.
    bad[32 + (seven.len() - 32) / 4] ^= 0x20;
    let e = bad_archive(&dir, "r.7z", &bad);
    assert!(e.contains("is a damaged 7z archive: "), "{e}");
}

#[test]
fn an_archive_bomb_is_named_as_one_in_every_format() {
    let dir = TempDir::new().unwrap();
    let zeros = vec![0u8; 70 << 20];
    let said = |e: &str| {
        e.contains("expands past the limit of ")
            && e.contains("an archive bomb or a larger archive than allowed")
            && !e.contains("damaged")
    };
    let zip = zip_bytes(&[("z.bin", &zeros)]);
    let e = bad_archive(&dir, "bomb.zip", &zip);
    assert!(said(&e) && e.contains("(stopped at entry `z.bin`)"), "{e}");
    assert!(e.contains("the limit of 67108864 bytes"), "{e}");
    let e = bad_archive(&dir, "bomb-1.0-py3-none-any.whl", &zip);
    assert!(said(&e), "{e}");
    let tar = tar_gz_bytes(&[("z.bin", &zeros)]);
    let e = bad_archive(&dir, "bomb.tar.gz", &tar);
    assert!(said(&e) && e.contains("`z.bin`"), "{e}");
    let seven = seven_z_bytes(&dir, &[("top", None), ("top/z.bin", Some(&zeros))]);
    let e = bad_archive(&dir, "bomb.7z", &seven);
    assert!(said(&e), "{e}");
    // Entries that share one compressed stream, each declaring what it inflates to.
    let ten = vec![0u8; 10 << 20];
    let one = zip_bytes(&[("s0.bin", &ten)]);
    let e = bad_archive(&dir, "shared.zip", &overlapping(&one, 8));
    assert!(said(&e) && e.contains("`s6.bin`"), "{e}");
}

/// `zip` (one entry named `s0.bin`) with its central record repeated `copies` times, each
/// copy named `s<i>.bin` and pointing at the same data.
fn overlapping(zip: &[u8], copies: u8) -> Vec<u8> {
    overlapping_named(zip, "s0.bin", copies, true)
}

/// `zip` (one entry named `name`) with its central record repeated `copies` times, each
/// pointing at the same data; named apart (its second character the copy's number) when
/// `apart`.
fn overlapping_named(zip: &[u8], name: &str, copies: u8, apart: bool) -> Vec<u8> {
    let c = central(zip);
    let end = zip.windows(4).rposition(|w| w == b"PK\x05\x06").unwrap();
    let record = &zip[c..end];
    let mut out = zip[..c].to_vec();
    for i in 0..copies {
        let mut copy = record.to_vec();
        if apart {
            let at = copy
                .windows(name.len())
                .position(|w| w == name.as_bytes())
                .unwrap();
            copy[at + 1] = b'0' + i;
        }
        out.extend_from_slice(&copy);
    }
    let size = (record.len() * usize::from(copies)) as u32;
    let mut eocd = zip[end..].to_vec();
    eocd[8..10].copy_from_slice(&u16::from(copies).to_le_bytes());
    eocd[10..12].copy_from_slice(&u16::from(copies).to_le_bytes());
    eocd[12..16].copy_from_slice(&size.to_le_bytes());
    out.extend_from_slice(&eocd);
    out
}

#[test]
fn the_kind_comes_from_the_file_name() {
    assert_eq!(Kind::from_name("A.WHL"), Kind::Wheel);
    assert_eq!(Kind::from_name("a.ZIP"), Kind::Archive(ArchiveFormat::Zip));
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
