# Parallel variable-length writes (crates/arca-py/python/arca/mpi.py).
#   make mpi-deps    Open MPI from Debian (apt, as root) and mpi4py in the venv
#   make mpi-test    collective writes under mpirun -n 2 and -n 4 --oversubscribe
#   make bench-vlen-mpi   2 ranks against a serial write of the same data
# Collective writes from C (crates/arca-capi/include/arca_mpi.h):
#   make capi-mpi-build  mpi/arca_mpi.c with mpicc into $(CAPI_OUT)/libarca_mpi.a
#   make capi-mpi-test   tests/c/test_mpi.c under mpirun -n 2 and -n 4
#                        --oversubscribe, CAPI_MPI_LOOPS times (default 1)
.PHONY: mpi-deps mpi-test bench-vlen-mpi capi-mpi-build capi-mpi-test

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

# Containers often forbid the cross-process memory copy Open MPI tries first.
MPI_RUN_ENV := $(MPI_ENV) OMPI_MCA_btl_vader_single_copy_mechanism=none \
	OMPI_MCA_rmaps_base_oversubscribe=1
CAPI_MPI_LOOPS ?= 1
CAPI_MPICC = mpicc $(CAPI_CFLAGS) -I$(CAPI_DIR)/include

capi-mpi-build: capi-build mpi-deps
	mkdir -p $(CAPI_OUT)
	$(CAPI_MPICC) -c $(CAPI_DIR)/mpi/arca_mpi.c -o $(CAPI_OUT)/arca_mpi.o
	rm -f $(CAPI_OUT)/libarca_mpi.a
	ar rcs $(CAPI_OUT)/libarca_mpi.a $(CAPI_OUT)/arca_mpi.o

capi-mpi-test: capi-mpi-build
	$(CAPI_MPICC) $(CAPI_DIR)/tests/c/test_mpi.c $(CAPI_OUT)/libarca_mpi.a \
		$(CAPI_LIB_DIR)/libarca.a $(CAPI_LDLIBS) -Wl,--wrap=arca_write_out \
		-o $(CAPI_OUT)/test_mpi
	out=$$(mktemp -d) && trap 'rm -rf "$$out"' EXIT && \
	for i in $$(seq $(CAPI_MPI_LOOPS)); do \
		$(MPI_RUN_ENV) mpirun -n 2 $(CAPI_OUT)/test_mpi "$$out" || exit 1; \
		$(MPI_RUN_ENV) mpirun -n 4 --oversubscribe $(CAPI_OUT)/test_mpi "$$out" || exit 1; \
	done

TEST_TARGETS += capi-mpi-test
