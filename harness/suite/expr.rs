//! `Expr`: integer expressions over size names, as written in suite files.
//!
//! Grammar (all arithmetic on `i64`, checked for overflow):
//!
//! ```text
//! expr    := term (('+' | '-') term)*
//! term    := unary (('*' | '/' | '%') unary)*
//! unary   := '-' unary | atom
//! atom    := INT | NAME | '(' expr ')' | CALL
//! CALL    := 'ceil_div(' expr ',' expr ')' | 'ceil(' expr '/' expr ')'
//!          | 'min(' expr (',' expr)+ ')' | 'max(' expr (',' expr)+ ')'
//! ```
//!
//! `/` truncates toward zero; `ceil(a / b)` and `ceil_div(a, b)` round up.

use std::collections::BTreeMap;

/// A parsed integer expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// An integer literal.
    Int(i64),
    /// A size name, with its byte offset in the source text.
    Name(String, usize),
    /// Negation.
    Neg(Box<Expr>),
    /// A binary operation, with the operator's byte offset.
    Bin(Op, Box<Expr>, Box<Expr>, usize),
    /// `ceil_div(a, b)`.
    CeilDiv(Box<Expr>, Box<Expr>, usize),
    /// `min(..)`.
    Min(Vec<Expr>),
    /// `max(..)`.
    Max(Vec<Expr>),
}

/// A binary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (truncating)
    Div,
    /// `%`
    Rem,
}

/// An error in an expression: what went wrong, and where in the text (byte offset).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ExprError {
    /// Byte offset into the expression text.
    pub offset: usize,
    /// What went wrong, and what to write instead.
    pub message: String,
}

/// An `ExprError` at `offset`, as a `Result`.
pub(super) fn err<T>(offset: usize, message: impl Into<String>) -> Result<T, ExprError> {
    Err(ExprError {
        offset,
        message: message.into(),
    })
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Int(i64),
    Name(String),
    Sym(char),
}

fn lex(text: &str) -> Result<Vec<(Tok, usize)>, ExprError> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i] as char;
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'_') {
                i += 1;
            }
            let digits: String = text[start..i].chars().filter(|c| *c != '_').collect();
            let value = digits.parse::<i64>().or_else(|_| {
                err(
                    start,
                    format!("integer `{}` does not fit in 64 bits", &text[start..i]),
                )
            })?;
            if i < bytes.len() && (bytes[i].is_ascii_alphabetic() || bytes[i] == b'.') {
                return err(
                    i,
                    format!(
                        "unexpected `{}` after a number (size expressions are integers: write e.g. `4 * n`)",
                        bytes[i] as char
                    ),
                );
            }
            out.push((Tok::Int(value), start));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            out.push((Tok::Name(text[start..i].to_string()), start));
        } else if "+-*/%(),".contains(c) {
            out.push((Tok::Sym(c), i));
            i += 1;
        } else {
            let ch = text[i..].chars().next().unwrap_or('?');
            return err(
                i,
                format!("unexpected `{ch}` (expressions use + - * / %, ceil_div, min, max and parentheses)"),
            );
        }
    }
    Ok(out)
}

/// How deeply expressions may nest (parentheses, calls, unary minus). Real launch shapes nest
/// two or three levels; without a limit, ~7,800 parentheses overflowed the stack (SIGABRT).
pub const MAX_DEPTH: usize = 64;

