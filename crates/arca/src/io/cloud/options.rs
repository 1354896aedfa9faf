//! How a file on object storage is reached and read: the store's own
//! configuration keys, and arca's read-ahead, cache and retry settings.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{Error, Result};

/// Default bytes read with the first request: a compact file's metadata
/// fits, and at tens of megabytes a second the extra bytes cost less than
/// a second round trip.
pub const DEFAULT_HEAD_BYTES: usize = 1 << 20;
/// Default bound on the bytes of a file's metadata region (past the first
/// read) fetched in one request when a read first needs it: a larger region
/// is read a block at a time, as a file without one is.
pub const DEFAULT_META_BYTES: usize = 64 << 20;
/// Default unit of later reads and of the cache (a miss fetches whole
/// blocks, so nearby metadata comes along).
pub const DEFAULT_BLOCK_BYTES: usize = 128 << 10;
/// Default bound on the bytes of fetched blocks kept.
pub const DEFAULT_CACHE_BYTES: usize = 64 << 20;
/// Default retries of a request that met a server error or a timeout.
pub const DEFAULT_MAX_RETRIES: usize = 5;
/// Reads larger than this are split into requests sent together.
pub const DEFAULT_PART_BYTES: usize = 8 << 20;
/// Default bound on the requests of one batch in flight at once: enough
/// to hide a store's latency behind its bandwidth, few enough not to be
/// throttled.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 16;
/// Default largest gap between two ranges of one batch fetched as one
/// request: below it, the wasted bytes cost less than another request.
pub const DEFAULT_COALESCE_BYTES: usize = 64 << 10;
/// Default size from which a written file is published to S3 by a
/// multipart upload rather than one PUT: below it the file is read into
/// memory whole, so this is also the bound on a publish's memory.
pub const DEFAULT_MULTIPART_THRESHOLD: u64 = 64 << 20;
/// Default size of one part of a multipart publish.
pub const DEFAULT_PART_SIZE: u64 = 8 << 20;
/// S3's smallest part (all but the last part of an upload).
pub const MIN_PART_SIZE: u64 = 5 << 20;
/// S3's largest part.
pub const MAX_PART_SIZE: u64 = 5 << 30;

/// Settings for opening a file on object storage.
///
/// Keys of the store (`object_store`'s configuration keys, e.g.
/// `aws_endpoint`, `aws_access_key_id`, `aws_region`, `aws_allow_http`,
/// `google_service_account`, `azure_storage_account_name`, `timeout`) go
/// to the store and override its environment variables; arca's own keys
/// are `head_bytes`, `meta_bytes` (the most bytes of a file's metadata
/// region past the first read fetched as one request), `block_bytes`, `cache_bytes`, `part_bytes`,
/// `max_in_flight`, `coalesce_bytes`, `max_retries`, `retry_timeout`
/// (seconds), `staging_dir` (where a file opened for writing is staged;
/// default: the system's temporary directory), `multipart_threshold` (a
/// staged file this large or larger is published to S3 by a multipart
/// upload) and `part_size` (the size of its parts, 5 MiB to 5 GiB).
///
/// ```
/// use arca::io::CloudOptions;
/// let o = CloudOptions::new()
///     .set("aws_region", "eu-west-1").unwrap()
///     .set("max_retries", "2").unwrap()
///     .set("max_in_flight", "32").unwrap()
///     .set("multipart_threshold", "16777216").unwrap()
///     .set("part_size", "5242880").unwrap();
/// assert_eq!((o.max_retries(), o.max_in_flight()), (2, 32));
/// assert_eq!((o.multipart_threshold(), o.part_size()), (16 << 20, 5 << 20));
/// assert!(CloudOptions::new().set("max_in_flight", "0").is_err());
/// assert!(CloudOptions::new().set("part_size", "1048576").is_err());
/// assert!(CloudOptions::new().set("max_retries", "many").is_err());
/// ```
#[derive(Debug, Clone)]
pub struct CloudOptions {
    store: Vec<(String, String)>,
    head_bytes: usize,
    meta_bytes: usize,
    block_bytes: usize,
    cache_bytes: usize,
    part_bytes: usize,
    max_in_flight: usize,
    coalesce_bytes: usize,
    max_retries: usize,
    retry_timeout: Duration,
    staging_dir: Option<PathBuf>,
    multipart_threshold: u64,
    part_size: u64,
}

impl Default for CloudOptions {
    fn default() -> Self {
        CloudOptions {
            store: Vec::new(),
            head_bytes: DEFAULT_HEAD_BYTES,
            meta_bytes: DEFAULT_META_BYTES,
            block_bytes: DEFAULT_BLOCK_BYTES,
            cache_bytes: DEFAULT_CACHE_BYTES,
            part_bytes: DEFAULT_PART_BYTES,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            coalesce_bytes: DEFAULT_COALESCE_BYTES,
            max_retries: DEFAULT_MAX_RETRIES,
            retry_timeout: Duration::from_secs(180),
            staging_dir: None,
            multipart_threshold: DEFAULT_MULTIPART_THRESHOLD,
            part_size: DEFAULT_PART_SIZE,
        }
    }
}

