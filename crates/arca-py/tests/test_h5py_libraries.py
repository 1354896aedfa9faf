"""Libraries built on h5py run on arca: each script runs twice in a
subprocess of its own (so the stand-in never leaks into other tests), once
on h5py and once with ``arca.h5py_compat.install()`` in front, and prints
what it read back; the two printouts must be equal, and the arca run must
really have written arca files."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PYTHON_DIR = str(Path(__file__).resolve().parents[1] / "python")

PRELUDE = """
import sys
LIB = sys.argv[1]
if LIB == "arca":
    import arca.h5py_compat
    arca.h5py_compat.install()
elif LIB == "arca-bare":
    import arca
    sys.modules["h5py"] = arca
import numpy as np
import h5py
OUT = []
def show(*values):
    OUT.append(repr(values))
"""

EPILOGUE = """
print("\\n".join(OUT))
"""


def run(script, lib, workdir):
    env = dict(os.environ)
    env["PYTHONPATH"] = PYTHON_DIR + os.pathsep + env.get("PYTHONPATH", "")
    code = PRELUDE + textwrap.dedent(script) + EPILOGUE
    p = subprocess.run([sys.executable, "-c", code, lib], cwd=workdir, env=env,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, f"{lib} run failed:\n{p.stderr[-4000:]}"
    return p.stdout


def same_on_both(tmp_path, script, files, stand_in="arca"):
    """Run ``script`` on h5py and on arca (``stand_in``: "arca" through
    install(), "arca-bare" as sys.modules["h5py"] itself); equal
    printouts, and the arca run's ``files`` are arca files."""
    got = {}
    for lib in ("h5py", stand_in):
        d = tmp_path / lib
        d.mkdir()
        got[lib] = run(script, lib, d)
    assert got[stand_in] == got["h5py"]
    assert got[stand_in].strip(), "the script printed nothing"
    import arca
    for name in files:
        assert arca.is_hdf5(tmp_path / stand_in / name), name
        with open(tmp_path / "h5py" / name, "rb") as fh:
            assert fh.read(8) == b"\x89HDF\r\n\x1a\n", name


ANNDATA = """
import warnings
warnings.simplefilter("ignore")
import pandas as pd
import scipy.sparse as sp
import anndata as ad

rng = np.random.default_rng(7)
n_obs, n_vars = 30, 12
X = sp.random(n_obs, n_vars, density=0.3, format="csr", random_state=1, dtype=np.float32)
obs = pd.DataFrame({
    "cell_type": pd.Categorical(rng.choice(["T", "B", "NK"], n_obs)),
    "ordered": pd.Categorical(rng.choice(["lo", "mid", "hi"], n_obs),
                              categories=["lo", "mid", "hi"], ordered=True),
    "n_genes": rng.integers(0, 500, n_obs),
    "score": rng.standard_normal(n_obs),
    "flag": rng.integers(0, 2, n_obs).astype(bool),
    "label": [f"cell {i}" for i in range(n_obs)],
}, index=[f"c{i}" for i in range(n_obs)])
var = pd.DataFrame({"gene": [f"g{i}" for i in range(n_vars)],
                    "mean": rng.standard_normal(n_vars)},
                   index=[f"v{i}" for i in range(n_vars)])
a = ad.AnnData(
    X=X, obs=obs, var=var,
    obsm={"X_pca": rng.standard_normal((n_obs, 3)),
          "sparse": sp.random(n_obs, 4, density=0.5, format="csc", random_state=2)},
    varm={"loadings": rng.standard_normal((n_vars, 2))},
    layers={"counts": sp.random(n_obs, n_vars, density=0.2, format="csc", random_state=3),
            "dense": rng.standard_normal((n_obs, n_vars))},
    uns={"title": "run 7", "n": 3, "x": 1.5, "arr": np.arange(4),
         "strs": np.array(["a", "bb"], dtype=object),
         "nested": {"deeper": {"k": "v", "vals": np.array([1.0, 2.0])}, "flag": True},
         "colors": ["red", "blue"]},
)
a.write_h5ad("cells.h5ad", compression="gzip")

def describe(d):
    if isinstance(d, dict):
        return {k: describe(v) for k, v in sorted(d.items())}
    if sp.issparse(d):
        return ("sparse", d.format, d.shape, d.toarray().round(6).tolist())
    if isinstance(d, np.ndarray):
        return ("array", str(d.dtype), d.tolist())
    if isinstance(d, pd.DataFrame):
        return ("frame", list(d.columns), [str(t) for t in d.dtypes],
                d.astype(str).values.tolist(), list(d.index))
    return (type(d).__name__, d)

b = ad.read_h5ad("cells.h5ad")
show(b.shape, describe(b.X), describe(b.obs), describe(b.var))
show(describe(dict(b.obsm)), describe(dict(b.varm)), describe(dict(b.layers)))
show(describe(b.uns))
show(list(b.obs["cell_type"].cat.categories), b.obs["ordered"].cat.ordered)

c = ad.read_h5ad("cells.h5ad", backed="r")
show(c.isbacked, c.shape, describe(c.X[2:7]), describe(c.X[[1, 4, 9]]))
show(describe(c.obs), describe(c[3:8].to_memory().X))
sub = c[c.obs["cell_type"] == "T"]
show(sub.shape, describe(sub.to_memory().X))
c.file.close()

# Writing back into a backed file, and an in-memory round trip.
d = ad.read_h5ad("cells.h5ad", backed="r+")
d.obs["extra"] = np.arange(n_obs)
d.write()
d.file.close()
show(describe(ad.read_h5ad("cells.h5ad").obs))
a2 = ad.AnnData(X=np.arange(12, dtype=np.float64).reshape(3, 4))
a2.write_h5ad("dense.h5ad")
show(describe(ad.read_h5ad("dense.h5ad").X))
"""


