//! Checks the static-branch sites of a compiled object: every `__jump_table` entry points at
//! the architecture's NOP, at a label in the same section and at a key symbol, and each key
//! has as many sites as the source has `static_branch_unlikely!` uses.
//!
//! An entry is 16 bytes, eight-byte aligned, the same on all four architectures: `.long site -
//! .`, `.long label - .`, `.quad key + offset + branch - .`, where `branch` is bit 0. Only the
//! relocations that express these differences differ; as measured on the sample with rustc
//! 1.95.0 (x86-64) and Debian's 1.96.0 (all four, `*-none` targets, LLVM 22):
//!
//! - x86-64: `R_X86_64_PC32` for the site and the label (against the function's section
//!   symbol plus the offset), `R_X86_64_PC64` for the key (against the key's own symbol plus
//!   the field offset); NOP `0f 1f 44 00 00`.
//! - arm64: `R_AARCH64_PREL32` and `R_AARCH64_PREL64`, against the same symbols as on x86-64;
//!   NOP `1f 20 03 d5`.
//! - riscv64: every field is an `R_RISCV_ADD32`/`R_RISCV_SUB32` pair (`ADD64`/`SUB64` for the
//!   key) at the field's offset, because linker relaxation may still move the code: the `ADD`
//!   names the target (local labels `.Ltmp`/`.LBB` kept in the symbol table), the `SUB` a
//!   local label at the field itself. The keys are merged into one local `.L_MergedGlobals`,
//!   which the key field names with the key's offset in it. NOP `13 00 00 00`.
//! - loongarch64: `R_LARCH_32_PCREL` against local labels and `R_LARCH_64_PCREL` against the
//!   key's symbol; NOP `00 00 40 03`. `ADD`/`SUB` pairs, as riscv64 has, are accepted too,
//!   as older LLVMs emit them, but were not seen.
//!
//! The key is the smallest data symbol around the key field's target, so that a key inside a
//! merged block is still found by name.

use crate::elf::{
    Object, Relocation, EM_AARCH64, EM_LOONGARCH, EM_RISCV, EM_X86_64, SHF_ALLOC, SHF_EXECINSTR,
    STT_OBJECT,
};
use std::collections::BTreeMap;

/// One static-branch site as the object records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Site {
    /// The name of the section of the NOP (and of the label).
    pub section: String,
    /// The NOP's offset in that section.
    pub offset: u64,
    /// The label's offset in that section, where the patched jump goes.
    pub label: u64,
    /// The name of the data symbol the key lies in.
    pub key: String,
    /// Bit 0 of the key field: whether the site jumps while the key is disabled.
    pub branch: bool,
}

/// The sites per key that `tests/targets/sites.rs` has, where the `asm goto` form is compiled.
pub const SAMPLE_SITES: &[(&str, usize)] = &[
    ("KSHIM_TRACE_KEY", 2),
    ("KSHIM_DEBUG_KEY", 1),
    ("KSHIM_TRACEPOINT", 1),
];

/// The sample crate whose object [`SAMPLE_SITES`] describes, relative to the project root.
pub const SAMPLE_PATH: &str = "tests/targets/sites.rs";

/// An architecture with static keys, as the shim's `arch` module knows it.
struct Arch {
    /// `target_arch` as Rust names it.
    name: &'static str,
    /// `e_machine`.
    machine: u16,
    /// The instruction at every disabled site.
    nop: &'static [u8],
}

const ARCHES: [Arch; 4] = [
    Arch {
        name: "x86_64",
        machine: EM_X86_64,
        nop: &[0x0f, 0x1f, 0x44, 0x00, 0x00],
    },
    Arch {
        name: "aarch64",
        machine: EM_AARCH64,
        nop: &[0x1f, 0x20, 0x03, 0xd5],
    },
    Arch {
        name: "riscv64",
        machine: EM_RISCV,
        nop: &[0x13, 0x00, 0x00, 0x00],
    },
    Arch {
        name: "loongarch64",
        machine: EM_LOONGARCH,
        nop: &[0x00, 0x00, 0x40, 0x03],
    },
];

const ENTRY_SIZE: u64 = 16;

/// What a relocation contributes to a field: a PC-relative value, or one half of a pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    PcRelative,
    Add,
    Sub,
}

/// The role and width in bytes of a relocation type that a `__jump_table` field may carry.
fn classify(machine: u16, kind: u32) -> Option<(Role, u64)> {
    let role = match (machine, kind) {
        (EM_X86_64, 2) | (EM_AARCH64, 261) | (EM_RISCV, 57) | (EM_LOONGARCH, 99) => {
            (Role::PcRelative, 4)
        }
        (EM_X86_64, 24) | (EM_AARCH64, 260) | (EM_LOONGARCH, 109) => (Role::PcRelative, 8),
        (EM_RISCV, 35) | (EM_LOONGARCH, 50) => (Role::Add, 4),
        (EM_RISCV, 36) | (EM_LOONGARCH, 51) => (Role::Add, 8),
        (EM_RISCV, 39) | (EM_LOONGARCH, 55) => (Role::Sub, 4),
        (EM_RISCV, 40) | (EM_LOONGARCH, 56) => (Role::Sub, 8),
        _ => return None,
    };
    Some(role)
}

