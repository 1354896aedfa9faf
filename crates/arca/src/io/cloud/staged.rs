//! Writing a file on object storage: the object is staged in a local file
//! (fetched whole for `a` and `r+`), which arca writes with its local
//! machinery, and each commit publishes it with one conditional PUT (on S3
//! from `multipart_threshold` up, a multipart upload with a conditional
//! completion): `If-None-Match: *` while there is no object yet, else
//! `If-Match` the version this writer opened or last published. A writer
//! whose condition fails gets [`Error::Conflict`] and its staged file
//! stays. Each publish marks the object with a token of its own, so that
//! one whose answer was lost is recognised as done, not as a conflict.

use std::io::Write;
use std::path::{Path as FsPath, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use futures::StreamExt;
use object_store::path::Path;
use object_store::{
    Attribute, Attributes, GetOptions, ObjectStore, ObjectStoreScheme, PutMode, PutOptions,
    PutPayload, PutResult, UpdateVersion,
};

use super::driver::remote;
use super::options::CloudOptions;
use super::runtime::block_on;
use super::s3_signed::{Condition, S3Signed};
use crate::error::{Error, RemoteKind, Result};
use crate::io::publish::Publish;
use crate::io::stats::Fetches;

/// What a writer wants of the object it opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Intent {
    /// `r+` (`must_exist`) or `a`: fetch it to change it; for `a`, a
    /// missing object is created.
    Change {
        /// Whether a missing object is an error rather than a new file.
        must_exist: bool,
    },
    /// `w`: a new file replaces whatever is there.
    Replace,
    /// `w-` / `x`: a new file, refused if the object exists.
    CreateNew,
}

/// A file on object storage being written through its staged copy.
pub(crate) struct Staged {
    url: String,
    store: Arc<dyn ObjectStore>,
    path: Path,
    /// The version last seen or published; `None` while there is no
    /// object (the next PUT creates it).
    version: Option<UpdateVersion>,
    /// The directory made for the staged file (and its journal); `None`
    /// for a caller's file ([`upload`]).
    dir: Option<PathBuf>,
    file: PathBuf,
    fetches: Arc<Fetches>,
    /// For S3: the requests of a conditional multipart publish.
    s3: Option<S3Signed>,
    multipart_threshold: u64,
    part_size: u64,
}

/// The user-metadata key of the token each publish marks the object with
/// (S3 `x-amz-meta-arcapublish`): letters only, since Azure takes only
/// identifiers and HTTP servers' gateways (WSGI, some proxies) turn `_`
/// and `-` in header names into each other or drop them.
const TOKEN_KEY: &str = "arcapublish";

/// A token no other publish, of this process or another, has: the process,
/// the time, a count, and bits of the process's random hasher keys.
fn publish_token() -> String {
    use std::hash::{BuildHasher, Hasher};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    static KEYS: std::sync::OnceLock<std::collections::hash_map::RandomState> =
        std::sync::OnceLock::new();
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut h = KEYS
        .get_or_init(std::collections::hash_map::RandomState::new)
        .build_hasher();
    h.write_u128(t);
    h.write_u64(n);
    format!("{:x}-{t:x}-{n:x}-{:016x}", std::process::id(), h.finish())
}

impl std::fmt::Debug for Staged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Staged")
            .field("url", &self.url)
            .field("file", &self.file)
            .finish()
    }
}

/// A directory of its own under `base` for one staged file.
fn staging_dir(base: &FsPath, name: &str) -> Result<PathBuf> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = base.join(format!(
            "arca-staged-{name}-{}-{stamp:x}-{n}",
            std::process::id()
        ));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(Error::io(format!("making {}", dir.display()), e)),
        }
    }
}

/// A local file error met while fetching, carried as the store's error.
fn local(e: std::io::Error) -> object_store::Error {
    object_store::Error::Generic {
        store: "local staging",
        source: Box::new(e),
    }
}

