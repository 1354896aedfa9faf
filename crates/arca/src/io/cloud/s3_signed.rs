//! The two S3 requests of a multipart publish that `object_store` cannot
//! send as a safe publish needs them, made here: CreateMultipartUpload
//! carrying the publish's token in the object's user metadata, and
//! CompleteMultipartUpload carrying the condition (`If-None-Match: *` or
//! `If-Match` an ETag), which S3 evaluates when it completes the upload.
//! (`object_store` completes every upload unconditionally and creates it
//! without metadata.) They are signed (SigV4, by `object_store`'s own
//! signer) with the credentials the store resolved and sent over the HTTP
//! client it made; the parts between them go through the store itself.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::header::{HeaderName, HeaderValue, CONTENT_TYPE, IF_MATCH, IF_NONE_MATCH};
use http::{Method, StatusCode};
use object_store::aws::{AmazonS3, AmazonS3ConfigKey, AwsAuthorizer};
use object_store::client::{
    HttpClient, HttpConnector, HttpRequest, HttpRequestBody, ReqwestConnector,
};
use object_store::multipart::PartId;
use object_store::path::Path;
use object_store::signer::Signer;
use object_store::{ClientOptions, PutResult};
use serde::Deserialize;

const STORE: &str = "S3";

/// What the completion asks of the object there now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Condition {
    /// No object yet (`If-None-Match: *`).
    Absent,
    /// The object of this ETag (`If-Match`).
    Is(String),
}

/// Hands `object_store` its HTTP client and keeps the last one made: the
/// S3 builder makes the store's own client last (after any for its
/// credential providers), so the requests made here share its options
/// (proxy, timeouts, `allow_http`, certificates) and its connections.
#[derive(Debug, Default, Clone)]
pub(super) struct KeepClient(Arc<Mutex<Option<HttpClient>>>);

impl HttpConnector for KeepClient {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        let c = ReqwestConnector::default().connect(options)?;
        if let Ok(mut g) = self.0.lock() {
            *g = Some(c.clone());
        }
        Ok(c)
    }
}

impl KeepClient {
    fn take(&self) -> Option<HttpClient> {
        self.0.lock().ok().and_then(|mut g| g.take())
    }
}

/// An S3 store and what the requests made here need of its configuration.
#[derive(Debug)]
pub(crate) struct S3Signed {
    store: Arc<AmazonS3>,
    client: HttpClient,
    /// Headers every new upload carries: server-side encryption, the
    /// checksum algorithm.
    create_headers: Vec<(HeaderName, HeaderValue)>,
    checksum: bool,
    request_payer: bool,
    max_retries: usize,
}

fn generic(why: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> object_store::Error {
    object_store::Error::Generic {
        store: STORE,
        source: why.into(),
    }
}

fn truthy(v: Option<String>) -> bool {
    v.is_some_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "true" | "1" | "yes"))
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Initiated {
    upload_id: String,
}

#[derive(Deserialize)]
struct Completed {
    #[serde(rename = "ETag")]
    e_tag: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct S3Error {
    code: String,
    #[serde(default)]
    message: String,
}

/// A part's id as `object_store` returns it: the ETag, or with SHA-256
/// checksums on, the ETag and the checksum in a small XML document.
#[derive(Deserialize)]
struct PartMeta {
    e_tag: String,
    #[serde(default)]
    checksum_sha256: Option<String>,
}

/// How one attempt at a request ended.
enum Answer {
    Done(http::HeaderMap, bytes::Bytes),
    /// Worth sending again: a transport error, a 5xx, an error inside a 200.
    Again(object_store::Error),
    /// 409 ConditionalRequestConflict: S3 met a concurrent conditional
    /// write and asks for the request again.
    Busy,
    Failed(object_store::Error),
}

impl S3Signed {
    /// What the requests made here need, if this store's publishes can use
    /// them: not with S3 Express (session credentials of its own), unsigned
    /// requests, customer-provided encryption keys (their headers go on
    /// every request) or conditional PUTs turned off.
    pub(super) fn new(
        store: Arc<AmazonS3>,
        keep: &KeepClient,
        config: impl Fn(&AmazonS3ConfigKey) -> Option<String>,
        max_retries: usize,
    ) -> Option<S3Signed> {
        let client = keep.take()?;
        if truthy(config(&AmazonS3ConfigKey::S3Express))
            || truthy(config(&AmazonS3ConfigKey::SkipSignature))
            || config(&AmazonS3ConfigKey::ConditionalPut).is_some_and(|v| v != "etag")
        {
            return None;
        }
        // (The encryption keys' own type is not exported: reach them by name.)
        let enc = |name: &str| {
            name.parse::<AmazonS3ConfigKey>()
                .ok()
                .and_then(|k| config(&k))
        };
        let mut create_headers = Vec::new();
        if let Some(kind) = enc("aws_server_side_encryption") {
            if kind.eq_ignore_ascii_case("sse-c") || enc("aws_sse_customer_key_base64").is_some() {
                return None;
            }
            let mut add = |name: &'static str, v: String| {
                if let Ok(v) = HeaderValue::from_str(&v) {
                    create_headers.push((HeaderName::from_static(name), v));
                }
            };
            add("x-amz-server-side-encryption", kind);
            if let Some(k) = enc("aws_sse_kms_key_id") {
                add("x-amz-server-side-encryption-aws-kms-key-id", k);
            }
            if let Some(b) = enc("aws_sse_bucket_key_enabled") {
                add(
                    "x-amz-server-side-encryption-bucket-key-enabled",
                    truthy(Some(b)).to_string(),
                );
            }
        }
        let checksum = config(&AmazonS3ConfigKey::Checksum).is_some();
        if checksum {
            create_headers.push((
                HeaderName::from_static("x-amz-checksum-algorithm"),
                HeaderValue::from_static("SHA256"),
            ));
        }
        Some(S3Signed {
            store,
            client,
            create_headers,
            checksum,
            request_payer: truthy(config(&AmazonS3ConfigKey::RequestPayer)),
            max_retries,
        })
    }

