//! Phase `bench_table`: the `[bench]` table — samples and time per trial, the precision target,
//! `max_slowdown` and `memory_growth` as percentages, and the `bytes`/`flops` expressions.

use super::ctx::{expr, Ctx};
use super::decls::Located;
use super::expr::Expr;
use super::schema::RawBench;
use super::{Bench, Flush};
use toml::Spanned;

/// Samples always taken per kernel (defaults documented in docs/suites.md).
pub const DEFAULT_MIN_SAMPLES: usize = 10;
/// Samples never exceeded per kernel.
pub const DEFAULT_MAX_SAMPLES: usize = 2000;
/// Sampling time floor per trial.
pub const DEFAULT_MIN_TIME_MS: u64 = 5;
/// Sampling time cap per trial.
pub const DEFAULT_MAX_TIME_MS: u64 = 1000;
/// Without a `precision`, the target relative half-width of the median's 95% interval is this
/// fraction of `max_slowdown`: 1% at the default 3%. The gate's interval for a change (the
/// difference of two medians) is then about half `max_slowdown` wide, so a slowdown of twice
/// `max_slowdown` clears it; a finer target would only buy samples the decision does not use
/// (tested with the timing loop's stopping rule and the gate on synthetic samples:
/// `measure::stop`'s sensitivity test).
pub const PRECISION_OF_MAX_SLOWDOWN: f64 = 1.0 / 3.0;
/// The smallest slowdown that fails a trial: changes smaller than 3% are not regressions.
pub const DEFAULT_MAX_SLOWDOWN: f64 = 0.03;

/// The timing settings, and the `bytes` and `flops` expressions (for rates) when given.
pub(super) type BenchParts = (Bench, Option<Located<Expr>>, Option<Located<Expr>>);

/// Reads `[bench]`; `sizes` are the names its expressions may use. Errors are recorded.
pub(super) fn bench_table(
    ctx: &mut Ctx,
    raw: Option<&Spanned<RawBench>>,
    sizes: &[String],
) -> BenchParts {
    let mut bench = Bench {
        l2_flush: Flush::Write,
        min_samples: DEFAULT_MIN_SAMPLES,
        max_samples: DEFAULT_MAX_SAMPLES,
        min_time_ms: DEFAULT_MIN_TIME_MS,
        max_time_ms: DEFAULT_MAX_TIME_MS,
        precision: DEFAULT_MAX_SLOWDOWN * PRECISION_OF_MAX_SLOWDOWN,
        max_slowdown: DEFAULT_MAX_SLOWDOWN,
        memory_growth: 0.0,
        max_instruction_growth: None,
        max_dram_read_growth: None,
        flops_type: None,
    };
    let Some(rb) = raw.map(|r| r.get_ref()) else {
        return (bench, None, None);
    };
    if let Some(f) = &rb.l2_flush {
        match Flush::try_from(f.get_ref().clone()) {
            Ok(flush) => bench.l2_flush = flush,
            Err(e) => ctx.error(f.span().start, e.to_string()),
        }
    }
    samples_and_time(ctx, rb, &mut bench);
    percentages(ctx, rb, &mut bench);
    let bytes = rb.bytes.as_ref().and_then(|b| expr(ctx, b, sizes));
    let flops = rb.flops.as_ref().and_then(|f| expr(ctx, f, sizes));
    if let Some(t) = &rb.flops_type {
        let names = crate::dtype::FlopKind::ALL.map(|k| k.name());
        bench.flops_type = crate::dtype::FlopKind::parse(t.get_ref());
        if bench.flops_type.is_none() {
            let hint = crate::suggest::did_you_mean(t.get_ref(), names.iter().map(String::as_str));
            ctx.error(
                t.span().start,
                format!(
                    "unknown flops_type `{}`{hint} (one of {})",
                    t.get_ref(),
                    names.join(", ")
                ),
            );
        } else if rb.flops.is_none() {
            ctx.error(
                t.span().start,
                "`flops_type` says what `flops` counts: declare `flops` too",
            );
        }
    }
    (bench, bytes, flops)
}

