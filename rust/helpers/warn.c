// SPDX-License-Identifier: GPL-2.0

#include <linux/bug.h>

/*
 * WARN() is a macro that records the call site in __bug_table; from Rust we
 * pass the caller's location explicitly so the report still names it.
 */
void rust_helper_warn_at(const char *file, int line, const char *cond)
{
	WARN(1, "WARN_ON(%s) at %s:%d\n", cond, file, line);
}
