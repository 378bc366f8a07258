//! `Problems`: what is wrong in a stored file kernelgate reads back (a baseline, a results file,
//! a run history) after it parsed — each problem at its place in the file (a JSON path such as
//! `trials."saxpy::vec4::n=4096".runs[0].time_samples`) with what a valid value is. The file
//! kinds' validators (`baseline::check`, `report::validate`, `history`) build on it, and
//! each is used both where its file is read and by `kernelgate lint`, so what lint accepts a
//! run can use, and nothing a run reads reaches the statistics unchecked (seen before this:
//! `"time_samples": []` in a results file panicked `kernelgate compare`).

use std::fmt;

/// One thing wrong, at its place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{place}` {message}")]
pub struct Problem {
    /// Where: a JSON path into the file, or a table and row of a history.
    pub place: String,
    /// What is wrong, and what a valid value is.
    pub message: String,
}

/// The problems found in one file, in the order they were found.
#[derive(Debug, Default)]
pub struct Problems(pub Vec<Problem>);

impl Problems {
    /// Records `message` at `place`.
    pub fn add(&mut self, place: impl fmt::Display, message: impl Into<String>) {
        self.0.push(Problem {
            place: place.to_string(),
            message: message.into(),
        });
    }

    /// The first problem, which the error reports (one fix at a time is what a person does;
    /// `lint` names the file, so the next run shows the next one).
    pub fn first(self) -> Option<Problem> {
        self.0.into_iter().next()
    }

    /// Ratio samples (speedups): `need` of them at least, each positive and at most
    /// [`MAX_MAGNITUDE`].
    pub fn samples(&mut self, place: impl fmt::Display, values: &[f64], need: usize) {
        self.samples_within(place, values, need, MAX_MAGNITUDE, "a positive number");
    }

    /// Time samples: `need` of them at least, each a positive number of seconds, at most
    /// [`MAX_SECONDS`].
    pub fn seconds_samples(&mut self, place: impl fmt::Display, values: &[f64], need: usize) {
        self.samples_within(
            place,
            values,
            need,
            MAX_SECONDS,
            "a positive number of seconds",
        );
    }

    fn samples_within(
        &mut self,
        place: impl fmt::Display,
        values: &[f64],
        need: usize,
        max: f64,
        what: &str,
    ) {
        if values.len() < need {
            self.add(
                place,
                format!(
                    "holds {} sample(s); it needs at least {need}, each {what}",
                    values.len()
                ),
            );
        } else if let Some((i, v)) = values
            .iter()
            .enumerate()
            .find(|(_, v)| !(positive(**v) && **v <= max))
        {
            self.add(
                format!("{place}[{i}]"),
                format!("is {}; a sample is {what}, at most {max:e}", show(*v)),
            );
        }
    }

    /// Records `value` at `place` unless it is `ok`: `is <value>; write <what>`.
    fn check(&mut self, place: impl fmt::Display, value: f64, ok: bool, what: fmt::Arguments) {
        if !ok {
            self.add(place, format!("is {}; write {what}", show(value)));
        }
    }

    /// A positive number, at most [`MAX_MAGNITUDE`] (a ratio, a rate).
    pub fn positive(&mut self, place: impl fmt::Display, value: f64) {
        let ok = positive(value) && value <= MAX_MAGNITUDE;
        let what = format_args!("a positive number, at most {MAX_MAGNITUDE:e}");
        self.check(place, value, ok, what);
    }

    /// A positive number of seconds, at most [`MAX_SECONDS`] (a median, an interval's end).
    pub fn seconds(&mut self, place: impl fmt::Display, value: f64) {
        let ok = positive(value) && value <= MAX_SECONDS;
        let what = format_args!("a positive number of seconds, at most {MAX_SECONDS:e}");
        self.check(place, value, ok, what);
    }

    /// A stored median with its interval (`[median, low, high]`): of seconds (`seconds`) or of
    /// a ratio.
    pub fn stored(&mut self, place: impl fmt::Display, values: [f64; 3], seconds: bool) {
        for (end, v) in ["median", "low", "high"].iter().zip(values) {
            match seconds {
                true => self.seconds(format!("{place}.{end}"), v),
                false => self.positive(format!("{place}.{end}"), v),
            }
        }
    }

    /// A number from 0 to [`MAX_MAGNITUDE`] (a count of seconds, bytes, a floor).
    pub fn non_negative(&mut self, place: impl fmt::Display, value: f64) {
        let ok = value.is_finite() && (0.0..=MAX_MAGNITUDE).contains(&value);
        let what = format_args!("a number from 0 to {MAX_MAGNITUDE:e}");
        self.check(place, value, ok, what);
    }

    /// A finite number within `range` (a probability, a threshold).
    pub fn within(&mut self, place: impl fmt::Display, value: f64, range: (f64, f64)) {
        let ok = value.is_finite() && value >= range.0 && value <= range.1;
        let what = format_args!("a number from {} to {}", range.0, range.1);
        self.check(place, value, ok, what);
    }
}

/// The longest time a stored value may say one launch took: a day, the longest
/// `KERNELGATE_TIMEOUT` allows for a whole trial.
pub const MAX_SECONDS: f64 = 86_400.0;

/// The largest ratio, rate, byte or FLOP count a stored file may hold: far beyond any real one,
/// and far from where sums and products of them overflow.
pub const MAX_MAGNITUDE: f64 = 1e18;

/// A number as a message shows it: `1e308`, not 309 digits.
pub fn show(v: f64) -> String {
    if v != 0.0 && v.is_finite() && !(1e-4..1e6).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// Whether `v` is a positive, finite number.
pub fn positive(v: f64) -> bool {
    v.is_finite() && v > 0.0
}

/// A JSON object key as a path segment: `."saxpy::vec4::n=4096"`.
pub fn key(name: &str) -> String {
    format!(".{name:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_numbers_and_places() {
        let mut p = Problems::default();
        p.seconds_samples("runs[0].time_samples", &[], 1);
        p.samples("x", &[1.0, -2.0], 1);
        p.samples("y", &[1.0, f64::INFINITY], 0);
        p.seconds_samples("fine", &[1e-6, 2e-6], 1);
        p.seconds_samples("long", &[1e-6, 1e308], 1);
        p.positive("median", 0.0);
        p.non_negative("floor", -1.0);
        p.within("p", 1.5, (0.0, 1.0));
        let shown: Vec<String> = p.0.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "`runs[0].time_samples` holds 0 sample(s); it needs at least 1, each a positive number of seconds",
                "`x[1]` is -2; a sample is a positive number, at most 1e18",
                "`y[1]` is inf; a sample is a positive number, at most 1e18",
                "`long[1]` is 1e308; a sample is a positive number of seconds, at most 8.64e4",
                "`median` is 0; write a positive number, at most 1e18",
                "`floor` is -1; write a number from 0 to 1e18",
                "`p` is 1.5; write a number from 0 to 1",
            ]
        );
        assert_eq!(key("a::b"), ".\"a::b\"");
    }
}
