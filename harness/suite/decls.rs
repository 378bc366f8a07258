//! `KernelDecl`: a kernel's declarations parsed but not yet evaluated — the expressions of its
//! launches and scratch lengths that `cases::expand` resolves for every case, each with where it
//! was written — and the other parsed forms the cases read (`Located`, `Variant`, `InitBounds`,
//! `Condition`).

use super::args::ArgSpec;
use super::expr::{err, Expr, ExprError};
use crate::dtype::DType;
use std::collections::BTreeMap;

/// A value with the byte offset where it was written.
#[derive(Debug, Clone)]
pub struct Located<T> {
    /// The value.
    pub value: T,
    /// Byte offset in the suite file.
    pub at: usize,
}

/// One launch's expressions, parsed. Buffer indices past the suite's buffers name the
/// kernel's scratch buffers.
pub struct LaunchDecl {
    pub grid: Vec<Located<Expr>>,
    pub block: Vec<Located<Expr>>,
    pub shared: Option<Located<Expr>>,
    pub args: Vec<Located<ArgSpec>>,
}

/// A kernel's launches and scratch lengths, parsed.
#[derive(Default)]
pub struct KernelDecl {
    pub launches: Vec<LaunchDecl>,
    pub scratch_lens: Vec<Located<Expr>>,
    /// Where the kernel's (or the suite's) `memory_budget` is written.
    pub budget_at: Option<usize>,
    /// The variant (`suite::axes`): the axis values its expressions read besides the sizes, and
    /// its skip conditions that read a size (a case they hold for has no trial of it).
    pub variant: Variant,
    /// Where a library call's args are written (`suite::library`), checked per case.
    pub library: Option<usize>,
}

/// One variant of a kernel (`suite::axes`).
#[derive(Debug, Clone, Default)]
pub(super) struct Variant {
    /// Each axis with its value, in the order written.
    pub values: Vec<(String, i64)>,
    /// `-DTILE=16` for each axis `defines` names.
    pub defines: Vec<String>,
    /// The skip conditions that read a size: decided per case (`cases`), where a case they
    /// hold for has no trial of this variant.
    pub case_skips: Vec<Condition>,
}

/// A `random = "uniform"` or `"int"` init with a bound written as an expression over the sizes
/// (`max = "nbins - 1"`): both bounds, resolved and checked per case.
pub struct InitBounds {
    /// The buffer.
    pub buffer: usize,
    /// `min`, then `max`: a number, or an expression.
    pub bounds: [Result<f64, Located<Expr>>; 2],
    /// `random = "int"` (whole numbers, `min <= max`), else uniform (`min < max`).
    pub integers: bool,
    /// The buffer's element type, which must hold both.
    pub dtype: DType,
    /// Where the init was written.
    pub at: usize,
}

/// `BM * BN > 4096`: two expressions and how they compare.
#[derive(Debug, Clone)]
pub struct Condition {
    left: Expr,
    test: Test,
    right: Expr,
    /// Where the condition's text starts in the file.
    pub at: usize,
}

/// How the two sides of a condition compare.
type Test = fn(&i64, &i64) -> bool;

/// The comparisons a skip condition may use, two-character ones first.
const COMPARISONS: [(&str, Test); 6] = [
    ("<=", i64::le),
    (">=", i64::ge),
    ("==", i64::eq),
    ("!=", i64::ne),
    ("<", i64::lt),
    (">", i64::gt),
];

impl Condition {
    /// Parses `text`: an expression, a comparison, an expression; `at` is where the text starts.
    pub fn parse(text: &str, at: usize) -> Result<Condition, ExprError> {
        let found = (COMPARISONS.iter())
            .filter_map(|(c, test)| text.find(c).map(|i| (i, c.len(), *test)))
            .min_by_key(|(i, len, _)| (*i, std::cmp::Reverse(*len)));
        let Some((i, len, test)) = found else {
            return err(0, "a skip condition compares two expressions with <, <=, >, >=, == or != (as in `BM * BN > 4096`)");
        };
        let side = |from: usize, s: &str| {
            Expr::parse(s).map_err(|e| ExprError {
                offset: from + e.offset,
                message: e.message,
            })
        };
        Ok(Condition {
            left: side(0, &text[..i])?,
            test,
            right: side(i + len, &text[i + len..])?,
            at,
        })
    }

    /// The names both sides read, with their offsets in the condition's text.
    pub fn names(&self) -> Vec<(&str, usize)> {
        let mut names = self.left.names();
        names.extend(self.right.names());
        names
    }

    /// Whether the condition holds for these values.
    pub fn holds(&self, values: &BTreeMap<String, i64>) -> Result<bool, ExprError> {
        let (left, right) = (self.left.eval(values)?, self.right.eval(values)?);
        Ok((self.test)(&left, &right))
    }
}
