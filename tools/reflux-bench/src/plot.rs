// SPDX-License-Identifier: GPL-2.0

//! Plots as hand-written SVG. A line plot (this file): polylines with a legend, a shaded band
//! or error bars around a line, dashed reference lines, a linear or logarithmic x axis; a bar
//! chart by category (`bars`).

mod axis;
pub mod bars;
mod frame;

use std::fmt::Write;

pub use axis::Scale;
pub use frame::xml;

use axis::Axis;
use frame::Frame;

/// One line of the plot. Its polyline carries its name as a `<title>` (a tooltip).
#[derive(Default)]
pub struct Series {
    pub name: String,
    pub colour: &'static str,
    pub points: Vec<(f64, f64)>,
    /// A dash pattern (`"6 3"`), to tell apart lines of one colour.
    pub dash: Option<&'static str>,
    /// (x, low, high): a shaded band around the line (the spread of the rounds it averages).
    pub band: Vec<(f64, f64, f64)>,
    /// (x, low, high): an error bar at each point (an interval).
    pub errors: Vec<(f64, f64, f64)>,
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
    /// The x axis; on a logarithmic one points at x ≤ 0 are left out.
    pub x_scale: Scale,
    /// The y axis; on a logarithmic one values ≤ 0 do not set its range (`y_zero` and
    /// `y_range` apply to a linear one only).
    pub y_scale: Scale,
    /// Start the y axis at 0 (else a little below the smallest value, on a tick).
    pub y_zero: bool,
    /// A fixed y range instead (e.g. 0 to 1 for a CDF).
    pub y_range: Option<(f64, f64)>,
    /// A line of text in the middle of the plot (e.g. why it is empty).
    pub note: Option<String>,
}

impl Plot {
    fn axes(&self) -> (Axis, Axis) {
        let xs = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0))
            .chain(self.v_rules.iter().map(|r| r.at));
        let xa = match self.x_scale {
            Scale::Linear => Axis::linear(xs, true, false),
            log => Axis::log(xs, log),
        };
        let ys = self
            .series
            .iter()
            .flat_map(|s| {
                let spread = s.band.iter().chain(&s.errors);
                s.points
                    .iter()
                    .map(|p| p.1)
                    .chain(spread.flat_map(|b| [b.1, b.2]))
            })
            .chain(self.h_rules.iter().map(|r| r.at));
        let ya = match (self.y_scale, self.y_range) {
            (Scale::Linear, Some((lo, hi))) => Axis::linear([lo, hi].into_iter(), false, false),
            (Scale::Linear, None) => Axis::linear(ys, self.y_zero, true),
            (log, _) => Axis::log(ys.filter(|y| *y > 0.0), log),
        };
        (xa, ya)
    }

    fn rules(&self, f: &mut Frame) {
        let (x0, x1, y0, y1) = f.area();
        for r in &self.h_rules {
            let y = f.py(r.at);
            f.push(&format!(
                "<line x1=\"{x0}\" y1=\"{y:.1}\" x2=\"{x1}\" y2=\"{y:.1}\" stroke=\"{c}\" \
                 stroke-dasharray=\"6 4\"/><text x=\"{}\" y=\"{:.1}\" fill=\"{c}\">{}</text>\n",
                x0 + 4.0,
                y - 4.0,
                xml(&r.label),
                c = r.colour,
            ));
        }
        let v_rules: Vec<&Rule> = self.v_rules.iter().filter(|r| f.xa.takes(r.at)).collect();
        for r in v_rules {
            let x = f.px(r.at);
            f.push(&format!(
                "<line x1=\"{x:.1}\" y1=\"{y0}\" x2=\"{x:.1}\" y2=\"{y1}\" stroke=\"{c}\" \
                 stroke-dasharray=\"6 4\"/><text x=\"{:.1}\" y=\"{}\" fill=\"{c}\">{}</text>\n",
                x + 4.0,
                y1 + 12.0,
                xml(&r.label),
                c = r.colour,
            ));
        }
    }

    /// The band behind a line: a polygon along the highs and back along the lows.
    fn band(f: &mut Frame, se: &Series) {
        let ok: Vec<&(f64, f64, f64)> = se
            .band
            .iter()
            .filter(|b| f.xa.takes(b.0) && f.ya.takes(b.1) && f.ya.takes(b.2))
            .collect();
        if ok.len() < 2 {
            return;
        }
        let mut pts = String::new();
        for &&(x, _, hi) in &ok {
            let _ = write!(pts, "{:.1},{:.1} ", f.px(x), f.py(hi));
        }
        for &&(x, lo, _) in ok.iter().rev() {
            let _ = write!(pts, "{:.1},{:.1} ", f.px(x), f.py(lo));
        }
        f.push(&format!(
            "<polygon fill=\"{}\" fill-opacity=\"0.18\" stroke=\"none\" points=\"{}\"/>\n",
            se.colour,
            pts.trim_end()
        ));
    }

    fn line(f: &mut Frame, i: usize, se: &Series) {
        let pts: Vec<(f64, f64)> = se
            .points
            .iter()
            .filter(|p| f.xa.takes(p.0) && f.ya.takes(p.1))
            .map(|&(x, y)| (f.px(x), f.py(y)))
            .collect();
        let dash = se
            .dash
            .map_or(String::new(), |d| format!(" stroke-dasharray=\"{d}\""));
        let text: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
        f.push(&format!(
            "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{dash} points=\"{}\">\
             <title>{}</title></polyline>\n",
            se.colour,
            text.join(" "),
            xml(&se.name)
        ));
        if let [(cx, cy)] = pts.as_slice() {
            f.push(&format!(
                "<circle cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"3\" fill=\"{}\"/>\n",
                se.colour
            ));
        }
        for &(x, lo, hi) in &se.errors {
            if f.xa.takes(x) && f.ya.takes(lo) && f.ya.takes(hi) {
                let px = f.px(x);
                f.error_bar(px, lo, hi, se.colour);
            }
        }
        f.legend(i, se.colour, &se.name, se.dash);
    }

    pub fn svg(&self) -> String {
        let (xa, ya) = self.axes();
        let mut f = Frame::new(&self.title, xa, ya);
        f.ticks(true);
        f.axes(&self.x_label, &self.y_label);
        self.rules(&mut f);
        for se in &self.series {
            Self::band(&mut f, se);
        }
        for (i, se) in self.series.iter().enumerate() {
            Self::line(&mut f, i, se);
        }
        if let Some(note) = &self.note {
            f.note(note);
        }
        f.finish()
    }
}
