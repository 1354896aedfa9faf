//! The fast path of `Dataset.__getitem__`: the common keys parsed here
//! and read in one native call that allocates and fills the numpy array
//! it returns.
//!
//! A key of integers, slices with positive steps, one `...`, or a tuple of
//! these, with at most one axis picked by an increasing list (or 1-D
//! integer array) of indices, is parsed against the dataset's shape into a
//! box (`start`, `count`, `step` per axis) and read straight into a new
//! array of the element dtype the Python layer registered (see
//! `Dataset.fast_reads`); a key of integers only reads its element into a
//! small buffer and returns it as a numpy scalar, no array made. Anything else — field names, `None`, masks,
//! unsorted or repeated lists, indices out of range, a second list — is
//! declined (`read_key` returns `None`) and the Python layer's general
//! path handles it, with h5py's errors.
//!
//! ```python
//! ds._id.fast_reads(np.dtype("<f8"))   # once per handle
//! ds._id.read_key(np.s_[500:600])      # ndarray of 100 float64
//! ds._id.read_key((3, "x"))            # None: declined
//! ```

use arca::Selection;
use numpy::npyffi::{_PyArray_GET_ITEM_DATA, PY_ARRAY_API};
use numpy::{PyArrayDescr, PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyEllipsis, PyInt, PyList, PySlice, PySliceMethods, PyTuple};

use crate::cvt;

/// An index list is read as one bounding box and picked from in memory
/// when its span is at most this many times its length; sparser lists are
/// read one run of consecutive indices at a time.
const DENSE_SPAN: u64 = 4;

/// A parsed key: the box per dataset axis, the axis an index list picks
/// (with its increasing indices, inside the box), the result's shape.
pub(crate) struct Key {
    start: Vec<u64>,
    count: Vec<u64>,
    step: Vec<u64>,
    list: Option<(usize, Vec<u64>)>,
    out_shape: Vec<usize>,
    /// Every axis was an integer: the result is a numpy scalar.
    scalar: bool,
}

/// One item of a key on one axis.
enum Item<'py> {
    Int(i64),
    Slice(Bound<'py, PySlice>),
    List(Vec<i64>),
}

fn numpy_type(py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
    Ok(py.import("numpy")?.getattr(name)?.unbind())
}

/// `numpy.integer`, to take numpy's integer scalars as integers.
fn np_integer(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static T: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    Ok(T.get_or_try_init(py, || numpy_type(py, "integer"))?
        .bind(py))
}

/// `numpy.empty`, which allocates the result (a `MemoryError`, never an
/// abort, when memory runs out).
fn np_empty(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static F: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    Ok(F.get_or_try_init(py, || numpy_type(py, "empty"))?.bind(py))
}

/// An integer index: Python's `int` (not `bool`, which h5py reads
/// differently) or a numpy integer scalar.
fn as_int(k: &Bound<'_, PyAny>) -> PyResult<Option<i64>> {
    if k.is_exact_instance_of::<PyInt>() {
        return Ok(k.extract::<i64>().ok());
    }
    if k.is_instance(np_integer(k.py())?)? {
        return Ok(k.call_method0("__index__")?.extract::<i64>().ok());
    }
    Ok(None)
}

/// An index list: a list of Python ints or a 1-D numpy integer array.
fn as_list(k: &Bound<'_, PyAny>) -> PyResult<Option<Vec<i64>>> {
    if let Ok(l) = k.cast::<PyList>() {
        let mut v = Vec::with_capacity(l.len());
        for x in l.iter() {
            if !x.is_exact_instance_of::<PyInt>() {
                return Ok(None);
            }
            match x.extract::<i64>() {
                Ok(i) => v.push(i),
                Err(_) => return Ok(None),
            }
        }
        return Ok(Some(v));
    }
    let Ok(a) = k.cast::<PyUntypedArray>() else {
        return Ok(None);
    };
    if a.ndim() != 1 || !matches!(a.dtype().kind(), b'i' | b'u') {
        return Ok(None);
    }
    // Any integer width: numpy converts (a uint64 beyond i64 fails: declined).
    match k
        .call_method1("astype", ("i8",))
        .and_then(|x| x.call_method0("tolist"))
    {
        Ok(l) => Ok(l.extract::<Vec<i64>>().ok()),
        Err(_) => Ok(None),
    }
}

