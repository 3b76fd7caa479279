//! A wheel's RECORD (`<name>.dist-info/RECORD`) and the files it must list, as the binary
//! distribution format says (pypa/packaging.python.org,
//! `source/specifications/binary-distribution-format.rst`, "The .dist-info directory"):
//! "every file except RECORD, which cannot contain a hash of itself, must include its hash.
//! The hash algorithm must be sha256 or better; specifically, md5 and sha1 are not
//! permitted"; "RECORD.jws ... RECORD.p7s ... It is not mentioned in RECORD"; "Apart from
//! RECORD and its signatures, installation will fail if any file in the archive is not both
//! mentioned and correctly hashed in RECORD." Its lines are CSV as Python's `csv` module
//! writes them (PEP 376, "RECORD"): `path,algorithm=urlsafe-base64-digest,size`, a field
//! holding a comma, quote or line end quoted with `"` and its quotes doubled.
//!
//! A checker reads RECORD first, then streams each file through the hash its line names
//! ([`Record::hasher`]), so no file is held in memory.

use std::collections::{BTreeMap, BTreeSet};
use std::io;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256, Sha384, Sha512};

use ct2v_support::diagnostic::escaped;

/// The most RECORD may hold: a wheel of 100,000 files has a RECORD of about 10 MiB.
pub const MAX_RECORD_BYTES: u64 = 64 << 20;

/// What RECORD says of one file: its digest (the algorithm's name and bytes) and size.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Listed {
    algorithm: Algorithm,
    digest: Vec<u8>,
    size: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Algorithm {
    Sha256,
    Sha384,
    Sha512,
}

impl Algorithm {
    /// "sha256 or better" of hashlib's names; md5, sha1 and the rest are refused.
    fn named(name: &str) -> Option<Algorithm> {
        match name {
            "sha256" => Some(Algorithm::Sha256),
            "sha384" => Some(Algorithm::Sha384),
            "sha512" => Some(Algorithm::Sha512),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Algorithm::Sha256 => "sha256",
            Algorithm::Sha384 => "sha384",
            Algorithm::Sha512 => "sha512",
        }
    }
}

/// A wheel's RECORD, read.
#[derive(Debug)]
pub struct Record {
    /// RECORD's own path in the wheel: `x-1.0.dist-info/RECORD`.
    name: String,
    listed: BTreeMap<String, Listed>,
}

