//! Unpacking downloaded archives (`.crate`, `.tar.gz`, `.tgz`, `.zip`, `.whl`, `.7z`) safely: nothing
//! lands outside the destination, links stay inside it, devices and FIFOs are refused, and the
//! bytes and entries written are capped. The tree is built in a temporary folder next to the
//! destination and renamed into place only when every entry was accepted, so a bad archive
//! leaves the destination as it was.

mod member;
pub use member::{copy_member, read_members};
mod pax;
pub(crate) use pax::archive_commit;
mod sevenz;
mod tar_gz;
mod tree;
mod zip_file;

use tree::{Node, Tree};

use std::collections::HashMap;
use std::ffi::OsString;
use std::fmt;
use std::fs::{self, File};
use std::io::{self, BufReader};
use std::path::{Path, PathBuf};

use flate2::read::GzDecoder;

use ct2v_support::diagnostic::InputError;
use ct2v_support::owned_output;
use ct2v_support::report::Reporter;

/// How messages name the folder an archive is unpacked into.
const DESTINATION: &str = "the destination";

/// What each file, folder and link counts against `Limits::max_bytes` at least (about what a
/// file system spends on the smallest file), so that an archive of millions of empty files
/// reaches the byte limit as a large one does.
pub(crate) const MIN_ENTRY_BYTES: u64 = 4096;

/// Caps on what one archive may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Bytes written, over all entries: file data (a hard link counts its file's size again,
    /// a link copy what it copies), every file, folder and link counting at least
    /// [`MIN_ENTRY_BYTES`]. A `.tar.gz`'s decompressed stream is capped at this too.
    pub max_bytes: u64,
    /// Files, folders and links: the archive's entries, the folders their paths create, and
    /// every file and folder a link copy creates.
    pub max_entries: u64,
    /// Bytes written per byte of archive: the real inputs unpack to under 10× their size;
    /// a bomb (e.g. zip entries sharing one deflate stream) to 1,000× and more.
    pub max_ratio: u64,
    /// What any archive may unpack to, whatever its ratio (small archives of text).
    pub ratio_floor: u64,
    /// The longest path (characters, the destination folder included) an entry may get:
    /// on Windows with long paths off, MAX_PATH's (see `longpaths`); else none.
    pub longest_path: Option<usize>,
    /// Names that differ only in case are one file (Windows): the second is refused rather
    /// than silently overwriting the first.
    pub case_insensitive: bool,
    /// Symbolic links become copies of what they point to, made once every entry is in:
    /// Windows' rules, where creating a link needs a privilege an ordinary account lacks
    /// (always so on Windows, whatever this says; elsewhere for testing those rules).
    pub links_as_copies: bool,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_bytes: 16 << 30,
            max_entries: 1_000_000,
            max_ratio: 100,
            ratio_floor: 64 << 20,
            longest_path: (ct2v_support::longpaths::enabled() == Some(false))
                .then_some(ct2v_support::longpaths::LONGEST),
            case_insensitive: cfg!(windows),
            links_as_copies: cfg!(not(unix)),
        }
    }
}

impl Limits {
    /// The byte cap for an archive of `archive_size` bytes: the absolute cap, lowered to
    /// `max_ratio` times the archive's size (but never below `ratio_floor`).
    pub fn for_archive(&self, archive_size: u64) -> Limits {
        let by_ratio = archive_size
            .saturating_mul(self.max_ratio)
            .max(self.ratio_floor);
        Limits {
            max_bytes: self.max_bytes.min(by_ratio),
            ..*self
        }
    }

