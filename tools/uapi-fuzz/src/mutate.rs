//! Mutations: insert, remove or replace a call, change one argument, splice
//! two programs. Structural edits shift references and then `repair` points
//! any reference left dangling at another result of the same kind (or a
//! literal), so every mutant is a valid program.

use crate::desc::{Ty, CALLS};
use crate::gen::{self, Opts};
use crate::prog::{Arg, Call, Prog, MAX_CALLS};
use crate::rng::Rng;
use crate::values;

/// A reference that must be repaired.
const DANGLING: usize = usize::MAX;

/// Rewires every invalid reference.
pub fn repair(rng: &mut Rng, prog: &mut Prog) {
    for i in 0..prog.calls.len() {
        let id = prog.calls[i].id;
        for (k, ad) in CALLS[id].args.iter().enumerate() {
            let Ty::Res(want) = ad.ty else { continue };
            let Arg::Res { call, .. } = prog.calls[i].args[k] else {
                continue;
            };
            let ok = call < i
                && CALLS[prog.calls[call].id]
                    .ret
                    .is_some_and(|r| want.accepts(r));
            if !ok {
                let arg = gen::draw_res(rng, prog, i, want);
                prog.calls[i].args[k] = arg;
            }
        }
    }
}

/// Applies `f` to every reference of the calls from `from` on.
fn shift_refs(prog: &mut Prog, from: usize, f: impl Fn(usize) -> usize) {
    for call in prog.calls.iter_mut().skip(from) {
        for arg in call.args.iter_mut() {
            if let Arg::Res { call: c, .. } = arg {
                *c = f(*c);
            }
        }
    }
}

pub fn remove_call(rng: &mut Rng, prog: &mut Prog, at: usize) {
    if at >= prog.calls.len() {
        return;
    }
    prog.calls.remove(at);
    shift_refs(prog, at, |c| match c {
        c if c == at => DANGLING,
        c if c > at && c != DANGLING => c - 1,
        c => c,
    });
    repair(rng, prog);
}

pub fn insert_call(prog: &mut Prog, at: usize, call: Call) {
    let at = at.min(prog.calls.len());
    shift_refs(
        prog,
        at,
        |c| if c >= at && c != DANGLING { c + 1 } else { c },
    );
    prog.calls.insert(at, call);
}

fn insert_random(rng: &mut Rng, opts: &Opts, prog: &mut Prog) {
    if prog.calls.len() >= MAX_CALLS {
        return;
    }
    let at = rng.index(prog.calls.len() + 1);
    let id = gen::pick_call(rng, opts);
    let args = gen::draw_args(rng, opts, prog, at, id);
    insert_call(prog, at, Call { id, args });
}

fn mutate_int(rng: &mut Rng, v: u64, dom: crate::desc::Dom, kernel: u64) -> u64 {
    match rng.below(5) {
        0 => v ^ (1u64 << rng.below(64)),
        1 => v.wrapping_add(1 + rng.below(8)),
        2 => v.wrapping_sub(1 + rng.below(8)),
        _ => values::draw(rng, dom, kernel),
    }
}

fn mutate_str(rng: &mut Rng, s: &str, set: &[&str]) -> String {
    match rng.below(4) {
        0 if !s.is_empty() => {
            let mut b = s.as_bytes().to_vec();
            let k = rng.index(b.len());
            b[k] = b"0123456789KMGx -\n"[rng.index(17)];
            String::from_utf8_lossy(&b).into_owned()
        }
        1 => format!("{s}{}", rng.pick(set)),
        _ => rng.pick(set).to_string(),
    }
}

