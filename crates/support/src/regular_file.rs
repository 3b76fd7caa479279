//! The one way this tool opens a file to write, and to read a record or a marker: only ever a
//! regular file at that very name. A link is never followed (Unix `O_NOFOLLOW`; Windows
//! `FILE_FLAG_OPEN_REPARSE_POINT`, then a name-surrogate reparse point refused), a FIFO, socket or
//! device is refused without waiting for it (`O_NONBLOCK`, then `fstat`), and a record or
//! marker is read only up to a size cap, as the selector reads sysfs. A file is truncated only
//! once it is known to be a regular file.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::path::Path;

/// How a file is opened for writing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Made here: anything already at the name (a file, a link, a FIFO) is an error.
    CreateNew,
    /// Made, or emptied when a regular file is there.
    Truncate,
    /// Made, or written at its end (a log).
    Append,
    /// Made, or opened as it is for reading and writing (a lock file); on Windows nobody may
    /// delete it while it is open.
    Lock,
}

/// Opens `path` for writing as `mode` says, only as a regular file (see the module doc).
pub fn open(path: &Path, mode: Mode) -> io::Result<File> {
    let mut options = OpenOptions::new();
    match mode {
        Mode::CreateNew => options.write(true).create_new(true),
        // Emptied below, once known to be a regular file.
        Mode::Truncate => options.write(true).create(true),
        Mode::Append => options.append(true).create(true),
        Mode::Lock => options.read(true).write(true).create(true),
    };
    os::never_follow(&mut options, mode);
    let file = options.open(path).map_err(|e| why_not(path, e))?;
    check_regular(&file)?;
    if mode == Mode::Truncate {
        file.set_len(0)?;
    }
    Ok(file)
}

/// `File::create` made safe: [`open`] as [`Mode::Truncate`].
pub fn create(path: impl AsRef<Path>) -> io::Result<File> {
    open(path.as_ref(), Mode::Truncate)
}

/// Copies the regular file `from` to `to` (made, or emptied first), only as regular files;
/// keeps the Unix mode. Returns the bytes copied.
pub fn copy(from: impl AsRef<Path>, to: impl AsRef<Path>) -> io::Result<u64> {
    let mut source = open_to_read(from.as_ref())?;
    let mut target = open(to.as_ref(), Mode::Truncate)?;
    let copied = io::copy(&mut source, &mut target)?;
    target.set_permissions(source.metadata()?.permissions())?;
    Ok(copied)
}

/// The bytes of `path`, a regular file of at most `cap` bytes (a record, a marker, a lock
/// file): a link, a FIFO, a socket, a device or a larger file is an error, never waited on.
pub fn read_small(path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    let file = open_to_read(path)?;
    let too_large = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("it is larger than {cap} bytes, more than this tool ever writes there"),
        )
    };
    if file.metadata()?.len() > cap {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    file.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    // It may have grown since.
    if bytes.len() as u64 > cap {
        return Err(too_large());
    }
    Ok(bytes)
}

/// [`read_small`] as text (invalid UTF-8 is an error).
pub fn read_small_to_string(path: &Path, cap: u64) -> io::Result<String> {
    String::from_utf8(read_small(path, cap)?)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "it is not UTF-8 text"))
}

/// Opens the regular file `path` to read, never through a link, never waiting on a FIFO.
fn open_to_read(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    os::never_follow(&mut options, Mode::CreateNew);
    let file = options.open(path).map_err(|e| why_not(path, e))?;
    check_regular(&file)?;
    Ok(file)
}

/// An open that failed: said as "a link" or "a FIFO…" where that is why (the OS says "too
/// many levels of symbolic links", or "no such device or address" for a FIFO without a reader).
fn why_not(path: &Path, e: io::Error) -> io::Error {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => not_a_file("a link (never followed)"),
        Ok(meta) if !meta.is_file() && !meta.is_dir() => not_a_file(kind_of(&meta)),
        Ok(meta) if meta.is_dir() => not_a_file("a folder"),
        _ => e,
    }
}

fn check_regular(file: &File) -> io::Result<()> {
    let meta = file.metadata()?;
    if os::is_link(file)? {
        return Err(not_a_file("a link (never followed)"));
    }
    if meta.is_file() {
        return Ok(());
    }
    Err(not_a_file(if meta.is_dir() {
        "a folder"
    } else {
        kind_of(&meta)
    }))
}

fn not_a_file(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("it is {what}, not a regular file"),
    )
}

#[cfg(unix)]
fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let kind = meta.file_type();
    if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else {
        "not a file"
    }
}

#[cfg(not(unix))]
fn kind_of(_: &std::fs::Metadata) -> &'static str {
    "a device or another special file"
}

#[cfg(unix)]
mod os {
    use std::fs::{File, OpenOptions};
    use std::io;
    use std::os::unix::fs::OpenOptionsExt;

    use super::Mode;

    /// `O_NOFOLLOW` refuses a link at the final name (open(2)); `O_NONBLOCK` makes opening a
    /// FIFO return at once (for writing without a reader: ENXIO, fifo(7)) instead of waiting,
    /// and is meaningless for the regular files this tool then uses.
    pub(super) fn never_follow(options: &mut OpenOptions, _: Mode) {
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC);
    }

    /// An open with `O_NOFOLLOW` never gives a link.
    pub(super) fn is_link(_: &File) -> io::Result<bool> {
        Ok(false)
    }
}

