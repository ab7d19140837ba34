//! A small reader of ELF64 little-endian relocatable objects (`ET_REL`), enough to check what
//! the compiler put into an object: the header's machine, the section headers and their names,
//! the symbol table and the `RELA` relocations of each section. The bytes may be hostile (a
//! truncated or corrupted file): every read is bounds-checked, every count is limited by the
//! bytes that hold it, and what is wrong comes back as an `Err` that says where, never as a
//! panic. Extended numbering (more than 65279 sections, `SHN_XINDEX` symbols) is reported as
//! unsupported rather than read.

/// `e_machine` of x86-64.
pub const EM_X86_64: u16 = 62;
/// `e_machine` of arm64.
pub const EM_AARCH64: u16 = 183;
/// `e_machine` of RISC-V.
pub const EM_RISCV: u16 = 243;
/// `e_machine` of LoongArch.
pub const EM_LOONGARCH: u16 = 258;

/// `sh_type` of a section with no bytes in the file (`.bss`).
pub const SHT_NOBITS: u32 = 8;
/// `sh_flags` bit of a section that occupies memory at run time.
pub const SHF_ALLOC: u64 = 0x2;
/// `sh_flags` bit of a section of machine instructions.
pub const SHF_EXECINSTR: u64 = 0x4;
/// `st_type` of a data object.
pub const STT_OBJECT: u8 = 1;

const SHT_SYMTAB: u32 = 2;
const SHT_STRTAB: u32 = 3;
const SHT_RELA: u32 = 4;
const SHT_REL: u32 = 9;
const SHN_LORESERVE: u16 = 0xff00;
const SHN_XINDEX: u16 = 0xffff;
const HEADER_SIZE: usize = 64;
const SECTION_HEADER_SIZE: usize = 64;
const SYMBOL_SIZE: usize = 24;
const RELA_SIZE: usize = 24;

/// One section header, with its name read from the section name table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    /// The name, lossily decoded; empty for the null section.
    pub name: String,
    /// `sh_type`.
    pub kind: u32,
    /// `sh_flags`.
    pub flags: u64,
    /// `sh_offset`: where its bytes start in the file.
    pub offset: u64,
    /// `sh_size`.
    pub size: u64,
    /// `sh_link`.
    pub link: u32,
    /// `sh_info`: for a relocation section, the index of the section it applies to.
    pub info: u32,
    /// `sh_addralign`.
    pub align: u64,
    /// `sh_entsize`: the size of one entry, for tables.
    pub entry_size: u64,
}

/// One symbol table entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    /// The name, lossily decoded; empty for section symbols and the null symbol.
    pub name: String,
    /// `st_shndx`: the index of its section, or a reserved value (0 = undefined).
    pub section: u16,
    /// `st_value`: its offset in its section.
    pub value: u64,
    /// `st_size`.
    pub size: u64,
    /// `ST_BIND(st_info)`: 0 local, 1 global, 2 weak.
    pub binding: u8,
    /// `ST_TYPE(st_info)`: [`STT_OBJECT`], 2 for a function, 3 for a section symbol, ...
    pub kind: u8,
}

impl Symbol {
    /// The index of the section the symbol is defined in, if it is defined in one.
    pub fn defined_in(&self) -> Option<usize> {
        (self.section != 0 && self.section < SHN_LORESERVE).then_some(usize::from(self.section))
    }
}

/// One `RELA` relocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Relocation {
    /// `r_offset`: where in the section it applies.
    pub offset: u64,
    /// `ELF64_R_TYPE(r_info)`, whose meaning depends on the machine.
    pub kind: u32,
    /// `ELF64_R_SYM(r_info)`: an index into [`Object::symbols`], checked to be in range.
    pub symbol: usize,
    /// `r_addend`.
    pub addend: i64,
}

/// A parsed relocatable object, borrowing the file's bytes.
#[derive(Clone, Debug)]
pub struct Object<'a> {
    bytes: &'a [u8],
    /// `e_machine`: [`EM_X86_64`], [`EM_AARCH64`], ...
    pub machine: u16,
    /// The section headers, by index; index 0 is the null section.
    pub sections: Vec<Section>,
    /// The symbol table, by index; empty if the object has none.
    pub symbols: Vec<Symbol>,
}

/// `N` bytes at `at`, or an error naming `what`.
fn array<const N: usize>(bytes: &[u8], at: u64, what: &str) -> Result<[u8; N], String> {
    usize::try_from(at)
        .ok()
        .and_then(|start| bytes.get(start..start.checked_add(N)?))
        .and_then(|slice| slice.try_into().ok())
        .ok_or_else(|| {
            format!(
                "{what} at offset {at:#x} lies beyond the {} bytes",
                bytes.len()
            )
        })
}

