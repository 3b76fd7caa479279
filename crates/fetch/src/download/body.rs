//! A response body streamed into the part file: hashed as it is written, stopped at the
//! size caps, when it trickles or when the downloads are cancelled.

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use sha2::{Digest, Sha256};

use crate::cache;
use ct2v_support::regular_file;
use ct2v_support::units::human_size;

use super::pace::Pace;
use super::progress::Progress;
use super::worker::{Attempt, AttemptError, Target};
use super::{InputFailure, describe};

/// Read buffer for response bodies, and the write buffer in front of the part file.
pub(super) const BUFFER: usize = 1 << 20;

/// The part file an attempt writes, with the sha256 and length of all that is in it.
pub(super) struct Sink<'a> {
    target: &'a Target<'a>,
    file: BufWriter<File>,
    hasher: Sha256,
    written: u64,
    /// The most a body with no pinned size may bring.
    max_unpinned: u64,
}

/// What watches a body as it is read: its progress bar, its pace, and the downloads'
/// cancellation.
pub(super) struct Watch<'a> {
    pub(super) progress: &'a Progress<'a>,
    pub(super) pace: &'a mut Pace,
    pub(super) cancel: &'a AtomicBool,
}

/// How reading a body ended, when no write failed.
enum End {
    /// The body ended, or ran past the pinned size (no point reading on: the check will fail).
    Read,
    /// Stopped early; what arrived is kept for the next attempt to resume after.
    Stopped(AttemptError),
}

impl<'a> Sink<'a> {
    /// The part file opened after its bytes (hashed first) when `append`, else emptied.
    pub(super) fn open(
        target: &'a Target<'a>,
        append: bool,
        max_unpinned: u64,
    ) -> Result<Sink<'a>, AttemptError> {
        let (hasher, written) = if append {
            cache::hash_file(target.path).map_err(target.io_fatal("hash"))?
        } else {
            (Sha256::new(), 0)
        };
        let file = if append {
            regular_file::open(target.path, regular_file::Mode::Append)
        } else {
            regular_file::open(target.path, regular_file::Mode::Truncate)
        }
        .map_err(target.io_fatal("write"))?;
        Ok(Sink {
            target,
            file: BufWriter::with_capacity(BUFFER, file),
            hasher,
            written,
            max_unpinned,
        })
    }

    pub(super) fn written(&self) -> u64 {
        self.written
    }

    /// Reads `body` into the part file until it ends or a reason to stop comes; either way
    /// what arrived is flushed to the part file.
    pub(super) fn fill(
        &mut self,
        body: &mut impl Read,
        buffer: &mut [u8],
        watch: &mut Watch,
    ) -> Result<(), AttemptError> {
        let end = self.read(body, buffer, watch)?;
        self.file.flush().map_err(self.target.io_fatal("write"))?;
        match end {
            End::Read => Ok(()),
            End::Stopped(error) => Err(error),
        }
    }

    fn read(
        &mut self,
        body: &mut impl Read,
        buffer: &mut [u8],
        watch: &mut Watch,
    ) -> Result<End, AttemptError> {
        loop {
            if watch.cancel.load(Ordering::SeqCst) {
                return Ok(End::Stopped(AttemptError::Cancelled));
            }
            let n = match body.read(buffer) {
                Ok(0) => return Ok(End::Read),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // Keep what arrived: the next attempt resumes after it.
                Err(e) => {
                    return Ok(End::Stopped(AttemptError::Retry {
                        message: describe(&e),
                        status: None,
                    }));
                }
            };
            self.write(&buffer[..n])?;
            watch.progress.set_position(self.written);
            if let Some(end) = self.past_cap() {
                return Ok(end);
            }
            if let Err(message) = watch.pace.received(n as u64) {
                return Ok(End::Stopped(AttemptError::Slow(message)));
            }
        }
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), AttemptError> {
        self.file
            .write_all(bytes)
            .map_err(self.target.io_fatal("write"))?;
        self.hasher.update(bytes);
        self.written = self.written.saturating_add(bytes.len() as u64);
        Ok(())
    }

    /// Longer than pinned, or than any unpinned input may be.
    fn past_cap(&self) -> Option<End> {
        match self.target.size {
            Some(size) if self.written > size => Some(End::Read),
            Some(_) => None,
            None if self.written > self.max_unpinned => Some(End::Stopped(AttemptError::Fatal(
                InputFailure::BadUrl {
                    url: self.target.url.to_string(),
                    reason: format!(
                        "it sent more than {} and no size is pinned: stopped (an endless \
                         body?); pin the input's size, or fetch it from another server",
                        human_size(self.max_unpinned)
                    ),
                }
                .of(self.target.name.to_string()),
            ))),
            None => None,
        }
    }

    /// The part file's sha256 and size once the body ended, unless it is shorter than pinned
    /// and than declared: a cut connection, worth retrying. Shorter than pinned but all the
    /// server declared is another file (whose sha256 check says so, with both values).
    pub(super) fn finish(self, declared_end: Option<u64>) -> Result<Attempt, AttemptError> {
        let written = self.written;
        if let Some(size) = self.target.size
            && written < size
            && declared_end != Some(written)
        {
            return Err(AttemptError::Retry {
                message: format!("the connection closed after {written} of {size} bytes"),
                status: None,
            });
        }
        Ok(Attempt::Complete((
            cache::hex(&self.hasher.finalize()),
            written,
        )))
    }
}
