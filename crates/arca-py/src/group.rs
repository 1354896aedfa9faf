//! `_native.Group`: a group's members, links and the creation of groups
//! and datasets.

use arca::{
    DatasetOptions, Datatype, ExternalSegment, FillTime, Filter, Hdf5Filter, ObjectKind,
    StorageLayout, WalkOrder,
};
use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::attrs::PyAttributes;
use crate::dataset::PyDataset;
use crate::file::PyFile;
use crate::named_type::PyNamedType;
use crate::{cvt, parse_filters, H5FilterTuple};

fn kind_name(k: ObjectKind) -> &'static str {
    match k {
        ObjectKind::Group => "group",
        ObjectKind::Dataset => "dataset",
        ObjectKind::Datatype => "datatype",
    }
}

/// Steps a `Walker` hands out at a time: few enough to keep a batch
/// small, enough that the per-call cost vanishes.
const WALK_BATCH: usize = 1024;

/// A walk below a group, depth first, members in name order, handed out
/// in batches (lists): `[(path, kind)]` of each object met first under
/// that path, or `[(path, link)]` of every link (see `Group.link`). It
/// holds only the groups it is inside, never every path.
///
/// ```python
/// for batch in f.root().walk(False):
///     for path, kind in batch:
///         print(path, kind)
/// ```
#[pyclass(module = "arca._native", name = "Walker")]
pub(crate) struct PyWalker {
    walk: arca::Walk,
    links: bool,
}

#[pymethods]
impl PyWalker {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyList>>> {
        let links = self.links;
        let walk = &mut self.walk;
        let steps = cvt(py.detach(|| {
            let mut out = Vec::with_capacity(WALK_BATCH);
            for s in walk.by_ref() {
                let s = s?;
                if links || (s.first && matches!(s.link, arca::Link::Hard(_))) {
                    out.push(s);
                    if out.len() == WALK_BATCH {
                        break;
                    }
                }
            }
            Ok(out)
        }))?;
        if steps.is_empty() {
            return Ok(None);
        }
        let list = PyList::empty(py);
        for s in steps {
            match (links, &s.link) {
                (false, arca::Link::Hard(k)) => list.append((s.path, kind_name(*k)))?,
                _ => list.append((s.path, link_to_py(py, &s.link)?))?,
            }
        }
        Ok(Some(list))
    }
}

/// Parse a layout name: `compact`, `contiguous` or `chunked`.
fn parse_layout(name: &str) -> PyResult<StorageLayout> {
    match name {
        "compact" => Ok(StorageLayout::Compact),
        "contiguous" => Ok(StorageLayout::Contiguous),
        "chunked" => Ok(StorageLayout::Chunked),
        _ => Err(pyo3::exceptions::PyValueError::new_err(format!(
            "layout {name:?}: use 'compact', 'contiguous' or 'chunked'"
        ))),
    }
}

/// A group; mirrors `arca::Group`.
///
/// ```python
/// g = f.root().create_group("a/b")
/// assert g.path == "/a/b"
/// ```
#[pyclass(module = "arca._native", name = "Group", frozen)]
pub(crate) struct PyGroup {
    pub(crate) g: arca::Group,
}

fn link_to_py(py: Python<'_>, l: &arca::Link) -> PyResult<Py<PyAny>> {
    Ok(match l {
        arca::Link::Hard(k) => ("hard", kind_name(*k))
            .into_pyobject(py)?
            .into_any()
            .unbind(),
        arca::Link::Soft(t) => ("soft", t.as_str()).into_pyobject(py)?.into_any().unbind(),
        arca::Link::External { file, path } => ("external", file.as_str(), path.as_str())
            .into_pyobject(py)?
            .into_any()
            .unbind(),
    })
}

fn object_to_py(py: Python<'_>, o: arca::Object) -> PyResult<Py<PyAny>> {
    Ok(match o {
        arca::Object::Group(g) => Bound::new(py, PyGroup { g })?.into_any().unbind(),
        arca::Object::Dataset(d) => Bound::new(py, PyDataset::new(d))?.into_any().unbind(),
        arca::Object::Datatype(t) => Bound::new(py, PyNamedType { t })?.into_any().unbind(),
    })
}

/// The object behind a group, dataset or committed datatype handle.
fn object_of(obj: &Bound<'_, PyAny>) -> PyResult<arca::Object> {
    Ok(if let Ok(g) = obj.cast::<PyGroup>() {
        arca::Object::Group(g.get().g.clone())
    } else if let Ok(d) = obj.cast::<PyDataset>() {
        arca::Object::Dataset(d.get().d.clone())
    } else if let Ok(t) = obj.cast::<PyNamedType>() {
        arca::Object::Datatype(t.get().t.clone())
    } else {
        return Err(pyo3::exceptions::PyTypeError::new_err(
            "expected a group, dataset or committed datatype handle",
        ));
    })
}

