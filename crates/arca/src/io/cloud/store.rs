//! From a URL and options to an `object_store` store and the object's path
//! in it: credentials and endpoints from the environment (`AWS_*`,
//! `GOOGLE_*`, `AZURE_*`), overridden by the options given.

use std::sync::{Arc, OnceLock};

pub use object_store;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{BackoffConfig, ClientConfigKey, ObjectStore, ObjectStoreScheme, RetryConfig};

use super::options::CloudOptions;
use super::s3_signed::{KeepClient, S3Signed};
use crate::error::{Error, Result};

/// The process's in-memory store, behind every `memory://` URL: put
/// objects in it, then open them by URL (tests, data made in-process).
///
/// ```
/// use arca::io::{memory_store, object_store::{ObjectStore, path::Path}};
/// let _store = memory_store();
/// let _key = Path::from("runs/a.arca");
/// ```
pub fn memory_store() -> Arc<InMemory> {
    static STORE: OnceLock<Arc<InMemory>> = OnceLock::new();
    STORE.get_or_init(|| Arc::new(InMemory::new())).clone()
}

fn bad_url(url: &str, why: impl std::fmt::Display) -> Error {
    Error::invalid(format!("{url}: {why}"))
}

fn bad_key(url: &str, key: &str) -> Error {
    Error::invalid(format!(
        "{url}: unknown storage option {key:?} (see object_store's configuration keys for this store, or arca's: head_bytes, block_bytes, cache_bytes, part_bytes, max_in_flight, coalesce_bytes, max_retries, retry_timeout, staging_dir, multipart_threshold, part_size)"
    ))
}

/// Apply every store key to `builder` through `parse`, refusing unknown ones.
fn configure<B, K: std::str::FromStr>(
    url: &str,
    mut builder: B,
    opts: &CloudOptions,
    with: impl Fn(B, K, &str) -> B,
) -> Result<B> {
    for (k, v) in opts.store_keys() {
        let key: K = k.parse().map_err(|_| bad_key(url, k))?;
        builder = with(builder, key, v);
    }
    Ok(builder)
}

fn retry(opts: &CloudOptions) -> RetryConfig {
    RetryConfig {
        backoff: BackoffConfig {
            init_backoff: std::time::Duration::from_millis(50),
            max_backoff: std::time::Duration::from_secs(5),
            base: 2.0,
        },
        max_retries: opts.max_retries(),
        retry_timeout: opts.retry_timeout(),
    }
}

fn built<S: ObjectStore>(url: &str, r: object_store::Result<S>) -> Result<Arc<dyn ObjectStore>> {
    r.map(|s| Arc::new(s) as Arc<dyn ObjectStore>)
        .map_err(|e| bad_url(url, e))
}

/// The store `url` lies in, the object's path there and the kind of store.
pub(super) fn open(
    url: &str,
    opts: &CloudOptions,
) -> Result<(Arc<dyn ObjectStore>, Path, ObjectStoreScheme)> {
    let (store, path, scheme, _) = open_writable(url, opts)?;
    Ok((store, path, scheme))
}

/// A store opened for writing: the store, the object's path, the kind of
/// store, and for S3 what a conditional multipart publish needs beside the
/// store (`None` where it cannot be used: see [`S3Signed::new`]).
pub(super) type Writable = (
    Arc<dyn ObjectStore>,
    Path,
    ObjectStoreScheme,
    Option<S3Signed>,
);

/// [`open`], with what a multipart publish to S3 needs.
pub(super) fn open_writable(url: &str, opts: &CloudOptions) -> Result<Writable> {
    let mut s3 = None;
    let parsed = url::Url::parse(url).map_err(|e| bad_url(url, e))?;
    let (scheme, path) = ObjectStoreScheme::parse(&parsed).map_err(|_| {
        bad_url(
            url,
            "not a URL arca opens (s3://bucket/key, gs://bucket/key, az://account/container/key, http(s)://host/path, file:///path, memory:///key)",
        )
    })?;
    if path.as_ref().is_empty() {
        return Err(bad_url(url, "the URL names no object"));
    }
    let store = match scheme {
        ObjectStoreScheme::AmazonS3 => {
            use object_store::aws::{AmazonS3Builder as B, AmazonS3ConfigKey};
            let keep = KeepClient::default();
            let mut b = B::from_env()
                .with_url(url)
                .with_retry(retry(opts))
                .with_http_connector(keep.clone());
            // Publishing a written file needs conditional PUTs (If-Match,
            // If-None-Match), which S3 and its compatibles honour; the
            // environment or the options may still say otherwise.
            if std::env::var_os("AWS_CONDITIONAL_PUT").is_none() {
                b = b.with_config(AmazonS3ConfigKey::ConditionalPut, "etag");
            }
            let b = configure(url, b, opts, |b: B, k, v| b.with_config(k, v))?;
            let config = b.clone();
            let store = Arc::new(b.build().map_err(|e| bad_url(url, e))?);
            s3 = S3Signed::new(
                store.clone(),
                &keep,
                |k| config.get_config_value(k),
                opts.max_retries(),
            );
            store as Arc<dyn ObjectStore>
        }
        ObjectStoreScheme::GoogleCloudStorage => {
            use object_store::gcp::GoogleCloudStorageBuilder as B;
            let b = B::from_env().with_url(url).with_retry(retry(opts));
            built(
                url,
                configure(url, b, opts, |b: B, k, v| b.with_config(k, v))?.build(),
            )?
        }
        ObjectStoreScheme::MicrosoftAzure => {
            use object_store::azure::MicrosoftAzureBuilder as B;
            let b = B::from_env().with_url(url).with_retry(retry(opts));
            built(
                url,
                configure(url, b, opts, |b: B, k, v| b.with_config(k, v))?.build(),
            )?
        }
        ObjectStoreScheme::Http => {
            use object_store::http::HttpBuilder as B;
            let base = &parsed[..url::Position::BeforePath];
            // The URL's own scheme says whether plain HTTP is meant.
            let b = B::new().with_url(base).with_retry(retry(opts)).with_config(
                ClientConfigKey::AllowHttp,
                (parsed.scheme() == "http").to_string(),
            );
            built(
                url,
                configure(url, b, opts, |b: B, k: ClientConfigKey, v| {
                    b.with_config(k, v)
                })?
                .build(),
            )?
        }
        ObjectStoreScheme::Local | ObjectStoreScheme::Memory => {
            if let Some((k, _)) = opts.store_keys().first() {
                return Err(bad_key(url, k));
            }
            if scheme == ObjectStoreScheme::Local {
                Arc::new(object_store::local::LocalFileSystem::new()) as Arc<dyn ObjectStore>
            } else {
                memory_store() as Arc<dyn ObjectStore>
            }
        }
        _ => return Err(bad_url(url, "no store for this scheme")),
    };
    Ok((store, path, scheme, s3))
}

/// Whether `name` is a URL (`scheme://…`) rather than a path: what the
/// command line and the Python package open through [`super::CloudDriver`].
///
/// ```
/// assert!(arca::io::is_url("s3://bucket/a.arca"));
/// assert!(arca::io::is_url("ftp://host/a.arca"));
/// assert!(!arca::io::is_url("data/a.arca"));
/// assert!(!arca::io::is_url("./odd://name"));
/// ```
pub fn is_url(name: &str) -> bool {
    name.split_once("://").is_some_and(|(scheme, _)| {
        scheme.len() > 1
            && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
    })
}
