# Demo: the arca command-line tool on an example file, then the Python demo.
#   make demo       build `arca` (release) and the Python package (py-build),
#                   write out/example.arca, show it with ls, dump, stat and
#                   check, and run examples/demo.py when it exists
#   make arca-cli   build only the `arca` binary: $(TARGET_DIR)/release/arca
.PHONY: demo arca-cli

TARGET_DIR ?= $(or $(CARGO_TARGET_DIR),target)
ARCA_BIN := $(TARGET_DIR)/release/arca
DEMO_DIR := out

arca-cli:
	$(CARGO) build --release -p arca-cli

demo: arca-cli py-build
	mkdir -p $(DEMO_DIR)
	$(ARCA_BIN) create-example --force $(DEMO_DIR)/example.arca
	$(ARCA_BIN) ls -r $(DEMO_DIR)/example.arca
	$(ARCA_BIN) dump $(DEMO_DIR)/example.arca
	$(ARCA_BIN) stat $(DEMO_DIR)/example.arca
	$(ARCA_BIN) check $(DEMO_DIR)/example.arca
	if test -f examples/demo.py; then $(PY) examples/demo.py $(DEMO_DIR)/demo_py.arca; fi
