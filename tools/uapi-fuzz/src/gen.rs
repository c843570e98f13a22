//! Generating programs: calls with arguments drawn from their domains and
//! references to earlier results, and a template of the documented usage
//! (open, CONFIGURE, mmap, LAUNCH, WAIT, consume and RELEASE) that the
//! random calls then perturb.

use crate::desc::{self, Res, Ty, CALLS};
use crate::prog::{Arg, Call, Prog, MAX_CALLS};
use crate::rng::Rng;
use crate::values;

/// What the generator may use.
#[derive(Clone, Debug)]
pub struct Opts {
    pub reflux: bool,
    /// Indices into desc::DBG_FILES of the files that exist.
    pub dbg_files: Vec<u64>,
}

impl Default for Opts {
    fn default() -> Self {
        Opts {
            reflux: true,
            dbg_files: (0..desc::DBG_FILES.len() as u64).collect(),
        }
    }
}

fn allowed(opts: &Opts, id: usize) -> bool {
    !CALLS[id].reflux || opts.reflux
}

/// A call id, chosen by weight among the allowed ones.
pub fn pick_call(rng: &mut Rng, opts: &Opts) -> usize {
    let total: u64 = (0..CALLS.len())
        .filter(|&i| allowed(opts, i))
        .map(|i| CALLS[i].weight as u64)
        .sum();
    let mut n = rng.below(total);
    for (i, c) in CALLS.iter().enumerate() {
        if !allowed(opts, i) {
            continue;
        }
        if n < c.weight as u64 {
            return i;
        }
        n -= c.weight as u64;
    }
    0
}

/// The calls before `before` whose result `want` accepts.
pub fn candidates(prog: &Prog, before: usize, want: Res) -> Vec<usize> {
    (0..before.min(prog.calls.len()))
        .filter(|&c| CALLS[prog.calls[c].id].ret.is_some_and(|r| want.accepts(r)))
        .collect()
}

/// The literal used where no result of the wanted kind exists.
pub fn literal_for(want: Res) -> u64 {
    match want {
        Res::CcmFd | Res::RfxFd | Res::AnyFd => u64::MAX, // fd -1
        Res::Map | Res::Counter => 0,
    }
}

/// A reference to a result of kind `want` made before call `before`.
pub fn draw_res(rng: &mut Rng, prog: &Prog, before: usize, want: Res) -> Arg {
    let cands = candidates(prog, before, want);
    if cands.is_empty() || rng.one_in(30) {
        return Arg::Int(if rng.one_in(2) {
            literal_for(want)
        } else {
            values::draw(rng, desc::Dom::Int(32), 0)
        });
    }
    // Prefer recent results: they are the ones the sequence is about.
    let call = if rng.one_in(2) {
        cands[cands.len() - 1]
    } else {
        *rng.pick(&cands)
    };
    let add = match want {
        Res::Map if rng.one_in(3) => *rng.pick(&[1, 8, 4095, 4096, 8192]),
        Res::Counter if rng.one_in(3) => *rng.pick(&[1, 2, 4, 0xffff_ffff, 64, 4096]),
        _ => 0,
    };
    Arg::Res { call, add }
}

/// Arguments for call `id` inserted at position `at` of `prog`.
pub fn draw_args(rng: &mut Rng, opts: &Opts, prog: &Prog, at: usize, id: usize) -> Vec<Arg> {
    let d = &CALLS[id];
    let any = rng.below(9);
    let kernel = *rng.pick(&[1, 1, 1, 0, any]);
    d.args
        .iter()
        .map(|ad| match ad.ty {
            Ty::Res(r) => draw_res(rng, prog, at, r),
            Ty::Int(dom) if ad.name == "file" && !opts.dbg_files.is_empty() => {
                let _ = dom;
                Arg::Int(*rng.pick(&opts.dbg_files))
            }
            Ty::Int(dom) if ad.name == "kernel_id" && !rng.one_in(8) => {
                let _ = dom;
                Arg::Int(kernel)
            }
            Ty::Int(dom) => Arg::Int(values::draw(rng, dom, kernel)),
            Ty::Str(set) => Arg::Str(rng.pick(set).to_string()),
        })
        .collect()
}

