//! `RawFile`: a suite file as written, before validation. Unknown keys are rejected by serde;
//! every value keeps its span so later errors can name line and column.

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use toml::Spanned;

/// A whole suite file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFile {
    pub suite: Spanned<RawSuite>,
    #[serde(default)]
    pub buffer: Vec<Spanned<RawBuffer>>,
    #[serde(default)]
    pub kernel: Vec<Spanned<RawKernel>>,
    pub check: Option<Spanned<RawCheck>>,
    pub bench: Option<Spanned<RawBench>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSuite {
    pub name: Spanned<String>,
    pub source: Option<Spanned<String>>,
    #[serde(default)]
    pub include_dirs: Vec<Spanned<String>>,
    #[serde(default)]
    pub options: Vec<Spanned<String>>,
    pub compiler: Option<Spanned<String>>,
    pub sizes: Option<Spanned<SizeTable>>,
    pub sweep: Option<Spanned<String>>,
    pub memory_budget: Option<Spanned<String>>,
    pub max_registers: Option<Spanned<u32>>,
    pub spills: Option<Spanned<String>>,
    pub fp64: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBuffer {
    pub name: Spanned<String>,
    #[serde(rename = "type")]
    pub dtype: Spanned<String>,
    pub len: Spanned<ExprText>,
    pub role: Option<Spanned<String>>,
    pub init: Option<Spanned<RawInit>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawInit {
    pub random: Option<Spanned<String>>,
    pub min: Option<Spanned<Bound>>,
    pub max: Option<Spanned<Bound>>,
    pub mean: Option<f64>,
    pub std: Option<f64>,
    pub constant: Option<f64>,
    pub iota: Option<f64>,
    pub step: Option<f64>,
    pub npy: Option<Spanned<String>>,
    // Init forms that find partial work (issue 11): see `docs/timing-integrity.md`.
    pub outliers: Option<f64>,
    pub scale: Option<f64>,
    pub sorted: Option<bool>,
    pub nan: Option<bool>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawKernel {
    pub name: Spanned<String>,
    pub source: Option<Spanned<String>>,
    pub reference: Option<Spanned<bool>>,
    // A single launch, written inline...
    pub entry: Option<Spanned<String>>,
    pub grid: Option<Spanned<Vec<Spanned<ExprText>>>>,
    pub block: Option<Spanned<Vec<Spanned<ExprText>>>>,
    pub shared: Option<Spanned<ExprText>>,
    pub args: Option<Spanned<Vec<Spanned<String>>>>,
    // ...or a sequence of `[[kernel.launch]]` tables.
    #[serde(default)]
    pub launch: Vec<Spanned<RawLaunch>>,
    #[serde(default)]
    pub scratch: Vec<Spanned<RawScratch>>,
    pub memory_budget: Option<Spanned<String>>,
    pub max_registers: Option<Spanned<u32>>,
    pub spills: Option<Spanned<String>>,
    pub fp64: Option<Spanned<String>>,
    // Variants: the kernel's own axes (`suite::axes`).
    pub axes: Option<Spanned<SizeTable>>,
    #[serde(default)]
    pub defines: Vec<Spanned<String>>,
    #[serde(default)]
    pub skip: Vec<Spanned<ExprText>>,
    // A library call's options (`entry = "cublasLt::gemm"`, `suite::library`).
    pub gemm: Option<Spanned<RawGemm>>,
}

/// The `gemm = { ... }` table of a library kernel.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGemm {
    pub layout: Option<Spanned<RawLayout>>,
    pub math: Option<Spanned<String>>,
    pub alpha: Option<f64>,
    pub beta: Option<Spanned<f64>>,
    pub workspace: Option<Spanned<String>>,
}

/// `layout = "row"` for all three, or `["row", "col", "row"]` for A, B and C.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum RawLayout {
    All(String),
    Each(Vec<String>),
}

/// One launch of a multi-launch kernel.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLaunch {
    pub entry: Spanned<String>,
    pub grid: Spanned<Vec<Spanned<ExprText>>>,
    pub block: Spanned<Vec<Spanned<ExprText>>>,
    pub shared: Option<Spanned<ExprText>>,
    pub args: Spanned<Vec<Spanned<String>>>,
}

