//! `arca dump`: values and metadata of a file, a group or a dataset, as
//! h5dump-style text or as JSON.

use std::io::Write;
use std::path::Path;

use arca::{
    AttrValue, Attributes, Dataset, Datatype, Filter, Group, NamedType, Object, StorageLayout,
};
use serde_json::{json, Map, Value};

use crate::data::{attr_elements, check_depth, children, read_range, Member, Seen, BATCH};
use crate::error::{CliError, Context};
use crate::target::Target;
use crate::values::{self, Elements};

/// Elements printed per dataset or attribute unless `--max-elements` says otherwise.
pub const DEFAULT_MAX_ELEMENTS: u64 = 2000;
/// Data lines wrap before this many columns.
const WIDTH: usize = 80;
/// One level of indentation, as h5dump indents.
const STEP: &str = "   ";

/// What to print.
#[derive(Debug, Clone)]
pub struct Options {
    /// Elements per dataset or attribute; 0 means all.
    pub max_elements: u64,
    /// Leave out dataset values.
    pub header_only: bool,
}

impl Options {
    fn limit(&self) -> u64 {
        if self.max_elements == 0 {
            u64::MAX
        } else {
            self.max_elements
        }
    }
}

/// Dump the target as text.
pub fn run_text(t: &Target, o: &Options, out: &mut dyn Write) -> Result<(), CliError> {
    let f = t.open()?;
    let obj = t.object(&f)?;
    let mut d = Text {
        file: &t.file,
        o,
        out,
        seen: Seen::default(),
    };
    writeln!(d.out, "ARCA \"{}\" {{", t.file.display())?;
    match obj {
        Object::Group(g) => {
            let label = g.path().to_string();
            d.seen.first(&Object::Group(g.clone()), &label);
            d.group(&g, &label, 0, 0)?;
        }
        Object::Dataset(ds) => {
            let label = ds.path().to_string();
            d.dataset(&ds, &label, 0)?;
        }
        Object::Datatype(nt) => {
            let label = nt.path().to_string();
            d.named_type(&nt, &label, 0)?;
        }
    }
    writeln!(d.out, "}}")?;
    Ok(())
}

/// Dump the target as one JSON document:
/// `{"file": ..., "object": {...}}` where groups hold `members`.
pub fn run_json(t: &Target, o: &Options, out: &mut dyn Write) -> Result<(), CliError> {
    let f = t.open()?;
    let obj = t.object(&f)?;
    let j = Json {
        file: &t.file,
        o,
        seen: Default::default(),
    };
    if let Object::Group(g) = &obj {
        j.seen
            .borrow_mut()
            .first(&Object::Group(g.clone()), g.path());
    }
    let v = match obj {
        Object::Group(g) => j.group(&g, 0)?,
        Object::Dataset(ds) => j.dataset(&ds)?,
        Object::Datatype(nt) => j.named_type(&nt)?,
    };
    let doc = json!({ "file": t.file.display().to_string(), "object": v });
    serde_json::to_writer_pretty(&mut *out, &doc).map_err(std::io::Error::from)?;
    writeln!(out)?;
    Ok(())
}

struct Text<'a> {
    file: &'a Path,
    o: &'a Options,
    out: &'a mut dyn Write,
    seen: Seen,
}

fn pad(ind: usize) -> String {
    STEP.repeat(ind)
}

