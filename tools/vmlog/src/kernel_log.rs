//! The console log: kernel problem reports (oopses, WARN splats, lockdep,
//! KASAN/KFENCE/UBSAN, hung tasks, RCU stalls, kmemleak, Rust panics...).

use std::collections::HashSet;

use crate::tally::Tally;

/// At most this many distinct reports are listed; all of them are counted.
pub const MAX_REPORTS: usize = 20;

/// A text that marks a line as a kernel problem report.
struct Pattern {
    text: &'static str,
    /// The match must also end at a word boundary (`Oops` but not
    /// `Oopsie`); other patterns may be followed by anything (`suspected
    /// memory leak` also matches `leaks`). The start of a match must
    /// always be at a word boundary, so that `DEBUG:` does not match `BUG:`.
    word_end: bool,
}

const fn word(text: &'static str) -> Pattern {
    Pattern {
        text,
        word_end: true,
    }
}

const fn prefix(text: &'static str) -> Pattern {
    Pattern {
        text,
        word_end: false,
    }
}

/// Case-sensitive, as the kernel prints them.
const PATTERNS: &[Pattern] = &[
    word("Oops"),
    prefix("BUG:"),
    prefix("kernel BUG at"),
    prefix("WARNING:"),
    prefix("Kernel panic"),
    prefix("general protection fault"),
    prefix("Unable to handle kernel"),
    prefix("KFENCE:"),
    prefix("KASAN:"),
    prefix("UBSAN:"),
    prefix("possible recursive locking detected"),
    prefix("inconsistent lock state"),
    prefix("rcu: INFO:"),
    prefix("detected stalls"),
    prefix("unreferenced object 0x"),
    prefix("suspected memory leak"),
    prefix("rust_kernel: panicked"),
    prefix("list_add corruption"),
    prefix("list_del corruption"),
    prefix("ODEBUG:"),
    // The software CCM device modelling HDM-H: the driver let it consume a
    // host store it had not published (tools/testing/cxl_ccm/visibility.rs).
    prefix("HDM-H violation:"),
];

/// A hung task report needs both texts.
const HUNG_TASK: (&str, &str) = ("INFO: task", "blocked for more than");

/// Messages that are never reports even if they contain a pattern: the
/// kernel command line as printed by the generic code and by x86's
/// `setup_arch()` (it may carry test parameters), its unknown parameters,
/// and a benign self-test line. Matched at the start of the message.
const IGNORED: &[&str] = &[
    "Kernel command line:",
    "Command line:",
    "Unknown kernel command line parameters",
    "ODEBUG: selftest passed",
];

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether `pattern` occurs in `line` at word boundaries.
fn contains_pattern(line: &str, pattern: &Pattern) -> bool {
    line.match_indices(pattern.text).any(|(start, text)| {
        let before_ok = !line[..start].chars().next_back().is_some_and(is_word_char);
        let after_ok = !pattern.word_end
            || !line[start + text.len()..]
                .chars()
                .next()
                .is_some_and(is_word_char);
        before_ok && after_ok
    })
}

/// Whether the (timestamp-free) console line is a kernel problem report.
pub fn is_report(line: &str) -> bool {
    let message = line.trim_start();
    if IGNORED.iter().any(|text| message.starts_with(text)) {
        return false;
    }
    PATTERNS.iter().any(|p| contains_pattern(line, p))
        || (contains_pattern(line, &word(HUNG_TASK.0)) && line.contains(HUNG_TASK.1))
}

/// Removes a leading `[    1.234567] ` timestamp and a following printk
/// caller id such as `[    T1] ` or `[ C0] `, if present.
pub fn strip_timestamp(line: &str) -> &str {
    let rest = strip_bracket(line, |inside| {
        inside
            .split_once('.')
            .is_some_and(|(secs, frac)| all_digits(secs) && all_digits(frac))
    });
    strip_bracket(rest, |inside| {
        inside.strip_prefix(['T', 'C']).is_some_and(all_digits)
    })
}