fn u16_at(bytes: &[u8], at: u64, what: &str) -> Result<u16, String> {
    array(bytes, at, what).map(u16::from_le_bytes)
}

fn u32_at(bytes: &[u8], at: u64, what: &str) -> Result<u32, String> {
    array(bytes, at, what).map(u32::from_le_bytes)
}

fn u64_at(bytes: &[u8], at: u64, what: &str) -> Result<u64, String> {
    array(bytes, at, what).map(u64::from_le_bytes)
}

/// The `size` bytes at `offset`, or an error naming `what`.
fn range<'a>(bytes: &'a [u8], offset: u64, size: u64, what: &str) -> Result<&'a [u8], String> {
    let start = usize::try_from(offset).ok();
    let end = offset
        .checked_add(size)
        .and_then(|end| usize::try_from(end).ok());
    match (start, end) {
        (Some(start), Some(end)) if end <= bytes.len() => Ok(&bytes[start..end]),
        _ => Err(format!(
            "{what} ({size:#x} bytes at offset {offset:#x}) lies beyond the {} bytes",
            bytes.len()
        )),
    }
}

/// A string table with the places of its NULs, so that finding a name's end takes a binary
/// search, not a scan that many names at the same long run of bytes would repeat.
struct Strings<'a> {
    bytes: &'a [u8],
    nuls: Vec<usize>,
}

