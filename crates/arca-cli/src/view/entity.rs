//! What a path names, as h5grove sees it: a group, a dataset, or a soft or
//! external link it does not (or cannot) follow; and the metadata
//! `/api/meta` and `/api/paths` report.

use std::collections::HashSet;

use arca::{Dataset, Filter, Group, Link, NamedType, Object};
use serde_json::{json, Map, Value};

use super::dtype::type_meta;
use super::error::ApiError;

/// How soft and external links are resolved (h5grove's `resolve_links`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// Never followed.
    None,
    /// Followed when they lead somewhere (the default).
    OnlyValid,
    /// Followed; a dangling link is a 404.
    All,
}

impl Links {
    /// Parse the query argument (`true`/`false` mean `all`/`none`).
    pub fn parse(arg: Option<&str>) -> Result<Links, ApiError> {
        let Some(raw) = arg else {
            return Ok(Links::OnlyValid);
        };
        match raw.to_lowercase().as_str() {
            "true" | "all" => Ok(Links::All),
            "false" | "none" => Ok(Links::None),
            "only_valid" => Ok(Links::OnlyValid),
            _ => Err(ApiError::query(format!(
                "{raw} is not a valid value for link resolution. Accepted values are: all, none or only_valid"
            ))),
        }
    }
}

/// What a path leads to.
pub enum Entity {
    /// A group.
    Group(Group),
    /// A dataset.
    Dataset(Dataset),
    /// A committed datatype.
    Datatype(NamedType),
    /// A soft link, not followed.
    Soft(String),
    /// An external link, not followed.
    External {
        /// The other file.
        file: String,
        /// The path in it.
        path: String,
    },
}

/// An entity and the path it was asked for.
pub struct Content {
    /// The path as requested.
    pub path: String,
    /// What it leads to.
    pub entity: Entity,
}

/// `prefix` joined with a child's name, as h5grove joins them.
pub fn join(prefix: &str, name: &str) -> String {
    if prefix == "/" {
        format!("/{name}")
    } else {
        format!("{}/{name}", prefix.trim_end_matches('/'))
    }
}

/// Open what `path` names in the file whose root is `root` (`file_name`
/// for messages).
pub fn open(root: &Group, path: &str, links: Links, file_name: &str) -> Result<Content, ApiError> {
    let content = |entity| Content {
        path: path.to_string(),
        entity,
    };
    let object = |o: Object| match o {
        Object::Group(g) => Entity::Group(g),
        Object::Dataset(d) => Entity::Dataset(d),
        Object::Datatype(t) => Entity::Datatype(t),
    };
    if path == "/" {
        return Ok(content(Entity::Group(root.clone())));
    }
    let missing = || ApiError::not_found(format!("{path} is not a valid path in {file_name}"));
    let link = match root.link(path) {
        Ok(l) => l,
        Err(e @ (arca::Error::Corrupt { .. } | arca::Error::Io { .. })) => return Err(e.into()),
        Err(_) => return Err(missing()),
    };
    let unfollowed = match link {
        Link::Hard(_) => return Ok(content(object(root.object(path)?))),
        Link::Soft(t) => Entity::Soft(t),
        Link::External { file, path } => Entity::External { file, path },
    };
    if links == Links::None {
        return Ok(content(unfollowed));
    }
    match root.object(path) {
        Ok(o) => Ok(content(object(o))),
        Err(_) if links == Links::OnlyValid => Ok(content(unfollowed)),
        Err(_) => Err(ApiError::not_found(format!(
            "Cannot resolve {} at {path} of {file_name}",
            describe(&unfollowed)
        ))),
    }
}

/// A link as h5py prints it.
fn describe(e: &Entity) -> String {
    match e {
        Entity::Soft(t) => format!("<SoftLink to \"{t}\">"),
        Entity::External { file, path } => {
            format!("<ExternalLink to \"{path}\" in file \"{file}\">")
        }
        _ => String::new(),
    }
}

