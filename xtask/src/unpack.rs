//! Unpacking downloaded archives (`.crate`, `.tar.gz`, `.tgz`, `.zip`, `.whl`) safely: nothing
//! lands outside the destination, links stay inside it, devices and FIFOs are refused, and the
//! bytes and entries written are capped. The tree is built in a temporary folder next to the
//! destination and renamed into place only when every entry was accepted, so a bad archive
//! leaves the destination as it was.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use flate2::read::GzDecoder;
use tar::EntryType;
use zip::ZipArchive;

/// Caps on what one archive may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of file data actually written, over all entries.
    pub max_bytes: u64,
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
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_bytes: 16 << 30,
            max_entries: 1_000_000,
            max_ratio: 100,
            ratio_floor: 64 << 20,
            longest_path: (crate::longpaths::enabled() == Some(false))
                .then_some(crate::longpaths::LONGEST),
            case_insensitive: cfg!(windows),
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
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A gzip-compressed tar: `.crate`, `.tar.gz`, `.tgz`.
    TarGz,
    /// `.zip` and wheels (`.whl`).
    Zip,
}

impl Format {
    pub fn from_name(file_name: &str) -> Option<Format> {
        let name = file_name.to_ascii_lowercase();
        if [".crate", ".tar.gz", ".tgz"]
            .iter()
            .any(|e| name.ends_with(e))
        {
            Some(Format::TarGz)
        } else if [".zip", ".whl"].iter().any(|e| name.ends_with(e)) {
            Some(Format::Zip)
        } else {
            None
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::TarGz => "gzip-compressed tar",
            Format::Zip => "zip archive",
        })
    }
}

/// What an unpack wrote: regular files (hard links included) and their bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Unpacked {
    pub files: u64,
    pub bytes: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum UnpackError {
    #[error("cannot open {}: {source}", archive.display())]
    Open { archive: PathBuf, source: io::Error },
    /// Truncated, corrupt, or not the format it was taken for.
    #[error("cannot read {} as a {format}: {source}", archive.display())]
    Read {
        archive: PathBuf,
        format: Format,
        source: io::Error,
    },
    #[error("refusing entry `{entry}` in {}: {reason}", archive.display())]
    Refused {
        archive: PathBuf,
        entry: String,
        reason: Refusal,
    },
    #[error(
        "{} unpacks to more than the limit of {limit} bytes (stopped at entry `{entry}`): the \
         limit is 100 times the archive's size (at least 64 MiB, at most 16 GiB), which real \
         inputs stay far below; a larger ratio is an archive bomb",
        archive.display()
    )]
    TooLarge {
        archive: PathBuf,
        entry: String,
        limit: u64,
    },
    #[error("{} has more than the limit of {limit} entries", archive.display())]
    TooManyEntries { archive: PathBuf, limit: u64 },
    #[error("{} has no folder `{subdir}`; its top-level entries: {top}", archive.display())]
    NoSubdir {
        archive: PathBuf,
        subdir: String,
        top: String,
    },
    #[error(
        "cannot unpack folder `{subdir}` of {}: it is not a plain relative path",
        archive.display()
    )]
    BadSubdir { archive: PathBuf, subdir: String },
    #[error("cannot write {} while unpacking {}: {source}", path.display(), archive.display())]
    Write {
        archive: PathBuf,
        path: PathBuf,
        source: io::Error,
    },
}

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
                write!(f, "it links to the absolute path `{target}`")
            }
            Refusal::LinkEscapes { target } => {
                write!(
                    f,
                    "it links to `{target}`, which is outside the unpacked tree"
                )
            }
            Refusal::HardlinkMissing { target } => write!(
                f,
                "it is a hard link to `{target}`, which is not a file unpacked before it"
            ),
            Refusal::UnderSymlink { link } => {
                write!(f, "it would be written through the symbolic link `{link}`")
            }
            Refusal::Clash { path } => write!(
                f,
                "it clashes with `{path}`, unpacked before it as another kind of entry"
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
                "it differs only in case from `{other}`, unpacked before it: on Windows both are one file"
            ),
            Refusal::TooLong { path, length } => {
                write!(f, "{}", crate::longpaths::advice(*length, path))
            }
            Refusal::Unsupported { kind } => write!(
                f,
                "it is a {kind}; only files, folders and links are unpacked"
            ),
        }
    }
}

/// A downloaded input, stored under another name (its sha256) in the cache: unpacked as
/// its original `file_name` says, with the default limits. `input` names it in errors.
pub fn unpack_input(
    input: &str,
    archive: &Path,
    file_name: &str,
    subdir: Option<&str>,
    dest: &Path,
) -> anyhow::Result<Unpacked> {
    let format = Format::from_name(file_name)
        .ok_or_else(|| anyhow::anyhow!("input `{input}`: cannot tell how to unpack {file_name}"))?;
    Ok(unpack(archive, format, subdir, dest, &Limits::default())?)
}