impl<'a> Strings<'a> {
    fn new(bytes: &'a [u8]) -> Strings<'a> {
        let nuls = (0..bytes.len()).filter(|&at| bytes[at] == 0).collect();
        Strings { bytes, nuls }
    }

    /// The NUL-terminated name at `at`.
    fn name_at(&self, at: u32, what: &str) -> Result<String, String> {
        let start = usize::try_from(at)
            .ok()
            .filter(|&start| start < self.bytes.len())
            .ok_or_else(|| format!("{what} at {at:#x} lies beyond its string table"))?;
        let end = self.nuls[self.nuls.partition_point(|&nul| nul < start)..]
            .first()
            .ok_or_else(|| format!("{what} at {at:#x} is not NUL-terminated"))?;
        Ok(String::from_utf8_lossy(&self.bytes[start..*end]).into_owned())
    }
}

impl<'a> Object<'a> {
    /// Parses the header, the section headers and the symbol table of an ELF64 little-endian
    /// relocatable object; every section's bytes are checked to lie inside the file.
    pub fn parse(bytes: &'a [u8]) -> Result<Object<'a>, String> {
        let ident: [u8; 16] = array(bytes, 0, "the ELF identification")?;
        if ident[..4] != *b"\x7fELF" {
            return Err("not an ELF file: the magic number is missing".into());
        }
        if ident[4] != 2 || ident[5] != 1 {
            return Err(format!(
                "not ELF64 little-endian: class {}, data encoding {}",
                ident[4], ident[5]
            ));
        }
        if ident[6] != 1 {
            return Err(format!("EI_VERSION is {}, not 1", ident[6]));
        }
        if bytes.len() < HEADER_SIZE {
            return Err(format!(
                "the ELF header needs 64 bytes, the file has {}",
                bytes.len()
            ));
        }
        let kind = u16_at(bytes, 16, "e_type")?;
        if kind != 1 {
            return Err(format!("not a relocatable object: e_type is {kind}"));
        }
        let machine = u16_at(bytes, 18, "e_machine")?;
        let version = u32_at(bytes, 20, "e_version")?;
        if version != 1 {
            return Err(format!("e_version is {version}, not 1"));
        }
        let header_size = u16_at(bytes, 52, "e_ehsize")?;
        if usize::from(header_size) != HEADER_SIZE {
            return Err(format!("e_ehsize is {header_size}, not 64"));
        }
        let table_offset = u64_at(bytes, 40, "e_shoff")?;
        let entry_size = u16_at(bytes, 58, "e_shentsize")?;
        let count = u16_at(bytes, 60, "e_shnum")?;
        let names_index = u16_at(bytes, 62, "e_shstrndx")?;
        if usize::from(entry_size) != SECTION_HEADER_SIZE {
            return Err(format!("e_shentsize is {entry_size}, not 64"));
        }
        if count == 0 || names_index == SHN_XINDEX {
            return Err(
                "extended section numbering (e_shnum 0 or e_shstrndx 0xffff) is not supported"
                    .into(),
            );
        }
        let table = range(
            bytes,
            table_offset,
            u64::from(count) * SECTION_HEADER_SIZE as u64,
            "the section header table",
        )?;
        let mut sections = Vec::with_capacity(usize::from(count));
        let mut name_offsets = Vec::with_capacity(usize::from(count));
        for header in table.chunks_exact(SECTION_HEADER_SIZE) {
            let field32 = |at| u32_at(header, at, "a section header field");
            let field64 = |at| u64_at(header, at, "a section header field");
            name_offsets.push(field32(0)?);
            sections.push(Section {
                name: String::new(),
                kind: field32(4)?,
                flags: field64(8)?,
                offset: field64(24)?,
                size: field64(32)?,
                link: field32(40)?,
                info: field32(44)?,
                align: field64(48)?,
                entry_size: field64(56)?,
            });
        }
        for (index, section) in sections.iter().enumerate() {
            if index != 0 && section.kind != SHT_NOBITS {
                range(
                    bytes,
                    section.offset,
                    section.size,
                    &format!("section {index}"),
                )?;
            }
        }
        let names = sections
            .get(usize::from(names_index))
            .filter(|section| section.kind == SHT_STRTAB)
            .ok_or_else(|| format!("e_shstrndx {names_index} is not a string table"))?;
        let names = Strings::new(range(
            bytes,
            names.offset,
            names.size,
            "the section name table",
        )?);
        for (index, (section, at)) in sections.iter_mut().zip(name_offsets).enumerate() {
            section.name = names.name_at(at, &format!("the name of section {index}"))?;
        }
        let mut object = Object {
            bytes,
            machine,
            sections,
            symbols: Vec::new(),
        };
        object.symbols = object.read_symbols()?;
        Ok(object)
    }

    /// The symbol table's entries, with their names; none if there is no `SHT_SYMTAB`.
    fn read_symbols(&self) -> Result<Vec<Symbol>, String> {
        let mut tables = self.sections.iter().filter(|s| s.kind == SHT_SYMTAB);
        let Some(table) = tables.next() else {
            return Ok(Vec::new());
        };
        if tables.next().is_some() {
            return Err("the object has more than one symbol table".into());
        }
        if table.entry_size != SYMBOL_SIZE as u64 {
            return Err(format!(
                "the symbol table's sh_entsize is {}, not 24",
                table.entry_size
            ));
        }
        let data = self.section_bytes(table, "the symbol table")?;
        if !data.len().is_multiple_of(SYMBOL_SIZE) {
            return Err(format!(
                "the symbol table's size {:#x} is not a multiple of 24",
                data.len()
            ));
        }
        let strings = usize::try_from(table.link)
            .ok()
            .and_then(|index| self.sections.get(index))
            .filter(|section| section.kind == SHT_STRTAB)
            .ok_or_else(|| {
                format!(
                    "the symbol table's sh_link {} is not a string table",
                    table.link
                )
            })?;
        let strings = Strings::new(self.section_bytes(strings, "the symbol string table")?);
        let mut symbols = Vec::with_capacity(data.len() / SYMBOL_SIZE);
        for (index, entry) in data.chunks_exact(SYMBOL_SIZE).enumerate() {
            let what = format!("symbol {index}");
            let info = entry[4];
            let section = u16_at(entry, 6, &what)?;
            if section == SHN_XINDEX {
                return Err(format!("{what} uses SHN_XINDEX, which is not supported"));
            }
            let symbol = Symbol {
                name: strings.name_at(u32_at(entry, 0, &what)?, &format!("the name of {what}"))?,
                section,
                value: u64_at(entry, 8, &what)?,
                size: u64_at(entry, 16, &what)?,
                binding: info >> 4,
                kind: info & 0xf,
            };
            if section != 0
                && section < SHN_LORESERVE
                && usize::from(section) >= self.sections.len()
            {
                return Err(format!(
                    "{what} ({}) names section {section}, which does not exist",
                    symbol.name
                ));
            }
            symbols.push(symbol);
        }
        Ok(symbols)
    }

    fn section_bytes(&self, section: &Section, what: &str) -> Result<&'a [u8], String> {
        if section.kind == SHT_NOBITS {
            return Err(format!(
                "{what} ({}) has no bytes in the file",
                section.name
            ));
        }
        range(self.bytes, section.offset, section.size, what)
    }

    /// The bytes of section `index` as the file holds them.
    pub fn section_data(&self, index: usize) -> Result<&'a [u8], String> {
        let section = self
            .sections
            .get(index)
            .ok_or_else(|| format!("section {index} does not exist"))?;
        self.section_bytes(section, &format!("section {index}"))
    }

