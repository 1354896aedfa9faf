# Python package (crates/arca-py): virtualenv, native build, pytest suite.
#   make venv       create $(VENV) with maturin, numpy, pytest and h5py (the test peer)
#   make py-build   build the extension in release mode and install it into $(VENV)
#   make py-test    run the pytest suite against the installed package
#   make interop-deps  Debian's hdf5-tools (h5diff, as root), the judge of HDF5 round trips
.PHONY: venv py-build py-test interop-deps

TARGET_DIR ?= $(or $(CARGO_TARGET_DIR),target)
PY_CRATE := crates/arca-py
# h5py is the test peer and the HDF5 side of arca.interop (one minor
# version: its own test modules are the h5py-suite); hdf5plugin its
# plugin filters; netCDF4 writes and reads the netCDF side of the tests;
# PyTables (tables) writes the blosc tables and arrays the import tests read;
# xarray and dask are what arca.xarray plugs into (h5netcdf their HDF5 peer);
# anndata and h5netcdf are run on arca through arca.h5py_compat; moto[server]
# is the S3 server the object-storage tests start on 127.0.0.1.
PY_REQS := "maturin>=1.5,<2" "numpy>=1.24,<3" "pytest>=7,<10" "h5py>=3.16,<3.17" \
	"hdf5plugin>=4" "netCDF4>=1.6" "cloudpickle>=2" "xarray>=2024.10" \
	"dask[distributed]>=2024.8" "h5netcdf>=1.3" "anndata>=0.10" "tables>=3.9" \
	"moto[server]>=5.1,<6"
VENV_STAMP := $(VENV)/.arca-venv.stamp
PY_BUILD_STAMP := $(VENV)/.arca-py-build.stamp
# The package is installed editable, so only native sources force a rebuild.
PY_BUILD_DEPS := $(PY_CRATE)/Cargo.toml $(PY_CRATE)/pyproject.toml Cargo.lock \
	$(shell find $(PY_CRATE)/src crates/arca/src -type f -name '*.rs' 2>/dev/null) \
	$(shell find crates/arca-blosc2 -type f 2>/dev/null)

venv: $(VENV_STAMP)

# Debian ships venv without ensurepip unless python3-venv is installed.
$(VENV_STAMP): mk/python.mk
	python3 -m venv $(VENV) || { apt-get update && apt-get install -y python3-venv \
		&& python3 -m venv --clear $(VENV); }
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet $(PY_REQS)
	touch $@

py-build: $(PY_BUILD_STAMP)

$(PY_BUILD_STAMP): $(VENV_STAMP) $(PY_BUILD_DEPS)
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH \
		$(VENV)/bin/maturin develop --release --quiet -m $(PY_CRATE)/Cargo.toml
	touch $@

interop-deps:
	command -v h5diff >/dev/null || { \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y hdf5-tools; }

# The interop tests run `arca import/export`, so the release CLI is built first.
py-test: py-build interop-deps
	$(CARGO) build --release -p arca-cli
	$(PY) -m pytest -q $(PY_CRATE)/tests

TEST_TARGETS += py-test
