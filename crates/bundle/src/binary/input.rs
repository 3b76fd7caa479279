//! The file being parsed, with bounds-checked reads: an offset or size read from a damaged
//! file becomes an error naming the file, never a panic.

use std::path::Path;

use object::pod::Pod;

use super::{BinaryError, BinaryFormat};

/// The longest import, soname or path entry accepted (Windows paths stop at 260).
const MAX_NAME: u64 = 4096;

/// The file being parsed, with bounds-checked reads that turn into errors naming it.
pub(super) struct Input<'a> {
    pub(super) data: &'a [u8],
    pub(super) path: &'a Path,
    pub(super) format: BinaryFormat,
}

impl<'a> Input<'a> {
    pub(super) fn len(&self) -> u64 {
        self.data.len() as u64
    }

    pub(super) fn malformed(&self, problem: impl Into<String>) -> BinaryError {
        BinaryError::Malformed {
            path: self.path.to_path_buf(),
            format: self.format,
            problem: problem.into(),
        }
    }

    pub(super) fn truncated(&self, what: &str, offset: u64, end: u64) -> BinaryError {
        BinaryError::Truncated {
            path: self.path.to_path_buf(),
            what: what.to_string(),
            offset,
            end,
            len: self.len(),
        }
    }

    /// `base + add` for a file offset or size: an error naming `what` where it overflows.
    pub(super) fn offset(&self, base: u64, add: u64, what: &str) -> Result<u64, BinaryError> {
        base.checked_add(add).ok_or_else(|| {
            self.malformed(format!(
                "{what} lies past the end of any file (0x{base:x} + 0x{add:x})"
            ))
        })
    }

    pub(super) fn bytes(
        &self,
        offset: u64,
        size: u64,
        what: &str,
    ) -> Result<&'a [u8], BinaryError> {
        let end = offset.checked_add(size).ok_or_else(|| {
            self.malformed(format!(
                "{what} at 0x{offset:x} has an impossible size 0x{size:x}"
            ))
        })?;
        if end > self.len() {
            return Err(self.truncated(what, offset, end));
        }
        // Both fit in usize: they are at most the length of a slice.
        Ok(&self.data[offset as usize..end as usize])
    }

    pub(super) fn read<T: Pod>(&self, offset: u64, what: &str) -> Result<&'a T, BinaryError> {
        let bytes = self.bytes(offset, size_of::<T>() as u64, what)?;
        object::pod::from_bytes::<T>(bytes)
            .map(|(value, _)| value)
            .map_err(|()| self.malformed(format!("{what} at 0x{offset:x} is misaligned")))
    }

    /// A NUL-terminated name starting at `offset` that must end before `limit` (the end of
    /// the section or table holding it).
    pub(super) fn name(&self, offset: u64, limit: u64, what: &str) -> Result<String, BinaryError> {
        if offset >= limit {
            return Err(self.malformed(format!(
                "{what} at 0x{offset:x} starts past the end of its table (0x{limit:x})"
            )));
        }
        let end = limit.min(offset.saturating_add(MAX_NAME + 1));
        let available = end.min(self.len());
        if offset >= available {
            return Err(self.truncated(what, offset, offset.saturating_add(1)));
        }
        let bytes = &self.data[offset as usize..available as usize];
        let Some(nul) = bytes.iter().position(|&b| b == 0) else {
            return Err(if available < end {
                self.truncated(what, offset, end)
            } else if end == limit {
                self.malformed(format!(
                    "{what} at 0x{offset:x} has no terminating NUL before the end of its table"
                ))
            } else {
                self.malformed(format!(
                    "{what} at 0x{offset:x} is longer than {MAX_NAME} bytes"
                ))
            });
        };
        if nul == 0 {
            return Err(self.malformed(format!("{what} at 0x{offset:x} is empty")));
        }
        String::from_utf8(bytes[..nul].to_vec()).map_err(|_| {
            self.malformed(format!(
                "{what} at 0x{offset:x} is not valid UTF-8: {:?}",
                String::from_utf8_lossy(&bytes[..nul])
            ))
        })
    }
}
