// SPDX-License-Identifier: GPL-2.0

//! The paradigms' names, and the order they are reported in.

/// The paradigms, in the order they are reported (variants of C go after C).
/// `Bq` and `H` are not the paper's. `Bq` is request-level dispatch that also weighs each side's
/// queue (a stronger baseline than λ-IO's rule, which is B's). `H` has every stage on the host,
/// never moved: the ceiling of the host's path (fio, io_uring, the driver, the device's commit)
/// that B and C share.
pub const PARADIGMS: [&str; 5] = ["A", "B", "Bq", "C", "H"];

/// A variant of C is `C+NAME`: C with one of the scheduler's extensions switched on
/// (`C+lookahead`, `C+flap`, ...), compared with C itself.
pub const VARIANT_PREFIX: &str = "C+";

/// The extension a variant of C names, if `name` is one (`C+` and a name of `a-z` and `_`).
pub fn variant(name: &str) -> Option<&str> {
    name.strip_prefix(VARIANT_PREFIX)
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'))
}

/// Whether `name` is a paradigm: a known one or a variant of C.
pub fn is_paradigm(name: &str) -> bool {
    PARADIGMS.contains(&name) || variant(name).is_some()
}

/// `name` if it is a paradigm, else an error starting with `what` (the directive).
pub fn check<'a>(what: &str, name: Option<&'a str>) -> Result<&'a str, String> {
    let name = name.ok_or_else(|| format!("{what} needs a paradigm (A, B, Bq, C, H or C+NAME)"))?;
    if is_paradigm(name) {
        Ok(name)
    } else {
        Err(format!(
            "{what} {name}: the paradigms are A, B, Bq, C, H and C+NAME (NAME of a-z and _)"
        ))
    }
}

/// The distinct paradigms of `names` (in log order) in report order: A, B, Bq, C, the variants
/// of C in the order they first appear, then H.
pub fn report_order<'a>(names: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut seen: Vec<&str> = Vec::new();
    for n in names {
        if !seen.contains(&n) {
            seen.push(n);
        }
    }
    // H, the reference, goes after every variant of C.
    let rank = |n: &str| match n {
        "A" => 0,
        "B" => 1,
        "Bq" => 2,
        "C" => 3,
        "H" => 5,
        _ => 4,
    };
    // A stable sort keeps the variants in the order they first appear.
    seen.sort_by_key(|n| rank(n));
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(is_paradigm("C+lookahead") && is_paradigm("C+u_only") && is_paradigm("Bq"));
        for bad in ["D", "C+", "C+Flap", "C+flap2", "B+flap", "c", ""] {
            assert!(!is_paradigm(bad), "{bad}");
        }
        assert_eq!(variant("C+share"), Some("share"));
        let order = report_order(["H", "C+share", "C", "A", "C+flap", "C+share", "B"].into_iter());
        assert_eq!(order, ["A", "B", "C", "C+share", "C+flap", "H"]);
    }
}
