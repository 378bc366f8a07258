//! `Listings`: the SASS of kernel entries from their compiled modules, disassembled once per
//! module (`nvdisasm` runs once per distinct cubin) — what `kernelgate sass`, the paired run's
//! SASS diffs and bisect read listings through.

use super::disasm::{Disassembler, Listing};
use super::elf::CudaElf;
use super::{KernelIdentity, Module, SassError};
use crate::device::compile::Compiled;
use crate::suite::SourceKind;
use std::collections::HashMap;

/// Disassembled modules, by their bytes, and the disassembler (`None`: none found, so no SASS).
#[derive(Debug, Default)]
pub struct Listings {
    /// The disassembler, when one was found.
    pub disassembler: Option<Disassembler>,
    cache: HashMap<Vec<u8>, Listing>,
}

impl Listings {
    /// Listings made with `disassembler` (`None`: every entry's SASS is `None`).
    pub fn new(disassembler: Option<Disassembler>) -> Listings {
        Listings {
            disassembler,
            cache: HashMap::new(),
        }
    }

    /// The SASS of entry `id` in `compiled` (a source of `kind`) for `arch`: `None` for PTX
    /// (the driver compiles it, on a GPU) or without a disassembler.
    pub fn entry(
        &mut self,
        kind: SourceKind,
        compiled: &Compiled,
        arch: &str,
        id: &KernelIdentity,
    ) -> Result<Option<Vec<String>>, SassError> {
        let Module::Cubin(cubin) = Module::of(kind, compiled, arch)? else {
            return Ok(None);
        };
        let Some(disassembler) = &self.disassembler else {
            return Ok(None);
        };
        if !self.cache.contains_key(&*cubin) {
            let listing = disassembler.listing(&cubin)?;
            self.cache.insert(cubin.to_vec(), listing);
        }
        let elf = CudaElf::parse(&cubin)?;
        Ok(Some(self.cache[&*cubin].kernel(&elf, &id.name)?))
    }
}
