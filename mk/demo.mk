# The demo's pieces (the `demo` target itself is in the top-level Makefile).
#   make arca-cli   build only the `arca` binary: $(TARGET_DIR)/release/arca
.PHONY: arca-cli

TARGET_DIR ?= $(or $(CARGO_TARGET_DIR),target)
ARCA_BIN := $(TARGET_DIR)/release/arca
DEMO_DIR := out

arca-cli:
	$(CARGO) build --release -p arca-cli