    /// Whether links become copies (see `links_as_copies`).
    pub(crate) fn copies_links(&self) -> bool {
        self.links_as_copies || cfg!(not(unix))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchiveFormat {
    /// A gzip-compressed tar: `.crate`, `.tar.gz`, `.tgz`.
    TarGz,
    /// `.zip` and wheels (`.whl`).
    Zip,
    /// `.7z` (LZMA, LZMA2, BCJ; never encrypted).
    SevenZ,
}

impl ArchiveFormat {
    pub fn from_name(file_name: &str) -> Option<ArchiveFormat> {
        let name = file_name.to_ascii_lowercase();
        if [".crate", ".tar.gz", ".tgz"]
            .iter()
            .any(|e| name.ends_with(e))
        {
            Some(ArchiveFormat::TarGz)
        } else if [".zip", ".whl"].iter().any(|e| name.ends_with(e)) {
            Some(ArchiveFormat::Zip)
        } else if name.ends_with(".7z") {
            Some(ArchiveFormat::SevenZ)
        } else {
            None
        }
    }
}

impl fmt::Display for ArchiveFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ArchiveFormat::TarGz => "gzip-compressed tar",
            ArchiveFormat::Zip => "zip archive",
            ArchiveFormat::SevenZ => "7z archive",
        })
    }
}

/// What an unpack wrote: regular files (hard links included) and their bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Unpacked {
    pub files: u64,
    pub bytes: u64,
}

/// Whether an unpacked tree keeps the record of what was written (`owned_output`), so that a
/// later unpack may replace it: a tree that stays where a later run unpacks again does (a
/// build's inputs); one that becomes part of something else (a wheel's tree, a submodule of
/// an assembled source) does not, as the record would be a file of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kept {
    Recorded,
    Unrecorded,
}

#[derive(Debug)]
pub enum UnpackError {
    Open {
        archive: PathBuf,
        source: io::Error,
    },
    /// Truncated, corrupt, or not the format it was taken for.
    Read {
        archive: PathBuf,
        format: ArchiveFormat,
        source: io::Error,
    },
    Refused {
        archive: PathBuf,
        entry: String,
        reason: Refusal,
    },
    TooLarge {
        archive: PathBuf,
        entry: String,
        limit: u64,
    },
    /// `link`: the link whose copy went past the limit (Windows' rules).
    TooManyEntries {
        archive: PathBuf,
        limit: u64,
        link: Option<String>,
    },
    NoSubdir {
        archive: PathBuf,
        subdir: String,
        top: String,
    },
    BadSubdir {
        archive: PathBuf,
        subdir: String,
    },
    Write {
        archive: PathBuf,
        path: PathBuf,
        source: io::Error,
    },
    /// The destination holds what this tool did not write there: it is not replaced.
    Destination {
        archive: PathBuf,
        refusal: InputError,
    },
}

impl UnpackError {
    pub fn archive(&self) -> &Path {
        match self {
            UnpackError::Open { archive, .. }
            | UnpackError::Read { archive, .. }
            | UnpackError::Refused { archive, .. }
            | UnpackError::TooLarge { archive, .. }
            | UnpackError::TooManyEntries { archive, .. }
            | UnpackError::NoSubdir { archive, .. }
            | UnpackError::BadSubdir { archive, .. }
            | UnpackError::Write { archive, .. }
            | UnpackError::Destination { archive, .. } => archive,
        }
    }