#[cfg(windows)]
mod os {
    use std::fs::{File, OpenOptions};
    use std::io;
    use std::os::windows::fs::OpenOptionsExt;
    use std::os::windows::io::AsRawHandle;

    use windows_sys::Win32::Storage::FileSystem::{
        FILE_ATTRIBUTE_REPARSE_POINT, FILE_ATTRIBUTE_TAG_INFO, FILE_FLAG_OPEN_REPARSE_POINT,
        FILE_SHARE_READ, FILE_SHARE_WRITE, FileAttributeTagInfo, GetFileInformationByHandleEx,
    };

    /// `IsReparseTagNameSurrogate` (winnt.h, as mingw-w64 ships it): the reparse point names
    /// another file (a symbolic link, a junction), unlike a cloud file's or a deduplicated one's.
    const NAME_SURROGATE: u32 = 0x2000_0000;

    use super::Mode;

    /// `FILE_FLAG_OPEN_REPARSE_POINT` opens a symbolic link or junction itself, not what it
    /// points to (CreateFileW's documentation); [`is_link`] then refuses it. A lock
    /// file is shared for reading and writing but not deletion, so that it is never removed
    /// while another run has it open.
    pub(super) fn never_follow(options: &mut OpenOptions, mode: Mode) {
        options.custom_flags(FILE_FLAG_OPEN_REPARSE_POINT);
        if mode == Mode::Lock {
            options.share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE);
        }
    }

    /// Whether `file`, opened as itself, is a link to another file: a reparse point whose
    /// tag is a name surrogate (GetFileInformationByHandleEx, FileAttributeTagInfo).
    pub(super) fn is_link(file: &File) -> io::Result<bool> {
        let mut info = FILE_ATTRIBUTE_TAG_INFO {
            FileAttributes: 0,
            ReparseTag: 0,
        };
        // SAFETY: `info` is a FILE_ATTRIBUTE_TAG_INFO of the size given, written by the call;
        // the handle is open for as long as `file` is borrowed.
        let ok = unsafe {
            GetFileInformationByHandleEx(
                file.as_raw_handle(),
                FileAttributeTagInfo,
                (&raw mut info).cast(),
                size_of::<FILE_ATTRIBUTE_TAG_INFO>() as u32,
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(info.FileAttributes & FILE_ATTRIBUTE_REPARSE_POINT != 0
            && info.ReparseTag & NAME_SURROGATE != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn a_regular_file_is_written_truncated_appended_and_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a");
        crate::fsx::write(&path, "longer text").unwrap();
        crate::fsx::write(&path, "short").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "short");
        std::io::Write::write_all(&mut open(&path, Mode::Append).unwrap(), b"+").unwrap();
        assert_eq!(read_small_to_string(&path, 6).unwrap(), "short+");
        let e = read_small(&path, 5).unwrap_err();
        assert!(e.to_string().contains("larger than 5 bytes"), "{e}");
        let e = open(&path, Mode::CreateNew).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        copy(&path, dir.path().join("b")).unwrap();
        assert_eq!(fs::read(dir.path().join("b")).unwrap(), b"short+");
        let e = open(dir.path(), Mode::Truncate).unwrap_err();
        assert!(e.to_string().contains("folder"), "{e}");
    }

    /// A link (to a user's file, to `/dev/zero`, dangling), a FIFO with or without a reader
    /// and a socket are refused by every mode and by the reader, at once; the file a link
    /// points to is not touched.
    #[cfg(unix)]
    #[test]
    fn links_fifos_sockets_and_devices_are_refused_and_never_waited_on() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let users = dir.path().join("users.txt");
        fs::write(&users, "years of work").unwrap();
        let to_users = dir.path().join("to-users");
        symlink(&users, &to_users).unwrap();
        let to_zero = dir.path().join("to-zero");
        symlink("/dev/zero", &to_zero).unwrap();
        let dangling = dir.path().join("dangling");
        symlink(dir.path().join("nowhere"), &dangling).unwrap();
        let fifo = dir.path().join("fifo");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let socket = dir.path().join("socket");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let cases: [(&Path, &str); 6] = [
            (&to_users, "a link"),
            (&to_zero, "a link"),
            (&dangling, "a link"),
            (&fifo, "a FIFO"),
            (&socket, "a socket"),
            (Path::new("/dev/null"), "a device"),
        ];
        for (path, says) in cases {
            for mode in [Mode::CreateNew, Mode::Truncate, Mode::Append, Mode::Lock] {
                let e = open(path, mode).unwrap_err();
                let expected = if mode == Mode::CreateNew { "" } else { says };
                assert!(
                    e.to_string().contains(expected),
                    "{}, {mode:?}: {e}",
                    path.display()
                );
            }
            let e = read_small(path, 1 << 20).unwrap_err();
            assert!(e.to_string().contains(says), "{}: {e}", path.display());
        }
        // A FIFO with a reader waiting is still refused, not written into.
        let reader = {
            use std::os::unix::fs::OpenOptionsExt;
            OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&fifo)
                .unwrap()
        };
        let e = open(&fifo, Mode::Truncate).unwrap_err();
        assert!(e.to_string().contains("a FIFO"), "{e}");
        drop(reader);
        assert_eq!(fs::read_to_string(&users).unwrap(), "years of work");
        assert!(!dir.path().join("nowhere").exists());
    }
}
