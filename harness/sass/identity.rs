//! `identify_cubin`: a kernel's code identity from a cubin's bytes — a SHA-256 over what the GPU
//! executes for that entry and nothing else (`docs/sass.md` lists both sides):
//!
//! - **code**: the kernel's `.text.<name>` and every code section reached through relocations
//!   (non-inlined callees of relocatable code, recursively);
//! - **data**: the kernel's own `.nv.<tag>.<name>` sections (its parameter bank, its static
//!   shared memory), the module's constant banks (`.nv.constantN`: `__constant__` data and the
//!   addresses of `__device__` globals), and what their relocations reach (`.nv.global.init`);
//! - **attributes**: the `.nv.info.<name>` records of every reached function, and the module
//!   `.nv.info` records that name one of them (registers, frame and stack sizes).
//!
//! Section and symbol indices never enter the hash: a section is numbered in the order the walk
//! reaches it, and a relocation or attribute that names a symbol is written as (that number,
//! the symbol's offset) — or the name, for an undefined symbol. Line tables, debug sections,
//! build paths, the toolchain notes and the other kernels of the module are never read.

use super::elf::{CudaElf, SHT_CUDA_INFO};
use super::SassError;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, VecDeque};

/// What an identity's hash was computed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CodeSource {
    /// A cubin's machine code (NVRTC's, a `.cubin`, a fatbin's).
    Cubin,
    /// A PTX entry's text and the driver's version (the driver compiles it when it loads).
    Ptx,
}

/// The three parts of a cubin identity, each the first 16 hex digits of its own SHA-256, so a
/// change can be told apart: the machine code, the data it reads, or its attributes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Parts {
    /// The reached code sections.
    pub code: String,
    /// The reached data sections: parameter bank, static shared memory, constant banks,
    /// global initializers.
    pub data: String,
    /// The `.nv.info` records.
    pub attributes: String,
}

/// What a kernel's code asks of the GPU, read from its `.nv.info` records and sections.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resources {
    /// Registers per thread (`EIATTR_REGCOUNT`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registers: Option<u32>,
    /// Static shared memory per block, bytes: the size of `.nv.shared.<name>`, which on sm_90
    /// includes the 1 KiB the GPU reserves when the kernel has any (`s[128]` of floats: 1536).
    pub shared_bytes: u64,
    /// Local memory per thread, bytes: the stack frame (`EIATTR_FRAME_SIZE`), where spills go.
    pub local_bytes: u32,
    /// Call stack per thread, bytes (`EIATTR_MAX_STACK_SIZE`, else `EIATTR_MIN_STACK_SIZE`).
    pub stack_bytes: u32,
    /// Parameter bytes (`EIATTR_CBANK_PARAM_SIZE`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub param_bytes: Option<u32>,
    /// Named barriers used (`EIATTR_NUM_BARRIERS`).
    pub barriers: u32,
    /// `__launch_bounds__`' maximum threads per block, `[x, y, z]` (`EIATTR_MAX_THREADS`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_threads: Option<[u32; 3]>,
    /// The block shape the kernel requires, `[x, y, z]` (`EIATTR_REQNTID`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required_threads: Option<[u32; 3]>,
    /// `__cluster_dims__`, `[x, y, z]` (`EIATTR_CTA_PER_CLUSTER`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<[u32; 3]>,
    /// Bytes of machine code reached (the kernel's text and its callees').
    pub code_bytes: u64,
}

impl Resources {
    /// `regs 18 · smem 0 B · local 0 B · stack 0 B`, in the words the trial lines use.
    pub fn summary(&self) -> String {
        let regs = self
            .registers
            .map_or("regs ?".to_string(), |r| format!("regs {r}"));
        format!(
            "{regs} · smem {} B · local {} B · stack {} B",
            self.shared_bytes, self.local_bytes, self.stack_bytes
        )
    }
}

/// A kernel's code identity for one architecture: equal hashes mean the GPU runs the same code
/// with the same data and attributes. Its JSON shape is documented in `docs/sass.md`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelIdentity {
    /// SHA-256, 64 hex digits.
    pub hash: String,
    /// The architecture it was computed for, e.g. `sm_90`.
    pub arch: String,
    /// The entry's mangled name, as the module exports it.
    pub name: String,
    /// What the hash covers: a cubin's code, or (without a GPU) a PTX entry's text.
    pub from: CodeSource,
    /// The hash's parts, for a cubin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parts: Option<Parts>,
    /// What the code asks of the GPU, for a cubin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Resources>,
}

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A SHA-256 fed with length-prefixed fields, so no two field lists hash alike by accident.
#[derive(Default)]
pub(crate) struct Fields(Sha256);