fn quote_name(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

fn dtype_text(dt: &Datatype) -> String {
    format!("{dt} ({})", dt.to_numpy_str())
}

fn dims_text(d: &[u64]) -> String {
    let v: Vec<String> = d.iter().map(u64::to_string).collect();
    format!("( {} )", v.join(", "))
}

fn dataspace_text(shape: &[u64], maxshape: &[Option<u64>]) -> String {
    if shape.is_empty() {
        return "SCALAR".into();
    }
    let m: Vec<String> = maxshape
        .iter()
        .map(|m| m.map_or("UNLIMITED".into(), |v| v.to_string()))
        .collect();
    format!("SIMPLE {{ {} / ( {} ) }}", dims_text(shape), m.join(", "))
}

fn filter_text(f: &Filter) -> String {
    if let Filter::Hdf5(h) = f {
        let params: String = h.params.iter().map(|p| format!(" {p}")).collect();
        return format!(
            "HDF5_FILTER {} {} {{ PARAMS {{{params} }}{} }}",
            h.id,
            h.name().to_uppercase(),
            if h.optional() { " OPTIONAL" } else { "" }
        );
    }
    match f.level() {
        Some(l) => format!("{} {{ LEVEL {l} }}", f.name().to_uppercase()),
        None => f.name().to_uppercase(),
    }
}

fn index_text(mut k: u64, shape: &[u64]) -> String {
    if shape.is_empty() {
        return "(0)".into();
    }
    let mut idx = vec![0u64; shape.len()];
    for (i, &d) in shape.iter().enumerate().rev() {
        if d > 0 {
            idx[i] = k % d;
            k /= d;
        }
    }
    let v: Vec<String> = idx.iter().map(u64::to_string).collect();
    format!("({})", v.join(","))
}

impl Text<'_> {
    fn line(&mut self, ind: usize, s: &str) -> Result<(), CliError> {
        writeln!(self.out, "{}{s}", pad(ind))?;
        Ok(())
    }

    /// A type on one line, or a compound as one member per line (as
    /// h5dump does), so wide records stay readable.
    fn datatype(
        &mut self,
        ind: usize,
        lead: &str,
        dt: &Datatype,
        tail: &str,
    ) -> Result<(), CliError> {
        let Datatype::Compound(c) = dt else {
            return self.line(ind, &format!("{lead}{}{tail}", dtype_text(dt)));
        };
        self.line(ind, &format!("{lead}compound {{"))?;
        for m in &c.fields {
            let tail = format!(" \"{}\" @{};", quote_name(&m.name), m.offset);
            match &m.dtype {
                Datatype::Compound(_) => self.datatype(ind + 1, "", &m.dtype, &tail)?,
                t => self.line(ind + 1, &format!("{t}{tail}"))?,
            }
        }
        self.line(ind, &format!("}} ({} bytes){tail}", c.size))
    }

    fn group(&mut self, g: &Group, label: &str, ind: usize, depth: usize) -> Result<(), CliError> {
        check_depth(depth, self.file, g.path())?;
        self.line(ind, &format!("GROUP \"{}\" {{", quote_name(label)))?;
        self.attrs(&g.attrs(), ind + 1)?;
        for (name, m) in children(g, self.file)? {
            let q = quote_name(&name);
            match m {
                Member::Soft(t) => {
                    self.line(ind + 1, &format!("SOFTLINK \"{q}\" {{"))?;
                    self.line(ind + 2, &format!("LINKTARGET \"{}\"", quote_name(&t)))?;
                    self.line(ind + 1, "}")?;
                }
                Member::External { file, path } => {
                    self.line(ind + 1, &format!("EXTERNAL_LINK \"{q}\" {{"))?;
                    self.line(ind + 2, &format!("TARGETFILE \"{}\"", quote_name(&file)))?;
                    self.line(ind + 2, &format!("TARGETPATH \"{}\"", quote_name(&path)))?;
                    self.line(ind + 1, "}")?;
                }
                Member::Object(obj) => {
                    let path = obj.path().to_string();
                    if let Some(first) = self.seen.first(&obj, &path) {
                        let kind = match obj {
                            Object::Group(_) => "GROUP",
                            Object::Dataset(_) => "DATASET",
                            Object::Datatype(_) => "DATATYPE",
                        };
                        self.line(ind + 1, &format!("{kind} \"{q}\" {{"))?;
                        self.line(ind + 2, &format!("HARDLINK \"{}\"", quote_name(&first)))?;
                        self.line(ind + 1, "}")?;
                        continue;
                    }
                    match obj {
                        Object::Group(sub) => self.group(&sub, &name, ind + 1, depth + 1)?,
                        Object::Dataset(ds) => self.dataset(&ds, &name, ind + 1)?,
                        Object::Datatype(nt) => self.named_type(&nt, &name, ind + 1)?,
                    }
                }
            }
        }
        self.line(ind, "}")
    }

    /// A committed datatype: its type and attributes.
    fn named_type(&mut self, nt: &NamedType, label: &str, ind: usize) -> Result<(), CliError> {
        let dt = nt.dtype().in_file(self.file)?;
        self.line(ind, &format!("DATATYPE \"{}\" {{", quote_name(label)))?;
        self.datatype(ind + 1, "TYPE  ", &dt, "")?;
        self.attrs(&nt.attrs(), ind + 1)?;
        self.line(ind, "}")
    }

    fn attrs(&mut self, a: &Attributes, ind: usize) -> Result<(), CliError> {
        for name in a.names().in_file(self.file)? {
            let v = a.get(&name).in_file(self.file)?;
            self.attr(&name, &v, ind)?;
        }
        Ok(())
    }

    fn attr(&mut self, name: &str, v: &AttrValue, ind: usize) -> Result<(), CliError> {
        self.line(ind, &format!("ATTRIBUTE \"{}\" {{", quote_name(name)))?;
        self.datatype(ind + 1, "DATATYPE  ", &v.dtype, "")?;
        if v.null {
            self.line(ind + 1, "DATASPACE  NULL")?;
            return self.line(ind, "}");
        }
        let maxshape: Vec<Option<u64>> = v.shape.iter().map(|&s| Some(s)).collect();
        self.line(
            ind + 1,
            &format!("DATASPACE  {}", dataspace_text(&v.shape, &maxshape)),
        )?;
        let total: u64 = v.shape.iter().product();
        let mut e = attr_elements(v).in_file(self.file)?;
        e.truncate(total.min(self.o.limit()) as usize);
        self.data(&e, &v.shape, total, ind + 1)?;
        self.line(ind, "}")
    }

    fn dataset(&mut self, ds: &Dataset, label: &str, ind: usize) -> Result<(), CliError> {
        let file = self.file;
        let dt = ds.dtype().in_file(file)?;
        let shape = ds.shape().in_file(file)?;
        let maxshape = ds.maxshape().in_file(file)?;
        let chunks = ds.chunks().in_file(file)?;
        let filters = ds.filters().in_file(file)?;
        let fill = ds.fill_value().in_file(file)?;
        let stored = ds.storage_size().in_file(file)?;
        let total: u64 = shape.iter().product();
        let logical = total.saturating_mul(dt.size() as u64);

        self.line(ind, &format!("DATASET \"{}\" {{", quote_name(label)))?;
        let i = ind + 1;
        match ds.committed_type().in_file(file)? {
            Some(t) if !t.path().is_empty() => {
                self.line(i, &format!("DATATYPE  \"{}\"", quote_name(t.path())))?
            }
            _ => self.datatype(i, "DATATYPE  ", &dt, "")?,
        }
        if ds.is_null().in_file(file)? {
            self.line(i, "DATASPACE  NULL")?;
            self.attrs(&ds.attrs(), i)?;
            return self.line(ind, "}");
        }
        self.line(
            i,
            &format!("DATASPACE  {}", dataspace_text(&shape, &maxshape)),
        )?;
        let maps = ds.virtual_mappings().in_file(file)?;
        let segs = ds.external_segments().in_file(file)?;
        let layout = match &chunks {
            Some(c) => format!("CHUNKED {}", dims_text(c)),
            None => match ds.layout().in_file(self.file)? {
                StorageLayout::Compact => "COMPACT".into(),
                StorageLayout::Virtual => format!("VIRTUAL {} MAPPINGS", maps.len()),
                StorageLayout::External => format!("EXTERNAL {} SEGMENTS", segs.len()),
                _ => "CONTIGUOUS".into(),
            },
        };
        let size = if stored == 0 {
            "SIZE 0 (not allocated)".to_string()
        } else if chunks.is_some() {
            format!(
                "SIZE {stored} ({:.3}:1 COMPRESSION)",
                logical as f64 / stored as f64
            )
        } else {
            format!("SIZE {stored}")
        };
        self.line(i, &format!("STORAGE_LAYOUT {{ {layout} {size} }}"))?;
        for s in &segs {
            self.line(
                i,
                &format!(
                    "EXTERNAL \"{}\" OFFSET {} SIZE {}",
                    quote_name(&s.name),
                    s.offset,
                    segment_size_text(s)
                ),
            )?;
        }
        for m in &maps {
            self.line(
                i,
                &format!(
                    "MAPPING {} <- \"{}\" \"{}\" {}",
                    values::selection_text(&m.virtual_region),
                    quote_name(&m.file),
                    quote_name(&m.dataset),
                    values::selection_text(&m.source_region)
                ),
            )?;
        }
        let fl: Vec<String> = filters.iter().map(filter_text).collect();
        let fl = if fl.is_empty() {
            "NONE".to_string()
        } else {
            fl.join(" ")
        };
        self.line(i, &format!("FILTERS {{ {fl} }}"))?;
        if values::is_fixed(&dt) {
            self.line(i, &format!("FILLVALUE {{ {} }}", values::text(&dt, &fill)))?;
        }
        if let Some(v) = ds.vlen_info().in_file(file)? {
            let fl: Vec<String> = v.filters.iter().map(filter_text).collect();
            let fl = if fl.is_empty() {
                "NONE".to_string()
            } else {
                fl.join(" ")
            };
            self.line(i, "VLEN_STORAGE {")?;
            self.line(
                i + 1,
                &format!("VECTOR {} BYTES, {} LIVE", v.vector_bytes, v.live_bytes),
            )?;
            self.line(
                i + 1,
                &format!(
                    "CHUNKED ( {} ) {} CHUNKS SIZE {} COMPRESSION RATIO {:.2}",
                    v.chunk_bytes,
                    v.chunks,
                    v.stored_bytes,
                    v.compression_ratio()
                ),
            )?;
            self.line(i + 1, &format!("FILTERS {{ {fl} }}"))?;
            self.line(i, "}")?;
        }
        self.attrs(&ds.attrs(), i)?;
        if !self.o.header_only {
            self.dataset_data(ds, &dt, &shape, i)?;
        }
        self.line(ind, "}")
    }

    /// `DATA { ... }` for elements that are all in memory (attributes).
    fn data(
        &mut self,
        data: &Elements,
        shape: &[u64],
        total: u64,
        ind: usize,
    ) -> Result<(), CliError> {
        let mut rows = Rows::start(&mut *self.out, ind, shape, data.len() as u64)?;
        rows.push(data)?;
        rows.finish(total)
    }

    /// `DATA { ... }` for a dataset, read and printed [`BATCH`] elements
    /// at a time.
    fn dataset_data(
        &mut self,
        ds: &Dataset,
        dt: &Datatype,
        shape: &[u64],
        ind: usize,
    ) -> Result<(), CliError> {
        let total: u64 = shape.iter().product();
        let n = total.min(self.o.limit());
        // Chunks through an HDF5 filter arca has no codec for are kept, not
        // damaged: say so in place and go on with the rest of the file.
        let first = n.min(BATCH);
        let head = match read_range(ds, dt, shape, 0, first) {
            Err(arca::Error::Unsupported(m)) => {
                let p = pad(ind);
                writeln!(self.out, "{p}DATA {{\n{p}   (not shown: {m})\n{p}}}")?;
                return Ok(());
            }
            r => r.in_file(self.file)?,
        };
        let mut rows = Rows::start(&mut *self.out, ind, shape, n)?;
        rows.push(&head)?;
        let mut pos = first;
        while pos < n {
            let end = (pos + BATCH).min(n);
            let e = read_range(ds, dt, shape, pos, end).in_file(self.file)?;
            rows.push(&e)?;
            pos = end;
        }
        rows.finish(total)
    }
}