/// The longest entry name of `archive` (below `subdir`, without it), reading only names; for
/// projecting paths before anything is unpacked (`longpaths`).
pub fn longest_member(
    archive: &Path,
    format: Format,
    subdir: Option<&str>,
) -> io::Result<Option<String>> {
    let file = BufReader::new(File::open(archive)?);
    let names: Vec<String> = match format {
        Format::TarGz => {
            let mut tar = tar::Archive::new(GzDecoder::new(file));
            let mut names = Vec::new();
            for entry in tar.entries()? {
                names.push(entry?.path()?.to_string_lossy().into_owned());
            }
            names
        }
        Format::Zip => {
            let zip = zip::ZipArchive::new(file).map_err(io::Error::other)?;
            (0..zip.len())
                .filter_map(|i| {
                    zip.name_for_index(i)
                        .and_then(Result::ok)
                        .map(|n| n.into_owned())
                })
                .collect()
        }
    };
    let prefix = subdir.map(|s| format!("{}/", s.trim_end_matches('/')));
    Ok(names
        .iter()
        .filter_map(|n| match &prefix {
            Some(p) => n.strip_prefix(p.as_str()),
            None => Some(n.as_str()),
        })
        .map(|n| n.trim_start_matches("./").trim_end_matches('/'))
        .max_by_key(|n| n.chars().count())
        .map(str::to_string))
}

/// Unpacks `archive` into `dest` (only its folder `subdir`, when given), replacing whatever
/// `dest` was, or leaving it untouched when anything fails.
pub fn unpack(
    archive: &Path,
    format: Format,
    subdir: Option<&str>,
    dest: &Path,
    limits: &Limits,
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
    let mut prefix = OsString::from(".");
    prefix.push(dest_name);
    prefix.push(".unpack-");
    let file = File::open(archive).map_err(|source| UnpackError::Open {
        archive: archive.to_path_buf(),
        source,
    })?;
    let archive_size = file.metadata().map_or(0, |m| m.len());
    let limits = &limits.for_archive(archive_size);
    let staging = tempfile::Builder::new()
        .prefix(&prefix)
        .tempdir_in(parent)
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
        dest_length: crate::paths::shown(dest).chars().count(),
        dest,
        symlinks: Vec::new(),
        dir_modes: Vec::new(),
        entries: 0,
        unpacked: Unpacked::default(),
        subdir_found: false,
        top_level: Vec::new(),
        more_top_level: false,
        buffer: vec![0; 64 * 1024],
    };
    match format {
        Format::TarGz => unpack_tar_gz(file, &mut tree)?,
        Format::Zip => unpack_zip(file, &mut tree)?,
    }
    let unpacked = tree.finish()?;

    crate::fsx::replace(staging.path(), dest).map_err(|e| write_error(dest, e))?;
    // Moved away already: nothing is left for the guard to delete.
    let _ = staging.keep();
    Ok(unpacked)
}

fn unpack_tar_gz(file: File, tree: &mut Tree) -> Result<(), UnpackError> {
    let mut archive = tar::Archive::new(GzDecoder::new(BufReader::new(file)));
    let entries = archive.entries().map_err(|e| tree.read_error(e))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| tree.read_error(e))?;
        let kind = entry.header().entry_type();
        if kind == EntryType::XGlobalHeader {
            // `pax_global_header`, as `git archive` writes it: metadata, not a member.
            continue;
        }
        tree.count_entry()?;
        let name = utf8(entry.path_bytes().into_owned(), tree, None)?;
        match kind {
            EntryType::Regular | EntryType::Continuous | EntryType::Directory => {
                let is_dir = kind == EntryType::Directory;
                let mode = entry.header().mode().map_err(|e| tree.read_error(e))?;
                match tree.locate(&name, is_dir)? {
                    Some(rel) if is_dir => tree.add_dir(&name, &rel, mode)?,
                    Some(rel) => tree.add_file(&name, &rel, mode, &mut entry)?,
                    None => {}
                }
            }
            EntryType::Symlink | EntryType::Link => {
                let Some(target) = entry.link_name_bytes() else {
                    let source = io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("link `{name}` has no target"),
                    );
                    return Err(tree.read_error(source));
                };
                let target = utf8(target.into_owned(), tree, Some(&name))?;
                match tree.locate(&name, false)? {
                    Some(rel) if kind == EntryType::Symlink => {
                        tree.add_symlink(&name, &rel, &target)?
                    }
                    Some(rel) => tree.add_hardlink(&name, &rel, &target)?,
                    None => {}
                }
            }
            other => {
                let kind = match other {
                    EntryType::Char => "character device".to_string(),
                    EntryType::Block => "block device".to_string(),
                    EntryType::Fifo => "FIFO".to_string(),
                    EntryType::GNUSparse => "sparse file".to_string(),
                    other => format!("tar entry of type `{}`", other.as_byte().escape_ascii()),
                };
                return Err(tree.refuse(&name, Refusal::Unsupported { kind }));
            }
        }
    }
    // The tar reader stops at the end-of-archive block; reading on to the end of the gzip
    // stream checks its CRC, so a truncated or corrupt download is not taken as complete.
    let rest = archive.into_inner();
    io::copy(&mut rest.take(tree.limits.max_bytes), &mut io::sink())
        .map_err(|e| tree.read_error(e))?;
    Ok(())
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

