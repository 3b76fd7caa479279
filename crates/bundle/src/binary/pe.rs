//! PE32 and PE32+ files: machine, subsystem, DLL flag, the import and delay-import tables.

use object::endian::{LittleEndian as LE, U16, U32};
use object::pe;
use object::pod::Pod;
use object::read::pe::{DataDirectories, ImageNtHeaders, ImageOptionalHeader, SectionTable};

use super::input::Input;
use super::{BinaryError, BinaryFormat, BinaryInfo};

/// The most import descriptors read from one table before giving up on finding its end.
const MAX_DESCRIPTORS: u32 = 65_536;

pub(super) fn parse_pe(input: &Input) -> Result<BinaryInfo, BinaryError> {
    let dos: &pe::ImageDosHeader = input.read(0, "DOS header")?;
    let nt_offset = u64::from(dos.nt_headers_offset());
    let signature = input
        .read::<U32<LE>>(nt_offset, "PE signature (at e_lfanew)")?
        .get(LE);
    if signature != pe::IMAGE_NT_SIGNATURE {
        return Err(input.malformed(format!(
            "no PE signature at 0x{nt_offset:x} (found 0x{signature:08x}): an MS-DOS program \
             or a damaged header"
        )));
    }
    let magic_offset = input.offset(
        nt_offset,
        4 + size_of::<pe::ImageFileHeader>() as u64,
        "optional header magic",
    )?;
    let magic = input
        .read::<U16<LE>>(magic_offset, "optional header magic")?
        .get(LE);
    match magic {
        pe::IMAGE_NT_OPTIONAL_HDR32_MAGIC => parse_pe_as::<pe::ImageNtHeaders32>(input, nt_offset),
        pe::IMAGE_NT_OPTIONAL_HDR64_MAGIC => parse_pe_as::<pe::ImageNtHeaders64>(input, nt_offset),
        other => Err(input.malformed(format!(
            "optional header magic 0x{other:x} at 0x{magic_offset:x} is neither PE32 (0x10b) \
             nor PE32+ (0x20b)"
        ))),
    }
}

fn parse_pe_as<Pe: ImageNtHeaders>(
    input: &Input,
    nt_offset: u64,
) -> Result<BinaryInfo, BinaryError> {
    let nt: &Pe = input.read(nt_offset, "NT headers")?;
    let file_header = nt.file_header();
    let optional = nt.optional_header();

    let optional_offset = input.offset(
        nt_offset,
        4 + size_of::<pe::ImageFileHeader>() as u64,
        "optional header",
    )?;
    let optional_size = u64::from(file_header.size_of_optional_header.get(LE));
    let fixed = size_of::<Pe::ImageOptionalHeader>() as u64;
    let Some(room) = optional_size.checked_sub(fixed) else {
        return Err(input.malformed(format!(
            "the optional header's declared size {optional_size} is smaller than its fixed \
             part ({fixed} bytes)"
        )));
    };
    let directories_offset = input.offset(optional_offset, fixed, "data directories")?;
    let directory_bytes = input.bytes(directories_offset, room, "data directories")?;
    let count = optional.number_of_rva_and_sizes();
    let directories = DataDirectories::parse(directory_bytes, count).map_err(|_| {
        input.malformed(format!(
            "the optional header declares {count} data directories but has room for {}",
            room / 8
        ))
    })?;

    let sections_offset = input.offset(optional_offset, optional_size, "section table")?;
    let section_count = u64::from(file_header.number_of_sections.get(LE));
    let table_size = section_count
        .checked_mul(size_of::<pe::ImageSectionHeader>() as u64)
        .ok_or_else(|| input.malformed(format!("{section_count} sections overflow")))?;
    input.bytes(sections_offset, table_size, "section table")?;
    let sections = nt
        .sections(input.data, sections_offset)
        .map_err(|e| input.malformed(format!("section table: {e}")))?;

    let image = PeImage {
        input,
        sections,
        size_of_headers: optional.size_of_headers(),
        image_base: optional.image_base(),
    };
    let imports = match directories.get(pe::IMAGE_DIRECTORY_ENTRY_IMPORT) {
        Some(dir) => image.imports(dir.virtual_address.get(LE))?,
        None => Vec::new(),
    };
    let delay_imports = match directories.get(pe::IMAGE_DIRECTORY_ENTRY_DELAY_IMPORT) {
        Some(dir) => image.delay_imports(dir.virtual_address.get(LE), dir.size.get(LE))?,
        None => Vec::new(),
    };

    Ok(BinaryInfo {
        version_needs: Vec::new(),
        format: BinaryFormat::Pe,
        machine: pe_machine(file_header.machine.get(LE)),
        subsystem: Some(pe_subsystem(optional.subsystem())),
        is_dll: file_header.characteristics.get(LE) & pe::IMAGE_FILE_DLL == pe::IMAGE_FILE_DLL,
        imports,
        delay_imports,
        soname: None,
        rpath: Vec::new(),
        runpath: Vec::new(),
    })
}

