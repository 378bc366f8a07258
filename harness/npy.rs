//! `read`: the NumPy `.npy` format (versions 1–3, C order, little-endian), for fixed inputs
//! and golden outputs.

use crate::dtype::{DType, HostData};
use std::path::{Path, PathBuf};

/// What is wrong with a `.npy` file (or an array that cannot be written as one). The messages
/// name no file but `Read`'s: the caller knows where the file was named.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NpyError {
    /// The file cannot be read.
    #[error("cannot read `{}`: {reason}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The OS's reason.
        reason: String,
    },
    /// No `\x93NUMPY` magic: not a `.npy` file.
    #[error("not a .npy file (no \\x93NUMPY magic)")]
    NotNpy,
    /// A format version other than 1, 2 or 3.
    #[error(".npy format version {0} is not supported (1, 2 or 3)")]
    Version(u8),
    /// The header is cut short.
    #[error("truncated .npy header")]
    Truncated,
    /// The header is not UTF-8 text.
    #[error("the .npy header is not text")]
    HeaderNotText,
    /// A key the header must have is missing.
    #[error("the .npy header has no `{0}`")]
    Missing(&'static str),
    /// Fortran order.
    #[error("Fortran-ordered arrays are not supported (save with np.ascontiguousarray)")]
    Fortran,
    /// A shape (or one of its dimensions) that cannot be read.
    #[error("bad {what} `{text}` in the .npy header")]
    Shape {
        /// `shape` or `dimension`.
        what: &'static str,
        /// As written.
        text: String,
    },
    /// An element type kernelgate does not hold.
    #[error("element type `{0}` is not supported (use float32, float64, float16, int32, uint32, int64 or uint8, little-endian)")]
    Type(String),
    /// The body is not the size the shape and type say.
    #[error("the .npy body holds {bytes} bytes, but shape {shape:?} of {dtype} needs {want}")]
    Size {
        /// Bytes in the body.
        bytes: usize,
        /// The header's shape.
        shape: Vec<usize>,
        /// The element type.
        dtype: DType,
        /// Bytes the shape needs.
        want: usize,
    },
    /// A type with no `.npy` equivalent (writing).
    #[error("{0} has no .npy type")]
    NoNpyType(DType),
}

/// An array read from a `.npy` file.
#[derive(Debug, Clone, PartialEq)]
pub struct NpyArray {
    /// The elements, in C order.
    pub data: HostData,
    /// The array's shape.
    pub shape: Vec<usize>,
}

/// Reads a `.npy` file. Errors say what is wrong with the file, without its name (the caller
/// knows where it was named).
pub fn read(path: &Path) -> Result<NpyArray, NpyError> {
    let bytes = std::fs::read(path).map_err(|e| NpyError::Read {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    parse(&bytes)
}

/// Parses the bytes of a `.npy` file.
pub fn parse(bytes: &[u8]) -> Result<NpyArray, NpyError> {
    const MAGIC: &[u8] = b"\x93NUMPY";
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err(NpyError::NotNpy);
    }
    let major = bytes[6];
    let (header_len, start): (usize, usize) = match major {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 => {
            if bytes.len() < 12 {
                return Err(NpyError::Truncated);
            }
            (
                u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
                12,
            )
        }
        v => return Err(NpyError::Version(v)),
    };
    let end = start
        .checked_add(header_len)
        .filter(|e| *e <= bytes.len())
        .ok_or(NpyError::Truncated)?;
    let header = std::str::from_utf8(&bytes[start..end]).map_err(|_| NpyError::HeaderNotText)?;
    let value = |key| dict_value(header, key).ok_or(NpyError::Missing(key));
    let descr = value("descr")?.trim_matches(|c| c == '\'' || c == '"');
    if value("fortran_order")?.trim() != "False" {
        return Err(NpyError::Fortran);
    }
    let shape = parse_shape(value("shape")?)?;
    let dtype = crate::dtype::ALL
        .into_iter()
        .find(|t| t.npy_descr() == Some(descr) || (descr == "<u1" && *t == DType::U8))
        .ok_or_else(|| NpyError::Type(descr.to_string()))?;
    // A shape whose size overflows is bad input (seen in fuzzing: a flipped digit), not a panic.
    let want = shape
        .iter()
        .try_fold(dtype.size(), |n, d| n.checked_mul(*d))
        .ok_or_else(|| NpyError::Shape {
            what: "shape",
            text: format!("{shape:?} (larger than memory)"),
        })?;
    let body = &bytes[end..];
    if body.len() != want {
        return Err(NpyError::Size {
            bytes: body.len(),
            shape,
            dtype,
            want,
        });
    }
    Ok(NpyArray {
        data: HostData {
            dtype,
            bytes: body.to_vec(),
        },
        shape,
    })
}

/// Writes `data` as a one-dimensional (or `shape`-shaped) version 1 `.npy` file image.
pub fn to_bytes(data: &HostData, shape: &[usize]) -> Result<Vec<u8>, NpyError> {
    let descr = data
        .dtype
        .npy_descr()
        .ok_or(NpyError::NoNpyType(data.dtype))?;
    let dims = match shape {
        [one] => format!("({one},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {dims}, }}");
    let unpadded = 10 + header.len() + 1;
    header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((header.len() as u16).to_le_bytes());
    out.extend(header.as_bytes());
    out.extend(&data.bytes);
    Ok(out)
}

/// The text of `'key': value` in a Python dict literal, up to the next top-level comma.
fn dict_value<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    let at = header
        .find(&format!("'{key}'"))
        .or_else(|| header.find(&format!("\"{key}\"")))?;
    let rest = &header[at + key.len() + 2..];
    let rest = rest.trim_start().strip_prefix(':')?.trim_start();
    let mut depth = 0i32;
    for (i, c) in rest.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' | '}' if depth == 0 => return Some(rest[..i].trim()),
            _ => {}
        }
    }
    None
}