/// Appends call `id`, first appending an open or mmap if it needs a file or
/// mapping the program does not have yet.
pub fn append_call(rng: &mut Rng, opts: &Opts, prog: &mut Prog, id: usize) {
    for ad in CALLS[id].args {
        let producer = match ad.ty {
            Ty::Res(Res::CcmFd) | Ty::Res(Res::AnyFd) => "ccm_open",
            Ty::Res(Res::RfxFd) => "rfx_open",
            Ty::Res(Res::Map) => "ccm_mmap",
            _ => continue,
        };
        let Ty::Res(want) = ad.ty else { continue };
        if candidates(prog, prog.calls.len(), want).is_empty() && prog.calls.len() + 2 < MAX_CALLS {
            if let Some(p) = desc::lookup(producer) {
                append_call(rng, opts, prog, p);
            }
        }
    }
    if prog.calls.len() < MAX_CALLS {
        let args = draw_args(rng, opts, prog, prog.calls.len(), id);
        prog.calls.push(Call { id, args });
    }
}

/// Sets argument `name` of `call` (which must exist: descriptions are static).
pub fn set(call: &mut Call, name: &str, arg: Arg) {
    if let Some(i) = desc::arg_index(call.id, name) {
        call.args[i] = arg;
    }
}

/// Appends call `name` with drawn arguments, then the given ones; returns
/// its index.
fn push(rng: &mut Rng, opts: &Opts, prog: &mut Prog, name: &str, fixed: &[(&str, Arg)]) -> usize {
    let id = desc::lookup(name).unwrap_or(0);
    let args = draw_args(rng, opts, prog, prog.calls.len(), id);
    let mut call = Call { id, args };
    for (n, a) in fixed {
        set(&mut call, n, a.clone());
    }
    // The template's ioctls are well-formed: a good pointer, the exact
    // command, zero reserved fields, unless one of them is the point.
    if CALLS[id].ioctl.is_some() && !rng.one_in(6) {
        set(&mut call, "ptr", Arg::Int(desc::PTR_GOOD));
        set(&mut call, "cmd", Arg::Int(desc::CMD_EXACT));
        for r in [
            "reserved",
            "reserved0",
            "tenant",
            "tag",
            "processed",
            "ready",
            "headers_size",
        ] {
            set(&mut call, r, Arg::Int(0));
        }
    }
    prog.calls.push(call);
    prog.calls.len() - 1
}

fn r(call: usize) -> Arg {
    Arg::Res { call, add: 0 }
}
fn i(v: u64) -> Arg {
    Arg::Int(v)
}

fn page_round(v: u64) -> u64 {
    v.div_ceil(4096) * 4096
}

