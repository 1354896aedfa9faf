# Top-level build. Each component adds its own targets in mk/*.mk and appends
# its test target to TEST_TARGETS, so `make test` runs everything.
SHELL := /bin/bash
CARGO ?= cargo
VENV ?= .venv
PY := $(VENV)/bin/python
TEST_TARGETS :=

.PHONY: test check demo lint rust-test rust-paranoid
include $(sort $(wildcard mk/*.mk))

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) fmt --manifest-path fuzz/Cargo.toml -- --check
	$(CARGO) clippy --workspace --all-targets --release -- -D warnings

# ARCA_TEST_SCALE multiplies the counts of every heavy suite (proptest cases,
# kill trials, corruption samples, reader commits); 1 in `make test`.
rust-test:
	$(CARGO) test --workspace --release

# Invariants checked after every operation (feature `paranoid`): the crash
# simulations and the space model.
rust-paranoid:
	$(CARGO) test -p arca --release --features paranoid --lib --test crash --test space_model

# Everything, each stage timed: needs root for apt (hdf5-tools, Open MPI) and
# the network for pip on a fresh machine.
test:
	@mk/stages.sh "$(MAKE)" lint rust-test rust-paranoid $(TEST_TARGETS)
	@echo "make test: all suites passed"

# The quick tier: formatting, clippy, and the Rust unit, property and crash
# tests at a tenth of their counts. No root, no pip, no apt; a few minutes
# once cargo has its crates.
CHECK_SCALE ?= 0.1
check:
	@ARCA_TEST_SCALE=$(CHECK_SCALE) mk/stages.sh "$(MAKE)" lint rust-test
	@echo "make check: passed"

# Build `arca` and the Python package, write out/example.arca, show it with
# ls, dump, stat and check, export it to HDF5 and import that back, then
# run the Python demo.
demo: arca-cli py-build
	mkdir -p $(DEMO_DIR)
	$(ARCA_BIN) create-example --force $(DEMO_DIR)/example.arca
	$(ARCA_BIN) ls -r $(DEMO_DIR)/example.arca
	$(ARCA_BIN) dump $(DEMO_DIR)/example.arca
	$(ARCA_BIN) stat $(DEMO_DIR)/example.arca
	$(ARCA_BIN) check $(DEMO_DIR)/example.arca
	$(VENV)/bin/arca export --force --quiet $(DEMO_DIR)/example.arca $(DEMO_DIR)/example.h5
	$(VENV)/bin/arca import --force --quiet $(DEMO_DIR)/example.h5 $(DEMO_DIR)/roundtrip.arca
	$(ARCA_BIN) ls -r $(DEMO_DIR)/roundtrip.arca
	$(PY) examples/demo.py $(DEMO_DIR)/demo_py.arca
	@echo "demo done. The arca command and package are in $(VENV): . $(VENV)/bin/activate"
