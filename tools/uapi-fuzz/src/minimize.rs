//! Minimisation: drop calls (a dropped result's users are rewired to
//! another result of the same kind, or get a literal) and then simplify
//! arguments toward 0, keeping every step after which `still` holds.

use crate::desc::{Ty, CALLS};
use crate::mutate::remove_call;
use crate::prog::{Arg, Prog};
use crate::rng::Rng;

pub fn minimize(prog: &Prog, mut still: impl FnMut(&Prog) -> bool) -> Prog {
    // Repair's choices are seeded: the same input minimises the same way.
    let mut rng = Rng::new(0);
    let mut best = prog.clone();
    // Halves first, then single calls, from the end (later calls depend on
    // earlier ones, so their removal disturbs less).
    let mut chunk = (best.calls.len() / 2).max(1);
    loop {
        let mut end = best.calls.len();
        while end > 0 {
            let start = end.saturating_sub(chunk);
            let mut cand = best.clone();
            for at in (start..end).rev() {
                remove_call(&mut rng, &mut cand, at);
            }
            if !cand.calls.is_empty() && still(&cand) {
                best = cand;
            }
            end = start;
        }
        if chunk == 1 {
            break;
        }
        chunk /= 2;
    }
    simplify_args(&mut best, &mut still);
    best
}

fn simplify_args(best: &mut Prog, still: &mut impl FnMut(&Prog) -> bool) {
    for i in 0..best.calls.len() {
        for k in 0..best.calls[i].args.len() {
            let simpler = match (&best.calls[i].args[k], CALLS[best.calls[i].id].args[k].ty) {
                (Arg::Int(v), Ty::Int(_)) if *v != 0 => Arg::Int(0),
                (Arg::Res { call, add }, _) if *add != 0 => Arg::Res {
                    call: *call,
                    add: 0,
                },
                _ => continue,
            };
            let mut cand = best.clone();
            cand.calls[i].args[k] = simpler;
            if still(&cand) {
                *best = cand;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{generate, Opts};
    use crate::prog::validate;

    #[test]
    fn keeps_what_the_predicate_needs() {
        // "Reproduces" when a LAUNCH on a configured file is in the program.
        let needs = |p: &Prog| {
            p.calls.iter().any(|c| {
                c.name() == "ccm_launch"
                    && matches!(c.args[0], Arg::Res { call, .. } if p.calls[call].name() == "ccm_open")
            }) && p.calls.iter().any(|c| c.name() == "ccm_configure")
        };
        let mut checked = 0;
        for seed in 0..40 {
            let p = generate(&mut Rng::new(seed), &Opts::default());
            if !needs(&p) {
                continue;
            }
            checked += 1;
            let m = minimize(&p, |c| {
                validate(c).expect("minimizer keeps programs valid");
                needs(c)
            });
            assert!(needs(&m));
            assert_eq!(m.calls.len(), 3, "{}", m.to_text());
            let launch = m
                .calls
                .iter()
                .find(|c| c.name() == "ccm_launch")
                .expect("launch");
            assert_eq!(launch.int("input_size"), Some(0));
        }
        assert!(checked > 5);
    }
}
