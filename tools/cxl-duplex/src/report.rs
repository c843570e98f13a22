// SPDX-License-Identifier: GPL-2.0

//! Results: a human table, JSON, and the bandwidth-against-read-ratio plot of CXLAimPod's
//! Figures 2 and 4 (one line per node, pattern and thread count).

use std::fmt::Write;

/// One measurement.
#[derive(Clone, Debug, Default)]
pub struct Row {
    /// `bandwidth`, `latency-idle` or `latency-loaded`.
    pub kind: &'static str,
    /// NUMA node of the buffer.
    pub node: u32,
    /// `seq` or `rand`.
    pub pattern: &'static str,
    /// Bytes per operation.
    pub block: u64,
    /// Worker threads (for loaded latency: the load's).
    pub threads: u32,
    /// Reads in percent.
    pub read_percent: u32,
    /// GB/s (1e9 bytes per second), reads and writes together; of the load for loaded latency.
    pub gbps: f64,
    /// GB/s read.
    pub read_gbps: f64,
    /// GB/s written.
    pub write_gbps: f64,
    /// Nanoseconds per dependent load (latency rows).
    pub latency_ns: Option<f64>,
    /// Operations.
    pub ops: u64,
    /// Milliseconds measured.
    pub elapsed_ms: f64,
    /// Sum of every word read (proves the reads happened).
    pub checksum: u64,
    /// Bookkeeping per operation, nanoseconds.
    pub accounting_ns: f64,
    /// Time per operation per thread, nanoseconds.
    pub op_ns: f64,
}

impl Row {
    /// The bookkeeping's share of an operation's time.
    pub fn accounting_share(&self) -> f64 {
        if self.op_ns > 0.0 {
            self.accounting_ns / self.op_ns
        } else {
            0.0
        }
    }
}

/// The rows as a table.
pub fn table(rows: &[Row]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<15} {:>4} {:>4} {:>8} {:>7} {:>5} {:>9} {:>9} {:>9} {:>10} {:>8} {:>9}",
        "kind",
        "node",
        "pat",
        "block",
        "threads",
        "read%",
        "GB/s",
        "read",
        "write",
        "latency_ns",
        "op_ns",
        "acct"
    );
    for r in rows {
        let _ = writeln!(
            s,
            "{:<15} {:>4} {:>4} {:>8} {:>7} {:>5} {:>9.3} {:>9.3} {:>9.3} {:>10} {:>8.1} {:>8.1}%",
            r.kind,
            r.node,
            r.pattern,
            r.block,
            r.threads,
            r.read_percent,
            r.gbps,
            r.read_gbps,
            r.write_gbps,
            r.latency_ns.map_or("-".to_string(), |l| format!("{l:.1}")),
            r.op_ns,
            100.0 * r.accounting_share()
        );
    }
    s
}

/// The rows as a JSON array.
pub fn json(rows: &[Row]) -> String {
    let items: Vec<String> =
        rows.iter()
            .map(|r| {
                format!(
                "  {{\"kind\":\"{}\",\"node\":{},\"pattern\":\"{}\",\"block\":{},\"threads\":{},\
                 \"read_percent\":{},\"gbps\":{:.4},\"read_gbps\":{:.4},\"write_gbps\":{:.4},\
                 \"latency_ns\":{},\"ops\":{},\"elapsed_ms\":{:.2},\"checksum\":{},\
                 \"accounting_ns_per_op\":{:.2},\"op_ns\":{:.2}}}",
                r.kind,
                r.node,
                r.pattern,
                r.block,
                r.threads,
                r.read_percent,
                r.gbps,
                r.read_gbps,
                r.write_gbps,
                r.latency_ns.map_or("null".to_string(), |l| format!("{l:.2}")),
                r.ops,
                r.elapsed_ms,
                r.checksum,
                r.accounting_ns,
                r.op_ns
            )
            })
            .collect();
    format!("[\n{}\n]\n", items.join(",\n"))
}

/// A plotted line: node, pattern, threads.
type SeriesKey<'a> = (u32, &'a str, u32);

const COLOURS: [&str; 6] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf",
];

/// Bandwidth against read ratio, one line per (node, pattern, threads); `None` without
/// bandwidth rows.
pub fn svg(rows: &[Row], title: &str) -> Option<String> {
    let bw: Vec<&Row> = rows.iter().filter(|r| r.kind == "bandwidth").collect();
    let max = bw.iter().map(|r| r.gbps).fold(0.0f64, f64::max);
    if bw.is_empty() || max <= 0.0 {
        return None;
    }
    let mut series: Vec<(SeriesKey<'_>, Vec<(u32, f64)>)> = Vec::new();
    for r in &bw {
        let k = (r.node, r.pattern, r.threads);
        match series.iter_mut().find(|s| s.0 == k) {
            Some(s) => s.1.push((r.read_percent, r.gbps)),
            None => series.push((k, vec![(r.read_percent, r.gbps)])),
        }
    }
    let (w, h, left, right, top, bottom) = (640.0, 400.0, 70.0, 170.0, 40.0, 50.0);
    let x = |p: u32| left + (w - left - right) * f64::from(p) / 100.0;
    let y = |g: f64| h - bottom - (h - top - bottom) * g / (max * 1.1);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">"
    );
    let _ = writeln!(
        s,
        "<text x=\"{}\" y=\"20\" text-anchor=\"middle\" font-size=\"14\">{title}</text>",
        w / 2.0
    );
    let _ = writeln!(
        s,
        "<line x1=\"{left}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/><line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{}\" stroke=\"black\"/>",
        h - bottom,
        w - right,
        h - bottom,
        h - bottom
    );
    for p in (0..=100).step_by(20) {
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{p}</text>",
            x(p),
            h - bottom + 16.0
        );
    }
    for i in 0..=4 {
        let g = max * 1.1 * f64::from(i) / 4.0;
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{g:.1}</text>",
            left - 6.0,
            y(g) + 4.0
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">reads (%)</text><text x=\"16\" y=\"{}\" transform=\"rotate(-90 16 {})\" text-anchor=\"middle\">GB/s</text>",
        (left + w - right) / 2.0,
        h - 12.0,
        h / 2.0,
        h / 2.0
    );
    for (i, ((node, pat, threads), pts)) in series.iter().enumerate() {
        let c = COLOURS[i % COLOURS.len()];
        let mut pts = pts.clone();
        pts.sort_by_key(|p| p.0);
        let path: Vec<String> = pts
            .iter()
            .map(|(p, g)| format!("{:.1},{:.1}", x(*p), y(*g)))
            .collect();
        let _ = writeln!(
            s,
            "<polyline fill=\"none\" stroke=\"{c}\" stroke-width=\"2\" points=\"{}\"/>",
            path.join(" ")
        );
        let ly = top + 18.0 * i as f64;
        let _ = writeln!(
            s,
            "<line x1=\"{}\" y1=\"{ly}\" x2=\"{}\" y2=\"{ly}\" stroke=\"{c}\" stroke-width=\"2\"/><text x=\"{}\" y=\"{}\">node {node} {pat} {threads} thr</text>",
            w - right + 10.0,
            w - right + 30.0,
            w - right + 35.0,
            ly + 4.0
        );
    }
    s.push_str("</svg>\n");
    Some(s)
}
