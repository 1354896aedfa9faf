# C API (crates/arca-capi): libarca.a / libarca.so and include/arca.h.
#   make capi-build   build the static and shared libraries (release)
#   make capi-test    compile tests/c/test_arca.c and tests/c/example.c with gcc
#                     against the header; run the test linked statically, linked
#                     to libarca.so, and under AddressSanitizer with leak checks;
#                     run the example
.PHONY: capi-build capi-test

TARGET_DIR ?= $(or $(CARGO_TARGET_DIR),target)
CAPI_DIR := crates/arca-capi
CAPI_LIB_DIR := $(abspath $(TARGET_DIR))/release
CAPI_OUT := $(abspath $(TARGET_DIR))/capi-c
CAPI_CFLAGS ?= -std=c11 -O2 -Wall -Wextra -Werror -pedantic
CAPI_ASAN_FLAGS ?= -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
CAPI_LDLIBS := -lpthread -ldl -lm
CAPI_GCC = gcc $(CAPI_CFLAGS) -I$(CAPI_DIR)/include

capi-build:
	$(CARGO) build --release -p arca-capi

capi-test: capi-build
	mkdir -p $(CAPI_OUT)
	$(CAPI_GCC) $(CAPI_DIR)/tests/c/test_arca.c $(CAPI_LIB_DIR)/libarca.a $(CAPI_LDLIBS) \
		-o $(CAPI_OUT)/test_arca
	$(CAPI_GCC) $(CAPI_DIR)/tests/c/test_arca.c -L$(CAPI_LIB_DIR) -larca \
		-Wl,-rpath,$(CAPI_LIB_DIR) -o $(CAPI_OUT)/test_arca_shared
	$(CAPI_GCC) $(CAPI_ASAN_FLAGS) $(CAPI_DIR)/tests/c/test_arca.c $(CAPI_LIB_DIR)/libarca.a \
		$(CAPI_LDLIBS) -o $(CAPI_OUT)/test_arca_asan
	$(CAPI_GCC) $(CAPI_DIR)/tests/c/example.c $(CAPI_LIB_DIR)/libarca.a $(CAPI_LDLIBS) \
		-o $(CAPI_OUT)/example
	$(CAPI_OUT)/test_arca
	$(CAPI_OUT)/test_arca_shared
	ASAN_OPTIONS=detect_leaks=1 $(CAPI_OUT)/test_arca_asan
	cd $(CAPI_OUT) && ./example

TEST_TARGETS += capi-test