fn unpack_zip(file: File, tree: &mut Tree) -> Result<(), UnpackError> {
    let mut archive =
        ZipArchive::new(BufReader::new(file)).map_err(|e| tree.read_error(e.into()))?;
    if archive.len() as u64 > tree.limits.max_entries {
        return Err(tree.too_many_entries());
    }
    // The sizes the central directory declares, checked before anything is written: entries
    // that share one compressed stream declare the sizes they would inflate to.
    let mut declared = 0u64;
    for index in 0..archive.len() {
        let entry = archive
            .by_index_raw(index)
            .map_err(|e| tree.read_error(e.into()))?;
        declared = declared.saturating_add(entry.size());
        if declared > tree.limits.max_bytes {
            return Err(UnpackError::TooLarge {
                archive: tree.archive.to_path_buf(),
                entry: String::from_utf8_lossy(entry.name_raw()).into_owned(),
                limit: tree.limits.max_bytes,
            });
        }
    }
    for index in 0..archive.len() {
        let mut entry = archive
            .by_index(index)
            .map_err(|e| tree.read_error(e.into()))?;
        tree.count_entry()?;
        let name = match entry.name() {
            Ok(name) => name.into_owned(),
            Err(_) => {
                let shown = String::from_utf8_lossy(entry.name_raw()).into_owned();
                return Err(tree.refuse(&shown, Refusal::NotUtf8));
            }
        };
        let mode = entry.unix_mode();
        let file_type = mode.map_or(0, |m| m & S_IFMT);
        if entry.is_dir() || file_type == S_IFDIR {
            if let Some(rel) = tree.locate(&name, true)? {
                tree.add_dir(&name, &rel, mode.unwrap_or(0o755))?;
            }
        } else if file_type == 0 || file_type == S_IFREG {
            if let Some(rel) = tree.locate(&name, false)? {
                tree.add_file(&name, &rel, mode.unwrap_or(0o644), &mut entry)?;
            }
        } else if file_type == S_IFLNK {
            if let Some(rel) = tree.locate(&name, false)? {
                // A zip symlink's data is its target; PATH_MAX bounds any real one.
                let mut target = Vec::new();
                (&mut entry)
                    .take(4097)
                    .read_to_end(&mut target)
                    .map_err(|e| tree.read_error(e))?;
                if target.len() > 4096 {
                    let kind = "symbolic link with a target longer than 4096 bytes".to_string();
                    return Err(tree.refuse(&name, Refusal::Unsupported { kind }));
                }
                let target = utf8(target, tree, Some(&name))?;
                tree.add_symlink(&name, &rel, &target)?;
            }
        } else {
            let kind = match file_type {
                0o020_000 => "character device".to_string(),
                0o060_000 => "block device".to_string(),
                0o010_000 => "FIFO".to_string(),
                0o140_000 => "socket".to_string(),
                other => format!("zip entry of unix type {other:o}"),
            };
            return Err(tree.refuse(&name, Refusal::Unsupported { kind }));
        }
    }
    Ok(())
}

/// What is on disk under the staging root, by `/`-joined relative path. Kept in memory so
/// that links are checked against what this unpack wrote, without following anything on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    Dir,
    File,
    Symlink(String),
}

struct Tree<'a> {
    archive: &'a Path,
    format: Format,
    root: &'a Path,
    subdir: Option<Vec<String>>,
    subdir_name: Option<String>,
    limits: &'a Limits,
    nodes: HashMap<String, Node>,
    /// Lower-cased relative path → the first entry's spelling (`Limits::case_insensitive`).
    folded: HashMap<String, String>,
    /// The destination's length in characters (entries are checked against
    /// `Limits::longest_path` where they will end up, not in the staging folder).
    dest_length: usize,
    dest: &'a Path,
    /// (entry name, relative path) of every symlink, checked again once all are in.
    symlinks: Vec<(String, Vec<String>)>,
    dir_modes: Vec<(PathBuf, u32)>,
    entries: u64,
    unpacked: Unpacked,
    subdir_found: bool,
    top_level: Vec<String>,
    more_top_level: bool,
    buffer: Vec<u8>,
}