/// Writes `DATA { ... }` as elements arrive: each row of the last dimension
/// starts a line prefixed by its index, long rows wrap, and a note follows
/// when fewer than all elements were shown.
struct Rows<'w> {
    out: &'w mut dyn Write,
    pad: String,
    shape: Vec<u64>,
    row: u64,
    line: String,
    /// Flat index of the next element.
    k: u64,
    /// Elements that will be shown in all.
    n: u64,
}

impl<'w> Rows<'w> {
    fn start(out: &'w mut dyn Write, ind: usize, shape: &[u64], n: u64) -> Result<Self, CliError> {
        let pad = pad(ind);
        writeln!(out, "{pad}DATA {{")?;
        Ok(Rows {
            out,
            pad,
            shape: shape.to_vec(),
            row: shape.last().copied().unwrap_or(1).max(1),
            line: String::new(),
            k: 0,
            n,
        })
    }

    fn push(&mut self, data: &Elements) -> Result<(), CliError> {
        for i in 0..data.len() {
            let s = data.text(i);
            if self.k % self.row == 0 || self.line.len() + s.len() + 2 > WIDTH {
                if !self.line.is_empty() {
                    writeln!(self.out, "{}", self.line)?;
                }
                self.line = format!("{}{}: ", self.pad, index_text(self.k, &self.shape));
            } else {
                self.line.push(' ');
            }
            self.line.push_str(&s);
            if self.k + 1 < self.n {
                self.line.push(',');
            }
            self.k += 1;
        }
        Ok(())
    }

