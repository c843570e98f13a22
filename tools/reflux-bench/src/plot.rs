// SPDX-License-Identifier: GPL-2.0

//! A line plot as hand-written SVG: polylines with a legend, dashed reference lines, a linear
//! or logarithmic x axis.

use std::fmt::Write;

/// One line of the plot. Its polyline carries its name as a `<title>` (a tooltip).
pub struct Series {
    pub name: String,
    pub colour: &'static str,
    pub points: Vec<(f64, f64)>,
}

/// A dashed reference line across the plot, labelled.
pub struct Rule {
    pub at: f64,
    pub label: String,
    pub colour: &'static str,
}

#[derive(Default)]
pub struct Plot {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
    /// Horizontal reference lines (at a y value).
    pub h_rules: Vec<Rule>,
    /// Vertical reference lines (at an x value).
    pub v_rules: Vec<Rule>,
    /// A logarithmic x axis (decades); points at x ≤ 0 are left out.
    pub x_log: bool,
    /// Start the y axis at 0 (else a little below the smallest value, on a tick).
    pub y_zero: bool,
    /// A fixed y range instead (e.g. 0 to 1 for a CDF).
    pub y_range: Option<(f64, f64)>,
    /// A line of text in the middle of the plot (e.g. why it is empty).
    pub note: Option<String>,
}

const W: f64 = 820.0;
const H: f64 = 420.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 240.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 50.0;

/// A step of 1, 2 or 5 times a power of ten near `raw`.
fn nice_step(raw: f64) -> f64 {
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let m = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// A linear axis over `lo..hi` widened to whole steps: (lo, hi, step).
fn linear_axis(lo: f64, hi: f64) -> (f64, f64, f64) {
    let (lo, hi) = if hi > lo {
        (lo, hi)
    } else {
        (lo - 1.0, hi + 1.0)
    };
    let step = nice_step((hi - lo) / 8.0);
    ((lo / step).floor() * step, (hi / step).ceil() * step, step)
}

fn tick_label(v: f64, step: f64) -> String {
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    let s = format!("{v:.decimals$}");
    if s.trim_start_matches('-')
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        "0".to_string()
    } else {
        s
    }
}

pub fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
    /// (value, label)
    ticks: Vec<(f64, String)>,
}

impl Axis {
    /// An axis over the values, with 5 % room beyond them if `headroom` (not below 0 with
    /// `zero`).
    fn linear(values: impl Iterator<Item = f64>, zero: bool, headroom: bool) -> Axis {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values.filter(|v| v.is_finite()) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if lo > hi {
            (lo, hi) = (0.0, 1.0);
        }
        if zero {
            lo = lo.min(0.0);
            hi = hi.max(0.0);
        }
        if headroom && hi > lo {
            let room = (hi - lo) * 0.05;
            hi += room;
            if !zero {
                lo -= room;
            }
        }
        let (lo, hi, step) = linear_axis(lo, hi);
        let n = ((hi - lo) / step).round() as usize;
        let ticks = (0..=n)
            .map(|i| {
                let v = lo + step * i as f64;
                (v, tick_label(v, step))
            })
            .collect();
        Axis {
            lo,
            hi,
            log: false,
            ticks,
        }
    }