impl Tree<'_> {
    fn read_error(&self, source: io::Error) -> UnpackError {
        UnpackError::Read {
            archive: self.archive.to_path_buf(),
            format: self.format,
            source,
        }
    }

    fn write_error(&self, path: &Path, source: io::Error) -> UnpackError {
        UnpackError::Write {
            archive: self.archive.to_path_buf(),
            path: path.to_path_buf(),
            source,
        }
    }

    fn refuse(&self, entry: &str, reason: Refusal) -> UnpackError {
        UnpackError::Refused {
            archive: self.archive.to_path_buf(),
            entry: entry.to_string(),
            reason,
        }
    }

    fn too_many_entries(&self) -> UnpackError {
        UnpackError::TooManyEntries {
            archive: self.archive.to_path_buf(),
            limit: self.limits.max_entries,
        }
    }

    fn count_entry(&mut self) -> Result<(), UnpackError> {
        self.entries += 1;
        if self.entries > self.limits.max_entries {
            return Err(self.too_many_entries());
        }
        Ok(())
    }

    /// The path below the root where entry `name` goes, or `None` when it is skipped (outside
    /// `subdir`, or the root folder itself).
    fn locate(&mut self, name: &str, is_dir: bool) -> Result<Option<Vec<String>>, UnpackError> {
        let parts = components(name).map_err(|r| self.refuse(name, r))?;
        if let Some(first) = parts.first()
            && !self.top_level.contains(first)
        {
            if self.top_level.len() < 10 {
                self.top_level.push(first.clone());
            } else {
                self.more_top_level = true;
            }
        }
        let rel = match &self.subdir {
            None => parts,
            Some(sub) if parts.starts_with(sub) => {
                self.subdir_found = true;
                parts[sub.len()..].to_vec()
            }
            Some(_) => return Ok(None),
        };
        match (rel.is_empty(), is_dir) {
            (false, _) => Ok(Some(rel)),
            (true, true) => Ok(None),
            (true, false) => Err(self.refuse(name, Refusal::ReplacesRoot)),
        }
    }

    /// Creates the missing parents of `rel` and clears the way for a new entry there,
    /// refusing to go through a symlink or to turn a folder into something else.
    fn prepare(
        &mut self,
        name: &str,
        rel: &[String],
        is_dir: bool,
    ) -> Result<PathBuf, UnpackError> {
        let mut path = self.root.to_path_buf();
        for depth in 1..rel.len() {
            let key = rel[..depth].join("/");
            path.push(&rel[depth - 1]);
            match self.nodes.get(&key) {
                Some(Node::Dir) => {}
                Some(Node::Symlink(_)) => {
                    return Err(self.refuse(name, Refusal::UnderSymlink { link: key }));
                }
                Some(Node::File) => return Err(self.refuse(name, Refusal::Clash { path: key })),
                None => {
                    fs::create_dir(&path).map_err(|e| self.write_error(&path, e))?;
                    self.nodes.insert(key, Node::Dir);
                }
            }
        }
        path.push(&rel[rel.len() - 1]);
        let key = rel.join("/");
        self.check_windows_limits(name, &key)?;
        match (self.nodes.get(&key), is_dir) {
            (None, _) | (Some(Node::Dir), true) => {}
            (Some(Node::Dir), false) | (Some(_), true) => {
                return Err(self.refuse(name, Refusal::Clash { path: key }));
            }
            (Some(_), false) => {
                // A later entry of the same name wins, as with tar itself.
                fs::remove_file(&path).map_err(|e| self.write_error(&path, e))?;
                self.nodes.remove(&key);
            }
        }
        Ok(path)
    }

    /// The limits of a Windows file system, for the entry at `key`: its full length, and no
    /// other entry of the same name but for case.
    fn check_windows_limits(&mut self, name: &str, key: &str) -> Result<(), UnpackError> {
        let length = self.dest_length + 1 + key.chars().count();
        if let Some(longest) = self.limits.longest_path
            && length > longest
        {
            let path = crate::paths::shown(&crate::paths::join_slashed(self.dest, key));
            return Err(self.refuse(name, Refusal::TooLong { path, length }));
        }
        if self.limits.case_insensitive {
            let folded = key.to_lowercase();
            match self.folded.get(&folded) {
                Some(first) if first != key => {
                    let other = first.clone();
                    return Err(self.refuse(name, Refusal::CaseClash { other }));
                }
                Some(_) => {}
                None => {
                    self.folded.insert(folded, key.to_string());
                }
            }
        }
        Ok(())
    }

    fn add_dir(&mut self, name: &str, rel: &[String], mode: u32) -> Result<(), UnpackError> {
        let path = self.prepare(name, rel, true)?;
        let key = rel.join("/");
        if !self.nodes.contains_key(&key) {
            fs::create_dir(&path).map_err(|e| self.write_error(&path, e))?;
            self.nodes.insert(key, Node::Dir);
        }
        // Applied at the end, so a read-only folder does not stop its own files landing.
        self.dir_modes.push((path, mode));
        Ok(())
    }

    fn add_file(
        &mut self,
        name: &str,
        rel: &[String],
        mode: u32,
        data: &mut dyn Read,
    ) -> Result<(), UnpackError> {
        let path = self.prepare(name, rel, false)?;
        // `create_new` never follows a symlink that might be at `path`.
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| self.write_error(&path, e))?;
        self.nodes.insert(rel.join("/"), Node::File);
        let remaining = self.limits.max_bytes - self.unpacked.bytes;
        // One byte more than allowed, so that going over the limit shows.
        let mut data = data.take(remaining.saturating_add(1));
        let mut written = 0u64;
        loop {
            let n = match data.read(&mut self.buffer) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.read_error(e)),
            };
            file.write_all(&self.buffer[..n])
                .map_err(|e| self.write_error(&path, e))?;
            written += n as u64;
        }
        if written > remaining {
            return Err(UnpackError::TooLarge {
                archive: self.archive.to_path_buf(),
                entry: name.to_string(),
                limit: self.limits.max_bytes,
            });
        }
        self.unpacked.bytes += written;
        self.unpacked.files += 1;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // The owner keeps read and write, so the tree can be patched and deleted later;
            // setuid, setgid and sticky bits are dropped.
            let permissions = fs::Permissions::from_mode(mode & 0o777 | 0o600);
            file.set_permissions(permissions)
                .map_err(|e| self.write_error(&path, e))?;
        }
        #[cfg(not(unix))]
        let _ = mode;
        Ok(())
    }

    fn add_symlink(&mut self, name: &str, rel: &[String], target: &str) -> Result<(), UnpackError> {
        if is_absolute(target) {
            let target = target.to_string();
            return Err(self.refuse(name, Refusal::LinkAbsolute { target }));
        }
        self.check_symlink(name, rel, target)?;
        let path = self.prepare(name, rel, false)?;
        #[cfg(unix)]
        std::os::unix::fs::symlink(target, &path).map_err(|e| self.write_error(&path, e))?;
        // Windows: a symlink needs a privilege (SeCreateSymbolicLinkPrivilege, or Developer
        // Mode) that an ordinary account lacks (error 1314), so each in-tree link becomes a
        // copy of what it points to, made in `finish` once every entry is in.
        #[cfg(not(unix))]
        let _ = path;
        self.nodes
            .insert(rel.join("/"), Node::Symlink(target.to_string()));
        self.symlinks.push((name.to_string(), rel.to_vec()));
        Ok(())
    }

    fn check_symlink(&self, name: &str, rel: &[String], target: &str) -> Result<(), UnpackError> {
        match resolve(&self.nodes, &rel[..rel.len() - 1], target) {
            Some(_) => Ok(()),
            None => {
                let target = target.to_string();
                Err(self.refuse(name, Refusal::LinkEscapes { target }))
            }
        }
    }

    /// `target` is a path from the top of the archive, as tar writes hard links.
    fn add_hardlink(
        &mut self,
        name: &str,
        rel: &[String],
        target: &str,
    ) -> Result<(), UnpackError> {
        let owned = || target.to_string();
        let parts = components(target).map_err(|r| {
            let reason = match r {
                Refusal::Absolute => Refusal::LinkAbsolute { target: owned() },
                _ => Refusal::LinkEscapes { target: owned() },
            };
            self.refuse(name, reason)
        })?;
        let target_rel = match &self.subdir {
            None => &parts[..],
            Some(sub) if parts.starts_with(sub) => &parts[sub.len()..],
            Some(_) => {
                return Err(self.refuse(name, Refusal::LinkEscapes { target: owned() }));
            }
        };
        let target_key = target_rel.join("/");
        if self.nodes.get(&target_key) != Some(&Node::File) || target_rel == rel {
            return Err(self.refuse(name, Refusal::HardlinkMissing { target: owned() }));
        }
        let path = self.prepare(name, rel, false)?;
        let original = self.root.join(target_rel.iter().collect::<PathBuf>());
        fs::hard_link(&original, &path).map_err(|e| self.write_error(&path, e))?;
        self.nodes.insert(rel.join("/"), Node::File);
        self.unpacked.files += 1;
        Ok(())
    }

    /// Each symlink, checked to stay in the tree, replaced by a copy of the file or folder it
    /// points to (a dangling one by nothing); the bytes count against the limits.
    #[cfg(not(unix))]
    fn copy_symlinks(&mut self) -> Result<(), UnpackError> {
        for (name, rel) in self.symlinks.clone() {
            let Some(Node::Symlink(target)) = self.nodes.get(&rel.join("/")) else {
                continue;
            };
            let Some(to) = resolve(&self.nodes, &rel[..rel.len() - 1], target) else {
                continue;
            };
            let (from, dest) = (self.root.join(to.join("/")), self.root.join(rel.join("/")));
            let pairs = if from.is_dir() {
                let files = crate::fsx::files_below(&from)
                    .map_err(|e| self.write_error(&dest, io::Error::other(format!("{e:#}"))))?;
                files
                    .into_iter()
                    .map(|(r, p)| (p, crate::paths::join_slashed(&dest, &r)))
                    .collect()
            } else {
                vec![(from, dest)]
            };
            for (source, copy) in pairs {
                let Ok(meta) = fs::metadata(&source) else {
                    continue;
                };
                self.unpacked.bytes += meta.len();
                if self.unpacked.bytes > self.limits.max_bytes {
                    return Err(UnpackError::TooLarge {
                        archive: self.archive.to_path_buf(),
                        entry: name,
                        limit: self.limits.max_bytes,
                    });
                }
                if let Some(parent) = copy.parent() {
                    fs::create_dir_all(parent).map_err(|e| self.write_error(parent, e))?;
                }
                fs::copy(&source, &copy).map_err(|e| self.write_error(&copy, e))?;
            }
        }
        Ok(())
    }

    /// The checks that need every entry: the subdir was there, and no symlink leaves the tree
    /// through another one (`a/up -> ..` then `a/b -> up/..`). Then folder modes are applied.
    #[cfg_attr(unix, allow(unused_mut))] // mutated only where links become copies
    fn finish(mut self) -> Result<Unpacked, UnpackError> {
        if let (Some(subdir), false) = (&self.subdir_name, self.subdir_found) {
            let mut top: Vec<String> = self.top_level.iter().map(|t| format!("`{t}`")).collect();
            if self.more_top_level {
                top.push("…".to_string());
            }
            let top = if top.is_empty() {
                "none, the archive is empty".to_string()
            } else {
                top.join(", ")
            };
            return Err(UnpackError::NoSubdir {
                archive: self.archive.to_path_buf(),
                subdir: subdir.clone(),
                top,
            });
        }
        for (name, rel) in &self.symlinks {
            if let Some(Node::Symlink(target)) = self.nodes.get(&rel.join("/")) {
                self.check_symlink(name, rel, target)?;
            }
        }
        #[cfg(not(unix))]
        self.copy_symlinks()?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            for (path, mode) in &self.dir_modes {
                fs::set_permissions(path, fs::Permissions::from_mode(mode & 0o777 | 0o700))
                    .map_err(|e| self.write_error(path, e))?;
            }
            fs::set_permissions(self.root, fs::Permissions::from_mode(0o755))
                .map_err(|e| self.write_error(self.root, e))?;
        }
        Ok(self.unpacked)
    }
}

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
            part if part.contains([':', '\0']) || crate::safe_path::is_device_name(part) => {
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
mod tests {
    use super::*;

    use flate2::Compression;
    use flate2::write::GzEncoder;
    use tar::Header;
    use tempfile::TempDir;
    use zip::ZipWriter;
    use zip::write::SimpleFileOptions;

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

    /// Unpacks into a fresh `out`, expecting an error, nothing at `out` and nothing left over.
    fn refused(dir: &TempDir, archive: &Path, format: Format, limits: &Limits) -> UnpackError {
        let out = dir.path().join("out");
        let err = unpack(archive, format, None, &out, limits).unwrap_err();
        assert!(!out.exists(), "{} should not exist", out.display());
        assert_eq!(leftovers(dir.path()), Vec::<String>::new());
        err
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
        assert_eq!(Format::from_name("ct2rs-0.9.17.crate"), Some(Format::TarGz));
        assert_eq!(Format::from_name("x-1.0.tar.gz"), Some(Format::TarGz));
        assert_eq!(Format::from_name("X.TGZ"), Some(Format::TarGz));
        assert_eq!(Format::from_name("a.zip"), Some(Format::Zip));
        assert_eq!(
            Format::from_name("ctranslate2-4.6.0-cp312-none-any.whl"),
            Some(Format::Zip)
        );
        assert_eq!(Format::from_name("a.tar.xz"), None);
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
        let done = unpack(&archive, Format::TarGz, None, &out, &Limits::default()).unwrap();
        assert_eq!(
            done,
            Unpacked {
                files: 3,
                // Windows: and the 5 bytes of the link's copy
                bytes: if cfg!(unix) { 16 } else { 21 }
            }
        );
        assert_eq!(fs::read(out.join("pkg/README")).unwrap(), b"hello");
        assert_eq!(fs::read(out.join("pkg/deep/er/x.txt")).unwrap(), b"x");
        assert_eq!(fs::read(out.join("pkg/bin/readme")).unwrap(), b"hello");
        #[cfg(unix)] // Windows: a copy (see Tree::copy_symlinks)
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
        let done = unpack(&archive, Format::Zip, None, &out, &Limits::default()).unwrap();
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
        let done = unpack(&archive, Format::TarGz, subdir, &out, &Limits::default()).unwrap();
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
        let err = unpack(
            &archive,
            Format::TarGz,
            Some("ct2rs-0.9.17/CTranslate2"),
            &out,
            &Limits::default(),
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
        let err = unpack(
            &archive,
            Format::TarGz,
            Some("../x"),
            &out,
            &Limits::default(),
        )
        .unwrap_err();
        assert!(matches!(err, UnpackError::BadSubdir { .. }), "{err}");
    }

    #[test]
    fn parent_components_in_a_tar_are_refused() {
        let dir = TempDir::new().unwrap();
        let archive = tar_gz(
            &dir,
            &[
                Regular("pkg/ok", 0o644, b"ok"),
                Regular("pkg/../../evil", 0o644, b"x"),
            ],
        );
        let err = refused(&dir, &archive, Format::TarGz, &Limits::default());
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
        let archive = zip_file(&dir, "a.whl", |w| {
            zip_entry(w, "a/__init__.py", 0o644, b"");
            zip_entry(w, "../evil", 0o644, b"x");
        });
        let err = refused(&dir, &archive, Format::Zip, &Limits::default());
        assert_eq!(reason(&err), &Refusal::Escapes);
        assert!(
            err.to_string().contains("refusing entry `../evil` in "),
            "{err}"
        );
        let backslash = zip_file(&dir, "b.whl", |w| {
            zip_entry(w, "a\\..\\..\\evil", 0o644, b"")
        });
        let err = refused(&dir, &backslash, Format::Zip, &Limits::default());
        assert_eq!(reason(&err), &Refusal::Escapes);
    }

    #[test]
    fn absolute_paths_are_refused() {
        let dir = TempDir::new().unwrap();
        let archive = tar_gz(&dir, &[Regular("/tmp/evil", 0o644, b"x")]);
        let err = refused(&dir, &archive, Format::TarGz, &Limits::default());
        assert_eq!(reason(&err), &Refusal::Absolute);
        for name in ["C:\\evil", "\\evil", "c:/evil"] {
            let archive = zip_file(&dir, "a.zip", |w| zip_entry(w, name, 0o644, b"x"));
            let err = refused(&dir, &archive, Format::Zip, &Limits::default());
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
            let archive = tar_gz(&dir, members);
            let err = refused(&dir, &archive, Format::TarGz, &Limits::default());
            assert_eq!(reason(&err), &expected);
        }
    }

    #[test]
    fn writing_through_a_symlink_is_refused() {
        let dir = TempDir::new().unwrap();
        let archive = tar_gz(
            &dir,
            &[
                Dir("pkg/real/"),
                Symlink("pkg/alias", "real"),
                Regular("pkg/alias/x", 0o644, b"x"),
            ],
        );
        let err = refused(&dir, &archive, Format::TarGz, &Limits::default());
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
        let archive = zip_file(&dir, "a.whl", |w| {
            w.add_symlink("a/link", "../../outside", SimpleFileOptions::default())
                .unwrap();
        });
        let err = refused(&dir, &archive, Format::Zip, &Limits::default());
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
            let archive = tar_gz(&dir, members);
            let err = refused(&dir, &archive, Format::TarGz, &Limits::default());
            assert_eq!(reason(&err), &expected);
        }
    }

    #[test]
    fn device_entries_are_refused() {
        let dir = TempDir::new().unwrap();
        let archive = tar_gz(&dir, &[Regular("pkg/ok", 0o644, b"ok"), Char("pkg/null")]);
        let err = refused(&dir, &archive, Format::TarGz, &Limits::default());
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
        let err = refused(&dir, &archive, Format::Zip, &limits);
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

    /// Issue 18 item 8: a small zip whose entries declare far more than it could hold (as
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
        let err = refused(&dir, &archive, Format::Zip, &Limits::default());
        let UnpackError::TooLarge { limit, .. } = err else {
            panic!("{err}");
        };
        assert_eq!(limit, 64 << 20, "the ratio cap, not 16 GiB");
    }

    /// Issue 18 item 8: a tar stream past the ratio stops there.
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
        let err = refused(&dir, &archive, Format::TarGz, &limits);
        assert!(matches!(err, UnpackError::TooLarge { .. }), "{err}");
    }

    /// Issue 18 item 13: names that are safe on Linux but not on Windows are refused on
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
            let archive = tar_gz(&dir, &[Regular(name, 0o644, b"x")]);
            let err = refused(&dir, &archive, Format::TarGz, &Limits::default());
            assert!(
                matches!(
                    reason(&err),
                    Refusal::WindowsName { .. } | Refusal::Absolute
                ),
                "{name}: {err}"
            );
            let archive = zip_file(&dir, "w.zip", |w| zip_entry(w, name, 0o644, b"x"));
            let err = refused(&dir, &archive, Format::Zip, &Limits::default());
            assert!(
                matches!(
                    reason(&err),
                    Refusal::WindowsName { .. } | Refusal::Absolute
                ),
                "{name}: {err}"
            );
        }
    }

    /// Issue 26: what a Windows file system makes of names. Trailing dots and spaces are
    /// refused everywhere (Windows drops them); names that differ only in case, and paths
    /// past MAX_PATH while long paths are off, where the limits say so (on Windows by
    /// default, here by asking).
    #[test]
    fn windows_file_system_limits_are_refused_with_the_entry_named() {
        for name in ["pkg/a.", "pkg/a ", "pkg/dir./x", "pkg/..."] {
            let dir = TempDir::new().unwrap();
            let archive = tar_gz(&dir, &[Regular(name, 0o644, b"x")]);
            let err = refused(&dir, &archive, Format::TarGz, &Limits::default());
            assert!(
                matches!(reason(&err), Refusal::TrailingDotOrSpace { .. }),
                "{name}: {err}"
            );
        }
        let windows = Limits {
            case_insensitive: true,
            longest_path: Some(crate::longpaths::LONGEST),
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
        let err = refused(&dir, &case, Format::TarGz, &windows);
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
            unpack(&case, Format::TarGz, None, &dir.path().join("ok"), &linux).unwrap();
        }

        let out = dir.path().join("out");
        let room = crate::longpaths::LONGEST - crate::paths::shown(&out).chars().count() - 1;
        let fits = format!("pkg/{}", "d".repeat(room - 4));
        let too_long = format!("pkg/{}", "d".repeat(room - 3));
        // A zip: a tar header's name holds only 100 bytes.
        let archive = zip_file(&dir, "fits.zip", |w| zip_entry(w, &fits, 0o644, b"x"));
        unpack(&archive, Format::Zip, None, &out, &windows).unwrap();
        fs::remove_dir_all(&out).unwrap();
        let archive = zip_file(&dir, "long.zip", |w| zip_entry(w, &too_long, 0o644, b"x"));
        let err = refused(&dir, &archive, Format::Zip, &windows);
        let text = err.to_string();
        assert!(
            matches!(reason(&err), Refusal::TooLong { length, .. } if *length == crate::longpaths::LONGEST + 1),
            "{text}"
        );
        assert!(
            text.contains("LongPathsEnabled /t REG_DWORD /d 1"),
            "{text}"
        );
    }

    #[test]
    fn tar_over_the_byte_limit_is_refused() {
        let dir = TempDir::new().unwrap();
        let half = vec![0u8; 600 * 1024];
        let archive = tar_gz(
            &dir,
            &[Regular("a", 0o644, &half), Regular("b", 0o644, &half)],
        );
        let limits = Limits {
            max_bytes: 1 << 20,
            ..Limits::default()
        };
        let err = refused(&dir, &archive, Format::TarGz, &limits);
        assert!(
            matches!(err, UnpackError::TooLarge { ref entry, .. } if entry == "b"),
            "{err}"
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
        let err = refused(&dir, &archive, Format::TarGz, &limits);
        assert!(matches!(err, UnpackError::TooLarge { .. }), "{err}");
        // Under a larger limit the missing data shows as a damaged archive instead.
        let err = refused(&dir, &archive, Format::TarGz, &Limits::default());
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
        let err = refused(&dir, &archive, Format::TarGz, &limits);
        assert!(
            matches!(err, UnpackError::TooManyEntries { limit: 2, .. }),
            "{err}"
        );
        let archive = zip_file(&dir, "a.zip", |w| {
            for name in ["a", "b", "c"] {
                zip_entry(w, name, 0o644, b"");
            }
        });
        let err = refused(&dir, &archive, Format::Zip, &limits);
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
            let err = refused(&dir, &archive, Format::TarGz, &Limits::default());
            assert!(
                matches!(err, UnpackError::Read { .. }),
                "cut at {cut}: {err}"
            );
            assert!(err.to_string().contains("cut.crate"), "{err}");
        }
        fs::write(&archive, b"not a gzip at all").unwrap();
        let err = refused(&dir, &archive, Format::TarGz, &Limits::default());
        assert!(matches!(err, UnpackError::Read { .. }), "{err}");
        let zip = dir.path().join("garbage.whl");
        fs::write(&zip, &whole[..1000]).unwrap();
        let err = refused(&dir, &zip, Format::Zip, &Limits::default());
        assert!(matches!(err, UnpackError::Read { .. }), "{err}");
        let missing = dir.path().join("missing.zip");
        let err = refused(&dir, &missing, Format::Zip, &Limits::default());
        assert!(matches!(err, UnpackError::Open { .. }), "{err}");
    }

    #[test]
    fn existing_destination_survives_a_bad_archive_and_is_replaced_by_a_good_one() {
        let dir = TempDir::new().unwrap();
        let out = dir.path().join("out");
        fs::create_dir_all(out.join("old")).unwrap();
        fs::write(out.join("old/file"), b"old").unwrap();

        let bad = tar_gz(
            &dir,
            &[
                Regular("new", 0o644, b"new"),
                Regular("../evil", 0o644, b"x"),
            ],
        );
        let err = unpack(&bad, Format::TarGz, None, &out, &Limits::default()).unwrap_err();
        assert_eq!(reason(&err), &Refusal::Escapes);
        assert_eq!(fs::read(out.join("old/file")).unwrap(), b"old");
        assert!(!out.join("new").exists());
        assert_eq!(leftovers(dir.path()), Vec::<String>::new());

        let good = tar_gz(&dir, &[Regular("new", 0o644, b"new")]);
        unpack(&good, Format::TarGz, None, &out, &Limits::default()).unwrap();
        assert_eq!(fs::read(out.join("new")).unwrap(), b"new");
        assert!(!out.join("old").exists());
        assert_eq!(leftovers(dir.path()), Vec::<String>::new());
    }
}
