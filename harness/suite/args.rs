//! `ArgSpec`: one kernel argument as written in a suite file — a buffer name, a typed literal
//! (`2.0f32`, `7i32`, `0.5f16`, `1.5bf16`) or a size expression with a cast (`n as i32`, `ceil(n / 4) as u32`).

use super::expr::{err as error, Expr, ExprError};
use std::collections::BTreeMap;

/// The scalar types an argument can be passed as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarType {
    /// `int`
    I32,
    /// `unsigned int`
    U32,
    /// `long long`
    I64,
    /// `unsigned long long` / `size_t`
    U64,
    /// `float`
    F32,
    /// `double`
    F64,
    /// `__half`
    F16,
    /// `__nv_bfloat16`
    Bf16,
}

/// Each scalar type with its suffix.
const SUFFIXES: [(ScalarType, &str); 8] = [
    (ScalarType::I32, "i32"),
    (ScalarType::U32, "u32"),
    (ScalarType::I64, "i64"),
    (ScalarType::U64, "u64"),
    (ScalarType::F32, "f32"),
    (ScalarType::F64, "f64"),
    (ScalarType::F16, "f16"),
    (ScalarType::Bf16, "bf16"),
];

impl ScalarType {
    /// Parses a suffix or cast target (`i32`, `f64`, ...).
    pub fn parse(s: &str) -> Option<ScalarType> {
        SUFFIXES.iter().find(|(_, n)| *n == s).map(|(t, _)| *t)
    }

    /// The suffix as written.
    pub fn name(self) -> &'static str {
        SUFFIXES
            .iter()
            .find(|(t, _)| *t == self)
            .map_or("?", |(_, n)| n)
    }

    /// A value encoded as `bytes` (by [`Self::encode_int`] or [`Self::encode_float`]) as
    /// `lint --launches` shows it: `4096 as i32`, `2 as f32`.
    pub fn show(self, bytes: &[u8]) -> String {
        // The bytes, zero-padded to 8: each type reads its own width from the front.
        let mut d = [0u8; 8];
        let n = bytes.len().min(8);
        d[..n].copy_from_slice(&bytes[..n]);
        let (w, h) = ([d[0], d[1], d[2], d[3]], [d[0], d[1]]);
        let value = match self {
            ScalarType::I32 => i32::from_le_bytes(w).to_string(),
            ScalarType::U32 => u32::from_le_bytes(w).to_string(),
            ScalarType::I64 => i64::from_le_bytes(d).to_string(),
            ScalarType::U64 => u64::from_le_bytes(d).to_string(),
            ScalarType::F32 => f32::from_le_bytes(w).to_string(),
            ScalarType::F64 => f64::from_le_bytes(d).to_string(),
            ScalarType::F16 => half::f16::from_le_bytes(h).to_string(),
            ScalarType::Bf16 => half::bf16::from_le_bytes(h).to_string(),
        };
        format!("{value} as {}", self.name())
    }

    /// Whether this is an integer type.
    pub fn is_int(self) -> bool {
        !matches!(
            self,
            ScalarType::F32 | ScalarType::F64 | ScalarType::F16 | ScalarType::Bf16
        )
    }

    /// Encodes a floating-point value (rounded to nearest for the narrower types); integer
    /// types take `encode_int`.
    pub fn encode_float(self, v: f64) -> Vec<u8> {
        match self {
            ScalarType::F32 => (v as f32).to_le_bytes().to_vec(),
            ScalarType::F16 => half::f16::from_f64(v).to_le_bytes().to_vec(),
            ScalarType::Bf16 => half::bf16::from_f64(v).to_le_bytes().to_vec(),
            _ => v.to_le_bytes().to_vec(),
        }
    }

    /// Encodes an integer value, or says why it does not fit.
    // stringly: a `Diagnostic`'s message, placed by the caller (an argument's literal or, per
    // case, its expression).
    pub fn encode_int(self, v: i64) -> Result<Vec<u8>, String> {
        let fitted = match self {
            ScalarType::I32 => i32::try_from(v).map(|x| x.to_le_bytes().to_vec()),
            ScalarType::U32 => u32::try_from(v).map(|x| x.to_le_bytes().to_vec()),
            ScalarType::U64 => u64::try_from(v).map(|x| x.to_le_bytes().to_vec()),
            ScalarType::I64 => Ok(v.to_le_bytes().to_vec()),
            ScalarType::F32 | ScalarType::F64 | ScalarType::F16 | ScalarType::Bf16 => {
                Ok(self.encode_float(v as f64))
            }
        };
        fitted.map_err(|_| format!("value {v} does not fit in {}", self.name()))
    }
}