    /// The store the parts go through.
    pub(crate) fn store(&self) -> &Arc<AmazonS3> {
        &self.store
    }

    /// The object's URL and the region requests are signed for, as the
    /// store itself derives them from its configuration (endpoint, bucket,
    /// addressing style): read off a presigned URL it makes, whose
    /// credential scope names the region.
    async fn target(&self, path: &Path) -> object_store::Result<(url::Url, String)> {
        let mut u = self
            .store
            .signed_url(Method::POST, path, Duration::from_secs(60))
            .await?;
        let region = u
            .query_pairs()
            .find(|(k, _)| k == "X-Amz-Credential")
            .and_then(|(_, v)| v.rsplit('/').nth(2).map(str::to_string))
            .ok_or_else(|| generic("the store's signed URL names no region"))?;
        u.set_query(None);
        Ok((u, region))
    }

    /// Send a signed request until it is answered or out of retries.
    async fn send(
        &self,
        method: Method,
        url: &url::Url,
        region: &str,
        headers: &[(HeaderName, HeaderValue)],
        body: &str,
    ) -> Answer {
        let credential = match self.store.credentials().get_credential().await {
            Ok(c) => c,
            Err(e) => return Answer::Failed(e),
        };
        let mut req = HttpRequest::new(HttpRequestBody::from(body.to_string()));
        *req.method_mut() = method;
        *req.uri_mut() = match url.as_str().parse() {
            Ok(u) => u,
            Err(e) => return Answer::Failed(generic(e)),
        };
        for (k, v) in headers {
            req.headers_mut().insert(k.clone(), v.clone());
        }
        AwsAuthorizer::new(&credential, "s3", region)
            .with_request_payer(self.request_payer)
            .authorize(&mut req, None);
        let resp = match self.client.execute(req).await {
            Ok(r) => r,
            Err(e) => return Answer::Again(generic(e)),
        };
        let (parts, body) = resp.into_parts();
        let bytes = match body.bytes().await {
            Ok(b) => b,
            Err(e) => return Answer::Again(generic(e)),
        };
        let err: Option<S3Error> = std::str::from_utf8(&bytes)
            .ok()
            .and_then(|t| quick_xml::de::from_str(t).ok());
        let said = |status: StatusCode| match &err {
            Some(e) => format!("{status}: {} {}", e.code, e.message),
            None => status.to_string(),
        };
        let path = url.path().to_string();
        match parts.status {
            // A 200 may still carry an error (S3 answers a completion at
            // once and may fail it later in the body).
            s if s.is_success() => match &err {
                Some(e) if !e.code.is_empty() => Answer::Again(generic(said(s))),
                _ => Answer::Done(parts.headers, bytes),
            },
            StatusCode::PRECONDITION_FAILED => Answer::Failed(object_store::Error::Precondition {
                path,
                source: said(parts.status).into(),
            }),
            StatusCode::CONFLICT
                if err
                    .as_ref()
                    .is_some_and(|e| e.code == "ConditionalRequestConflict") =>
            {
                Answer::Busy
            }
            StatusCode::NOT_FOUND => Answer::Failed(object_store::Error::NotFound {
                path,
                source: said(parts.status).into(),
            }),
            StatusCode::FORBIDDEN => Answer::Failed(object_store::Error::PermissionDenied {
                path,
                source: said(parts.status).into(),
            }),
            StatusCode::UNAUTHORIZED => Answer::Failed(object_store::Error::Unauthenticated {
                path,
                source: said(parts.status).into(),
            }),
            s if s.is_server_error() || s == StatusCode::TOO_MANY_REQUESTS => {
                Answer::Again(generic(said(s)))
            }
            s => Answer::Failed(generic(said(s))),
        }
    }

