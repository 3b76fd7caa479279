//! `.crate`, `.tar.gz`, `.tgz`: entries read from the gzip stream into the [`Tree`].

use std::fs::File;
use std::io::{self, BufReader, Read};

use flate2::read::GzDecoder;
use tar::EntryType;

use super::tree::Tree;
use super::{Refusal, UnpackError, utf8};

pub(super) fn unpack(file: File, tree: &mut Tree) -> Result<(), UnpackError> {
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