    /// The message, with the archive shown as `archive` says (an input's file name and URL
    /// rather than the cache path it is stored under). Entry names are [`escaped`].
    pub fn message(&self, archive: &dyn fmt::Display) -> String {
        match self {
            UnpackError::Open { source, .. } => format!("cannot open {archive}: {source}"),
            UnpackError::Read { format, source, .. } => format!(
                "cannot read {archive} as a {format}: {}",
                escaped(&source.to_string())
            ),
            UnpackError::Refused { entry, reason, .. } => {
                format!("refusing entry `{}` in {archive}: {reason}", escaped(entry))
            }
            UnpackError::TooLarge { entry, limit, .. } => format!(
                "{archive} expands past the limit of {limit} bytes{}: an archive bomb or a \
                 larger archive than allowed. The limit is 100 times the archive's size (at \
                 least 64 MiB, at most 16 GiB), every file and folder counting at least 4 KiB \
                 and the copies links become on Windows included; real inputs stay far below it",
                match entry.as_str() {
                    "" => String::new(),
                    entry => format!(" (stopped at entry `{}`)", escaped(entry)),
                }
            ),
            UnpackError::TooManyEntries { limit, link, .. } => {
                let copies = match link {
                    Some(link) => format!(
                        " (stopped while copying its link `{}`: on Windows a link becomes a \
                         copy of what it points to, and every file and folder of the copy counts)",
                        escaped(link)
                    ),
                    None => String::new(),
                };
                format!(
                    "{archive} has more than the limit of {limit} files, folders and links\
                     {copies}; real inputs have far fewer, so it is refused as an archive bomb"
                )
            }
            UnpackError::NoSubdir { subdir, top, .. } => format!(
                "{archive} has no folder `{}`; its top-level entries: {top}",
                escaped(subdir)
            ),
            UnpackError::BadSubdir { subdir, .. } => format!(
                "cannot unpack folder `{}` of {archive}: it is not a plain relative path",
                escaped(subdir)
            ),
            UnpackError::Write { path, source, .. } => format!(
                "cannot write {} while unpacking {archive}: {source}",
                escaped(&path.display().to_string())
            ),
            UnpackError::Destination { refusal, .. } => {
                format!("{archive} is not unpacked: {}", refusal.message)
            }
        }
    }
}

impl fmt::Display for UnpackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message(&self.archive().display()))
    }
}

impl std::error::Error for UnpackError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            UnpackError::Open { source, .. }
            | UnpackError::Read { source, .. }
            | UnpackError::Write { source, .. } => Some(source),
            _ => None,
        }
    }
}

pub use ct2v_support::diagnostic::escaped;

/// Why an entry was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    Absolute,
    Escapes,
    NotUtf8,
    LinkAbsolute {
        target: String,
    },
    LinkEscapes {
        target: String,
    },
    HardlinkMissing {
        target: String,
    },
    UnderSymlink {
        link: String,
    },
    Clash {
        path: String,
    },
    ReplacesRoot,
    Unsupported {
        kind: String,
    },
    /// A link, device or anti-item in a `.7z`: only files and folders are taken from one.
    NotIn7z {
        kind: String,
    },
    /// A zip symlink whose target is longer than any real path.
    LinkTargetTooLong,
    WindowsName {
        part: String,
    },
    /// Windows drops a trailing dot or space: `a.` and `a ` are `a` there.
    TrailingDotOrSpace {
        part: String,
    },
    /// Another entry has the same name but for case (one file on Windows).
    CaseClash {
        other: String,
    },
    /// `subdir = "*"` asks for the one top-level folder, and this entry is beside it (a
    /// second folder, or a file at the top when `other` is empty).
    SecondTopFolder {
        other: String,
    },
    /// Its path would be longer than Windows allows with long paths off.
    TooLong {
        path: String,
        length: usize,
    },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Absolute => write!(f, "it is an absolute path"),
            Refusal::Escapes => write!(f, "it points outside the archive"),
            Refusal::NotUtf8 => write!(f, "its name or link target is not valid UTF-8"),
            Refusal::LinkAbsolute { target } => {
                write!(f, "it links to the absolute path `{}`", escaped(target))
            }
            Refusal::LinkEscapes { target } => {
                write!(
                    f,
                    "it links to `{}`, which is outside the unpacked tree",
                    escaped(target)
                )
            }
            Refusal::HardlinkMissing { target } => write!(
                f,
                "it is a hard link to `{}`, which is not a file unpacked before it",
                escaped(target)
            ),
            Refusal::UnderSymlink { link } => write!(
                f,
                "it would be written through the symbolic link `{}`",
                escaped(link)
            ),
            Refusal::Clash { path } => write!(
                f,
                "it clashes with `{}`, unpacked before it as another kind of entry",
                escaped(path)
            ),
            Refusal::ReplacesRoot => {
                write!(f, "it would replace the top folder of the unpacked tree")
            }
            Refusal::WindowsName { part } => write!(
                f,
                "`{}` is a drive prefix, an NTFS stream or a device name on Windows",
                part.escape_debug()
            ),
            Refusal::TrailingDotOrSpace { part } => write!(
                f,
                "`{}` ends with a dot or a space, which Windows drops (it would be another name there)",
                part.escape_debug()
            ),
            Refusal::CaseClash { other } => write!(
                f,
                "it differs only in case from `{}`, unpacked before it: on Windows both are one file",
                escaped(other)
            ),
            Refusal::SecondTopFolder { other } if other.is_empty() => write!(
                f,
                "it lies at the archive's top, where `subdir = \"*\"` expects one folder only"
            ),
            Refusal::SecondTopFolder { other } => write!(
                f,
                "it is beside the top folder `{}`, where `subdir = \"*\"` expects one folder only",
                escaped(other)
            ),
            Refusal::TooLong { path, length } => {
                write!(
                    f,
                    "{}",
                    ct2v_support::longpaths::advice(*length, &escaped(path))
                )
            }
            Refusal::Unsupported { kind } => write!(
                f,
                "it is a {kind}; only files, folders and links are unpacked"
            ),
            Refusal::NotIn7z { kind } => write!(
                f,
                "it is a {kind}; only files and folders are unpacked from a 7z archive (links \
                 only from tar and zip archives, whose link entries say where they point)"
            ),
            Refusal::LinkTargetTooLong => write!(
                f,
                "it is a symbolic link whose target is longer than 4096 bytes, longer than any \
                 real path"
            ),
        }
    }
}

