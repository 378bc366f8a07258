//! `Ptx`: what kernelgate reads from PTX text — its entries, each with its `.param` list and
//! its instruction mix (double-precision instructions, counted statically).
//!
//! What counts as an FP64 instruction: an instruction whose type suffixes include `.f64` and
//! that computes — arithmetic (`add`, `fma.rn`, `mul`, `div.rn`, `sqrt`, ...), comparisons
//! (`setp.lt.f64`), atomics and reductions (`atom.add.f64`), and **conversions** to or from
//! double (`cvt.f64.f32`, `cvt.rn.f32.f64`): conversions run on the FP64 units, and a stray
//! `double` accumulator shows up first as a pair of them. Moving data is not counted
//! (`ld`, `st`, `mov`, `selp`, ...: `ld.param.f64` only passes a `double` argument).
//! The count is static (instructions in the code, not executed), and includes the bodies of
//! the `.func`s an entry calls, transitively.

use std::collections::BTreeMap;

/// Opcodes that move `.f64` data without computing on it.
const MOVES: [&str; 9] = [
    "ld", "ldu", "st", "mov", "selp", "shfl", "prmt", "cvta", "tex",
];

/// One function of a PTX module.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PtxFunction {
    /// Whether it is an `.entry` (a kernel) rather than a `.func`.
    pub entry: bool,
    /// The `.param`s, in order.
    pub params: Vec<PtxParam>,
    /// FP64 instructions in its own body.
    pub fp64: u64,
    /// The first of them, as written.
    pub fp64_example: Option<String>,
    /// The functions it calls.
    pub calls: Vec<String>,
    /// Its lines in the PTX text (0-based, as `str::lines` numbers them): the header to the
    /// closing brace.
    pub lines: std::ops::Range<usize>,
}

/// One `.param` of a PTX function.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PtxParam {
    /// Its type: `u64`, `f32`, `b8` (a byte array, as for `__half` or a struct), ...
    pub ty: String,
    /// Its size in bytes (the element size times the array length, if any).
    pub bytes: usize,
}

/// A kernel's FP64 use: the count and the first instruction, with what its calls add.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Fp64Use {
    /// FP64 instructions (static count).
    pub count: u64,
    /// The first one, e.g. `fma.rn.f64 %fd3, %fd2, %fd1, 0d3FF0000000000000;`.
    pub example: Option<String>,
}

/// Every function of a PTX module, by (mangled) name.
pub fn parse(ptx: &str) -> BTreeMap<String, PtxFunction> {
    let mut out = BTreeMap::new();
    let mut current: Option<(String, PtxFunction)> = None;
    let mut depth = 0i32;
    // Whether the current function's body has begun (its `{` seen).
    let mut opened = false;
    for (number, raw) in ptx.lines().enumerate() {
        let line = raw.split("//").next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if current.is_none() {
            let is_entry = line.contains(".entry ");
            if is_entry || line.contains(".func ") {
                let head = line.split('(').next().unwrap_or(line);
                // `.func (.param .b32 ret) name(` puts the return value first.
                let head = if head.trim_end().ends_with(".func") {
                    line.split(')')
                        .nth(1)
                        .unwrap_or("")
                        .split('(')
                        .next()
                        .unwrap_or("")
                } else {
                    head
                };
                let name = head.split_whitespace().last().unwrap_or("").to_string();
                let f = PtxFunction {
                    entry: is_entry,
                    lines: number..number + 1,
                    ..PtxFunction::default()
                };
                current = (!line.ends_with(';')).then_some((name, f));
                (depth, opened) = (0, false);
            }
            continue;
        }
        let Some((_, f)) = current.as_mut() else {
            continue;
        };
        if !opened {
            if let Some(rest) = line.strip_prefix(".param") {
                // `.param .u64 k_param_0,` or `.param .align 8 .b8 k_param_1[16]`
                const QUALIFIERS: [&str; 6] =
                    ["align", "ptr", "global", "const", "local", "shared"];
                let ty = rest
                    .split_whitespace()
                    .filter_map(|t| t.strip_prefix('.'))
                    .rfind(|t| !QUALIFIERS.contains(t))
                    .unwrap_or("")
                    .to_string();
                let width: usize = ty[1..].parse::<usize>().unwrap_or(0) / 8;
                let count: usize = rest
                    .split_once('[')
                    .and_then(|(_, n)| n.split(']').next()?.trim().parse().ok())
                    .unwrap_or(1);
                f.params.push(PtxParam {
                    bytes: width * count,
                    ty,
                });
            }
            if !line.contains('{') {
                if line.ends_with(';') {
                    // A declaration (prototype), not a definition.
                    current = None;
                }
                continue;
            }
            opened = true;
        }
        depth += line.matches('{').count() as i32;
        depth -= line.matches('}').count() as i32;
        if let Some(callee) = call_target(line) {
            if !f.calls.contains(&callee) {
                f.calls.push(callee);
            }
        } else if is_fp64(line) {
            f.fp64 += 1;
            let words = || line.split_whitespace().collect::<Vec<_>>().join(" ");
            f.fp64_example.get_or_insert_with(words);
        }
        if depth <= 0 && line.contains('}') {
            let (name, mut f) = current.take().expect("inside a function");
            f.lines.end = number + 1;
            out.insert(name, f);
            depth = 0;
        }
    }
    out
}