/// A place in the object: a section index and an offset in it.
type Place = (usize, u64);

/// One `__jump_table` section's relocations, found by the offset they apply to.
struct Table<'r> {
    index: usize,
    by_offset: BTreeMap<u64, Vec<&'r Relocation>>,
    used: usize,
}

struct Checker<'a> {
    object: Object<'a>,
    arch: &'static Arch,
    /// The data symbols of each section, the candidates for a key.
    data_symbols: Vec<Vec<usize>>,
}

impl Checker<'_> {
    fn describe(&self, (section, offset): Place) -> String {
        let name = self.object.sections.get(section).map_or("?", |s| &s.name);
        format!("{name}+{offset:#x}")
    }

    /// Where `symbol + addend` lies.
    fn resolve(&self, relocation: &Relocation) -> Result<Place, String> {
        let symbol = &self.object.symbols[relocation.symbol];
        let section = symbol.defined_in().ok_or_else(|| {
            format!(
                "symbol {:?} is not defined in a section of the object",
                symbol.name
            )
        })?;
        let offset = (symbol.value as i64)
            .checked_add(relocation.addend)
            .and_then(|offset| u64::try_from(offset).ok())
            .ok_or_else(|| format!("{:?} + {} is out of range", symbol.name, relocation.addend))?;
        Ok((section, offset))
    }

    /// What the `width`-byte field at `at` in `table` points at, and the relocation's symbol.
    fn field(&self, table: &mut Table<'_>, at: u64, width: u64) -> Result<(Place, usize), String> {
        let field = (table.index, at);
        let here = table.by_offset.get(&at).map_or(&[][..], Vec::as_slice);
        let roles: Vec<Option<(Role, u64)>> = here
            .iter()
            .map(|relocation| classify(self.object.machine, relocation.kind))
            .collect();
        let target = match roles.as_slice() {
            [Some((Role::PcRelative, w))] if *w == width => here[0],
            [Some((Role::Add, w1)), Some((Role::Sub, w2))] if *w1 == width && *w2 == width => {
                self.own_address(field, here[1])?;
                here[0]
            }
            [Some((Role::Sub, w1)), Some((Role::Add, w2))] if *w1 == width && *w2 == width => {
                self.own_address(field, here[0])?;
                here[1]
            }
            _ => {
                let kinds: Vec<String> = here.iter().map(|r| r.kind.to_string()).collect();
                return Err(format!(
                    "the {width}-byte field at {} has relocation types [{}], \
                     not one PC-relative of its width nor an ADD/SUB pair",
                    self.describe(field),
                    kinds.join(", ")
                ));
            }
        };
        table.used += here.len();
        Ok((self.resolve(target)?, target.symbol))
    }

    /// Checks that the `SUB` half of a pair subtracts the field's own address.
    fn own_address(&self, field: Place, sub: &Relocation) -> Result<(), String> {
        let subtracted = self.resolve(sub)?;
        if subtracted != field {
            return Err(format!(
                "the field at {} subtracts {}, not its own address",
                self.describe(field),
                self.describe(subtracted)
            ));
        }
        Ok(())
    }

    /// The entry at `at`: the site, its label and its key, each checked.
    fn entry(&self, table: &mut Table<'_>, at: u64) -> Result<Site, String> {
        let (site, _) = self.field(table, at, 4)?;
        let (label, _) = self.field(table, at + 4, 4)?;
        let (key, key_symbol) = self.field(table, at + 8, 8)?;
        let section = &self.object.sections[site.0];
        if section.flags & SHF_EXECINSTR == 0 {
            let site = self.describe(site);
            return Err(format!("the site {site} is not in an executable section"));
        }
        let text = self.object.section_data(site.0)?;
        let nop = self.arch.nop;
        let found = usize::try_from(site.1)
            .ok()
            .and_then(|start| text.get(start..start.checked_add(nop.len())?))
            .ok_or_else(|| format!("the site {} lies beyond its section", self.describe(site)))?;
        if found != nop {
            return Err(format!(
                "the site {} holds {}, not the {} NOP {}",
                self.describe(site),
                hex(found),
                self.arch.name,
                hex(nop)
            ));
        }
        if label.0 != site.0 || label.1 >= section.size {
            return Err(format!(
                "the label {} of the site {} is not in the site's section",
                self.describe(label),
                self.describe(site)
            ));
        }
        let (key_name, branch) = self.key(key, key_symbol)?;
        Ok(Site {
            section: section.name.clone(),
            offset: site.1,
            label: label.1,
            key: key_name,
            branch,
        })
    }

    /// The name of the data symbol that the tagged key address lies in, and the branch bit.
    ///
    /// LLVM may merge the keys into one local `.L_MergedGlobals` and relocate against it
    /// (riscv64 does), so the key is the smallest data symbol around the place, the one
    /// relocated against if it is among the smallest.
    fn key(&self, (section, tagged): Place, relocated: usize) -> Result<(String, bool), String> {
        let place = (section, tagged & !1);
        let data = &self.object.sections[section];
        if data.flags & SHF_ALLOC == 0 || data.flags & SHF_EXECINSTR != 0 {
            let key = self.describe(place);
            return Err(format!("the key {key} is not in a data section"));
        }
        if place.1 % 4 != 0 || data.align < 4 {
            let key = self.describe(place);
            return Err(format!("the key {key} is not four-byte aligned"));
        }
        let symbols = &self.object.symbols;
        let symbol = self.data_symbols[section]
            .iter()
            .copied()
            .filter(|&index| {
                let symbol = &symbols[index];
                symbol.value <= place.1 && place.1 - symbol.value < symbol.size
            })
            .min_by_key(|&index| (symbols[index].size, index != relocated))
            .ok_or_else(|| {
                let key = self.describe(place);
                format!("the key {key} is not inside a data symbol")
            })?;
        Ok((symbols[symbol].name.clone(), tagged & 1 != 0))
    }
}