impl Content {
    /// The last component of the path.
    pub fn name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or("")
    }

    /// `/api/meta`: a group's with its children to `depth` 1, a dataset's,
    /// a link's.
    pub fn metadata(&self, root: &Group, depth: u32, file_name: &str) -> Result<Value, ApiError> {
        let mut m = Map::new();
        match &self.entity {
            Entity::Soft(target) => {
                m.insert("kind".into(), json!("soft_link"));
                m.insert("name".into(), json!(self.name()));
                m.insert("target_path".into(), json!(target));
            }
            Entity::External { file, path } => {
                m.insert("kind".into(), json!("external_link"));
                m.insert("name".into(), json!(self.name()));
                m.insert("target_file".into(), json!(file));
                m.insert("target_path".into(), json!(path));
            }
            Entity::Group(g) => {
                m.insert("attributes".into(), attributes(&g.attrs())?);
                if depth > 0 {
                    let mut children = vec![];
                    for (name, _) in g.links()? {
                        let child =
                            open(root, &join(&self.path, &name), Links::OnlyValid, file_name)?;
                        children.push(child.metadata(root, depth - 1, file_name)?);
                    }
                    m.insert("children".into(), Value::Array(children));
                }
                m.insert("kind".into(), json!("group"));
                m.insert("name".into(), json!(self.name()));
            }
            Entity::Dataset(d) => {
                m.insert("attributes".into(), attributes(&d.attrs())?);
                m.insert("chunks".into(), json!(d.chunks()?));
                m.insert("filters".into(), filters(&d.filters()?));
                m.insert("kind".into(), json!("dataset"));
                m.insert("name".into(), json!(self.name()));
                let shape = if d.is_null()? {
                    Value::Null
                } else {
                    json!(d.shape()?)
                };
                m.insert("shape".into(), shape);
                m.insert("type".into(), type_meta(&d.dtype()?));
            }
            Entity::Datatype(t) => {
                m.insert("attributes".into(), attributes(&t.attrs())?);
                m.insert("kind".into(), json!("datatype"));
                m.insert("name".into(), json!(self.name()));
                m.insert("type".into(), type_meta(&t.dtype()?));
            }
        }
        Ok(Value::Object(m))
    }
}

/// Attribute metadata, by name: `{name, shape, type}`.
fn attributes(attrs: &arca::Attributes) -> Result<Value, ApiError> {
    let mut names = attrs.names()?;
    names.sort();
    let mut out = vec![];
    for n in names {
        let v = attrs.get(&n)?;
        let shape = if v.null { Value::Null } else { json!(v.shape) };
        out.push(json!({"name": n, "shape": shape, "type": type_meta(&v.dtype)}));
    }
    Ok(Value::Array(out))
}

/// A filter pipeline as HDF5 names it: `[{id, name}]`, or null when empty.
fn filters(fs: &[Filter]) -> Value {
    if fs.is_empty() {
        return Value::Null;
    }
    Value::Array(
        fs.iter()
            .map(|f| {
                let (id, name) = match f {
                    Filter::Shuffle => (2, "shuffle".to_string()),
                    Filter::Deflate(_) => (1, "deflate".to_string()),
                    Filter::Zstd(_) => (32015, "zstd".to_string()),
                    Filter::Lz4 => (32004, "lz4".to_string()),
                    Filter::Hdf5(h) => (h.id, h.name()),
                };
                json!({"id": id, "name": name})
            })
            .collect(),
    )
}

/// `/api/paths`: `base` and every path below it, depth first in each
/// group's order, each group entered once (as HDF5's link visit does);
/// links are listed, not followed.
pub fn paths(base: &Content) -> Result<Vec<String>, ApiError> {
    let Entity::Group(g) = &base.entity else {
        return Err(ApiError::query(format!("{} is not a group", base.path)));
    };
    let mut out = vec![base.path.clone()];
    let mut seen = HashSet::from([g.id()]);
    walk(g, &base.path, &mut seen, &mut out, 0)?;
    Ok(out)
}

fn walk(
    g: &Group,
    at: &str,
    seen: &mut HashSet<u64>,
    out: &mut Vec<String>,
    depth: usize,
) -> Result<(), ApiError> {
    if depth > crate::data::MAX_DEPTH {
        return Err(ApiError::new(500, "groups nested too deep (a link cycle?)"));
    }
    for (name, link) in g.links()? {
        let p = join(at, &name);
        out.push(p.clone());
        if let Link::Hard(arca::ObjectKind::Group) = link {
            let child = g.group(&name)?;
            if seen.insert(child.id()) {
                walk(&child, &p, seen, out, depth + 1)?;
            }
        }
    }
    Ok(())
}
