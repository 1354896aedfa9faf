# Fuzz targets (fuzz/, a crate outside the workspace; see fuzz/README.md).
#   make fuzz-build    build every target with stable cargo, profile `replay`
#                      (release with debug assertions and overflow checks)
#   make fuzz-replay   run each target once over its checked-in inputs in
#                      fuzz/regressions/<target>/ (past findings and seeds)
# Fuzzing itself needs nightly and cargo-fuzz:
#   cd fuzz && cargo +nightly fuzz run open_bytes -- -max_total_time=60
.PHONY: fuzz-build fuzz-replay

TARGET_DIR ?= $(or $(CARGO_TARGET_DIR),target)
FUZZ_TARGETS := $(sort $(basename $(notdir $(wildcard fuzz/fuzz_targets/*.rs))))
FUZZ_BIN_DIR := $(TARGET_DIR)/replay

fuzz-build:
	$(CARGO) build --profile replay --manifest-path fuzz/Cargo.toml --target-dir $(TARGET_DIR)

# A target with no inputs is named, not failed: a new target starts empty.
fuzz-replay: fuzz-build
	@for t in $(FUZZ_TARGETS); do \
		inputs=$$(find fuzz/regressions/$$t -type f ! -name '*.md' 2>/dev/null | sort); \
		if [ -z "$$inputs" ]; then echo "fuzz-replay: $$t: no inputs in fuzz/regressions/$$t"; continue; fi; \
		echo "fuzz-replay: $$t: $$(echo "$$inputs" | wc -l) inputs"; \
		$(FUZZ_BIN_DIR)/$$t $$inputs > $(FUZZ_BIN_DIR)/$$t.replay.log 2>&1 \
			|| { cat $(FUZZ_BIN_DIR)/$$t.replay.log; echo "fuzz-replay: $$t failed"; exit 1; }; \
	done

TEST_TARGETS += fuzz-replay