@pytest.mark.parametrize("stand_in", ["arca", "arca-bare"])
def test_anndata(tmp_path, stand_in):
    import anndata  # noqa: F401  (installed by make: a missing one fails)
    same_on_both(tmp_path, ANNDATA, ["cells.h5ad", "dense.h5ad"], stand_in)


H5NETCDF = """
import h5netcdf
import h5netcdf.legacyapi as legacy

with h5netcdf.File("new.nc", "w") as f:
    f.dimensions = {"x": 3, "t": None}
    x = f.create_variable("x", ("x",), float, data=[1.0, 2.0, 3.0])
    x.attrs["units"] = "m"
    temp = f.create_variable("temp", ("t", "x"), "f4", fillvalue=-1.0,
                             compression="gzip", chunks=(1, 3))
    f.resize_dimension("t", 2)
    temp[...] = np.arange(6).reshape(2, 3)
    temp.attrs["long_name"] = "temperature"
    temp.attrs["valid"] = np.array([0.0, 10.0])
    f.attrs["title"] = "h5netcdf on h5py's API"
    f.attrs["version"] = 3
    f.create_variable("name", ("x",), h5py.string_dtype(),
                      data=np.array(["a", "bb", "ccc"], dtype=object))
    g = f.create_group("sub")
    g.dimensions = {"y": 2}
    g.create_variable("y", ("y",), "i4", data=[7, 8])
    g.create_variable("v", ("y", "x"), "f8", data=np.ones((2, 3)))
    f.resize_dimension("t", 4)

# decode_vlen_strings: string variables read as str on both (h5py's raw
# reads of variable-length strings give bytes).
with h5netcdf.File("new.nc", "r", decode_vlen_strings=True) as f:
    show(sorted(f.dimensions.items(), key=str), list(f.variables), dict(f.attrs))
    for name, v in f.variables.items():
        show(name, v.dimensions, v.shape, str(v.dtype), v[...].tolist(), dict(v.attrs))
    show(f["sub"].dimensions["y"].size, f["sub/v"].dimensions, f["sub/y"][...].tolist())
    show(f.dimensions["t"].isunlimited(), f.dimensions["t"].size)

with legacy.Dataset("legacy.nc", "w") as ds:
    ds.createDimension("x", 4)
    ds.createDimension("t", None)
    v = ds.createVariable("v", "f8", ("t", "x"))
    v[0:2, :] = np.ones((2, 4))
    v.setncattr("units", "K")
    v.setncattr("a", 1)
    v.setncattr("b", "two")
    ds.setncattr("history", "made")
    s = ds.createVariable("s", str, ("x",))
    s[:] = np.array(["p", "q", "r", "s"], dtype=object)
    g = ds.createGroup("grp")
    g.createVariable("w", "i2", ("x",))[:] = np.arange(4)

with legacy.Dataset("legacy.nc", "r") as ds:
    show(ds.dimensions["t"].size, list(ds.variables), ds.ncattrs(), ds.getncattr("history"))
    v = ds.variables["v"]
    show(v[:].tolist(), v.ncattrs(), v.getncattr("units"), v.dimensions)
    show(ds.variables["s"][:].tolist(), ds.groups["grp"].variables["w"][:].tolist())
"""


