// SPDX-License-Identifier: GPL-2.0

//! `table.txt`: a row per round and paradigm, then the paradigms over their rounds, the
//! ratios, the migrations' phases, the paper's targets, the sweeps and the info lines.

use std::fmt::Write;

use crate::log::{Fields, Value, PARADIGMS};

use super::migrations::Direction;
use super::rounds::Rounds;
use super::summary::Summary;
use super::sweep::{Metric, Sweep};
use super::Report;

fn opt(v: Option<f64>, decimals: usize) -> String {
    v.map_or("-".to_string(), |v| format!("{v:.decimals$}"))
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |f| format!("{:.1} %", 100.0 * f))
}

/// The header of the rows, and each row, in the same widths.
const ROW_HEADER: [&str; 12] = [
    "round",
    "paradigm",
    "steady MB/s",
    "fio MB/s",
    "max °C",
    "steady max °C",
    "throttled",
    "collapse",
    "migrations",
    "move med µs",
    "move p99 µs",
    "fio verify",
];

fn row_line(c: &[String]) -> String {
    format!(
        "{:<5} {:<12} {:>11} {:>9} {:>7} {:>13} {:>9} {:>8} {:>10} {:>11} {:>11}  {}",
        c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10], c[11]
    )
}

fn row(s: &Summary<'_>) -> String {
    let mut verify = s.verify().to_string();
    if let Some(e) = s.p.fio.as_ref().and_then(|f| f.errors).filter(|e| *e > 0.0) {
        let _ = write!(verify, ", errors={e}");
    }
    row_line(&[
        s.p.round.to_string(),
        s.p.name.clone(),
        opt(s.steady_mbps, 1),
        opt(s.p.fio.as_ref().map(|f| f.bw_mbps), 1),
        opt(s.max_temp_c, 1),
        opt(s.steady_max_temp_c, 1),
        pct(s.throttled_fraction),
        pct(s.collapse.and_then(|c| c.fraction())),
        s.p.migrations.len().to_string(),
        opt(s.move_ns.map(|d| d.median / 1000.0), 2),
        opt(s.move_ns.map(|d| d.p99 / 1000.0), 2),
        verify,
    ])
}

fn over_rounds(out: &mut String, r: &Rounds<'_>) {
    let collapse = match (&r.collapse.ci, r.collapse.mean) {
        (Some(ci), _) => format!(
            "{:.1} % [{:.1}, {:.1}]",
            100.0 * ci.value,
            100.0 * ci.lo,
            100.0 * ci.hi
        ),
        (None, m) => pct(m),
    };
    let _ = writeln!(
        out,
        "{:<12} {:>6}  {:<26} {:<24} {:>11} {:>7}",
        r.name,
        r.rounds.len(),
        r.steady_mbps.render(1),
        collapse,
        opt(r.peak_temp_c.as_ref().map(|p| p.median), 1),
        opt(r.peak_temp_c.as_ref().map(|p| p.max), 1),
    );
}

fn direction(out: &mut String, name: &str, d: &Direction) {
    for s in &d.phases {
        let median = match s.median_ci {
            Some(ci) => ci.scaled(1000.0).render(2),
            None => format!("{:.2}", s.median / 1000.0),
        };
        let _ = writeln!(
            out,
            "{:<12} {:<15} {:<9} {:>4}  {:<28} {:>10.2} {:>10}",
            name,
            d.label(),
            s.phase.name(),
            d.n,
            median,
            s.p99 / 1000.0,
            opt(s.native_median.map(|v| v / 1000.0), 3),
        );
    }
}

