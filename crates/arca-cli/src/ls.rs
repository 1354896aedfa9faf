//! `arca ls`: the members of a group, one line each, like h5ls.

use std::io::Write;
use std::path::Path;

use arca::{Dataset, Group, NamedType, Object, StorageLayout};
use serde_json::{json, Value};

use crate::data::{check_depth, children, Member, Seen};
use crate::error::{CliError, Context};
use crate::target::Target;
use crate::values;

/// One listed object.
struct Entry {
    /// What the line shows: the name, or the full path when recursive.
    label: String,
    json: Value,
    detail: String,
}

/// List the target: a group's members (all descendants with `recursive`),
/// or the one dataset it names.
pub fn run(
    t: &Target,
    recursive: bool,
    as_json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let f = t.open()?;
    let mut entries = vec![];
    match t.object(&f)? {
        Object::Group(g) => {
            let mut seen = Seen::default();
            seen.first(&Object::Group(g.clone()), g.path());
            walk(&g, &t.file, recursive, 0, &mut entries, &mut seen)?
        }
        Object::Dataset(ds) => entries.push(dataset_entry(&ds, ds.path().to_string(), &t.file)?),
        Object::Datatype(nt) => entries.push(type_entry(&nt, nt.path().to_string(), &t.file)?),
    }
    if as_json {
        let list: Vec<Value> = entries.into_iter().map(|e| e.json).collect();
        serde_json::to_writer_pretty(&mut *out, &list).map_err(std::io::Error::from)?;
        writeln!(out)?;
        return Ok(());
    }
    let width = entries
        .iter()
        .map(|e| e.label.chars().count())
        .max()
        .unwrap_or(0);
    for e in entries {
        let n = e.label.chars().count();
        writeln!(out, "{}{}  {}", e.label, " ".repeat(width - n), e.detail)?;
    }
    Ok(())
}

fn walk(
    g: &Group,
    file: &Path,
    recursive: bool,
    depth: usize,
    entries: &mut Vec<Entry>,
    seen: &mut Seen,
) -> Result<(), CliError> {
    check_depth(depth, file, g.path())?;
    for (name, m) in children(g, file)? {
        let path = if g.path() == "/" {
            format!("/{name}")
        } else {
            format!("{}/{name}", g.path())
        };
        let label = if recursive {
            path.clone()
        } else {
            name.clone()
        };
        let obj = match m {
            Member::Soft(target) => {
                entries.push(Entry {
                    label,
                    detail: format!("Soft Link {{{target}}}"),
                    json: json!({"name": name, "path": path, "kind": "soft link", "target": target}),
                });
                continue;
            }
            Member::External { file: f, path: p } => {
                entries.push(Entry {
                    label,
                    detail: format!("External Link {{{f}//{p}}}"),
                    json: json!({"name": name, "path": path, "kind": "external link",
                                 "file": f, "target": p}),
                });
                continue;
            }
            Member::Object(o) => o,
        };
        if let Some(first) = seen.first(&obj, &path) {
            let kind = match obj {
                Object::Group(_) => "Group",
                Object::Dataset(_) => "Dataset",
                Object::Datatype(_) => "Type",
            };
            entries.push(Entry {
                label,
                detail: format!("{kind}, same as {first}"),
                json: json!({"name": name, "path": path, "kind": "hard link", "same_as": first}),
            });
            continue;
        }
        match obj {
            Object::Group(sub) => {
                let members = sub.len().in_file(file)?;
                let attrs = sub.attrs().len().in_file(file)?;
                entries.push(Entry {
                    label,
                    detail: "Group".into(),
                    json: json!({
                        "name": sub.name(),
                        "path": sub.path(),
                        "kind": "group",
                        "members": members,
                        "attributes": attrs,
                    }),
                });
                if recursive {
                    walk(&sub, file, true, depth + 1, entries, seen)?;
                }
            }
            Object::Dataset(ds) => entries.push(dataset_entry(&ds, label, file)?),
            Object::Datatype(nt) => entries.push(type_entry(&nt, label, file)?),
        }
    }
    Ok(())
}