/// A downloaded input as the cache holds it: under its sha256 at `archive`, with the name,
/// file name and URL it is known by (what an error names).
#[derive(Debug, Clone, Copy)]
pub struct CachedInput<'a> {
    pub name: &'a str,
    pub archive: &'a Path,
    pub file_name: &'a str,
    pub url: &'a str,
}

/// A downloaded input, stored under another name (its sha256) in the cache: unpacked as
/// its original `file_name` says, with the default limits. An error names the input, its
/// file name and `url` (the cache path only as a detail).
pub fn unpack_input(
    cached: &CachedInput,
    subdir: Option<&str>,
    dest: &Path,
    kept: Kept,
    reporter: &Reporter,
) -> anyhow::Result<Unpacked> {
    let &CachedInput {
        name: input,
        archive,
        file_name,
        url,
    } = cached;
    let format = ArchiveFormat::from_name(file_name).ok_or_else(|| {
        anyhow::anyhow!(
            "input `{input}`: cannot tell how to unpack {file_name} ({url}): unpacked are \
             .tar.gz, .tgz, .crate, .zip, .whl and .7z files"
        )
    })?;
    unpack_into(
        archive,
        format,
        subdir,
        dest,
        &Limits::default(),
        kept,
        reporter,
    )
    .map_err(|e| {
        let shown = if url.is_empty() {
            file_name.to_string()
        } else {
            format!("{file_name} ({url})")
        };
        let message = format!("input `{input}`: {}", e.message(&shown));
        if let UnpackError::Destination { refusal, .. } = e {
            return InputError { message, ..refusal }.into();
        }
        let cached = format!("the download is cached as {}", archive.display());
        if e.is_about_the_archive() {
            InputError::new(message)
                .note(cached)
                .note(
                    "the file matches the variant's pinned sha256, so the variant pins this \
                     archive: pin one that unpacks safely (its url and sha256), or check \
                     `subdir` against the archive's layout",
                )
                .into()
        } else {
            anyhow::anyhow!("{message} ({cached})")
        }
    })
}

