//! `.crate`, `.tar.gz`, `.tgz`: entries read from the gzip stream into the [`Tree`].

use std::fs::File;
use std::io::{self, BufReader, Read};

use flate2::read::GzDecoder;
use tar::EntryType;

use super::tree::Tree;
use super::{Refusal, UnpackError, escaped, utf8};

pub(super) fn unpack(file: File, tree: &mut Tree) -> Result<(), UnpackError> {
    let mut stream = Capped {
        inner: GzDecoder::new(BufReader::new(file)),
        left: tree.limits.max_bytes,
        over: false,
    };
    let mut name = String::new();
    let result = entries(&mut stream, tree, &mut name);
    if stream.over {
        return Err(tree.too_large(&name));
    }
    result
}

/// Every entry of the tar `stream` into `tree`; `name` is the one being unpacked.
fn entries(
    stream: &mut Capped<GzDecoder<BufReader<File>>>,
    tree: &mut Tree,
    name: &mut String,
) -> Result<(), UnpackError> {
    let mut archive = tar::Archive::new(&mut *stream);
    let entries = archive.entries().map_err(|e| tree.read_error(e))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| tree.read_error(e))?;
        let kind = entry.header().entry_type();
        if kind == EntryType::XGlobalHeader {
            // `pax_global_header`, as `git archive` writes it: metadata, not a member.
            continue;
        }
        tree.count_entry()?;
        *name = utf8(entry.path_bytes().into_owned(), tree, None)?;
        let name = name.as_str();
        match kind {
            EntryType::Regular | EntryType::Continuous | EntryType::Directory => {
                let is_dir = kind == EntryType::Directory;
                let mode = entry.header().mode().map_err(|e| tree.read_error(e))?;
                match tree.locate(name, is_dir)? {
                    Some(rel) if is_dir => tree.add_dir(name, &rel, mode)?,
                    Some(rel) => tree.add_file(name, &rel, mode, &mut entry)?,
                    None => {}
                }
            }
            EntryType::Symlink | EntryType::Link => {
                let Some(target) = entry.link_name_bytes() else {
                    let source = io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("link `{}` has no target", escaped(name)),
                    );
                    return Err(tree.read_error(source));
                };
                let target = utf8(target.into_owned(), tree, Some(name))?;
                match tree.locate(name, false)? {
                    Some(rel) if kind == EntryType::Symlink => {
                        tree.add_symlink(name, &rel, &target)?
                    }
                    Some(rel) => tree.add_hardlink(name, &rel, &target)?,
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
                return Err(tree.refuse(name, Refusal::Unsupported { kind }));
            }
        }
    }
    // The tar reader stops at the end-of-archive block; reading on to the end of the gzip
    // stream checks its CRC, so a truncated or corrupt download is not taken as complete.
    io::copy(archive.into_inner(), &mut io::sink()).map_err(|e| tree.read_error(e))?;
    Ok(())
}

/// The decompressed stream, failing past `left` bytes: what is read without being written
/// (headers, long names and pax records, which the tar reader holds in memory, and the data
/// of entries outside the subdir) is capped as what is written is.
struct Capped<R> {
    inner: R,
    left: u64,
    over: bool,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.left == 0 {
            // At the cap: the end of the stream is fine, one byte more is not.
            let n = self.inner.read(&mut [0u8; 1])?;
            if n == 0 {
                return Ok(0);
            }
            self.over = true;
            return Err(io::Error::other(
                "the decompressed stream is past the limit",
            ));
        }
        let room = usize::try_from(self.left)
            .unwrap_or(usize::MAX)
            .min(buf.len());
        let n = self.inner.read(&mut buf[..room])?;
        self.left = self.left.saturating_sub(n as u64);
        Ok(n)
    }
}
