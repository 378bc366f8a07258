//! `Series` drawn with plotters' SVG backend into strings that the page inlines: a quantity
//! against size (log axes), and levels over a run history with change points marked (the
//! sample strips are in `strips`).

use plotters::coord::Shift;
use plotters::prelude::*;
use std::ops::Range;

/// Width and height of every chart, pixels; two fit side by side in the page's 1400 px.
pub const SIZE: (u32, u32) = (640, 360);

/// A chart that could not be drawn (a degenerate range); the page shows the message instead.
#[derive(Debug, thiserror::Error)]
#[error("cannot draw `{title}`: {reason}")]
pub struct PlotError {
    /// The chart's title.
    pub title: String,
    /// What plotters said.
    pub reason: String,
}

/// A point of a series: `(x, y, interval of y)`.
pub type Point = (f64, f64, Option<(f64, f64)>);

/// One line of a chart: a kernel, a trial.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The legend's name.
    pub name: String,
    /// `(x, y, interval of y)`, in x order.
    pub points: Vec<Point>,
}

/// How a chart's y axis reads.
#[derive(Debug, Clone, Copy)]
pub struct YAxis {
    /// The axis title.
    pub desc: &'static str,
    /// Log scale (times) or linear (percentages, speedups).
    pub log: bool,
    /// Tick labels.
    pub format: fn(f64) -> String,
}

pub(super) fn bounds(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values
        .filter(|v| v.is_finite())
        .fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
}

/// Widens `[lo, hi]` by a margin; on a log axis multiplicatively (and never to zero).
pub(super) fn padded((lo, hi): (f64, f64), log: bool) -> Range<f64> {
    if log {
        let (lo, hi) = (lo.max(f64::MIN_POSITIVE), hi.max(f64::MIN_POSITIVE));
        let f = if hi / lo < 1.5 { 1.25 } else { 1.6 };
        // From a power of ten: plotters labels a log axis from its first power of ten up, so
        // the points below it had no label (seen in the first screenshot).
        0.999 * 10f64.powf((lo / f).log10().floor())..hi * f
    } else {
        let span = (hi - lo).max(hi.abs() * 0.05).max(1e-12);
        lo - 0.1 * span..hi + 0.1 * span
    }
}

pub(super) fn error(title: &str, e: impl std::fmt::Display) -> PlotError {
    PlotError {
        title: title.into(),
        reason: e.to_string(),
    }
}

pub(super) fn svg(
    title: &str,
    // stringly: plotters gives every drawing call its own generic error type; the text is
    // only ever shown, wrapped in the typed `PlotError` with the chart's title.
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> Result<(), String>,
) -> Result<String, PlotError> {
    svg_sized(title, SIZE, draw)
}

fn svg_sized(
    title: &str,
    size: (u32, u32),
    // stringly: plotters gives every drawing call its own generic error type; the text is
    // only ever shown, wrapped in the typed `PlotError` with the chart's title.
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> Result<(), String>,
) -> Result<String, PlotError> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        root.fill(&WHITE).map_err(|e| error(title, e))?;
        draw(&root).map_err(|e| error(title, e))?;
        root.present().map_err(|e| error(title, e))?;
    }
    Ok(out)
}

