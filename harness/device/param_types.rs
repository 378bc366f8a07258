//! `param_types`: each entry's parameter types as the compiler resolves them — typedefs,
//! `using` aliases, macros, template arguments, `long` on the target — read by compiling the
//! source with a generated query appended (NVRTC to PTX only, the suite's own options and
//! include folders), through the compile cache.

use super::compile::{self, CompileError, CompileRequest};
use std::path::Path;

/// One parameter's type as compiled: its base type's code, and whether it is a pointer (to
/// `const`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamType(u32);

impl ParamType {
    /// Whether the parameter is a pointer.
    pub fn pointer(self) -> bool {
        self.0 & 0x100 != 0
    }

    /// Whether it points to `const` elements.
    pub fn const_pointee(self) -> bool {
        self.0 & 0x200 != 0
    }

    /// The C name of the type (of the pointee, for a pointer), as `signature` reads names;
    /// `None` for one kernelgate has no name for (a struct, `float4`, a pointer to a pointer).
    pub fn name(self) -> Option<&'static str> {
        if self.0 & 0x400 != 0 {
            return None;
        }
        // Integers are coded by signedness and size (`QUERY`), so `long` is what the target
        // makes of it.
        Some(match self.0 & 0xff {
            1 => "float",
            2 => "double",
            3 => "__half",
            4 => "__nv_bfloat16",
            6 => "void",
            0x11 => "signed char",
            0x12 => "short",
            0x14 => "int",
            0x18 => "long long",
            0x21 => "unsigned char",
            0x22 => "unsigned short",
            0x24 => "unsigned int",
            0x28 => "unsigned long long",
            _ => return None,
        })
    }
}

/// The query's fixed part: `arg<T>::value` codes a parameter type, `sig<F>::c` holds a
/// function pointer type's parameter count and codes.
const QUERY: &str = include_str!("param_types.cu");

/// The query for `entries` (each a C++ expression naming the function, and how many parameters
/// the source shows), to append to the source.
fn query(entries: &[(String, usize)]) -> String {
    let mut out = format!("\n{QUERY}");
    for (i, (entry, params)) in entries.iter().enumerate() {
        let s = format!("kernelgate_query::sig<decltype(&{entry})>");
        let codes: Vec<String> = (0..*params)
            .map(|p| format!("({p} < {s}::n ? {s}::c[{}] : ~0u)", p + 1))
            .collect();
        out.push_str(&format!(
            "extern \"C\" __device__ unsigned kernelgate_params_{i}[] = {{{s}::n, {}}};\n",
            codes.join(", ")
        ));
    }
    out
}

