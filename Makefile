# Top-level build. Each component adds its own targets in mk/*.mk and appends
# its test target to TEST_TARGETS, so `make test` runs everything.
SHELL := /bin/bash
CARGO ?= cargo
VENV ?= .venv
PY := $(VENV)/bin/python
TEST_TARGETS :=

.PHONY: test demo lint rust-test
include $(sort $(wildcard mk/*.mk))

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --release -- -D warnings

rust-test:
	$(CARGO) test --workspace --release

test: lint rust-test $(TEST_TARGETS)
	@echo "make test: all suites passed"