fn info(f: &Fields) -> String {
    f.iter()
        .map(|(k, v)| match v {
            Value::Num(n) => format!("{k}={n}"),
            Value::Str(s) => format!("{k}={s}"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn sweep(out: &mut String, s: &Sweep<'_>) {
    let _ = writeln!(
        out,
        "\nsweep {} ({}): means over the reps [95 % interval]",
        s.suite.name(),
        s.suite.title()
    );
    let _ = writeln!(
        out,
        "{:<12} {:<9} {:>8} {:>4} {:<7} {:>4}  {:<26} {:<26} {:<26} verify",
        "paradigm", "rw", "bs", "qd", "dist", "reps", "MB/s", "IOPS", "host CPU ms/GiB"
    );
    for g in &s.groups {
        let _ = writeln!(
            out,
            "{:<12} {:<9} {:>8} {:>4} {:<7} {:>4}  {:<26} {:<26} {:<26} {}",
            g.paradigm,
            g.cond.rw.name(),
            g.cond.bs,
            g.cond.qd,
            g.cond.dist.name(),
            g.points.len(),
            g.get(Metric::BwMbps).render(1),
            g.get(Metric::Iops).render(0),
            g.get(Metric::CpuNsPerGib).render_in(1e6, 1),
            if g.verify_ok() { "ok" } else { "fail" }
        );
    }
    if s.ratios.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "C against B and H in {}, paired by rep:",
        s.metric().label()
    );
    for r in &s.ratios {
        let vs: Vec<String> =
            r.vs.iter()
                .map(|(b, p)| format!("C/{b} {}", p.as_ref().map_or("-".into(), |p| p.render())))
                .collect();
        let c = r.cond;
        let _ = writeln!(
            out,
            "{:<9} {:>8} {:>4} {:<7}  {}",
            c.rw.name(),
            c.bs,
            c.qd,
            c.dist.name(),
            vs.join("   ")
        );
    }
}

impl Report<'_> {
    fn rows(&self, out: &mut String) {
        let _ = writeln!(out, "{}", row_line(&ROW_HEADER.map(String::from)));
        let mut blocks: Vec<&Summary> = self.paradigms.iter().flat_map(|r| &r.rounds).collect();
        // Stable: within a round, the paradigms stay in report order.
        blocks.sort_by_key(|s| s.p.round);
        for s in blocks {
            let _ = writeln!(out, "{}", row(s));
        }
        let missing: Vec<&str> = PARADIGMS
            .iter()
            .copied()
            .filter(|n| self.get(n).is_none())
            .collect();
        if !missing.is_empty() {
            let _ = writeln!(out, "did not run: {}", missing.join(", "));
        }
    }

    fn ratios_text(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "\nsteady MB/s ratios: of the means over the rounds both ran [95 % paired bootstrap]"
        );
        for c in &self.comparisons {
            let Some(p) = &c.paired else {
                let _ = writeln!(out, "{:<14} -", c.key());
                continue;
            };
            let each: Vec<String> = p.each.iter().map(|(_, r)| format!("{r:.3}")).collect();
            let _ = writeln!(
                out,
                "{:<14} {:<40} per round: {}",
                c.key(),
                p.render(),
                each.join(" ")
            );
        }
    }

    fn migrations_text(&self, out: &mut String) {
        let with: Vec<&Rounds> = self
            .paradigms
            .iter()
            .filter(|r| !r.migrations.is_empty())
            .collect();
        if with.is_empty() {
            return;
        }
        let _ = writeln!(
            out,
            "\nmigrations, pooled over the rounds (µs; median [95 % interval], p99{}):",
            match self.dilation {
                Some(d) => format!("; native = median / D, D = {:.2}", d.factor()),
                None => String::new(),
            }
        );
        let _ = writeln!(
            out,
            "{:<12} {:<15} {:<9} {:>4}  {:<28} {:>10} {:>10}",
            "paradigm", "direction", "phase", "n", "median", "p99", "native"
        );
        for r in with {
            for d in r.phases.directions.iter().filter(|d| d.n > 0) {
                direction(out, r.name, d);
            }
        }
    }

    fn targets_text(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "\n{:<62} {:>22}  verdict",
            "target (paper)", "measured"
        );
        for t in self.targets() {
            let verdict = match t.pass {
                Some(true) => "pass",
                Some(false) => "miss",
                None => "n/a",
            };
            let _ = writeln!(out, "{:<62} {:>22}  {verdict}", t.what, t.shown);
        }
    }

    fn info_text(&self, out: &mut String) {
        let blocks = self.paradigms.iter().flat_map(|r| &r.rounds);
        if !self.bench.info.is_empty() || blocks.clone().any(|s| !s.p.info.is_empty()) {
            out.push('\n');
        }
        if !self.bench.info.is_empty() {
            let _ = writeln!(out, "info: {}", info(&self.bench.info));
        }
        if let Some(d) = self.dilation {
            let _ = writeln!(
                out,
                "dilation D = calib_guest_ns / calib_host_ns = {} / {} = {:.3}",
                d.guest_ns,
                d.host_ns,
                d.factor()
            );
        }
        for s in blocks.filter(|s| !s.p.info.is_empty()) {
            let _ = writeln!(
                out,
                "info {} round {}: {}",
                s.p.name,
                s.p.round,
                info(&s.p.info)
            );
        }
    }

    /// `table.txt`.
    pub fn table(&self) -> String {
        let mut out = String::new();
        if !self.paradigms.is_empty() {
            self.rows(&mut out);
            let _ = writeln!(
                out,
                "\n{:<12} {:>6}  {:<26} {:<24} {:>11} {:>7}",
                "over rounds",
                "rounds",
                "steady MB/s [95 %]",
                "collapse [95 %]",
                "peak °C med",
                "max"
            );
            for r in &self.paradigms {
                over_rounds(&mut out, r);
            }
            self.ratios_text(&mut out);
            self.migrations_text(&mut out);
            self.targets_text(&mut out);
        }
        for s in &self.sweeps {
            sweep(&mut out, s);
        }
        self.info_text(&mut out);
        // Without a paradigm the sweeps come first: no blank line above them.
        out.trim_start_matches('\n').to_string()
    }
}