/// `min_samples`, `max_samples`, `min_time_ms`, `max_time_ms`: each bound above the other.
fn samples_and_time(ctx: &mut Ctx, rb: &RawBench, bench: &mut Bench) {
    if let Some(m) = &rb.min_samples {
        bench.min_samples = *m.get_ref();
        if bench.min_samples < 3 {
            ctx.error(m.span().start, "`min_samples` must be at least 3");
        }
    }
    if let Some(m) = &rb.max_samples {
        bench.max_samples = *m.get_ref();
        if bench.max_samples < bench.min_samples {
            ctx.error(
                m.span().start,
                format!(
                    "`max_samples` must be at least `min_samples` ({})",
                    bench.min_samples
                ),
            );
        }
    }
    // A minimum over the maximum left at its default is refused at the minimum, with the range.
    if let (Some(m), None) = (&rb.min_samples, &rb.max_samples) {
        if bench.min_samples > bench.max_samples {
            ctx.error(
                m.span().start,
                format!(
                    "`min_samples` {} is over `max_samples` ({}, the default): write 3 to {}, or raise `max_samples` too",
                    bench.min_samples, bench.max_samples, bench.max_samples
                ),
            );
        }
    }
    if let Some(m) = &rb.min_time_ms {
        bench.min_time_ms = *m.get_ref();
        if rb.max_time_ms.is_none() && bench.min_time_ms > bench.max_time_ms {
            ctx.error(
                m.span().start,
                format!(
                    "`min_time_ms` {} is over the time cap `max_time_ms` ({}, the default): write at most {}, or raise `max_time_ms` too",
                    bench.min_time_ms, bench.max_time_ms, bench.max_time_ms
                ),
            );
        }
    }
    if let Some(m) = &rb.max_time_ms {
        bench.max_time_ms = *m.get_ref();
        if bench.max_time_ms == 0 || bench.max_time_ms < bench.min_time_ms {
            ctx.error(
                m.span().start,
                format!(
                    "`max_time_ms` must be positive and at least `min_time_ms` ({})",
                    bench.min_time_ms
                ),
            );
        }
    }
}

/// `precision`, `max_slowdown`, `memory_growth`, written as percentages; the precision must be
/// finer than `max_slowdown`, or no slowdown that size could be told from noise.
fn percentages(ctx: &mut Ctx, rb: &RawBench, bench: &mut Bench) {
    // Each percentage read, or an error; `ctx` is lent to it until the last.
    let mut percent =
        |raw: &Option<Spanned<String>>, ok: fn(f64) -> bool, key: &str, example: &str| {
            let p = raw.as_ref()?;
            match parse_percent(p.get_ref()) {
                Some(v) if ok(v) => Some(v),
                _ => {
                    ctx.error(
                        p.span().start,
                        format!(
                            "bad {key} `{}` (write a percentage such as {example})",
                            p.get_ref()
                        ),
                    );
                    None
                }
            }
        };
    if let Some(v) = percent(
        &rb.precision,
        |v| v > 0.0 && v < 1.0,
        "precision",
        "\"0.5%\"",
    ) {
        bench.precision = v;
    }
    if let Some(v) = percent(
        &rb.max_slowdown,
        |v| v > 0.0 && v < 10.0,
        "max_slowdown",
        "\"3%\"",
    ) {
        bench.max_slowdown = v;
        if rb.precision.is_none() {
            bench.precision = v * PRECISION_OF_MAX_SLOWDOWN;
        }
    }
    if let Some(v) = percent(
        &rb.memory_growth,
        |v| v >= 0.0,
        "memory_growth",
        "\"0%\" or \"10%\"",
    ) {
        bench.memory_growth = v;
    }
    bench.max_instruction_growth = percent(
        &rb.max_instruction_growth,
        |v| v >= 0.0,
        "max_instruction_growth",
        "\"1%\"",
    );
    bench.max_dram_read_growth = percent(
        &rb.max_dram_read_growth,
        |v| v >= 0.0,
        "max_dram_read_growth",
        "\"2%\"",
    );
    if let Some(p) = rb
        .precision
        .as_ref()
        .filter(|_| bench.precision >= bench.max_slowdown)
    {
        ctx.error(p.span().start, format!("precision {} is not finer than max_slowdown {}: a slowdown that size could never be told from noise (make precision a fraction of max_slowdown, e.g. \"{}%\")", p.get_ref(), rb.max_slowdown.as_ref().map_or("3%".to_string(), |m| m.get_ref().clone()), bench.max_slowdown * 100.0 / 3.0));
    }
}