    fn finish(self, total: u64) -> Result<(), CliError> {
        let p = &self.pad;
        if !self.line.is_empty() {
            writeln!(self.out, "{}", self.line)?;
        }
        if self.k < total {
            writeln!(
                self.out,
                "{p}... showing {} of {total} elements; --max-elements 0 shows all",
                self.k
            )?;
        }
        writeln!(self.out, "{p}}}")?;
        Ok(())
    }
}

struct Json<'a> {
    file: &'a Path,
    o: &'a Options,
    seen: std::cell::RefCell<Seen>,
}

impl Json<'_> {
    fn group(&self, g: &Group, depth: usize) -> Result<Value, CliError> {
        check_depth(depth, self.file, g.path())?;
        let mut members = vec![];
        for (name, m) in children(g, self.file)? {
            members.push(match m {
                Member::Soft(t) => json!({"name": name, "kind": "soft link", "target": t}),
                Member::External { file, path } => json!({
                    "name": name, "kind": "external link", "file": file, "target": path,
                }),
                Member::Object(obj) => {
                    let path = obj.path().to_string();
                    if let Some(first) = self.seen.borrow_mut().first(&obj, &path) {
                        members.push(json!({"name": name, "kind": "hard link", "same_as": first}));
                        continue;
                    }
                    match obj {
                        Object::Group(sub) => self.group(&sub, depth + 1)?,
                        Object::Dataset(ds) => self.dataset(&ds)?,
                        Object::Datatype(nt) => self.named_type(&nt)?,
                    }
                }
            });
        }
        Ok(json!({
            "name": g.name(),
            "path": g.path(),
            "kind": "group",
            "attributes": self.attrs(&g.attrs())?,
            "members": members,
        }))
    }

    fn named_type(&self, nt: &NamedType) -> Result<Value, CliError> {
        let dt = nt.dtype().in_file(self.file)?;
        Ok(json!({
            "name": nt.name(),
            "path": nt.path(),
            "kind": "datatype",
            "dtype": dt.to_numpy_str(),
            "type": dt.to_string(),
            "attributes": self.attrs(&nt.attrs())?,
        }))
    }

    fn attrs(&self, a: &Attributes) -> Result<Value, CliError> {
        let mut list = vec![];
        for name in a.names().in_file(self.file)? {
            let v = a.get(&name).in_file(self.file)?;
            if v.null {
                list.push(json!({
                    "name": name,
                    "dtype": v.dtype.to_numpy_str(),
                    "type": v.dtype.to_string(),
                    "shape": null,
                    "value": null,
                }));
                continue;
            }
            let total: u64 = v.shape.iter().product();
            let n = total.min(self.o.limit()) as usize;
            let mut e = attr_elements(&v).in_file(self.file)?;
            e.truncate(n);
            let value = if v.shape.is_empty() {
                e.json(0)
            } else {
                Value::Array(e.json_list())
            };
            list.push(json!({
                "name": name,
                "dtype": v.dtype.to_numpy_str(),
                "type": v.dtype.to_string(),
                "shape": v.shape,
                "value": value,
                "truncated": (n as u64) < total,
            }));
        }
        Ok(Value::Array(list))
    }

    fn dataset(&self, ds: &Dataset) -> Result<Value, CliError> {
        let file = self.file;
        let dt = ds.dtype().in_file(file)?;
        let shape = ds.shape().in_file(file)?;
        let maxshape = ds.maxshape().in_file(file)?;
        let chunks = ds.chunks().in_file(file)?;
        let filters = ds.filters().in_file(file)?;
        let fill = ds.fill_value().in_file(file)?;
        let stored = ds.storage_size().in_file(file)?;
        let total: u64 = shape.iter().product();
        let mut m = Map::new();
        m.insert("name".into(), json!(ds.name()));
        m.insert("path".into(), json!(ds.path()));
        m.insert("kind".into(), json!("dataset"));
        m.insert("dtype".into(), json!(dt.to_numpy_str()));
        m.insert("type".into(), json!(dt.to_string()));
        let committed = ds.committed_type().in_file(file)?;
        m.insert(
            "committed_type".into(),
            json!(committed.map(|t| t.path().to_string())),
        );
        m.insert("shape".into(), json!(shape));
        m.insert("maxshape".into(), values::maxshape_json(&maxshape));
        let layout = match ds.layout().in_file(file)? {
            StorageLayout::Compact => "compact",
            StorageLayout::Contiguous => "contiguous",
            StorageLayout::Chunked => "chunked",
            StorageLayout::Virtual => "virtual",
            StorageLayout::External => "external",
        };
        m.insert("layout".into(), json!(layout));
        if layout == "virtual" {
            let maps: Vec<Value> = ds
                .virtual_mappings()
                .in_file(file)?
                .iter()
                .map(|x| {
                    json!({
                        "file": x.file,
                        "dataset": x.dataset,
                        "virtual": values::selection_text(&x.virtual_region),
                        "source": values::selection_text(&x.source_region),
                    })
                })
                .collect();
            m.insert("mappings".into(), Value::Array(maps));
        }
        if layout == "external" {
            let segs: Vec<Value> = ds
                .external_segments()
                .in_file(file)?
                .iter()
                .map(|s| {
                    json!({
                        "name": s.name,
                        "offset": s.offset,
                        "size": (!s.is_unlimited()).then_some(s.size),
                    })
                })
                .collect();
            m.insert("external".into(), Value::Array(segs));
        }
        m.insert("chunks".into(), json!(chunks));
        m.insert("filters".into(), values::filters_json(&filters));
        m.insert("fill_value".into(), values::json(&dt, &fill));
        m.insert("storage_bytes".into(), json!(stored));
        m.insert(
            "logical_bytes".into(),
            json!(total.saturating_mul(dt.size() as u64)),
        );
        if let Some(v) = ds.vlen_info().in_file(file)? {
            m.insert(
                "vlen".into(),
                json!({
                    "vector_bytes": v.vector_bytes,
                    "live_bytes": v.live_bytes,
                    "stored_bytes": v.stored_bytes,
                    "chunk_logical_bytes": v.chunk_logical_bytes,
                    "chunks": v.chunks,
                    "chunk_bytes": v.chunk_bytes,
                    "filters": values::filters_json(&v.filters),
                    "reuse_space": v.reuse_space,
                    "free_bytes": v.free_bytes,
                    "compression_ratio": v.compression_ratio(),
                }),
            );
        }
        m.insert("attributes".into(), self.attrs(&ds.attrs())?);
        if ds.is_null().in_file(file)? {
            m.insert("shape".into(), Value::Null);
            return Ok(Value::Object(m));
        }
        if !self.o.header_only {
            let n = total.min(self.o.limit());
            let data = read_range(ds, &dt, &shape, 0, n).in_file(file)?;
            let shown = data.len() as u64;
            m.insert("data".into(), Value::Array(data.json_list()));
            m.insert("truncated".into(), json!(shown < total));
        }
        Ok(Value::Object(m))
    }
}

