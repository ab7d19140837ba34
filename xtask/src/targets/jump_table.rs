// SPDX-License-Identifier: GPL-2.0
//! Checks the static-branch sites of a compiled object: every `__jump_table` entry points at
//! the architecture's NOP, at a label in the same section and at a key symbol, and each key
//! has as many sites as the source has `static_branch_unlikely!` uses.
//!
//! An entry is 16 bytes on every kernel architecture: `.long site - .`, `.long label - .`,
//! `.quad key + offset + branch - .`, where `branch` is bit 0; only the relocations that express
//! these differ, as each row of [`KERNEL_TARGETS`](crate::targets::KERNEL_TARGETS) says.

use crate::targets::{target_of_arch, KernelTarget, Role};
use anyhow::{anyhow, bail, ensure};
use object::elf::{self, FileHeader64, Machine, RelocationType, SectionHeader64, Sym64};
use object::read::elf::{FileHeader, Rela, SectionHeader, SectionTable, Sym, SymbolTable};
use object::{Endianness, SectionIndex, SymbolIndex};
use std::collections::BTreeMap;

/// One static-branch site as the object records it: the NOP at `offset` in `section`, the
/// `label` (in the same section) where the patched jump goes, the data symbol the key lies in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Site {
    pub section: String,
    pub offset: u64,
    pub label: u64,
    pub key: String,
    /// Bit 0 of the key field: whether the site jumps while the key is disabled.
    pub branch: bool,
}

/// The sites per key that `xtask/programs/sites.rs` has, where the `asm goto` form is compiled.
pub const SAMPLE_SITES: &[(&str, usize)] = &[
    ("KSHIM_TRACE_KEY", 2),
    ("KSHIM_DEBUG_KEY", 1),
    ("KSHIM_TRACEPOINT", 1),
];

/// The sample crate whose object [`SAMPLE_SITES`] describes, relative to the project root.
pub const SAMPLE_PATH: &str = "xtask/programs/sites.rs";

const ENTRY_SIZE: u64 = 16;

type Elf = FileHeader64<Endianness>;

/// One relocation of a `__jump_table` section, its symbol checked to index the symbol table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Relocation {
    kind: u32,
    symbol: usize,
    addend: i64,
}

/// A relocatable object, its header, section and symbol tables and every section's bytes
/// checked once. The bytes may be hostile: what is wrong is an `Err`, never a panic.
struct Object<'a> {
    data: &'a [u8],
    endian: Endianness,
    machine: u16,
    sections: SectionTable<'a, Elf>,
    symbols: SymbolTable<'a, Elf>,
}

/// Names an error of the `object` crate as the checker reports it.
fn read_error(what: &str) -> impl Fn(object::read::Error) -> anyhow::Error + '_ {
    move |error| anyhow!("{what}: {error}")
}

impl<'a> Object<'a> {
    fn parse(data: &'a [u8]) -> anyhow::Result<Object<'a>> {
        let header = Elf::parse(data).map_err(read_error("not an ELF64 object"))?;
        let endian = header.endian().map_err(read_error("the ELF header"))?;
        let kind = header.e_type.get(endian);
        ensure!(
            kind == elf::ET_REL,
            "not a relocatable object: e_type is {}",
            kind.0
        );
        let version = header.e_version.get(endian);
        ensure!(
            version == u32::from(elf::EV_CURRENT.0),
            "e_version is {version}, not 1"
        );
        let header_size = header.e_ehsize.get(endian);
        ensure!(
            usize::from(header_size) == std::mem::size_of::<Elf>(),
            "e_ehsize is {header_size}, not 64"
        );
        let sections = header
            .sections(endian, data)
            .map_err(read_error("the section headers"))?;
        ensure!(!sections.is_empty(), "the object has no section headers");
        for (index, section) in sections.enumerate() {
            section
                .data(endian, data)
                .map_err(read_error(&format!("section {}", index.0)))?;
        }
        let symbols = sections
            .symbols(endian, data, elf::SHT_SYMTAB)
            .map_err(read_error("the symbol table"))?;
        Ok(Object {
            data,
            endian,
            machine: header.e_machine.get(endian).0,
            sections,
            symbols,
        })
    }

    /// Section `index`, which must exist (index 0 is the null section).
    fn section(&self, index: usize) -> anyhow::Result<&'a SectionHeader64<Endianness>> {
        self.sections
            .section(SectionIndex(index))
            .map_err(read_error(&format!("section {index}")))
    }

