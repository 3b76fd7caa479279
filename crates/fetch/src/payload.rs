//! Whether a downloaded file is the kind of file it claims to be, before `pin` records it: a
//! server that answers 200 with an HTML page, a connection that ends early, or an archive
//! that is damaged inside (an entry failing its CRC, a deflate stream that is garbage, a
//! wheel whose RECORD lies) or expands past the unpacker's limit must not get its bytes
//! pinned as the input. Archives are read to the end of every entry, streamed, within the
//! unpacker's limits.

mod zip_check;

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

use super::unpack::{ANY_TOP_FOLDER, ArchiveFormat, Limits, UnpackError};
use ct2v_support::diagnostic::escaped;

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
    /// A wheel (`.whl`): a zip whose files its RECORD lists with their hashes.
    Wheel,
    /// Anything else: only refused when it is a page.
    Other,
}

impl Kind {
    pub fn from_name(file_name: &str) -> Kind {
        if file_name.to_ascii_lowercase().ends_with(".whl") {
            Kind::Wheel
        } else if let Some(format) = ArchiveFormat::from_name(file_name) {
            Kind::Archive(format)
        } else if file_name.to_ascii_lowercase().ends_with(".exe") {
            Kind::Exe
        } else {
            Kind::Other
        }
    }

    /// What a damaged one is called: `zip archive`.
    fn noun(self) -> &'static str {
        let described = self.describe();
        let described = described.strip_prefix("a ").unwrap_or(described);
        described.split(" (").next().unwrap_or(described)
    }

    fn describe(self) -> &'static str {
        match self {
            Kind::Exe => "a Windows program (.exe)",
            Kind::Archive(ArchiveFormat::Zip) => "a zip archive (.zip)",
            Kind::Wheel => "a wheel (.whl)",
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

/// Why an archive is refused.
#[derive(Debug)]
enum Refused {
    /// It does not read as its kind: truncated, or another file (another download may help).
    Unreadable(String),
    /// It reads, but `entry` (empty: the archive as a whole) is damaged: the same bytes come
    /// again, so only another file helps.
    Damaged { entry: String, why: String },
    /// It expands past `limit`, the unpacker's cap for an archive of its size.
    Bomb { entry: String, limit: u64 },
}

/// A download refused for what it holds (damaged inside, or an archive bomb): bad input,
/// where [`check`]'s other errors are a download to try again.
#[derive(Debug)]
pub struct BadArchive(String);

impl std::fmt::Display for BadArchive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadArchive {}

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
        Kind::Exe => check_exe(open()?, len)
            .map(|()| Vec::new())
            .map_err(Refused::Unreadable),
        Kind::Archive(ArchiveFormat::Zip) => zip_check::entries(open()?, len, false),
        Kind::Wheel => zip_check::entries(open()?, len, true),
        Kind::Archive(ArchiveFormat::TarGz) => tar_gz_entries(open()?, len),
        Kind::Archive(ArchiveFormat::SevenZ) => seven_z_entries(open()?, len),
    };
    let entries = entries.map_err(|refused| match refused {
        Refused::Unreadable(why) => anyhow!(
            "{url} is not {}: {why} ({len} bytes, starting `{}`). A truncated or damaged \
             download, or another file; download it again, and check the URL if it repeats. \
             Not pinned",
            claim.kind.describe(),
            first_bytes(&head, SHOWN_MAGIC)
        ),
        Refused::Damaged { entry, why } => {
            let at = match entry.as_str() {
                "" => String::new(),
                entry => format!("entry `{}`: ", escaped(entry)),
            };
            BadArchive(format!(
                "{url} is a damaged {}: {at}{why} ({len} bytes). The server serves it so: \
                 downloading again gives the same bytes; pin a URL that serves a whole one, \
                 and tell its publisher. Not pinned",
                claim.kind.noun()
            ))
            .into()
        }
        Refused::Bomb { entry, limit } => {
            let too_large = UnpackError::TooLarge {
                archive: std::path::PathBuf::from(url),
                entry,
                limit,
            };
            BadArchive(format!("{}. Not pinned", too_large.message(&url))).into()
        }
    })?;
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

