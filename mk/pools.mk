# Free-list benchmark. Not part of TEST_TARGETS: it measures, it does not check
# (the free-list tests run with the core's cargo tests).
#   make bench-pools-quick          # seconds
#   make bench-pools                # {500,1000,1500} x {15,30,45}, 3 repeats, minutes
#   make bench-pools BENCH_POOLS_ARGS="--json pools.json"
.PHONY: bench-pools bench-pools-quick bench-pools-bin

TARGET_DIR ?= $(or $(CARGO_TARGET_DIR),target)
BENCH_POOLS_ARGS ?=
BENCH_POOLS_BIN := $(TARGET_DIR)/release/arca-bench-pools

bench-pools-bin:
	$(CARGO) build --release -p arca-bench-pools

# bench-deps (mk/bench.mk) installs h5py and hdf5plugin into the venv.
bench-pools: bench-deps bench-pools-bin
	$(PY) bench/pools/run.py --bin $(BENCH_POOLS_BIN) $(BENCH_POOLS_ARGS)

bench-pools-quick: bench-deps bench-pools-bin
	$(PY) bench/pools/run.py --quick --bin $(BENCH_POOLS_BIN) $(BENCH_POOLS_ARGS)