/// A parsed argument.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgSpec {
    /// A pointer to the named buffer (index into the suite's buffers).
    Buffer(usize),
    /// A typed literal, already encoded.
    Literal(ScalarType, Vec<u8>),
    /// A size expression cast to a type; `offset` is where the expression starts in the text.
    Expr(Expr, ScalarType, usize),
}

/// Parses one argument. `buffers` maps buffer names to indices; `sizes` lists size names.
pub fn parse(
    text: &str,
    buffers: &BTreeMap<String, usize>,
    sizes: &[String],
) -> Result<ArgSpec, ExprError> {
    let trimmed = text.trim();
    let lead = text.len() - text.trim_start().len();
    if let Some(&index) = buffers.get(trimmed) {
        return Ok(ArgSpec::Buffer(index));
    }
    if let Some(at) = trimmed.rfind(" as ") {
        let target = trimmed[at + 4..].trim();
        let Some(ty) = ScalarType::parse(target) else {
            return error(
                lead + at + 4,
                format!(
                    "cannot cast to `{target}` (use i32, u32, i64, u64, f32, f64, f16 or bf16)"
                ),
            );
        };
        let expr = Expr::parse(&trimmed[..at]).map_err(|e| ExprError {
            offset: lead + e.offset,
            ..e
        })?;
        for (name, offset) in expr.names() {
            if !sizes.iter().any(|s| s == name) {
                return error(lead + offset, unknown_name(name, buffers, sizes));
            }
        }
        return Ok(ArgSpec::Expr(expr, ty, lead));
    }
    if trimmed.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '.') {
        return parse_literal(trimmed).or_else(|m| error(lead, m));
    }
    if sizes.iter().any(|s| s == trimmed) {
        return error(
            lead,
            format!("`{trimmed}` is a size: give it a type, as in `{trimmed} as i32`"),
        );
    }
    error(lead, unknown_name(trimmed, buffers, sizes))
}

fn unknown_name(name: &str, buffers: &BTreeMap<String, usize>, sizes: &[String]) -> String {
    let mut known: Vec<String> = buffers.keys().map(|b| format!("`{b}`")).collect();
    let device = crate::device::Attributes::NAMES;
    let own = sizes.iter().filter(|s| !device.contains(&s.as_str()));
    known.extend(own.map(|s| format!("`{s} as i32`")));
    let names = buffers
        .keys()
        .map(String::as_str)
        .chain(sizes.iter().map(String::as_str));
    let hint = crate::suggest::did_you_mean(name, names);
    format!(
        "`{name}` is neither a buffer nor a size{hint} (write one of {}, or a typed literal such as `2.0f32`)",
        if known.is_empty() {
            "nothing: none declared".to_string()
        } else {
            known.join(", ")
        }
    )
}

/// A literal argument with its type suffix (`2.0f32`, `4i32`), or what to write instead.
// stringly: a `Diagnostic`'s message at the argument's place, which the caller knows.
fn parse_literal(text: &str) -> Result<ArgSpec, String> {
    let split = text.find(['i', 'u', 'f', 'b']).ok_or_else(|| {
        let hint = if text.contains('.') || text.contains('e') {
            format!("`{text}f32` or `{text}f64`")
        } else {
            format!("`{text}i32` or `{text}u32`")
        };
        format!("literal `{text}` needs a type suffix: write {hint}")
    })?;
    let (number, suffix) = text.split_at(split);
    let ty = ScalarType::parse(suffix).ok_or_else(|| {
        format!("unknown type suffix `{suffix}` (use i32, u32, i64, u64, f32, f64, f16 or bf16)")
    })?;
    let number = number.replace('_', "");
    let bytes = if ty.is_int() {
        let v: i64 = number
            .parse()
            .map_err(|_| format!("`{number}` is not an integer (an {} literal)", ty.name()))?;
        ty.encode_int(v)?
    } else {
        let v: f64 = number
            .parse()
            .map_err(|_| format!("`{number}` is not a number"))?;
        let fits = match ty {
            ScalarType::F32 => (v as f32).is_finite(),
            _ => v.is_finite(),
        };
        if !fits {
            return Err(format!(
                "`{text}` is not a finite {} (write a finite number in its range: about ±3.4e38 for f32, ±1.8e308 for f64)",
                ty.name()
            ));
        }
        ty.encode_float(v)
    };
    Ok(ArgSpec::Literal(ty, bytes))
}