/// The object's file name, made safe for a local name.
fn base_name(path: &Path) -> String {
    let name: String = path
        .filename()
        .unwrap_or("object")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if name.is_empty() || name.starts_with('.') {
        format!("object{name}")
    } else {
        name
    }
}

impl Staged {
    /// Stage the object at `url` for writing: a HEAD for `w` and `x` (is
    /// there an object, and which version), one GET of the whole object for
    /// `a` and `r+`. Returns the staging and whether the staged file is new
    /// (to be created) rather than the fetched object.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for an `http(s)://` URL (a plain web server
    /// takes no conditional PUT); [`Error::Conflict`] for `x` on an
    /// existing object; [`Error::Remote`] ([`RemoteKind::NotFound`] for
    /// `r+` on a missing object) when a request fails.
    pub(crate) fn open(url: &str, opts: &CloudOptions, intent: Intent) -> Result<(Staged, bool)> {
        let (store, path, scheme, s3) = super::store::open_writable(url, opts)?;
        if scheme == ObjectStoreScheme::Http {
            return Err(Error::Unsupported(format!(
                "{url}: an http(s) URL opens read-only (a web server takes no conditional PUT); write to s3://, gs://, az:// or a local file"
            )));
        }
        let (mut me, create) = Self::over_store(store, path, url, opts, intent)?;
        me.s3 = s3;
        Ok((me, create))
    }

    /// [`Staged::open`] for `path` in a store made by the caller.
    pub(crate) fn over_store(
        store: Arc<dyn ObjectStore>,
        path: Path,
        url: &str,
        opts: &CloudOptions,
        intent: Intent,
    ) -> Result<(Staged, bool)> {
        let base = match opts.staging_dir() {
            Some(d) => d.to_path_buf(),
            None => std::env::temp_dir(),
        };
        let dir = staging_dir(&base, &base_name(&path))?;
        let file = dir.join(base_name(&path));
        let mut me = Staged {
            url: url.to_string(),
            store,
            path,
            version: None,
            dir: Some(dir),
            file,
            fetches: Arc::new(Fetches::new()),
            s3: None,
            multipart_threshold: opts.multipart_threshold(),
            part_size: opts.part_size(),
        };
        match me.fetch(intent) {
            Ok(create) => Ok((me, create)),
            Err(e) => {
                me.discard();
                Err(e)
            }
        }
    }

    /// Learn what is at the URL (and fetch it, to change it); whether the
    /// staged file is to be created.
    fn fetch(&mut self, intent: Intent) -> Result<bool> {
        let (url, store, path) = (&self.url, &self.store, &self.path);
        if let Intent::Change { must_exist } = intent {
            let file = &self.file;
            let got = block_on(async {
                let r = store.get_opts(path, GetOptions::default()).await?;
                let version = UpdateVersion {
                    e_tag: r.meta.e_tag.clone(),
                    version: r.meta.version.clone(),
                };
                let mut out = std::fs::File::create(file).map_err(local)?;
                let mut n = 0u64;
                let mut body = r.into_stream();
                while let Some(b) = body.next().await {
                    let b = b?;
                    n += b.len() as u64;
                    out.write_all(&b).map_err(local)?;
                }
                out.sync_all().map_err(local)?;
                Ok::<_, object_store::Error>((version, n))
            })?;
            return match got {
                Ok((version, n)) => {
                    self.fetches.round_trip(1, n);
                    self.version = Some(version);
                    Ok(false)
                }
                Err(object_store::Error::NotFound { .. }) if !must_exist => {
                    self.fetches.round_trip(1, 0);
                    Ok(true)
                }
                Err(e) => {
                    self.fetches.round_trip(1, 0);
                    Err(remote(url, None, e))
                }
            };
        }
        let head = block_on(store.head(path))?;
        // (A HEAD, not a ranged GET: nothing of the object is needed.)
        self.fetches.round_trip(1, 0);
        match head {
            Ok(_) if intent == Intent::CreateNew => Err(Error::Conflict {
                url: url.clone(),
                staged: None,
                message: "the object exists (mode 'x' / 'w-' creates a new one only)".into(),
            }),
            Ok(meta) => {
                self.version = Some(UpdateVersion {
                    e_tag: meta.e_tag,
                    version: meta.version,
                });
                Ok(true)
            }
            Err(object_store::Error::NotFound { .. }) => Ok(true),
            Err(e) => Err(remote(url, None, e)),
        }
    }