/// Where a relative virtual address lies in the file.
enum Mapped {
    /// At `offset`, in a stretch of file data (a section's raw data) ending at `end`.
    File { offset: u64, end: u64 },
    /// In the zero-filled part of a section that has no file data behind it.
    ZeroFill,
}

struct PeImage<'a, 'i> {
    input: &'i Input<'a>,
    sections: SectionTable<'a>,
    size_of_headers: u32,
    image_base: u64,
}

impl PeImage<'_, '_> {
    fn map(&self, rva: u32, what: &str) -> Result<Mapped, BinaryError> {
        for section in self.sections.iter() {
            let start = section.virtual_address.get(LE);
            let raw_size = section.size_of_raw_data.get(LE);
            let extent = match section.virtual_size.get(LE) {
                0 => raw_size,
                size => size,
            };
            let Some(delta) = rva.checked_sub(start).filter(|&d| d < extent) else {
                continue;
            };
            let backed = raw_size.min(extent);
            if delta >= backed {
                return Ok(Mapped::ZeroFill);
            }
            let raw = u64::from(section.pointer_to_raw_data.get(LE));
            return Ok(Mapped::File {
                offset: self.input.offset(raw, u64::from(delta), what)?,
                end: self.input.offset(raw, u64::from(backed), what)?,
            });
        }
        if rva < self.size_of_headers {
            return Ok(Mapped::File {
                offset: u64::from(rva),
                end: u64::from(self.size_of_headers),
            });
        }
        Err(self
            .input
            .malformed(format!("{what} at RVA 0x{rva:x} is not inside any section")))
    }

    /// A fixed-size record at `rva`; `None` when it lies in zero-filled memory.
    fn record<T: Pod>(&self, rva: u32, what: &str) -> Result<Option<&T>, BinaryError> {
        match self.map(rva, what)? {
            Mapped::ZeroFill => Ok(None),
            Mapped::File { offset, end } => {
                let value = self.input.read::<T>(offset, what)?;
                if self.input.offset(offset, size_of::<T>() as u64, what)? > end {
                    return Err(self.input.malformed(format!(
                        "{what} at RVA 0x{rva:x} runs past the end of its section"
                    )));
                }
                Ok(Some(value))
            }
        }
    }

    fn name(&self, rva: u32, what: &str) -> Result<String, BinaryError> {
        match self.map(rva, what)? {
            Mapped::ZeroFill => Err(self.input.malformed(format!(
                "{what} at RVA 0x{rva:x} lies in zero-filled memory"
            ))),
            Mapped::File { offset, end } => self.input.name(offset, end, what),
        }
    }

    /// The import table: descriptors up to the first without a name or IAT, which is where
    /// the Windows loader stops (the directory's size is ignored, as the loader ignores it).
    fn imports(&self, table: u32) -> Result<Vec<String>, BinaryError> {
        let mut names = Vec::new();
        for index in 0..MAX_DESCRIPTORS {
            let what = format!("import descriptor {index}");
            let Some(rva) = index
                .checked_mul(size_of::<pe::ImageImportDescriptor>() as u32)
                .and_then(|at| table.checked_add(at))
            else {
                return Err(self.input.malformed(format!("{what} lies past 4 GiB")));
            };
            let Some(descriptor) = self.record::<pe::ImageImportDescriptor>(rva, &what)? else {
                return Ok(names);
            };
            let name = descriptor.name.get(LE);
            if name == 0 || descriptor.first_thunk.get(LE) == 0 {
                return Ok(names);
            }
            names.push(self.name(name, &format!("DLL name of {what}"))?);
        }
        Err(self.input.malformed(format!(
            "the import table at RVA 0x{table:x} has no end within {MAX_DESCRIPTORS} entries"
        )))
    }

