//! `Suite`: a validated suite file, expanded into cases. Everything a trial needs is resolved
//! here, before any GPU work: sizes, lengths, launch shapes, argument bytes.

#![deny(clippy::too_many_lines)]

pub mod args;
mod axes;
mod bench_table;
mod binary;
mod buffer_tables;
mod cases;
mod check_table;
pub mod compiler;
pub(crate) mod ctx;
mod declarations;
mod decls;
pub mod device;
pub mod discover;
mod entry;
pub mod expr;
mod init;
mod kernel_tables;
mod kernels;
pub mod library;
pub mod load;
mod model;
mod resolved;
mod schema;
pub mod signature;
mod suite_table;
mod sweep;
pub mod tokens;
mod toml_text;
mod values;

pub use bench_table::PRECISION_OF_MAX_SLOWDOWN;
pub use ctx::Scope;
pub use load::{
    load_bytes, load_dir, load_dir_for, load_dir_in, load_file, load_file_on, load_text,
};
pub use model::{
    ArgValue, Bench, Buffer, Case, Check, Flush, Init, Kernel, Launch, Limits, Role, Scratch,
    Source, SourceKind, Suite, Tolerance,
};