#[pymethods]
impl PyGroup {
    /// Absolute path.
    #[getter]
    fn path(&self) -> &str {
        self.g.path()
    }

    /// Last path component (`/` for the root).
    #[getter]
    fn name(&self) -> &str {
        self.g.name()
    }

    /// The root group of the file `obj` (a group or dataset handle) lies
    /// in: how a handle alone reaches the objects its references name.
    #[staticmethod]
    fn root_of(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<PyGroup> {
        let o = object_of(obj)?;
        Ok(PyGroup {
            g: py.detach(|| o.file().root()),
        })
    }

    /// `(created, modified)` in seconds since 1970 of the object behind a
    /// group, dataset or committed datatype handle; None unless it was
    /// made with times tracked.
    #[staticmethod]
    fn times_of(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Option<(u64, u64)>> {
        let o = object_of(obj)?;
        let t = cvt(py.detach(|| match &o {
            arca::Object::Group(g) => g.times(),
            arca::Object::Dataset(d) => d.times(),
            arca::Object::Datatype(t) => t.times(),
        }))?;
        Ok(t.map(|t| (t.created, t.modified)))
    }

    /// This group's attributes.
    fn attrs(&self) -> PyAttributes {
        PyAttributes { a: self.g.attrs() }
    }

    /// The group or dataset at `path`; one reached through an external
    /// link comes as `(object, file)`, with the other file.
    /// `elink_write` opens files behind external links for writing or
    /// read-only; by default they take this file's intent.
    #[pyo3(signature = (path, elink_write = None))]
    fn object(&self, py: Python<'_>, path: &str, elink_write: Option<bool>) -> PyResult<Py<PyAny>> {
        let o = cvt(py.detach(|| match elink_write {
            None => self.g.object(path),
            Some(w) => self.g.object_with_external_intent(path, w),
        }))?;
        if self.g.in_same_file(&o) {
            return object_to_py(py, o);
        }
        let file = Bound::new(py, PyFile::borrowed(o.file()))?;
        Ok((object_to_py(py, o)?, file)
            .into_pyobject(py)?
            .into_any()
            .unbind())
    }

    /// How many hard links lead to the object with this id.
    fn link_count(&self, py: Python<'_>, id: u64) -> PyResult<u64> {
        cvt(py.detach(|| self.g.link_count(id)))
    }

    /// The group or dataset with this id (an object reference).
    fn dereference(&self, py: Python<'_>, id: u64) -> PyResult<Py<PyAny>> {
        let o = cvt(py.detach(|| self.g.dereference(id)))?;
        object_to_py(py, o)
    }

    /// The group at `path`.
    fn group(&self, py: Python<'_>, path: &str) -> PyResult<PyGroup> {
        Ok(PyGroup {
            g: cvt(py.detach(|| self.g.group(path)))?,
        })
    }

    /// The dataset at `path`.
    fn dataset(&self, py: Python<'_>, path: &str) -> PyResult<PyDataset> {
        Ok(PyDataset::new(cvt(py.detach(|| self.g.dataset(path)))?))
    }

    /// Whether anything exists at `path`.
    fn contains(&self, py: Python<'_>, path: &str) -> PyResult<bool> {
        cvt(py.detach(|| self.g.contains(path)))
    }

    /// Create a group (and missing parents); `track_order` lists its
    /// members and attributes in creation order (`attr_order`, if given,
    /// decides for attributes alone); `path` None makes a group without a
    /// name (see `link_object`); `track_times` records when it was made
    /// and changed.
    #[pyo3(signature = (path, track_order = false, attr_order = None, track_times = false))]
    fn create_group(
        &self,
        py: Python<'_>,
        path: Option<&str>,
        track_order: bool,
        attr_order: Option<bool>,
        track_times: bool,
    ) -> PyResult<PyGroup> {
        let mut o = arca::GroupOptions::new()
            .track_order(track_order)
            .track_times(track_times);
        if let Some(a) = attr_order {
            o = o.track_attr_order(a);
        }
        let g = py.detach(|| match path {
            Some(p) => self.g.create_group_with(p, &o),
            None => self.g.create_anonymous_group(&o),
        });
        Ok(PyGroup { g: cvt(g)? })
    }

    /// Make `path` a hard link to `obj` (a group, dataset or committed
    /// datatype handle of this file): the first name of one made without.
    fn link_object(&self, py: Python<'_>, path: &str, obj: &Bound<'_, PyAny>) -> PyResult<()> {
        let o = object_of(obj)?;
        cvt(py.detach(|| self.g.link_object(path, &o)))
    }

    /// Whether members are listed in creation order.
    fn track_order(&self, py: Python<'_>) -> PyResult<bool> {
        cvt(py.detach(|| self.g.track_order()))
    }

    /// The object's identity in its file (equal for all its names).
    #[getter]
    fn id(&self) -> u64 {
        self.g.id()
    }

    /// Make `path` a soft link to `target`.
    fn link_soft(&self, py: Python<'_>, path: &str, target: &str) -> PyResult<()> {
        cvt(py.detach(|| self.g.link_soft(path, target)))
    }

    /// Make `path` an external link to `target` in `file`.
    fn link_external(&self, py: Python<'_>, path: &str, file: &str, target: &str) -> PyResult<()> {
        cvt(py.detach(|| self.g.link_external(path, file, target)))
    }

    /// Give the object at `existing` a second name `path`.
    fn link_hard(&self, py: Python<'_>, existing: &str, path: &str) -> PyResult<()> {
        cvt(py.detach(|| self.g.link_hard(existing, path)))
    }

    /// The link at `path`: `("hard", kind)`, `("soft", target)` or
    /// `("external", file, target)`.
    fn link(&self, py: Python<'_>, path: &str) -> PyResult<Py<PyAny>> {
        let l = cvt(py.detach(|| self.g.link(path)))?;
        link_to_py(py, &l)
    }

    /// Open or create the group at `path`.
    fn require_group(&self, py: Python<'_>, path: &str) -> PyResult<PyGroup> {
        Ok(PyGroup {
            g: cvt(py.detach(|| self.g.require_group(path)))?,
        })
    }

    /// Create a dataset. `dtype` is a numpy type string; `filters` a list of
    /// `(name, level)`, or `hdf5_filters` an HDF5 pipeline as h5py's
    /// `get_filter` gives it, `(id, flags, values, name)`; `fill` one
    /// element in native byte order; `committed` the committed datatype
    /// the dataset is made with; `external` the segments `(file name,
    /// offset, size)` of external raw storage (size `2**64 - 1`: unlimited);
    /// `track_times` records when it was made and changed; `fill_time`
    /// (`"ifset"`, `"alloc"`, `"never"`) is HDF5's.
    #[pyo3(signature = (path, dtype, shape, maxshape = None, chunks = None, filters = vec![], fill = None, layout = None, hdf5_filters = vec![], track_order = false, committed = None, external = None, track_times = false, fill_time = None))]
    #[allow(clippy::too_many_arguments)]
    fn create_dataset(
        &self,
        py: Python<'_>,
        path: Option<&str>,
        dtype: &str,
        shape: Vec<u64>,
        maxshape: Option<Vec<Option<u64>>>,
        chunks: Option<Vec<u64>>,
        filters: Vec<(String, Option<i32>)>,
        fill: Option<Vec<u8>>,
        layout: Option<&str>,
        hdf5_filters: Vec<H5FilterTuple>,
        track_order: bool,
        committed: Option<&PyNamedType>,
        external: Option<Vec<(String, u64, u64)>>,
        track_times: bool,
        fill_time: Option<&str>,
    ) -> PyResult<PyDataset> {
        let dt = cvt(Datatype::parse(dtype))?;
        let when = match fill_time {
            None | Some("ifset") => FillTime::IfSet,
            Some("alloc") => FillTime::Alloc,
            Some("never") => FillTime::Never,
            Some(other) => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "fill_time must be 'alloc', 'never' or 'ifset', not {other:?}"
                )))
            }
        };
        let mut o = DatasetOptions::new(dt, &shape)
            .track_order(track_order)
            .track_times(track_times)
            .fill_time(when);
        if let Some(segs) = external {
            let segs: Vec<ExternalSegment> = segs
                .into_iter()
                .map(|(n, off, size)| ExternalSegment::new(n, off, size))
                .collect();
            o = o.external(&segs);
        }
        if let Some(t) = committed {
            o = o.committed(&t.t);
        }
        if let Some(l) = layout {
            o = o.layout(parse_layout(l)?);
        }
        if let Some(m) = maxshape {
            o = o.maxshape(&m);
        }
        if let Some(c) = chunks {
            o = o.chunks(&c);
        }
        let mut fs = parse_filters(&filters)?;
        fs.extend(hdf5_filters.into_iter().map(|(id, flags, params, label)| {
            Filter::Hdf5(Hdf5Filter {
                id,
                flags,
                label,
                params,
            })
        }));
        if !fs.is_empty() {
            o = o.filters(&fs);
        }
        if let Some(f) = fill {
            o = o.fill_value(&f);
        }
        let d = py.detach(|| match path {
            Some(p) => self.g.create_dataset(p, &o),
            None => self.g.create_anonymous_dataset(&o),
        });
        Ok(PyDataset::new(cvt(d)?))
    }

    /// Store the type `dtype` (a type string) as a committed datatype.
    fn commit_type(&self, py: Python<'_>, path: &str, dtype: &str) -> PyResult<PyNamedType> {
        let dt = cvt(Datatype::parse(dtype))?;
        Ok(PyNamedType {
            t: cvt(py.detach(|| self.g.commit_type(path, &dt)))?,
        })
    }

    /// Create a virtual dataset: `mappings` are `(file, dataset, virtual
    /// selection, source selection)`, selections as `regions.rs` takes
    /// them (counts may be `UNLIMITED`); `fill` one element in native
    /// byte order.
    #[pyo3(signature = (path, dtype, shape, maxshape, mappings, fill = None, track_order = false, committed = None))]
    #[allow(clippy::too_many_arguments)]
    fn create_virtual(
        &self,
        py: Python<'_>,
        path: &str,
        dtype: &str,
        shape: Vec<u64>,
        maxshape: Option<Vec<Option<u64>>>,
        mappings: Vec<(
            String,
            String,
            crate::regions::SelTuple<'_>,
            crate::regions::SelTuple<'_>,
        )>,
        fill: Option<Vec<u8>>,
        track_order: bool,
        committed: Option<&PyNamedType>,
    ) -> PyResult<PyDataset> {
        let dt = cvt(Datatype::parse(dtype))?;
        let maps = mappings
            .iter()
            .map(|(file, dataset, v, s)| {
                Ok(arca::VirtualMapping {
                    file: file.clone(),
                    dataset: dataset.clone(),
                    virtual_region: crate::regions::to_region(v, true)?,
                    source_region: crate::regions::to_region(s, true)?,
                })
            })
            .collect::<PyResult<Vec<_>>>()?;
        let mut o = DatasetOptions::new(dt, &shape)
            .track_order(track_order)
            .virtual_mappings(&maps);
        if let Some(m) = maxshape {
            o = o.maxshape(&m);
        }
        if let Some(f) = fill {
            o = o.fill_value(&f);
        }
        if let Some(t) = committed {
            o = o.committed(&t.t);
        }
        let d = cvt(py.detach(|| self.g.create_dataset(path, &o)))?;
        Ok(PyDataset::new(d))
    }

    /// Create a dataset with a null dataspace (a type, no elements).
    #[pyo3(signature = (path, dtype, track_order = false, committed = None, track_times = false))]
    fn create_empty(
        &self,
        py: Python<'_>,
        path: Option<&str>,
        dtype: &str,
        track_order: bool,
        committed: Option<&PyNamedType>,
        track_times: bool,
    ) -> PyResult<PyDataset> {
        let dt = cvt(Datatype::parse(dtype))?;
        let mut o = DatasetOptions::empty(dt)
            .track_order(track_order)
            .track_times(track_times);
        if let Some(t) = committed {
            o = o.committed(&t.t);
        }
        let d = py.detach(|| match path {
            Some(p) => self.g.create_dataset(p, &o),
            None => self.g.create_anonymous_dataset(&o),
        });
        Ok(PyDataset::new(cvt(d)?))
    }

    /// Delete the object at `path` and everything below it.
    fn delete(&self, py: Python<'_>, path: &str) -> PyResult<()> {
        cvt(py.detach(|| self.g.delete(path)))
    }

    /// Move or rename `src` to `dst`.
    fn rename(&self, py: Python<'_>, src: &str, dst: &str) -> PyResult<()> {
        cvt(py.detach(|| self.g.rename(src, dst)))
    }

    /// `[(name, "group" | "dataset" | "datatype")]` of the direct members, in name order.
    fn members(&self, py: Python<'_>) -> PyResult<Vec<(String, &'static str)>> {
        let m = cvt(py.detach(|| self.g.members()))?;
        Ok(m.into_iter().map(|(n, k)| (n, kind_name(k))).collect())
    }

    /// Names of the direct members, in name order.
    fn member_names(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        cvt(py.detach(|| self.g.member_names()))
    }

    /// Number of direct members.
    fn len(&self, py: Python<'_>) -> PyResult<u64> {
        cvt(py.detach(|| self.g.len()))
    }

    /// A walk below this group in name order (see `Walker`): objects
    /// (`links=False`), or every link (`links=True`).
    fn walk(&self, py: Python<'_>, links: bool) -> PyResult<PyWalker> {
        let walk = cvt(py.detach(|| self.g.walk(WalkOrder::Name)))?;
        Ok(PyWalker { walk, links })
    }
}
