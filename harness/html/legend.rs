//! `corner`: where a chart's legend goes — the corner its lines and points leave free, so the
//! legend never covers the data it names (a speedup falling from 1× starts where the legend
//! usually sits).

use plotters::prelude::SeriesLabelPosition;
use std::ops::Range;

/// Where the legend of a chart of `lines` (each series' points, `(x, y)` in x order, on a log
/// x axis over `x` and a y axis over `y`) covers the fewest of its lines and points: the upper
/// left, unless they run there (a speedup falling from 1×), then the upper right, lower left,
/// lower right. The box is sized as plotters draws it in a 640 × 360 chart: about 7 px per
/// character of the longest of the series' names (`longest`) plus 40, 20 px per series, in a
/// plot area of about 540 × 265 px.
pub(super) fn corner(
    lines: &[Vec<(f64, f64)>],
    longest: usize,
    x: &Range<f64>,
    y: &Range<f64>,
    log_y: bool,
) -> SeriesLabelPosition {
    let unit = |v: f64, r: &Range<f64>, log: bool| match log {
        true => (v.ln() - r.start.ln()) / (r.end.ln() - r.start.ln()),
        false => (v - r.start) / (r.end - r.start),
    };
    let (w, h) = (
        (40.0 + 7.0 * longest as f64) / 540.0,
        (12.0 + 20.0 * lines.len() as f64) / 265.0,
    );
    // Each point, and ten places along each segment between two points.
    let mut places: Vec<(f64, f64)> = Vec::new();
    for line in lines {
        let at: Vec<(f64, f64)> = line
            .iter()
            .map(|p| (unit(p.0, x, true), unit(p.1, y, log_y)))
            .collect();
        places.extend(&at);
        for pair in at.windows(2) {
            let ((x0, y0), (x1, y1)) = (pair[0], pair[1]);
            places.extend((1..10).map(|k| {
                let f = k as f64 / 10.0;
                (x0 + f * (x1 - x0), y0 + f * (y1 - y0))
            }));
        }
    }
    let corners = [
        (SeriesLabelPosition::UpperLeft, false, true),
        (SeriesLabelPosition::UpperRight, true, true),
        (SeriesLabelPosition::LowerLeft, false, false),
        (SeriesLabelPosition::LowerRight, true, false),
    ];
    let covered = |right: bool, upper: bool| {
        places
            .iter()
            .filter(|(px, py)| {
                let in_x = if right { *px > 1.0 - w } else { *px < w };
                let in_y = if upper { *py > 1.0 - h } else { *py < h };
                in_x && in_y
            })
            .count()
    };
    // The first of the corners that cover the fewest.
    let best = corners
        .into_iter()
        .min_by_key(|&(_, right, upper)| covered(right, upper));
    best.map_or(SeriesLabelPosition::UpperLeft, |c| c.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_legend_goes_where_no_line_runs() {
        let x = 3000.0..20e6;
        let corner = |points: &[(f64, f64)], y: Range<f64>| match corner(
            &[points.to_vec()],
            4,
            &x,
            &y,
            false,
        ) {
            SeriesLabelPosition::UpperLeft => "upper left",
            SeriesLabelPosition::UpperRight => "upper right",
            SeriesLabelPosition::LowerLeft => "lower left",
            _ => "other",
        };
        // Rising from the lower left: the usual place is free.
        let rising = [(4096.0, 1e-6), (1048576.0, 6e-6), (16777216.0, 80e-6)];
        assert_eq!(corner(&rising, 0.0..90e-6), "upper left");
        // A speedup falling from 0.97×, as the real paired run's saxpy::vec4: not over its start.
        let falling = [(4096.0, 0.97), (1048576.0, 0.76), (16777216.0, 0.61)];
        assert_eq!(corner(&falling, 0.57..1.01), "upper right");
    }
}