impl ArgSpec {
    /// The scalar type, for literals and expressions.
    pub fn scalar_type(&self) -> Option<ScalarType> {
        match self {
            ArgSpec::Buffer(_) => None,
            ArgSpec::Literal(t, _) | ArgSpec::Expr(_, t, _) => Some(*t),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> (BTreeMap<String, usize>, Vec<String>) {
        let buffers = [("x".to_string(), 0), ("y".to_string(), 1)].into();
        (buffers, vec!["n".to_string()])
    }

    #[test]
    fn forms() {
        let (b, s) = ctx();
        assert_eq!(parse("y", &b, &s), Ok(ArgSpec::Buffer(1)));
        assert_eq!(
            parse("2.0f32", &b, &s),
            Ok(ArgSpec::Literal(
                ScalarType::F32,
                2.0f32.to_le_bytes().to_vec()
            ))
        );
        assert_eq!(
            parse("-3i64", &b, &s),
            Ok(ArgSpec::Literal(
                ScalarType::I64,
                (-3i64).to_le_bytes().to_vec()
            ))
        );
        match parse(" ceil(n / 4) as u32", &b, &s).unwrap() {
            ArgSpec::Expr(e, ScalarType::U32, 1) => {
                assert_eq!(e.eval(&[("n".to_string(), 9)].into()), Ok(3))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn half_precision_literals_round_to_their_format() {
        let (b, s) = ctx();
        // 0.1 is not exact in either: f16 keeps 11 significant bits, bf16 8.
        assert_eq!(
            parse("0.1f16", &b, &s),
            Ok(ArgSpec::Literal(
                ScalarType::F16,
                half::f16::from_f64(0.1).to_le_bytes().to_vec()
            ))
        );
        assert_eq!(
            parse("-1.5bf16", &b, &s),
            Ok(ArgSpec::Literal(ScalarType::Bf16, vec![0xc0, 0xbf]))
        );
        assert_eq!(
            parse("1.5f16", &b, &s),
            Ok(ArgSpec::Literal(ScalarType::F16, vec![0x00, 0x3e]))
        );
        match parse("n as bf16", &b, &s) {
            Ok(ArgSpec::Expr(_, ScalarType::Bf16, _)) => {}
            other => panic!("{other:?}"),
        }
        assert_eq!(ScalarType::Bf16.encode_int(3), Ok(vec![0x40, 0x40]));
    }

    #[test]
    fn errors_say_what_to_write() {
        let (b, s) = ctx();
        let e = parse("n", &b, &s).unwrap_err();
        assert!(e.message.contains("`n as i32`"), "{}", e.message);
        let e = parse("2.0", &b, &s).unwrap_err();
        assert!(e.message.contains("`2.0f32`"), "{}", e.message);
        let e = parse("z", &b, &s).unwrap_err();
        assert!(e.message.contains("`x`, `y`"), "{}", e.message);
        let e = parse("n as int", &b, &s).unwrap_err();
        assert_eq!(e.offset, 5);
        let e = parse("m * 2 as i32", &b, &s).unwrap_err();
        assert!(e.message.contains("`m` is neither"), "{}", e.message);
        let e = parse("3000000000i32", &b, &s).unwrap_err();
        assert!(e.message.contains("does not fit in i32"), "{}", e.message);
        assert!(parse("1x2f32", &b, &s).is_err());
    }
}
