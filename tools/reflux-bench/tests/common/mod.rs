// SPDX-License-Identifier: GPL-2.0

//! A made-up benchmark log, and checkers of the JSON and SVG the tool writes.

use reflux_bench::json::Json;

/// Three paradigms (C first, as the log may have them in any order), with noise around them.
///
/// A: 8 samples over 2 s; 100 MB/s up to 1 s, then 190, 200, 210, 200: steady 200 MB/s.
///    Throttled in 3 of 8 samples, hottest 82.5 °C (in the second half).
/// B: steady 250 MB/s (the sample at exactly 1000 ms, half of the run, is not in the second
///    half: its interval ends there).
/// C: steady 500 MB/s, hottest 78.5 °C in the first half, 74 °C in the second; five
///    migrations with move times 3, 4, 5, 6 and 100 µs and drains 1 to 5 µs.
/// C/B = 2, C/A = 2.5.
pub const LOG: &str = "\
boot noise
##cxlstack begin reflux.bench
##reflux-bench info duration_s=2 bs=128k qd=32 pipeline=compress+crc32c tau_ms=500
##reflux-bench begin C
##reflux-bench info mode=adaptive
##reflux-bench sample t_ms=250 mbps=300 temp_mc=60000 throttled=0 lz4=host crc32c=host inflight_permille=1000
##reflux-bench sample t_ms=500 mbps=300 temp_mc=78500 throttled=0 lz4=device crc32c=host inflight_permille=1000
##reflux-bench sample t_ms=750 mbps=300 temp_mc=70000 throttled=0 lz4=device crc32c=device inflight_permille=1000
##reflux-bench sample t_ms=1000 mbps=300 temp_mc=70000 throttled=0 lz4=device crc32c=device inflight_permille=1000
##reflux-bench sample t_ms=1250 mbps=400 temp_mc=72000 throttled=0 lz4=device crc32c=device inflight_permille=1000
##reflux-bench sample t_ms=1500 mbps=600 temp_mc=74000 throttled=0 lz4=device crc32c=device inflight_permille=1000
##reflux-bench sample t_ms=1750 mbps=500 temp_mc=73000 throttled=0 lz4=device crc32c=device inflight_permille=1000 queue=7
##reflux-bench sample t_ms=2000 mbps=500 temp_mc=73500 throttled=0 lz4=host crc32c=device inflight_permille=1000
##reflux-bench migration actor=2 from=host to=device drain_ns=3000 ckpt_ns=1000 handover_ns=3000 rebuild_ns=1000 total_ns=8000 t_ms=400
##reflux-bench migration actor=1 from=host to=device drain_ns=1000 ckpt_ns=1000 handover_ns=1000 rebuild_ns=1000 total_ns=4000 t_ms=600
##reflux-bench migration actor=2 from=device to=host drain_ns=5000 ckpt_ns=20000 handover_ns=70000 rebuild_ns=10000 total_ns=105000 t_ms=1900 reason=hot
##reflux-bench migration actor=1 from=device to=host drain_ns=2000 ckpt_ns=1000 handover_ns=2000 rebuild_ns=1000 total_ns=6000 t_ms=800
##reflux-bench migration actor=1 from=host to=device drain_ns=4000 ckpt_ns=2000 handover_ns=2000 rebuild_ns=2000 total_ns=10000 t_ms=1200
##reflux-bench fio bw_mbps=480.5 verify=ok errors=0
##reflux-bench end C
ok 1 paradigm C
# ##reflux-bench begin A
# ##reflux-bench sample t_ms=250 mbps=100 temp_mc=70000 throttled=0 lz4=host
# ##reflux-bench sample t_ms=500 mbps=100 temp_mc=75000 throttled=0 lz4=host
# ##reflux-bench sample t_ms=750 mbps=100 temp_mc=77000 throttled=0 lz4=host
# ##reflux-bench sample t_ms=1000 mbps=100 temp_mc=78000 throttled=1 lz4=host
# ##reflux-bench sample t_ms=1250 mbps=190 temp_mc=82500 throttled=1 lz4=host
# ##reflux-bench sample t_ms=1500 mbps=200 temp_mc=80000 throttled=1 lz4=host
# ##reflux-bench sample t_ms=1750 mbps=210 temp_mc=76000 throttled=0 lz4=host
# ##reflux-bench sample t_ms=2000 mbps=200 temp_mc=76000 throttled=0 lz4=host
# ##reflux-bench fio bw_mbps=190 verify=ok errors=0
# ##reflux-bench end A
ok 2 paradigm A
##reflux-bench begin B
##reflux-bench sample t_ms=500 mbps=250 temp_mc=60000 throttled=0 lz4=device
##reflux-bench sample t_ms=1000 mbps=999 temp_mc=61000 throttled=0 lz4=device
##reflux-bench sample t_ms=1500 mbps=240 temp_mc=62000 throttled=0 lz4=device
##reflux-bench sample t_ms=2000 mbps=260 temp_mc=62000 throttled=0 lz4=device\r
##reflux-bench fio bw_mbps=245 verify=ok errors=0
##reflux-bench end B
##reflux-benchmark is not ours
##cxlstack end reflux.bench rc=0
";