/// Parse `key` against `shape`; `None` when the fast path does not take it.
pub(crate) fn parse<'py>(key: &Bound<'py, PyAny>, shape: &[u64]) -> PyResult<Option<Key>> {
    let rank = shape.len();
    let items: Vec<Bound<'py, PyAny>> = match key.cast::<PyTuple>() {
        Ok(t) => t.iter().collect(),
        Err(_) => vec![key.clone()],
    };
    let mut parsed: Vec<Option<Item<'py>>> = Vec::with_capacity(rank);
    let mut ellipsis = false;
    let mut lists = 0;
    for k in &items {
        if k.is(PyEllipsis::get(k.py())) {
            if ellipsis {
                return Ok(None);
            }
            ellipsis = true;
            parsed.push(None);
        } else if let Some(i) = as_int(k)? {
            parsed.push(Some(Item::Int(i)));
        } else if let Ok(s) = k.cast::<PySlice>() {
            parsed.push(Some(Item::Slice(s.clone())));
        } else if let Some(l) = as_list(k)? {
            lists += 1;
            if lists > 1 || l.is_empty() {
                return Ok(None);
            }
            parsed.push(Some(Item::List(l)));
        } else {
            return Ok(None);
        }
    }
    let given = parsed.iter().filter(|p| p.is_some()).count();
    if given > rank {
        return Ok(None);
    }
    if rank == 0 {
        // A scalar dataset: `ds[()]` is its value, `ds[...]` a 0-d array.
        return Ok((given == 0 && items.len() <= 1).then(|| Key {
            start: vec![],
            count: vec![],
            step: vec![],
            list: None,
            out_shape: vec![],
            scalar: !ellipsis,
        }));
    }
    let mut start = Vec::with_capacity(rank);
    let mut count = Vec::with_capacity(rank);
    let mut step = Vec::with_capacity(rank);
    let mut out_shape = Vec::with_capacity(rank);
    let mut list = None;
    let mut ints = 0;
    let mut expanded: Vec<Option<Item<'py>>> = Vec::with_capacity(rank);
    for p in parsed {
        match p {
            None => expanded.extend((0..rank - given).map(|_| None)),
            Some(i) => expanded.push(Some(i)),
        }
    }
    expanded.resize_with(rank, || None);
    for (ax, (p, &n)) in expanded.into_iter().zip(shape).enumerate() {
        let n_i = i64::try_from(n).ok();
        match p {
            None => {
                start.push(0);
                count.push(n);
                step.push(1);
                out_shape.push(usize::try_from(n).ok());
            }
            Some(Item::Int(i)) => {
                let Some(n_i) = n_i else { return Ok(None) };
                let i = if i < 0 { i + n_i } else { i };
                if i < 0 || i >= n_i {
                    return Ok(None);
                }
                start.push(i as u64);
                count.push(1);
                step.push(1);
                ints += 1;
            }
            Some(Item::Slice(s)) => {
                let Some(n_i) = n_i else { return Ok(None) };
                let Ok(ix) = s.indices(n_i as isize) else {
                    return Ok(None);
                };
                if ix.step < 1 {
                    return Ok(None);
                }
                let c = ix.slicelength as u64;
                start.push(if c > 0 { ix.start as u64 } else { 0 });
                count.push(c);
                step.push(ix.step as u64);
                out_shape.push(usize::try_from(c).ok());
            }
            Some(Item::List(l)) => {
                let Some(n_i) = n_i else { return Ok(None) };
                let mut idx = Vec::with_capacity(l.len());
                for i in l {
                    let i = if i < 0 { i + n_i } else { i };
                    if i < 0 || i >= n_i || idx.last().is_some_and(|&p| p >= i as u64) {
                        return Ok(None);
                    }
                    idx.push(i as u64);
                }
                let (lo, hi) = (idx[0], idx[idx.len() - 1]);
                start.push(lo);
                count.push(hi - lo + 1);
                step.push(1);
                out_shape.push(Some(idx.len()));
                list = Some((ax, idx));
            }
        }
    }
    let Some(out_shape) = out_shape.into_iter().collect::<Option<Vec<usize>>>() else {
        return Ok(None);
    };
    Ok(Some(Key {
        start,
        count,
        step,
        scalar: ints == rank,
        list,
        out_shape,
    }))
}