impl UnpackError {
    /// Whether the archive itself is at fault (not a readable archive of that format, an
    /// entry refused, past a limit, no such folder in it), rather than the disk being
    /// written to: for an archive the user gave, bad input.
    pub fn is_about_the_archive(&self) -> bool {
        !matches!(
            self,
            UnpackError::Write { .. } | UnpackError::Destination { .. }
        )
    }
}

/// `subdir = "*"`: the archive's one top-level folder, whatever its name (release assets
/// whose wrapper folder is named differently from one build to another).
pub const ANY_TOP_FOLDER: &str = "*";

/// The paths an unpacked input must hold (`expect`, a trailing `/` for a folder) are in
/// `dest`; else an error naming the archive, its URL and what it was expected to hold.
pub fn check_expected(
    file_name: &str,
    url: &str,
    subdir: Option<&str>,
    dest: &Path,
    expect: &[String],
) -> anyhow::Result<()> {
    let missing: Vec<&String> = expect
        .iter()
        .filter(|e| {
            let path = ct2v_support::paths::join_slashed(dest, e);
            if e.ends_with('/') {
                !path.is_dir()
            } else {
                !path.is_file()
            }
        })
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let inside = match subdir {
        None => "at its top".to_string(),
        Some(ANY_TOP_FOLDER) => "in its top folder".to_string(),
        Some(s) => format!("in its folder `{s}`"),
    };
    anyhow::bail!(
        "{file_name} ({url}) does not hold what the variant expects {inside}: {} missing \
         (expected: {}). Its layout differs from the one the variant was written for: list it \
         (7z l / unzip -l) and set the input's `subdir` and `expect` to match",
        missing
            .iter()
            .map(|m| format!("`{m}`"))
            .collect::<Vec<_>>()
            .join(", "),
        expect.join(", ")
    )
}

/// The longest entry name of `archive` (below `subdir`, without it), reading only names; for
/// projecting paths before anything is unpacked (`longpaths`).
pub fn longest_member(
    archive: &Path,
    format: ArchiveFormat,
    subdir: Option<&str>,
) -> io::Result<Option<String>> {
    let file = File::open(archive)?;
    let names: Vec<String> = match format {
        ArchiveFormat::TarGz => {
            let mut tar = tar::Archive::new(GzDecoder::new(BufReader::new(file)));
            let mut names = Vec::new();
            for entry in tar.entries()? {
                names.push(entry?.path()?.to_string_lossy().into_owned());
            }
            names
        }
        ArchiveFormat::Zip => {
            let zip = zip::ZipArchive::new(BufReader::new(file)).map_err(io::Error::other)?;
            (0..zip.len())
                .filter_map(|i| {
                    zip.name_for_index(i)
                        .and_then(Result::ok)
                        .map(|n| n.into_owned())
                })
                .collect()
        }
        ArchiveFormat::SevenZ => sevenz::names(file)?,
    };
    Ok(longest(names, subdir))
}

/// The longest of `names` below `subdir` (without it), as the unpack places them (`./`
/// and empty parts dropped).
fn longest(names: Vec<String>, subdir: Option<&str>) -> Option<String> {
    let parts = |name: &str| -> Vec<String> {
        name.split(['/', '\\'])
            .filter(|p| !p.is_empty() && *p != ".")
            .map(str::to_string)
            .collect()
    };
    let subdir = subdir.map(parts);
    names
        .iter()
        .filter_map(|n| {
            let all = parts(n);
            let below = match subdir.as_deref() {
                Some([any]) if any == ANY_TOP_FOLDER => all.get(1..)?,
                Some(sub) => all.strip_prefix(sub)?,
                None => &all[..],
            };
            (!below.is_empty()).then(|| below.join("/"))
        })
        .max_by_key(|n| n.chars().count())
}

