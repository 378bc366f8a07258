//! `Series` drawn with plotters' SVG backend into strings that the page inlines: a quantity
//! against size (log axes), and levels over a run history with change points marked (the
//! sample strips are in `strips`). Ticks and their labels come from `axes`; a series' colour
//! is its own (`Series::color`), so one kernel has one colour in every chart of a suite.

use super::axes::{self, Unit};
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;
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
    /// Its colour: an index into [`PALETTE`] (the same kernel, the same index, in every chart).
    pub color: usize,
    /// Drawn dashed: on a trend chart, a trial's second timing regime, so its two regimes,
    /// which share the trial's colour, read apart.
    pub dashed: bool,
}

/// How a chart's y axis reads.
#[derive(Debug, Clone, Copy)]
pub struct YAxis {
    /// The axis title.
    pub desc: &'static str,
    /// Log scale (times) or linear (percentages, speedups).
    pub log: bool,
    /// What its values are, for the tick labels.
    pub unit: Unit,
}

/// Kernel colours, distinguishable and none of them the red that marks thresholds and change
/// points or the grey that marks regime switches (Tableau 10 with a dark indigo for its grey,
/// without its red); then plotters' 99-colour palette.
pub const PALETTE: [(u8, u8, u8); 9] = [
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (57, 59, 121),
    (188, 189, 34),
    (23, 190, 207),
];

/// The colour of index `i`, as RGB.
pub fn color(i: usize) -> (u8, u8, u8) {
    PALETTE
        .get(i)
        .copied()
        .unwrap_or_else(|| Palette99::pick(i - PALETTE.len()).to_rgba().rgb())
}

fn rgb(i: usize) -> RGBColor {
    let (r, g, b) = color(i);
    RGBColor(r, g, b)
}

/// An axis over a range, logarithmic or linear, ticked at `ticks` only (no light mesh lines),
/// so plotters draws no tick of its own choosing; the labels come from the chart's formatter.
pub(super) struct Ticked {
    linear: RangedCoordf64,
    log: Option<LogCoord<f64>>,
    ticks: Vec<f64>,
}

/// An axis over `range`, on a log scale where `log`, ticked at `ticks`.
pub(super) fn ticked(range: Range<f64>, log: bool, ticks: Vec<f64>) -> Ticked {
    Ticked {
        log: log.then(|| range.clone().log_scale().into()),
        linear: range.into(),
        ticks,
    }
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        match &self.log {
            Some(log) => log.map(value, limit),
            None => self.linear.map(value, limit),
        }
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.linear.range()
    }
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
        let f = if hi / lo < 1.5 { 1.1 } else { 1.4 };
        lo / f..hi * f
    } else {
        let span = (hi - lo).max(hi.abs() * 0.05).max(1e-12);
        lo - 0.1 * span..hi + 0.1 * span
    }
}

/// The y axis' ticks over `range` and their labels.
pub(super) fn y_ticks(range: &Range<f64>, y: YAxis) -> (Vec<f64>, Vec<String>) {
    let ticks = if y.log {
        axes::log_ticks(range)
    } else {
        axes::linear_ticks(range)
    };
    let labels = y.unit.labels(&ticks);
    (ticks, labels)
}

pub(super) fn error(title: &str, e: impl std::fmt::Display) -> PlotError {
    PlotError {
        title: title.into(),
        reason: e.to_string(),
    }
}

