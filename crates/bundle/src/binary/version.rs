//! The file version a PE file carries in its version resource (`VS_FIXEDFILEINFO`, what
//! Explorer's Details tab shows): e.g. which HIP runtime the display driver installed.
//!
//! Layout (Microsoft Learn, "VS_VERSIONINFO" and "VS_FIXEDFILEINFO"): resource type
//! `RT_VERSION` (16) → a name → a language → the data, a `VS_VERSIONINFO` block whose
//! `VS_FIXEDFILEINFO` starts with the signature 0xFEEF04BD, then the structure version, then
//! `dwFileVersionMS` and `dwFileVersionLS` (major.minor, build.revision).

use std::path::Path;

use object::LittleEndian as LE;
use object::pe;
use object::read::pe::{PeFile64, ResourceDirectoryEntryData, ResourceNameOrId};

use super::le::u32_at;

/// `RT_VERSION`.
const RT_VERSION: u16 = 16;
const SIGNATURE: u32 = 0xFEEF_04BD;

/// `[major, minor, build, revision]` of a 64-bit PE file, `None` when it has no version
/// resource; an error names the file when it is not a PE32+ file that can be read.
pub fn file_version(path: &Path) -> Result<Option<[u16; 4]>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let file = PeFile64::parse(&*bytes)
        .map_err(|e| format!("{} is not a 64-bit PE file: {e}", path.display()))?;
    let broken =
        |e: object::Error| format!("{}: its resources cannot be read: {e}", path.display());
    let Some(resources) = file
        .data_directories()
        .resource_directory(&*bytes, &file.section_table())
        .map_err(broken)?
    else {
        return Ok(None);
    };
    // type → name → language → data: the first of each below RT_VERSION.
    let mut table = resources.root().map_err(broken)?;
    let mut id = Some(RT_VERSION);
    let entry: &pe::ImageResourceDataEntry = loop {
        let Some(found) = table.entries.iter().find(|e| match id {
            Some(wanted) => matches!(e.name_or_id(), ResourceNameOrId::Id(i) if i == wanted),
            None => true,
        }) else {
            return Ok(None);
        };
        id = None;
        match found.data(resources).map_err(broken)? {
            ResourceDirectoryEntryData::Table(next) => table = next,
            ResourceDirectoryEntryData::Data(data) => break data,
        }
    };
    let rva = entry.offset_to_data.get(LE);
    let size = entry.size.get(LE) as usize;
    let Some(data) = file.section_table().pe_data_at(&*bytes, rva) else {
        return Ok(None);
    };
    Ok(fixed_file_version(&data[..size.min(data.len())]))
}

/// The file version in a `VS_VERSIONINFO` block: found by its signature (on a 4-byte
/// boundary, after the block's header and key).
fn fixed_file_version(block: &[u8]) -> Option<[u16; 4]> {
    let at = (0..=block.len().saturating_sub(16))
        .step_by(4)
        .find(|&at| u32_at(block, at) == Some(SIGNATURE))?;
    let (ms, ls) = (
        u32_at(block, at.checked_add(8)?)?,
        u32_at(block, at.checked_add(12)?)?,
    );
    Some([(ms >> 16) as u16, ms as u16, (ls >> 16) as u16, ls as u16])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixed_file_info_is_found_by_its_signature() {
        let mut block = vec![0u8; 40];
        block.extend_from_slice(&SIGNATURE.to_le_bytes());
        block.extend_from_slice(&0x0001_0000u32.to_le_bytes());
        block.extend_from_slice(&((6 << 16) | 4u32).to_le_bytes());
        block.extend_from_slice(&((43482 << 16) | 7u32).to_le_bytes());
        assert_eq!(fixed_file_version(&block), Some([6, 4, 43482, 7]));
        assert_eq!(fixed_file_version(&block[..50]), None, "cut short");
    }
}