    /// The indices of the sections called `name`, in order.
    pub fn sections_named(&self, name: &str) -> Vec<usize> {
        (0..self.sections.len())
            .filter(|&index| self.sections[index].name == name)
            .collect()
    }

    /// The `RELA` relocations of every section, by the index of the section they apply to
    /// (an `SHT_RELA` section's `sh_info`), in one pass over the section headers. An `SHT_REL`
    /// section is an error, since its addends would be in the bytes it applies to.
    pub fn relocations(&self) -> Result<Vec<Vec<Relocation>>, String> {
        let mut relocations = vec![Vec::new(); self.sections.len()];
        for (table_index, table) in self.sections.iter().enumerate() {
            let what = format!("relocation section {table_index} ({})", table.name);
            match table.kind {
                SHT_RELA => {}
                SHT_REL => return Err(format!("{what} has REL entries, which are not supported")),
                _ => continue,
            }
            let target = usize::try_from(table.info)
                .ok()
                .filter(|&target| target != 0 && target < self.sections.len())
                .ok_or_else(|| format!("{what}: sh_info {} is not a section", table.info))?;
            let symbol_table = usize::try_from(table.link)
                .ok()
                .and_then(|index| self.sections.get(index));
            if symbol_table.map(|section| section.kind) != Some(SHT_SYMTAB) {
                return Err(format!(
                    "{what}: sh_link {} is not the symbol table",
                    table.link
                ));
            }
            if table.entry_size != RELA_SIZE as u64 {
                return Err(format!(
                    "{what}: sh_entsize is {}, not 24",
                    table.entry_size
                ));
            }
            let data = self.section_bytes(table, &what)?;
            if !data.len().is_multiple_of(RELA_SIZE) {
                return Err(format!(
                    "{what}: its size {:#x} is not a multiple of 24",
                    data.len()
                ));
            }
            for entry in data.chunks_exact(RELA_SIZE) {
                let info = u64_at(entry, 8, &what)?;
                let symbol = usize::try_from(info >> 32).unwrap_or(usize::MAX);
                if symbol >= self.symbols.len() {
                    return Err(format!(
                        "{what}: symbol index {} is out of range",
                        info >> 32
                    ));
                }
                relocations[target].push(Relocation {
                    offset: u64_at(entry, 0, &what)?,
                    kind: info as u32,
                    symbol,
                    addend: u64_at(entry, 16, &what)? as i64,
                });
            }
        }
        Ok(relocations)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_only_inside_the_bytes() {
        let bytes = [1, 2, 3, 4];
        assert_eq!(u16_at(&bytes, 2, "x"), Ok(0x0403));
        assert!(u16_at(&bytes, 3, "x").is_err());
        assert!(u64_at(&bytes, u64::MAX, "x").is_err());
        assert_eq!(range(&bytes, 1, 3, "x"), Ok(&bytes[1..]));
        assert!(range(&bytes, 1, u64::MAX, "x").is_err());
        assert!(range(&bytes, u64::MAX, 0, "x").is_err());
        let strings = Strings::new(b"\0ab\0c\0");
        assert_eq!(strings.name_at(0, "x"), Ok(String::new()));
        assert_eq!(strings.name_at(1, "x"), Ok("ab".to_string()));
        assert_eq!(strings.name_at(2, "x"), Ok("b".to_string()));
        assert_eq!(strings.name_at(4, "x"), Ok("c".to_string()));
        assert!(strings.name_at(6, "x").unwrap_err().contains("beyond"));
        assert!(strings.name_at(u32::MAX, "x").is_err());
        let unterminated = Strings::new(b"\0ab");
        assert!(unterminated.name_at(1, "x").unwrap_err().contains("NUL"));
    }

    #[test]
    fn rejects_what_is_not_an_elf64_le_object() {
        assert!(Object::parse(b"").unwrap_err().contains("identification"));
        let mut header = [0u8; 64];
        assert!(Object::parse(&header).unwrap_err().contains("magic"));
        header[..4].copy_from_slice(b"\x7fELF");
        header[4] = 1;
        header[5] = 1;
        assert!(Object::parse(&header).unwrap_err().contains("ELF64"));
        header[4] = 2;
        assert!(Object::parse(&header).unwrap_err().contains("EI_VERSION"));
        header[6] = 1;
        header[16] = 2;
        assert!(Object::parse(&header).unwrap_err().contains("e_type is 2"));
    }
}