/// What the fast path needs to know about the registered element dtype.
pub(crate) struct Fast {
    pub(crate) dtype: Py<PyAny>,
    pub(crate) itemsize: usize,
}

/// Bytes of `n` elements of `elem` bytes, refusing overflow.
fn bytes_of(n: &[usize], elem: usize) -> Option<usize> {
    n.iter()
        .try_fold(elem, |a, &c| a.checked_mul(c))
        .filter(|&b| b <= isize::MAX as usize)
}

/// The result array, uninitialised: `numpy.empty(shape, dtype)`.
fn empty<'py>(py: Python<'py>, fast: &Fast, shape: &[usize]) -> PyResult<Bound<'py, PyAny>> {
    np_empty(py)?.call1((PyTuple::new(py, shape)?, fast.dtype.bind(py)))
}

/// Run `fill` on the bytes of a C-contiguous array of `n` bytes just made
/// by [`empty`].
fn with_bytes<R>(
    arr: &Bound<'_, PyAny>,
    n: usize,
    fill: impl FnOnce(&mut [u8]) -> PyResult<R>,
) -> PyResult<R> {
    let a = arr.cast::<PyUntypedArray>()?;
    if !a.is_c_contiguous() || a.len().checked_mul(a.dtype().itemsize()) != Some(n) {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "numpy.empty gave an array of another size",
        ));
    }
    if n == 0 {
        return fill(&mut []);
    }
    // SAFETY: `arr` is a new C-contiguous array of exactly `n` bytes that
    // nothing else references yet (made by `empty` in this call and
    // returned only after the read); the slice does not outlive `fill`.
    let bytes = unsafe {
        let data = (*_PyArray_GET_ITEM_DATA(a.as_array_ptr())).data;
        std::slice::from_raw_parts_mut(data.cast::<u8>(), n)
    };
    fill(bytes)
}

/// Read `key` of `d` (of shape `shape`) into a new array; `None` when the
/// key is not one the fast path takes.
pub(crate) fn read_key<'py>(
    py: Python<'py>,
    d: &arca::Dataset,
    fast: &Fast,
    shape: &[u64],
    key: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let Some(k) = parse(key, shape)? else {
        return Ok(None);
    };
    if k.scalar {
        return scalar(py, d, fast, k.start).map(Some);
    }
    let elem = fast.itemsize;
    let Some(n) = bytes_of(&k.out_shape, elem) else {
        return Ok(None);
    };
    let arr = empty(py, fast, &k.out_shape)?;
    if n > 0 {
        with_bytes(&arr, n, |out| match &k.list {
            None => {
                let sel = cvt(Selection::new(
                    k.start.clone(),
                    k.count.clone(),
                    k.step.clone(),
                ))?;
                cvt(py.detach(|| d.read_bytes(&sel, out)))
            }
            Some((ax, idx)) => {
                let (ax, idx) = (*ax, idx.as_slice());
                cvt(py.detach(|| read_list(d, &k.start, &k.count, &k.step, ax, idx, elem, out)))
            }
        })?;
    }
    Ok(Some(arr))
}

/// Elements up to this size are read into a buffer on the stack.
const SMALL_ELEM: usize = 64;