struct Parser {
    toks: Vec<(Tok, usize)>,
    pos: usize,
    end: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|(t, _)| t)
    }
    fn offset(&self) -> usize {
        self.toks.get(self.pos).map(|(_, o)| *o).unwrap_or(self.end)
    }
    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(&Tok::Sym(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, c: char) -> Result<(), ExprError> {
        if self.eat(c) {
            Ok(())
        } else {
            err(self.offset(), format!("expected `{c}` here"))
        }
    }

    fn expr(&mut self) -> Result<Expr, ExprError> {
        self.binary(&[('+', Op::Add), ('-', Op::Sub)], Self::term)
    }

    fn term(&mut self) -> Result<Expr, ExprError> {
        self.binary(
            &[('*', Op::Mul), ('/', Op::Div), ('%', Op::Rem)],
            Self::unary,
        )
    }

    /// Operands read by `operand`, joined left to right by the operators of `ops`.
    fn binary(
        &mut self,
        ops: &[(char, Op)],
        operand: fn(&mut Self) -> Result<Expr, ExprError>,
    ) -> Result<Expr, ExprError> {
        let mut lhs = operand(self)?;
        loop {
            let at = self.offset();
            let Some(&(_, op)) = ops.iter().find(|(c, _)| self.peek() == Some(&Tok::Sym(*c)))
            else {
                return Ok(lhs);
            };
            self.pos += 1;
            let rhs = operand(self)?;
            lhs = Expr::Bin(op, Box::new(lhs), Box::new(rhs), at);
        }
    }

    fn unary(&mut self) -> Result<Expr, ExprError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return err(
                self.offset(),
                format!("expression nested more than {MAX_DEPTH} levels deep (split it, or remove redundant parentheses)"),
            );
        }
        let e = if self.eat('-') {
            Expr::Neg(Box::new(self.unary()?))
        } else {
            self.atom()?
        };
        self.depth -= 1;
        Ok(e)
    }

    fn args(&mut self) -> Result<Vec<Expr>, ExprError> {
        self.expect('(')?;
        let mut args = vec![self.expr()?];
        while self.eat(',') {
            args.push(self.expr()?);
        }
        self.expect(')')?;
        Ok(args)
    }

    fn atom(&mut self) -> Result<Expr, ExprError> {
        let at = self.offset();
        // Past the token: what does not start an operand is an error, which ends the parse.
        self.pos += 1;
        match self.toks.get(self.pos - 1).cloned() {
            Some((Tok::Int(v), _)) => Ok(Expr::Int(v)),
            Some((Tok::Sym('('), _)) => {
                let e = self.expr()?;
                self.expect(')')?;
                Ok(e)
            }
            Some((Tok::Name(name), _)) => {
                if self.peek() != Some(&Tok::Sym('(')) {
                    return Ok(Expr::Name(name, at));
                }
                let mut args = self.args()?;
                match (name.as_str(), args.len()) {
                    ("ceil_div", 2) => {
                        let b = args.pop().expect("two args");
                        let a = args.pop().expect("two args");
                        Ok(Expr::CeilDiv(Box::new(a), Box::new(b), at))
                    }
                    ("ceil", 1) => match args.pop().expect("one arg") {
                        Expr::Bin(Op::Div, a, b, _) => Ok(Expr::CeilDiv(a, b, at)),
                        _ => err(at, "`ceil` takes a division, as in `ceil(n / 256)`"),
                    },
                    ("min", n) if n >= 2 => Ok(Expr::Min(args)),
                    ("max", n) if n >= 2 => Ok(Expr::Max(args)),
                    ("ceil_div", n) => err(at, format!("`ceil_div` takes 2 arguments, not {n}")),
                    ("ceil", n) => {
                        err(at, format!("`ceil` takes 1 argument (a division), not {n}"))
                    }
                    ("min" | "max", _) => err(at, format!("`{name}` takes 2 or more arguments")),
                    _ => err(
                        at,
                        format!("unknown function `{name}` (use ceil_div, ceil, min or max)"),
                    ),
                }
            }
            Some((Tok::Sym(c), _)) => err(
                at,
                format!("expected a number, a size name or `(`, found `{c}`"),
            ),
            None => err(at, "expression ends too early"),
        }
    }
}

impl Expr {
    /// Parses `text`; errors carry a byte offset into it.
    pub fn parse(text: &str) -> Result<Expr, ExprError> {
        let toks = lex(text)?;
        if toks.is_empty() {
            return err(0, "empty expression (write a number or a size name)");
        }
        let mut p = Parser {
            toks,
            pos: 0,
            end: text.len(),
            depth: 0,
        };
        let e = p.expr()?;
        if p.pos != p.toks.len() {
            return err(p.offset(), "unexpected text after the expression");
        }
        Ok(e)
    }

    /// The size names this expression uses, with their offsets.
    pub fn names(&self) -> Vec<(&str, usize)> {
        let mut out = Vec::new();
        self.collect_names(&mut out);
        out
    }

    fn collect_names<'a>(&'a self, out: &mut Vec<(&'a str, usize)>) {
        match self {
            Expr::Int(_) => {}
            Expr::Name(n, at) => out.push((n, *at)),
            Expr::Neg(e) => e.collect_names(out),
            Expr::Bin(_, a, b, _) | Expr::CeilDiv(a, b, _) => {
                a.collect_names(out);
                b.collect_names(out);
            }
            Expr::Min(v) | Expr::Max(v) => v.iter().for_each(|e| e.collect_names(out)),
        }
    }

    /// Evaluates with the given size values.
    pub fn eval(&self, sizes: &BTreeMap<String, i64>) -> Result<i64, ExprError> {
        let overflow = |at: usize| ExprError {
            offset: at,
            message: "integer overflow".into(),
        };
        match self {
            Expr::Int(v) => Ok(*v),
            // Unreachable from a suite: the loader checks every name against the sizes, axes and
            // device attributes it evaluates with (`ctx::expr`, `args::parse`, skip conditions).
            Expr::Name(n, at) => sizes.get(n).copied().ok_or_else(|| ExprError {
                offset: *at,
                message: format!("unknown size `{n}`"),
            }),
            Expr::Neg(e) => e.eval(sizes)?.checked_neg().ok_or_else(|| overflow(0)),
            Expr::Bin(op, a, b, at) => {
                let (a, b) = (a.eval(sizes)?, b.eval(sizes)?);
                let r = match op {
                    Op::Add => a.checked_add(b),
                    Op::Sub => a.checked_sub(b),
                    Op::Mul => a.checked_mul(b),
                    Op::Div | Op::Rem if b == 0 => {
                        return err(*at, "division by zero");
                    }
                    Op::Div => a.checked_div(b),
                    Op::Rem => a.checked_rem(b),
                };
                r.ok_or_else(|| overflow(*at))
            }
            Expr::CeilDiv(a, b, at) => {
                let (a, b) = (a.eval(sizes)?, b.eval(sizes)?);
                if b == 0 {
                    return err(*at, "division by zero");
                }
                let q = a.checked_div(b).ok_or_else(|| overflow(*at))?;
                let rounds_up = (a % b != 0) && ((a < 0) == (b < 0));
                Ok(if rounds_up { q + 1 } else { q })
            }
            Expr::Min(v) => fold(v, sizes, i64::min),
            Expr::Max(v) => fold(v, sizes, i64::max),
        }
    }
}