    fn section_name(&self, index: usize) -> String {
        let section = self.section(index).ok();
        let name =
            section.and_then(|section| self.sections.section_name(self.endian, section).ok());
        name.map_or_else(|| "?".into(), |name| String::from_utf8_lossy(name).into())
    }

    fn sections_named(&self, name: &str) -> Vec<usize> {
        (1..self.sections.len())
            .filter(|&index| self.section_name(index) == name)
            .collect()
    }

    fn flags(&self, index: usize) -> anyhow::Result<u64> {
        Ok(self.section(index)?.sh_flags(self.endian).0)
    }

    fn symbol(&self, index: usize) -> anyhow::Result<&'a Sym64<Endianness>> {
        self.symbols
            .symbol(SymbolIndex(index))
            .map_err(read_error(&format!("symbol {index}")))
    }

    fn symbol_name(&self, index: usize) -> anyhow::Result<String> {
        let name = self.symbols.symbol_name(self.endian, self.symbol(index)?);
        let name = name.map_err(read_error(&format!("the name of symbol {index}")))?;
        Ok(String::from_utf8_lossy(name).into())
    }

    /// The index of the section symbol `index` is defined in, if it is defined in one.
    fn defined_in(&self, index: usize) -> anyhow::Result<Option<usize>> {
        let symbol = self.symbol(index)?;
        let section = self
            .symbols
            .symbol_section(self.endian, symbol, SymbolIndex(index))
            .map_err(read_error(&format!("symbol {index}")))?;
        // The section is checked to exist.
        section
            .map(|section| self.section(section.0).map(|_| section.0))
            .transpose()
    }

    /// The `RELA` relocations that apply to section `target`, by the offset they apply to. A
    /// `REL` section is an error, since its addends would be in the bytes it applies to.
    fn relocations(&self, target: usize) -> anyhow::Result<Fields> {
        let mut relocations = Fields::new();
        for (index, table) in self.sections.enumerate() {
            if table.sh_info(self.endian) as usize != target {
                continue;
            }
            let what = format!("relocation section {}", index.0);
            ensure!(
                table.sh_type(self.endian) != elf::SHT_REL,
                "{what} has REL entries, which are not supported"
            );
            let Some((entries, link)) = table
                .rela(self.endian, self.data)
                .map_err(read_error(&what))?
            else {
                continue;
            };
            ensure!(
                link == self.symbols.section() && !self.symbols.is_empty(),
                "{what}: sh_link {} is not the symbol table",
                link.0
            );
            for entry in entries {
                let symbol = entry.r_sym(self.endian, false) as usize;
                ensure!(
                    symbol < self.symbols.len(),
                    "{what}: symbol index {symbol} is out of range"
                );
                let at = relocations.entry(entry.r_offset(self.endian));
                at.or_default().push(Relocation {
                    kind: entry.r_type(self.endian, false).0,
                    symbol,
                    addend: entry.r_addend(self.endian),
                });
            }
        }
        Ok(relocations)
    }
}

/// A place in the object: a section index and an offset in it.
type Place = (usize, u64);

/// A section's relocations by the offset they apply to.
type Fields = BTreeMap<u64, Vec<Relocation>>;

struct Checker<'a> {
    object: Object<'a>,
    target: &'static KernelTarget,
    /// The data symbols of each section, the candidates for a key.
    data_symbols: Vec<Vec<usize>>,
}