    /// The staged file.
    pub(crate) fn file(&self) -> &FsPath {
        &self.file
    }

    /// Remove the staged file and its directory (a failed open).
    pub(crate) fn discard(&self) {
        if let Some(d) = &self.dir {
            let _ = std::fs::remove_dir_all(d);
        }
    }

    /// The error of a publish that failed with `e`.
    fn failed(&self, e: object_store::Error) -> Error {
        use object_store::Error as E;
        match e {
            E::AlreadyExists { .. } | E::Precondition { .. } | E::NotModified { .. } => {
                Error::Conflict {
                    url: self.url.clone(),
                    staged: Some(self.file.clone()),
                    message: match &self.version {
                        None => "another writer created the object first".into(),
                        Some(_) => {
                            "another writer changed the object since this one opened or last published it".into()
                        }
                    },
                }
            }
            E::NotImplemented => Error::Unsupported(format!(
                "{}: this store takes no conditional PUT, so a file cannot be published safely (for S3, leave aws_conditional_put at 'etag'); the file is kept at {}",
                self.url,
                self.file.display()
            )),
            e => match remote(&self.url, None, e) {
                Error::Remote {
                    url,
                    range,
                    kind,
                    message,
                } => Error::Remote {
                    url,
                    range,
                    kind: if kind == RemoteKind::Changed {
                        RemoteKind::Failed
                    } else {
                        kind
                    },
                    message: format!(
                        "{message}; publishing failed, the file is kept at {}",
                        self.file.display()
                    ),
                },
                e => e,
            },
        }
    }
}

impl Staged {
    /// Send the staged file as the object, on condition, marked with
    /// `token`: one PUT of the file read whole, or from
    /// `multipart_threshold` up on S3, a multipart upload.
    fn send(&self, token: &str) -> Result<object_store::Result<PutResult>> {
        let size = std::fs::metadata(&self.file)
            .map_err(|e| Error::io(format!("reading {}", self.file.display()), e))?
            .len();
        if let Some(s3) = self
            .s3
            .as_ref()
            .filter(|_| size >= self.multipart_threshold)
        {
            let condition = match &self.version {
                None => Condition::Absent,
                Some(UpdateVersion { e_tag: Some(e), .. }) => Condition::Is(e.clone()),
                // (S3 always gives an ETag; without one there is nothing
                // to make the completion conditional on.)
                Some(_) => {
                    return Ok(Err(object_store::Error::NotImplemented));
                }
            };
            return block_on(super::multipart::upload(
                s3,
                &self.path,
                &self.file,
                self.part_size,
                &condition,
                &[(TOKEN_KEY, token)],
                &self.fetches,
            ));
        }
        let bytes = std::fs::read(&self.file)
            .map_err(|e| Error::io(format!("reading {}", self.file.display()), e))?;
        let n = bytes.len() as u64;
        let mode = match &self.version {
            None => PutMode::Create,
            Some(v) => PutMode::Update(v.clone()),
        };
        let mut attributes = Attributes::new();
        attributes.insert(
            Attribute::Metadata(TOKEN_KEY.into()),
            token.to_string().into(),
        );
        let opts = PutOptions {
            mode,
            attributes,
            ..Default::default()
        };
        let r = block_on(
            self.store
                .put_opts(&self.path, PutPayload::from(bytes), opts),
        )?;
        self.fetches.put(n);
        Ok(r)
    }