def test_h5netcdf(tmp_path):
    import h5netcdf  # noqa: F401  (installed by make: a missing one fails)
    same_on_both(tmp_path, H5NETCDF, ["new.nc", "legacy.nc"])


XARRAY = """
import warnings
warnings.simplefilter("ignore")
import pandas as pd
import xarray as xr

ds = xr.Dataset(
    {"a": (("x", "y"), np.arange(6.0).reshape(2, 3), {"units": "s"}),
     "b": (("time",), np.array([1, 2, 3], dtype="i4")),
     "c": (("x",), np.array(["p", "qq"], dtype=object))},
    coords={"x": [10, 20], "y": ["u", "v", "w"],
            "time": pd.date_range("2000-01-01", periods=3)},
    attrs={"k": 1, "title": "xr"},
)
ds.to_netcdf("xr.nc", engine="h5netcdf", encoding={"a": {"zlib": True, "chunksizes": (1, 3)}})
back = xr.open_dataset("xr.nc", engine="h5netcdf")
show(back.identical(ds), sorted(back.variables), dict(back.attrs))
show(back["a"].values.tolist(), back["a"].attrs, back["y"].values.tolist())
show([str(t) for t in back["time"].values], back["c"].values.tolist())
show(back["a"].encoding.get("chunksizes"), back["a"].encoding.get("zlib"))
back.close()

tree_root = xr.Dataset({"top": ("x", [1, 2])})
dt = xr.DataTree.from_dict({"/": tree_root, "/child": xr.Dataset({"z": ("y", [3.0, 4.0, 5.0])})})
dt.to_netcdf("tree.nc", engine="h5netcdf")
dt2 = xr.open_datatree("tree.nc", engine="h5netcdf")
show(sorted(dt2.groups), dt2["child"]["z"].values.tolist(), dt2["top"].values.tolist())
dt2.close()
"""


def test_xarray_h5netcdf_engine(tmp_path):
    import h5netcdf  # noqa: F401  (installed by make: a missing one fails)
    import xarray  # noqa: F401  (installed by make: a missing one fails)
    same_on_both(tmp_path, XARRAY, ["xr.nc", "tree.nc"])


def test_install_and_uninstall(tmp_path):
    """install() puts arca behind `import h5py` (and its modules) for the
    code imported after it, refuses when the real h5py is imported, and
    uninstall() puts back what was there."""
    out = run("""
import importlib
import arca, arca.h5py_compat as compat
h = sys.modules["h5py"]
show(compat.installed(), h.File is arca.File, h.__name__, h.__version__ == arca.version.h5py_version)
import h5py.version, h5py.h5ds, h5py.h5p
show(h5py.version is arca.version, h5py.h5ds is arca.h5ds, h5py.h5p is arca.h5p)
try:
    import h5py.h5t
except ImportError as e:
    show("ImportError")
show(arca.Dataset.__module__, arca.File.__module__)
show(compat.install() is h)
compat.uninstall()
show(compat.installed(), "h5py" in sys.modules, arca.Dataset.__module__)
import h5py as real
show(real.__name__, real is not arca)
try:
    compat.install()
except RuntimeError:
    show("refused")
show(compat.install(force=True).File is arca.File)
compat.uninstall()
show(sys.modules["h5py"] is real)
""", "arca", tmp_path)
    assert out.splitlines() == [
        "(True, True, 'arca', True)",
        "(True, True, True)",
        "('ImportError',)",
        "('h5py._hl.dataset', 'h5py._hl.files')",
        "(True,)",
        "(False, False, 'arca._dataset')",
        "('h5py', True)",
        "('refused',)",
        "(True,)",
        "(True,)",
    ]