impl Fields {
    /// Adds one field.
    pub(crate) fn field(&mut self, bytes: &[u8]) -> &mut Self {
        self.0.update((bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
        self
    }

    /// The digest.
    pub(crate) fn finish(self) -> [u8; 32] {
        self.0.finalize().into()
    }
}

/// The sections a kernel reaches, numbered in the order the walk reaches them.
#[derive(Debug, Clone)]
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
        let mut own: Vec<usize> = (0..elf.sections.len())
            .filter(|&i| {
                let s = &elf.sections[i];
                s.kind != SHT_CUDA_INFO && own_tag(&s.name, name).is_some()
            })
            .collect();
        own.sort_by(|a, b| elf.sections[*a].name.cmp(&elf.sections[*b].name));
        let mut banks: Vec<usize> = (0..elf.sections.len())
            .filter(|&i| is_module_bank(&elf.sections[i].name))
            .collect();
        banks.sort_by(|a, b| elf.sections[*a].name.cmp(&elf.sections[*b].name));
        let mut reach = Reach {
            order: Vec::new(),
            number: BTreeMap::new(),
        };
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
    pub fn code<'e, 'a>(&self, elf: &'e CudaElf<'a>) -> Vec<&'e super::elf::Section<'a>> {
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
            let mut out = b"#".to_vec();
            out.extend((index as u64).to_le_bytes());
            return out;
        };
        match sym.section.and_then(|s| self.number.get(&s)) {
            Some(n) => {
                let mut out = b"S".to_vec();
                out.extend(n.to_le_bytes());
                out.extend(sym.value.to_le_bytes());
                out
            }
            None => {
                let mut out = b"U".to_vec();
                out.extend(sym.name.as_bytes());
                out
            }
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

/// The identity of kernel `name` (its mangled name) in `cubin`, for `arch`.
pub fn identify_cubin(cubin: &[u8], name: &str, arch: &str) -> Result<KernelIdentity, SassError> {
    let elf = CudaElf::parse(cubin)?;
    let reach = Reach::walk(&elf, name)?;
    let (mut code, mut data) = (Fields::default(), Fields::default());
    for &index in &reach.order {
        let s = &elf.sections[index];
        let part = if s.is_code() { &mut code } else { &mut data };
        // The kernel's own name never enters: a renamed kernel with the same code is the same.
        let role = match s.name.strip_suffix(name) {
            Some(prefix) if prefix.ends_with('.') => format!("{prefix}<kernel>"),
            _ => s.name.clone(),
        };
        part.field(role.as_bytes())
            .field(&s.kind.to_le_bytes())
            .field(&s.size.to_le_bytes())
            .field(s.data)
            .field(&(s.relocations.len() as u64).to_le_bytes());
        for r in &s.relocations {
            part.field(&r.offset.to_le_bytes())
                .field(&r.kind.to_le_bytes())
                .field(&reach.symbol(&elf, r.symbol))
                .field(&r.addend.to_le_bytes());
        }
    }
    let (records, resources) = super::info::attributes(&elf, &reach, name)?;
    let mut attrs = Fields::default();
    for r in &records {
        attrs.field(r);
    }
    let (code, data, attrs) = (code.finish(), data.finish(), attrs.finish());
    let mut all = Fields::default();
    all.field(b"kernelgate-cubin-identity-v1")
        .field(&elf.arch.to_le_bytes())
        .field(&code)
        .field(&data)
        .field(&attrs);
    Ok(KernelIdentity {
        hash: hex(&all.finish()),
        arch: arch.to_string(),
        name: name.to_string(),
        from: CodeSource::Cubin,
        parts: Some(Parts {
            code: hex(&code[..8]),
            data: hex(&data[..8]),
            attributes: hex(&attrs[..8]),
        }),
        resources: Some(resources),
    })
}

#[cfg(test)]
#[path = "identity_tests.rs"]
mod tests;