/// One round of paradigm `p`: a sample every 250 ms at each of `mbps`, the device at
/// `temp_c`, verified.
pub fn block(p: &str, round: u32, mbps: &[f64], temp_c: f64) -> String {
    let mut s = format!("##reflux-bench begin {p} round={round}\n");
    for (i, m) in mbps.iter().enumerate() {
        s += &format!(
            "##reflux-bench sample t_ms={} mbps={m} temp_mc={} throttled=0\n",
            250 * (i + 1),
            temp_c * 1000.0
        );
    }
    s += &format!(
        "##reflux-bench fio bw_mbps={} verify=ok\n",
        mbps.last().unwrap_or(&0.0)
    );
    s + &format!("##reflux-bench end {p}\n")
}

/// A sweep's point: `what` is `suite paradigm rw bs qd dist rep`, then its figures.
pub fn point(what: &str, bw_mbps: f64, iops: f64, cpu_ns_per_gib: f64, verify: &str) -> String {
    let w: Vec<&str> = what.split(' ').collect();
    format!(
        "##reflux-bench point suite={} paradigm={} rw={} bs={} qd={} dist={} rep={} \
         bw_mbps={bw_mbps} iops={iops} cpu_ns_per_gib={cpu_ns_per_gib} verify={verify}\n",
        w[0], w[1], w[2], w[3], w[4], w[5], w[6]
    )
}

/// The value at `path` in `j`.
pub fn at<'j>(j: &'j Json, path: &[&str]) -> &'j Json {
    let mut v = j;
    for k in path {
        v = v.get(k).unwrap_or_else(|| panic!("no {k} in {path:?}"));
    }
    v
}

/// The number at `path` in `j`.
pub fn num(j: &Json, path: &[&str]) -> f64 {
    let v = at(j, path);
    v.num().unwrap_or_else(|| panic!("{path:?} is {v:?}"))
}

/// Equal but for rounding.
pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// Parses JSON into the tool's own value (numbers, strings without exotic escapes).
pub fn parse_json(s: &str) -> Json {
    let mut p = P {
        s: s.as_bytes(),
        i: 0,
    };
    let v = p.value();
    p.ws();
    assert_eq!(p.i, p.s.len(), "trailing bytes after the JSON value");
    v
}

struct P<'a> {
    s: &'a [u8],
    i: usize,
}

