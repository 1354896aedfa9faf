# Benchmarks. Not part of TEST_TARGETS: they measure, they do not check.
#   make bench-io-quick             # 64 MiB, a few seconds
#   make bench-io                   # 1 GiB, 3 repeats, a few minutes
#   make bench-io BENCH_IO_ARGS="--json bench-io.json --dir /mnt/scratch"
#   make bench-objects-quick        # many small objects, 10^3 and 10^4, about half a minute
#   make bench-objects              # 10^3..10^6 objects, 3 repeats, a long run
#   make bench-objects BENCH_OBJECTS_ARGS="--counts 1000,100000 --json objects.json"
#   make bench-cloud-quick          # object storage: 32 MiB on a local S3 server, seconds
#   make bench-cloud                # 256 MiB, 5 repeats, 20 ms a request
.PHONY: bench-deps bench-io bench-io-quick bench-objects bench-objects-quick \
	bench-cloud-deps bench-cloud bench-cloud-quick

# zarr v3 needs Python >= 3.11; hdf5plugin supplies HDF5's zstd/lz4 filters.
BENCH_PIP_PKGS ?= h5py hdf5plugin 'zarr>=3' numcodecs pyarrow
# The object-storage peers: zarr over obstore, h5py and kerchunk over
# fsspec's HTTP filesystem (aiohttp); moto's server comes with PY_REQS.
# (s3fs is left out: its aiobotocore pins an older botocore than boto3's.)
BENCH_CLOUD_PIP_PKGS ?= "obstore>=0.12,<0.13" "kerchunk>=0.2.10,<0.3" "aiohttp>=3.9,<4"
BENCH_IO_ARGS ?=
BENCH_CLOUD_ARGS ?=
BENCH_OBJECTS_ARGS ?=

bench-deps: venv
	$(PY) -m pip install --quiet $(BENCH_PIP_PKGS)

bench-io: bench-deps py-build
	$(PY) bench/io/io_bench.py --strict $(BENCH_IO_ARGS)

bench-io-quick: bench-deps py-build
	$(PY) bench/io/io_bench.py --quick --strict $(BENCH_IO_ARGS)

bench-objects: bench-deps py-build
	$(PY) bench/objects/objects_bench.py $(BENCH_OBJECTS_ARGS)

bench-objects-quick: bench-deps py-build
	$(PY) bench/objects/objects_bench.py --quick $(BENCH_OBJECTS_ARGS)

bench-cloud-deps: bench-deps
	$(PY) -m pip install --quiet $(BENCH_CLOUD_PIP_PKGS)

bench-cloud: bench-cloud-deps py-build
	$(PY) bench/cloud/cloud_bench.py $(BENCH_CLOUD_ARGS)

bench-cloud-quick: bench-cloud-deps py-build
	$(PY) bench/cloud/cloud_bench.py --quick $(BENCH_CLOUD_ARGS)
