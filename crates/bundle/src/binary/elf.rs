//! ELF32 and ELF64 files: machine, type, and the dynamic section's NEEDED, SONAME, RPATH,
//! RUNPATH and symbol version needs.

use object::elf;
use object::endian::Endianness;
use object::read::elf::{Dyn as _, FileHeader, ProgramHeader as _};

use super::input::Input;
use super::{BinaryError, BinaryFormat, BinaryInfo};

/// The most DT_NEEDED entries read from one ELF file (real libraries have tens).
const MAX_NEEDED: usize = 4096;
/// The most `Vernaux` records read from one ELF file (libstdc++ users need about 40).
const MAX_VERSIONS: usize = 65_536;

pub(super) fn parse_elf(input: &Input) -> Result<BinaryInfo, BinaryError> {
    let ident = input.bytes(0, size_of::<elf::Ident>() as u64, "ELF identification")?;
    let (class, encoding, version) = (ident[4], ident[5], ident[6]);
    if encoding != elf::ELFDATA2LSB.0 && encoding != elf::ELFDATA2MSB.0 {
        return Err(input.malformed(format!("unknown data encoding {encoding}")));
    }
    if version != elf::EV_CURRENT.0 {
        return Err(input.malformed(format!("unknown ELF version {version}")));
    }
    match elf::FileClass(class) {
        elf::ELFCLASS32 => parse_elf_as::<elf::FileHeader32<Endianness>>(input),
        elf::ELFCLASS64 => parse_elf_as::<elf::FileHeader64<Endianness>>(input),
        _ => Err(input.malformed(format!("unknown ELF class {class}"))),
    }
}

fn parse_elf_as<Elf: FileHeader<Endian = Endianness>>(
    input: &Input,
) -> Result<BinaryInfo, BinaryError> {
    let header: &Elf = input.read(0, "ELF header")?;
    let endian = header
        .endian()
        .map_err(|e| input.malformed(e.to_string()))?;
    let machine = elf_machine(header.e_machine(endian), header.is_type_64(), endian);
    let mut info = BinaryInfo {
        format: BinaryFormat::Elf,
        machine,
        subsystem: None,
        is_dll: header.e_type(endian) == elf::ET_DYN,
        imports: Vec::new(),
        delay_imports: Vec::new(),
        soname: None,
        rpath: Vec::new(),
        runpath: Vec::new(),
        version_needs: Vec::new(),
    };

    let Some(segments) = program_headers::<Elf>(input, header, endian)? else {
        return Ok(info);
    };
    let Some(dynamic) = segments
        .iter()
        .find(|s| s.p_type(endian) == elf::PT_DYNAMIC)
    else {
        return Ok(info); // Statically linked: nothing to load.
    };
    let tags = dynamic_tags::<Elf>(input, endian, dynamic)?;
    if tags.needed.is_empty()
        && tags.soname.is_none()
        && tags.rpath.is_none()
        && tags.runpath.is_none()
        && tags.verneed.is_none()
    {
        return Ok(info);
    }
    read_dynamic_strings::<Elf>(input, endian, segments, tags, &mut info)?;
    Ok(info)
}

/// The program header table, or `None` when the file has none.
fn program_headers<'a, Elf: FileHeader<Endian = Endianness>>(
    input: &Input<'a>,
    header: &Elf,
    endian: Endianness,
) -> Result<Option<&'a [Elf::ProgramHeader]>, BinaryError> {
    let phoff: u64 = header.e_phoff(endian).into();
    let phnum = header
        .phnum(endian, input.data)
        .map_err(|e| input.malformed(format!("program header count: {e}")))?;
    if phoff == 0 || phnum == 0 {
        return Ok(None);
    }
    let entry = size_of::<Elf::ProgramHeader>();
    let phentsize = header.e_phentsize(endian);
    if usize::from(phentsize) != entry {
        return Err(input.malformed(format!(
            "program header entries are {phentsize} bytes, not {entry}"
        )));
    }
    let table_size = u64::from(phnum)
        .checked_mul(entry as u64)
        .ok_or_else(|| input.malformed(format!("{phnum} program headers overflow")))?;
    let table = input.bytes(phoff, table_size, "program headers")?;
    let (segments, _) = object::pod::slice_from_bytes::<Elf::ProgramHeader>(table, phnum as usize)
        .map_err(|()| input.malformed("program headers are misaligned"))?;
    Ok(Some(segments))
}

