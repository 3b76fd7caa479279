//! Which steps finished, with which fingerprint: one small file per step. A step's record
//! is removed before it runs and written only after it succeeded, so an interrupted or
//! failed step is never taken for done.

use std::fs;
use std::path::PathBuf;

use anyhow::{Context, Result};

pub(crate) struct State {
    dir: PathBuf,
}

impl State {
    pub(crate) fn new(dir: PathBuf) -> State {
        State { dir }
    }

    fn file(&self, step: &str) -> PathBuf {
        self.dir.join(format!("{step}.done"))
    }

    pub(crate) fn is_done(&self, step: &str, fingerprint: &str) -> bool {
        fs::read_to_string(self.file(step)).is_ok_and(|f| f == fingerprint)
    }

    pub(crate) fn forget(&self, step: &str) -> Result<()> {
        match fs::remove_file(self.file(step)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(e).with_context(|| format!("cannot remove {}", self.file(step).display()))
            }
            _ => Ok(()),
        }
    }

    pub(crate) fn record(&self, step: &str, fingerprint: &str) -> Result<()> {
        fs::create_dir_all(&self.dir)?;
        ct2v_support::fsx::write_atomically(&self.file(step), fingerprint)
    }
}
