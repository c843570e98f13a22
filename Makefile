# SPDX-License-Identifier: GPL-2.0
#
# make run            boot the VM with cxl_test and our modules loaded, run the demo
# make check          every test: kselftests + KUnit doctests in the VM, cargo tests on the host
#                     (SUITE=name,...: those VM suites alone, e.g. SUITE=reflux.migrate)
# make bench          the offload-mode comparison in the VM: out/bench/{results.json,table.txt,*.svg},
#                     then bench-reflux (make bench-ccm: the comparison alone)
#                     (first the validation against the model, then the matrix: ONLY=W1,W2
#                     runs those workloads of it, ONLY=table4 the nine of the headline,
#                     ONLY=validate none; REPEAT=N sets the repetitions,
#                     5 (ONLY=table4 REPEAT=40, ~21 min: headline intervals within ±10 %);
#                     DEVCPU=0 lets the device model share the host's CPUs; DILATION=1 keeps
#                     the model's costs unscaled instead of calibrating them to the VM's speed;
#                     BOOTS=N boots the VM N times, 1: the intervals then cover the spread
#                     between boots, out/bench-run/boot-K/ keeps each boot's log;
#                     CCM=name=value,... sets the matrix's modelled CCM, cxl_ccm_dev's
#                     parameters, e.g. CCM=ccm_units=1 for 16 µthreads instead of 256)
# make bench-reflux   the ReFlux paradigm benchmark alone (REFLUX_* below): out/bench/reflux/
# make stress         the reflux stress suite, every pipeline and placement (DURATION=seconds),
#                     then 16 rounds of the control-interface stress (reflux.control_stress)
# make check-kasan    make check on the kernel built with clang and KASAN (out/kasan), then fuzz 60 s
# make fuzz           the cxl_ccm/reflux UAPI fuzzer in the VM on the kasan kernel (SECONDS=N,
#                     corpus in out/kasan/fuzz)
# make check-harness  the negative controls: a failing selftest and a WARN must fail a run
# make kernel         build (once, cached) the patched kernel, its modules and cxl_test
# make modules        build only our out-of-tree modules
# make rustfmtcheck   check the formatting of our Rust code (make rustfmt fixes it)
#
# KSRC=/path/to/linux KBUILD_OUTPUT=/path/to/build   build our modules against your own
#     patched 6.12 tree (configured with the fragments in tools/vm/config/); add
#     MODROOT=<modules_install root> to run the VM with it too.

VM          := tools/vm
# The benchmarks run on the kernel without the debug checks (tools/vm/common.sh), the tests on
# the one with them; KERNEL_FLAVOR=check|bench overrides.
ifneq ($(filter bench bench-ccm bench-reflux,$(MAKECMDGOALS)),)
KERNEL_FLAVOR ?= bench
endif
KERNEL_FLAVOR ?= check
export KERNEL_FLAVOR
CACHE_DIR   := $(shell KERNEL_FLAVOR=$(KERNEL_FLAVOR) $(VM)/kernel.sh --dir)
ifeq ($(origin KBUILD_OUTPUT),undefined)
OWN_KERNEL  := 1
KSRC        := $(CACHE_DIR)/src
KBUILD_OUTPUT := $(CACHE_DIR)/src
MODROOT     ?= $(CACHE_DIR)/modroot
else
KSRC        ?= $(KBUILD_OUTPUT)
MODROOT     ?= $(KBUILD_OUTPUT)/modroot
endif
OUT         ?= $(CURDIR)/out
BOOTS       ?= 1
KERNEL_IMAGE := $(KBUILD_OUTPUT)/arch/x86/boot/bzImage
INITRAMFS   := $(OUT)/initramfs.cpio.gz
export KSRC KBUILD_OUTPUT MODROOT OUT KERNEL_IMAGE INITRAMFS
export PATH := $(HOME)/.cargo/bin:$(PATH)
# The flavor's toolchain (tools/vm/common.sh): kasan builds C with clang, and our modules too.
KBUILD_MAKE_ARGS := $(shell KERNEL_FLAVOR=$(KERNEL_FLAVOR) bash -c '. $(VM)/common.sh && echo $$KBUILD_MAKE_ARGS')
export LIBCLANG_PATH := $(shell KERNEL_FLAVOR=$(KERNEL_FLAVOR) bash -c '. $(VM)/common.sh && echo $$LIBCLANG_PATH')

