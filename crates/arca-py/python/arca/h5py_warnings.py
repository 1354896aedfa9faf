"""The warning classes h5py's API raises, under h5py's names (as
``h5py.h5py_warnings``), so code that filters or expects them runs::

    with pytest.warns(arca.h5py_warnings.H5pyDeprecationWarning):
        f.create_dataset("x", (5,))      # no dtype and no data: float32
"""


class H5pyWarning(UserWarning):
    """Base of the warnings h5py's API raises."""


class H5pyDeprecationWarning(H5pyWarning):
    """A use h5py deprecates (and arca with it)."""