fn parse_shape(text: &str) -> Result<Vec<usize>, NpyError> {
    let inner = text
        .trim()
        .strip_prefix('(')
        .and_then(|t| t.strip_suffix(')'))
        .ok_or_else(|| NpyError::Shape {
            what: "shape",
            text: text.to_string(),
        })?;
    inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.trim_end_matches('L')
                .parse::<usize>()
                .map_err(|_| NpyError::Shape {
                    what: "dimension",
                    text: s.to_string(),
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_shape_larger_than_memory_is_an_error() {
        let header =
            "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999, 99999999999999), }";
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend((header.len() as u16).to_le_bytes());
        bytes.extend(header.as_bytes());
        let e = super::parse(&bytes).unwrap_err().to_string();
        assert!(e.contains("larger than memory"), "{e}");
    }

    use super::*;

    #[test]
    fn round_trip_and_padding() {
        let d = HostData::from_f64(DType::F32, [1.0, 2.5, -3.0, 4.0, 5.0, 6.0]);
        let bytes = to_bytes(&d, &[2, 3]).unwrap();
        assert_eq!(
            (bytes.len() - d.bytes.len()) % 64,
            0,
            "header is 64-byte aligned"
        );
        let a = parse(&bytes).unwrap();
        assert_eq!(a.shape, [2, 3]);
        assert_eq!(a.data, d);
    }

    #[test]
    fn reads_what_numpy_writes() {
        // np.save(f, np.arange(3, dtype=np.int32)) — version 1.0, the exact header NumPy 2 writes.
        let mut bytes = b"\x93NUMPY\x01\x00v\x00".to_vec();
        let header = "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }";
        let mut h = header.to_string();
        h.push_str(&" ".repeat(118 - header.len() - 1));
        h.push('\n');
        bytes.extend(h.as_bytes());
        for v in [0i32, 1, 2] {
            bytes.extend(v.to_le_bytes());
        }
        let a = parse(&bytes).unwrap();
        assert_eq!(a.shape, [3]);
        assert_eq!(a.data.dtype, DType::I32);
        assert_eq!(a.data.get(2), 2.0);
    }

    #[test]
    fn rejects_bad_files_with_reasons() {
        assert!(parse(b"hello")
            .unwrap_err()
            .to_string()
            .contains("not a .npy"));
        let d = HostData::from_f64(DType::F64, [1.0, 2.0]);
        let mut bytes = to_bytes(&d, &[2]).unwrap();
        bytes.pop();
        assert!(parse(&bytes).unwrap_err().to_string().contains("needs 16"));
        let mut fortran = to_bytes(&d, &[2]).unwrap();
        let pos = fortran.windows(5).position(|w| w == b"False").unwrap();
        // Same length, so only the flag changes.
        fortran[pos..pos + 5].copy_from_slice(b"True ");
        assert!(parse(&fortran).unwrap_err().to_string().contains("Fortran"));
        let mut complex = to_bytes(&d, &[2]).unwrap();
        let pos = complex.windows(3).position(|w| w == b"<f8").unwrap();
        complex[pos + 1] = b'c';
        assert!(parse(&complex)
            .unwrap_err()
            .to_string()
            .contains("not supported"));
    }
}