fn all_digits(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// Strips `[<inside>]` and one following space if `accept(inside.trim())`.
fn strip_bracket(line: &str, accept: impl Fn(&str) -> bool) -> &str {
    let Some(rest) = line.strip_prefix('[') else {
        return line;
    };
    let Some((inside, after)) = rest.split_once(']') else {
        return line;
    };
    if accept(inside.trim()) {
        after.strip_prefix(' ').unwrap_or(after)
    } else {
        line
    }
}

/// Counts one failure per distinct kernel problem report in `text`, listing
/// at most [`MAX_REPORTS`] of them as `kernel log: <line>`.
pub fn tally_kernel_log(text: &str) -> Tally {
    let mut seen = HashSet::new();
    let mut reports = Vec::new();
    for raw in text.split('\n') {
        let line = strip_timestamp(raw.trim_end_matches('\r')).trim_end();
        if is_report(line) && seen.insert(line) {
            reports.push(line);
        }
    }
    let mut tally = Tally::new();
    for line in reports.iter().take(MAX_REPORTS) {
        tally.fail(format!("kernel log: {line}"));
    }
    if reports.len() > MAX_REPORTS {
        let hidden = reports.len() - MAX_REPORTS;
        tally.failed += hidden as u64;
        tally.failures.push(format!(
            "kernel log: {hidden} more distinct reports not shown"
        ));
    }
    tally
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        assert_eq!(strip_timestamp("[    1.234567] hello"), "hello");
        assert_eq!(strip_timestamp("[12345.000001] hello"), "hello");
        assert_eq!(strip_timestamp("[    1.234567][    T1] hello"), "hello");
        assert_eq!(strip_timestamp("[    1.234567] [   C3] hello"), "hello");
        assert_eq!(strip_timestamp("[    1.234567][   C3] hello"), "hello");
        assert_eq!(strip_timestamp("hello"), "hello");
        assert_eq!(strip_timestamp("[ OK ] hello"), "[ OK ] hello");
        assert_eq!(strip_timestamp("[    1.2"), "[    1.2");
        assert_eq!(strip_timestamp(""), "");
    }

    #[test]
    fn reports() {
        for line in [
            "Oops: general protection fault, probably for non-canonical address 0xdead000000000100: 0000 [#1] PREEMPT SMP NOPTI",
            "Oops: 0000 [#1] PREEMPT SMP NOPTI",
            "Internal error: Oops: 0000000096000004 [#1] PREEMPT SMP",
            "BUG: kernel NULL pointer dereference, address: 0000000000000008",
            "BUG: KFENCE: out-of-bounds read in test_out_of_bounds_read+0xa6/0x234",
            "BUG: KASAN: slab-use-after-free in cxl_region_probe+0x45/0x220 [cxl_core]",
            "BUG: sleeping function called from invalid context at kernel/locking/mutex.c:585",
            "kernel BUG at mm/slub.c:1234!",
            "WARNING: CPU: 0 PID: 1 at drivers/cxl/core/region.c:1234 cxl_region_attach+0x2f1/0x4a0",
            "WARNING: possible circular locking dependency detected",
            "Kernel panic - not syncing: Fatal exception",
            "general protection fault, probably for non-canonical address 0xdffffc0000000000: 0000 [#1]",
            "Unable to handle kernel NULL pointer dereference at virtual address 0000000000000000",
            "KFENCE: use-after-free read in kfree+0x10/0x20",
            "KASAN: null-ptr-deref in range [0x0000000000000000-0x0000000000000007]",
            "UBSAN: array-index-out-of-bounds in drivers/cxl/core/hdm.c:12:3",
            "WARNING: possible recursive locking detected",
            "possible recursive locking detected",
            "inconsistent lock state",
            "INFO: task kworker/0:1:12 blocked for more than 122 seconds.",
            "rcu: INFO: rcu_preempt self-detected stall on CPU",
            "rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:",
            "rcu_tasks detected stalls on tasks:",
            "unreferenced object 0xffff888003f1c000 (size 64):",
            "kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)",
            "rust_kernel: panicked at rust/kernel/sync/arc.rs:12:5:",
            "list_add corruption. prev->next should be next (ffff888003f1c0a8), but was 0000000000000000.",
            "list_del corruption, ffff888003f1c0a8->next is LIST_POISON1 (dead000000000100)",
            "ODEBUG: free active (active state 0) object: ffff888003f1c000 object type: timer_list",
            "some output\tWARNING: CPU: 1 PID: 2 at x.c:1 f+0x1/0x2",
            "cxl_ccm_dev: HDM-H violation: tenant 0 consumed a launch packet at device offset 0x40 before the host published it",
        ] {
            assert!(is_report(line), "{line:?}");
        }
    }

    #[test]
    fn not_reports() {
        for line in [
            "Kernel command line: console=ttyS0 cxlstack.title=\"BUG: repro\" WARNING:x Oops",
            "Command line: console=ttyS0 cxlstack.title=\"BUG: repro\"",
            "Unknown kernel command line parameters \"title=Oops\", will be passed to user space.",
            "ODEBUG: selftest passed",
            "kfence: initialized - using 2097152 bytes for 255 objects at 0x(____ptrval____)-0x(____ptrval____)",
            "kasan: KernelAddressSanitizer initialized (generic)",
            "kmemleak: Kernel memory leak detector initialized (mem pool available: 15360)",
            "rcu: Hierarchical RCU implementation.",
            "Lock dependency validator: Copyright (c) 2006 Red Hat, Inc., Ingo Molnar",
            "Warning: unable to open an initial console.",
            "the warning limit was raised",
            "init: DEBUG: mounting debugfs",
            "NOWARNING: not a warning",
            "PREWARNING:x",
            "Oopsie daisy",
            "panic_on_oops=1 oops=panic",
            "INFO: task list built",
            "task foo blocked for more than the usual",
            "",
        ] {
            assert!(!is_report(line), "{line:?}");
        }
        // Only at the start of the message: a report mentioning them counts.
        for line in [
            "WARNING: CPU: 0 PID: 1 at init/main.c:1 Kernel command line: parse+0x1/0x2",
            "BUG: ODEBUG: selftest passed twice",
        ] {
            assert!(is_report(line), "{line:?}");
        }
    }

    #[test]
    fn clean_boot() {
        let log = "[    0.000000] Linux version 6.12.117-cxlstack\r\n\
                   [    0.000000] Kernel command line: console=ttyS0 title=\"WARNING: x\"\r\n\
                   [    0.512345] ODEBUG: selftest passed\r\n\
                   [    1.000000] Run /init as init process\r\n";
        assert_eq!(tally_kernel_log(log), Tally::new());
    }

    #[test]
    fn deduplicates_and_strips_timestamps() {
        let log = "[    1.000000] BUG: sleeping function called from invalid context at kernel/locking/mutex.c:585\n\
                   [    1.000100] in_atomic(): 1, irqs_disabled(): 0, non_block: 0, pid: 57, name: cxl\n\
                   [    2.000000] BUG: sleeping function called from invalid context at kernel/locking/mutex.c:585\r\n\
                   [    3.000000] WARNING: CPU: 0 PID: 57 at x.c:1 f+0x1/0x2\n";
        let t = tally_kernel_log(log);
        assert_eq!((t.passed, t.failed, t.skipped), (0, 2, 0));
        assert_eq!(
            t.failures,
            vec![
                "kernel log: BUG: sleeping function called from invalid context at kernel/locking/mutex.c:585".to_string(),
                "kernel log: WARNING: CPU: 0 PID: 57 at x.c:1 f+0x1/0x2".to_string(),
            ]
        );
    }

    #[test]
    fn lists_at_most_twenty_but_counts_all() {
        let log: String = (0..25)
            .map(|i| format!("[    {i}.000000] WARNING: CPU: 0 PID: {i} at x.c:1 f+0x1/0x2\n"))
            .collect();
        let t = tally_kernel_log(&log);
        assert_eq!(t.failed, 25);
        assert_eq!(t.failures.len(), MAX_REPORTS + 1);
        assert_eq!(
            t.failures[0],
            "kernel log: WARNING: CPU: 0 PID: 0 at x.c:1 f+0x1/0x2"
        );
        assert_eq!(
            t.failures[MAX_REPORTS],
            "kernel log: 5 more distinct reports not shown"
        );
    }
}