/// The element at `start` (one index per axis) as a numpy scalar of the
/// registered dtype: read into a small buffer and handed to numpy, which
/// copies it into the scalar (no array is made for one element).
fn scalar<'py>(
    py: Python<'py>,
    d: &arca::Dataset,
    fast: &Fast,
    start: Vec<u64>,
) -> PyResult<Bound<'py, PyAny>> {
    let rank = start.len();
    let sel = cvt(Selection::new(start, vec![1; rank], vec![1; rank]))?;
    let elem = fast.itemsize;
    let mut small = [0u8; SMALL_ELEM];
    let mut big = Vec::new();
    let buf: &mut [u8] = if elem <= SMALL_ELEM {
        &mut small[..elem]
    } else {
        big.resize(elem, 0);
        &mut big
    };
    if elem > 0 {
        cvt(py.detach(|| d.read_bytes(&sel, buf)))?;
    }
    let descr = fast.dtype.bind(py).cast::<PyArrayDescr>()?;
    // SAFETY: `buf` holds one element of `descr` (its item size, checked
    // when the dtype was registered), which has no object fields (refused
    // there): numpy copies the bytes into the new scalar (no base is
    // given) and keeps no pointer to `buf`, which outlives the call.
    let obj = unsafe {
        PY_ARRAY_API.PyArray_Scalar(
            py,
            buf.as_mut_ptr().cast(),
            descr.as_dtype_ptr(),
            std::ptr::null_mut(),
        )
    };
    // SAFETY: a new reference, or null with a Python error set.
    unsafe { Bound::from_owned_ptr_or_err(py, obj) }
}

/// Read a box whose axis `ax` is picked by the increasing indices `idx`
/// into `out` (the selection's elements in row-major order): as one box
/// picked from when the list is dense, else one box per run of
/// consecutive indices.
#[allow(clippy::too_many_arguments)]
fn read_list(
    d: &arca::Dataset,
    start: &[u64],
    count: &[u64],
    step: &[u64],
    ax: usize,
    idx: &[u64],
    elem: usize,
    out: &mut [u8],
) -> arca::Result<()> {
    let lo = start[ax];
    let span = count[ax];
    // Per picked index: `outer` blocks of `inner` bytes, the blocks `total`
    // picked indices apart in `out`.
    let outer: u64 = count[..ax].iter().product();
    let inner = count[ax + 1..].iter().product::<u64>() as usize * elem;
    let total = idx.len();
    if span <= DENSE_SPAN * idx.len() as u64 {
        let sel = Selection::new(start.to_vec(), count.to_vec(), step.to_vec())?;
        let mut boxed = vec![0u8; (sel.len() as usize) * elem];
        d.read_bytes(&sel, &mut boxed)?;
        let span = span as usize;
        for o in 0..outer as usize {
            for (p, &i) in idx.iter().enumerate() {
                let s = ((o * span) + (i - lo) as usize) * inner;
                let t = ((o * total) + p) * inner;
                out[t..t + inner].copy_from_slice(&boxed[s..s + inner]);
            }
        }
        return Ok(());
    }
    let mut p = 0;
    let mut tmp = Vec::new();
    while p < idx.len() {
        let mut q = p + 1;
        while q < idx.len() && idx[q] == idx[q - 1] + 1 {
            q += 1;
        }
        let run = q - p;
        let mut s = start.to_vec();
        let mut c = count.to_vec();
        s[ax] = idx[p];
        c[ax] = run as u64;
        let sel = Selection::new(s, c, step.to_vec())?;
        if outer == 1 {
            // The run lands in one piece.
            d.read_bytes(&sel, &mut out[p * inner..q * inner])?;
        } else {
            tmp.resize(outer as usize * run * inner, 0);
            d.read_bytes(&sel, &mut tmp)?;
            for o in 0..outer as usize {
                let t = (o * total + p) * inner;
                let s = o * run * inner;
                out[t..t + run * inner].copy_from_slice(&tmp[s..s + run * inner]);
            }
        }
        p = q;
    }
    Ok(())
}