    /// [`Self::send`] with retries: transport errors and 5xx (both
    /// requests are idempotent: S3 answers a repeated completion of the same
    /// upload with the object it made) up to `max_retries`, and a 409
    /// ConditionalRequestConflict, as S3 advises, up to 3 times more.
    async fn send_retried(
        &self,
        method: Method,
        url: &url::Url,
        region: &str,
        headers: &[(HeaderName, HeaderValue)],
        body: &str,
        mut sent: impl FnMut(),
    ) -> object_store::Result<(http::HeaderMap, bytes::Bytes)> {
        let (mut again, mut busy) = (0usize, 0usize);
        let mut wait = Duration::from_millis(50);
        loop {
            sent();
            match self.send(method.clone(), url, region, headers, body).await {
                Answer::Done(h, b) => return Ok((h, b)),
                Answer::Failed(e) => return Err(e),
                Answer::Again(e) if again >= self.max_retries => return Err(e),
                Answer::Again(_) => again += 1,
                Answer::Busy if busy >= 3 => {
                    // Still contended: another writer's conditional write
                    // is in progress, and this one is not to win it.
                    return Err(object_store::Error::Precondition {
                        path: url.path().to_string(),
                        source: "409 ConditionalRequestConflict, four times".into(),
                    });
                }
                Answer::Busy => busy += 1,
            }
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(Duration::from_secs(5));
        }
    }

    /// Start a multipart upload of `path` whose object will carry
    /// `metadata` (S3 user metadata, `x-amz-meta-*`); its upload id.
    pub(crate) async fn create(
        &self,
        path: &Path,
        metadata: &[(&str, &str)],
    ) -> object_store::Result<String> {
        let (mut url, region) = self.target(path).await?;
        url.set_query(Some("uploads="));
        let mut headers = self.create_headers.clone();
        for (k, v) in metadata {
            let name =
                HeaderName::from_bytes(format!("x-amz-meta-{k}").as_bytes()).map_err(generic)?;
            headers.push((name, HeaderValue::from_str(v).map_err(generic)?));
        }
        let (_, body) = self
            .send_retried(Method::POST, &url, &region, &headers, "", || {})
            .await?;
        let got: Initiated = std::str::from_utf8(&body)
            .map_err(generic)
            .and_then(|t| quick_xml::de::from_str(t).map_err(generic))?;
        Ok(got.upload_id)
    }

    /// Complete upload `id` of `path` from `parts` (in order) if the
    /// object there meets `condition`. `sent` is called for each attempt.
    ///
    /// # Errors
    /// `Precondition` when S3 refuses it (412, or 409 through every retry).
    pub(crate) async fn complete(
        &self,
        path: &Path,
        id: &str,
        parts: &[PartId],
        condition: &Condition,
        sent: impl FnMut(),
    ) -> object_store::Result<PutResult> {
        let (mut url, region) = self.target(path).await?;
        url.query_pairs_mut().append_pair("uploadId", id);
        let mut xml = String::from(
            r#"<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">"#,
        );
        for (i, p) in parts.iter().enumerate() {
            let (e_tag, sha) = if p.content_id.starts_with('<') {
                let m: PartMeta = quick_xml::de::from_str(&p.content_id).map_err(generic)?;
                (m.e_tag, m.checksum_sha256)
            } else {
                (p.content_id.clone(), None)
            };
            xml.push_str(&format!(
                "<Part><PartNumber>{}</PartNumber><ETag>{}</ETag>",
                i + 1,
                quick_xml::escape::escape(&e_tag)
            ));
            if let (true, Some(s)) = (self.checksum, sha) {
                xml.push_str(&format!(
                    "<ChecksumSHA256>{}</ChecksumSHA256>",
                    quick_xml::escape::escape(&s)
                ));
            }
            xml.push_str("</Part>");
        }
        xml.push_str("</CompleteMultipartUpload>");
        let mut headers = vec![(CONTENT_TYPE, HeaderValue::from_static("application/xml"))];
        headers.push(match condition {
            Condition::Absent => (IF_NONE_MATCH, HeaderValue::from_static("*")),
            Condition::Is(e) => (IF_MATCH, HeaderValue::from_str(e).map_err(generic)?),
        });
        let (h, body) = self
            .send_retried(Method::POST, &url, &region, &headers, &xml, sent)
            .await?;
        let done: Completed = std::str::from_utf8(&body)
            .map_err(generic)
            .and_then(|t| quick_xml::de::from_str(t).map_err(generic))?;
        Ok(PutResult {
            e_tag: Some(done.e_tag),
            version: h
                .get("x-amz-version-id")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string),
        })
    }
}