/// The dynamic section's tags this parser reads, as raw values (string offsets, addresses).
#[derive(Default)]
struct DynamicTags {
    needed: Vec<u64>,
    soname: Option<u64>,
    rpath: Option<u64>,
    runpath: Option<u64>,
    strtab: Option<u64>,
    strsz: Option<u64>,
    verneed: Option<u64>,
    verneednum: Option<u64>,
}

fn dynamic_tags<Elf: FileHeader<Endian = Endianness>>(
    input: &Input,
    endian: Endianness,
    dynamic: &Elf::ProgramHeader,
) -> Result<DynamicTags, BinaryError> {
    let (offset, size) = dynamic.file_range(endian);
    let bytes = input.bytes(offset, size, "dynamic section")?;
    let count = bytes.len() / size_of::<Elf::Dyn>();
    let (entries, _) = object::pod::slice_from_bytes::<Elf::Dyn>(bytes, count)
        .map_err(|()| input.malformed("dynamic section is misaligned"))?;
    // Where a tag repeats, the loader keeps the last one (glibc fills an array by tag).
    let mut tags = DynamicTags::default();
    for entry in entries {
        let value = entry.val(endian);
        match entry.tag(endian) {
            elf::DT_NULL => break,
            elf::DT_NEEDED if tags.needed.len() >= MAX_NEEDED => {
                return Err(input.malformed(format!(
                    "the dynamic section names more than {MAX_NEEDED} needed libraries"
                )));
            }
            elf::DT_NEEDED => tags.needed.push(value),
            elf::DT_SONAME => tags.soname = Some(value),
            elf::DT_RPATH => tags.rpath = Some(value),
            elf::DT_RUNPATH => tags.runpath = Some(value),
            elf::DT_STRTAB => tags.strtab = Some(value),
            elf::DT_STRSZ => tags.strsz = Some(value),
            elf::DT_VERNEED => tags.verneed = Some(value),
            elf::DT_VERNEEDNUM => tags.verneednum = Some(value),
            _ => {}
        }
    }
    Ok(tags)
}

/// Resolves the tags' strings (and the version needs) through the dynamic string table.
fn read_dynamic_strings<Elf: FileHeader<Endian = Endianness>>(
    input: &Input,
    endian: Endianness,
    segments: &[Elf::ProgramHeader],
    tags: DynamicTags,
    info: &mut BinaryInfo,
) -> Result<(), BinaryError> {
    let Some(address) = tags.strtab else {
        return Err(input.malformed(
            "the dynamic section names libraries or paths but has no string table (DT_STRTAB)",
        ));
    };
    // A virtual address as (file offset, end of its loaded segment in the file).
    let file_offset = |address: u64| {
        segments.iter().find_map(|s| {
            if s.p_type(endian) != elf::PT_LOAD {
                return None;
            }
            let (offset, size) = s.file_range(endian);
            let start: u64 = s.p_vaddr(endian).into();
            let delta = address.checked_sub(start).filter(|&d| d < size)?;
            Some((offset.checked_add(delta)?, offset.checked_add(size)?))
        })
    };
    let Some((table_offset, segment_end)) = file_offset(address) else {
        return Err(input.malformed(format!(
            "the dynamic string table's address 0x{address:x} (DT_STRTAB) is not inside any \
             loaded segment"
        )));
    };
    let table_end = match tags.strsz {
        Some(size) => {
            input.bytes(table_offset, size, "dynamic string table")?;
            input.offset(table_offset, size, "the dynamic string table (DT_STRSZ)")?
        }
        None => segment_end,
    };
    let string = |value: u64, what: &str| -> Result<String, BinaryError> {
        let offset = table_offset.checked_add(value).filter(|&o| o < table_end);
        match offset {
            Some(offset) => input.name(offset, table_end, what),
            None => Err(input.malformed(format!(
                "{what} points at 0x{value:x}, outside the dynamic string table \
                 (0x{:x} bytes)",
                table_end.saturating_sub(table_offset)
            ))),
        }
    };

    for (index, value) in tags.needed.into_iter().enumerate() {
        info.imports
            .push(string(value, &format!("DT_NEEDED entry {index}"))?);
    }
    if let Some(value) = tags.soname {
        info.soname = Some(string(value, "DT_SONAME")?);
    }
    if let Some(value) = tags.rpath {
        info.rpath = split_path(&string(value, "DT_RPATH")?);
    }
    if let Some(value) = tags.runpath {
        info.runpath = split_path(&string(value, "DT_RUNPATH")?);
    }
    if let Some(address) = tags.verneed {
        let Some((start, _)) = file_offset(address) else {
            return Err(input.malformed(format!(
                "the version needs' address 0x{address:x} (DT_VERNEED) is not inside any \
                 loaded segment"
            )));
        };
        info.version_needs = version_needs(input, endian, start, tags.verneednum, &string)?;
    }
    Ok(())
}

