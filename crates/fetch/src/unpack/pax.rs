//! The commit a `git archive` tarball records: its first entry is a pax global header
//! (typeflag `g`, named `pax_global_header`) with the record `comment=<commit id>` (git
//! Documentation/git-archive.txt; GitHub's archives keep it: unjs/giget#106,
//! ocaml/opam-repository#26958). Only that first header is read.

use std::fs::File;
use std::io::{self, BufReader};
use std::path::Path;

use flate2::read::GzDecoder;
use tar::EntryType;

/// The `comment` of the archive's pax global header, when its first entry is one.
pub(crate) fn archive_commit(archive: &Path) -> io::Result<Option<String>> {
    let file = File::open(archive)?;
    let mut tar = tar::Archive::new(GzDecoder::new(BufReader::new(file)));
    let mut entries = tar.entries()?;
    let Some(first) = entries.next() else {
        return Ok(None);
    };
    let mut first = first?;
    if first.header().entry_type() != EntryType::XGlobalHeader {
        return Ok(None);
    }
    // A real header is 52 bytes; anything past 64 KiB is not one `git archive` wrote.
    if first.header().size()? > 64 << 10 {
        return Ok(None);
    }
    let Some(extensions) = first.pax_extensions()? else {
        return Ok(None);
    };
    for extension in extensions {
        let extension = extension?;
        if extension.key_bytes() == b"comment" {
            return Ok(std::str::from_utf8(extension.value_bytes())
                .ok()
                .map(|v| v.trim().to_string()));
        }
    }
    Ok(None)
}