pub(super) fn svg(
    title: &str,
    size: (u32, u32),
    // stringly: plotters gives every drawing call its own generic error type; the text is
    // only ever shown, wrapped in the typed `PlotError` with the chart's title.
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> Result<(), Box<dyn std::error::Error>>,
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

/// A quantity against size, log x (ticked at the sizes measured); intervals drawn as
/// vertical bars.
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
    let mut sizes: Vec<f64> = all().map(|p| p.0).collect();
    sizes.sort_by(f64::total_cmp);
    sizes.dedup();
    let x_ticks = axes::thin(&axes::spaced_log(&sizes, 0.05), 8);
    let (y_ticks, y_labels) = y_ticks(&y_range, y);
    let lines: Vec<Vec<(f64, f64)>> = series
        .iter()
        .map(|s| s.points.iter().map(|p| (p.0, p.1)).collect())
        .collect();
    let longest = series.iter().map(|s| s.name.chars().count()).max();
    let corner = super::legend::corner(&lines, longest.unwrap_or(0), &x_range, &y_range, y.log);
    svg(title, SIZE, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(42)
            .y_label_area_size(78)
            .build_cartesian_2d(
                ticked(x_range, true, x_ticks.clone()),
                ticked(y_range, y.log, y_ticks.clone()),
            )?;
        let x_labels: Vec<String> = x_ticks.iter().map(|x| axes::count(*x)).collect();
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y.desc)
            .y_label_formatter(&|v: &f64| axes::label_of(*v, &y_ticks, &y_labels))
            .x_label_formatter(&|v: &f64| axes::label_of(*v, &x_ticks, &x_labels))
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        for (s, line) in series.iter().zip(&lines) {
            let color = rgb(s.color);
            chart
                .draw_series(LineSeries::new(line.clone(), color.stroke_width(2)))?
                .label(s.name.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
                });
            chart.draw_series(line.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
            let bars = s.points.iter().filter_map(|&(x, _, interval)| {
                interval
                    .map(|(lo, hi)| PathElement::new(vec![(x, lo), (x, hi)], color.stroke_width(1)))
            });
            chart.draw_series(bars)?;
        }
        chart
            .configure_series_labels()
            .position(corner)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.3))
            .draw()?;
        Ok(())
    })
}

/// Width and height of a trend chart: the page's full width.
pub const TREND_SIZE: (u32, u32) = (1280, 420);

/// A chart's SVG, or where it could not be drawn, a note saying why in its place.
pub fn chart(r: Result<String, PlotError>) -> String {
    r.unwrap_or_else(|e| {
        format!(
            r#"<p class="note">{}</p>"#,
            super::page::esc(&e.to_string())
        )
    })
}

