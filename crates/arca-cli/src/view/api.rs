//! h5grove's HTTP API (version 4, as `@h5web/app`'s `H5GroveProvider`
//! calls it) over one open file: `/api/meta`, `/api/attr`, `/api/data`,
//! `/api/paths` and `/api/stats`, each taking `path` and answering JSON, or
//! for data `bin`/`npy` bytes, or `{"message": ...}` with h5grove's status.

use arca::{AttrValue, File, Group};
use serde_json::{json, Value};

use super::array::{self, Array};
use super::entity::{self, Content, Entity, Links};
use super::error::ApiError;
use super::slice::{self, Resolved};
use super::stats;
use crate::data;

/// An answer: status, content type, body, and an optional
/// `Content-Disposition`.
#[derive(Debug)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// `Content-Type`.
    pub content_type: &'static str,
    /// `Content-Disposition`, for downloads.
    pub disposition: Option<&'static str>,
    /// The body.
    pub body: Vec<u8>,
}

impl Reply {
    /// A JSON answer.
    pub fn json(status: u16, v: &Value) -> Reply {
        Reply {
            status,
            content_type: "application/json",
            disposition: None,
            body: serde_json::to_vec(v).unwrap_or_default(),
        }
    }

    /// An error as h5grove writes it.
    pub fn error(e: &ApiError) -> Reply {
        Reply::json(e.status, &json!({ "message": e.message }))
    }
}

/// A request's query arguments, decoded.
#[derive(Debug, Default)]
pub struct Query(Vec<(String, String)>);

impl Query {
    /// Parse `a=1&b=x%2Fy` (`+` is a space).
    pub fn parse(q: &str) -> Query {
        Query(
            q.split('&')
                .filter(|p| !p.is_empty())
                .map(|p| {
                    let (k, v) = p.split_once('=').unwrap_or((p, ""));
                    (decode(k), decode(v))
                })
                .collect(),
        )
    }

    /// The last value given for `name` (as tornado takes it).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every value given for `name`.
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }
}