/// Unpacks `archive` into `dest` (only its folder `subdir`, when given), leaving no record in
/// the tree ([`Kept::Unrecorded`]); see [`unpack_into`].
pub fn unpack(
    archive: &Path,
    format: ArchiveFormat,
    subdir: Option<&str>,
    dest: &Path,
    limits: &Limits,
    reporter: &Reporter,
) -> Result<Unpacked, UnpackError> {
    unpack_into(
        archive,
        format,
        subdir,
        dest,
        limits,
        Kept::Unrecorded,
        reporter,
    )
}

/// Unpacks `archive` into `dest` (only its folder `subdir`, when given), replacing what `dest`
/// was only when that is nothing, an empty folder or a recorded tree of this tool unchanged
/// (`owned_output`); `dest` is left untouched when anything fails.
pub fn unpack_into(
    archive: &Path,
    format: ArchiveFormat,
    subdir: Option<&str>,
    dest: &Path,
    limits: &Limits,
    kept: Kept,
    reporter: &Reporter,
) -> Result<Unpacked, UnpackError> {
    let write_error = |path: &Path, source| UnpackError::Write {
        archive: archive.to_path_buf(),
        path: path.to_path_buf(),
        source,
    };
    let subdir = match subdir {
        Some(s) => match components(s) {
            Ok(parts) if !parts.is_empty() => Some(parts),
            _ => {
                return Err(UnpackError::BadSubdir {
                    archive: archive.to_path_buf(),
                    subdir: s.to_string(),
                });
            }
        },
        None => None,
    };
    let Some(dest_name) = dest.file_name() else {
        let source = io::Error::new(io::ErrorKind::InvalidInput, "it has no final name");
        return Err(write_error(dest, source));
    };
    let parent = match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    fs::create_dir_all(parent).map_err(|e| write_error(parent, e))?;
    let refused = |refusal| UnpackError::Destination {
        archive: archive.to_path_buf(),
        refusal,
    };
    let claim = owned_output::claim(DESTINATION, dest).map_err(refused)?;
    let mut prefix = OsString::from(".");
    prefix.push(dest_name);
    prefix.push(".unpack-");
    let file = File::open(archive).map_err(|source| UnpackError::Open {
        archive: archive.to_path_buf(),
        source,
    })?;
    let archive_size = file.metadata().map_or(0, |m| m.len());
    let limits = &limits.for_archive(archive_size);
    // A killed unpack's staging folder and the old tree it moved aside are swept here, by
    // the next unpack of the same destination (only what this tool marked as its own).
    let prefix = prefix.to_string_lossy().into_owned();
    let _lock =
        ct2v_support::out_lock::hold(dest).map_err(|e| match e.downcast::<InputError>() {
            Ok(refusal) => refused(refusal),
            Err(e) => write_error(dest, e.downcast().unwrap_or_else(io::Error::other)),
        })?;
    let aside = format!(".{}.old-", dest_name.to_string_lossy());
    ct2v_support::staging::sweep_and_say(parent, &aside, reporter);
    let staging = ct2v_support::staging::create(parent, &prefix, reporter)
        .map_err(|e| write_error(parent, e))?;

    let mut tree = Tree {
        archive,
        format,
        root: staging.path(),
        subdir_name: subdir.as_ref().map(|c| c.join("/")),
        subdir,
        limits,
        nodes: HashMap::new(),
        folded: HashMap::new(),
        single_top: None,
        dest_length: ct2v_support::paths::shown(dest).chars().count(),
        dest,
        symlinks: Vec::new(),
        dir_modes: Vec::new(),
        entries: 0,
        charged: 0,
        unpacked: Unpacked::default(),
        contents: Vec::new(),
        subdir_found: false,
        top_level: Vec::new(),
        more_top_level: false,
        buffer: vec![0; 64 * 1024],
    };
    match format {
        ArchiveFormat::TarGz => tar_gz::unpack(file, &mut tree)?,
        ArchiveFormat::Zip => zip_file::unpack(file, &mut tree)?,
        ArchiveFormat::SevenZ => sevenz::unpack(file, &mut tree)?,
    }
    let unpacked = tree.finish()?;

    if kept == Kept::Recorded {
        owned_output::record(staging.path(), dest)
            .map_err(|e| write_error(staging.path(), io::Error::other(format!("{e:#}"))))?;
    }
    owned_output::replace(DESTINATION, staging.path(), dest, &claim).map_err(|e| match e
        .downcast::<InputError>()
    {
        Ok(refusal) => refused(refusal),
        Err(e) => write_error(dest, io::Error::other(format!("{e:#}"))),
    })?;
    // Moved away already: nothing is left for the guard to delete.
    let _ = staging.keep();
    // Unmarked once in place, not before: a run killed in between would leave a staging
    // folder with no marker, which no sweep removes. The marker names the staging folder, so
    // it never passes for proof that `dest` is ours.
    ct2v_support::staging::unmark(dest).map_err(|e| write_error(dest, e))?;
    Ok(unpacked)
}

