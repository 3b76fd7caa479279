//! The unpacker against hand-made archives: layouts, links, hostile names, bombs, limits.

use super::*;
use ct2v_support::report::Reporter;

use flate2::Compression;
use flate2::write::GzEncoder;
use std::io::Write;
use tar::{EntryType, Header};
use tempfile::TempDir;
use zip::write::SimpleFileOptions;
use zip::{ZipArchive, ZipWriter};

/// One tar member, written with raw header fields so that bad names get through.
enum Member<'a> {
    Regular(&'a str, u32, &'a [u8]),
    Dir(&'a str),
    Symlink(&'a str, &'a str),
    Hardlink(&'a str, &'a str),
    Char(&'a str),
    /// `pax_global_header`, as `git archive` and GitHub tarballs start.
    PaxGlobal(&'a [u8]),
}
use Member::*;

fn header(kind: EntryType, name: &str, link: &str, mode: u32, size: u64) -> Header {
    let mut header = Header::new_gnu();
    let old = header.as_old_mut();
    old.name[..name.len()].copy_from_slice(name.as_bytes());
    old.linkname[..link.len()].copy_from_slice(link.as_bytes());
    header.set_entry_type(kind);
    header.set_mode(mode);
    header.set_size(size);
    header.set_mtime(0);
    header.set_cksum();
    header
}

fn tar_bytes(members: &[Member]) -> Vec<u8> {
    let mut builder = tar::Builder::new(GzEncoder::new(Vec::new(), Compression::fast()));
    for member in members {
        let (h, data): (Header, &[u8]) = match *member {
            Regular(name, mode, data) => (
                header(EntryType::Regular, name, "", mode, data.len() as u64),
                data,
            ),
            Dir(name) => (header(EntryType::Directory, name, "", 0o755, 0), &[]),
            Symlink(name, to) => (header(EntryType::Symlink, name, to, 0o777, 0), &[]),
            Hardlink(name, to) => (header(EntryType::Link, name, to, 0o644, 0), &[]),
            Char(name) => (header(EntryType::Char, name, "", 0o644, 0), &[]),
            PaxGlobal(data) => (
                header(
                    EntryType::XGlobalHeader,
                    "pax_global_header",
                    "",
                    0o644,
                    data.len() as u64,
                ),
                data,
            ),
        };
        builder.append(&h, data).unwrap();
    }
    builder.into_inner().unwrap().finish().unwrap()
}

fn tar_gz(dir: &TempDir, members: &[Member]) -> PathBuf {
    let path = dir.path().join("in.tar.gz");
    fs::write(&path, tar_bytes(members)).unwrap();
    path
}

fn zip_file(dir: &TempDir, name: &str, build: impl FnOnce(&mut ZipWriter<File>)) -> PathBuf {
    let path = dir.path().join(name);
    let mut writer = ZipWriter::new(File::create(&path).unwrap());
    build(&mut writer);
    writer.finish().unwrap();
    path
}

fn zip_entry(writer: &mut ZipWriter<File>, name: &str, mode: u32, data: &[u8]) {
    let options = SimpleFileOptions::default().unix_permissions(mode);
    writer.start_file(name, options).unwrap();
    writer.write_all(data).unwrap();
}

fn leftovers(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".unpack-"))
        .collect()
}

/// [`unpack`] with the default limits, what it says kept in memory.
fn unpack_plain(
    archive: &Path,
    format: ArchiveFormat,
    subdir: Option<&str>,
    dest: &Path,
) -> Result<Unpacked, UnpackError> {
    unpack(
        archive,
        format,
        subdir,
        dest,
        &Limits::default(),
        &Reporter::captured(),
    )
}

/// Unpacks into a fresh `out`, expecting an error, nothing at `out` and nothing left over.
fn refused(dir: &TempDir, archive: &Path, format: ArchiveFormat, limits: &Limits) -> UnpackError {
    let out = dir.path().join("out");
    let err = unpack(archive, format, None, &out, limits, &Reporter::captured()).unwrap_err();
    assert!(!out.exists(), "{} should not exist", out.display());
    assert_eq!(leftovers(dir.path()), Vec::<String>::new());
    err
}

/// [`refused`] of a `.tar.gz` of `members`, with the default limits.
fn tar_refused(dir: &TempDir, members: &[Member]) -> UnpackError {
    let archive = tar_gz(dir, members);
    refused(dir, &archive, ArchiveFormat::TarGz, &Limits::default())
}

/// [`refused`] of a zip named `name` that `build` writes, with the default limits.
fn zip_refused(dir: &TempDir, name: &str, build: impl FnOnce(&mut ZipWriter<File>)) -> UnpackError {
    let archive = zip_file(dir, name, build);
    refused(dir, &archive, ArchiveFormat::Zip, &Limits::default())
}