impl P<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) {
        self.ws();
        assert_eq!(self.s[self.i] as char, c as char, "at byte {}", self.i);
        self.i += 1;
    }

    fn string(&mut self) -> String {
        self.eat(b'"');
        let mut out = Vec::new();
        loop {
            let c = self.s[self.i];
            self.i += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    let e = self.s[self.i];
                    self.i += 1;
                    out.push(match e {
                        b'n' => b'\n',
                        b't' => b'\t',
                        b'"' | b'\\' | b'/' => e,
                        _ => panic!("escape \\{}", e as char),
                    });
                }
                c => {
                    assert!(c >= 0x20, "raw control byte in a string");
                    out.push(c);
                }
            }
        }
        String::from_utf8(out).unwrap()
    }

    fn value(&mut self) -> Json {
        self.ws();
        match self.s[self.i] {
            b'{' => {
                self.i += 1;
                let mut f = Vec::new();
                self.ws();
                if self.s[self.i] == b'}' {
                    self.i += 1;
                    return Json::Obj(f);
                }
                loop {
                    let k = self.string();
                    self.eat(b':');
                    f.push((k, self.value()));
                    self.ws();
                    self.i += 1;
                    match self.s[self.i - 1] {
                        b',' => continue,
                        b'}' => return Json::Obj(f),
                        c => panic!("{} in an object at byte {}", c as char, self.i),
                    }
                }
            }
            b'[' => {
                self.i += 1;
                let mut a = Vec::new();
                self.ws();
                if self.s[self.i] == b']' {
                    self.i += 1;
                    return Json::Arr(a);
                }
                loop {
                    a.push(self.value());
                    self.ws();
                    self.i += 1;
                    match self.s[self.i - 1] {
                        b',' => continue,
                        b']' => return Json::Arr(a),
                        c => panic!("{} in an array at byte {}", c as char, self.i),
                    }
                }
            }
            b'"' => Json::Str(self.string()),
            _ => {
                let start = self.i;
                while self.i < self.s.len() && !b",]}\n ".contains(&self.s[self.i]) {
                    self.i += 1;
                }
                let w = std::str::from_utf8(&self.s[start..self.i]).unwrap();
                match w {
                    "null" => Json::Null,
                    "true" => Json::Bool(true),
                    "false" => Json::Bool(false),
                    _ => {
                        assert!(
                            w.bytes()
                                .all(|c| c.is_ascii_digit() || b"-+.eE".contains(&c)),
                            "not a JSON number: {w}"
                        );
                        Json::Num(w.parse().unwrap())
                    }
                }
            }
        }
    }
}

/// Checks that an SVG is one well-formed `<svg>` element: tags nest and close, attribute
/// values are quoted, text has no raw `<` or `&`.
pub fn check_svg(svg: &str) {
    assert!(svg.starts_with("<svg "), "{svg}");
    assert!(svg.trim_end().ends_with("</svg>"), "{svg}");
    let mut stack: Vec<&str> = Vec::new();
    let mut rest = svg;
    while let Some(open) = rest.find('<') {
        let text = &rest[..open];
        assert!(
            !text.contains('>')
                && text
                    .replace("&amp;", "")
                    .replace("&lt;", "")
                    .replace("&gt;", "")
                    .replace("&quot;", "")
                    .find('&')
                    .is_none(),
            "bad text {text:?}"
        );
        let close = rest[open..].find('>').expect("unclosed tag") + open;
        let tag = &rest[open + 1..close];
        assert_eq!(
            tag.matches('"').count() % 2,
            0,
            "unbalanced quotes in <{tag}>"
        );
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(
                stack.pop(),
                Some(name),
                "</{name}> closes the wrong element"
            );
        } else {
            let name = tag.split_whitespace().next().unwrap();
            if !tag.ends_with('/') {
                stack.push(name);
            }
        }
        if stack.is_empty() {
            assert!(rest[close + 1..].trim().is_empty(), "content after </svg>");
        }
        rest = &rest[close + 1..];
    }
    assert!(stack.is_empty(), "unclosed {stack:?}");
}

/// The polylines of an SVG, by their `<title>`.
pub fn polylines(svg: &str) -> Vec<String> {
    svg.split("<polyline ")
        .skip(1)
        .map(|p| {
            let t = p.split("<title>").nth(1).unwrap();
            t[..t.find("</title>").unwrap()].to_string()
        })
        .collect()
}