    /// The delay-load import table: descriptors up to the first without a name, or as many
    /// as the directory's size holds when it is set.
    fn delay_imports(&self, table: u32, size: u32) -> Result<Vec<String>, BinaryError> {
        let record = size_of::<pe::ImageDelayloadDescriptor>() as u32;
        let limit = match size / record {
            0 => MAX_DESCRIPTORS,
            n => n.min(MAX_DESCRIPTORS),
        };
        let mut names = Vec::new();
        for index in 0..limit {
            let what = format!("delay-load descriptor {index}");
            let Some(rva) = index
                .checked_mul(record)
                .and_then(|at| table.checked_add(at))
            else {
                return Err(self.input.malformed(format!("{what} lies past 4 GiB")));
            };
            let Some(descriptor) = self.record::<pe::ImageDelayloadDescriptor>(rva, &what)? else {
                return Ok(names);
            };
            let name = descriptor.dll_name_rva.get(LE);
            if name == 0 {
                return Ok(names);
            }
            // Attribute bit 0 (dlattrRva) marks the current format; without it (Visual C++
            // 6) the fields are virtual addresses rather than RVAs.
            let name = if descriptor.attributes.get(LE) & 1 != 0 {
                name
            } else {
                u64::from(name)
                    .checked_sub(self.image_base)
                    .and_then(|rva| u32::try_from(rva).ok())
                    .ok_or_else(|| {
                        self.input.malformed(format!(
                            "{what} names its DLL at address 0x{name:x}, outside the image \
                             (based at 0x{:x})",
                            self.image_base
                        ))
                    })?
            };
            names.push(self.name(name, &format!("DLL name of {what}"))?);
        }
        if size / record == 0 {
            return Err(self.input.malformed(format!(
                "the delay-load import table at RVA 0x{table:x} has no end within \
                 {MAX_DESCRIPTORS} entries"
            )));
        }
        Ok(names)
    }
}

fn pe_machine(machine: pe::Machine) -> String {
    let name = match machine {
        pe::IMAGE_FILE_MACHINE_I386 => "i386",
        pe::IMAGE_FILE_MACHINE_AMD64 => "x86_64",
        pe::IMAGE_FILE_MACHINE_ARM64 => "aarch64",
        pe::IMAGE_FILE_MACHINE_ARM64EC => "arm64ec",
        pe::IMAGE_FILE_MACHINE_ARM64X => "arm64x",
        pe::IMAGE_FILE_MACHINE_ARM | pe::IMAGE_FILE_MACHINE_ARMNT => "arm",
        other => return format!("unknown-0x{:04x}", other.0),
    };
    name.to_string()
}

fn pe_subsystem(subsystem: pe::Subsystem) -> String {
    let name = match subsystem {
        pe::IMAGE_SUBSYSTEM_NATIVE => "native",
        pe::IMAGE_SUBSYSTEM_WINDOWS_GUI => "windows-gui",
        pe::IMAGE_SUBSYSTEM_WINDOWS_CUI => "windows-cui",
        pe::IMAGE_SUBSYSTEM_OS2_CUI => "os2-cui",
        pe::IMAGE_SUBSYSTEM_POSIX_CUI => "posix-cui",
        pe::IMAGE_SUBSYSTEM_NATIVE_WINDOWS => "native-windows",
        pe::IMAGE_SUBSYSTEM_WINDOWS_CE_GUI => "windows-ce-gui",
        pe::IMAGE_SUBSYSTEM_EFI_APPLICATION => "efi-application",
        pe::IMAGE_SUBSYSTEM_EFI_BOOT_SERVICE_DRIVER => "efi-boot-service-driver",
        pe::IMAGE_SUBSYSTEM_EFI_RUNTIME_DRIVER => "efi-runtime-driver",
        pe::IMAGE_SUBSYSTEM_EFI_ROM => "efi-rom",
        pe::IMAGE_SUBSYSTEM_XBOX => "xbox",
        pe::IMAGE_SUBSYSTEM_WINDOWS_BOOT_APPLICATION => "windows-boot-application",
        other => return format!("unknown-{}", other.0),
    };
    name.to_string()
}