/// Draws the series and their legend on a built chart; one macro because a log and a linear
/// y axis are different types in plotters.
macro_rules! draw_series {
    ($chart:expr, $series:expr, $x_desc:expr, $y:expr) => {{
        let chart = &mut $chart;
        chart
            .configure_mesh()
            .x_desc($x_desc)
            .y_desc($y.desc)
            .y_labels(if $y.log { 30 } else { 6 })
            .y_label_formatter(&|v: &f64| {
                if $y.log && !crate::html::plots::one_two_five(*v) {
                    String::new()
                } else {
                    ($y.format)(*v)
                }
            })
            .x_label_formatter(&|v: &f64| crate::html::plots::count(*v))
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(|e| e.to_string())?;
        for (i, s) in $series.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            let line: Vec<(f64, f64)> = s.points.iter().map(|p| (p.0, p.1)).collect();
            chart
                .draw_series(LineSeries::new(line.clone(), color.stroke_width(2)))
                .map_err(|e| e.to_string())?
                .label(s.name.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
                });
            chart
                .draw_series(line.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(|e| e.to_string())?;
            for &(x, _, interval) in &s.points {
                if let Some((lo, hi)) = interval {
                    chart
                        .draw_series(std::iter::once(PathElement::new(
                            vec![(x, lo), (x, hi)],
                            color.stroke_width(1),
                        )))
                        .map_err(|e| e.to_string())?;
                }
            }
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.3))
            .draw()
            .map_err(|e| e.to_string())?;
    }};
}

/// A quantity against size, log x; intervals drawn as vertical bars.
pub fn lines(title: &str, x_desc: &str, y: YAxis, series: &[Series]) -> Result<String, PlotError> {
    let all = || series.iter().flat_map(|s| s.points.iter());
    let xs = bounds(all().map(|p| p.0)).ok_or_else(|| error(title, "no points"))?;
    let ys = bounds(all().flat_map(|p| {
        let (lo, hi) = p.2.unwrap_or((p.1, p.1));
        [p.1, lo, hi]
    }))
    .ok_or_else(|| error(title, "no points"))?;
    let x_range = padded(xs, true);
    let y_range = padded(ys, y.log);
    svg(title, |root| {
        let mut builder = ChartBuilder::on(root);
        builder
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(42)
            .y_label_area_size(78);
        if y.log {
            let mut chart = builder
                .build_cartesian_2d(x_range.log_scale(), y_range.log_scale())
                .map_err(|e| e.to_string())?;
            draw_series!(chart, series, x_desc, y);
        } else {
            let mut chart = builder
                .build_cartesian_2d(x_range.log_scale(), y_range)
                .map_err(|e| e.to_string())?;
            draw_series!(chart, series, x_desc, y);
        }
        Ok(())
    })
}