/// The tar's entries, once the gzip stream decodes to its end (its CRC and length checked)
/// and the tar lists to its end (every entry's data read through); no more is decoded than
/// the unpacker would accept. A stream that ends early is truncated; one that fails after
/// its first entry is damaged at the entry being read.
fn tar_gz_entries(file: File, len: u64) -> Result<Vec<Entry>, Refused> {
    let limit = Limits::default().for_archive(len).max_bytes;
    let stream = GzDecoder::new(BufReader::new(file)).take(limit.saturating_add(1));
    let mut tar = tar::Archive::new(stream);
    let mut entries: Vec<Entry> = Vec::new();
    let listed = (|| {
        for entry in tar.entries()? {
            let entry = entry?;
            let name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
            entries.push((name, entry.header().entry_type().is_dir()));
        }
        Ok(())
    })();
    // The tar ends at its end marker; the gzip trailer after it is checked by reading on.
    let mut rest = tar.into_inner();
    let trailer = match listed {
        Ok(()) => io::copy(&mut rest, &mut io::sink()).err(),
        Err(_) => None,
    };
    let at = entries.last().map(|(n, _)| n.clone()).unwrap_or_default();
    if rest.limit() == 0 {
        return Err(Refused::Bomb { entry: at, limit });
    }
    let (error, entry, why) = match (listed, trailer) {
        (Ok(()), None) => return Ok(entries),
        (Err(e), _) => (e, at, "the gzip and tar stream breaks there"),
        (Ok(()), Some(e)) => (
            e,
            String::new(),
            "after its last entry, the gzip stream's CRC or length does not match what it \
             decoded to",
        ),
    };
    match error.kind() == io::ErrorKind::UnexpectedEof || entries.is_empty() {
        true => Err(Refused::Unreadable(format!(
            "it does not read to its end as gzip and tar: {error}"
        ))),
        false => Err(Refused::Damaged {
            entry,
            why: format!("{why}: {error}"),
        }),
    }
}

/// The 7z's entries, once its header (at the end of the file, so the first thing a cut
/// loses) reads, the sizes it declares stay within the unpacker's limit, and every entry
/// decodes to its end (its CRC checked there, sevenz-rust2 0.25 `src/reader.rs`).
fn seven_z_entries(file: File, len: u64) -> Result<Vec<Entry>, Refused> {
    use sevenz_rust2::{ArchiveReader, Error, Password};
    let limit = Limits::default().for_archive(len).max_bytes;
    let mut reader = ArchiveReader::new_with_memory_limit(
        BufReader::new(file),
        Password::empty(),
        SEVEN_Z_MEMORY_LIMIT_KB,
    )
    .map_err(|e| Refused::Unreadable(format!("its 7z header does not read: {e}")))?;
    let mut declared = 0u64;
    let mut entries = Vec::new();
    for entry in &reader.archive().files {
        declared = declared.saturating_add(entry.size());
        if declared > limit {
            let entry = entry.name().to_string();
            return Err(Refused::Bomb { entry, limit });
        }
        entries.push((entry.name().to_string(), entry.is_directory()));
    }
    let mut failed: Option<Refused> = None;
    let result = reader.for_each_entries(|entry, data| {
        let mut sink = io::sink();
        match io::copy(data, &mut sink) {
            Ok(_) => Ok(true),
            Err(e) => {
                failed = Some(Refused::Damaged {
                    entry: entry.name().to_string(),
                    why: format!("its data does not decode to its end: {e}"),
                });
                Err(Error::Other("damaged".into()))
            }
        }
    });
    match (failed, result) {
        (Some(refused), _) => Err(refused),
        (None, Err(e)) => Err(Refused::Damaged {
            entry: String::new(),
            why: format!("it does not decode to its end: {e}"),
        }),
        (None, Ok(())) => Ok(entries),
    }
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
mod tests;