    /// The version of the object if it is the one the publish marked with
    /// `token` made (its answer lost): one HEAD.
    fn landed(&self, token: &str) -> Option<UpdateVersion> {
        let head = GetOptions {
            head: true,
            ..Default::default()
        };
        let r = block_on(self.store.get_opts(&self.path, head)).ok()?;
        self.fetches.round_trip(1, 0);
        let r = r.ok()?;
        let ours = r
            .attributes
            .get(&Attribute::Metadata(TOKEN_KEY.into()))
            .is_some_and(|v| v.as_ref() == token);
        ours.then_some(UpdateVersion {
            e_tag: r.meta.e_tag,
            version: r.meta.version,
        })
    }
}

impl Publish for Staged {
    fn publish(&mut self) -> Result<()> {
        let token = publish_token();
        let version = match self.send(&token)? {
            Ok(done) => UpdateVersion {
                e_tag: done.e_tag,
                version: done.version,
            },
            // The store said no, or the answer was lost: a publish whose
            // answer was lost (and whose retry met its own object) has
            // marked the object with this token.
            Err(e) if !matches!(e, object_store::Error::NotImplemented) => {
                match self.landed(&token) {
                    Some(v) => v,
                    None => return Err(self.failed(e)),
                }
            }
            Err(e) => return Err(self.failed(e)),
        };
        self.version = Some(version);
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<()> {
        match &self.dir {
            Some(d) => std::fs::remove_dir_all(d)
                .map_err(|e| Error::io(format!("removing {}", d.display()), e)),
            None => Ok(()),
        }
    }

    fn fetches(&self) -> Arc<Fetches> {
        self.fetches.clone()
    }
}

/// Upload the local file `local` (an arca file, closed) to `url` with one
/// conditional PUT: as a new object (`If-None-Match: *`), or with
/// `replace`, in place of the object there now (a HEAD learns its
/// version, the PUT sends `If-Match` it). How `arca repack` and
/// `arca import` write to a URL. Returns the counts of the requests.
///
/// ```
/// use arca::io::{upload, CloudOptions};
/// let dir = tempfile::tempdir().unwrap();
/// let p = dir.path().join("a.arca");
/// arca::File::create(&p).unwrap().close().unwrap();
/// let o = CloudOptions::new();
/// let s = upload(&p, "memory:///doc/upload.arca", &o, false).unwrap();
/// assert_eq!((s.requests, s.puts), (0, 1));
/// let e = upload(&p, "memory:///doc/upload.arca", &o, false).unwrap_err();
/// assert!(matches!(e, arca::Error::Conflict { .. }));
/// let s = upload(&p, "memory:///doc/upload.arca", &o, true).unwrap();
/// assert_eq!((s.requests, s.puts), (1, 1));
/// ```
///
/// # Errors
/// [`Error::Conflict`] if the object exists (without `replace`) or changed
/// between the HEAD and the PUT; [`Error::Unsupported`] for an `http(s)://`
/// URL or a store without conditional PUTs; [`Error::Remote`] when a
/// request fails; [`Error::Io`] if `local` cannot be read.
pub fn upload(
    local: &FsPath,
    url: &str,
    opts: &CloudOptions,
    replace: bool,
) -> Result<crate::io::IoStats> {
    let (store, path, scheme, s3) = super::store::open_writable(url, opts)?;
    if scheme == ObjectStoreScheme::Http {
        return Err(Error::Unsupported(format!(
            "{url}: an http(s) URL takes no upload; write to s3://, gs://, az:// or a local file"
        )));
    }
    let mut s = Staged {
        url: url.to_string(),
        store,
        path,
        version: None,
        dir: None,
        file: local.to_path_buf(),
        fetches: Arc::new(Fetches::new()),
        s3,
        multipart_threshold: opts.multipart_threshold(),
        part_size: opts.part_size(),
    };
    if replace {
        s.fetch(Intent::Replace)?;
    }
    s.publish()?;
    let mut stats = crate::io::IoStats::default();
    s.fetches.add_to(&mut stats);
    Ok(stats)
}
