# Variable-length data: pyarrow tests and the benchmark (bench/vlen).
#   make vlen-arrow-test     pyarrow in and out of variable-length datasets
#   make bench-vlen-quick    every case and library at 4 MiB, seconds
#   make bench-vlen          64..1024 MiB and 10 million strings, a long run
#   make bench-vlen BENCH_VLEN_ARGS="--sizes 64,256 --json vlen.json"
.PHONY: vlen-deps vlen-arrow-test bench-vlen bench-vlen-quick

VLEN_PIP_PKGS ?= "pyarrow>=14" h5py "zarr>=3" numcodecs
VLEN_STAMP := $(VENV)/.arca-vlen-deps.stamp
BENCH_VLEN_ARGS ?=

vlen-deps: $(VLEN_STAMP)

$(VLEN_STAMP): $(VENV_STAMP) mk/vlen.mk
	$(PY) -m pip install --quiet $(VLEN_PIP_PKGS)
	touch $@

vlen-arrow-test: py-build vlen-deps
	$(PY) -m pytest -q crates/arca-py/tests_arrow

bench-vlen: py-build vlen-deps
	$(PY) bench/vlen/vlen_bench.py $(BENCH_VLEN_ARGS)

bench-vlen-quick: py-build vlen-deps
	$(PY) bench/vlen/vlen_bench.py --quick $(BENCH_VLEN_ARGS)

TEST_TARGETS += vlen-arrow-test