/// A legend in HTML, for charts with more lines than fit inside: a swatch of each series'
/// colour (dashed for a dashed series) and its name, once per name (a trend broken into
/// parts is one series to the reader).
pub fn legend(series: &[Series]) -> String {
    let names = crate::order::first_seen(series.iter().map(|s| s.name.as_str()));
    let entries: String = (names.iter())
        .filter_map(|name| series.iter().find(|s| s.name == *name))
        .map(|s| {
            let swatch = styled_swatch(s.color, s.dashed);
            format!(r#"<span>{swatch}{}</span>"#, super::page::esc(&s.name))
        })
        .collect();
    format!(r#"<div class="legend">{entries}</div>"#)
}

/// A colour swatch for HTML (a legend entry, a table row), with the colour in `data-color`,
/// solid or dashed (`data-dashed`), as its series is drawn.
pub fn styled_swatch(i: usize, dashed: bool) -> String {
    let (r, g, b) = color(i);
    match dashed {
        false => format!(
            r#"<i class="swatch" data-color="{i}" style="background: rgb({r}, {g}, {b})"></i>"#
        ),
        true => format!(
            r#"<i class="swatch" data-color="{i}" data-dashed="1" style="background: repeating-linear-gradient(90deg, rgb({r}, {g}, {b}) 0 4px, transparent 4px 7px)"></i>"#
        ),
    }
}

/// What a trend chart marks besides its series.
#[derive(Debug, Clone, Default)]
pub struct Marks {
    /// Change points: `(series, run index)`, drawn as a ring and a red line.
    pub change_points: Vec<(usize, usize)>,
    /// Regime switches: the run index where a new regime starts, drawn as a grey dashed line
    /// (no series is grey: [`PALETTE`] has none).
    pub switches: Vec<usize>,
    /// Failures: `(series, run index)`, drawn as a red cross on the series' point of that run,
    /// or on the chart's floor where the run left no time.
    pub failures: Vec<(usize, usize)>,
}

/// Levels over a history: x is the run's index (labelled with `labels`, e.g. short commits),
/// y each series' value.
pub fn trend(
    title: &str,
    labels: &[String],
    series: &[Series],
    marks: &Marks,
    y: YAxis,
) -> Result<String, PlotError> {
    let ys = bounds(series.iter().flat_map(|s| s.points.iter().map(|p| p.1)))
        .ok_or_else(|| error(title, "no runs"))?;
    let y_range = padded(ys, false);
    let (y_ticks, y_labels) = y_ticks(&y_range, y);
    let n = labels.len().max(1);
    let runs: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let x_ticks = axes::thin(&runs, 12);
    svg(title, TREND_SIZE, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(42)
            .y_label_area_size(78)
            .build_cartesian_2d(
                ticked(-0.5f64..n as f64 - 0.5, false, x_ticks),
                ticked(y_range.clone(), false, y_ticks.clone()),
            )?;
        chart
            .configure_mesh()
            .x_label_formatter(&|v: &f64| {
                labels
                    .get(v.round().max(0.0) as usize)
                    .cloned()
                    .unwrap_or_default()
            })
            .x_desc("run (commit)")
            .y_desc(y.desc)
            .y_label_formatter(&|v: &f64| axes::label_of(*v, &y_ticks, &y_labels))
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        let vertical = |x: f64| vec![(x, y_range.start), (x, y_range.end)];
        for &at in &marks.switches {
            let x = at as f64 - 0.5;
            let dashes = (0..24).map(|k| {
                let (a, b) = (k as f64 / 24.0, (k as f64 + 0.5) / 24.0);
                let at = |f: f64| y_range.start + f * (y_range.end - y_range.start);
                PathElement::new(
                    vec![(x, at(a)), (x, at(b))],
                    BLACK.mix(0.45).stroke_width(2),
                )
            });
            chart.draw_series(dashes)?;
        }
        chart.draw_series(marks.change_points.iter().map(|&(_, at)| {
            PathElement::new(vertical(at as f64 - 0.5), RED.mix(0.5).stroke_width(2))
        }))?;
        for (i, s) in series.iter().enumerate() {
            let color = rgb(s.color);
            let line: Vec<(f64, f64)> = s.points.iter().map(|p| (p.0, p.1)).collect();
            if s.dashed {
                chart.draw_series(DashedLineSeries::new(
                    line.clone(),
                    7,
                    5,
                    color.stroke_width(2),
                ))
            } else {
                chart.draw_series(LineSeries::new(line.clone(), color.stroke_width(2)))
            }
            .map_err(|e| e.to_string())?;
            chart.draw_series(line.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
            let point = |&(_, at): &(usize, usize)| line.iter().find(|p| p.0 == at as f64);
            let rings = (marks.change_points.iter()).filter(|m| m.0 == i);
            let rings = rings.filter_map(point);
            chart.draw_series(rings.map(|&p| Circle::new(p, 7, RED.stroke_width(2))))?;
            // On the trial's point where it was timed (a regression), on the floor where it
            // left no time (a wrong output).
            let floor = y_range.start + 0.04 * (y_range.end - y_range.start);
            let crosses = marks.failures.iter().filter(|m| m.0 == i).map(|m| {
                let y = point(m).map_or(floor, |p| p.1);
                Cross::new((m.1 as f64, y), 6, RED.stroke_width(2))
            });
            chart.draw_series(crosses)?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_are_svg_with_every_series_named_in_its_colour() {
        let series = vec![
            Series {
                name: "naive".into(),
                points: vec![(4096.0, 4e-6, None), (1048576.0, 30e-6, None)],
                color: 0,
                dashed: false,
            },
            Series {
                name: "vec4".into(),
                points: vec![
                    (4096.0, 3e-6, Some((2.9e-6, 3.1e-6))),
                    (1048576.0, 20e-6, None),
                ],
                color: 4,
                dashed: false,
            },
        ];
        let y = YAxis {
            desc: "time",
            log: true,
            unit: Unit::Seconds,
        };
        let svg = lines("saxpy", "n", y, &series).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
        assert!(
            svg.contains("\nnaive\n") && svg.contains("\nvec4\n"),
            "{svg}"
        );
        let (r, g, b) = color(4);
        assert!(
            svg.contains(&format!("#{r:02X}{g:02X}{b:02X}")),
            "vec4 in colour 4"
        );
        assert!(
            svg.contains("\n1Mi\n") && svg.contains("\n4096\n"),
            "x ticked at the sizes"
        );
        assert!(lines("empty", "n", y, &[]).is_err());
        let marks = Marks {
            change_points: vec![(1, 1)],
            switches: vec![1],
            failures: vec![(0, 0)],
        };
        let t = trend("h", &["a".into(), "b".into()], &series, &marks, y).unwrap();
        assert!(t.contains("<circle"), "points and the change point's ring");
        assert!(legend(&series).contains(">vec4<"));
        assert!(legend(&series).contains(r#"data-color="4""#));
    }

    #[test]
    fn colours_are_stable_and_distinct() {
        let first: Vec<_> = (0..PALETTE.len() + 3).map(color).collect();
        let mut unique = first.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), first.len());
        assert!(!PALETTE.contains(&(214, 39, 40)), "red is for thresholds");
        assert!(
            PALETTE.iter().all(|&(r, g, b)| !(r == g && g == b)),
            "grey is for regime switches"
        );
    }
}
