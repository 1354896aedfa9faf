# compll: compressed in-memory allocator (crates/compll, C API in crates/compll-capi).
#   make compll-c-test    build libcompll_capi.{a,so}, compile tests/c/*.c with gcc,
#                         run the C test (library and COMPLL_NOLIB builds) and the example
#   make compll-bench     quick compll-du run (bench/compll/du): heap nodes vs compll, medians and ratios
#   make compll-bench COMPLL_BENCH_ARGS="--json compll.json"   (full size: drop --quick)
#   make compll-trees-bench   compll-du on the generated tree and real trees of this machine
#                         (/usr, /, this checkout, a home tree; ncdu exports), one table
#                         (COMPLL_TREES_ARGS, e.g. "--reps 9 --json-dir bench/compll/results/trees")
#   make compll-memfile-bench   in-memory arca files, plain and compll-backed, against
#                               h5py's core driver: RAM held vs file size (MEMFILE_ARGS)
.PHONY: compll-c-test compll-bench compll-trees-bench compll-ncdu compll-memfile-bench

TARGET_DIR ?= $(or $(CARGO_TARGET_DIR),target)
COMPLL_DIR := crates/compll
COMPLL_LIB_DIR := $(abspath $(TARGET_DIR))/release
COMPLL_C_OUT := $(abspath $(TARGET_DIR))/compll-c
COMPLL_CFLAGS ?= -std=c11 -O2 -Wall -Wextra -Werror
COMPLL_LDLIBS := -lpthread -ldl -lm
COMPLL_BENCH_ARGS ?= --quick

compll-c-test:
	$(CARGO) build --release -p compll-capi
	mkdir -p $(COMPLL_C_OUT)
	gcc $(COMPLL_CFLAGS) -I$(COMPLL_DIR)/include $(COMPLL_DIR)/tests/c/compll_test.c \
		$(COMPLL_LIB_DIR)/libcompll_capi.a $(COMPLL_LDLIBS) -o $(COMPLL_C_OUT)/compll_test_static
	gcc $(COMPLL_CFLAGS) -I$(COMPLL_DIR)/include $(COMPLL_DIR)/tests/c/compll_test.c \
		-L$(COMPLL_LIB_DIR) -lcompll_capi -Wl,-rpath,$(COMPLL_LIB_DIR) -o $(COMPLL_C_OUT)/compll_test_shared
	gcc $(COMPLL_CFLAGS) -I$(COMPLL_DIR)/include $(COMPLL_DIR)/tests/c/compll_example.c \
		-L$(COMPLL_LIB_DIR) -lcompll_capi -Wl,-rpath,$(COMPLL_LIB_DIR) -o $(COMPLL_C_OUT)/compll_example
	gcc $(COMPLL_CFLAGS) -DCOMPLL_NOLIB -I$(COMPLL_DIR)/include $(COMPLL_DIR)/tests/c/compll_test.c \
		-o $(COMPLL_C_OUT)/compll_test_nolib
	$(COMPLL_C_OUT)/compll_test_static
	$(COMPLL_C_OUT)/compll_test_shared
	$(COMPLL_C_OUT)/compll_example
	$(COMPLL_C_OUT)/compll_test_nolib

compll-bench:
	bench/compll/run.sh $(COMPLL_BENCH_ARGS)

# ncdu (Debian's ncdu 1.x) writes the real trees' exports; without it the
# bench falls back on compll-du's own scan.
compll-ncdu:
	@command -v ncdu >/dev/null || (apt-get update -qq && apt-get install -y -qq ncdu) \
		|| echo "ncdu not installed: compll-du scans the trees itself"

COMPLL_TREES_ARGS ?= --reps 3
compll-trees-bench: compll-ncdu
	bench/compll/run.sh --trees $(COMPLL_TREES_ARGS)

MEMFILE_ARGS ?= --quick
compll-memfile-bench: py-build
	$(PY) bench/compll/memfile.py $(MEMFILE_ARGS)

TEST_TARGETS += compll-c-test
