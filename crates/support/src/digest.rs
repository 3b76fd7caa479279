//! The sha256 of a file, streamed: what the download cache checks its pins with and what an
//! output's record (`owned_output`) lists.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use sha2::{Digest, Sha256};

/// Read buffer for hashing: large enough that the SHA-NI path, not syscalls, sets the pace.
const HASH_BUFFER: usize = 1 << 20;

/// The sha256 (lowercase hex) and size of a file, streamed through a 1 MiB buffer.
pub fn sha256_file(path: &Path) -> io::Result<(String, u64)> {
    let (hasher, size) = hash_file(path)?;
    Ok((hex(&hasher.finalize()), size))
}

/// A hasher that has consumed the whole file, and the file's size: the start of a hash that
/// goes on over bytes appended later (a resumed download).
pub fn hash_file(path: &Path) -> io::Result<(Sha256, u64)> {
    let mut file = File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; HASH_BUFFER];
    let mut size = 0u64;
    loop {
        let n = match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hasher.update(&buffer[..n]);
        size += n as u64;
    }
    Ok((hasher, size))
}

/// Lowercase hex of a digest.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 15)] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// sha256 of the empty string and of "abc" (FIPS 180-2 test vectors).
    const EMPTY: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    const ABC: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

    #[test]
    fn sha256_file_matches_known_vectors() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty");
        fs::write(&empty, b"").unwrap();
        assert_eq!(sha256_file(&empty).unwrap(), (EMPTY.to_string(), 0));
        let abc = dir.path().join("abc");
        fs::write(&abc, b"abc").unwrap();
        assert_eq!(sha256_file(&abc).unwrap(), (ABC.to_string(), 3));
    }

    #[test]
    fn sha256_file_streams_across_buffer_boundaries() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big");
        let data: Vec<u8> = (0..HASH_BUFFER * 2 + 12345)
            .map(|i| (i * 7 % 251) as u8)
            .collect();
        fs::write(&path, &data).unwrap();
        let expected = hex(&Sha256::digest(&data));
        assert_eq!(sha256_file(&path).unwrap(), (expected, data.len() as u64));
    }
}