/// A segment's size as dump shows it: bytes, or `UNLIMITED`.
fn segment_size_text(s: &arca::ExternalSegment) -> String {
    if s.is_unlimited() {
        "UNLIMITED".into()
    } else {
        s.size.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_and_dataspaces() {
        assert_eq!(index_text(0, &[]), "(0)");
        assert_eq!(index_text(7, &[3, 4]), "(1,3)");
        assert_eq!(index_text(23, &[2, 3, 4]), "(1,2,3)");
        assert_eq!(dataspace_text(&[], &[]), "SCALAR");
        assert_eq!(
            dataspace_text(&[4, 3], &[None, Some(3)]),
            "SIMPLE { ( 4, 3 ) / ( UNLIMITED, 3 ) }"
        );
        assert_eq!(filter_text(&Filter::Zstd(3)), "ZSTD { LEVEL 3 }");
        assert_eq!(filter_text(&Filter::Deflate(6)), "GZIP { LEVEL 6 }");
    }

    #[test]
    fn data_rows_wrap_and_note_truncation() {
        let dt = Datatype::uint(2);
        let vals: Vec<u16> = (0..60).collect();
        let bytes: Vec<u8> = vals.iter().flat_map(|v| v.to_ne_bytes()).collect();
        let o = Options {
            max_elements: 0,
            header_only: false,
        };
        let mut buf = Vec::new();
        let mut t = Text {
            file: Path::new("x"),
            o: &o,
            out: &mut buf,
            seen: Seen::default(),
        };
        // Arriving in two pieces must not change the layout.
        t.data(
            &Elements::Fixed {
                dt: dt.clone(),
                data: bytes[..120].to_vec(),
            },
            &[2, 40],
            80,
            1,
        )
        .unwrap();
        let one = String::from_utf8(std::mem::take(&mut buf)).unwrap();
        let mut rows = Rows::start(&mut buf, 1, &[2, 40], 60).unwrap();
        for part in [&bytes[..50], &bytes[50..120]] {
            rows.push(&Elements::Fixed {
                dt: dt.clone(),
                data: part.to_vec(),
            })
            .unwrap();
        }
        rows.finish(80).unwrap();
        assert_eq!(String::from_utf8(buf.clone()).unwrap(), one);
        let s = one;
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "   DATA {");
        assert!(lines[1].starts_with("   (0,0): 0, 1, 2,"), "{s}");
        assert!(lines.iter().all(|l| l.len() <= WIDTH), "{s}");
        assert!(
            lines.iter().any(|l| l.starts_with("   (1,0): 40, 41,")),
            "{s}"
        );
        assert!(s.contains("showing 60 of 80 elements"), "{s}");
        assert!(lines[lines.len() - 3].ends_with(" 59"), "{s}");
        assert_eq!(*lines.last().unwrap(), "   }");
    }
}