SELFTEST_SRCS := $(wildcard selftests/*/*_test.c)
SELFTESTS     := $(patsubst selftests/%.c,$(OUT)/selftests/%,$(SELFTEST_SRCS))
HARNESS_TESTS := $(OUT)/harness/harness_fail_test
BENCHES       := $(OUT)/benchbin/ccm_bench $(OUT)/benchbin/reflux_sampler $(OUT)/benchbin/cxl-duplex $(OUT)/benchbin/scx_duplex \
		 $(OUT)/benchbin/uapi-fuzz $(OUT)/benchbin/cxlccm_xform $(OUT)/benchbin/cxlccm_xform_rs \
		 $(OUT)/benchbin/cxlstack
SELFTEST_CFLAGS := -static -O2 -g -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare -D_GNU_SOURCE \
	-I$(CURDIR)/include/uapi -I$(KSRC)/tools/testing/selftests
RUST_SRCS = $(shell find rust drivers tools/testing -name '*.rs' 2>/dev/null)
VMLOG := tools/target/release/vmlog

.PHONY: fuzz fuzz-run fuzz-minimize fuzz-minimize-run stress bench-ccm bench-reflux all deps kernel modules selftests initramfs run bench check check-kasan \
	check-harness \
	rustfmt rustfmtcheck vmlog clean

all: modules

deps:
	@$(VM)/deps.sh

kernel: deps
ifdef OWN_KERNEL
	@$(VM)/kernel.sh >/dev/null
else
	@echo "using your kernel tree: KSRC=$(KSRC) KBUILD_OUTPUT=$(KBUILD_OUTPUT)"
endif

# Clippy runs as part of every build of our modules; warnings are errors (see Kbuild).
# Objects built against another kernel tree are cleaned first: their dependency files name that
# tree's headers, so kbuild would keep them, and struct layouts differ between flavors.
# The modules are built in the source tree, whatever OUT is: so is the name of their kernel.
MODULES_KERNEL := $(CURDIR)/.modules-kernel
modules: kernel
	@if [ "$$(cat $(MODULES_KERNEL) 2>/dev/null)" != "$(KBUILD_OUTPUT)" ]; then \
		$(MAKE) -s -C $(KBUILD_OUTPUT) $(KBUILD_MAKE_ARGS) M=$(CURDIR) clean; fi
	$(MAKE) -C $(KBUILD_OUTPUT) $(KBUILD_MAKE_ARGS) M=$(CURDIR) CLIPPY=1 modules
	@echo "$(KBUILD_OUTPUT)" >$(MODULES_KERNEL)

$(OUT)/selftests/%: selftests/%.c include/uapi/linux/*.h $(wildcard selftests/*/*.h) \
		tools/lib/cxlccm/cxlccm_barrier.h tools/lib/cxlccm/cxlccm_ring.h | kernel
	@mkdir -p $(dir $@)
	$(CC) $(SELFTEST_CFLAGS) -o $@ $< $(SELFTEST_LDLIBS)

# The stress test and the documentation's test drive io_uring (polled and not) through
# liburing, linked statically.
$(OUT)/selftests/reflux/stress_test $(OUT)/selftests/reflux/doc_test: SELFTEST_LDLIBS := -luring -lpthread
$(OUT)/selftests/cxl_ccm/race_test $(OUT)/selftests/cxl_ccm/probe_test $(OUT)/selftests/reflux/knobs_doc_test: SELFTEST_LDLIBS := -lpthread
# The trace events' test runs its tenant through libcxlccm.
$(OUT)/selftests/cxl_ccm/trace_test: tools/lib/cxlccm/cxlccm.c tools/lib/cxlccm/cxlccm.h
$(OUT)/selftests/cxl_ccm/trace_test: SELFTEST_LDLIBS := tools/lib/cxlccm/cxlccm.c

