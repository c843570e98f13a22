// SPDX-License-Identifier: GPL-2.0

//! A grouped bar chart: a group per category along x, a bar per series in each, with an
//! error bar where the value has an interval.

use super::axis::Axis;
use super::frame::{xml, Frame};

/// A bar's height and, if known, its interval (low, high).
pub type Bar = Option<(f64, Option<(f64, f64)>)>;

/// One series: a bar in each group (`None` where it has no value there).
pub struct BarSeries {
    pub name: String,
    pub colour: &'static str,
    /// One per group, in the groups' order.
    pub bars: Vec<Bar>,
}

pub struct BarChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub groups: Vec<String>,
    pub series: Vec<BarSeries>,
}

/// The share of a group's width left empty on each side.
const PAD: f64 = 0.1;

impl BarChart {
    fn y_axis(&self) -> Axis {
        let ys = self.series.iter().flat_map(|s| {
            s.bars.iter().flatten().flat_map(|(v, ci)| {
                let (lo, hi) = ci.unwrap_or((*v, *v));
                [*v, lo, hi]
            })
        });
        Axis::linear(ys, true, true)
    }

    pub fn svg(&self) -> String {
        let mut f = Frame::new(&self.title, Axis::categories(&self.groups), self.y_axis());
        f.ticks(false);
        let width = (1.0 - 2.0 * PAD) / self.series.len().max(1) as f64;
        let y0 = f.py(0.0);
        for (j, se) in self.series.iter().enumerate() {
            for (g, bar) in se.bars.iter().enumerate() {
                let Some((v, ci)) = bar else { continue };
                if !v.is_finite() {
                    continue;
                }
                let left = g as f64 + PAD + width * j as f64;
                let (x0, x1, y) = (f.px(left), f.px(left + width), f.py(*v));
                f.push(&format!(
                    "<rect x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\">\
                     <title>{}: {v:.1}</title></rect>\n",
                    y.min(y0),
                    x1 - x0,
                    (y0 - y).abs(),
                    se.colour,
                    xml(&se.name)
                ));
                if let Some((lo, hi)) = ci {
                    f.error_bar((x0 + x1) / 2.0, *lo, *hi, "#000000");
                }
            }
            f.legend(j, se.colour, &se.name, None);
        }
        f.axes(&self.x_label, &self.y_label);
        f.finish()
    }
}