/// `bytes` as a name or link target of entry `entry` (itself when `None`).
fn utf8(bytes: Vec<u8>, tree: &Tree, entry: Option<&str>) -> Result<String, UnpackError> {
    String::from_utf8(bytes).map_err(|e| {
        let shown = String::from_utf8_lossy(e.as_bytes());
        tree.refuse(entry.unwrap_or(&shown), Refusal::NotUtf8)
    })
}

const S_IFMT: u32 = 0o170_000;
const S_IFREG: u32 = 0o100_000;
const S_IFDIR: u32 = 0o040_000;
const S_IFLNK: u32 = 0o120_000;

/// The parts of an entry name, split at `/` and `\` (so a Windows host is safe too), without
/// empty and `.` parts. Absolute names and `..` are refused.
fn components(name: &str) -> Result<Vec<String>, Refusal> {
    if is_absolute(name) {
        return Err(Refusal::Absolute);
    }
    let mut parts = Vec::new();
    for part in name.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => return Err(Refusal::Escapes),
            // Refused on every host: on Windows `C:x` names another drive, `a:b` an NTFS
            // stream and `NUL` a device, whatever folder they are joined to.
            part if part.contains([':', '\0']) || ct2v_support::safe_path::is_device_name(part) => {
                return Err(Refusal::WindowsName {
                    part: part.to_string(),
                });
            }
            part if part.ends_with(['.', ' ']) => {
                return Err(Refusal::TrailingDotOrSpace {
                    part: part.to_string(),
                });
            }
            part => parts.push(part.to_string()),
        }
    }
    Ok(parts)
}

/// `/x`, `\x`, and drive paths `C:\x`, `C:x`.
fn is_absolute(path: &str) -> bool {
    let bytes = path.as_bytes();
    path.starts_with(['/', '\\'])
        || (bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':')
}

/// Where a symlink in folder `from` pointing at `target` ends up, following the symlinks
/// among `nodes`; `None` when it leaves the root (or loops).
fn resolve(nodes: &HashMap<String, Node>, from: &[String], target: &str) -> Option<Vec<String>> {
    let mut at = from.to_vec();
    // The parts still to walk, the next one last.
    let mut pending: Vec<String> = target.split(['/', '\\']).rev().map(String::from).collect();
    let mut hops = 0;
    while let Some(part) = pending.pop() {
        match part.as_str() {
            "" | "." => {}
            ".." => {
                at.pop()?;
            }
            _ => {
                at.push(part);
                if let Some(Node::Symlink(next)) = nodes.get(&at.join("/")) {
                    hops += 1;
                    if hops > 40 || is_absolute(next) {
                        return None;
                    }
                    at.pop();
                    pending.extend(next.split(['/', '\\']).rev().map(String::from));
                }
            }
        }
    }
    Some(at)
}

#[cfg(test)]
mod tests;