fn number(key: &str, value: &str) -> Result<usize> {
    value.trim().parse().map_err(|_| {
        Error::invalid(format!(
            "storage option {key}={value:?}: not a whole number"
        ))
    })
}

impl CloudOptions {
    /// The defaults: credentials and endpoints from the environment.
    pub fn new() -> Self {
        Self::default()
    }

    /// Set one key: arca's own, or one the store checks when the file is
    /// opened (an unknown key is refused then).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a value of arca's own keys that is
    /// not a number, a block, head or part size or a bound on requests in
    /// flight of zero, a `multipart_threshold` of zero or a `part_size`
    /// outside S3's 5 MiB to 5 GiB.
    pub fn set(mut self, key: &str, value: &str) -> Result<Self> {
        let positive = |n: usize| {
            if n == 0 {
                Err(Error::invalid(format!(
                    "storage option {key} must be above 0"
                )))
            } else {
                Ok(n)
            }
        };
        match key {
            "head_bytes" => self.head_bytes = positive(number(key, value)?)?,
            "meta_bytes" => self.meta_bytes = number(key, value)?,
            "block_bytes" => self.block_bytes = positive(number(key, value)?)?,
            "part_bytes" => self.part_bytes = positive(number(key, value)?)?,
            "max_in_flight" => self.max_in_flight = positive(number(key, value)?)?,
            "coalesce_bytes" => self.coalesce_bytes = number(key, value)?,
            "cache_bytes" => self.cache_bytes = number(key, value)?,
            "max_retries" => self.max_retries = number(key, value)?,
            "retry_timeout" => {
                let s: f64 = value
                    .trim()
                    .parse()
                    .ok()
                    .filter(|s: &f64| *s >= 0.0 && s.is_finite())
                    .ok_or_else(|| {
                        Error::invalid(format!(
                            "storage option {key}={value:?}: not a number of seconds"
                        ))
                    })?;
                self.retry_timeout = Duration::from_secs_f64(s);
            }
            "multipart_threshold" => {
                self.multipart_threshold = positive(number(key, value)?)? as u64
            }
            "part_size" => {
                let n = number(key, value)? as u64;
                if !(MIN_PART_SIZE..=MAX_PART_SIZE).contains(&n) {
                    return Err(Error::invalid(format!(
                        "storage option part_size={n}: S3 takes parts of 5 MiB ({MIN_PART_SIZE}) to 5 GiB ({MAX_PART_SIZE})"
                    )));
                }
                self.part_size = n;
            }
            "staging_dir" => {
                if value.is_empty() {
                    return Err(Error::invalid("storage option staging_dir is empty"));
                }
                self.staging_dir = Some(PathBuf::from(value));
            }
            _ => self.store.push((key.to_string(), value.to_string())),
        }
        Ok(self)
    }

    /// The store's keys, in the order given.
    pub fn store_keys(&self) -> &[(String, String)] {
        &self.store
    }

    /// Bytes the first request reads.
    pub fn head_bytes(&self) -> usize {
        self.head_bytes
    }

    /// The most bytes of a file's metadata region (its superblock's
    /// `meta_end`) past the first read that are fetched as one request when
    /// a read first needs them (0: never; a larger region is read a block at
    /// a time). Also bounded by [`CloudOptions::cache_bytes`], which keeps
    /// them.
    ///
    /// ```
    /// use arca::io::CloudOptions;
    /// assert_eq!(CloudOptions::new().meta_bytes(), 64 << 20);
    /// assert_eq!(CloudOptions::new().set("meta_bytes", "0").unwrap().meta_bytes(), 0);
    /// ```
    pub fn meta_bytes(&self) -> usize {
        self.meta_bytes
    }

    /// The unit of later reads and of the cache.
    pub fn block_bytes(&self) -> usize {
        self.block_bytes
    }

    /// Bound on the bytes of cached blocks.
    pub fn cache_bytes(&self) -> usize {
        self.cache_bytes
    }

    /// Largest single request of a big read.
    pub fn part_bytes(&self) -> usize {
        self.part_bytes
    }

    /// Most requests of one batch in flight at once.
    pub fn max_in_flight(&self) -> usize {
        self.max_in_flight
    }

    /// Largest gap between two ranges of a batch fetched as one request.
    pub fn coalesce_bytes(&self) -> usize {
        self.coalesce_bytes
    }

    /// Retries of a request after a server error or timeout.
    pub fn max_retries(&self) -> usize {
        self.max_retries
    }

    /// The directory a file opened for writing is staged in (`None`: the
    /// system's temporary directory).
    pub fn staging_dir(&self) -> Option<&Path> {
        self.staging_dir.as_deref()
    }

    /// Time after which a request is not retried again.
    pub fn retry_timeout(&self) -> Duration {
        self.retry_timeout
    }

    /// The size from which a written file is published to S3 by a
    /// multipart upload (below it: one PUT, the file read into memory).
    pub fn multipart_threshold(&self) -> u64 {
        self.multipart_threshold
    }

    /// The size of the parts of a multipart publish.
    pub fn part_size(&self) -> u64 {
        self.part_size
    }
}