/// A scratch buffer a kernel allocates (on the stream) for its launches.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawScratch {
    pub name: Spanned<String>,
    #[serde(rename = "type")]
    pub dtype: Spanned<String>,
    pub len: Spanned<ExprText>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCheck {
    pub trials: Option<Spanned<u32>>,
    pub seed: Option<u64>,
    pub rtol: Option<Spanned<f64>>,
    pub atol: Option<Spanned<f64>>,
    #[serde(default)]
    pub allow_nan: bool,
    #[serde(default)]
    pub output: BTreeMap<Spanned<String>, Spanned<RawTolerance>>,
    #[serde(default)]
    pub golden: BTreeMap<Spanned<String>, Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTolerance {
    pub rtol: Option<Spanned<f64>>,
    pub atol: Option<Spanned<f64>>,
    pub allow_nan: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBench {
    pub bytes: Option<Spanned<ExprText>>,
    pub flops: Option<Spanned<ExprText>>,
    pub flops_type: Option<Spanned<String>>,
    pub l2_flush: Option<Spanned<super::model::FlushWord>>,
    pub min_samples: Option<Spanned<usize>>,
    pub max_samples: Option<Spanned<usize>>,
    pub min_time_ms: Option<Spanned<u64>>,
    pub max_time_ms: Option<Spanned<u64>>,
    pub precision: Option<Spanned<String>>,
    pub max_slowdown: Option<Spanned<String>>,
    pub memory_growth: Option<Spanned<String>>,
    pub max_instruction_growth: Option<Spanned<String>>,
    pub max_dram_read_growth: Option<Spanned<String>>,
}

/// Each table of a suite file with the keys it takes, as serde lists them (from the structs
/// above, so the lists cannot drift): for saying where a key that a table does not take
/// belongs.
pub fn table_keys() -> Vec<(&'static str, Vec<String>)> {
    fn keys<T: serde::de::DeserializeOwned>() -> Vec<String> {
        let message = match toml::from_str::<T>("zz_not_a_key = 1") {
            Err(e) => e.message().to_string(),
            Ok(_) => String::new(),
        };
        let listed = message.split("expected").nth(1).unwrap_or("");
        listed
            .split('`')
            .skip(1)
            .step_by(2)
            .map(String::from)
            .collect()
    }
    vec![
        ("[suite]", keys::<RawSuite>()),
        ("[[buffer]]", keys::<RawBuffer>()),
        ("[[kernel]]", keys::<RawKernel>()),
        ("[[kernel.launch]]", keys::<RawLaunch>()),
        ("[[kernel.scratch]]", keys::<RawScratch>()),
        ("[check]", keys::<RawCheck>()),
        ("[bench]", keys::<RawBench>()),
    ]
}

/// `sizes = { n = [..], k = 7 }`: each size with its value and where the value is written, in
/// the order written.
#[derive(Debug, Clone, Default)]
pub struct SizeTable(pub Vec<(String, Spanned<toml::Value>)>);

impl<'de> Deserialize<'de> for SizeTable {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = SizeTable;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a table of sizes such as { n = [1024, 4096] }")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<SizeTable, A::Error> {
                let entries = std::iter::from_fn(|| map.next_entry().transpose());
                entries.collect::<Result<_, _>>().map(SizeTable)
            }
        }
        d.deserialize_map(V)
    }
}

/// A bound of `random = "uniform"` or `"int"`: a number, or an integer expression over the
/// sizes (`max = "nbins - 1"`), evaluated per case.
#[derive(Debug, Clone, PartialEq)]
pub enum Bound {
    /// A number as written.
    Number(f64),
    /// An expression string.
    Expr(ExprText),
}

impl<'de> Deserialize<'de> for Bound {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Bound;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number or an expression over the sizes such as \"nbins - 1\"")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Bound, E> {
                Ok(Bound::Number(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Bound, E> {
                Ok(Bound::Number(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Bound, E> {
                Ok(Bound::Number(v as f64))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Bound, E> {
                Ok(Bound::Expr(ExprText::written(v, true)))
            }
        }
        d.deserialize_any(V)
    }
}

/// An integer expression as written: a TOML integer or a string. `quoted` says whether the
/// text sits inside quotes (so error columns skip the opening quote).
#[derive(Debug, Clone, PartialEq)]
pub struct ExprText {
    pub text: String,
    pub quoted: bool,
}

impl ExprText {
    pub(super) fn written(text: impl ToString, quoted: bool) -> ExprText {
        let text = text.to_string();
        ExprText { text, quoted }
    }
}

impl<'de> Deserialize<'de> for ExprText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = ExprText;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an integer or an expression string such as \"ceil(n / 256)\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<ExprText, E> {
                Ok(ExprText::written(v, false))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ExprText, E> {
                Ok(ExprText::written(v, false))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ExprText, E> {
                Ok(ExprText::written(v, true))
            }
        }
        d.deserialize_any(V)
    }
}