    fn log(values: impl Iterator<Item = f64>) -> Axis {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values.filter(|v| v.is_finite() && *v > 0.0) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if lo > hi {
            (lo, hi) = (1.0, 10.0);
        }
        let (a, mut b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
        if b <= a {
            b = a + 1;
        }
        let ticks = (a..=b)
            .map(|k| {
                let v = 10f64.powi(k);
                (v, format!("{v:.*}", (-k).max(0) as usize))
            })
            .collect();
        Axis {
            lo: 10f64.powi(a),
            hi: 10f64.powi(b),
            log: true,
            ticks,
        }
    }

    /// Where `v` falls between 0 (lo) and 1 (hi).
    fn frac(&self, v: f64) -> f64 {
        if self.log {
            (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        }
    }
}

impl Plot {
    pub fn svg(&self) -> String {
        let xs = || {
            self.series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.0))
                .chain(self.v_rules.iter().map(|r| r.at))
        };
        let ys = || {
            self.series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.1))
                .chain(self.h_rules.iter().map(|r| r.at))
        };
        let xa = if self.x_log {
            Axis::log(xs())
        } else {
            Axis::linear(xs(), true, false)
        };
        let ya = match self.y_range {
            Some((lo, hi)) => Axis::linear([lo, hi].into_iter(), false, false),
            None => Axis::linear(ys(), self.y_zero, true),
        };
        let px = |x: f64| LEFT + (W - LEFT - RIGHT) * xa.frac(x);
        let py = |y: f64| H - BOTTOM - (H - TOP - BOTTOM) * ya.frac(y);
        let (x0, x1, y0, y1) = (LEFT, W - RIGHT, H - BOTTOM, TOP);

        let mut s = String::new();
        let _ = writeln!(
            s,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" \
             font-family=\"sans-serif\" font-size=\"12\">"
        );
        let _ = writeln!(
            s,
            "<rect x=\"0\" y=\"0\" width=\"{W}\" height=\"{H}\" fill=\"white\"/>\n\
             <text x=\"{}\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">{}</text>",
            (x0 + x1) / 2.0,
            xml(&self.title)
        );
        for (v, label) in &xa.ticks {
            let x = px(*v);
            let _ = writeln!(
                s,
                "<line x1=\"{x:.1}\" y1=\"{y1}\" x2=\"{x:.1}\" y2=\"{y0}\" stroke=\"#e0e0e0\"/>\
                 <text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                y0 + 16.0,
                xml(label)
            );
        }
        for (v, label) in &ya.ticks {
            let y = py(*v);
            let _ = writeln!(
                s,
                "<line x1=\"{x0}\" y1=\"{y:.1}\" x2=\"{x1}\" y2=\"{y:.1}\" stroke=\"#e0e0e0\"/>\
                 <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                x0 - 6.0,
                y + 4.0,
                xml(label)
            );
        }
        let _ = writeln!(
            s,
            "<line x1=\"{x0}\" y1=\"{y0}\" x2=\"{x1}\" y2=\"{y0}\" stroke=\"black\"/>\
             <line x1=\"{x0}\" y1=\"{y0}\" x2=\"{x0}\" y2=\"{y1}\" stroke=\"black\"/>\n\
             <text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n\
             <text x=\"16\" y=\"{}\" transform=\"rotate(-90 16 {})\" text-anchor=\"middle\">{}</text>",
            (x0 + x1) / 2.0,
            H - 12.0,
            xml(&self.x_label),
            (y0 + y1) / 2.0,
            (y0 + y1) / 2.0,
            xml(&self.y_label)
        );
        for r in &self.h_rules {
            let y = py(r.at);
            let _ = writeln!(
                s,
                "<line x1=\"{x0}\" y1=\"{y:.1}\" x2=\"{x1}\" y2=\"{y:.1}\" stroke=\"{}\" \
                 stroke-dasharray=\"6 4\"/><text x=\"{}\" y=\"{:.1}\" fill=\"{}\">{}</text>",
                r.colour,
                x0 + 4.0,
                y - 4.0,
                r.colour,
                xml(&r.label)
            );
        }
        for r in &self.v_rules {
            if self.x_log && r.at <= 0.0 {
                continue;
            }
            let x = px(r.at);
            let _ = writeln!(
                s,
                "<line x1=\"{x:.1}\" y1=\"{y0}\" x2=\"{x:.1}\" y2=\"{y1}\" stroke=\"{}\" \
                 stroke-dasharray=\"6 4\"/><text x=\"{:.1}\" y=\"{}\" fill=\"{}\">{}</text>",
                r.colour,
                x + 4.0,
                y1 + 12.0,
                r.colour,
                xml(&r.label)
            );
        }
        for (i, se) in self.series.iter().enumerate() {
            let pts: Vec<String> = se
                .points
                .iter()
                .filter(|p| p.0.is_finite() && p.1.is_finite() && (!self.x_log || p.0 > 0.0))
                .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
                .collect();
            let _ = writeln!(
                s,
                "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\">\
                 <title>{}</title></polyline>",
                se.colour,
                pts.join(" "),
                xml(&se.name)
            );
            if let [one] = pts.as_slice() {
                let (cx, cy) = one.split_once(',').unwrap_or(("0", "0"));
                let _ = writeln!(
                    s,
                    "<circle cx=\"{cx}\" cy=\"{cy}\" r=\"3\" fill=\"{}\"/>",
                    se.colour
                );
            }
            let ly = TOP + 10.0 + 20.0 * i as f64;
            let _ = writeln!(
                s,
                "<line x1=\"{}\" y1=\"{ly}\" x2=\"{}\" y2=\"{ly}\" stroke=\"{}\" stroke-width=\"2\"/>\
                 <text x=\"{}\" y=\"{}\">{}</text>",
                x1 + 12.0,
                x1 + 36.0,
                se.colour,
                x1 + 42.0,
                ly + 4.0,
                xml(&se.name)
            );
        }
        if let Some(note) = &self.note {
            let _ = writeln!(
                s,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#555555\">{}</text>",
                (x0 + x1) / 2.0,
                (y0 + y1) / 2.0,
                xml(note)
            );
        }
        s.push_str("</svg>\n");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_end_on_round_ticks() {
        assert_eq!(nice_step(0.7), 1.0);
        assert_eq!(nice_step(13.0), 20.0);
        assert_eq!(nice_step(300.0), 500.0);
        let a = Axis::linear([48.2, 81.9].into_iter(), false, false);
        assert_eq!((a.lo, a.hi), (45.0, 85.0));
        assert_eq!(a.ticks.first().unwrap().1, "45");
        let a = Axis::linear([60.0, 80.0].into_iter(), false, true);
        assert_eq!((a.lo, a.hi, a.ticks.len()), (55.0, 85.0, 7));
        let a = Axis::linear([0.0, 1.0].into_iter(), false, false);
        assert_eq!((a.lo, a.hi), (0.0, 1.0));
        let a = Axis::linear([0.0, 0.3].into_iter(), true, false);
        assert_eq!(a.ticks[1].1, "0.05");
        let a = Axis::log([3.0, 4000.0].into_iter());
        assert_eq!((a.lo, a.hi, a.ticks.len()), (1.0, 10000.0, 5));
        let a = Axis::log([0.05].into_iter());
        assert_eq!((a.lo, a.hi), (0.01, 0.1));
        assert_eq!(a.ticks[0].1, "0.01");
    }
}