/// The one `<name>.dist-info/RECORD` at the top of a wheel among its entry `names`; what is
/// wrong when there is none or more than one.
pub fn record_name<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<&'a str, String> {
    let found: Vec<&str> = names
        .into_iter()
        .filter(|n| {
            n.strip_suffix(".dist-info/RECORD")
                .is_some_and(|dir| !dir.is_empty() && !dir.contains('/'))
        })
        .collect();
    match found.as_slice() {
        [one] => Ok(one),
        [] => Err("it has no `<name>.dist-info/RECORD`, which every wheel holds".to_string()),
        more => Err(format!(
            "it has {} RECORD files ({}), where a wheel has one `.dist-info` folder",
            more.len(),
            more.iter()
                .map(|n| format!("`{}`", escaped(n)))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

impl Record {
    /// RECORD's `bytes`, read from the wheel at `name`; what is wrong with its text (not
    /// UTF-8, a line that is not path, hash and size, a weak or unknown hash, a size that is
    /// no number, a file listed twice) names the line.
    pub fn parse(name: &str, bytes: &[u8]) -> Result<Record, String> {
        let text = std::str::from_utf8(bytes).map_err(|e| {
            format!(
                "`{}` is not UTF-8 text (at byte {})",
                escaped(name),
                e.valid_up_to()
            )
        })?;
        let mut listed = BTreeMap::new();
        for (number, fields) in csv_rows(text)? {
            let bad = |why: String| format!("`{}` line {number}: {why}", escaped(name));
            let [path, hash, size] = fields.as_slice() else {
                return Err(bad(format!(
                    "{} fields, where a line is path,hash,size",
                    fields.len()
                )));
            };
            if path == name {
                // RECORD's own line: "cannot contain a hash of itself", so none is checked.
                continue;
            }
            let shown = escaped(path);
            let (algorithm, digest) = hash
                .split_once('=')
                .ok_or_else(|| bad(format!("`{shown}` has no hash (`sha256=…`)")))?;
            let algorithm = Algorithm::named(algorithm).ok_or_else(|| {
                bad(format!(
                    "`{shown}` is hashed with `{}`, where a wheel's RECORD uses sha256 or better",
                    escaped(algorithm)
                ))
            })?;
            let digest = URL_SAFE_NO_PAD
                .decode(digest.trim_end_matches('='))
                .map_err(|_| bad(format!("`{shown}`'s digest is not urlsafe base64")))?;
            let size = match size.as_str() {
                "" => None,
                text => Some(text.parse::<u64>().map_err(|_| {
                    bad(format!(
                        "`{shown}`'s size `{}` is not a number",
                        escaped(text)
                    ))
                })?),
            };
            let entry = Listed {
                algorithm,
                digest,
                size,
            };
            if listed.insert(path.clone(), entry).is_some() {
                return Err(bad(format!("`{shown}` is listed twice")));
            }
        }
        Ok(Record {
            name: name.to_string(),
            listed,
        })
    }

    /// Whether `file` is RECORD or one of its signatures, which RECORD does not list.
    pub fn is_exempt(&self, file: &str) -> bool {
        file == self.name
            || file
                .strip_prefix(self.name.as_str())
                .is_some_and(|rest| rest == ".jws" || rest == ".p7s")
    }

    /// The hash `file`'s line names, to stream the file through; `None` when RECORD does
    /// not list it.
    pub fn hasher(&self, file: &str) -> Option<FileHash> {
        let listed = self.listed.get(file)?;
        let state = match listed.algorithm {
            Algorithm::Sha256 => State::Sha256(Sha256::new()),
            Algorithm::Sha384 => State::Sha384(Sha384::new()),
            Algorithm::Sha512 => State::Sha512(Sha512::new()),
        };
        Some(FileHash { state, size: 0 })
    }

    /// `file`, streamed through `hash`, against its line: what differs, if anything.
    pub fn check(&self, file: &str, hash: FileHash) -> Result<(), String> {
        let Some(listed) = self.listed.get(file) else {
            return Err(self.unlisted(file));
        };
        let size = hash.size;
        let digest = hash.finish();
        let shown = escaped(file);
        if digest != listed.digest {
            return Err(format!(
                "`{shown}` has {}={}, where RECORD says {}={}",
                listed.algorithm.name(),
                URL_SAFE_NO_PAD.encode(&digest),
                listed.algorithm.name(),
                URL_SAFE_NO_PAD.encode(&listed.digest)
            ));
        }
        match listed.size {
            Some(listed) if listed != size => Err(format!(
                "`{shown}` is {size} bytes, where RECORD says {listed}"
            )),
            _ => Ok(()),
        }
    }

    /// Why a file RECORD does not list is refused.
    pub fn unlisted(&self, file: &str) -> String {
        format!(
            "`{}` is in the wheel but not in `{}`: pip would install a file no hash vouches for",
            escaped(file),
            escaped(&self.name)
        )
    }

    /// The files RECORD lists that are not among `present`.
    pub fn missing(&self, present: &BTreeSet<String>) -> Vec<String> {
        self.listed
            .keys()
            .filter(|f| !present.contains(*f))
            .map(|f| {
                format!(
                    "`{}` lists `{}`, which is not in the wheel",
                    escaped(&self.name),
                    escaped(f)
                )
            })
            .collect()
    }
}

/// A file's digest being computed with the algorithm its RECORD line names, and its size.
pub struct FileHash {
    state: State,
    size: u64,
}

enum State {
    Sha256(Sha256),
    Sha384(Sha384),
    Sha512(Sha512),
}

impl FileHash {
    fn finish(self) -> Vec<u8> {
        match self.state {
            State::Sha256(h) => h.finalize().to_vec(),
            State::Sha384(h) => h.finalize().to_vec(),
            State::Sha512(h) => h.finalize().to_vec(),
        }
    }
}

impl io::Write for FileHash {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.state {
            State::Sha256(h) => h.update(buf),
            State::Sha384(h) => h.update(buf),
            State::Sha512(h) => h.update(buf),
        }
        self.size += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The rows of CSV `text` as Python's `csv.reader` reads them (the default dialect), each
/// with the number of the line it starts on; empty lines skipped. An unclosed quote is an
/// error naming its line.
fn csv_rows(text: &str) -> Result<Vec<(usize, Vec<String>)>, String> {
    let mut rows = Vec::new();
    let mut chars = text.chars().peekable();
    let mut line = 1;
    while chars.peek().is_some() {
        let start = line;
        let mut fields = vec![String::new()];
        let mut quoted = false;
        let mut at_field_start = true;
        loop {
            let Some(c) = chars.next() else {
                if quoted {
                    return Err(format!("RECORD line {start}: a quote is never closed"));
                }
                break;
            };
            let field = fields.last_mut().expect("a row has a field");
            match c {
                '"' if quoted && chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' if quoted => quoted = false,
                '"' if at_field_start => quoted = true,
                '\n' if quoted => {
                    line += 1;
                    field.push(c);
                }
                '\n' => {
                    line += 1;
                    break;
                }
                '\r' if !quoted && chars.peek() == Some(&'\n') => {}
                ',' if !quoted => {
                    fields.push(String::new());
                    at_field_start = true;
                    continue;
                }
                c => field.push(c),
            }
            at_field_start = false;
        }
        if !(fields.len() == 1 && fields[0].is_empty()) {
            rows.push((start, fields));
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const NAME: &str = "w-1.0.dist-info/RECORD";

    fn hash_of(record: &Record, file: &str, data: &[u8]) -> Result<(), String> {
        let mut hash = record.hasher(file).ok_or_else(|| record.unlisted(file))?;
        hash.write_all(data).unwrap();
        record.check(file, hash)
    }

    fn sha256_line(path: &str, data: &[u8]) -> String {
        format!(
            "{path},sha256={},{}",
            URL_SAFE_NO_PAD.encode(Sha256::digest(data)),
            data.len()
        )
    }

    #[test]
    fn files_are_checked_against_their_lines_with_the_algorithm_each_names() {
        let sha512 = URL_SAFE_NO_PAD.encode(Sha512::digest(b"abc"));
        let text = format!(
            "{}\r\n\"a,\"\"b\"\".py\",sha512={sha512},3\n{NAME},,\n\n",
            sha256_line("w/x.py", b"hello")
        );
        let record = Record::parse(NAME, text.as_bytes()).unwrap();
        hash_of(&record, "w/x.py", b"hello").unwrap();
        hash_of(&record, "a,\"b\".py", b"abc").unwrap();
        let e = hash_of(&record, "w/x.py", b"hellO").unwrap_err();
        assert!(
            e.contains("`w/x.py` has sha256=") && e.contains("where RECORD says"),
            "{e}"
        );
        let e = hash_of(&record, "w/y.py", b"").unwrap_err();
        assert!(
            e.contains("`w/y.py` is in the wheel but not in `w-1.0.dist-info/RECORD`"),
            "{e}"
        );
        let present: BTreeSet<String> = ["w/x.py".to_string()].into();
        let missing = record.missing(&present);
        assert_eq!(missing.len(), 1, "{missing:?}");
        assert!(
            missing[0].contains("lists `a,\\\"b\\\".py`")
                || missing[0].contains("lists `a,\"b\".py`"),
            "{missing:?}"
        );
        assert!(record.is_exempt(NAME) && record.is_exempt(&format!("{NAME}.jws")));
        assert!(record.is_exempt(&format!("{NAME}.p7s")) && !record.is_exempt("w/RECORD"));
    }

    #[test]
    fn a_size_that_differs_is_named_even_with_the_right_digest() {
        let digest = URL_SAFE_NO_PAD.encode(Sha256::digest(b"abc"));
        let record = Record::parse(NAME, format!("a.py,sha256={digest},4\n").as_bytes()).unwrap();
        let e = hash_of(&record, "a.py", b"abc").unwrap_err();
        assert!(e.contains("`a.py` is 3 bytes, where RECORD says 4"), "{e}");
    }

    #[test]
    fn records_that_pip_would_not_trust_are_refused_naming_the_line() {
        let digest = URL_SAFE_NO_PAD.encode(Sha256::digest(b"x"));
        for (text, said) in [
            (
                "a.py,md5=abc,1\n".to_string(),
                "line 1: `a.py` is hashed with `md5`",
            ),
            (
                "ok.py,,\na.py,sha1=abc,1\n".to_string(),
                "line 1: `ok.py` has no hash",
            ),
            ("a.py\n".to_string(), "line 1: 1 fields"),
            (
                format!("a.py,sha256={digest},x1\n"),
                "size `x1` is not a number",
            ),
            (
                "a.py,sha256=!!,1\n".to_string(),
                "digest is not urlsafe base64",
            ),
            (
                format!("a.py,sha256={digest},1\na.py,sha256={digest},1\n"),
                "line 2: `a.py` is listed twice",
            ),
            (
                "\"a.py,sha256=x,1\n".to_string(),
                "line 1: a quote is never closed",
            ),
        ] {
            let e = Record::parse(NAME, text.as_bytes()).unwrap_err();
            assert!(e.contains(said), "{text:?}: {e}");
        }
        let e = Record::parse(NAME, b"a\xff,sha256=x,1\n").unwrap_err();
        assert!(e.contains("is not UTF-8 text (at byte 1)"), "{e}");
        let e = Record::parse(NAME, "\x1b[31m.py,,\n".as_bytes()).unwrap_err();
        assert!(
            !e.contains('\x1b') && e.contains("has no hash"),
            "escaped: {e}"
        );
    }

    #[test]
    fn a_wheel_has_one_record_in_a_top_dist_info_folder() {
        let names = ["w/a.py", "w-1.0.dist-info/RECORD", "w/x.dist-info/RECORD"];
        assert_eq!(record_name(names), Ok("w-1.0.dist-info/RECORD"));
        let e = record_name(["w/a.py", "w/x.dist-info/RECORD"]).unwrap_err();
        assert!(e.contains("no `<name>.dist-info/RECORD`"), "{e}");
        let e = record_name(["a-1.dist-info/RECORD", "b-1.dist-info/RECORD"]).unwrap_err();
        assert!(e.contains("2 RECORD files"), "{e}");
    }
}