fn fold(
    v: &[Expr],
    sizes: &BTreeMap<String, i64>,
    f: fn(i64, i64) -> i64,
) -> Result<i64, ExprError> {
    (v[1..].iter()).try_fold(v[0].eval(sizes)?, |acc, e| Ok(f(acc, e.eval(sizes)?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(text: &str, sizes: &[(&str, i64)]) -> Result<i64, ExprError> {
        let sizes = sizes.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        Expr::parse(text)?.eval(&sizes)
    }

    #[test]
    fn precedence_and_parentheses() {
        assert_eq!(eval("1 + 2 * 3", &[]), Ok(7));
        assert_eq!(eval("(1 + 2) * 3", &[]), Ok(9));
        assert_eq!(eval("10 - 4 - 3", &[]), Ok(3));
        assert_eq!(eval("17 % 5 * 2", &[]), Ok(4));
        assert_eq!(eval("-3 + 5", &[]), Ok(2));
        assert_eq!(eval("1_048_576", &[]), Ok(1 << 20));
    }

    #[test]
    fn ceil_division_min_max() {
        assert_eq!(eval("ceil(n / 256)", &[("n", 4097)]), Ok(17));
        assert_eq!(eval("ceil(n / 256)", &[("n", 4096)]), Ok(16));
        assert_eq!(eval("ceil_div(n, 3)", &[("n", 7)]), Ok(3));
        assert_eq!(eval("ceil_div(-7, 2)", &[]), Ok(-3));
        assert_eq!(eval("min(n, 64, m)", &[("n", 100), ("m", 70)]), Ok(64));
        assert_eq!(eval("max(n, 2 * m)", &[("n", 100), ("m", 70)]), Ok(140));
        assert_eq!(eval("3 * 4 * n", &[("n", 5)]), Ok(60));
    }

    #[test]
    fn errors_point_at_the_problem() {
        let e = eval("n + q", &[("n", 1)]).unwrap_err();
        assert_eq!(e.offset, 4);
        assert!(e.message.contains("unknown size `q`"), "{}", e.message);

        let e = eval("n / (n - n)", &[("n", 3)]).unwrap_err();
        assert_eq!(e.message, "division by zero");
        assert_eq!(e.offset, 2);

        let e = Expr::parse("ceil(n)").unwrap_err();
        assert!(e.message.contains("ceil(n / 256)"));

        let e = Expr::parse("n +").unwrap_err();
        assert_eq!(e.message, "expression ends too early");
        assert_eq!(e.offset, 3);

        let e = Expr::parse("sqrt(n)").unwrap_err();
        assert!(e.message.contains("unknown function `sqrt`"));

        let e = Expr::parse("2.5 * n").unwrap_err();
        assert_eq!(e.offset, 1);

        let e = Expr::parse("n ^ 2").unwrap_err();
        assert_eq!(e.offset, 2);

        let e = Expr::parse("(n + 1").unwrap_err();
        assert_eq!(e.message, "expected `)` here");
        assert!(Expr::parse("").is_err());
        assert!(Expr::parse("n n").is_err());
        assert!(Expr::parse("min(n)").is_err());
    }

    #[test]
    fn overflow_is_an_error_not_a_panic() {
        let e = eval("n * n", &[("n", i64::MAX / 2)]).unwrap_err();
        assert_eq!(e.message, "integer overflow");
        assert!(Expr::parse("99999999999999999999").is_err());
        assert!(eval("-9223372036854775807 - 2", &[]).is_err());
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let deep = format!("{}n{}", "(".repeat(7800), ")".repeat(7800));
        let e = Expr::parse(&deep).unwrap_err();
        assert!(e.message.contains("nested more than 64"), "{}", e.message);
        assert_eq!(
            e.offset, MAX_DEPTH,
            "at the first parenthesis past the limit"
        );
        assert!(Expr::parse(&"-".repeat(100_000)).is_err());
        let ok = format!("{}n{}", "(".repeat(40), ")".repeat(40));
        assert!(Expr::parse(&ok).is_ok());
    }

    #[test]
    fn names_are_collected() {
        let e = Expr::parse("ceil(m * n / 4) + k").unwrap();
        let names: Vec<_> = e.names().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["m", "n", "k"]);
    }
}
