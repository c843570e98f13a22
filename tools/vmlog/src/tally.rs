//! [`Tally`]: the counts and failure messages gathered from one source.

/// Passed/failed/skipped counts plus one human-readable line per failure.
///
/// `failed` is normally `failures.len()`, but a source may count more
/// failures than it names (the kernel log prints at most a fixed number of
/// reports, cargo may report a failure count without a test name).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    /// Number of tests that passed.
    pub passed: u64,
    /// Number of failures (failed tests and problems such as a crash).
    pub failed: u64,
    /// Number of skipped tests (including expected failures).
    pub skipped: u64,
    /// Failure lines, in the order they were found.
    pub failures: Vec<String>,
}

impl Tally {
    /// An empty tally.
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts one passed test.
    pub fn pass(&mut self) {
        self.passed += 1;
    }

    /// Counts one skipped test.
    pub fn skip(&mut self) {
        self.skipped += 1;
    }

    /// Counts one failure described by `message`.
    pub fn fail(&mut self, message: impl Into<String>) {
        self.failed += 1;
        self.failures.push(message.into());
    }

    /// Adds all counts and failure lines of `other` to `self`.
    pub fn absorb(&mut self, other: Tally) {
        self.passed = self.passed.saturating_add(other.passed);
        self.failed = self.failed.saturating_add(other.failed);
        self.skipped = self.skipped.saturating_add(other.skipped);
        self.failures.extend(other.failures);
    }

    /// Number of results of any kind.
    pub fn total(&self) -> u64 {
        self.passed
            .saturating_add(self.failed)
            .saturating_add(self.skipped)
    }

    /// `N passed, M failed` or `N passed, M failed, K skipped` when K > 0.
    pub fn counts_line(&self) -> String {
        let mut line = format!("{} passed, {} failed", self.passed, self.failed);
        if self.skipped > 0 {
            line.push_str(&format!(", {} skipped", self.skipped));
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_messages() {
        let mut t = Tally::new();
        t.pass();
        t.pass();
        t.skip();
        t.fail("one");
        assert_eq!(t.passed, 2);
        assert_eq!(t.failed, 1);
        assert_eq!(t.skipped, 1);
        assert_eq!(t.total(), 4);
        assert_eq!(t.failures, vec!["one".to_string()]);
    }

    #[test]
    fn absorb_adds_everything() {
        let mut a = Tally::new();
        a.pass();
        a.fail("a");
        let mut b = Tally::new();
        b.skip();
        b.fail("b");
        a.absorb(b);
        assert_eq!((a.passed, a.failed, a.skipped), (1, 2, 1));
        assert_eq!(a.failures, vec!["a".to_string(), "b".to_string()]);
    }

    #[test]
    fn counts_line_mentions_skips_only_when_present() {
        let mut t = Tally::new();
        t.pass();
        assert_eq!(t.counts_line(), "1 passed, 0 failed");
        t.skip();
        t.fail("x");
        assert_eq!(t.counts_line(), "1 passed, 1 failed, 1 skipped");
    }
}
