//! `Module`: a module as kernelgate loads it for one architecture (its methods: `sass/mod.rs`).

/// A module as kernelgate loads it for one architecture: a cubin, or PTX the driver compiles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Module<'a> {
    /// A CUDA ELF image (from NVRTC, a `.cubin`, or a fatbin's entry for the architecture).
    Cubin(std::borrow::Cow<'a, [u8]>),
    /// PTX text (a `.ptx` file, or a fatbin's PTX where it has no cubin for the architecture).
    Ptx(std::borrow::Cow<'a, str>),
    /// A library call (`suite::library`): its description and the library's version, as
    /// `device::cublaslt::compiled` writes them. No code of kernelgate's to read.
    Library(std::borrow::Cow<'a, str>),
}
