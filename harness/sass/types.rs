//! `KernelIdentity` and what it carries (`Parts`, `Resources`, `CodeSource`), and the hashing
//! helpers every identity uses (`Fields`, `hex`).

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// What an identity's hash was computed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CodeSource {
    /// A cubin's machine code (NVRTC's, a `.cubin`, a fatbin's).
    Cubin,
    /// A PTX entry's text and the driver's version (the driver compiles it when it loads).
    Ptx,
    /// A library call's declaration and the library's version (`suite::library`): the
    /// library's own kernels are not read.
    Library,
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