/// The `Verneed` chain at file offset `start` (`count` records when DT_VERNEEDNUM gives it,
/// else up to the one whose `vn_next` is 0), each with its `Vernaux` chain: what auditwheel's
/// `elf_find_versioned_symbols` reads from `.gnu.version_r` (pypa/auditwheel,
/// src/auditwheel/elfutils.py), found through the dynamic section as the loader finds it.
fn version_needs(
    input: &Input,
    endian: Endianness,
    start: u64,
    count: Option<u64>,
    string: &dyn Fn(u64, &str) -> Result<String, BinaryError>,
) -> Result<Vec<(String, Vec<String>)>, BinaryError> {
    let mut out = Vec::new();
    let mut read = 0usize;
    let mut at = start;
    loop {
        if out.len() >= MAX_NEEDED {
            return Err(input.malformed(format!(
                "the version needs (DT_VERNEED) name more than {MAX_NEEDED} libraries"
            )));
        }
        let need: &elf::Verneed<Endianness> = input.read(at, "version need (Verneed)")?;
        let file = string(u64::from(need.vn_file.get(endian)), "Verneed file name")?;
        let mut versions = Vec::new();
        let mut aux_at = at;
        let mut next_aux = u64::from(need.vn_aux.get(endian));
        for _ in 0..need.vn_cnt.get(endian) {
            read += 1;
            if read > MAX_VERSIONS {
                return Err(input.malformed(format!(
                    "the version needs (DT_VERNEED) hold more than {MAX_VERSIONS} versions"
                )));
            }
            aux_at = aux_at
                .checked_add(next_aux)
                .ok_or_else(|| input.malformed("a Vernaux offset overflows"))?;
            let aux: &elf::Vernaux<Endianness> = input.read(aux_at, "version (Vernaux)")?;
            versions.push(string(u64::from(aux.vna_name.get(endian)), "Vernaux name")?);
            next_aux = u64::from(aux.vna_next.get(endian));
            if next_aux == 0 {
                break;
            }
        }
        out.push((file, versions));
        let next = u64::from(need.vn_next.get(endian));
        let done = match count {
            Some(n) => out.len() as u64 >= n,
            None => false,
        };
        if next == 0 || done {
            break;
        }
        at = at
            .checked_add(next)
            .ok_or_else(|| input.malformed("a Verneed offset overflows"))?;
    }
    Ok(out)
}

pub(super) fn split_path(list: &str) -> Vec<String> {
    list.split(':').map(str::to_string).collect()
}

fn elf_machine(machine: elf::Machine, is_64: bool, endian: Endianness) -> String {
    let name = match (machine, is_64) {
        (elf::EM_386, _) => "i386",
        (elf::EM_X86_64, true) => "x86_64",
        (elf::EM_X86_64, false) => "x32",
        (elf::EM_AARCH64, _) => "aarch64",
        (elf::EM_ARM, _) => "arm",
        (elf::EM_PPC64, _) if endian == Endianness::Little => "ppc64le",
        (elf::EM_PPC64, _) => "ppc64",
        (elf::EM_PPC, _) => "ppc",
        (elf::EM_S390, true) => "s390x",
        (elf::EM_S390, false) => "s390",
        (elf::EM_RISCV, true) => "riscv64",
        (elf::EM_RISCV, false) => "riscv32",
        (elf::EM_LOONGARCH, _) => "loongarch64",
        (other, _) => return format!("unknown-0x{:x}", other.0),
    };
    name.to_string()
}