/// Changes one argument of one call.
pub fn mutate_arg(rng: &mut Rng, prog: &mut Prog) {
    if prog.calls.is_empty() {
        return;
    }
    let i = rng.index(prog.calls.len());
    let id = prog.calls[i].id;
    let nargs = CALLS[id].args.len();
    if nargs == 0 {
        return;
    }
    let k = rng.index(nargs);
    let kernel = prog.calls[i].int("kernel_id").unwrap_or(1);
    let new = match (CALLS[id].args[k].ty, &prog.calls[i].args[k]) {
        (Ty::Int(dom), Arg::Int(v)) => Arg::Int(mutate_int(rng, *v, dom, kernel)),
        (Ty::Res(_), Arg::Res { call, add }) if rng.one_in(3) => Arg::Res {
            call: *call,
            add: mutate_int(rng, *add, crate::desc::Dom::Int(32), 0),
        },
        (Ty::Res(want), _) => gen::draw_res(rng, prog, i, want),
        (Ty::Str(set), Arg::Str(s)) => Arg::Str(mutate_str(rng, s, set)),
        (Ty::Str(set), _) => Arg::Str(rng.pick(set).to_string()),
        (Ty::Int(dom), _) => Arg::Int(values::draw(rng, dom, kernel)),
    };
    prog.calls[i].args[k] = new;
}

/// The first `cut_a` calls of `a` and the calls of `b` from `cut_b` on.
pub fn splice(rng: &mut Rng, a: &Prog, b: &Prog) -> Prog {
    let cut_a = rng.index(a.calls.len() + 1);
    let cut_b = rng.index(b.calls.len() + 1);
    let mut out = Prog {
        calls: a.calls[..cut_a].to_vec(),
    };
    for call in &b.calls[cut_b..] {
        if out.calls.len() >= MAX_CALLS {
            break;
        }
        let mut call = call.clone();
        for arg in call.args.iter_mut() {
            if let Arg::Res { call: c, .. } = arg {
                // A result from b's dropped prefix is repaired below.
                *c = if *c >= cut_b {
                    *c - cut_b + cut_a
                } else {
                    DANGLING
                };
            }
        }
        out.calls.push(call);
    }
    repair(rng, &mut out);
    out
}

/// One to four mutations of `prog`; `other` is a splice partner.
pub fn mutate(rng: &mut Rng, opts: &Opts, prog: &Prog, other: Option<&Prog>) -> Prog {
    let mut p = prog.clone();
    for _ in 0..1 + rng.below(4) {
        match rng.below(10) {
            0 | 1 => insert_random(rng, opts, &mut p),
            2 => {
                let at = rng.index(p.calls.len());
                remove_call(rng, &mut p, at);
            }
            3 if !p.calls.is_empty() => {
                // Replace: a new call where the old one was.
                let at = rng.index(p.calls.len());
                remove_call(rng, &mut p, at);
                let id = gen::pick_call(rng, opts);
                let args = gen::draw_args(rng, opts, &p, at.min(p.calls.len()), id);
                insert_call(&mut p, at, Call { id, args });
            }
            4 => {
                if let Some(o) = other {
                    p = splice(rng, &p, o);
                }
            }
            _ => mutate_arg(rng, &mut p),
        }
    }
    if p.calls.is_empty() {
        return gen::generate(rng, opts);
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prog::validate;

    #[test]
    fn mutants_stay_valid() {
        let opts = Opts::default();
        let mut rng = Rng::new(7);
        let mut corpus = vec![gen::generate(&mut rng, &opts)];
        for n in 0..3000 {
            let a = corpus[rng.index(corpus.len())].clone();
            let b = corpus[rng.index(corpus.len())].clone();
            let m = mutate(&mut rng, &opts, &a, Some(&b));
            validate(&m).unwrap_or_else(|e| panic!("mutant {n}: {e}\n{}", m.to_text()));
            assert_eq!(Prog::parse(&m.to_line()).as_ref(), Ok(&m));
            if corpus.len() < 50 {
                corpus.push(m);
            }
        }
    }

    #[test]
    fn mutation_is_deterministic() {
        let opts = Opts::default();
        let base = gen::generate(&mut Rng::new(3), &opts);
        let a = mutate(&mut Rng::new(9), &opts, &base, Some(&base));
        let b = mutate(&mut Rng::new(9), &opts, &base, Some(&base));
        assert_eq!(a, b);
    }

    #[test]
    fn removing_a_producer_rewires_its_users() {
        let mut p =
            Prog::parse("ccm_open 0x0 0x2\nccm_open 0x0 0x2\nccm_dup @1\nclose @2").expect("parse");
        remove_call(&mut Rng::new(1), &mut p, 1);
        validate(&p).expect("valid");
        assert_eq!(p.calls.len(), 3);
        assert_eq!(p.calls[2].args[0], Arg::Res { call: 1, add: 0 });
    }
}
