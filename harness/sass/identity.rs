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

use super::elf::CudaElf;
use super::error::SassError;
use super::reach::Reach;
use super::types::Fields;
pub use super::types::{hex, CodeSource, KernelIdentity, Parts, Resources};

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