/// Parses `"2%"` as 0.02.
pub fn parse_percent(text: &str) -> Option<f64> {
    let v: f64 = text.trim().strip_suffix('%')?.trim().parse().ok()?;
    v.is_finite().then_some(v / 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::ctx::tests::{messages, parsed};
    use std::path::Path;

    fn read(bench: &str) -> (BenchParts, Vec<String>) {
        let (raw, text) = parsed(&format!("[suite]\nname = \"s\"\n[bench]\n{bench}"));
        let mut ctx = Ctx::new(Path::new("s.toml"), &text);
        let parts = bench_table(&mut ctx, raw.bench.as_ref(), &["n".to_string()]);
        (parts, messages(&ctx))
    }

    #[test]
    fn defaults_and_settings() {
        let ((b, bytes, flops), m) = read("");
        assert!(m.is_empty(), "{m:?}");
        assert_eq!(
            (b.min_samples, b.max_time_ms, b.max_slowdown),
            (
                DEFAULT_MIN_SAMPLES,
                DEFAULT_MAX_TIME_MS,
                DEFAULT_MAX_SLOWDOWN
            )
        );
        assert!(bytes.is_none() && flops.is_none());
        let ((b, bytes, _), m) = read(
            "max_slowdown = \"5%\"\nprecision = \"1%\"\nbytes = \"8 * n\"\nl2_flush = false\n",
        );
        assert!(m.is_empty(), "{m:?}");
        assert_eq!(
            (b.max_slowdown, b.precision, b.l2_flush),
            (0.05, 0.01, Flush::Off)
        );
        assert!(bytes.is_some());
        for (word, flush, json) in [
            ("\"clean\"", Flush::Clean, "\"clean\""),
            ("\"write\"", Flush::Write, "true"),
            ("true", Flush::Write, "true"),
        ] {
            let ((b, _, _), m) = read(&format!("l2_flush = {word}\n"));
            assert!(m.is_empty() && b.l2_flush == flush, "{word}: {m:?}");
            // The trial identity writes `true` and `false` as before `"clean"` existed.
            assert_eq!(serde_json::to_string(&flush).unwrap(), json);
            assert_eq!(serde_json::from_str::<Flush>(json).unwrap(), flush);
        }
        // Without a precision, a third of max_slowdown: no more samples than the gate uses.
        let ((b, _, _), m) = read("max_slowdown = \"6%\"\n");
        assert!(m.is_empty(), "{m:?}");
        assert!((b.precision - 0.02).abs() < 1e-12, "{}", b.precision);
        let ((b, _, _), _) = read("");
        assert!((b.precision - 0.01).abs() < 1e-12, "the default stays 1%");
    }

    #[test]
    fn bounds_and_percentages_that_cannot_work_are_errors() {
        let (_, m) =
            read("min_samples = 2\nmax_time_ms = 0\nmax_slowdown = \"3\"\nprecision = \"4%\"\n");
        assert_eq!(m[0], "4:15: `min_samples` must be at least 3");
        assert!(
            m[1].starts_with("5:15: `max_time_ms` must be positive"),
            "{m:?}"
        );
        assert_eq!(
            m[2],
            "6:16: bad max_slowdown `3` (write a percentage such as \"3%\")"
        );
        assert!(
            m[3].starts_with("7:13: precision 4% is not finer than max_slowdown 3"),
            "{m:?}"
        );
        let (_, over) = read("min_samples = 5000\nmin_time_ms = 5000\n");
        assert_eq!(
            over,
            [
                "4:15: `min_samples` 5000 is over `max_samples` (2000, the default): write 3 to 2000, or raise `max_samples` too",
                "5:15: `min_time_ms` 5000 is over the time cap `max_time_ms` (1000, the default): write at most 1000, or raise `max_time_ms` too"
            ]
        );
        let (_, fine) = read("min_samples = 5000\nmax_samples = 6000\n");
        assert!(fine.is_empty(), "{fine:?}");
    }

    #[test]
    fn percentages() {
        assert_eq!(parse_percent("3%"), Some(0.03));
        assert_eq!(parse_percent(" 0.5 % "), Some(0.005));
        assert_eq!(parse_percent("3"), None);
    }
}
