# compll: compressed in-memory allocator (crates/compll, C API in crates/compll-capi).
#   make compll-c-test    build libcompll_capi.{a,so}, compile tests/c/*.c with gcc,
#                         run the C test (library and COMPLL_NOLIB builds) and the example
#   make compll-bench     quick compll-du run (bench/compll/du): heap nodes vs compll, medians and ratios
#   make compll-bench COMPLL_BENCH_ARGS="--json compll.json"   (full size: drop --quick)
#   make compll-memfile-bench   in-memory arca files, plain and compll-backed, against
#                               h5py's core driver: RAM held vs file size (MEMFILE_ARGS)
.PHONY: compll-c-test compll-bench compll-memfile-bench

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

MEMFILE_ARGS ?= --quick
compll-memfile-bench: py-build
	$(PY) bench/compll/memfile.py $(MEMFILE_ARGS)

TEST_TARGETS += compll-c-test