/// Percent-decoding; invalid escapes are kept as written.
fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                let hex = |c: u8| (c as char).to_digit(16);
                match (hex(b[i + 1]), hex(b[i + 2])) {
                    (Some(h), Some(l)) => {
                        out.push((h * 16 + l) as u8);
                        i += 2;
                    }
                    _ => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The file a server answers for.
pub struct Api {
    file: File,
    root: Group,
    file_name: String,
}

impl Api {
    /// Answer for `file`; `file_name` names it in messages.
    pub fn new(file: File, file_name: String) -> Api {
        Api {
            root: file.root(),
            file,
            file_name,
        }
    }

    /// Answer `endpoint` (`meta`, `attr`, `data`, `paths`, `stats`, `io`
    /// (arca's own: the file's [`arca::File::io_stats`]), or `` for the
    /// status check) with the query `q`.
    pub fn handle(&self, endpoint: &str, q: &Query) -> Reply {
        match self.dispatch(endpoint, q) {
            Ok(r) => r,
            Err(e) => Reply::error(&e),
        }
    }

    fn open(&self, q: &Query, links: Links) -> Result<Content, ApiError> {
        let path = q.get("path").unwrap_or("/");
        entity::open(&self.root, path, links, &self.file_name)
    }

    fn dispatch(&self, endpoint: &str, q: &Query) -> Result<Reply, ApiError> {
        match endpoint {
            "" => Ok(Reply {
                status: 200,
                content_type: "text/plain",
                disposition: None,
                body: b"ok".to_vec(),
            }),
            "meta" => {
                let links = Links::parse(q.get("resolve_links"))?;
                let c = self.open(q, links)?;
                Ok(Reply::json(
                    200,
                    &c.metadata(&self.root, 1, &self.file_name)?,
                ))
            }
            "paths" => {
                let links = Links::parse(q.get("resolve_links"))?;
                let c = self.open(q, links)?;
                Ok(Reply::json(200, &json!(entity::paths(&c)?)))
            }
            "attr" => {
                let c = self.open(q, Links::OnlyValid)?;
                let attrs = match &c.entity {
                    Entity::Group(g) => g.attrs(),
                    Entity::Dataset(d) => d.attrs(),
                    Entity::Datatype(t) => t.attrs(),
                    _ => {
                        return Err(ApiError::query(format!(
                            "{} is not a resolved entity",
                            c.path
                        )))
                    }
                };
                let keys = q.all("attr_keys");
                let names: Vec<String> = if keys.is_empty() {
                    attrs.names()?
                } else {
                    keys.iter().map(|k| k.to_string()).collect()
                };
                let mut out = serde_json::Map::new();
                for n in names {
                    let v = attrs.get(&n).map_err(|e| match e {
                        arca::Error::NotFound(_) => {
                            ApiError::not_found(format!("no attribute {n} at {}", c.path))
                        }
                        e => e.into(),
                    })?;
                    out.insert(n, attr_array(&v)?.json());
                }
                Ok(Reply::json(200, &Value::Object(out)))
            }
            "data" => self.data(q),
            "stats" => {
                let a = self.read(q)?;
                Ok(Reply::json(200, &stats::stats(&a)?))
            }
            // arca's own, outside h5grove's protocol: what the server has
            // read from storage, so a user (or a test) can see that a view
            // of a huge dataset reads only the chunks it shows.
            "io" => {
                let s = self.file.io_stats();
                Ok(Reply::json(
                    200,
                    &json!({
                        "chunks_read": s.chunks_read,
                        "bytes_read": s.bytes_read,
                        "requests": s.requests,
                        "bytes_fetched": s.bytes_fetched,
                        "round_trips": s.round_trips,
                    }),
                ))
            }
            other => Err(ApiError::not_found(format!("no endpoint /api/{other}"))),
        }
    }

    /// The selection of the dataset `q` names.
    fn read(&self, q: &Query) -> Result<Array, ApiError> {
        let c = self.open(q, Links::OnlyValid)?;
        let Entity::Dataset(d) = &c.entity else {
            return Err(ApiError::query(format!("{} is not a dataset", c.path)));
        };
        let dt = d.dtype()?;
        if d.is_null()? {
            if q.get("selection").is_some() {
                return Err(ApiError::query(
                    "a null dataspace has no elements to select",
                ));
            }
            return Ok(Array::Null(dt));
        }
        let shape = d.shape()?;
        let (r, scalar) = match q.get("selection") {
            Some(s) => (slice::resolve(s, &shape)?, false),
            None => (Resolved::all(&shape), shape.is_empty()),
        };
        // An index on every dimension yields a numpy scalar too.
        let scalar = scalar || (!shape.is_empty() && r.keep.iter().all(|k| !k));
        array::read(d, &dt, &r, scalar)
    }

    fn data(&self, q: &Query) -> Result<Reply, ApiError> {
        let safe = match q.get("dtype") {
            None | Some("origin") => false,
            Some("safe") => true,
            Some(other) => return Err(ApiError::query(format!("Unsupported dtype {other}"))),
        };
        let format = q.get("format").unwrap_or("json");
        let flatten = q
            .get("flatten")
            .is_some_and(|f| f.to_lowercase() != "false");
        let mut a = self.read(q)?;
        if safe && !a.is_numeric() {
            return Err(ApiError::query(
                "Unsupported dtype safe for non-numeric data",
            ));
        }
        if flatten {
            a.flatten();
        }
        match format {
            "json" => Ok(Reply::json(200, &a.json())),
            "bin" => Ok(Reply {
                status: 200,
                content_type: "application/octet-stream",
                disposition: None,
                body: a.bytes(safe)?,
            }),
            "npy" => Ok(Reply {
                status: 200,
                content_type: "application/octet-stream",
                disposition: Some("attachment; filename=\"data.npy\""),
                body: a.npy(safe)?,
            }),
            other => Err(ApiError::query(format!("Unsupported encoding {other}"))),
        }
    }
}

/// An attribute's value as h5py returns it.
fn attr_array(v: &AttrValue) -> Result<Array, ApiError> {
    if v.null {
        return Ok(Array::Null(v.dtype.clone()));
    }
    Ok(Array::Values {
        elems: data::attr_elements(v)?,
        shape: v.shape.clone(),
        scalar: v.shape.is_empty(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_decoding() {
        let q = Query::parse("path=%2Fa%20b&selection=1%2C2%3A3&x=1&x=2&bad=%zz%4");
        assert_eq!(q.get("path"), Some("/a b"));
        assert_eq!(q.get("selection"), Some("1,2:3"));
        assert_eq!(q.get("x"), Some("2"));
        assert_eq!(q.all("x"), vec!["1", "2"]);
        assert_eq!(q.get("bad"), Some("%zz%4"));
        assert_eq!(q.get("none"), None);
    }
}
