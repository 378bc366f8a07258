//! `Reach`: the sections a kernel reaches from its roots through relocations, numbered in the
//! order the walk reaches them (so indices never enter a hash).

use super::elf::{CudaElf, Section, SHT_CUDA_INFO};
use super::error::SassError;
use std::collections::{BTreeMap, VecDeque};

/// The sections a kernel reaches, numbered in the order the walk reaches them.
#[derive(Debug, Clone, Default)]
pub struct Reach {
    /// Section indices, in the order reached: the kernel's `.text` first.
    pub order: Vec<usize>,
    number: BTreeMap<usize, u32>,
}

impl Reach {
    /// Walks from kernel `name`'s roots — its `.text`, its own `.nv.<tag>.<name>` sections, the
    /// module's constant banks — through every relocation, breadth first, relocations in offset
    /// order, so the numbering depends only on what is reached.
    pub fn walk(elf: &CudaElf, name: &str) -> Result<Reach, SassError> {
        let text = elf
            .section(&format!(".text.{name}"))
            .ok_or_else(|| SassError::NoKernel {
                name: name.to_string(),
            })?;
        // The sections `pick` takes, by name.
        let by_name = |pick: &dyn Fn(&Section) -> bool| {
            let mut found: Vec<usize> = (0..elf.sections.len())
                .filter(|&i| pick(&elf.sections[i]))
                .collect();
            found.sort_by(|a, b| elf.sections[*a].name.cmp(&elf.sections[*b].name));
            found
        };
        let own = by_name(&|s| s.kind != SHT_CUDA_INFO && own_tag(&s.name, name).is_some());
        let banks = by_name(&|s| is_module_bank(&s.name));
        let mut reach = Reach::default();
        let mut queue = VecDeque::new();
        for root in std::iter::once(text).chain(own).chain(banks) {
            reach.add(root, &mut queue);
        }
        while let Some(s) = queue.pop_front() {
            for r in &elf.sections[s].relocations {
                if let Some(t) = elf.symbols[r.symbol].section {
                    if t != 0 && t < elf.sections.len() {
                        reach.add(t, &mut queue);
                    }
                }
            }
        }
        Ok(reach)
    }

    fn add(&mut self, section: usize, queue: &mut VecDeque<usize>) {
        if !self.number.contains_key(&section) {
            self.number.insert(section, self.order.len() as u32);
            self.order.push(section);
            queue.push_back(section);
        }
    }

    /// Whether the walk reached section `index`.
    pub fn contains(&self, index: usize) -> bool {
        self.number.contains_key(&index)
    }

    /// The reached code sections, in the order reached (the kernel's own first).
    pub fn code<'e, 'a>(&self, elf: &'e CudaElf<'a>) -> Vec<&'e Section<'a>> {
        self.order
            .iter()
            .map(|&i| &elf.sections[i])
            .filter(|s| s.is_code())
            .collect()
    }

    /// Symbol `index` as it enters the hash: the number of its section and its offset there,
    /// or its name when it is undefined (or outside the walk).
    pub(super) fn symbol(&self, elf: &CudaElf, index: usize) -> Vec<u8> {
        let Some(sym) = elf.symbols.get(index) else {
            return [&b"#"[..], &(index as u64).to_le_bytes()].concat();
        };
        match sym.section.and_then(|s| self.number.get(&s)) {
            Some(n) => [&b"S"[..], &n.to_le_bytes(), &sym.value.to_le_bytes()].concat(),
            None => [&b"U"[..], sym.name.as_bytes()].concat(),
        }
    }
}

/// `tag` when `section` is `.nv.<tag>.<kernel>` (one word, no dot: `constant0`, `shared`).
fn own_tag<'s>(section: &'s str, kernel: &str) -> Option<&'s str> {
    let tag = section
        .strip_prefix(".nv.")?
        .strip_suffix(kernel)?
        .strip_suffix('.')?;
    (!tag.is_empty() && !tag.contains('.')).then_some(tag)
}

/// Whether `section` is a module-wide constant bank, `.nv.constant<N>`.
fn is_module_bank(section: &str) -> bool {
    section
        .strip_prefix(".nv.constant")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}