fn reason(err: &UnpackError) -> &Refusal {
    match err {
        UnpackError::Refused { reason, .. } => reason,
        other => panic!("expected a refusal, got: {other}"),
    }
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn format_follows_the_file_name() {
    assert_eq!(
        ArchiveFormat::from_name("ct2rs-0.9.17.crate"),
        Some(ArchiveFormat::TarGz)
    );
    assert_eq!(
        ArchiveFormat::from_name("x-1.0.tar.gz"),
        Some(ArchiveFormat::TarGz)
    );
    assert_eq!(
        ArchiveFormat::from_name("X.TGZ"),
        Some(ArchiveFormat::TarGz)
    );
    assert_eq!(ArchiveFormat::from_name("a.zip"), Some(ArchiveFormat::Zip));
    assert_eq!(
        ArchiveFormat::from_name("ctranslate2-4.6.0-cp312-none-any.whl"),
        Some(ArchiveFormat::Zip)
    );
    assert_eq!(ArchiveFormat::from_name("a.tar.xz"), None);
    assert_eq!(Limits::default().max_bytes, 16 * 1024 * 1024 * 1024);
}

#[test]
fn tar_gz_unpacks_nested_folders_exec_bits_and_inner_symlinks() {
    let dir = TempDir::new().unwrap();
    let archive = tar_gz(
        &dir,
        &[
            PaxGlobal(b"52 comment=0123456789abcdef0123456789abcdef01234567\n"),
            Dir("pkg/"),
            Regular("pkg/README", 0o644, b"hello"),
            Regular("pkg/bin/run.sh", 0o755, b"#!/bin/sh\n"),
            Symlink("pkg/bin/readme", "../README"),
            Regular("./pkg/deep/er/x.txt", 0o600, b"x"),
        ],
    );
    let out = dir.path().join("not/yet/there/out");
    let done = unpack_plain(&archive, ArchiveFormat::TarGz, None, &out).unwrap();
    assert_eq!(
        done,
        Unpacked {
            // Windows: and the link's copy, a file of 5 bytes
            files: if cfg!(unix) { 3 } else { 4 },
            bytes: if cfg!(unix) { 16 } else { 21 }
        }
    );
    assert_eq!(fs::read(out.join("pkg/README")).unwrap(), b"hello");
    assert_eq!(fs::read(out.join("pkg/deep/er/x.txt")).unwrap(), b"x");
    assert_eq!(fs::read(out.join("pkg/bin/readme")).unwrap(), b"hello");
    #[cfg(unix)] // Windows: a copy (see Tree::copy_links)
    assert_eq!(
        fs::read_link(out.join("pkg/bin/readme")).unwrap(),
        Path::new("../README")
    );
    #[cfg(unix)]
    {
        assert_eq!(mode(&out.join("pkg/bin/run.sh")), 0o755);
        assert_eq!(mode(&out.join("pkg/README")), 0o644);
        assert_eq!(mode(&out), 0o755);
    }
    assert_eq!(
        leftovers(&dir.path().join("not/yet/there")),
        Vec::<String>::new()
    );
}

#[test]
fn wheel_unpacks_with_exec_bits_and_folders() {
    let dir = TempDir::new().unwrap();
    let archive = zip_file(&dir, "a-1.0-py3-none-any.whl", |w| {
        w.add_directory("a/", SimpleFileOptions::default()).unwrap();
        zip_entry(w, "a/__init__.py", 0o644, b"");
        zip_entry(w, "a/bin/tool", 0o755, b"\x7fELF");
        zip_entry(w, "a-1.0.dist-info/RECORD", 0o644, b"a/__init__.py,,\n");
    });
    let out = dir.path().join("out");
    let done = unpack_plain(&archive, ArchiveFormat::Zip, None, &out).unwrap();
    assert_eq!(done.files, 3);
    assert_eq!(fs::read(out.join("a/bin/tool")).unwrap(), b"\x7fELF");
    #[cfg(unix)]
    assert_eq!(mode(&out.join("a/bin/tool")), 0o755);
}

#[test]
fn subdir_becomes_the_destination() {
    let dir = TempDir::new().unwrap();
    let archive = tar_gz(
        &dir,
        &[
            Regular("ct2rs-0.9.17/Cargo.toml", 0o644, b"[package]"),
            Regular(
                "ct2rs-0.9.17/CTranslate2/CMakeLists.txt",
                0o644,
                b"project()",
            ),
            Regular("ct2rs-0.9.17/CTranslate2/src/a.cc", 0o644, b"int a;"),
            Hardlink(
                "ct2rs-0.9.17/CTranslate2/src/b.cc",
                "ct2rs-0.9.17/CTranslate2/src/a.cc",
            ),
        ],
    );
    let out = dir.path().join("out");
    let subdir = Some("ct2rs-0.9.17/CTranslate2/");
    let done = unpack_plain(&archive, ArchiveFormat::TarGz, subdir, &out).unwrap();
    assert_eq!(
        done,
        Unpacked {
            files: 3,
            bytes: 15
        }
    );
    assert_eq!(fs::read(out.join("CMakeLists.txt")).unwrap(), b"project()");
    assert_eq!(fs::read(out.join("src/b.cc")).unwrap(), b"int a;");
    assert!(!out.join("Cargo.toml").exists());
}

#[test]
fn missing_subdir_lists_the_top_level_entries() {
    let dir = TempDir::new().unwrap();
    let archive = tar_gz(
        &dir,
        &[
            Regular("ct2rs-0.9.17/Cargo.toml", 0o644, b""),
            Regular("README", 0o644, b""),
        ],
    );
    let out = dir.path().join("out");
    let err = unpack_plain(
        &archive,
        ArchiveFormat::TarGz,
        Some("ct2rs-0.9.17/CTranslate2"),
        &out,
    )
    .unwrap_err();
    assert!(matches!(err, UnpackError::NoSubdir { .. }), "{err}");
    let message = err.to_string();
    assert!(
        message.contains("no folder `ct2rs-0.9.17/CTranslate2`"),
        "{message}"
    );
    assert!(message.contains("`ct2rs-0.9.17`, `README`"), "{message}");
    assert!(!out.exists());
    assert_eq!(leftovers(dir.path()), Vec::<String>::new());
    let err = unpack_plain(&archive, ArchiveFormat::TarGz, Some("../x"), &out).unwrap_err();
    assert!(matches!(err, UnpackError::BadSubdir { .. }), "{err}");
}

#[test]
fn parent_components_in_a_tar_are_refused() {
    let dir = TempDir::new().unwrap();
    let err = tar_refused(
        &dir,
        &[
            Regular("pkg/ok", 0o644, b"ok"),
            Regular("pkg/../../evil", 0o644, b"x"),
        ],
    );
    assert_eq!(reason(&err), &Refusal::Escapes);
    assert!(!dir.path().join("evil").exists());
    let message = err.to_string();
    assert!(
        message.starts_with("refusing entry `pkg/../../evil` in "),
        "{message}"
    );
    assert!(
        message.ends_with("in.tar.gz: it points outside the archive"),
        "{message}"
    );
}

#[test]
fn parent_components_in_a_wheel_are_refused() {
    let dir = TempDir::new().unwrap();
    let err = zip_refused(&dir, "a.whl", |w| {
        zip_entry(w, "a/__init__.py", 0o644, b"");
        zip_entry(w, "../evil", 0o644, b"x");
    });
    assert_eq!(reason(&err), &Refusal::Escapes);
    assert!(
        err.to_string().contains("refusing entry `../evil` in "),
        "{err}"
    );
    let err = zip_refused(&dir, "b.whl", |w| {
        zip_entry(w, "a\\..\\..\\evil", 0o644, b"")
    });
    assert_eq!(reason(&err), &Refusal::Escapes);
}

#[test]
fn absolute_paths_are_refused() {
    let dir = TempDir::new().unwrap();
    let err = tar_refused(&dir, &[Regular("/tmp/evil", 0o644, b"x")]);
    assert_eq!(reason(&err), &Refusal::Absolute);
    for name in ["C:\\evil", "\\evil", "c:/evil"] {
        let err = zip_refused(&dir, "a.zip", |w| zip_entry(w, name, 0o644, b"x"));
        assert_eq!(reason(&err), &Refusal::Absolute, "{name}");
    }
}

#[test]
fn symlinks_leaving_the_tree_are_refused() {
    let dir = TempDir::new().unwrap();
    let cases: [(&[Member], Refusal); 3] = [
        (
            &[Symlink("pkg/link", "../../outside")],
            Refusal::LinkEscapes {
                target: "../../outside".into(),
            },
        ),
        (
            &[Symlink("pkg/link", "/etc/passwd")],
            Refusal::LinkAbsolute {
                target: "/etc/passwd".into(),
            },
        ),
        // Each link stays inside on its own; followed through `up`, the second leaves.
        (
            &[Symlink("a/b/t", "up/.."), Symlink("a/b/up", "../..")],
            Refusal::LinkEscapes {
                target: "up/..".into(),
            },
        ),
    ];
    for (members, expected) in cases {
        let err = tar_refused(&dir, members);
        assert_eq!(reason(&err), &expected);
    }
}

#[test]
fn writing_through_a_symlink_is_refused() {
    let dir = TempDir::new().unwrap();
    let err = tar_refused(
        &dir,
        &[
            Dir("pkg/real/"),
            Symlink("pkg/alias", "real"),
            Regular("pkg/alias/x", 0o644, b"x"),
        ],
    );
    assert_eq!(
        reason(&err),
        &Refusal::UnderSymlink {
            link: "pkg/alias".into()
        }
    );
}

#[test]
fn zip_symlinks_leaving_the_tree_are_refused() {
    let dir = TempDir::new().unwrap();
    let err = zip_refused(&dir, "a.whl", |w| {
        w.add_symlink("a/link", "../../outside", SimpleFileOptions::default())
            .unwrap();
    });
    assert_eq!(
        reason(&err),
        &Refusal::LinkEscapes {
            target: "../../outside".into()
        }
    );
}

#[test]
fn hardlinks_outside_or_ahead_are_refused() {
    let dir = TempDir::new().unwrap();
    let cases: [(&[Member], Refusal); 3] = [
        (
            &[Hardlink("pkg/link", "../outside")],
            Refusal::LinkEscapes {
                target: "../outside".into(),
            },
        ),
        (
            &[Hardlink("pkg/link", "/etc/passwd")],
            Refusal::LinkAbsolute {
                target: "/etc/passwd".into(),
            },
        ),
        (
            &[
                Hardlink("pkg/link", "pkg/later"),
                Regular("pkg/later", 0o644, b"x"),
            ],
            Refusal::HardlinkMissing {
                target: "pkg/later".into(),
            },
        ),
    ];
    for (members, expected) in cases {
        let err = tar_refused(&dir, members);
        assert_eq!(reason(&err), &expected);
    }
}

#[test]
fn device_entries_are_refused() {
    let dir = TempDir::new().unwrap();
    let err = tar_refused(&dir, &[Regular("pkg/ok", 0o644, b"ok"), Char("pkg/null")]);
    assert_eq!(
        reason(&err),
        &Refusal::Unsupported {
            kind: "character device".into()
        }
    );
}

#[test]
fn zip_bomb_stops_at_the_byte_limit() {
    let dir = TempDir::new().unwrap();
    let zeros = vec![0u8; 1 << 20];
    let archive = zip_file(&dir, "bomb.zip", |w| {
        for i in 0..10 {
            zip_entry(w, &format!("zeros{i}"), 0o644, &zeros);
        }
    });
    assert!(fs::metadata(&archive).unwrap().len() < 100_000);
    let limits = Limits {
        max_bytes: 1 << 20,
        ..Limits::default()
    };
    let err = refused(&dir, &archive, ArchiveFormat::Zip, &limits);
    assert!(
        matches!(
            err,
            UnpackError::TooLarge {
                limit: 1_048_576,
                ..
            }
        ),
        "{err}"
    );
    assert!(
        err.to_string().contains("stopped at entry `zeros1`"),
        "{err}"
    );
}

/// A small zip whose entries declare far more than it could hold (as
/// entries sharing one deflate stream do) fails before anything is written.
#[test]
fn a_small_zip_declaring_a_huge_unpacked_size_fails_before_writing() {
    let dir = TempDir::new().unwrap();
    let one = zip_file(&dir, "one.zip", |w| {
        let options =
            SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        w.start_file("zeros", options).unwrap();
        w.write_all(&vec![0u8; 1 << 20]).unwrap();
    });
    let archive = zip_file(&dir, "bomb.zip", |w| {
        let mut source = ZipArchive::new(File::open(&one).unwrap()).unwrap();
        for i in 0..241 {
            let entry = source.by_index_raw(0).unwrap();
            w.raw_copy_file_rename(entry, format!("zeros{i}")).unwrap();
        }
    });
    let size = fs::metadata(&archive).unwrap().len();
    assert!(size < 1 << 20, "{size}");
    let err = refused(&dir, &archive, ArchiveFormat::Zip, &Limits::default());
    let UnpackError::TooLarge { limit, .. } = err else {
        panic!("{err}");
    };
    assert_eq!(limit, 64 << 20, "the ratio cap, not 16 GiB");
}

/// A tar stream past the ratio stops there.
#[test]
fn a_tar_past_the_ratio_stops() {
    let dir = TempDir::new().unwrap();
    let zeros = vec![0u8; 1 << 20];
    let archive = tar_gz(&dir, &[Regular("pkg/zeros", 0o644, &zeros)]);
    let limits = Limits {
        max_ratio: 10,
        ratio_floor: 0,
        ..Limits::default()
    };
    let err = refused(&dir, &archive, ArchiveFormat::TarGz, &limits);
    assert!(matches!(err, UnpackError::TooLarge { .. }), "{err}");
}

/// Names that are safe on Linux but not on Windows are refused on
/// every host.
#[test]
fn drive_prefixes_streams_and_device_names_are_refused_everywhere() {
    for name in [
        "pkg/C:evil",
        "pkg/a.txt:stream",
        "pkg/NUL",
        "pkg/com1.txt",
        "C:evil",
    ] {
        let dir = TempDir::new().unwrap();
        let err = tar_refused(&dir, &[Regular(name, 0o644, b"x")]);
        assert!(
            matches!(
                reason(&err),
                Refusal::WindowsName { .. } | Refusal::Absolute
            ),
            "{name}: {err}"
        );
        let err = zip_refused(&dir, "w.zip", |w| zip_entry(w, name, 0o644, b"x"));
        assert!(
            matches!(
                reason(&err),
                Refusal::WindowsName { .. } | Refusal::Absolute
            ),
            "{name}: {err}"
        );
    }
}

/// What a Windows file system makes of names. Trailing dots and spaces are
/// refused everywhere (Windows drops them); names that differ only in case, and paths
/// past MAX_PATH while long paths are off, where the limits say so (on Windows by
/// default, here by asking).
#[test]
fn windows_file_system_limits_are_refused_with_the_entry_named() {
    for name in ["pkg/a.", "pkg/a ", "pkg/dir./x", "pkg/..."] {
        let dir = TempDir::new().unwrap();
        let err = tar_refused(&dir, &[Regular(name, 0o644, b"x")]);
        assert!(
            matches!(reason(&err), Refusal::TrailingDotOrSpace { .. }),
            "{name}: {err}"
        );
    }
    let windows = Limits {
        case_insensitive: true,
        longest_path: Some(ct2v_support::longpaths::LONGEST),
        ..Limits::default()
    };
    let dir = TempDir::new().unwrap();
    let case = tar_gz(
        &dir,
        &[
            Regular("pkg/README", 0o644, b"a"),
            Regular("pkg/readme", 0o644, b"b"),
        ],
    );
    let err = refused(&dir, &case, ArchiveFormat::TarGz, &windows);
    assert!(
        matches!(reason(&err), Refusal::CaseClash { other } if other == "pkg/README"),
        "{err}"
    );
    assert!(err.to_string().contains("pkg/readme"), "{err}");
    // Linux keeps both (its file system tells them apart; Windows' cannot).
    #[cfg(unix)]
    {
        let linux = Limits {
            case_insensitive: false,
            ..Limits::default()
        };
        unpack(
            &case,
            ArchiveFormat::TarGz,
            None,
            &dir.path().join("ok"),
            &linux,
            &Reporter::captured(),
        )
        .unwrap();
    }

    let out = dir.path().join("out");
    let room =
        ct2v_support::longpaths::LONGEST - ct2v_support::paths::shown(&out).chars().count() - 1;
    let fits = format!("pkg/{}", "d".repeat(room - 4));
    let too_long = format!("pkg/{}", "d".repeat(room - 3));
    // A zip: a tar header's name holds only 100 bytes.
    let archive = zip_file(&dir, "fits.zip", |w| zip_entry(w, &fits, 0o644, b"x"));
    unpack(
        &archive,
        ArchiveFormat::Zip,
        None,
        &out,
        &windows,
        &Reporter::captured(),
    )
    .unwrap();
    fs::remove_dir_all(&out).unwrap();
    let archive = zip_file(&dir, "long.zip", |w| zip_entry(w, &too_long, 0o644, b"x"));
    let err = refused(&dir, &archive, ArchiveFormat::Zip, &windows);
    let text = err.to_string();
    assert!(
        matches!(reason(&err), Refusal::TooLong { length, .. } if *length == ct2v_support::longpaths::LONGEST + 1),
        "{text}"
    );
    assert!(
        text.contains("LongPathsEnabled /t REG_DWORD /d 1"),
        "{text}"
    );
}

/// A `.tar.gz` of `members` under a 1 MiB byte limit is refused as too large at entry `b`.
fn assert_b_passes_one_mib(dir: &TempDir, members: &[Member]) {
    let archive = tar_gz(dir, members);
    let limits = Limits {
        max_bytes: 1 << 20,
        ..Limits::default()
    };
    let err = refused(dir, &archive, ArchiveFormat::TarGz, &limits);
    assert!(
        matches!(err, UnpackError::TooLarge { ref entry, .. } if entry == "b"),
        "{err}"
    );
}

#[test]
fn tar_over_the_byte_limit_is_refused() {
    let dir = TempDir::new().unwrap();
    let half = vec![0u8; 600 * 1024];
    assert_b_passes_one_mib(
        &dir,
        &[Regular("a", 0o644, &half), Regular("b", 0o644, &half)],
    );
}

#[test]
fn tar_header_claiming_more_than_it_holds_stops_at_the_limit() {
    let dir = TempDir::new().unwrap();
    let mut builder = tar::Builder::new(GzEncoder::new(Vec::new(), Compression::fast()));
    let h = header(EntryType::Regular, "huge", "", 0o644, 1 << 40);
    builder.append(&h, &vec![0u8; 2 << 20][..]).unwrap();
    let bytes = builder.into_inner().unwrap().finish().unwrap();
    let archive = dir.path().join("liar.tgz");
    fs::write(&archive, bytes).unwrap();
    let limits = Limits {
        max_bytes: 1 << 20,
        ..Limits::default()
    };
    let err = refused(&dir, &archive, ArchiveFormat::TarGz, &limits);
    assert!(matches!(err, UnpackError::TooLarge { .. }), "{err}");
    // Under a larger limit the missing data shows as a damaged archive instead.
    let err = refused(&dir, &archive, ArchiveFormat::TarGz, &Limits::default());
    assert!(matches!(err, UnpackError::Read { .. }), "{err}");
}

#[test]
fn too_many_entries_are_refused() {
    let dir = TempDir::new().unwrap();
    let limits = Limits {
        max_entries: 2,
        ..Limits::default()
    };
    let members = [
        Regular("a", 0o644, b""),
        Regular("b", 0o644, b""),
        Regular("c", 0o644, b""),
    ];
    let archive = tar_gz(&dir, &members);
    let err = refused(&dir, &archive, ArchiveFormat::TarGz, &limits);
    assert!(
        matches!(err, UnpackError::TooManyEntries { limit: 2, .. }),
        "{err}"
    );
    let archive = zip_file(&dir, "a.zip", |w| {
        for name in ["a", "b", "c"] {
            zip_entry(w, name, 0o644, b"");
        }
    });
    let err = refused(&dir, &archive, ArchiveFormat::Zip, &limits);
    assert!(matches!(err, UnpackError::TooManyEntries { .. }), "{err}");
}

#[test]
fn truncated_or_garbage_archives_are_read_errors() {
    let dir = TempDir::new().unwrap();
    let data: Vec<u8> = (0..200_000u32).map(|i| (i * 7919 % 251) as u8).collect();
    let whole = tar_bytes(&[
        Regular("pkg/data", 0o644, &data),
        Regular("pkg/z", 0o644, b"z"),
    ]);
    let archive = dir.path().join("cut.crate");
    for cut in [whole.len() / 2, whole.len() - 4] {
        fs::write(&archive, &whole[..cut]).unwrap();
        let err = refused(&dir, &archive, ArchiveFormat::TarGz, &Limits::default());
        assert!(
            matches!(err, UnpackError::Read { .. }),
            "cut at {cut}: {err}"
        );
        assert!(err.to_string().contains("cut.crate"), "{err}");
    }
    fs::write(&archive, b"not a gzip at all").unwrap();
    let err = refused(&dir, &archive, ArchiveFormat::TarGz, &Limits::default());
    assert!(matches!(err, UnpackError::Read { .. }), "{err}");
    let zip = dir.path().join("garbage.whl");
    fs::write(&zip, &whole[..1000]).unwrap();
    let err = refused(&dir, &zip, ArchiveFormat::Zip, &Limits::default());
    assert!(matches!(err, UnpackError::Read { .. }), "{err}");
    let missing = dir.path().join("missing.zip");
    let err = refused(&dir, &missing, ArchiveFormat::Zip, &Limits::default());
    assert!(matches!(err, UnpackError::Open { .. }), "{err}");
}

#[test]
fn existing_destination_survives_a_bad_archive_and_is_replaced_by_a_good_one() {
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("out");
    let old = tar_gz(&dir, &[Regular("old/file", 0o644, b"old")]);
    let recorded = Kept::Recorded;
    unpack_into(
        &old,
        ArchiveFormat::TarGz,
        None,
        &out,
        &Limits::default(),
        recorded,
        &Reporter::captured(),
    )
    .unwrap();

    let bad = tar_gz(
        &dir,
        &[
            Regular("new", 0o644, b"new"),
            Regular("../evil", 0o644, b"x"),
        ],
    );
    let err = unpack_plain(&bad, ArchiveFormat::TarGz, None, &out).unwrap_err();
    assert_eq!(reason(&err), &Refusal::Escapes);
    assert_eq!(fs::read(out.join("old/file")).unwrap(), b"old");
    assert!(!out.join("new").exists());
    assert_eq!(leftovers(dir.path()), Vec::<String>::new());

    let good = tar_gz(&dir, &[Regular("new", 0o644, b"new")]);
    unpack_plain(&good, ArchiveFormat::TarGz, None, &out).unwrap();
    assert_eq!(fs::read(out.join("new")).unwrap(), b"new");
    assert!(!out.join("old").exists());
    assert_eq!(leftovers(dir.path()), Vec::<String>::new());
    // Unrecorded, it is nobody's to replace: refused, naming what it holds.
    let err = unpack_plain(&good, ArchiveFormat::TarGz, None, &out).unwrap_err();
    assert!(!err.is_about_the_archive());
    assert!(
        err.to_string().contains("new: not written by this tool"),
        "{err}"
    );
    assert_eq!(fs::read(out.join("new")).unwrap(), b"new");
}

/// One `.7z` entry for [`seven_z`]: a file, a folder, or a file with raw attributes.
enum Seven<'a> {
    File(&'a str, &'a [u8]),
    Folder(&'a str),
    /// A file whose Windows attributes are given (links: a reparse point, or p7zip's Unix
    /// mode in the high 16 bits with flag 0x8000).
    Attributes(&'a str, u32, &'a [u8]),
}

/// A `.7z` written as the real release assets are (BCJ x86 filter, then LZMA2), or
/// encrypted with AES-256 when `password` is given.
fn seven_z(dir: &TempDir, name: &str, entries: &[Seven], password: Option<&str>) -> PathBuf {
    use sevenz_rust2::encoder_options::AesEncoderOptions;
    use sevenz_rust2::{ArchiveEntry, ArchiveWriter, EncoderMethod, Password};
    let path = dir.path().join(name);
    let mut writer = ArchiveWriter::create(&path).unwrap();
    let mut methods = vec![
        EncoderMethod::BCJ_X86_FILTER.into(),
        EncoderMethod::LZMA2.into(),
    ];
    if let Some(p) = password {
        methods.push(AesEncoderOptions::new(Password::new(p)).into());
    }
    writer.set_content_methods(methods);
    for entry in entries {
        match entry {
            Seven::File(name, data) => {
                writer
                    .push_archive_entry(ArchiveEntry::new_file(name), Some(*data))
                    .unwrap();
            }
            Seven::Folder(name) => {
                writer
                    .push_archive_entry::<&[u8]>(ArchiveEntry::new_directory(name), None)
                    .unwrap();
            }
            Seven::Attributes(name, attributes, data) => {
                let mut e = ArchiveEntry::new_file(name);
                e.has_windows_attributes = true;
                e.windows_attributes = *attributes;
                writer.push_archive_entry(e, Some(*data)).unwrap();
            }
        }
    }
    writer.finish().unwrap();
    path
}

#[test]
fn seven_z_unpacks_folders_and_files_below_the_subdir_asked_for() {
    let dir = TempDir::new().unwrap();
    let archive = seven_z(
        &dir,
        "rocblas.7z",
        &[
            Seven::Folder("rocm gfx1010 for hip sdk 6.2.4"),
            Seven::File("rocm gfx1010 for hip sdk 6.2.4/rocblas.dll", b"MZ rocblas"),
            Seven::Folder("rocm gfx1010 for hip sdk 6.2.4/library"),
            Seven::File(
                "rocm gfx1010 for hip sdk 6.2.4/library/TensileLibrary_lazy_gfx1010.dat",
                b"kernels",
            ),
            Seven::File("README.txt", b"outside the subdir"),
        ],
        None,
    );
    assert_eq!(
        ArchiveFormat::from_name("x.7z"),
        Some(ArchiveFormat::SevenZ)
    );
    let out = dir.path().join("out");
    let done = unpack_plain(
        &archive,
        ArchiveFormat::SevenZ,
        Some("rocm gfx1010 for hip sdk 6.2.4"),
        &out,
    )
    .unwrap();
    assert_eq!(
        done,
        Unpacked {
            files: 2,
            bytes: 17
        }
    );
    assert_eq!(fs::read(out.join("rocblas.dll")).unwrap(), b"MZ rocblas");
    assert_eq!(
        fs::read(out.join("library/TensileLibrary_lazy_gfx1010.dat")).unwrap(),
        b"kernels"
    );
    assert!(!out.join("README.txt").exists());
    assert_eq!(
        longest_member(
            &archive,
            ArchiveFormat::SevenZ,
            Some("rocm gfx1010 for hip sdk 6.2.4")
        )
        .unwrap()
        .as_deref(),
        Some("library/TensileLibrary_lazy_gfx1010.dat")
    );
    // A subdir the archive does not have names what it has.
    let err = unpack_plain(
        &archive,
        ArchiveFormat::SevenZ,
        Some("rocblas"),
        &dir.path().join("o2"),
    )
    .unwrap_err();
    assert!(matches!(err, UnpackError::NoSubdir { .. }), "{err}");
    assert!(
        err.to_string().contains("`rocm gfx1010 for hip sdk 6.2.4`"),
        "{err}"
    );
}

/// Hostile `.7z` archives are refused as zip and tar ones are, writing nothing
/// outside the destination and leaving no staging folder.
#[test]
fn hostile_seven_z_archives_are_refused_and_write_nothing() {
    const LINK_MODE: u32 = (0o120_777 << 16) | 0x8000;
    const REPARSE_POINT: u32 = 0x400;
    let cases: Vec<(&str, Vec<Seven>, &str)> = vec![
        (
            "traversal",
            vec![Seven::File("a/../../evil.txt", b"x")],
            "outside the archive",
        ),
        (
            "backslashes",
            vec![Seven::File("..\\..\\evil.txt", b"x")],
            "outside the archive",
        ),
        (
            "absolute",
            vec![Seven::File("/tmp/evil.txt", b"x")],
            "absolute path",
        ),
        (
            "drive",
            vec![Seven::File("C:\\evil.txt", b"x")],
            "absolute path",
        ),
        ("device", vec![Seven::File("lib/CON", b"x")], "device name"),
        (
            "unix link",
            vec![Seven::Attributes("lib/link", LINK_MODE, b"/etc/passwd")],
            "link",
        ),
        (
            "reparse point",
            vec![Seven::Attributes("lib/junction", REPARSE_POINT, b"")],
            "link",
        ),
    ];
    for (label, entries, said) in cases {
        let dir = TempDir::new().unwrap();
        let archive = seven_z(&dir, "h.7z", &entries, None);
        let err = refused(&dir, &archive, ArchiveFormat::SevenZ, &Limits::default());
        assert!(err.to_string().contains(said), "{label}: {err}");
        assert!(!dir.path().join("evil.txt").exists(), "{label}");
    }

    // A bomb: 65 MiB of zeros (past the 64 MiB floor) in a few KiB, refused from the sizes
    // the header declares, before anything is decompressed.
    let dir = TempDir::new().unwrap();
    let zeros = vec![0u8; 65 << 20];
    let bomb = seven_z(&dir, "bomb.7z", &[Seven::File("zeros.bin", &zeros)], None);
    assert!(fs::metadata(&bomb).unwrap().len() < 1 << 20);
    let err = refused(&dir, &bomb, ArchiveFormat::SevenZ, &Limits::default());
    assert!(
        matches!(err, UnpackError::TooLarge { ref entry, .. } if entry == "zeros.bin"),
        "{err}"
    );

    // Truncated: the header (at the end) is gone.
    let dir = TempDir::new().unwrap();
    let whole = seven_z(
        &dir,
        "whole.7z",
        &[Seven::File("a.txt", &[7u8; 50_000])],
        None,
    );
    let bytes = fs::read(&whole).unwrap();
    let cut = dir.path().join("cut.7z");
    fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    fs::remove_file(&whole).unwrap();
    let err = refused(&dir, &cut, ArchiveFormat::SevenZ, &Limits::default());
    assert!(matches!(err, UnpackError::Read { .. }), "{err}");
    assert!(err.to_string().contains("as a 7z archive"), "{err}");

    // Damaged data: one byte of the compressed stream changed (the CRC catches it).
    let dir = TempDir::new().unwrap();
    let good = seven_z(
        &dir,
        "good.7z",
        &[Seven::File("a.txt", &[7u8; 50_000])],
        None,
    );
    let mut bytes = fs::read(&good).unwrap();
    bytes[40] ^= 0xff;
    fs::write(&good, &bytes).unwrap();
    let err = refused(&dir, &good, ArchiveFormat::SevenZ, &Limits::default());
    assert!(matches!(err, UnpackError::Read { .. }), "{err}");

    // Encrypted.
    let dir = TempDir::new().unwrap();
    let secret = seven_z(
        &dir,
        "secret.7z",
        &[Seven::File("a.txt", b"hidden")],
        Some("pw"),
    );
    let err = refused(&dir, &secret, ArchiveFormat::SevenZ, &Limits::default());
    assert!(err.to_string().contains("it is encrypted"), "{err}");
}

/// An archive whose layout is not the one the variant was written for is named with
/// its URL and what was missing, whether the wrapper folder (`subdir`) or a file in it is.
#[test]
fn an_unexpected_layout_names_the_archive_and_what_was_expected() {
    let dir = TempDir::new().unwrap();
    let flat = seven_z(&dir, "flat.7z", &[Seven::File("rocblas.dll", b"MZ")], None);
    let err = unpack_plain(
        &flat,
        ArchiveFormat::SevenZ,
        Some("rocm gfx1010"),
        &dir.path().join("o"),
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("flat.7z has no folder `rocm gfx1010`"),
        "{text}"
    );
    assert!(text.contains("`rocblas.dll`"), "what it has: {text}");

    let out = dir.path().join("out");
    unpack_plain(&flat, ArchiveFormat::SevenZ, None, &out).unwrap();
    let expect = ["rocblas.dll".to_string(), "library/".to_string()];
    let err = check_expected(
        "flat.7z",
        "https://example/flat.7z",
        Some("x"),
        &out,
        &expect,
    )
    .unwrap_err()
    .to_string();
    for needle in [
        "flat.7z (https://example/flat.7z) does not hold what the variant expects in its folder `x`",
        "`library/` missing",
        "expected: rocblas.dll, library/",
    ] {
        assert!(err.contains(needle), "`{needle}` in {err}");
    }
    fs::create_dir(out.join("library")).unwrap();
    check_expected("flat.7z", "u", None, &out, &expect).unwrap();
}

/// `subdir = "*"`: the archive's one top-level folder, whatever it is named (the two gfx1010
/// rocBLAS builds wrap their files in differently named folders); a second top-level entry
/// is refused.
#[test]
fn any_top_folder_takes_the_one_there_is_and_refuses_a_second() {
    let dir = TempDir::new().unwrap();
    let one = seven_z(
        &dir,
        "one.7z",
        &[
            Seven::File("rocm gfx1010-gfx1012 for hip sdk 6.2.4/rocblas.dll", b"MZ"),
            Seven::File("rocm gfx1010-gfx1012 for hip sdk 6.2.4/library/a.dat", b"k"),
        ],
        None,
    );
    let out = dir.path().join("out");
    unpack_plain(&one, ArchiveFormat::SevenZ, Some(ANY_TOP_FOLDER), &out).unwrap();
    assert!(out.join("rocblas.dll").is_file() && out.join("library/a.dat").is_file());
    assert_eq!(
        longest_member(&one, ArchiveFormat::SevenZ, Some(ANY_TOP_FOLDER))
            .unwrap()
            .as_deref(),
        Some("library/a.dat")
    );
    for (name, entries, said) in [
        (
            "two.7z",
            vec![Seven::File("a/x", b"1"), Seven::File("b/y", b"2")],
            "beside the top folder `a`",
        ),
        (
            "flat.7z",
            vec![Seven::File("rocblas.dll", b"MZ")],
            "lies at the archive's top",
        ),
    ] {
        let archive = seven_z(&dir, name, &entries, None);
        let err = unpack_plain(
            &archive,
            ArchiveFormat::SevenZ,
            Some(ANY_TOP_FOLDER),
            &dir.path().join("o"),
        )
        .map(|_| ())
        .unwrap_err();
        assert!(err.to_string().contains(said), "{name}: {err}");
    }
}

/// `tar -C dir .` writes `./` first and every name below it as `./x`: `./` is the root
/// (skipped), `./x` is `x`, with or without `subdir = "*"`, and hard links below the one top
/// folder point into it.
#[test]
fn a_dot_slash_entry_is_the_root_and_dot_slash_names_are_below_it() {
    let dir = TempDir::new().unwrap();
    let archive = tar_gz(
        &dir,
        &[
            Dir("./"),
            Dir("./pkg-1.0/"),
            Regular("./pkg-1.0/x", 0o644, b"x"),
            Regular("./pkg-1.0/sub/y", 0o644, b"yy"),
            Hardlink("./pkg-1.0/z", "./pkg-1.0/x"),
        ],
    );
    let out = dir.path().join("any");
    let done = unpack_plain(&archive, ArchiveFormat::TarGz, Some(ANY_TOP_FOLDER), &out).unwrap();
    assert_eq!(done, Unpacked { files: 3, bytes: 3 });
    assert_eq!(fs::read(out.join("x")).unwrap(), b"x");
    assert_eq!(fs::read(out.join("sub/y")).unwrap(), b"yy");
    assert_eq!(fs::read(out.join("z")).unwrap(), b"x");
    assert_eq!(
        longest_member(&archive, ArchiveFormat::TarGz, Some(ANY_TOP_FOLDER))
            .unwrap()
            .as_deref(),
        Some("sub/y")
    );

    let out = dir.path().join("all");
    unpack_plain(&archive, ArchiveFormat::TarGz, None, &out).unwrap();
    assert_eq!(fs::read(out.join("pkg-1.0/sub/y")).unwrap(), b"yy");

    let zip = zip_file(&dir, "dot.zip", |w| {
        w.add_directory("./", SimpleFileOptions::default()).unwrap();
        zip_entry(w, "./top/a", 0o644, b"a");
    });
    let out = dir.path().join("zip");
    unpack_plain(&zip, ArchiveFormat::Zip, Some(ANY_TOP_FOLDER), &out).unwrap();
    assert_eq!(fs::read(out.join("a")).unwrap(), b"a");

    // `.` as a file would be the root itself: refused, whatever the subdir.
    let file_root = tar_gz(&dir, &[Regular(".", 0o644, b"x")]);
    for subdir in [None, Some(ANY_TOP_FOLDER)] {
        let out = dir.path().join("o");
        let err = unpack_plain(&file_root, ArchiveFormat::TarGz, subdir, &out).unwrap_err();
        assert_eq!(reason(&err), &Refusal::ReplacesRoot, "{subdir:?}");
        assert!(!out.exists());
    }
}

/// Windows' rules (here on any host): a link becomes a copy of what it points to. One empty
/// file and 14 links to `.` would copy into 16,384 files and as many folders: every file and
/// folder of a copy counts as an entry and at least 4 KiB, so the limits stop it.
#[test]
fn link_copies_count_every_file_and_folder_against_the_limits() {
    let dir = TempDir::new().unwrap();
    let names: Vec<String> = (0..14).map(|i| format!("l{i:02}")).collect();
    let mut members = vec![Regular("f", 0o644, b"")];
    members.extend(names.iter().map(|n| Symlink(n, ".")));
    let archive = tar_gz(&dir, &members);
    let windows = Limits {
        links_as_copies: true,
        ..Limits::default()
    };
    let err = refused(&dir, &archive, ArchiveFormat::TarGz, &windows);
    assert!(
        matches!(err, UnpackError::TooLarge { limit, .. } if limit == 64 << 20),
        "{err}"
    );
    assert!(err.to_string().contains("at least 4 KiB"), "{err}");

    let few_entries = Limits {
        max_entries: 1000,
        ..windows
    };
    let err = refused(&dir, &archive, ArchiveFormat::TarGz, &few_entries);
    assert!(
        matches!(
            err,
            UnpackError::TooManyEntries {
                limit: 1000,
                link: Some(_),
                ..
            }
        ),
        "{err}"
    );
    assert!(
        err.to_string().contains("while copying its link `l"),
        "{err}"
    );

    // Two links: f, l00/f, l01/f, l01/l00/f; the staging folder's marker is no part of it.
    let small = tar_gz(
        &dir,
        &[
            Regular("f", 0o644, b"ab"),
            Symlink("l00", "."),
            Symlink("l01", "."),
        ],
    );
    let out = dir.path().join("out");
    let done = unpack(
        &small,
        ArchiveFormat::TarGz,
        None,
        &out,
        &windows,
        &Reporter::captured(),
    )
    .unwrap();
    assert_eq!(done, Unpacked { files: 4, bytes: 8 });
    assert_eq!(fs::read(out.join("l01/l00/f")).unwrap(), b"ab");
    assert!(fs::symlink_metadata(out.join("l01")).unwrap().is_dir());
    let markers = ct2v_support::fsx::files_below(&out)
        .unwrap()
        .into_iter()
        .filter(|(r, _)| r.ends_with(ct2v_support::staging::MARKER))
        .count();
    assert_eq!(markers, 0);
}

/// Empty files, folders and hard links cost something: each counts at least 4 KiB, and a
/// hard link its file's size again, so that neither escapes the byte limit.
#[test]
fn empty_entries_and_hard_links_count_against_the_byte_limit() {
    let dir = TempDir::new().unwrap();
    let limits = Limits {
        max_bytes: 16 * MIN_ENTRY_BYTES,
        ..Limits::default()
    };
    let names: Vec<String> = (0..20).map(|i| format!("pkg/e{i}")).collect();
    let members: Vec<Member> = names.iter().map(|n| Regular(n, 0o644, b"")).collect();
    let archive = tar_gz(&dir, &members);
    let err = refused(&dir, &archive, ArchiveFormat::TarGz, &limits);
    assert!(
        matches!(err, UnpackError::TooLarge { ref entry, .. } if entry == "pkg/e15"),
        "the folder pkg and 15 files fill the limit: {err}"
    );
    let archive = zip_file(&dir, "empty.zip", |w| {
        for name in &names {
            zip_entry(w, name, 0o644, b"");
        }
    });
    let err = refused(&dir, &archive, ArchiveFormat::Zip, &limits);
    assert!(matches!(err, UnpackError::TooLarge { .. }), "{err}");

    let half = vec![0u8; 600 * 1024];
    assert_b_passes_one_mib(&dir, &[Regular("a", 0o644, &half), Hardlink("b", "a")]);
}

/// What is read without being written (the data of entries outside the subdir, a GNU long
/// name, which the tar reader holds in memory) is capped by the byte limit too.
#[test]
fn a_tar_stream_past_the_limit_stops_even_where_nothing_is_written() {
    let dir = TempDir::new().unwrap();
    let limits = Limits {
        max_bytes: 1 << 20,
        ..Limits::default()
    };
    let zeros = vec![0u8; 2 << 20];
    let archive = tar_gz(
        &dir,
        &[
            Regular("other/zeros", 0o644, &zeros),
            Regular("pkg/a", 0o644, b"a"),
        ],
    );
    let out = dir.path().join("out");
    let err = unpack(
        &archive,
        ArchiveFormat::TarGz,
        Some("pkg"),
        &out,
        &limits,
        &Reporter::captured(),
    )
    .unwrap_err();
    assert!(matches!(err, UnpackError::TooLarge { .. }), "{err}");
    assert!(!out.exists());

    let mut long = vec![b'n'; 2 << 20];
    long.push(0);
    let mut builder = tar::Builder::new(GzEncoder::new(Vec::new(), Compression::fast()));
    let h = header(
        EntryType::GNULongName,
        "././@LongLink",
        "",
        0o644,
        long.len() as u64,
    );
    builder.append(&h, &long[..]).unwrap();
    let h = header(EntryType::Regular, "x", "", 0o644, 1);
    builder.append(&h, &b"x"[..]).unwrap();
    let path = dir.path().join("long.tgz");
    fs::write(&path, builder.into_inner().unwrap().finish().unwrap()).unwrap();
    let err = refused(&dir, &path, ArchiveFormat::TarGz, &limits);
    assert!(matches!(err, UnpackError::TooLarge { .. }), "{err}");
}

/// A name or link target with ESC, `\r` or a bidi override is shown escaped in every
/// message, so that an archive cannot write to the terminal through an error.
#[test]
fn control_characters_in_names_are_escaped_in_messages() {
    let dir = TempDir::new().unwrap();
    let esc = "pkg/\u{1b}[2J\u{1b}[31mred\rx\u{202e}/../../evil";
    let cases: Vec<(Vec<Member>, &str)> = vec![
        (vec![Regular(esc, 0o644, b"x")], "refusing entry"),
        (
            vec![Symlink("pkg/l", "../\u{1b}[31m/../..")],
            "it links to `../\\u{1b}[31m/../..`",
        ),
        (
            vec![Hardlink("pkg/h\u{1b}", "pkg/missing\r")],
            "hard link to `pkg/missing\\r`",
        ),
    ];
    for (members, said) in cases {
        let err = tar_refused(&dir, &members);
        let text = err.to_string();
        assert!(text.contains(said), "{text}");
        assert!(!text.contains(['\u{1b}', '\r', '\u{202e}']), "{text:?}");
    }
    let err = refused(
        &dir,
        &tar_gz(&dir, &[Regular(esc, 0o644, b"x")]),
        ArchiveFormat::TarGz,
        &Limits::default(),
    );
    assert!(
        err.to_string()
            .contains("pkg/\\u{1b}[2J\\u{1b}[31mred\\rx\\u{202e}/../../evil"),
        "{err}"
    );
    // The top-level entries a missing subdir lists.
    let archive = tar_gz(&dir, &[Regular("\u{1b}]0;title\u{7}/a", 0o644, b"")]);
    let err = unpack_plain(
        &archive,
        ArchiveFormat::TarGz,
        Some("pkg"),
        &dir.path().join("o"),
    )
    .unwrap_err();
    assert!(matches!(err, UnpackError::NoSubdir { .. }), "{err}");
    assert!(!err.to_string().contains(['\u{1b}', '\u{7}']), "{err:?}");
    assert_eq!(escaped("plain/name.txt"), "plain/name.txt");
    assert_eq!(escaped("a\tb\u{9b}"), "a\\tb\\u{9b}");
}

/// A link refusal gives one reason: links are not taken from a 7z archive (7z entries), and a
/// zip link's target is longer than any path (not "only … links are unpacked" for a link).
#[test]
fn link_refusals_give_one_consistent_reason() {
    const LINK_MODE: u32 = (0o120_777 << 16) | 0x8000;
    for attributes in [LINK_MODE, 0x400] {
        let dir = TempDir::new().unwrap();
        let archive = seven_z(
            &dir,
            "l.7z",
            &[Seven::Attributes("lib/link", attributes, b"x")],
            None,
        );
        let text = refused(&dir, &archive, ArchiveFormat::SevenZ, &Limits::default()).to_string();
        assert!(
            text.contains("only files and folders are unpacked from a 7z archive"),
            "{text}"
        );
        assert!(!text.contains("folders and links are unpacked"), "{text}");
    }
    let dir = TempDir::new().unwrap();
    let target = "t/".repeat(2100);
    let err = zip_refused(&dir, "long.zip", |w| {
        w.add_symlink("a/link", &target, SimpleFileOptions::default())
            .unwrap();
    });
    assert_eq!(reason(&err), &Refusal::LinkTargetTooLong);
    assert!(!err.to_string().contains("links are unpacked"), "{err}");
}

/// An input's archive is refused with the input's name, its file name and URL: the cache
/// path it is stored under (named by its sha256) only as a detail.
#[test]
fn an_input_refusal_names_the_input_its_file_and_url() {
    let dir = TempDir::new().unwrap();
    let blob_dir = dir.path().join("cache/sha256");
    fs::create_dir_all(&blob_dir).unwrap();
    let blob = blob_dir.join("4973a5");
    fs::write(&blob, tar_bytes(&[Regular("../evil", 0o644, b"x")])).unwrap();
    let err = unpack_input(
        &CachedInput {
            name: "onednn",
            archive: &blob,
            file_name: "oneDNN-3.1.tar.gz",
            url: "https://example.org/oneDNN-3.1.tar.gz",
        },
        None,
        &dir.path().join("out"),
        Kept::Unrecorded,
        &Reporter::captured(),
    )
    .unwrap_err();
    let input = err
        .downcast_ref::<ct2v_support::diagnostic::InputError>()
        .expect("bad input, exit code 2");
    assert_eq!(
        input.message,
        "input `onednn`: refusing entry `../evil` in oneDNN-3.1.tar.gz \
         (https://example.org/oneDNN-3.1.tar.gz): it points outside the archive"
    );
    let text = err.to_string();
    assert!(text.contains("cached as"), "{text}");
    assert!(text.contains("4973a5"), "{text}");
    assert!(text.contains("pin one that unpacks safely"), "{text}");
}