/// The callee of a `call` instruction.
fn call_target(line: &str) -> Option<String> {
    let line = strip_predicate(line);
    if !(line.starts_with("call ") || line.starts_with("call.")) {
        return None;
    }
    let rest = line.split_once(char::is_whitespace)?.1;
    // `call.uni (retval0), name, (param0);` or `call.uni name, (...);`
    let rest = if rest.trim_start().starts_with('(') {
        rest.split_once(',')?.1
    } else {
        rest
    };
    let name = rest.trim().split([',', ';', ' ']).next()?.trim();
    (!name.is_empty()).then(|| name.to_string())
}

fn strip_predicate(line: &str) -> &str {
    match line.strip_prefix('@') {
        Some(rest) => rest
            .split_once(char::is_whitespace)
            .map_or("", |r| r.1)
            .trim(),
        None => line,
    }
}

/// Whether an instruction line computes on doubles (see the module's documentation).
fn is_fp64(line: &str) -> bool {
    let line = strip_predicate(line);
    if line.starts_with('.') || line.ends_with(':') || line.starts_with('{') {
        return false;
    }
    let opcode = line.split_whitespace().next().unwrap_or("");
    let mut parts = opcode.split('.');
    let op = parts.next().unwrap_or("");
    !MOVES.contains(&op) && parts.any(|p| p == "f64")
}

/// `entry`'s FP64 use, with every `.func` it reaches through calls; `None` when the module has
/// no such function.
pub fn fp64_use(functions: &BTreeMap<String, PtxFunction>, entry: &str) -> Option<Fp64Use> {
    functions.get(entry)?;
    let mut seen = std::collections::BTreeSet::new();
    let mut stack = vec![entry];
    let mut total = Fp64Use::default();
    while let Some(name) = stack.pop() {
        let Some(f) = functions.get(name).filter(|_| seen.insert(name)) else {
            continue;
        };
        total.count += f.fp64;
        total.example = total.example.take().or_else(|| f.fp64_example.clone());
        stack.extend(f.calls.iter().map(String::as_str));
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NVRTC 13.0's PTX for
    /// `k(float* x, double d) { double a = x[0]; x[0] = (float)(a*d + 1.0); }`.
    const NVRTC_PTX: &str = "
.version 9.0
.target sm_90
.address_size 64

	// .globl	k

.visible .entry k(
	.param .u64 k_param_0,
	.param .f64 k_param_1
)
{
	.reg .f32 	%f<3>;
	.reg .f64 	%fd<4>;
	.reg .b64 	%rd<3>;


	ld.param.u64 	%rd1, [k_param_0];
	ld.param.f64 	%fd1, [k_param_1];
	cvta.to.global.u64 	%rd2, %rd1;
	ld.global.f32 	%f1, [%rd2];
	cvt.f64.f32 	%fd2, %f1;
	fma.rn.f64 	%fd3, %fd2, %fd1, 0d3FF0000000000000;
	cvt.rn.f32.f64 	%f2, %fd3;
	st.global.f32 	[%rd2], %f2;
	ret;

}
";

    #[test]
    fn counts_conversions_and_arithmetic_not_loads() {
        let fs = parse(NVRTC_PTX);
        let k = &fs["k"];
        assert!(k.entry);
        let types: Vec<(&str, usize)> = k.params.iter().map(|p| (p.ty.as_str(), p.bytes)).collect();
        assert_eq!(types, vec![("u64", 8), ("f64", 8)]);
        assert_eq!(k.fp64, 3, "cvt.f64.f32, fma.rn.f64, cvt.rn.f32.f64");
        assert_eq!(k.fp64_example.as_deref(), Some("cvt.f64.f32 %fd2, %f1;"));
    }

    #[test]
    fn a_called_function_counts_for_its_callers() {
        let ptx = "
.extern .func  (.param .b32 func_retval0) vprintf
(
	.param .b64 vprintf_param_0,
	.param .b64 vprintf_param_1
)
;
.func  (.param .b64 func_retval0) helper(
	.param .b64 helper_param_0
)
{
	@%p1 add.f64 	%fd2, %fd1, %fd1;
	setp.lt.f64 	%p2, %fd2, 0d0000000000000000;
	ret;
}
.visible .entry single(
	.param .u64 single_param_0,
	.param .align 8 .b8 single_param_1[16],
	.param .f32 single_param_2
)
{
	add.f32 	%f2, %f1, %f1;
	mul.wide.s32 	%rd3, %r1, 4;
	{ // callseq 0, 0
	call.uni (retval0), helper, (param0);
	} // callseq 0
	ret;
}
";
        let fs = parse(ptx);
        let types: Vec<(&str, usize)> = fs["single"]
            .params
            .iter()
            .map(|p| (p.ty.as_str(), p.bytes))
            .collect();
        assert_eq!(types, vec![("u64", 8), ("b8", 16), ("f32", 4)]);
        assert_eq!(fs["single"].fp64, 0);
        assert_eq!(fs["single"].calls, vec!["helper"]);
        assert!(!fs["helper"].entry);
        assert!(!fs.contains_key("vprintf"), "a prototype is not a function");
        let used = fp64_use(&fs, "single").unwrap();
        assert_eq!(used.count, 2);
        assert_eq!(
            used.example.as_deref(),
            Some("@%p1 add.f64 %fd2, %fd1, %fd1;")
        );
        assert_eq!(fp64_use(&fs, "missing"), None);
    }
}