fn hex(bytes: &[u8]) -> String {
    let words: Vec<String> = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
    words.join(" ")
}

/// Reads the object's `__jump_table` and checks every entry: its site is the NOP of the
/// object's architecture (which must be `target_arch`, as Rust names it: "x86_64", "aarch64",
/// "riscv64", "loongarch64"), its label lies in the same section, and its key is a data symbol
/// (the offset/branch addend resolving inside it; bit 0 = branch). Then checks that the sites
/// per key symbol are exactly `expected` (key symbol name -> count; an empty `expected` means
/// the object must have no `__jump_table` entries at all, as in stable mode before asm goto).
/// Returns the sites, or a one-line error naming the first problem.
pub fn check_object(
    bytes: &[u8],
    target_arch: &str,
    expected: &[(&str, usize)],
) -> Result<Vec<Site>, String> {
    let arch = ARCHES
        .iter()
        .find(|arch| arch.name == target_arch)
        .ok_or_else(|| format!("no static-branch NOP is known for target_arch {target_arch:?}"))?;
    let object = Object::parse(bytes)?;
    if object.machine != arch.machine {
        return Err(format!(
            "the object's e_machine is {}, not {} for {target_arch}",
            object.machine, arch.machine
        ));
    }
    let relocations = object.relocations()?;
    let mut data_symbols = vec![Vec::new(); object.sections.len()];
    for (index, symbol) in object.symbols.iter().enumerate() {
        if let Some(section) = symbol.defined_in() {
            if symbol.kind == STT_OBJECT && !symbol.name.is_empty() {
                data_symbols[section].push(index);
            }
        }
    }
    let checker = Checker {
        object,
        arch,
        data_symbols,
    };
    let mut sites = Vec::new();
    for index in checker.object.sections_named("__jump_table") {
        let size = checker.object.sections[index].size;
        if !size.is_multiple_of(ENTRY_SIZE) {
            return Err(format!(
                "__jump_table's size {size:#x} is not a multiple of 16"
            ));
        }
        let mut table = Table {
            index,
            by_offset: BTreeMap::new(),
            used: 0,
        };
        for relocation in &relocations[index] {
            table
                .by_offset
                .entry(relocation.offset)
                .or_default()
                .push(relocation);
        }
        for at in (0..size).step_by(ENTRY_SIZE as usize) {
            let site = checker
                .entry(&mut table, at)
                .map_err(|error| format!("__jump_table entry at {at:#x}: {error}"))?;
            sites.push(site);
        }
        if table.used != relocations[index].len() {
            return Err(format!(
                "__jump_table has {} relocations outside its entries' fields",
                relocations[index].len() - table.used
            ));
        }
    }
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for site in &sites {
        *counts.entry(&site.key).or_default() += 1;
    }
    if let (true, Some(site)) = (expected.is_empty(), sites.first()) {
        return Err(format!(
            "expected no __jump_table entries, found {} (the first: key {} at {}+{:#x})",
            sites.len(),
            site.key,
            site.section,
            site.offset
        ));
    }
    for (key, count) in expected {
        let found = counts.remove(key).unwrap_or(0);
        if found != *count {
            return Err(format!("key {key} has {found} sites, expected {count}"));
        }
    }
    if let Some((key, count)) = counts.into_iter().next() {
        return Err(format!("key {key} has {count} sites, expected none"));
    }
    Ok(sites)
}

#[cfg(test)]
mod tests;