$(OUT)/harness/%: tools/testing/harness/%.c | kernel
	@mkdir -p $(dir $@)
	$(CC) $(SELFTEST_CFLAGS) -o $@ $<

# The sched_ext scheduler: BPF against the kernel's BTF, a static loader.
$(OUT)/benchbin/scx_duplex: $(wildcard tools/scx-duplex/bpf/*) tools/scx-duplex/build.sh | kernel
	tools/scx-duplex/build.sh $@

# The VM has no C library: the Rust tool links glibc statically.
$(OUT)/benchbin/cxl-duplex: $(wildcard tools/cxl-duplex/src/*.rs) tools/cxl-duplex/Cargo.toml
	cd tools && RUSTFLAGS="-C target-feature=+crt-static" cargo build --release --quiet \
		-p cxl-duplex --target x86_64-unknown-linux-gnu
	install -D tools/target/x86_64-unknown-linux-gnu/release/cxl-duplex $@

# The UAPI fuzzer runs in the VM too: statically linked like cxl-duplex.
$(OUT)/benchbin/uapi-fuzz: $(wildcard tools/uapi-fuzz/src/*) tools/uapi-fuzz/Cargo.toml
	cd tools && RUSTFLAGS="-C target-feature=+crt-static" cargo build --release --quiet \
		-p uapi-fuzz --target x86_64-unknown-linux-gnu
	install -D tools/target/x86_64-unknown-linux-gnu/release/uapi-fuzz $@

# libcxlccm's C example, linked statically with the library (tools/lib/cxlccm).
LIBCXLCCM := tools/lib/cxlccm
$(OUT)/benchbin/cxlccm_xform: $(LIBCXLCCM)/examples/xform.c $(LIBCXLCCM)/cxlccm.c $(LIBCXLCCM)/cxlccm*.h \
		include/uapi/linux/*.h | kernel
	@mkdir -p $(dir $@)
	$(CC) $(SELFTEST_CFLAGS) -Werror -o $@ $(LIBCXLCCM)/examples/xform.c $(LIBCXLCCM)/cxlccm.c

# The cxlstack command, static like cxl-duplex.
$(OUT)/benchbin/cxlstack: $(wildcard tools/cxlstack/src/*.rs tools/cxlccm/src/*.rs) tools/cxlstack/Cargo.toml \
		tools/reflux-bench/src/json.rs drivers/cxl_ccm/uapi.rs drivers/cxl_ccm/abi.rs
	cd tools && RUSTFLAGS="-C target-feature=+crt-static" cargo build --release --quiet \
		-p cxlstack --target x86_64-unknown-linux-gnu
	install -D tools/target/x86_64-unknown-linux-gnu/release/cxlstack $@

# The Rust crate's example (tools/cxlccm), static like cxl-duplex.
$(OUT)/benchbin/cxlccm_xform_rs: $(wildcard tools/cxlccm/src/*.rs tools/cxlccm/examples/*.rs) \
		tools/cxlccm/Cargo.toml drivers/cxl_ccm/uapi.rs drivers/cxl_ccm/abi.rs
	cd tools && RUSTFLAGS="-C target-feature=+crt-static" cargo build --release --quiet \
		-p cxlccm --example xform --target x86_64-unknown-linux-gnu
	install -D tools/target/x86_64-unknown-linux-gnu/release/examples/xform $@

$(OUT)/benchbin/%: bench/%.c include/uapi/linux/*.h $(wildcard bench/*.h) tools/lib/cxlccm/cxlccm_barrier.h \
		tools/lib/cxlccm/cxlccm_ring.h selftests/cxl_ccm/dev_params.h | kernel
	@mkdir -p $(dir $@)
	$(CC) $(SELFTEST_CFLAGS) -o $@ $<

selftests: $(SELFTESTS) $(HARNESS_TESTS) $(BENCHES)

vmlog:
	cd tools && cargo build --release --quiet -p vmlog

initramfs: modules selftests
	$(VM)/initramfs.sh $(INITRAMFS)

run: initramfs
	LOGDIR=$(OUT)/run $(VM)/qemu.sh run $(OUT)/run

# make bench-ccm: the offload-mode comparison alone (make bench without bench-reflux).
bench-ccm: initramfs
	cd tools && cargo build --release --quiet -p ccm-bench
	rm -rf $(OUT)/bench-run && mkdir -p $(OUT)/bench-run
	for b in $$(seq 1 $(BOOTS)); do \
		BENCH_CALIB_NS=$$($(if $(filter 1,$(DILATION)),echo 0,taskset 1 $(OUT)/benchbin/ccm_bench --calibrate)) && \
		echo "[cxlstack] bench boot $$b of $(BOOTS)" && \
		BENCH_CALIB_NS=$$BENCH_CALIB_NS BENCH_ONLY=$(ONLY) BENCH_REPEAT=$(REPEAT) BENCH_YIELD=$(YIELD) \
			BENCH_CCM=$(CCM) BENCH_DEVCPU=$(if $(filter 0,$(DEVCPU)),,1) VM_TIMEOUT=3600 \
			$(VM)/qemu.sh bench $(OUT)/bench-run/boot-$$b || exit 1; \
	done
	tools/target/release/ccm-bench $(foreach b,$(shell seq 1 $(BOOTS)),--log $(OUT)/bench-run/boot-$(b)/tests.log) \
		--out $(OUT)/bench

bench: bench-ccm
	$(MAKE) bench-reflux

# The reflux paradigm benchmark alone (tools/vm/bench-reflux.sh; the figures:
# Documentation/reflux-results.rst). Its defaults are the paper's regime: the
# encryption pipeline, the device's engine outside the VM (REFLUX_ENGINE=1)
# with REFLUX_CORES cores, its threads on CPU 1 and the host's on CPU 0
# (REFLUX_DEVCPU=1), and its speed set in the VM so that, cool, it does
# REFLUX_REGIME permille (1350) of the host-only path measured there, and
# throttled about 0.58 of it, as in the paper (REFLUX_REGIME=0: REFLUX_SPEED
# permille of a host CPU instead).
# [REFLUX_SECONDS=n per run] [REFLUX_ROUNDS=n, the paradigms interleaved in each]
# [REFLUX_PARADIGMS=A,B,Bq,C,C+lookahead,C+flap,C+share,C+uonly,H]
# [REFLUX_SUITES=bs,keys,qd | none: the short runs after the rounds]
# [REFLUX_POINT_REPS=n] [REFLUX_RISE=the thermal model's rise at full load, m°C]
# [REFLUX_TAU=its time constant, ms] [REFLUX_PIPELINE=encrypt | compress]
REFLUX_ENGINE   ?= 1
REFLUX_DEVCPU   ?= 1
REFLUX_SPEED    ?= 1000
REFLUX_CORES    ?= 1
REFLUX_PIPELINE ?= encrypt
REFLUX_SECONDS  ?= 15
bench-reflux: initramfs
	cd tools && cargo build --release --quiet -p reflux-bench -p reflux-engine
	mkdir -p $(OUT)/bench-reflux-run
	$(if $(filter 1,$(REFLUX_ENGINE)),ENGINE_BIN=$(CURDIR)/tools/target/release/reflux-engine) \
		BENCH_CALIB_NS=$$(taskset 1 $(OUT)/benchbin/ccm_bench --calibrate) \
		BENCH_SECONDS=$(REFLUX_SECONDS) BENCH_SPEED=$(REFLUX_SPEED) BENCH_CORES=$(REFLUX_CORES) \
		BENCH_DEVCPU=$(if $(filter 1,$(REFLUX_DEVCPU)),1) BENCH_RISE=$(REFLUX_RISE) \
		BENCH_TAU=$(REFLUX_TAU) BENCH_PIPELINE=$(REFLUX_PIPELINE) BENCH_ROUNDS=$(REFLUX_ROUNDS) \
		BENCH_PARADIGMS=$(REFLUX_PARADIGMS) BENCH_SUITES=$(REFLUX_SUITES) \
		BENCH_POINT_REPS=$(REFLUX_POINT_REPS) BENCH_REGIME=$(REFLUX_REGIME) VM_TIMEOUT=5400 $(VM)/qemu.sh bench-reflux $(OUT)/bench-reflux-run
	tools/target/release/reflux-bench --log $(OUT)/bench-reflux-run/tests.log --out $(OUT)/bench/reflux

check: rustfmtcheck initramfs vmlog
	LOGDIR=$(OUT)/check SUITE=$(SUITE) $(VM)/check.sh

# make check on the kasan flavor (clang, generic KASAN, KCOV; tools/vm/common.sh), in $(OUT)/kasan.
# The kernel paths are the flavor's own: none of this make's may leak into the sub-make.
# Then 60 s of the UAPI fuzzer on that kernel; a crash there is reported with its
# candidates, not minimised (a VM boot per try would not fit in CI's time).
KASAN_MAKE := env -u KBUILD_OUTPUT -u KSRC -u MODROOT -u KERNEL_IMAGE -u INITRAMFS \
	$(MAKE) KERNEL_FLAVOR=kasan OUT=$(OUT)/kasan
check-kasan:
	$(KASAN_MAKE) check
	$(KASAN_MAKE) fuzz-run SECONDS=60 FUZZ_MINIMIZE_RUNS=0

# The reflux stress suite over every pipeline and placement: make stress [DURATION=seconds, 600].
stress: initramfs vmlog
	LOGDIR=$(OUT)/stress DURATION=$(DURATION) $(VM)/stress.sh

# The UAPI fuzzer (tools/vm/fuzz.sh) on the kasan kernel, whose KCOV it steers by:
# make fuzz [SECONDS=N, 600]. fuzz-run runs it on the flavor at hand.
fuzz:
	$(KASAN_MAKE) fuzz-run SECONDS=$(or $(SECONDS),600)

fuzz-run: initramfs vmlog
	LOGDIR=$(OUT)/fuzz/run CORPUS=$(OUT)/fuzz/corpus CRASHES=$(OUT)/fuzz/crashes \
		FUZZ_SECONDS=$(or $(SECONDS),600) FUZZ_MINIMIZE_RUNS=$(FUZZ_MINIMIZE_RUNS) $(VM)/fuzz.sh

# Shrinks a crash candidate of the kasan kernel, one VM boot per try (at most RUNS, 40):
# make fuzz-minimize PROG=out/kasan/fuzz/crashes/NAME.prog gives NAME.min.prog and NAME.min.c.
fuzz-minimize:
	$(KASAN_MAKE) fuzz-minimize-run PROG=$(abspath $(PROG)) RUNS=$(or $(RUNS),40)

fuzz-minimize-run: initramfs vmlog
	cd tools && cargo build --release --quiet -p uapi-fuzz
	REPLAY_DIR=$(OUT)/fuzz/crashes/replay tools/target/release/uapi-fuzz minimize $(PROG) \
		--oracle $(abspath $(VM))/fuzz-replay.sh --max-runs $(RUNS) >$(basename $(PROG)).min.prog
	tools/target/release/uapi-fuzz repro $(basename $(PROG)).min.prog >$(basename $(PROG)).min.c
	@echo "$(basename $(PROG)).min.prog, $(basename $(PROG)).min.c"

check-harness: initramfs vmlog
	LOGDIR=$(OUT)/check-harness $(VM)/check-harness.sh

# .rustfmt.toml carries the kernel's settings, so this needs no kernel tree.
rustfmt:
	rustfmt $(RUST_SRCS)
	cd tools && cargo fmt

rustfmtcheck:
	rustfmt --check $(RUST_SRCS)
	cd tools && cargo fmt --check

clean:
	-$(MAKE) -C $(KBUILD_OUTPUT) $(KBUILD_MAKE_ARGS) M=$(CURDIR) clean
	rm -rf $(OUT) tools/target