/// The documented sequence with valid values, steps sometimes skipped.
pub fn template(rng: &mut Rng, opts: &Opts, prog: &mut Prog) {
    let fd = push(
        rng,
        opts,
        prog,
        "ccm_open",
        &[("dev", i(0)), ("flags", i(libc::O_RDWR as u64))],
    );
    let md_slots = 1u64 << rng.below(11).max(2);
    let pl_slots = 1u64 << rng.below(13).max(4);
    let slot = *rng.pick(&[0, 8, 32, 64, 4096]);
    let base = *rng.pick(&[0, 0, 0xffff_fff0, 0x7fff_fffe]);
    let input = *rng.pick(&[4096, 65536, 0x10_0000]);
    let fixed = [
        ("fd", r(fd)),
        ("flags", i(*rng.pick(&[0, 0, 1]))),
        ("mode", i(*rng.pick(&[0, 0, 0, 1, 2, 3]))),
        ("slot_size", i(slot)),
        ("metadata_slots", i(md_slots)),
        ("payload_slots", i(pl_slots)),
        ("streaming_factor", i(*rng.pick(&[0, 32, 64, 256]))),
        ("streaming_order", i(rng.below(2))),
        ("index_base", i(base)),
        ("poll_interval_ns", i(*rng.pick(&[0, 1000, 100_000]))),
        ("input_size", i(input)),
    ];
    let cfg = push(rng, opts, prog, "ccm_configure", &fixed);
    let slot_bytes = if slot == 0 { 32 } else { slot };
    let maps = [
        (0, 4096),
        (1, page_round(md_slots * 32)),
        (2, page_round(pl_slots * slot_bytes)),
        (3, input),
    ];
    let mut idx = [0usize; 4];
    for (k, (region, len)) in maps.into_iter().enumerate() {
        let prot = if region == 3 {
            libc::PROT_READ | libc::PROT_WRITE
        } else {
            libc::PROT_READ
        } as u64;
        idx[k] = push(
            rng,
            opts,
            prog,
            "ccm_mmap",
            &[
                ("fd", r(fd)),
                ("region", i(region)),
                ("delta", i(0)),
                ("len", i(len)),
                ("prot", i(prot)),
                ("flags", i(libc::MAP_SHARED as u64)),
            ],
        );
    }
    push(
        rng,
        opts,
        prog,
        "map_write",
        &[("addr", r(idx[3])), ("len", i(input.min(4096)))],
    );
    for _ in 0..=rng.below(3) {
        let words = 1 + rng.below(input / 4);
        let launch = push(
            rng,
            opts,
            prog,
            "ccm_launch",
            &[
                ("fd", r(fd)),
                ("flags", i(0)),
                ("input_offset", i(0)),
                ("input_size", i(words * 4)),
                ("arg_size", i(32)),
            ],
        );
        let fixed = [
            ("fd", r(fd)),
            ("min_records", i(1)),
            ("metadata_head", r(cfg)),
            ("flags", i(rng.below(2))),
            ("timeout_ns", i(*rng.pick(&[0, 1_000_000, 50_000_000]))),
        ];
        push(rng, opts, prog, "ccm_wait", &fixed);
        let _ = launch;
        push(
            rng,
            opts,
            prog,
            "ccm_drain",
            &[
                ("fd", r(fd)),
                ("headers", r(idx[0])),
                ("metadata", r(idx[1])),
                ("head", r(cfg)),
            ],
        );
    }
    push(rng, opts, prog, "ccm_stats", &[("fd", r(fd))]);
}

/// A new program: the template (2 in 3) and random calls.
pub fn generate(rng: &mut Rng, opts: &Opts) -> Prog {
    let mut prog = Prog::default();
    if !rng.one_in(3) {
        template(rng, opts, &mut prog);
        // Drop a few template steps so that the misuse paths get exercised.
        for _ in 0..rng.below(3) {
            let at = rng.index(prog.calls.len());
            crate::mutate::remove_call(rng, &mut prog, at);
        }
    }
    let extra = 2 + rng.below(10) as usize;
    for _ in 0..extra {
        if prog.calls.len() >= MAX_CALLS {
            break;
        }
        let id = pick_call(rng, opts);
        append_call(rng, opts, &mut prog, id);
    }
    prog
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prog::validate;

    #[test]
    fn deterministic_under_a_seed() {
        for seed in 0..50 {
            let a = generate(&mut Rng::new(seed), &Opts::default());
            let b = generate(&mut Rng::new(seed), &Opts::default());
            assert_eq!(a, b);
            assert!(!a.calls.is_empty());
        }
        let a = generate(&mut Rng::new(1), &Opts::default());
        let b = generate(&mut Rng::new(2), &Opts::default());
        assert_ne!(a, b);
    }

    #[test]
    fn generated_programs_are_valid_and_round_trip() {
        for seed in 0..300 {
            let p = generate(&mut Rng::new(seed), &Opts::default());
            validate(&p).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{}", p.to_text()));
            assert_eq!(Prog::parse(&p.to_text()).as_ref(), Ok(&p));
            assert_eq!(Prog::parse(&p.to_line()).as_ref(), Ok(&p));
        }
    }

    #[test]
    fn no_reflux_calls_without_reflux() {
        let opts = Opts {
            reflux: false,
            ..Opts::default()
        };
        for seed in 0..100 {
            let p = generate(&mut Rng::new(seed), &opts);
            assert!(p.calls.iter().all(|c| !CALLS[c.id].reflux));
        }
    }
}