impl Checker<'_> {
    fn describe(&self, (section, offset): Place) -> String {
        format!("{}+{offset:#x}", self.object.section_name(section))
    }

    /// Where `symbol + addend` lies.
    fn resolve(&self, relocation: &Relocation) -> anyhow::Result<Place> {
        let name = || {
            self.object
                .symbol_name(relocation.symbol)
                .unwrap_or_default()
        };
        let section = self.object.defined_in(relocation.symbol)?.ok_or_else(|| {
            anyhow!(
                "symbol {:?} is not defined in a section of the object",
                name()
            )
        })?;
        let symbol = self.object.symbol(relocation.symbol)?;
        let offset = (symbol.st_value(self.object.endian) as i64)
            .checked_add(relocation.addend)
            .and_then(|offset| u64::try_from(offset).ok())
            .ok_or_else(|| anyhow!("{:?} + {} is out of range", name(), relocation.addend))?;
        Ok((section, offset))
    }

    /// What the `width`-byte field at `at` of section `table` points at, and the relocation's
    /// symbol; its relocations are taken out of `fields`.
    fn field(
        &self,
        table: usize,
        fields: &mut Fields,
        at: u64,
        width: u64,
    ) -> anyhow::Result<(Place, usize)> {
        let field = (table, at);
        let here = fields.remove(&at).unwrap_or_default();
        let roles: Vec<Option<Role>> = here
            .iter()
            .map(|relocation| {
                let mut rows = self.target.jump_table.iter();
                let row =
                    rows.find(|(kind, _, known)| kind.0 == relocation.kind && *known == width);
                row.map(|&(_, role, _)| role)
            })
            .collect();
        let target = match roles.as_slice() {
            [Some(Role::PcRelative)] => &here[0],
            [Some(Role::Add), Some(Role::Sub)] => {
                self.own_address(field, &here[1])?;
                &here[0]
            }
            [Some(Role::Sub), Some(Role::Add)] => {
                self.own_address(field, &here[0])?;
                &here[1]
            }
            _ => {
                let kinds: Vec<String> = here.iter().map(|r| r.kind.to_string()).collect();
                let names = elf::machine_names(Machine(self.object.machine)).r;
                let names: Vec<&str> = here
                    .iter()
                    .map(|r| names.name(RelocationType(r.kind)).unwrap_or("unknown"))
                    .collect();
                bail!(
                    "the {width}-byte field at {} has relocation types [{}] ({}), \
                     not one PC-relative of its width nor an ADD/SUB pair",
                    self.describe(field),
                    kinds.join(", "),
                    names.join(", ")
                );
            }
        };
        Ok((self.resolve(target)?, target.symbol))
    }

    /// Checks that the `SUB` half of a pair subtracts the field's own address.
    fn own_address(&self, field: Place, sub: &Relocation) -> anyhow::Result<()> {
        let subtracted = self.resolve(sub)?;
        ensure!(
            subtracted == field,
            "the field at {} subtracts {}, not its own address",
            self.describe(field),
            self.describe(subtracted)
        );
        Ok(())
    }

    /// The entry at `at` of section `table`: the site, its label and its key, each checked.
    fn entry(&self, table: usize, fields: &mut Fields, at: u64) -> anyhow::Result<Site> {
        let (site, _) = self.field(table, fields, at, 4)?;
        let (label, _) = self.field(table, fields, at + 4, 4)?;
        let (key, key_symbol) = self.field(table, fields, at + 8, 8)?;
        ensure!(
            self.object.flags(site.0)? & elf::SHF_EXECINSTR.0 != 0,
            "the site {} is not in an executable section",
            self.describe(site)
        );
        let text = self
            .object
            .section(site.0)?
            .data(self.object.endian, self.object.data)
            .map_err(read_error(&format!("section {}", site.0)))?;
        let nop = self.target.nop;
        let found = usize::try_from(site.1)
            .ok()
            .and_then(|start| text.get(start..start.checked_add(nop.len())?))
            .ok_or_else(|| anyhow!("the site {} lies beyond its section", self.describe(site)))?;
        ensure!(
            found == nop,
            "the site {} holds {}, not the {} NOP {}",
            self.describe(site),
            hex(found),
            self.target.arch,
            hex(nop)
        );
        ensure!(
            label.0 == site.0 && label.1 < text.len() as u64,
            "the label {} of the site {} is not in the site's section",
            self.describe(label),
            self.describe(site)
        );
        let (key_name, branch) = self.key(key, key_symbol)?;
        Ok(Site {
            section: self.object.section_name(site.0),
            offset: site.1,
            label: label.1,
            key: key_name,
            branch,
        })
    }

    /// The name of the data symbol that the tagged key address lies in, and the branch bit.
    /// LLVM may merge the keys into one local `.L_MergedGlobals` and relocate against it
    /// (riscv64 does), so the key is the smallest data symbol around the place.
    fn key(&self, (section, tagged): Place, relocated: usize) -> anyhow::Result<(String, bool)> {
        let place = (section, tagged & !1);
        let flags = self.object.flags(section)?;
        ensure!(
            flags & elf::SHF_ALLOC.0 != 0 && flags & elf::SHF_EXECINSTR.0 == 0,
            "the key {} is not in a data section",
            self.describe(place)
        );
        let align = self
            .object
            .section(section)?
            .sh_addralign(self.object.endian);
        ensure!(
            place.1 % 4 == 0 && align >= 4,
            "the key {} is not four-byte aligned",
            self.describe(place)
        );
        let endian = self.object.endian;
        let mut inside = Vec::new();
        for &index in &self.data_symbols[section] {
            let symbol = self.object.symbol(index)?;
            let (value, size) = (symbol.st_value(endian), symbol.st_size(endian));
            if value <= place.1 && place.1 - value < size {
                inside.push((size, index != relocated, index));
            }
        }
        let (_, _, symbol) = inside.into_iter().min().ok_or_else(|| {
            let key = self.describe(place);
            anyhow!("the key {key} is not inside a data symbol")
        })?;
        Ok((self.object.symbol_name(symbol)?, tagged & 1 != 0))
    }
}

