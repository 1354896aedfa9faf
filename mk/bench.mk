# Benchmarks. Not part of TEST_TARGETS: they measure, they do not check.
#   make bench-io-quick             # 64 MiB, a few seconds
#   make bench-io                   # 1 GiB, 3 repeats, a few minutes
#   make bench-io BENCH_IO_ARGS="--json bench-io.json --dir /mnt/scratch"
.PHONY: bench-deps bench-io bench-io-quick

# zarr v3 needs Python >= 3.11; hdf5plugin supplies HDF5's zstd/lz4 filters.
BENCH_PIP_PKGS ?= h5py hdf5plugin 'zarr>=3' numcodecs
BENCH_IO_ARGS ?=

bench-deps: venv
	$(PY) -m pip install --quiet $(BENCH_PIP_PKGS)

bench-io: bench-deps py-build
	$(PY) bench/io/io_bench.py --strict $(BENCH_IO_ARGS)

bench-io-quick: bench-deps py-build
	$(PY) bench/io/io_bench.py --quick --strict $(BENCH_IO_ARGS)
