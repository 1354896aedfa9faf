# Parallel variable-length writes (crates/arca-py/python/arca/mpi.py).
#   make mpi-deps    Open MPI from Debian (apt, as root) and mpi4py in the venv
#   make mpi-test    collective writes under mpirun -n 2 and -n 4 --oversubscribe
#   make bench-vlen-mpi   2 ranks against a serial write of the same data
.PHONY: mpi-deps mpi-test bench-vlen-mpi

MPI_STAMP := $(VENV)/.arca-mpi.stamp
MPI_ENV := OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
BENCH_VLEN_MPI_ARGS ?=

mpi-deps: $(MPI_STAMP)

# mpi4py builds against the mpicc that libopenmpi-dev provides.
$(MPI_STAMP): mk/mpi.mk | venv
	command -v mpicc >/dev/null && command -v mpirun >/dev/null || { \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y libopenmpi-dev openmpi-bin; }
	$(PY) -m pip install --quiet "mpi4py>=3.1"
	touch $@

mpi-test: py-build mpi-deps
	$(MPI_ENV) $(PY) -m pytest -q crates/arca-py/tests_mpi

bench-vlen-mpi: py-build mpi-deps
	$(MPI_ENV) $(PY) bench/vlen/mpi_bench.py $(BENCH_VLEN_MPI_ARGS)

TEST_TARGETS += mpi-test