fn hex(bytes: &[u8]) -> String {
    let words: Vec<String> = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
    words.join(" ")
}

/// Checks every `__jump_table` entry of an object for `target_arch`, then that the sites per key
/// symbol are exactly `expected` (empty: no entries at all). Returns the sites, or a one-line
/// error naming the first problem.
pub fn check_object(
    bytes: &[u8],
    target_arch: &str,
    expected: &[(&str, usize)],
) -> anyhow::Result<Vec<Site>> {
    let target = target_of_arch(target_arch)
        .ok_or_else(|| anyhow!("no static-branch NOP is known for target_arch {target_arch:?}"))?;
    let object = Object::parse(bytes)?;
    ensure!(
        object.machine == target.machine.0,
        "the object's e_machine is {}, not {} for {target_arch}",
        object.machine,
        target.machine.0
    );
    ensure!(
        (object.endian == Endianness::Little) == target.little_endian,
        "the object's byte order is not {target_arch}'s"
    );
    let mut data_symbols = vec![Vec::new(); object.sections.len()];
    for index in 1..object.symbols.len() {
        let symbol = object.symbol(index)?;
        if let Some(section) = object.defined_in(index)? {
            if symbol.st_type() == elf::STT_OBJECT && !object.symbol_name(index)?.is_empty() {
                data_symbols[section].push(index);
            }
        }
    }
    let checker = Checker {
        object,
        target,
        data_symbols,
    };
    let mut sites = Vec::new();
    let object = &checker.object;
    for index in object.sections_named("__jump_table") {
        let size = object.section(index)?.sh_size(object.endian);
        ensure!(
            size.is_multiple_of(ENTRY_SIZE),
            "__jump_table's size {size:#x} is not a multiple of 16"
        );
        let mut fields = object.relocations(index)?;
        for at in (0..size).step_by(ENTRY_SIZE as usize) {
            let site = checker
                .entry(index, &mut fields, at)
                .map_err(|error| anyhow!("__jump_table entry at {at:#x}: {error}"))?;
            sites.push(site);
        }
        let left: usize = fields.values().map(Vec::len).sum();
        ensure!(
            left == 0,
            "__jump_table has {left} relocations outside its entries' fields"
        );
    }
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for site in &sites {
        *counts.entry(&site.key).or_default() += 1;
    }
    if let (true, Some(site)) = (expected.is_empty(), sites.first()) {
        bail!(
            "expected no __jump_table entries, found {} (the first: key {} at {}+{:#x})",
            sites.len(),
            site.key,
            site.section,
            site.offset
        );
    }
    for (key, count) in expected {
        let found = counts.remove(key).unwrap_or(0);
        ensure!(
            found == *count,
            "key {key} has {found} sites, expected {count}"
        );
    }
    if let Some((key, count)) = counts.into_iter().next() {
        bail!("key {key} has {count} sites, expected none");
    }
    Ok(sites)
}

#[cfg(test)]
mod tests;