/// Whether a log axis' tick is labelled: 1, 2 and 5 times a power of ten. Labelling every
/// tick crowded the top of each decade into one smear (seen in the first screenshot).
pub fn one_two_five(v: f64) -> bool {
    if v <= 0.0 {
        return false;
    }
    let lead = v / 10f64.powf(v.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .any(|d| (lead - d).abs() < 0.01)
}

/// A size on an axis: `4096`, `16Mi` (exact powers of two), `10k`, `1M`, `2.5M`.
pub fn count(v: f64) -> String {
    let r = v.round();
    let trim = |x: f64| {
        let t = format!("{x:.1}");
        t.strip_suffix(".0").map(str::to_string).unwrap_or(t)
    };
    if r >= 1048576.0 && (r / 1048576.0).fract() == 0.0 {
        format!("{}Mi", r / 1048576.0)
    } else if r >= 1e9 {
        format!("{}G", trim(r / 1e9))
    } else if r >= 1e6 {
        format!("{}M", trim(r / 1e6))
    } else if r >= 1e4 {
        format!("{}k", trim(r / 1e3))
    } else {
        format!("{r}")
    }
}

/// Width and height of a trend chart: the page's full width.
pub const TREND_SIZE: (u32, u32) = (1280, 420);

/// The colour of the `i`-th series (plotters' 99-colour palette), as RGB.
pub fn color(i: usize) -> (u8, u8, u8) {
    Palette99::pick(i).to_rgba().rgb()
}

/// A legend in HTML, for charts with more lines than fit inside: a swatch of each series'
/// colour (the colours `lines` and `trend` draw with) and its name.
pub fn legend(series: &[Series]) -> String {
    let mut out = String::from(r#"<div class="legend">"#);
    for (i, s) in series.iter().enumerate() {
        let c = color(i);
        out.push_str(&format!(
            r#"<span><i style="background: rgb({}, {}, {})"></i>{}</span>"#,
            c.0,
            c.1,
            c.2,
            crate::html::page::esc(&s.name)
        ));
    }
    out.push_str("</div>");
    out
}

/// Levels over a history: x is the run's index (labelled with `labels`, e.g. short commits),
/// y each series' value; `marks` are `(series, run index)` change points, drawn as rings and
/// a vertical line.
pub fn trend(
    title: &str,
    labels: &[String],
    series: &[Series],
    marks: &[(usize, usize)],
    y: YAxis,
) -> Result<String, PlotError> {
    let ys = bounds(series.iter().flat_map(|s| s.points.iter().map(|p| p.1)))
        .ok_or_else(|| error(title, "no runs"))?;
    let y_range = padded(ys, false);
    let n = labels.len().max(1);
    svg_sized(title, TREND_SIZE, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(42)
            .y_label_area_size(78)
            .build_cartesian_2d(-0.5f64..n as f64 - 0.5, y_range.clone())
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_labels(n.min(12))
            .x_label_formatter(&|v: &f64| {
                let i = v.round();
                if (v - i).abs() < 1e-6 && i >= 0.0 {
                    labels.get(i as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .x_desc("run (commit)")
            .y_desc(y.desc)
            .y_label_formatter(&|v: &f64| (y.format)(*v))
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(|e| e.to_string())?;
        for &(_, at) in marks {
            let x = at as f64 - 0.5;
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x, y_range.start), (x, y_range.end)],
                    RED.mix(0.5).stroke_width(2),
                )))
                .map_err(|e| e.to_string())?;
        }
        for (i, s) in series.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            let line: Vec<(f64, f64)> = s.points.iter().map(|p| (p.0, p.1)).collect();
            chart
                .draw_series(LineSeries::new(line.clone(), color.stroke_width(2)))
                .map_err(|e| e.to_string())?
                .label(s.name.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
                });
            chart
                .draw_series(line.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(|e| e.to_string())?;
            for &(_, at) in marks.iter().filter(|m| m.0 == i) {
                if let Some(&p) = line.get(at) {
                    chart
                        .draw_series(std::iter::once(Circle::new(p, 7, RED.stroke_width(2))))
                        .map_err(|e| e.to_string())?;
                }
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_are_svg_with_every_series_named() {
        let series = vec![
            Series {
                name: "naive".into(),
                points: vec![(4096.0, 4e-6, None), (1048576.0, 30e-6, None)],
            },
            Series {
                name: "vec4".into(),
                points: vec![
                    (4096.0, 3e-6, Some((2.9e-6, 3.1e-6))),
                    (1048576.0, 20e-6, None),
                ],
            },
        ];
        let y = YAxis {
            desc: "time",
            log: true,
            format: crate::report::duration,
        };
        let svg = lines("saxpy", "n", y, &series).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
        assert!(
            svg.contains("\nnaive\n") && svg.contains("\nvec4\n"),
            "{svg}"
        );
        assert!(lines("empty", "n", y, &[]).is_err());
        let t = trend("h", &["a".into(), "b".into()], &series, &[(1, 1)], y).unwrap();
        assert!(t.contains("<circle"), "points and the change point's ring");
        assert!(legend(&series).contains(">vec4<"));
    }

    #[test]
    fn sizes_on_an_axis() {
        assert_eq!(count(4096.0), "4096");
        assert_eq!(count(16777216.0), "16Mi");
        assert_eq!(count(2.5e6), "2.5M");
        assert_eq!(count(1e6), "1M");
        assert_eq!(count(1e5), "100k");
        assert!(one_two_five(2e-6) && one_two_five(5e-5) && one_two_five(1e-3));
        assert!(!one_two_five(3e-6) && !one_two_five(0.0));
    }
}
