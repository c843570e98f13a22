/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RUST_DO_TRACE(name, TP_PROTO(...), TP_ARGS(...)): the function through which a module's
 * Rust code fires the tracepoint `name` (kernel::declare_trace!), for a file that defined the
 * tracepoints with CREATE_TRACE_POINTS. The compiler checks it against trace_<name>().
 */
#ifndef RUST_DO_TRACE_H
#define RUST_DO_TRACE_H

#define RUST_DO_TRACE(name, proto, args)					\
	void rust_do_trace_##name(proto);					\
	void rust_do_trace_##name(proto) { trace_##name(args); }

#endif