/// The array `name`'s words in `ptx` (`.b8` bytes, trailing zeros left out, or `.u32` words).
fn words(ptx: &str, name: &str) -> Option<Vec<u32>> {
    let line = ptx.lines().find(|l| l.contains(&format!(" {name}[")))?;
    let len: usize = line.split_once('[')?.1.split_once(']')?.0.parse().ok()?;
    let values = line.split_once('{')?.1.split_once('}')?.0;
    let values: Vec<u32> = values
        .split(',')
        .map(|v| v.trim().parse().ok())
        .collect::<Option<_>>()?;
    if line.contains(".u32") {
        return Some(values);
    }
    let mut bytes: Vec<u8> = values.into_iter().map(|v| v as u8).collect();
    bytes.resize(len, 0);
    Some(
        bytes
            .chunks_exact(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect(),
    )
}

/// Each of `entries`' parameter types (as many as the source shows; `None` past what the
/// compiled function has), compiling `req`'s source with the query for `arch`'s virtual
/// architecture — by NVRTC, or by nvcc for a source with host code (`None`: no nvcc here) —
/// through the cache in `cache_dir`.
pub fn param_types(
    req: &CompileRequest,
    entries: &[(String, usize)],
    nvcc: bool,
    cache_dir: Option<&Path>,
) -> Option<Result<Vec<Vec<Option<ParamType>>>, CompileError>> {
    let appended = query(entries);
    let text = format!("{}{appended}", req.text);
    let arch = req.arch.replacen("sm_", "compute_", 1);
    let req = CompileRequest {
        text: &text,
        entries: &[],
        arch: &arch,
        ..*req
    };
    // NVRTC is asked only for a source it compiles: a host-code source is lint's even where
    // no NVRTC loads (asking one that is not there panics inside cudarc).
    let compiler = match nvcc {
        true => format!("params nvcc {}", super::nvcc::nvcc()?.1),
        false => match compile::nvrtc_version() {
            Ok(v) => format!("params {}.{}", v.0, v.1),
            Err(e) => return Some(Err(e)),
        },
    };
    let name = format!("{}.params.json", compile::cache_key(&req, &compiler));
    let cached = cache_dir.and_then(|d| std::fs::read(d.join(&name)).ok());
    let all: Vec<Vec<u32>> = match cached.and_then(|b| serde_json::from_slice(&b).ok()) {
        Some(all) => all,
        None => {
            let ptx = match nvcc {
                // nvcc reads the source where it is, with the query in a file beside it.
                true => super::nvcc::ptx_with(&CompileRequest { text: "", ..req }, &appended)?,
                false => compile::program(&req).and_then(|(program, _, _)| compile::ptx(&program)),
            };
            let ptx = match ptx {
                Ok(ptx) => ptx,
                Err(e) => return Some(Err(e)),
            };
            let all: Vec<Vec<u32>> = (0..entries.len())
                .map(|i| words(&ptx, &format!("kernelgate_params_{i}")).unwrap_or_default())
                .collect();
            if let (Some(dir), Ok(json)) = (cache_dir, serde_json::to_vec(&all)) {
                // A cache that cannot be written costs time, not correctness.
                let _ = compile::put(dir, &name, &json);
            }
            all
        }
    };
    Some(Ok(all
        .iter()
        .zip(entries)
        .map(|(w, (_, params))| {
            let n = w.first().copied().unwrap_or(0) as usize;
            (0..*params)
                .map(|p| (p < n).then(|| ParamType(w[p + 1])))
                .collect()
        })
        .collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptx_arrays_are_read_as_words() {
        let ptx = ".global .align 4 .b8 kernelgate_params_0[12] = {2, 0, 0, 0, 4, 3, 0, 0, 24};\n\
                   .global .align 4 .u32 kernelgate_params_1[1] = {0};";
        assert_eq!(words(ptx, "kernelgate_params_0"), Some(vec![2, 0x304, 24]));
        assert_eq!(words(ptx, "kernelgate_params_1"), Some(vec![0]));
        assert_eq!(words(ptx, "kernelgate_params_2"), None);
        let t = ParamType(0x304);
        assert!(t.pointer() && t.const_pointee());
        assert_eq!(t.name(), Some("__nv_bfloat16"));
        assert_eq!(ParamType(0x18).name(), Some("long long"));
        assert_eq!(ParamType(0x500).name(), None);
    }

    /// Asks the NVRTC here (`--include-ignored`, with libnvrtc on the library path).
    #[test]
    #[ignore = "needs NVRTC"]
    fn the_compiler_resolves_typedefs_aliases_macros_and_long() {
        let text = "#include <cuda_bf16.h>\ntypedef __nv_bfloat16 floatX;\nusing idx = long;\n\
            #define REAL float\ntypedef float* fptr;\n\
            extern \"C\" __global__ void k(floatX* o, const floatX* __restrict__ i, idx n, REAL a, fptr p, float4* v) {}\n\
            template <typename T> __global__ void t(T* o) {}\n";
        let req = CompileRequest {
            path: Path::new("k.cu"),
            text,
            include_dirs: &[],
            options: &[],
            entries: &[],
            arch: "sm_90",
        };
        let entries = [("k".to_string(), 6), ("t<floatX>".to_string(), 2)];
        let got = param_types(&req, &entries, false, None).unwrap().unwrap();
        let names: Vec<_> = got[0].iter().map(|t| t.and_then(|t| t.name())).collect();
        assert_eq!(
            names,
            [
                Some("__nv_bfloat16"),
                Some("__nv_bfloat16"),
                Some("long long"),
                Some("float"),
                Some("float"),
                None
            ]
        );
        let k = &got[0];
        assert!(k[0].unwrap().pointer() && !k[0].unwrap().const_pointee());
        assert!(k[1].unwrap().const_pointee() && !k[2].unwrap().pointer());
        assert!(k[4].unwrap().pointer() && k[5].unwrap().pointer());
        assert_eq!(got[1][0].and_then(|t| t.name()), Some("__nv_bfloat16"));
        assert_eq!(got[1][1], None);
    }
}