/// A committed datatype: `Type <type>`, as h5ls shows one.
fn type_entry(nt: &NamedType, label: String, file: &Path) -> Result<Entry, CliError> {
    let dt = nt.dtype().in_file(file)?;
    let attrs = nt.attrs().len().in_file(file)?;
    Ok(Entry {
        label,
        detail: format!("Type {dt}"),
        json: json!({
            "name": nt.name(),
            "path": nt.path(),
            "kind": "datatype",
            "dtype": dt.to_numpy_str(),
            "type": dt.to_string(),
            "attributes": attrs,
        }),
    })
}

fn dataset_entry(ds: &Dataset, label: String, file: &Path) -> Result<Entry, CliError> {
    let dt = ds.dtype().in_file(file)?;
    let shape = ds.shape().in_file(file)?;
    let maxshape = ds.maxshape().in_file(file)?;
    let chunks = ds.chunks().in_file(file)?;
    let filters = ds.filters().in_file(file)?;
    let attrs = ds.attrs().len().in_file(file)?;
    let resizable = maxshape.iter().zip(&shape).any(|(m, s)| *m != Some(*s));
    let layout = match &chunks {
        Some(c) => format!("chunks {}", values::shape_text(c, None)),
        None => match ds.layout().in_file(file)? {
            StorageLayout::Compact => "compact".into(),
            StorageLayout::Virtual => {
                format!(
                    "virtual, {} mappings",
                    ds.virtual_mappings().in_file(file)?.len()
                )
            }
            StorageLayout::External => {
                format!(
                    "external, {} segments",
                    ds.external_segments().in_file(file)?.len()
                )
            }
            _ => "contiguous".into(),
        },
    };
    let space = if ds.is_null().in_file(file)? {
        "{NULL}".to_string()
    } else {
        values::shape_text(&shape, resizable.then_some(&maxshape[..]))
    };
    let committed = ds.committed_type().in_file(file)?;
    let type_text = match &committed {
        Some(t) if !t.path().is_empty() => format!("{dt} (committed {})", t.path()),
        _ => dt.to_string(),
    };
    let mut detail = format!("Dataset {space} {type_text}, {layout}");
    if !filters.is_empty() {
        detail.push_str(&format!(", filters {}", values::filters_text(&filters)));
    }
    let vlen = ds.vlen_info().in_file(file)?;
    let vector_filters = vlen.as_ref().map(|v| v.filters.clone()).unwrap_or_default();
    if !vector_filters.is_empty() {
        detail.push_str(&format!(
            ", vector filters {}",
            values::filters_text(&vector_filters)
        ));
    }
    if let Some(v) = &vlen {
        // What the byte vector holds and what it costs on disk.
        detail.push_str(&format!(
            ", vector {} B in {} B stored (ratio {:.2})",
            v.vector_bytes,
            v.stored_bytes,
            v.compression_ratio()
        ));
    }
    Ok(Entry {
        label,
        detail,
        json: json!({
            "name": ds.name(),
            "path": ds.path(),
            "kind": "dataset",
            "dtype": dt.to_numpy_str(),
            "type": dt.to_string(),
            "committed_type": committed.as_ref().map(|t| t.path().to_string()),
            "shape": shape,
            "maxshape": values::maxshape_json(&maxshape),
            "chunks": chunks,
            "filters": values::filters_json(&filters),
            "vector_filters": vlen.as_ref().map(|_| values::filters_json(&vector_filters)),
            "vector_bytes": vlen.as_ref().map(|v| v.vector_bytes),
            "vector_stored_bytes": vlen.as_ref().map(|v| v.stored_bytes),
            "vector_compression_ratio": vlen.as_ref().map(|v| v.compression_ratio()),
            "attributes": attrs,
        }),
    })
}
