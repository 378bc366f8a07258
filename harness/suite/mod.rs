//! `Suite`: a validated suite file, expanded into cases. Everything a trial needs is resolved
//! here, before any GPU work: sizes, lengths, launch shapes, argument bytes.

pub mod args;
mod binary;
mod cases;
mod ctx;
mod declarations;
mod decls;
pub mod discover;
mod entry;
pub mod expr;
mod kernels;
pub mod load;
mod model;
mod schema;
mod sections;
pub mod signature;
pub mod tokens;
mod toml_text;
mod values;

pub use load::{discover, load_bytes, load_dir, load_file, load_text};
pub use model::{
    ArgValue, Bench, Buffer, Case, Check, Init, Kernel, Launch, Limits, Role, Scratch, Source,
    SourceKind, Suite, Tolerance,
};
