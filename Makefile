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
	ARCA_PYTHON=$(PY) $(ARCA_BIN) export --force --quiet $(DEMO_DIR)/example.arca $(DEMO_DIR)/example.h5
	ARCA_PYTHON=$(PY) $(ARCA_BIN) import --force --quiet $(DEMO_DIR)/example.h5 $(DEMO_DIR)/roundtrip.arca
	$(ARCA_BIN) ls -r $(DEMO_DIR)/roundtrip.arca
	$(PY) examples/demo.py $(DEMO_DIR)/demo_py.arca
