// SPDX-License-Identifier: GPL-2.0

//! What every plot draws around its data: the page, the title, the ticks and grid, the axes
//! and their labels, the legend and a note; and the shapes plots share (error bars).

use std::fmt::Write;

use super::axis::Axis;

const W: f64 = 820.0;
const H: f64 = 420.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 240.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 50.0;

pub fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// An SVG being written, and the axes that place its data.
pub struct Frame {
    pub xa: Axis,
    pub ya: Axis,
    s: String,
}

impl Frame {
    /// The page and the title.
    pub fn new(title: &str, xa: Axis, ya: Axis) -> Frame {
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
            (LEFT + W - RIGHT) / 2.0,
            xml(title)
        );
        Frame { xa, ya, s }
    }

    pub fn px(&self, x: f64) -> f64 {
        LEFT + (W - LEFT - RIGHT) * self.xa.frac(x)
    }

    pub fn py(&self, y: f64) -> f64 {
        H - BOTTOM - (H - TOP - BOTTOM) * self.ya.frac(y)
    }

    /// The plotting area: (left, right, bottom, top) in pixels.
    pub fn area(&self) -> (f64, f64, f64, f64) {
        (LEFT, W - RIGHT, H - BOTTOM, TOP)
    }

    /// Raw SVG.
    pub fn push(&mut self, svg: &str) {
        self.s.push_str(svg);
    }

    /// The ticks' labels, with grid lines across the plot unless `x_grid` is false (categories).
    pub fn ticks(&mut self, x_grid: bool) {
        let (x0, x1, y0, y1) = self.area();
        for (v, label) in &self.xa.ticks {
            let x = self.px(*v);
            if x_grid {
                let _ = write!(
                    self.s,
                    "<line x1=\"{x:.1}\" y1=\"{y1}\" x2=\"{x:.1}\" y2=\"{y0}\" stroke=\"#e0e0e0\"/>"
                );
            }
            let _ = writeln!(
                self.s,
                "<text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                y0 + 16.0,
                xml(label)
            );
        }
        for (v, label) in &self.ya.ticks {
            let y = self.py(*v);
            let _ = writeln!(
                self.s,
                "<line x1=\"{x0}\" y1=\"{y:.1}\" x2=\"{x1}\" y2=\"{y:.1}\" stroke=\"#e0e0e0\"/>\
                 <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                x0 - 6.0,
                y + 4.0,
                xml(label)
            );
        }
    }

    /// The axes' lines and labels.
    pub fn axes(&mut self, x_label: &str, y_label: &str) {
        let (x0, x1, y0, y1) = self.area();
        let _ = writeln!(
            self.s,
            "<line x1=\"{x0}\" y1=\"{y0}\" x2=\"{x1}\" y2=\"{y0}\" stroke=\"black\"/>\
             <line x1=\"{x0}\" y1=\"{y0}\" x2=\"{x0}\" y2=\"{y1}\" stroke=\"black\"/>\n\
             <text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n\
             <text x=\"16\" y=\"{}\" transform=\"rotate(-90 16 {})\" text-anchor=\"middle\">{}</text>",
            (x0 + x1) / 2.0,
            H - 12.0,
            xml(x_label),
            (y0 + y1) / 2.0,
            (y0 + y1) / 2.0,
            xml(y_label)
        );
    }

    /// The `i`th entry of the legend, right of the plot: a swatch (a line, dashed as `dash`
    /// says if any) and the name.
    pub fn legend(&mut self, i: usize, colour: &str, name: &str, dash: Option<&str>) {
        let (_, x1, _, _) = self.area();
        let ly = TOP + 10.0 + 20.0 * i as f64;
        let dash = dash.map_or(String::new(), |d| format!(" stroke-dasharray=\"{d}\""));
        let _ = writeln!(
            self.s,
            "<line x1=\"{}\" y1=\"{ly}\" x2=\"{}\" y2=\"{ly}\" stroke=\"{colour}\" stroke-width=\"2\"{dash}/>\
             <text x=\"{}\" y=\"{}\">{}</text>",
            x1 + 12.0,
            x1 + 36.0,
            x1 + 42.0,
            ly + 4.0,
            xml(name)
        );
    }

    /// A vertical bar from `lo` to `hi` at pixel `x`, with caps: an interval.
    pub fn error_bar(&mut self, x: f64, lo: f64, hi: f64, colour: &str) {
        if !(self.ya.takes(lo) && self.ya.takes(hi)) {
            return;
        }
        let (ylo, yhi) = (self.py(lo), self.py(hi));
        let _ = writeln!(
            self.s,
            "<path d=\"M{x:.1},{ylo:.1}V{yhi:.1}M{:.1},{ylo:.1}H{:.1}M{:.1},{yhi:.1}H{:.1}\" \
             stroke=\"{colour}\" fill=\"none\"/>",
            x - 3.0,
            x + 3.0,
            x - 3.0,
            x + 3.0
        );
    }

    /// A line of text in the middle of the plot.
    pub fn note(&mut self, note: &str) {
        let (x0, x1, y0, y1) = self.area();
        let _ = writeln!(
            self.s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#555555\">{}</text>",
            (x0 + x1) / 2.0,
            (y0 + y1) / 2.0,
            xml(note)
        );
    }

    pub fn finish(mut self) -> String {
        self.s.push_str("</svg>\n");
        self.s
    }
}
