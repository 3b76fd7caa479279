//! The dynamic-linking facts of PE (Windows) and ELF (Linux) files: what a library or program
//! imports, what it calls itself (ELF soname) and where it looks (ELF rpath/runpath).
//!
//! Files are memory-mapped and only the headers and tables that matter are read, so a 60 MB
//! DLL costs a few pages. Damaged files give an error naming the file and what is wrong,
//! never a panic: every offset and size read from the file is checked before use.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use memmap2::Mmap;
use object::elf;
use object::endian::{Endianness, LittleEndian as LE, U16, U32};
use object::pe;
use object::pod::Pod;
use object::read::elf::{Dyn as _, FileHeader, ProgramHeader as _};
use object::read::pe::{DataDirectories, ImageNtHeaders, ImageOptionalHeader, SectionTable};

/// The longest import, soname or path entry accepted (Windows paths stop at 260).
const MAX_NAME: u64 = 4096;
/// The most import descriptors read from one table before giving up on finding its end.
const MAX_DESCRIPTORS: u32 = 65_536;
/// The most DT_NEEDED entries read from one ELF file (real libraries have tens).
const MAX_NEEDED: usize = 4096;
/// The most `Vernaux` records read from one ELF file (libstdc++ users need about 40).
const MAX_VERSIONS: usize = 65_536;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Pe,
    Elf,
}

impl Format {
    fn name(self) -> &'static str {
        match self {
            Format::Pe => "PE",
            Format::Elf => "ELF",
        }
    }
}

/// What the loader needs to know about one binary.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BinaryInfo {
    pub format: Format,
    /// "x86_64", "i386", "aarch64", "arm", … or "unknown-0x…" with the raw machine number.
    pub machine: String,
    /// PE only: "windows-cui", "windows-gui", "native", … ("unknown-N" for other values).
    pub subsystem: Option<String>,
    /// PE: `IMAGE_FILE_DLL` is set. ELF: the type is `ET_DYN`, which position-independent
    /// executables are too.
    pub is_dll: bool,
    /// PE: the import table's DLL names, in order. ELF: the `DT_NEEDED` entries, in order.
    pub imports: Vec<String>,
    /// PE: the delay-load import table's DLL names, in order. ELF: always empty.
    pub delay_imports: Vec<String>,
    /// ELF `DT_SONAME`.
    pub soname: Option<String>,
    /// ELF `DT_RPATH`, split on ':' (empty entries kept: glibc searches the current directory
    /// for them).
    pub rpath: Vec<String>,
    /// ELF `DT_RUNPATH`, split on ':'. When present the loader ignores `rpath`.
    pub runpath: Vec<String>,
    /// ELF symbol versions needed (`DT_VERNEED`, the `.gnu.version_r` table): each library
    /// with the versions asked of it, e.g. `("libc.so.6", ["GLIBC_2.2.5", "GLIBC_2.14"])`,
    /// in file order. PE: always empty.
    pub version_needs: Vec<(String, Vec<String>)>,
}

#[derive(Debug, thiserror::Error)]
pub enum BinaryError {
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{} is neither a PE nor an ELF file (it starts with {start})", path.display())]
    UnknownFormat { path: PathBuf, start: String },
    #[error(
        "{} is truncated: {what} at 0x{offset:x}..0x{end:x} runs past the end of the file \
         (0x{len:x} bytes)",
        path.display()
    )]
    Truncated {
        path: PathBuf,
        what: String,
        offset: u64,
        end: u64,
        len: u64,
    },
    #[error("{} is not a valid {} file: {problem}", path.display(), format.name())]
    Malformed {
        path: PathBuf,
        format: Format,
        problem: String,
    },
}

/// The format of a file, from its first four bytes only.
pub fn sniff(path: &Path) -> io::Result<Option<Format>> {
    let mut start = Vec::with_capacity(4);
    File::open(path)?.take(4).read_to_end(&mut start)?;
    Ok(sniff_bytes(&start))
}

fn sniff_bytes(data: &[u8]) -> Option<Format> {
    if data.starts_with(b"MZ") {
        Some(Format::Pe)
    } else if data.starts_with(b"\x7fELF") {
        Some(Format::Elf)
    } else {
        None
    }
}

/// Maps the file and parses it; only the pages holding headers and import tables are read.
pub fn read(path: &Path) -> Result<BinaryInfo, BinaryError> {
    let io_error = |source| BinaryError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(io_error)?;
    let metadata = file.metadata().map_err(io_error)?;
    if !metadata.is_file() {
        return Err(io_error(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        )));
    }
    if metadata.len() == 0 {
        return parse(&[], path);
    }
    // SAFETY: the map is read-only and lives only for this call. Another process truncating
    // the file meanwhile could fault the read; build outputs and unpacked wheels are not
    // rewritten while they are inspected.
    let map = unsafe { Mmap::map(&file) }.map_err(io_error)?;
    parse(&map, path)
}

/// Parses a whole file's bytes; `path` is only used in error messages.
pub fn parse(data: &[u8], path: &Path) -> Result<BinaryInfo, BinaryError> {
    match sniff_bytes(data) {
        Some(format) => {
            let input = Input { data, path, format };
            match format {
                Format::Pe => parse_pe(&input),
                Format::Elf => parse_elf(&input),
            }
        }
        None => Err(BinaryError::UnknownFormat {
            path: path.to_path_buf(),
            start: describe_start(data),
        }),
    }
}

