//! `strips`: two sample distributions side by side — what a trial was compared with (a stored
//! baseline, or the base revision in paired mode) and this run — each with its median, and
//! the gate's threshold drawn across both.

use super::axes::{self, Unit};
use super::plots::{bounds, error, padded, svg, ticked, y_ticks, PlotError, YAxis, SIZE};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Deterministic jitter in `[-0.18, 0.18]` for the `i`-th point of a strip.
fn jitter(i: usize) -> f64 {
    ((i as f64 * 0.618_034).fract() - 0.5) * 0.36
}

/// What the two strips are called: `baseline` / `this run`, or `base c7b4c3e` / `candidate`.
#[derive(Debug, Clone, Copy)]
pub struct Sides<'a> {
    /// What the trial was compared with.
    pub old: &'a str,
    /// This run.
    pub new: &'a str,
}

/// Two sample distributions of times (seconds) as strips, `old` at x = 0 and `new` at x = 1,
/// each with its median; `threshold` (the old median × (1 + max_slowdown)) drawn across both.
pub fn strips(
    sides: &Sides,
    title: &str,
    old: &[f64],
    new: &[f64],
    threshold: f64,
) -> Result<String, PlotError> {
    let ys = bounds(old.iter().chain(new).copied().chain([threshold]))
        .ok_or_else(|| error(title, "no samples"))?;
    // Room above the samples for the two labels.
    let y_range = padded((ys.0, ys.1 + 0.12 * (ys.1 - ys.0)), false);
    let median = |v: &[f64]| crate::stats::Summary::of(v).map(|s| s.median);
    let axis = YAxis {
        desc: "time per run",
        log: false,
        unit: Unit::Seconds,
    };
    let (ticks, labels) = y_ticks(&y_range, axis);
    svg(title, SIZE, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(30)
            .y_label_area_size(78)
            .build_cartesian_2d(
                -0.5f64..1.5f64,
                ticked(y_range.clone(), false, ticks.clone()),
            )?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .light_line_style(WHITE.mix(0.0))
            .x_labels(0)
            .y_desc(axis.desc)
            .y_label_formatter(&|v: &f64| axes::label_of(*v, &ticks, &labels))
            .draw()?;
        let groups = [
            (0.0, old, RGBColor(70, 110, 170), sides.old),
            (1.0, new, RGBColor(220, 110, 30), sides.new),
        ];
        let top = y_range.end - 0.04 * (y_range.end - y_range.start);
        for (x, samples, color, name) in groups {
            chart.draw_series(std::iter::once(Text::new(
                format!("{name} (n = {})", samples.len()),
                (x, top),
                ("sans-serif", 14)
                    .into_font()
                    .color(&color)
                    .pos(Pos::new(HPos::Center, VPos::Top)),
            )))?;
            chart.draw_series(
                samples
                    .iter()
                    .enumerate()
                    .map(|(i, &y)| Circle::new((x + jitter(i), y), 3, color.mix(0.6).filled())),
            )?;
            if let Some(m) = median(samples) {
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(x - 0.3, m), (x + 0.3, m)],
                    color.stroke_width(3),
                )))?;
            }
        }
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(-0.5, threshold), (1.5, threshold)],
            RED.stroke_width(1),
        )))?;
        chart.draw_series(std::iter::once(Text::new(
            "threshold",
            (1.48, threshold),
            ("sans-serif", 12)
                .into_font()
                .color(&RED)
                .pos(Pos::new(HPos::Right, VPos::Bottom)),
        )))?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn both_strips_and_the_threshold_are_drawn() {
        let sides = super::Sides {
            old: "baseline",
            new: "this run",
        };
        let s = super::strips(&sides, "t", &[1.0, 1.1], &[1.2, 1.3], 1.1).unwrap();
        assert!(s.contains("\nthreshold\n") && s.contains("\nbaseline (n = 2)\n"));
    }
}
