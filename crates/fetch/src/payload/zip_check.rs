//! A zip or wheel read to the end of every entry before `pin` records it: each entry's data
//! inside the file, its deflate stream whole, its CRC and size as the central directory
//! says (the zip crate checks both as an entry is read to its end, `zip` 9.8
//! `src/crc32.rs`); a wheel's files against its RECORD (`wheel_record`). What is decoded is
//! capped as the unpacker caps it, and streamed, never held.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{self, BufReader, Read, Write};

use zip::ZipArchive;
use zip::read::ZipReadOptions;

use super::{Entry, Refused};
use crate::unpack::Limits;
use crate::wheel_record::{self, MAX_RECORD_BYTES, Record};
use ct2v_support::diagnostic::escaped;

/// The zip's entries, once every one reads to its end and checks (and, for a wheel, its
/// files are what its RECORD says).
pub(super) fn entries(file: File, len: u64, wheel: bool) -> Result<Vec<Entry>, Refused> {
    let mut zip = ZipArchive::new(BufReader::new(file))
        .map_err(|e| Refused::Unreadable(format!("its zip directory does not read: {e}")))?;
    let limit = Limits::default().for_archive(len).max_bytes;
    let listing = listing(&mut zip, len, limit)?;
    if zip.has_duplicate_names() {
        // The zip crate keeps one of them, Python's zipfile extracts both (the last wins):
        // what is checked here might not be what is installed.
        return Err(Refused::Damaged {
            entry: String::new(),
            why: "its zip directory names one file more than once".to_string(),
        });
    }
    let record = match wheel {
        true => Some(read_record(&mut zip, &listing)?),
        false => None,
    };
    let mut left = limit;
    let mut present = BTreeSet::new();
    for (index, (name, is_dir)) in listing.iter().enumerate() {
        let damaged = |why: String| Refused::Damaged {
            entry: name.clone(),
            why,
        };
        // The local header must say what the directory says (its name, sizes and CRC), as
        // Python's zipfile checks the name before it extracts (CPython `Lib/zipfile`,
        // `ZipFile.open`: "File name in directory ... and header ... differ").
        let consistent = ZipReadOptions::new().enforce_header_consistency(true);
        let mut entry = zip
            .by_index_with_options(index, consistent)
            .map_err(|e| damaged(format!("it does not open: {e}")))?;
        let declared = entry.size();
        let mut hash = match &record {
            Some(record) if !is_dir && !record.is_exempt(name) => Some(
                record
                    .hasher(name)
                    .ok_or_else(|| damaged(record.unlisted(name)))?,
            ),
            _ => None,
        };
        let read = read_to_end(&mut entry, &mut hash, &mut left).map_err(|e| match e {
            None => Refused::Bomb {
                entry: name.clone(),
                limit,
            },
            Some(e) => damaged(format!("its data does not read to its end: {e}")),
        })?;
        if read != declared {
            return Err(damaged(format!(
                "its data is {read} bytes, where the zip's directory says {declared}"
            )));
        }
        if let (Some(record), Some(hash)) = (&record, hash) {
            record.check(name, hash).map_err(damaged)?;
        }
        if !is_dir {
            present.insert(name.clone());
        }
    }
    if let Some(record) = &record
        && let Some(first) = record.missing(&present).into_iter().next()
    {
        return Err(Refused::Damaged {
            entry: String::new(),
            why: first,
        });
    }
    Ok(listing)
}

/// Every entry's name, once its data lies inside the file and the sizes the directory
/// declares stay within `limit` (entries sharing one compressed stream declare what each
/// would inflate to).
fn listing(
    zip: &mut ZipArchive<BufReader<File>>,
    len: u64,
    limit: u64,
) -> Result<Vec<Entry>, Refused> {
    let mut entries = Vec::with_capacity(zip.len());
    let mut declared = 0u64;
    for i in 0..zip.len() {
        let entry = zip
            .by_index_raw(i)
            .map_err(|e| Refused::Unreadable(format!("zip entry {i} does not read: {e}")))?;
        let name = String::from_utf8_lossy(entry.name_raw()).into_owned();
        let start = entry.data_start().unwrap_or(entry.header_start());
        let end = start.saturating_add(entry.compressed_size());
        if end > len {
            return Err(Refused::Unreadable(format!(
                "entry `{}` ends at byte {end}, past the end of the file (truncated)",
                escaped(&name)
            )));
        }
        declared = declared.saturating_add(entry.size());
        if declared > limit {
            return Err(Refused::Bomb { entry: name, limit });
        }
        entries.push((name, entry.is_dir()));
    }
    Ok(entries)
}

/// The wheel's RECORD, read (at most [`MAX_RECORD_BYTES`]).
fn read_record(
    zip: &mut ZipArchive<BufReader<File>>,
    listing: &[Entry],
) -> Result<Record, Refused> {
    let damaged = |entry: &str, why: String| Refused::Damaged {
        entry: entry.to_string(),
        why,
    };
    let name = wheel_record::record_name(listing.iter().map(|(n, _)| n.as_str()))
        .map_err(|why| damaged("", why))?;
    let index = listing
        .iter()
        .position(|(n, _)| n == name)
        .expect("the name is one of the listing's");
    let entry = zip
        .by_index(index)
        .map_err(|e| damaged(name, format!("it does not open: {e}")))?;
    let mut bytes = Vec::new();
    entry
        .take(MAX_RECORD_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| damaged(name, format!("its data does not read to its end: {e}")))?;
    if bytes.len() as u64 > MAX_RECORD_BYTES {
        return Err(damaged(
            name,
            format!("it is larger than {MAX_RECORD_BYTES} bytes, far more than any wheel's"),
        ));
    }
    Record::parse(name, &bytes).map_err(|why| damaged(name, why))
}

/// Reads `entry` to its end (so that its CRC is checked) into `hash` when given, counting
/// what it decodes against `left`: `Err(None)` once `left` would go below 0.
fn read_to_end(
    entry: &mut impl Read,
    hash: &mut Option<wheel_record::FileHash>,
    left: &mut u64,
) -> Result<u64, Option<io::Error>> {
    let mut buffer = vec![0u8; 64 * 1024];
    let mut read = 0u64;
    loop {
        let n = match entry.read(&mut buffer) {
            Ok(0) => return Ok(read),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Some(e)),
        };
        if n as u64 > *left {
            return Err(None);
        }
        *left -= n as u64;
        read += n as u64;
        if let Some(hash) = hash {
            hash.write_all(&buffer[..n]).map_err(Some)?;
        }
    }
}