fn describe_start(data: &[u8]) -> String {
    if data.is_empty() {
        return "nothing: it is empty".to_string();
    }
    let hex: Vec<String> = data.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("bytes {}", hex.join(" "))
}

/// Replaces `$ORIGIN` and `${ORIGIN}` in an rpath/runpath entry with `dir` (the folder of
/// the binary that holds the entry), as the ELF loader does. `$ORIGINAL` and other names
/// are left alone; nothing is normalised, so `$ORIGIN/../lib` stays `dir/../lib`.
pub fn expand_origin(entry: &str, dir: &Path) -> PathBuf {
    let mut out = OsString::new();
    let mut rest = entry;
    while let Some(at) = rest.find('$') {
        out.push(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix("{ORIGIN}") {
            out.push(dir.as_os_str());
            rest = tail;
        } else if let Some(tail) = after
            .strip_prefix("ORIGIN")
            .filter(|t| !t.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
        {
            out.push(dir.as_os_str());
            rest = tail;
        } else {
            out.push("$");
            rest = after;
        }
    }
    out.push(rest);
    PathBuf::from(out)
}

/// The file being parsed, with bounds-checked reads that turn into errors naming it.
struct Input<'a> {
    data: &'a [u8],
    path: &'a Path,
    format: Format,
}

impl<'a> Input<'a> {
    fn len(&self) -> u64 {
        self.data.len() as u64
    }

    fn malformed(&self, problem: impl Into<String>) -> BinaryError {
        BinaryError::Malformed {
            path: self.path.to_path_buf(),
            format: self.format,
            problem: problem.into(),
        }
    }

    fn truncated(&self, what: &str, offset: u64, end: u64) -> BinaryError {
        BinaryError::Truncated {
            path: self.path.to_path_buf(),
            what: what.to_string(),
            offset,
            end,
            len: self.len(),
        }
    }

    fn bytes(&self, offset: u64, size: u64, what: &str) -> Result<&'a [u8], BinaryError> {
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

    fn read<T: Pod>(&self, offset: u64, what: &str) -> Result<&'a T, BinaryError> {
        let bytes = self.bytes(offset, size_of::<T>() as u64, what)?;
        object::pod::from_bytes::<T>(bytes)
            .map(|(value, _)| value)
            .map_err(|()| self.malformed(format!("{what} at 0x{offset:x} is misaligned")))
    }

    /// A NUL-terminated name starting at `offset` that must end before `limit` (the end of
    /// the section or table holding it).
    fn name(&self, offset: u64, limit: u64, what: &str) -> Result<String, BinaryError> {
        if offset >= limit {
            return Err(self.malformed(format!(
                "{what} at 0x{offset:x} starts past the end of its table (0x{limit:x})"
            )));
        }
        let end = limit.min(offset.saturating_add(MAX_NAME + 1));
        let available = end.min(self.len());
        if offset >= available {
            return Err(self.truncated(what, offset, offset + 1));
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

// ---------------------------------------------------------------------------------------
// PE

fn parse_pe(input: &Input) -> Result<BinaryInfo, BinaryError> {
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
    let magic_offset = nt_offset + 4 + size_of::<pe::ImageFileHeader>() as u64;
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

    let optional_offset = nt_offset + 4 + size_of::<pe::ImageFileHeader>() as u64;
    let optional_size = u64::from(file_header.size_of_optional_header.get(LE));
    let fixed = size_of::<Pe::ImageOptionalHeader>() as u64;
    let Some(room) = optional_size.checked_sub(fixed) else {
        return Err(input.malformed(format!(
            "the optional header's declared size {optional_size} is smaller than its fixed \
             part ({fixed} bytes)"
        )));
    };
    let directory_bytes = input.bytes(optional_offset + fixed, room, "data directories")?;
    let count = optional.number_of_rva_and_sizes();
    let directories = DataDirectories::parse(directory_bytes, count).map_err(|_| {
        input.malformed(format!(
            "the optional header declares {count} data directories but has room for {}",
            room / 8
        ))
    })?;

    let sections_offset = optional_offset + optional_size;
    let section_count = u64::from(file_header.number_of_sections.get(LE));
    input.bytes(
        sections_offset,
        section_count * size_of::<pe::ImageSectionHeader>() as u64,
        "section table",
    )?;
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
        format: Format::Pe,
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
                offset: raw + u64::from(delta),
                end: raw + u64::from(backed),
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
                if offset + size_of::<T>() as u64 > end {
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
            let Some(rva) =
                table.checked_add(index * size_of::<pe::ImageImportDescriptor>() as u32)
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
            let Some(rva) = table.checked_add(index * record) else {
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

// ---------------------------------------------------------------------------------------
// ELF

fn parse_elf(input: &Input) -> Result<BinaryInfo, BinaryError> {
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
        format: Format::Elf,
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

    let phoff: u64 = header.e_phoff(endian).into();
    let phnum = header
        .phnum(endian, input.data)
        .map_err(|e| input.malformed(format!("program header count: {e}")))?;
    if phoff == 0 || phnum == 0 {
        return Ok(info);
    }
    let entry = size_of::<Elf::ProgramHeader>();
    let phentsize = header.e_phentsize(endian);
    if usize::from(phentsize) != entry {
        return Err(input.malformed(format!(
            "program header entries are {phentsize} bytes, not {entry}"
        )));
    }
    let table = input.bytes(phoff, u64::from(phnum) * entry as u64, "program headers")?;
    let (segments, _) = object::pod::slice_from_bytes::<Elf::ProgramHeader>(table, phnum as usize)
        .map_err(|()| input.malformed("program headers are misaligned"))?;

    let Some(dynamic) = segments
        .iter()
        .find(|s| s.p_type(endian) == elf::PT_DYNAMIC)
    else {
        return Ok(info); // Statically linked: nothing to load.
    };
    let (offset, size) = dynamic.file_range(endian);
    let bytes = input.bytes(offset, size, "dynamic section")?;
    let count = bytes.len() / size_of::<Elf::Dyn>();
    let (entries, _) = object::pod::slice_from_bytes::<Elf::Dyn>(bytes, count)
        .map_err(|()| input.malformed("dynamic section is misaligned"))?;

    // Where a tag repeats, the loader keeps the last one (glibc fills an array by tag).
    let (mut needed, mut soname, mut rpath, mut runpath) = (Vec::new(), None, None, None);
    let (mut strtab, mut strsz) = (None, None);
    let (mut verneed, mut verneednum) = (None, None);
    for entry in entries {
        let value = entry.val(endian);
        match entry.tag(endian) {
            elf::DT_NULL => break,
            elf::DT_NEEDED if needed.len() >= MAX_NEEDED => {
                return Err(input.malformed(format!(
                    "the dynamic section names more than {MAX_NEEDED} needed libraries"
                )));
            }
            elf::DT_NEEDED => needed.push(value),
            elf::DT_SONAME => soname = Some(value),
            elf::DT_RPATH => rpath = Some(value),
            elf::DT_RUNPATH => runpath = Some(value),
            elf::DT_STRTAB => strtab = Some(value),
            elf::DT_STRSZ => strsz = Some(value),
            elf::DT_VERNEED => verneed = Some(value),
            elf::DT_VERNEEDNUM => verneednum = Some(value),
            _ => {}
        }
    }
    if needed.is_empty()
        && soname.is_none()
        && rpath.is_none()
        && runpath.is_none()
        && verneed.is_none()
    {
        return Ok(info);
    }
    let Some(address) = strtab else {
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
    let table_end = match strsz {
        Some(size) => {
            input.bytes(table_offset, size, "dynamic string table")?;
            table_offset + size
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
                table_end - table_offset
            ))),
        }
    };

    for (index, value) in needed.into_iter().enumerate() {
        info.imports
            .push(string(value, &format!("DT_NEEDED entry {index}"))?);
    }
    if let Some(value) = soname {
        info.soname = Some(string(value, "DT_SONAME")?);
    }
    if let Some(value) = rpath {
        info.rpath = split_path(&string(value, "DT_RPATH")?);
    }
    if let Some(value) = runpath {
        info.runpath = split_path(&string(value, "DT_RUNPATH")?);
    }
    if let Some(address) = verneed {
        let Some((start, _)) = file_offset(address) else {
            return Err(input.malformed(format!(
                "the version needs' address 0x{address:x} (DT_VERNEED) is not inside any \
                 loaded segment"
            )));
        };
        info.version_needs = version_needs(input, endian, start, verneednum, &string)?;
    }
    Ok(info)
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

fn split_path(list: &str) -> Vec<String> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::ops::Range;
    use std::process::Command;

    const MINGW_GCC: &str = "x86_64-w64-mingw32-gcc";
    const DLLTOOL: &str = "x86_64-w64-mingw32-dlltool";
    const OBJDUMP: &str = "x86_64-w64-mingw32-objdump";
    const NM: &str = "x86_64-w64-mingw32-nm";

    fn installed(tool: &str) -> bool {
        Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    }

    /// Prints why a test skips and returns false when a tool is missing.
    fn tools(needed: &[&str], package: &str) -> bool {
        match needed.iter().find(|tool| !installed(tool)) {
            Some(tool) => {
                eprintln!("skipping: {tool} is not installed (apt-get install {package})");
                false
            }
            None => true,
        }
    }

    /// Runs `command` (split on whitespace; the fixtures' names have no spaces) in `dir`,
    /// failing the test with its stderr when it fails; returns its stdout.
    fn run(dir: &Path, command: &str) -> String {
        let mut words = command.split_whitespace();
        let program = words.next().expect("a command");
        let out = Command::new(program)
            .args(words)
            .current_dir(dir)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
        assert!(
            out.status.success(),
            "`{command}` failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs a tool on `path`, in its folder.
    fn run_on(tool: &str, flags: &str, path: &Path) -> String {
        let name = path.file_name().unwrap().to_str().unwrap();
        run(path.parent().unwrap(), &format!("{tool} {flags} {name}"))
    }

    fn write(dir: &Path, name: &str, text: &str) {
        fs::write(dir.join(name), text).unwrap();
    }

    fn hex(text: &str) -> u64 {
        u64::from_str_radix(text.trim_start_matches("0x"), 16)
            .unwrap_or_else(|e| panic!("`{text}` is not hex: {e}"))
    }

    /// Both ways in: mapping the file and parsing bytes must agree.
    fn info(path: &Path) -> BinaryInfo {
        let info = read(path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(parse(&fs::read(path).unwrap(), path).unwrap(), info);
        assert_eq!(sniff(path).unwrap(), Some(info.format));
        info
    }

    // --- PE fixtures ----------------------------------------------------------------

    /// An all-zero delay-load descriptor placed after dlltool's (both go to `.text$2`), so
    /// the table ends the way link.exe ends it.
    const DELAY_TABLE_END: &str = "char delay_table_end[32] \
        __attribute__((section(\".text$2\"), aligned(4))) = {0};\n";

    struct PeFixtures {
        a: PathBuf,
        b: PathBuf,
        exe: PathBuf,
    }

    /// b.dll (exports b_func); a.dll imports b.dll and KERNEL32 and delay-loads c.dll;
    /// main.exe (console) imports a.dll.
    fn build_pe(dir: &Path) -> Option<PeFixtures> {
        if !tools(&[MINGW_GCC, DLLTOOL, OBJDUMP, NM], "gcc-mingw-w64-x86-64") {
            return None;
        }
        write(
            dir,
            "b.c",
            "__declspec(dllexport) int b_func(void) { return 2; }\n",
        );
        write(dir, "c.def", "LIBRARY c.dll\nEXPORTS\n    c_func\n");
        write(
            dir,
            "a.c",
            "#include <windows.h>\n\
             __declspec(dllimport) int b_func(void);\n\
             int c_func(void);\n\
             __declspec(dllexport) int a_func(void) {\n\
                 return b_func() + c_func() + (int)GetCurrentProcessId();\n\
             }\n",
        );
        write(
            dir,
            "main.c",
            "#include <stdio.h>\n\
             __declspec(dllimport) int a_func(void);\n\
             int main(void) { printf(\"%d\\n\", a_func()); return 0; }\n",
        );
        write(dir, "delay_end.c", DELAY_TABLE_END);
        run(
            dir,
            &format!("{MINGW_GCC} -shared -o b.dll b.c -Wl,--out-implib,libb.dll.a"),
        );
        run(
            dir,
            &format!("{DLLTOOL} --input-def c.def --output-delaylib libc_delay.a --dllname c.dll"),
        );
        run(dir, &format!("{MINGW_GCC} -c -o delay_end.o delay_end.c"));
        run(
            dir,
            &format!(
                "{MINGW_GCC} -shared -o a.dll a.c -L. -lb libc_delay.a delay_end.o -lkernel32"
            ),
        );
        point_delay_directory(dir, "a.dll", "__DELAY_IMPORT_DESCRIPTOR_libc_delay_a");
        run(dir, &format!("{MINGW_GCC} -o main.exe main.c a.dll"));
        Some(PeFixtures {
            a: dir.join("a.dll"),
            b: dir.join("b.dll"),
            exe: dir.join("main.exe"),
        })
    }

    /// A PE32 (i386) DLL importing k32.dll and delay-loading d32.dll, linked by the host's
    /// GNU ld, which has the i386pe emulation on Debian (the x86_64 mingw ld lacks its
    /// scripts).
    fn build_pe32(dir: &Path) -> Option<PathBuf> {
        let ld = Command::new("ld").arg("-V").output();
        if !ld.is_ok_and(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .any(|l| l.trim() == "i386pe")
        }) {
            eprintln!(
                "skipping PE32: the host's ld has no i386pe emulation (apt-get install binutils)"
            );
            return None;
        }
        write(dir, "k32.def", "LIBRARY k32.dll\nEXPORTS\n    k_func\n");
        write(dir, "d32.def", "LIBRARY d32.dll\nEXPORTS\n    d_func\n");
        write(
            dir,
            "p32.c",
            "__declspec(dllimport) int k_func(void);\n\
             int d_func(void);\n\
             /* stands in for mingw's delay-load helper: the DLL is never loaded */\n\
             void *__stdcall __delayLoadHelper2(const void *d, void **slot) {\n\
                 (void)d;\n\
                 return *slot;\n\
             }\n\
             __declspec(dllexport) int p_func(void) { return k_func() + d_func(); }\n",
        );
        write(dir, "delay_end32.c", DELAY_TABLE_END);
        run(dir, &format!("{MINGW_GCC} -m32 -O1 -c -o p32.o p32.c"));
        run(
            dir,
            &format!("{MINGW_GCC} -m32 -c -o delay_end32.o delay_end32.c"),
        );
        let dlltool = format!("{DLLTOOL} -m i386 --as-flags=--32 --input-def");
        run(dir, &format!("{dlltool} k32.def --output-lib libk32.a"));
        run(
            dir,
            &format!("{dlltool} d32.def --output-delaylib libd32.a --dllname d32.dll"),
        );
        run(
            dir,
            "ld -m i386pe --dll -e 0 -o p32.dll p32.o libk32.a libd32.a delay_end32.o",
        );
        point_delay_directory(dir, "p32.dll", "__DELAY_IMPORT_DESCRIPTOR_libd32_a");
        Some(dir.join("p32.dll"))
    }

    /// GNU ld (2.40 here) links dlltool's delay-load descriptor into `.text$2` but leaves
    /// the Delay Import data directory empty, so no reader that goes by the headers (this
    /// one, dumpbin, Dependencies) sees the delay import. Point the directory at the
    /// descriptor and its terminator, as link.exe would, unless the linker already did.
    fn point_delay_directory(dir: &Path, file: &str, descriptor: &str) {
        let headers = run(dir, &format!("{OBJDUMP} -p {file}"));
        let entry = headers
            .lines()
            .find(|l| l.contains("Delay Import Directory"))
            .expect("objdump lists the data directories");
        if hex(entry.split_whitespace().nth(2).unwrap()) != 0 {
            return;
        }
        let base = headers
            .lines()
            .find_map(|l| l.strip_prefix("ImageBase"))
            .map(|v| hex(v.trim()))
            .expect("objdump prints ImageBase");
        let symbols = run(dir, &format!("{NM} {file}"));
        let address = symbols
            .lines()
            .find(|l| l.ends_with(&format!(" {descriptor}")))
            .map(|l| hex(l.split_whitespace().next().unwrap()))
            .unwrap_or_else(|| panic!("{file} has no symbol {descriptor}"));
        let rva = u32::try_from(address - base).unwrap();

        let path = dir.join(file);
        let mut bytes = fs::read(&path).unwrap();
        let u32_at = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        let nt = u32_at(&bytes, 0x3c) as usize;
        let optional = nt + 4 + 20;
        let magic = u16::from_le_bytes(bytes[optional..optional + 2].try_into().unwrap());
        let directories = optional + if magic == 0x20b { 112 } else { 96 };
        let at = directories + 13 * 8;
        bytes[at..at + 4].copy_from_slice(&rva.to_le_bytes());
        bytes[at + 4..at + 8].copy_from_slice(&64u32.to_le_bytes());
        fs::write(&path, bytes).unwrap();
    }

    /// The "DLL Name:" lines of `objdump -p`: the import table as binutils reads it.
    fn objdump_imports(path: &Path) -> Vec<String> {
        run_on(OBJDUMP, "-p", path)
            .lines()
            .filter_map(|l| l.trim().strip_prefix("DLL Name:"))
            .map(|name| name.trim().to_string())
            .collect()
    }

    fn objdump_subsystem(path: &Path) -> String {
        let headers = run_on(OBJDUMP, "-p", path);
        let line = headers
            .lines()
            .find_map(|l| l.strip_prefix("Subsystem"))
            .expect("objdump prints the subsystem");
        match hex(line.split_whitespace().next().unwrap()) {
            2 => "windows-gui".to_string(),
            3 => "windows-cui".to_string(),
            other => format!("unknown-{other}"),
        }
    }

    #[test]
    fn pe_imports_match_mingw_and_objdump() {
        let dir = tempfile::tempdir().unwrap();
        let Some(pe) = build_pe(dir.path()) else {
            return;
        };

        let a = info(&pe.a);
        assert_eq!(a.format, Format::Pe);
        assert_eq!(a.machine, "x86_64");
        assert!(a.is_dll);
        assert_eq!(
            a.subsystem.as_deref(),
            Some(objdump_subsystem(&pe.a).as_str())
        );
        assert_eq!(a.imports, objdump_imports(&pe.a));
        let lower: Vec<String> = a.imports.iter().map(|n| n.to_ascii_lowercase()).collect();
        assert!(lower.contains(&"b.dll".to_string()), "{lower:?}");
        assert!(lower.contains(&"kernel32.dll".to_string()), "{lower:?}");
        assert!(!lower.contains(&"c.dll".to_string()), "{lower:?}");
        assert_eq!(a.delay_imports, ["c.dll"]);
        assert_eq!(
            (a.soname.as_ref(), a.rpath.len(), a.runpath.len()),
            (None, 0, 0)
        );

        let b = info(&pe.b);
        assert!(b.is_dll);
        assert_eq!(b.imports, objdump_imports(&pe.b));
        assert!(b.delay_imports.is_empty());

        let exe = info(&pe.exe);
        assert!(!exe.is_dll);
        assert_eq!(exe.machine, "x86_64");
        assert_eq!(exe.subsystem.as_deref(), Some("windows-cui"));
        assert_eq!(exe.imports, objdump_imports(&pe.exe));
        assert!(
            exe.imports.contains(&"a.dll".to_string()),
            "{:?}",
            exe.imports
        );

        if let Some(p32) = build_pe32(dir.path()) {
            let info32 = info(&p32);
            assert_eq!(info32.machine, "i386");
            assert!(info32.is_dll);
            assert_eq!(info32.imports, objdump_imports(&p32));
            assert_eq!(info32.imports, ["k32.dll"]);
            assert_eq!(info32.delay_imports, ["d32.dll"]);
        }
    }

    // --- ELF fixtures ---------------------------------------------------------------

    struct ElfFixtures {
        /// (file, expected machine)
        libraries: Vec<(PathBuf, &'static str)>,
        exe: PathBuf,
    }

    /// libb.so (soname libb.so.1); liba.so needing it with a RUNPATH, liba_rpath.so with an
    /// RPATH; a non-PIE program; and the same libraries as ELF32 when gcc -m32 works.
    fn build_elf(dir: &Path) -> Option<ElfFixtures> {
        if !tools(&["gcc", "readelf"], "gcc binutils") {
            return None;
        }
        write(dir, "b.c", "int b_func(void) { return 2; }\n");
        write(
            dir,
            "a.c",
            "int b_func(void);\nint a_func(void) { return b_func() + 1; }\n",
        );
        write(
            dir,
            "main.c",
            "int a_func(void);\nint main(void) { return a_func(); }\n",
        );
        let gcc = |args: &str| run(dir, &format!("gcc {args}"));
        gcc("-shared -fPIC -o libb.so b.c -Wl,-soname,libb.so.1");
        gcc("-shared -fPIC -o liba.so a.c -L. -lb -Wl,--enable-new-dtags,-rpath,$ORIGIN/../lib");
        gcc(concat!(
            "-shared -fPIC -o liba_rpath.so a.c -L. -lb ",
            "-Wl,--disable-new-dtags,-rpath,$ORIGIN/../lib:/opt/x::${ORIGIN}",
        ));
        gcc("-no-pie -o main main.c -L. -la -lb");
        let mut libraries = vec![
            (dir.join("libb.so"), "x86_64"),
            (dir.join("liba.so"), "x86_64"),
            (dir.join("liba_rpath.so"), "x86_64"),
        ];
        let m32 = Command::new("gcc")
            .args("-m32 -nostdlib -shared -fPIC -o libb32.so b.c".split(' '))
            .arg("-Wl,-soname,libb32.so.1")
            .current_dir(dir)
            .output()
            .is_ok_and(|o| o.status.success());
        if m32 {
            gcc(concat!(
                "-m32 -nostdlib -shared -fPIC -o liba32.so a.c -L. -lb32 ",
                "-Wl,--enable-new-dtags,-rpath,$ORIGIN",
            ));
            libraries.push((dir.join("libb32.so"), "i386"));
            libraries.push((dir.join("liba32.so"), "i386"));
        } else {
            eprintln!("skipping ELF32: gcc -m32 cannot link (apt-get install gcc-multilib)");
        }
        Some(ElfFixtures {
            libraries,
            exe: dir.join("main"),
        })
    }

    /// `readelf -d`: (needed, soname, rpath, runpath), the last three unsplit.
    fn readelf_dynamic(
        path: &Path,
    ) -> (Vec<String>, Option<String>, Option<String>, Option<String>) {
        let text = run_on("readelf", "-d", path);
        let value = |line: &str| {
            let start = line.find('[').unwrap() + 1;
            line[start..line.rfind(']').unwrap()].to_string()
        };
        let (mut needed, mut soname, mut rpath, mut runpath) = (Vec::new(), None, None, None);
        for line in text.lines() {
            if line.contains("(NEEDED)") {
                needed.push(value(line));
            } else if line.contains("(SONAME)") {
                soname = Some(value(line));
            } else if line.contains("(RPATH)") {
                rpath = Some(value(line));
            } else if line.contains("(RUNPATH)") {
                runpath = Some(value(line));
            }
        }
        (needed, soname, rpath, runpath)
    }

    #[test]
    fn elf_dynamic_matches_gcc_and_readelf() {
        let dir = tempfile::tempdir().unwrap();
        let Some(elf) = build_elf(dir.path()) else {
            return;
        };
        for (path, machine) in &elf.libraries {
            let info = info(path);
            let (needed, soname, rpath, runpath) = readelf_dynamic(path);
            let name = path.display();
            assert_eq!(info.format, Format::Elf, "{name}");
            assert_eq!(info.machine, *machine, "{name}");
            assert!(info.is_dll, "{name}");
            assert_eq!(info.subsystem, None, "{name}");
            assert!(info.delay_imports.is_empty(), "{name}");
            assert_eq!(info.imports, needed, "{name}");
            assert_eq!(info.soname, soname, "{name}");
            assert_eq!(
                info.rpath,
                rpath.map(|r| split_path(&r)).unwrap_or_default(),
                "{name}"
            );
            assert_eq!(
                info.runpath,
                runpath.map(|r| split_path(&r)).unwrap_or_default(),
                "{name}"
            );
        }

        let libb = info(&dir.path().join("libb.so"));
        assert_eq!(libb.soname.as_deref(), Some("libb.so.1"));
        assert!(libb.rpath.is_empty() && libb.runpath.is_empty());

        let liba = info(&dir.path().join("liba.so"));
        assert!(
            liba.imports.contains(&"libb.so.1".to_string()),
            "{:?}",
            liba.imports
        );
        assert_eq!(liba.runpath, ["$ORIGIN/../lib"]);
        assert!(liba.rpath.is_empty());
        assert_eq!(
            expand_origin(&liba.runpath[0], Path::new("/w/pkg")),
            Path::new("/w/pkg/../lib")
        );

        let rpath = info(&dir.path().join("liba_rpath.so"));
        assert_eq!(rpath.rpath, ["$ORIGIN/../lib", "/opt/x", "", "${ORIGIN}"]);
        assert!(rpath.runpath.is_empty());

        let exe = info(&elf.exe);
        assert!(!exe.is_dll, "a -no-pie program is ET_EXEC");
        assert_eq!(exe.imports, readelf_dynamic(&elf.exe).0);
        assert!(
            exe.imports.contains(&"liba.so".to_string()),
            "{:?}",
            exe.imports
        );
        assert_eq!(exe.soname, None);
    }

    /// `readelf -V`'s version needs: (file, [version name]) in file order.
    fn readelf_version_needs(path: &Path) -> Vec<(String, Vec<String>)> {
        let text = run_on("readelf", "-V --wide", path);
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        let section = text.split(".gnu.version_r").nth(1).unwrap_or_default();
        for line in section.lines() {
            if let Some((_, rest)) = line.split_once("File: ") {
                out.push((rest.split_whitespace().next().unwrap().to_string(), vec![]));
            } else if let Some((_, rest)) = line.split_once("Name: ") {
                let name = rest.split_whitespace().next().unwrap().to_string();
                out.last_mut().unwrap().1.push(name);
            }
        }
        out
    }

    #[test]
    fn elf_version_needs_match_gcc_and_readelf() {
        if !tools(&["g++", "readelf"], "g++ binutils") {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "v.cpp",
            "#include <string>\n#include <thread>\n#include <stdexcept>\n#include <cstdlib>\n\
             extern \"C\" int v(int n) { if (std::getenv(\"V\")) n++; std::string s(n, 'x'); std::thread t([&]{ s += 'y'; }); \
             t.join(); if (n < 0) throw std::runtime_error(s); return s.size(); }\n",
        );
        run(dir.path(), "g++ -shared -fPIC -O2 -o libv.so v.cpp");
        let path = dir.path().join("libv.so");
        let ours = info(&path).version_needs;
        assert_eq!(ours, readelf_version_needs(&path));
        let libc = ours.iter().find(|(f, _)| f == "libc.so.6").expect("libc");
        assert!(libc.1.iter().all(|v| v.starts_with("GLIBC_")), "{ours:?}");
        assert!(
            ours.iter()
                .any(|(f, v)| f == "libstdc++.so.6" && v.iter().any(|v| v.starts_with("GLIBCXX_"))),
            "{ours:?}"
        );
        let Some(elf) = build_elf(dir.path()) else {
            return;
        };
        // A C library linked without glibc's versioned symbols needs none.
        let libb32 = elf.libraries.iter().find(|(p, _)| p.ends_with("libb32.so"));
        if let Some((p, _)) = libb32 {
            assert!(info(p).version_needs.is_empty());
        }
    }

    // --- Robustness -----------------------------------------------------------------

    /// xorshift64: deterministic, so a failure names a reproducible mutation.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    /// Parses without panicking; an error must name the file.
    fn survives(data: &[u8], label: &str) {
        let path = Path::new("fuzzed/input.bin");
        let result = std::panic::catch_unwind(|| parse(data, path));
        match result {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => {
                let message = e.to_string();
                assert!(message.contains("fuzzed/input.bin"), "{label}: `{message}`");
            }
            Err(_) => panic!("parse panicked on {label} ({} bytes)", data.len()),
        }
    }

    /// The headers (first 4 KiB), the tables the parser walks as file ranges (found with
    /// `object`'s own readers), and where the names they point at sit.
    fn hot_ranges(data: &[u8], info: &BinaryInfo) -> Vec<Range<usize>> {
        let mut ranges = match object::read::pe::optional_header_magic(data) {
            Ok(pe::IMAGE_NT_OPTIONAL_HDR64_MAGIC) => pe_tables::<pe::ImageNtHeaders64>(data),
            Ok(pe::IMAGE_NT_OPTIONAL_HDR32_MAGIC) => pe_tables::<pe::ImageNtHeaders32>(data),
            _ if data.get(4) == Some(&1) => elf_tables::<elf::FileHeader32<Endianness>>(data),
            _ => elf_tables::<elf::FileHeader64<Endianness>>(data),
        };
        assert!(!ranges.is_empty(), "no import or dynamic table found");
        ranges.push(0..data.len().min(4096));
        let names = info
            .imports
            .iter()
            .chain(&info.delay_imports)
            .chain(&info.soname);
        for name in names
            .chain(&info.rpath)
            .chain(&info.runpath)
            .filter(|n| !n.is_empty())
        {
            let needle = name.as_bytes();
            if let Some(at) = data.windows(needle.len()).position(|w| w == needle) {
                ranges.push(at.saturating_sub(16)..(at + needle.len() + 16).min(data.len()));
            }
        }
        ranges
    }

    fn pe_tables<Pe: ImageNtHeaders>(data: &[u8]) -> Vec<Range<usize>> {
        let file = object::read::pe::PeFile::<Pe>::parse(data).unwrap();
        [
            pe::IMAGE_DIRECTORY_ENTRY_IMPORT,
            pe::IMAGE_DIRECTORY_ENTRY_DELAY_IMPORT,
        ]
        .into_iter()
        .filter_map(|id| file.data_directory(id))
        .filter_map(|dir| dir.file_range(&file.section_table()).ok())
        .map(|(offset, size)| offset as usize..(offset + size.max(64)) as usize)
        .map(|r| r.start..r.end.min(data.len()))
        .collect()
    }

    fn elf_tables<Elf: FileHeader<Endian = Endianness>>(data: &[u8]) -> Vec<Range<usize>> {
        let header = Elf::parse(data).unwrap();
        let endian = header.endian().unwrap();
        header
            .program_headers(endian, data)
            .unwrap()
            .iter()
            .filter(|s| s.p_type(endian) == elf::PT_DYNAMIC)
            .map(|s| s.file_range(endian))
            .map(|(offset, size)| offset as usize..(offset + size) as usize)
            .collect()
    }

    /// Mutates `data` `rounds` times: truncations (often inside a table), and byte flips
    /// and planted 32-bit values, mostly in the headers and the import/dynamic tables.
    fn mutate(name: &str, data: &[u8], rounds: usize, rng: &mut Rng) {
        let info = parse(data, Path::new(name)).unwrap();
        let hot = hot_ranges(data, &info);
        let mut buf = data.to_vec();
        let len = data.len();
        for round in 0..rounds {
            let label = format!("{name} round {round}");
            let pick = |rng: &mut Rng| -> usize {
                let range = match rng.below(4) {
                    0 => 0..len,
                    _ => hot[rng.below(hot.len())].clone(),
                };
                range.start + rng.below(range.len())
            };
            if rng.below(4) == 0 {
                let cut = if rng.below(2) == 0 {
                    rng.below(len)
                } else {
                    pick(rng)
                };
                survives(&data[..cut], &format!("{label}: cut at {cut}"));
                continue;
            }
            let mut undo = Vec::new();
            for _ in 0..1 + rng.below(4) {
                let at = pick(rng);
                if rng.below(2) == 0 {
                    undo.push((at, buf[at]));
                    buf[at] ^= 1 + rng.below(255) as u8;
                } else {
                    let values = [0, u32::MAX, 0x8000_0000, len as u32, rng.next() as u32];
                    let value = values[rng.below(values.len())];
                    for (i, byte) in value.to_le_bytes().into_iter().enumerate() {
                        if let Some(slot) = buf.get_mut(at + i) {
                            undo.push((at + i, *slot));
                            *slot = byte;
                        }
                    }
                }
            }
            survives(&buf, &label);
            if rng.below(8) == 0 {
                let cut = pick(rng);
                survives(&buf[..cut], &format!("{label}, then cut at {cut}"));
            }
            for (at, byte) in undo.into_iter().rev() {
                buf[at] = byte;
            }
        }
    }

    #[test]
    fn parse_survives_damaged_input() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for (data, label) in [
            (&b""[..], "empty file"),
            (b"MZ", "MZ only"),
            (b"\x7fELF", "ELF magic only"),
            (b"\x7fELF\x02\x01\x01", "ELF ident cut short"),
        ] {
            survives(data, label);
            assert!(parse(data, Path::new("x")).is_err(), "{label}");
        }
        let blob: Vec<u8> = (0..1 << 20).map(|_| rng.next() as u8).collect();
        survives(&blob, "1 MiB of noise");
        for magic in [&b"MZ"[..], b"\x7fELF\x02\x01\x01", b"\x7fELF\x01\x01\x01"] {
            let mut blob = blob.clone();
            blob[..magic.len()].copy_from_slice(magic);
            survives(&blob, &format!("noise after {magic:?}"));
        }

        let dir = tempfile::tempdir().unwrap();
        let mut inputs = Vec::new();
        let pe_dir = dir.path().join("pe");
        fs::create_dir(&pe_dir).unwrap();
        if let Some(pe) = build_pe(&pe_dir) {
            inputs.extend([pe.a, pe.exe]);
            inputs.extend(build_pe32(&pe_dir));
        }
        let elf_dir = dir.path().join("elf");
        fs::create_dir(&elf_dir).unwrap();
        if let Some(elf) = build_elf(&elf_dir) {
            inputs.extend(elf.libraries.into_iter().map(|(path, _)| path).skip(1));
        }
        for path in &inputs {
            let data = fs::read(path).unwrap();
            let name = path.file_name().unwrap().to_string_lossy();
            mutate(&name, &data, 3000 / inputs.len(), &mut rng);
        }
    }

    #[test]
    fn errors_name_the_file_and_the_problem() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("gone.dll");
        let err = read(&missing).unwrap_err().to_string();
        assert!(
            err.starts_with("cannot read ") && err.contains("gone.dll"),
            "{err}"
        );

        let empty = dir.path().join("empty.so");
        fs::write(&empty, b"").unwrap();
        let err = read(&empty).unwrap_err().to_string();
        assert!(
            err.contains("empty.so") && err.contains("it is empty"),
            "{err}"
        );
        assert_eq!(sniff(&empty).unwrap(), None);

        let err = read(dir.path()).unwrap_err().to_string();
        assert!(err.contains("not a regular file"), "{err}");

        let err = parse(b"MZ", Path::new("w/cut.dll"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "w/cut.dll is truncated: DOS header at 0x0..0x40 runs past the end of the file \
             (0x2 bytes)"
        );
        let mut no_pe = vec![0u8; 0x80];
        no_pe[..2].copy_from_slice(b"MZ");
        no_pe[0x3c] = 0x40;
        let err = parse(&no_pe, Path::new("dos.exe")).unwrap_err().to_string();
        assert!(
            err.starts_with("dos.exe is not a valid PE file: no PE signature at 0x40"),
            "{err}"
        );
    }

    #[test]
    fn truncated_import_table_is_reported_as_such() {
        let dir = tempfile::tempdir().unwrap();
        let Some(pe) = build_pe(dir.path()) else {
            return;
        };
        let data = fs::read(&pe.a).unwrap();
        let import = pe_tables::<pe::ImageNtHeaders64>(&data)[0].clone();
        let err = parse(&data[..import.start + 4], Path::new("a.dll")).unwrap_err();
        let message = err.to_string();
        assert!(matches!(err, BinaryError::Truncated { .. }), "{message}");
        assert!(
            message.starts_with("a.dll is truncated: import descriptor 0 at 0x"),
            "{message}"
        );
    }

    #[test]
    fn origin_is_expanded_in_both_spellings_and_only_as_a_whole_word() {
        let dir = Path::new("/opt/pkg/lib");
        assert_eq!(expand_origin("$ORIGIN", dir), Path::new("/opt/pkg/lib"));
        assert_eq!(
            expand_origin("$ORIGIN/../x", dir),
            Path::new("/opt/pkg/lib/../x")
        );
        assert_eq!(
            expand_origin("${ORIGIN}/x:$ORIGIN", dir),
            Path::new("/opt/pkg/lib/x:/opt/pkg/lib")
        );
        assert_eq!(expand_origin("$ORIGINAL/x", dir), Path::new("$ORIGINAL/x"));
        assert_eq!(expand_origin("/usr/lib", dir), Path::new("/usr/lib"));
        assert_eq!(expand_origin("$LIB/$", dir), Path::new("$LIB/$"));
    }

    #[test]
    fn sniff_reads_the_magic_only() {
        let dir = tempfile::tempdir().unwrap();
        for (name, bytes, format) in [
            ("a.dll", &b"MZ\x90\0"[..], Some(Format::Pe)),
            ("a.so", b"\x7fELF\x02", Some(Format::Elf)),
            ("a.txt", b"hello", None),
            ("m", b"M", None),
        ] {
            let path = dir.path().join(name);
            fs::write(&path, bytes).unwrap();
            assert_eq!(sniff(&path).unwrap(), format, "{name}");
        }
    }
}
